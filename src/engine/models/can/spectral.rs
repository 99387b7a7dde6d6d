//! F and the smallest eigenvalues of CAN's Laplacian `L_A = D_A − A` without an n×n matrix
//! (docs/models.md §2.7 step 2): the connected components of A > 0 by union-find give the
//! null space exactly (one normalised indicator per component, eigenvalue 0); the rest of the
//! c smallest eigenpairs come from LOBPCG on sparse products in the complement of those
//! indicators ([`crate::engine::linalg::eigen`]), warm-started from the previous F.

use crate::engine::linalg::Csr;
use crate::engine::linalg::components::components;
use crate::engine::linalg::eigen::{EigOptions, lobpcg};
use crate::engine::models::ModelError;
use ndarray::{Array2, ArrayView2, Axis, concatenate};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Residual tolerance of the eigenpairs, relative to the Gershgorin bound of ‖L_A‖.
pub const EIG_TOL: f64 = 1e-10;
/// Most LOBPCG iterations per round.
pub const EIG_MAX_ITER: usize = 500;
/// Block columns beyond the pairs wanted (speeds the convergence of the last wanted pair).
pub const EIG_EXTRA: usize = 4;

/// F, the eigenvalues and the components of one graph.
pub struct Spectrum {
    /// F (n×c): when A has fewer than c components, its indicators then the smallest
    /// eigenvectors of the complement; with c or more, the indicators of c of them (the
    /// largest, ties to the first).
    pub f: Array2<f64>,
    /// The c smallest eigenvalues of L_A, ascending.
    pub values: Vec<f64>,
    /// The number of connected components of A > 0 and each sample's component.
    pub count: usize,
    pub labels: Vec<usize>,
    /// LOBPCG iterations (0 when none was needed) and whether they met the tolerance.
    pub iterations: usize,
    pub converged: bool,
}

/// The Laplacian and the deflation of the component indicators, as closures for LOBPCG.
struct Operator<'a> {
    graph: &'a Csr,
    degree: Vec<f64>,
    labels: &'a [usize],
    sizes: Vec<f64>,
}

impl Operator<'_> {
    fn apply(&self, x: ArrayView2<'_, f64>) -> Array2<f64> {
        let mut ax = Array2::zeros(x.dim());
        self.graph.mul_dense_into(x, &mut ax.view_mut());
        let mut out = x.to_owned();
        for (i, mut row) in out.rows_mut().into_iter().enumerate() {
            row *= self.degree[i];
        }
        out - ax
    }

    /// `V ← V − Y(YᵀV)` for Y the normalised indicators: each component's mean out of each
    /// column.
    fn deflate(&self, v: &mut Array2<f64>) {
        let q = self.sizes.len();
        let mut sums = Array2::<f64>::zeros((q, v.ncols()));
        for (i, row) in v.rows().into_iter().enumerate() {
            let mut s = sums.row_mut(self.labels[i]);
            s += &row;
        }
        for (a, mut s) in sums.rows_mut().into_iter().enumerate() {
            s /= self.sizes[a];
        }
        for (i, mut row) in v.rows_mut().into_iter().enumerate() {
            row -= &sums.row(self.labels[i]);
        }
    }
}

/// Normalised indicators of the components `which` (n×which.len()).
fn indicators(labels: &[usize], sizes: &[f64], which: &[usize]) -> Array2<f64> {
    let mut col = vec![usize::MAX; sizes.len()];
    for (j, &a) in which.iter().enumerate() {
        col[a] = j;
    }
    let mut y = Array2::zeros((labels.len(), which.len()));
    for (i, &a) in labels.iter().enumerate() {
        if col[a] != usize::MAX {
            y[[i, col[a]]] = 1.0 / sizes[a].sqrt();
        }
    }
    y
}

/// The spectrum of `graph` for c clusters (see the module docs). `warm` is the previous F
/// (n×c) or none; `seed` draws the extra start columns. Fails with the iteration's number on a
/// non-finite graph.
pub fn spectrum(
    graph: &Csr,
    c: usize,
    warm: Option<ArrayView2<'_, f64>>,
    seed: u64,
    iteration: usize,
) -> Result<Spectrum, ModelError> {
    let bad = |what: String| ModelError::Diverged { iteration, what };
    if graph.values().iter().any(|v| !v.is_finite()) {
        return Err(bad("the graph has a non-finite weight".into()));
    }
    let (count, labels) = components(graph);
    let mut sizes = vec![0.0f64; count];
    for &a in &labels {
        sizes[a] += 1.0;
    }
    if count >= c {
        // c of the zero eigenvectors: the largest components (ties: the first).
        let mut order: Vec<usize> = (0..count).collect();
        order.sort_by(|&a, &b| sizes[b].total_cmp(&sizes[a]).then(a.cmp(&b)));
        order.truncate(c);
        order.sort_unstable();
        return Ok(Spectrum {
            f: indicators(&labels, &sizes, &order),
            values: vec![0.0; c],
            count,
            labels,
            iterations: 0,
            converged: true,
        });
    }
    let op = Operator {
        graph,
        degree: graph.row_sums(),
        labels: &labels,
        sizes,
    };
    let nev = c - count;
    let e = solve(&op, nev, warm, seed, iteration)?;
    let all: Vec<usize> = (0..count).collect();
    let y = indicators(&labels, &op.sizes, &all);
    let f = concatenate(Axis(1), &[y.view(), e.vectors.view()])
        .map_err(|e| bad(format!("F could not be assembled ({e})")))?;
    let mut values = vec![0.0; count];
    values.extend_from_slice(&e.values);
    Ok(Spectrum {
        f,
        values,
        count,
        labels,
        iterations: e.iterations,
        converged: e.converged,
    })
}

/// LOBPCG for the `nev` smallest pairs outside the null space, from `[warm | seeded draws]`.
fn solve(
    op: &Operator<'_>,
    nev: usize,
    warm: Option<ArrayView2<'_, f64>>,
    seed: u64,
    iteration: usize,
) -> Result<crate::engine::linalg::eigen::Eigs, ModelError> {
    let n = op.labels.len();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (iteration as u64).wrapping_mul(0x9E37_79B9));
    // A warm start brings c columns already: a few draws beside it keep the block at c + 5.
    let width = if warm.is_some() { EIG_EXTRA + 1 } else { nev + EIG_EXTRA };
    let draws = Array2::from_shape_fn((n, width), |_| rng.r#gen::<f64>() - 0.5);
    let start = match warm {
        Some(w) => {
            let mut s = Array2::zeros((n, w.ncols() + width));
            s.slice_mut(ndarray::s![.., ..w.ncols()]).assign(&w);
            s.slice_mut(ndarray::s![.., w.ncols()..]).assign(&draws);
            s
        }
        None => draws,
    };
    let scale = 2.0 * op.degree.iter().fold(0.0f64, |a, &d| a.max(d));
    let opts = EigOptions {
        tol: EIG_TOL,
        scale,
        max_iter: EIG_MAX_ITER,
    };
    lobpcg(&|x| op.apply(x), &|v| op.deflate(v), op.sizes.len(), start.view(), nev, opts).map_err(
        |e| ModelError::Diverged {
            iteration,
            what: format!("the eigenvectors of the graph Laplacian: {e}"),
        },
    )
}
