use faer::{Accum, MatMut, MatRef, Par};

use ndarray::{Array2, ArrayView2, ArrayViewMut2};
/// Clear the upper halves of the vector registers after a faer kernel (see
/// [`crate::engine::machine::sys::clear_upper_state`]).
#[inline]
pub(crate) fn clear_upper_state() {
    crate::engine::machine::sys::clear_upper_state();
}

/// Whether an operand is used as is or transposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    N,
    T,
}

/// A faer view of an ndarray view whose memory is row-major or column-major contiguous. `None` for anything else (then the caller copies).
fn as_faer<'a>(a: &'a ArrayView2<'_, f64>) -> Option<MatRef<'a, f64>> {
    let (r, c) = a.dim();
    if let Some(s) = a.as_slice() {
        return Some(MatRef::from_row_major_slice(s, r, c));
    }
    if a.t().is_standard_layout()
        && let Some(s) = a.as_slice_memory_order()
    {
        // Column-major contiguous: the transpose is row-major.
        return Some(MatRef::from_row_major_slice(s, c, r).transpose());
    }
    None
}

/// `C ← AᵀA` (the k×k Gram matrix of an m×k A's columns, e.g. WᵀW in the H update of the
/// multiplicative rules).
pub fn gram_of_columns(c: &mut ArrayViewMut2<'_, f64>, a: ArrayView2<'_, f64>) {
    gemm_into(c, 1.0, a, Op::T, a, Op::N, false);
}

/// `C ← AAᵀ` (the k×k Gram matrix of a k×n A's rows, e.g. HHᵀ in the W update): the lane
/// kernel of [`super::gram`] for row-major arrays, faer otherwise.
pub fn gram_of_rows(c: &mut ArrayViewMut2<'_, f64>, a: ArrayView2<'_, f64>) {
    let dims = a.dim();
    if let (Some(src), Some(out)) = (a.as_slice(), c.as_slice_mut()) {
        super::gram::gram_of_rows_into(src, dims, out);
    } else {
        gemm_into(c, 1.0, a, Op::N, a, Op::T, false);
    }
}

/// `C ← α·op(A)·op(B)` (or `C += α·op(A)·op(B)` when `accumulate`), through faer, sequential
/// (faer's parallel split depends on the thread count, and a fit's bits must not; the big
/// products of the models split over threads by output entries, [`super::parallel`]).
///
/// `C` must be standard (row-major) layout; `A` and `B` may be row- or column-major views.
/// Non-contiguous operands are copied once (never the case in the models' hot loops).
pub fn gemm_into(
    c: &mut ArrayViewMut2<'_, f64>,
    alpha: f64,
    a: ArrayView2<'_, f64>,
    op_a: Op,
    b: ArrayView2<'_, f64>,
    op_b: Op,
    accumulate: bool,
) {
    let a = if op_a == Op::T { a.reversed_axes() } else { a };
    let b = if op_b == Op::T { b.reversed_axes() } else { b };
    debug_assert_eq!(a.ncols(), b.nrows(), "inner dimensions");
    debug_assert_eq!(c.dim(), (a.nrows(), b.ncols()), "output shape");
    let a_own;
    let fa = match as_faer(&a) {
        Some(f) => f,
        None => {
            a_own = a.as_standard_layout().into_owned();
            MatRef::from_row_major_slice(a_own.as_slice().unwrap_or(&[]), a.nrows(), a.ncols())
        }
    };
    let b_own;
    let fb = match as_faer(&b) {
        Some(f) => f,
        None => {
            b_own = b.as_standard_layout().into_owned();
            MatRef::from_row_major_slice(b_own.as_slice().unwrap_or(&[]), b.nrows(), b.ncols())
        }
    };
    let (r, cc) = c.dim();
    let beta = if accumulate {
        Accum::Add
    } else {
        Accum::Replace
    };
    match c.as_slice_mut() {
        Some(s) => {
            let fc = MatMut::from_row_major_slice_mut(s, r, cc);
            faer::linalg::matmul::matmul(fc, beta, fa, fb, alpha, Par::Seq);
            clear_upper_state();
        }
        None => {
            let mut tmp = Array2::<f64>::zeros((r, cc));
            if accumulate {
                tmp.assign(c);
            }
            if let Some(s) = tmp.as_slice_mut() {
                let fc = MatMut::from_row_major_slice_mut(s, r, cc);
                faer::linalg::matmul::matmul(fc, beta, fa, fb, alpha, Par::Seq);
                clear_upper_state();
            }
            c.assign(&tmp);
        }
    }
}

/// `op(A)·op(B)` as a new array.
pub fn gemm(a: ArrayView2<'_, f64>, op_a: Op, b: ArrayView2<'_, f64>, op_b: Op) -> Array2<f64> {
    let r = if op_a == Op::T { a.ncols() } else { a.nrows() };
    let c = if op_b == Op::T { b.nrows() } else { b.ncols() };
    let mut out = Array2::<f64>::zeros((r, c));
    gemm_into(&mut out.view_mut(), 1.0, a, op_a, b, op_b, false);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn gemm_matches_ndarray_dot_for_all_transpose_combinations() {
        let a = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let b = array![[1.0, 0.5], [2.0, -1.0], [0.0, 3.0]];
        assert_eq!(gemm(a.view(), Op::N, b.view(), Op::N), a.dot(&b));
        assert_eq!(gemm(b.view(), Op::T, a.view(), Op::T), b.t().dot(&a.t()));
        assert_eq!(gemm(a.view(), Op::T, a.view(), Op::N), a.t().dot(&a));
        assert_eq!(gemm(a.view(), Op::N, a.view(), Op::T), a.dot(&a.t()));
        // A column-major (Fortran-order) operand and a strided one.
        let af = a.t().to_owned().reversed_axes();
        assert_eq!(gemm(af.view(), Op::N, b.view(), Op::N), a.dot(&b));
        let strided = b.slice(ndarray::s![..;2, ..]);
        assert_eq!(
            gemm(strided.view(), Op::T, strided.view(), Op::N),
            strided.t().dot(&strided)
        );
    }

    #[test]
    fn accumulate_adds_to_the_output() {
        let a = array![[1.0, 2.0], [3.0, 4.0]];
        let mut c = Array2::from_elem((2, 2), 1.0);
        gemm_into(
            &mut c.view_mut(),
            2.0,
            a.view(),
            Op::N,
            a.view(),
            Op::N,
            true,
        );
        assert_eq!(c, a.dot(&a) * 2.0 + 1.0);
    }
}
