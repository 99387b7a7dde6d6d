//! The few smallest eigenpairs of a large sparse symmetric positive semidefinite operator by
//! LOBPCG (Knyazev 2001, in the orthogonal-basis form of Hetmaniuk & Lehoucq 2006), for graph
//! Laplacians (docs/models.md §2.7): the operator is only applied to n×b blocks, so memory is
//! O(n·b) and a round costs O(nnz·b + n·b²).
//!
//! Each iteration builds the basis `[X | W | P]` (Ritz vectors, residuals, previous search
//! directions), each block projected against the constraints Y, against the blocks before it
//! and made orthonormal (columns that vanish are dropped), and takes the b smallest Ritz pairs
//! of the operator on it. Columns whose residual is below the tolerance are not expanded (soft
//! locking). Known exact eigenvectors (a Laplacian's component indicators, whose eigenvalue is
//! 0) go in as constraints Y: the search then runs in their orthogonal complement, so the
//! cluster of eigenvalues at 0 never has to be resolved iteratively. When the complement is
//! small (n at most [`DENSE_BELOW`] or 3b) the Rayleigh–Ritz runs on the whole
//! complement at once, which is the exact dense answer.
//!
//! Everything is sequential products in a fixed order plus faer's dense symmetric
//! eigensolver on matrices of order ≤ 3b: the result depends only on the inputs.

use super::{Op, gemm};
use ndarray::{Array2, ArrayView2, Axis, s};

/// Complements of at most this dimension are solved densely (Rayleigh–Ritz on all of it).
pub const DENSE_BELOW: usize = 64;

/// [`lobpcg`] drops its search directions P (a restart) when its largest residual has not
/// fallen by 10 % in half this many iterations, and stops when it has not in this many
/// (rounding's floor, or a cluster the block cannot split): more would not change the answer.
pub const STAGNATION: usize = 40;

/// Stopping rule of [`lobpcg`].
#[derive(Clone, Copy, Debug)]
pub struct EigOptions {
    /// A pair has converged when `‖A x − θ x‖ ≤ tol · scale`.
    pub tol: f64,
    /// An upper bound of the operator's norm (for a Laplacian: twice its largest degree, by
    /// Gershgorin), the scale of the tolerance.
    pub scale: f64,
    /// Most iterations (it also stops on stagnation, see [`STAGNATION`]).
    pub max_iter: usize,
}

/// The `nev` smallest eigenpairs found.
#[derive(Clone, Debug)]
pub struct Eigs {
    /// Ascending.
    pub values: Vec<f64>,
    /// n×nev, orthonormal and orthogonal to the constraints.
    pub vectors: Array2<f64>,
    /// Iterations taken (0 for the dense path).
    pub iterations: usize,
    /// Whether every pair met the tolerance (always true for the dense path).
    pub converged: bool,
    /// The largest residual norm of the returned pairs.
    pub residual: f64,
}

/// Why [`lobpcg`] gave no answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EigError {
    #[error("the operator returned a non-finite value")]
    NonFinite,
    #[error(
        "the complement of the constraints has {available} dimension(s), fewer than the {wanted} eigenpairs asked for"
    )]
    TooFew { wanted: usize, available: usize },
    #[error("the dense symmetric eigensolver failed on the projected problem")]
    Dense,
}

/// `V ← V − Y (Yᵀ V)`: the deflation of [`lobpcg`] for constraints given as an orthonormal
/// n×q matrix.
pub fn project_out(v: &mut Array2<f64>, y: ArrayView2<'_, f64>) {
    if y.ncols() == 0 || v.ncols() == 0 {
        return;
    }
    let c = gemm(y, Op::T, v.view(), Op::N);
    *v -= &gemm(y, Op::N, c.view(), Op::N);
}

/// An orthonormal basis of the span of V's columns (at most V's width), by SVQB (Stathopoulos
/// & Wu 2002), twice: with D the column norms, `V D⁻¹ U Σ^{-1/2}` from the eigendecomposition
/// `D⁻¹ VᵀV D⁻¹ = U Σ Uᵀ`, dropping directions with `σ ≤ 1e-12 σ_max` (and columns that are
/// zero). The scaling keeps columns of very different lengths (converged residuals beside
/// fresh ones) from losing their directions in the Gram matrix's rounding.
fn orthonormalise(v: &Array2<f64>) -> Result<Array2<f64>, EigError> {
    let mut cur = v.clone();
    for _ in 0..2 {
        if cur.ncols() == 0 {
            break;
        }
        let g = gemm(cur.view(), Op::T, cur.view(), Op::N);
        let r = g.nrows();
        let top_norm = (0..r).map(|a| g[[a, a]]).fold(0.0f64, f64::max);
        if top_norm.is_nan() || top_norm <= f64::MIN_POSITIVE {
            return Ok(Array2::zeros((v.nrows(), 0)));
        }
        let live: Vec<usize> = (0..r).filter(|&a| g[[a, a]] > 1e-30 * top_norm).collect();
        let dinv: Vec<f64> = live.iter().map(|&a| 1.0 / g[[a, a]].sqrt()).collect();
        let gs = Array2::from_shape_fn((live.len(), live.len()), |(i, j)| {
            g[[live[i], live[j]]] * dinv[i] * dinv[j]
        });
        let (vals, vecs) = sym_eig(&gs)?;
        let top = vals.iter().fold(0.0f64, |a, &b| a.max(b));
        let keep: Vec<usize> = (0..vals.len())
            .rev()
            .filter(|&a| vals[a] > 1e-12 * top)
            .collect();
        let mut t = Array2::<f64>::zeros((r, keep.len()));
        for (li, &a) in live.iter().enumerate() {
            for (j, &kj) in keep.iter().enumerate() {
                t[[a, j]] = dinv[li] * vecs[[li, kj]] / vals[kj].sqrt();
            }
        }
        cur = gemm(cur.view(), Op::N, t.view(), Op::N);
    }
    Ok(cur)
}

/// The eigenvalues (ascending) and eigenvectors of a small symmetric matrix.
fn sym_eig(h: &Array2<f64>) -> Result<(Vec<f64>, Array2<f64>), EigError> {
    let r = h.nrows();
    if h.iter().any(|v| !v.is_finite()) {
        return Err(EigError::NonFinite);
    }
    let m = faer::Mat::from_fn(r, r, |i, j| 0.5 * (h[[i, j]] + h[[j, i]]));
    let evd = m
        .self_adjoint_eigen(faer::Side::Lower)
        .map_err(|_| EigError::Dense)?;
    let (u, sv) = (evd.U(), evd.S());
    let vals = (0..r).map(|a| sv[a]).collect();
    Ok((vals, Array2::from_shape_fn((r, r), |(i, j)| u[(i, j)])))
}

fn checked(a: Array2<f64>) -> Result<Array2<f64>, EigError> {
    if a.iter().all(|v| v.is_finite()) {
        Ok(a)
    } else {
        Err(EigError::NonFinite)
    }
}

/// The `nev` smallest eigenpairs of the symmetric positive semidefinite operator `op` (n×n,
/// applied to n×b blocks) in the orthogonal complement of q orthonormal vectors Y (exact
/// eigenvectors of `op`, or none), starting from the columns of `start` (n×b, b ≥ nev; the
/// block size; need not be orthonormal, nor orthogonal to Y). `deflate` applies
/// `V ← V − Y(YᵀV)` in place (for a Laplacian's component indicators: subtract each
/// component's mean, O(n·b), without forming Y).
///
/// Fails when `op` yields a non-finite value or the complement is too small; an answer that
/// missed the tolerance within `max_iter` iterations is returned with `converged = false`.
pub fn lobpcg(
    op: &dyn Fn(ArrayView2<'_, f64>) -> Array2<f64>,
    deflate: &dyn Fn(&mut Array2<f64>),
    q: usize,
    start: ArrayView2<'_, f64>,
    nev: usize,
    opts: EigOptions,
) -> Result<Eigs, EigError> {
    let n = start.nrows();
    let b = start.ncols().max(nev);
    let room = n.saturating_sub(q);
    if nev > room {
        return Err(EigError::TooFew {
            wanted: nev,
            available: room,
        });
    }
    if n <= DENSE_BELOW.max(3 * b) {
        return dense_complement(op, deflate, n, nev);
    }
    let mut x = start.to_owned();
    deflate(&mut x);
    let x = orthonormalise(&x)?;
    if x.ncols() < nev {
        return Err(EigError::TooFew {
            wanted: nev,
            available: x.ncols(),
        });
    }
    let ax = checked(op(x.view()))?;
    let (theta, c) = sym_eig(&gemm(x.view(), Op::T, ax.view(), Op::N))?;
    let mut theta = theta;
    let mut x_cur = gemm(x.view(), Op::N, c.view(), Op::N);
    let mut ax_cur = gemm(ax.view(), Op::N, c.view(), Op::N);
    let bw = x.ncols();
    let mut p: Option<Array2<f64>> = None;
    let tol = opts.tol * opts.scale.max(f64::MIN_POSITIVE);
    let mut iterations = 0;
    // Stagnation: the best residual so far and the iterations since it last fell by 10 %.
    let (mut best, mut flat) = (f64::INFINITY, 0usize);
    loop {
        // Residuals R = AX − XΘ and their norms.
        let mut r = ax_cur.clone();
        for (j, mut col) in r.columns_mut().into_iter().enumerate() {
            col.scaled_add(-theta[j], &x_cur.column(j));
        }
        let norms: Vec<f64> = r
            .columns()
            .into_iter()
            .map(|c| c.iter().map(|v| v * v).sum::<f64>().sqrt())
            .collect();
        let worst = norms[..nev].iter().fold(0.0f64, |a, &v| a.max(v));
        if worst.is_nan() {
            return Err(EigError::NonFinite);
        }
        if worst < 0.9 * best {
            (best, flat) = (worst, 0);
        } else {
            flat += 1;
            if flat == STAGNATION / 2 {
                // Restart the search directions once: a basis that lost its conditioning.
                p = None;
            }
        }
        if worst <= tol || iterations >= opts.max_iter || flat >= STAGNATION {
            return Ok(Eigs {
                values: theta[..nev].to_vec(),
                vectors: x_cur.slice(s![.., ..nev]).to_owned(),
                iterations,
                converged: worst <= tol,
                residual: worst,
            });
        }
        iterations += 1;
        let active: Vec<usize> = (0..bw).filter(|&j| norms[j] > tol).collect();
        let mut w = r.select(Axis(1), &active);
        deflate(&mut w);
        project_out(&mut w, x_cur.view());
        let mut w = orthonormalise(&w)?;
        deflate(&mut w);
        project_out(&mut w, x_cur.view());
        w = orthonormalise(&w)?;
        let mut blocks = vec![x_cur.clone(), w];
        if let Some(mut pp) = p.take() {
            deflate(&mut pp);
            for blk in &blocks {
                project_out(&mut pp, blk.view());
            }
            let mut pp = orthonormalise(&pp)?;
            for blk in &blocks {
                project_out(&mut pp, blk.view());
            }
            pp = orthonormalise(&pp)?;
            blocks.push(pp);
        }
        let views: Vec<ArrayView2<'_, f64>> = blocks.iter().map(|a| a.view()).collect();
        let basis = ndarray::concatenate(Axis(1), &views).map_err(|_| EigError::Dense)?;
        let mut images = vec![ax_cur.clone()];
        for blk in &blocks[1..] {
            images.push(checked(op(blk.view()))?);
        }
        let views: Vec<ArrayView2<'_, f64>> = images.iter().map(|a| a.view()).collect();
        let abasis = ndarray::concatenate(Axis(1), &views).map_err(|_| EigError::Dense)?;
        let h = gemm(basis.view(), Op::T, abasis.view(), Op::N);
        let (vals, vecs) = sym_eig(&h)?;
        let keep = bw.min(vals.len());
        let c = vecs.slice(s![.., ..keep]).to_owned();
        theta = vals[..keep].to_vec();
        x_cur = gemm(basis.view(), Op::N, c.view(), Op::N);
        ax_cur = gemm(abasis.view(), Op::N, c.view(), Op::N);
        // The new search directions: the part of the update outside the old X.
        let rest = basis.slice(s![.., bw..]);
        let c_rest = c.slice(s![bw.., ..]);
        p = Some(gemm(rest, Op::N, c_rest, Op::N));
    }
}

/// The Rayleigh–Ritz on the whole complement of `y`: exact, for small complements.
fn dense_complement(
    op: &dyn Fn(ArrayView2<'_, f64>) -> Array2<f64>,
    deflate: &dyn Fn(&mut Array2<f64>),
    n: usize,
    nev: usize,
) -> Result<Eigs, EigError> {
    let mut basis = Array2::<f64>::eye(n);
    deflate(&mut basis);
    let basis = orthonormalise(&basis)?;
    if basis.ncols() < nev {
        return Err(EigError::TooFew {
            wanted: nev,
            available: basis.ncols(),
        });
    }
    let ab = checked(op(basis.view()))?;
    let (vals, vecs) = sym_eig(&gemm(basis.view(), Op::T, ab.view(), Op::N))?;
    let v = gemm(basis.view(), Op::N, vecs.slice(s![.., ..nev]), Op::N);
    Ok(Eigs {
        values: vals[..nev].to_vec(),
        vectors: v,
        iterations: 0,
        converged: true,
        residual: 0.0,
    })
}

#[cfg(test)]
mod tests;
