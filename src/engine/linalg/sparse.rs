//! A small compressed-sparse-row matrix: kNN graphs (docs/models.md §2.1) and the RPNMF role
//! matrices `Mneg`/`Mpos` (docs/models.md §4.4), multiplied from the left by a dense k×n factor.

use ndarray::{Array2, ArrayView2, ArrayViewMut2};

/// Compressed sparse row matrix of f64. Column indices are sorted and unique within a row.
#[derive(Clone, Debug, PartialEq)]
pub struct Csr {
    nrows: usize,
    ncols: usize,
    /// `indptr[r]..indptr[r + 1]` indexes row r's entries; length `nrows + 1`.
    indptr: Vec<usize>,
    indices: Vec<usize>,
    data: Vec<f64>,
}

impl Csr {
    /// An `nrows × ncols` matrix from `(row, col, value)` entries; duplicate positions are
    /// summed. Entries out of range are a programming error and are skipped in release builds.
    pub fn from_entries(nrows: usize, ncols: usize, entries: &[(usize, usize, f64)]) -> Self {
        let mut sorted: Vec<(usize, usize, f64)> = entries
            .iter()
            .copied()
            .filter(|&(r, c, _)| {
                debug_assert!(r < nrows && c < ncols, "entry ({r}, {c}) out of range");
                r < nrows && c < ncols
            })
            .collect();
        sorted.sort_unstable_by_key(|&(r, c, _)| (r, c));
        let mut indptr = vec![0usize; nrows + 1];
        let mut indices: Vec<usize> = Vec::with_capacity(sorted.len());
        let mut data: Vec<f64> = Vec::with_capacity(sorted.len());
        let mut last: Option<(usize, usize)> = None;
        for (r, c, v) in sorted {
            if last == Some((r, c)) {
                if let Some(d) = data.last_mut() {
                    *d += v;
                }
                continue;
            }
            last = Some((r, c));
            indptr[r + 1] += 1;
            indices.push(c);
            data.push(v);
        }
        for r in 0..nrows {
            indptr[r + 1] += indptr[r];
        }
        Self {
            nrows,
            ncols,
            indptr,
            indices,
            data,
        }
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.nrows
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.data.len()
    }

    /// Row r as (column indices, values).
    pub fn row(&self, r: usize) -> (&[usize], &[f64]) {
        let (a, b) = (self.indptr[r], self.indptr[r + 1]);
        (&self.indices[a..b], &self.data[a..b])
    }

    /// Position of entry (r, c) in [`Self::values`], when stored.
    pub fn position(&self, r: usize, c: usize) -> Option<usize> {
        let (a, b) = (self.indptr[r], self.indptr[r + 1]);
        self.indices[a..b].binary_search(&c).ok().map(|p| a + p)
    }

    /// The stored values, in row order.
    pub fn values(&self) -> &[f64] {
        &self.data
    }

    /// The stored values, mutable: the sparsity pattern stays fixed.
    pub fn values_mut(&mut self) -> &mut [f64] {
        &mut self.data
    }

    /// Row sums (the degree vector `S 1` of a graph).
    pub fn row_sums(&self) -> Vec<f64> {
        (0..self.nrows)
            .map(|r| self.row(r).1.iter().sum())
            .collect()
    }

    /// Whether the matrix equals its transpose (exactly).
    pub fn is_symmetric(&self) -> bool {
        self.nrows == self.ncols
            && (0..self.nrows).all(|r| {
                let (cols, vals) = self.row(r);
                cols.iter()
                    .zip(vals)
                    .all(|(&c, &v)| self.position(c, r).is_some_and(|p| self.data[p] == v))
            })
    }

    /// Dense copy (tests and small matrices only).
    pub fn to_dense(&self) -> Array2<f64> {
        let mut out = Array2::zeros((self.nrows, self.ncols));
        for r in 0..self.nrows {
            let (cols, vals) = self.row(r);
            for (&c, &v) in cols.iter().zip(vals) {
                out[[r, c]] += v;
            }
        }
        out
    }

    /// `out ← A·self` for a dense `A` (k×nrows); `out` is k×ncols. O(k·nnz).
    pub fn left_mul_into(&self, a: ArrayView2<'_, f64>, out: &mut Array2<f64>) {
        debug_assert_eq!(a.ncols(), self.nrows);
        debug_assert_eq!(out.dim(), (a.nrows(), self.ncols));
        out.fill(0.0);
        for (a_row, mut o_row) in a.rows().into_iter().zip(out.rows_mut()) {
            for (r, &ar) in a_row.iter().enumerate() {
                if ar == 0.0 {
                    continue;
                }
                let (cols, vals) = self.row(r);
                for (&c, &v) in cols.iter().zip(vals) {
                    o_row[c] += ar * v;
                }
            }
        }
    }

    /// `out ← self·B` (nrows×k) for a dense B (ncols×k). O(k·nnz).
    ///
    /// Row c of the result is the sum of the rows of B that row c of self names, gathered
    /// (contiguous reads of B's rows, sums held in registers, one contiguous write per row).
    /// Storing a matrix M as its transpose (`self = Mᵀ`) makes this `(A·M)ᵀ` for `B = Aᵀ`:
    /// the product of [`Self::left_mul_into`] on M, transposed. Each sum starts at 0 and adds
    /// its entries in ascending column order of self, the order in which `left_mul_into` on M
    /// adds them, so the two agree bit for bit (when no entry of A is 0 next to an infinite or
    /// NaN value of M: `left_mul_into` skips those). Columns of B go in blocks of at most 16,
    /// each block's width fixed at compile time so that its sums stay in registers.
    pub fn mul_dense_into(&self, b: ArrayView2<'_, f64>, out: &mut ArrayViewMut2<'_, f64>) {
        let k = b.ncols();
        debug_assert_eq!(b.nrows(), self.ncols);
        debug_assert_eq!(out.dim(), (self.nrows, k));
        let b = b.as_standard_layout();
        let Some(bs) = b.as_slice() else {
            return;
        };
        let Some(os) = out.as_slice_mut() else {
            // A strided output: compute into a standard-layout copy (never in the hot loops).
            let mut tmp = Array2::zeros((self.nrows, k));
            self.mul_dense_into(b.view(), &mut tmp.view_mut());
            out.assign(&tmp);
            return;
        };
        // In pulp's context (AVX-512 where present): the same mul-then-add per lane, wider.
        faer::traits::pulp::Arch::new().dispatch(Gather {
            m: self,
            b: bs,
            k,
            out: os,
        });
    }

    /// [`Self::mul_dense_into`] on row-major slices, in blocks of up to 16 columns.
    #[inline(always)]
    fn gather_columns(&self, bs: &[f64], k: usize, os: &mut [f64]) {
        let mut a0 = 0;
        while a0 < k {
            let width = (k - a0).min(16);
            match width {
                1 => self.gather_block::<1>(bs, k, a0, os),
                2 => self.gather_block::<2>(bs, k, a0, os),
                3 => self.gather_block::<3>(bs, k, a0, os),
                4 => self.gather_block::<4>(bs, k, a0, os),
                5 => self.gather_block::<5>(bs, k, a0, os),
                6 => self.gather_block::<6>(bs, k, a0, os),
                7 => self.gather_block::<7>(bs, k, a0, os),
                8 => self.gather_block::<8>(bs, k, a0, os),
                9 => self.gather_block::<9>(bs, k, a0, os),
                10 => self.gather_block::<10>(bs, k, a0, os),
                11 => self.gather_block::<11>(bs, k, a0, os),
                12 => self.gather_block::<12>(bs, k, a0, os),
                13 => self.gather_block::<13>(bs, k, a0, os),
                14 => self.gather_block::<14>(bs, k, a0, os),
                15 => self.gather_block::<15>(bs, k, a0, os),
                _ => self.gather_block::<16>(bs, k, a0, os),
            }
            a0 += width;
        }
    }

    /// Columns `a0..a0 + W` of `out ← self·B`; `b` and `out` are the row-major slices of
    /// B (ncols×k) and of the output (nrows×k).
    #[inline(always)]
    fn gather_block<const W: usize>(&self, b: &[f64], k: usize, a0: usize, out: &mut [f64]) {
        for (c, dst) in out.chunks_exact_mut(k).enumerate().take(self.nrows) {
            let (cols, vals) = self.row(c);
            let mut acc = [0.0f64; W];
            for (&r, &v) in cols.iter().zip(vals) {
                // Column indices are below ncols (a slice of exactly W: no bounds checks).
                let start = r * k + a0;
                let src = &b[start..start + W];
                for l in 0..W {
                    acc[l] += src[l] * v;
                }
            }
            if let Some(d) = dst.get_mut(a0..a0 + W) {
                d.copy_from_slice(&acc);
            }
        }
    }

    /// `A·self` as a new array.
    pub fn left_mul(&self, a: ArrayView2<'_, f64>) -> Array2<f64> {
        let mut out = Array2::zeros((a.nrows(), self.ncols));
        self.left_mul_into(a, &mut out);
        out
    }
}

/// [`Csr::mul_dense_into`] as a pulp job (a struct with an always-inlined body: a closure
/// would be compiled without the wide instructions).
struct Gather<'a> {
    m: &'a Csr,
    b: &'a [f64],
    k: usize,
    out: &'a mut [f64],
}

impl faer::traits::pulp::WithSimd for Gather<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: faer::traits::pulp::Simd>(self, _simd: S) {
        self.m.gather_columns(self.b, self.k, self.out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn duplicates_are_summed_and_product_matches_dense() {
        let m = Csr::from_entries(3, 3, &[(0, 1, 1.0), (2, 0, 2.0), (0, 1, 0.5), (1, 1, 3.0)]);
        assert_eq!(m.nnz(), 3);
        let d = m.to_dense();
        assert_eq!(d, array![[0.0, 1.5, 0.0], [0.0, 3.0, 0.0], [2.0, 0.0, 0.0]]);
        let a = array![[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]];
        assert_eq!(m.left_mul(a.view()), a.dot(&d));
        assert_eq!(m.position(2, 0), Some(2));
        assert_eq!(m.position(2, 1), None);
        assert!(!m.is_symmetric());
    }

    /// `Mᵀ·Hᵀ` gathered equals `(H·M)ᵀ` from `left_mul` bit for bit, for every block width
    /// (k = 1..=35 covers one, two and three blocks and every remainder).
    #[test]
    fn gathered_product_of_the_transpose_is_bit_identical() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let (n, c) = (40, 30);
        // Distinct positions: duplicates are summed in an unspecified order.
        let positions: std::collections::BTreeSet<(usize, usize)> = (0..150)
            .map(|_| (rng.gen_range(0..n), rng.gen_range(0..c)))
            .collect();
        let entries: Vec<(usize, usize, f64)> = positions
            .into_iter()
            .map(|(r, c)| (r, c, rng.r#gen::<f64>()))
            .collect();
        let m = Csr::from_entries(n, c, &entries);
        let mt = Csr::from_entries(
            c,
            n,
            &entries
                .iter()
                .map(|&(r, c, v)| (c, r, v))
                .collect::<Vec<_>>(),
        );
        for k in 1..=35 {
            let a = Array2::from_shape_simple_fn((k, n), || 0.01 + rng.r#gen::<f64>());
            let mut out = Array2::from_elem((c, k), f64::NAN);
            let a_t = a.t().as_standard_layout().into_owned();
            mt.mul_dense_into(a_t.view(), &mut out.view_mut());
            assert_eq!(out.t(), m.left_mul(a.view()), "k = {k}");
        }
    }
}
