//! The RMNMF iteration of docs/models.md §3.4 (see the module above for the math).

use crate::engine::models::alm::{MU_MAX, Penalty, Residual, ascend, residuals_below};
use super::params::RmnmfParams;
use crate::engine::data::Dataset;
use crate::engine::eval::kmeans;
use crate::engine::linalg::{
    Csr, Op, for_each_part, gemm, gemm_into, procrustes, shrink_columns,
};
use crate::engine::models::{Outputs, 
    Export, Model, ModelError, ModelKind, ModelSpec, Objective, SampleValues, Term,
};
use faer::linalg::solvers::DenseSolveCore;
use ndarray::{Array2, ArrayView2, Axis, Zip};
use std::sync::Arc;

/// The model's own stop rule: both primal residuals, `‖X − W Gᵀ − E‖_F / ‖X‖_F` and
/// `‖G − Z‖_F / √k`, below this. [C] `‖G − Z‖` is the slower one: it measures the negative
/// entries of the orthonormal G, and on clustered data it stalls near 1e-6 once μ is at its
/// cap, so a tighter tolerance would never fire; at 1e-5 no label changes any more
/// (docs/models.md §3.4).
pub const RESIDUAL_TOL: f64 = 1e-5;

/// Samples per part of the two element-wise passes over the n×m arrays: the parts run on the
/// fit's threads, and every sum is per sample or over the samples in order, so the bits do
/// not depend on the thread count.
const PASS_ROWS: usize = 256;

/// Added to the one-hot k-means indicator of the start (the authors' code).
const ONE_HOT_OFFSET: f64 = 0.2;

/// Robust manifold NMF by the ALM of docs/models.md §3.4.
///
/// Arrays of the size of X are held sample-major (n×m, row i = sample i): Xᵀ, the outlier
/// part Eᵀ, the multiplier Γᵀ, `Bᵀ = (X − E + Γ/μ)ᵀ` and the residual `Rᵀ = (X − W Gᵀ)ᵀ`. The
/// l2,1 shrinkage then scales contiguous rows, and the products take transposed operands
/// through faer at no cost. Everything else is n×k, m×k or k×k; the graph is sparse.
pub struct Rmnmf {
    params: RmnmfParams,
    /// S: the symmetric binary p-NN graph, zero diagonal (shared with the side information).
    graph: Arc<Csr>,
    /// Xᵀ (n×m).
    xt: Array2<f64>,
    w: Array2<f64>,      // m×k
    g: Array2<f64>,      // n×k, orthonormal columns after the first iteration
    z: Array2<f64>,      // n×k, ≥ 0
    h: Array2<f64>,      // k×n, Zᵀ (what the scatter and the evaluation see)
    et: Array2<f64>,     // n×m Eᵀ
    gammat: Array2<f64>, // n×m Γᵀ
    sigma: Array2<f64>,  // n×k Σ
    rt: Array2<f64>,     // n×m (X − W Gᵀ)ᵀ of the current iterate
    bt: Array2<f64>,     // n×m (X − E + Γ/μ)ᵀ
    lg: Array2<f64>,     // n×k L G of the current G
    lz: Array2<f64>,     // n×k L Z
    kmat: Array2<f64>,   // n×k the Procrustes argument
    penalty: Penalty,
    /// Whether GᵀG = I (G came from the Procrustes step), so (3.42) needs no Gram solve.
    orthonormal: bool,
    iteration: usize,
    /// First iteration at which μ reached its cap.
    capped_at: Option<usize>,
    /// ‖X − W Gᵀ‖_{2,1} of the current iterate.
    l21: f64,
    /// Tr(Gᵀ L G) of the current G (not weighted by λ).
    smoothness: f64,
    res_e: Residual,
    res_z: Residual,
}

impl Rmnmf {
    /// Start from a spec: G = Hᵀ of the warm start, or k-means on the samples with the spec's
    /// seed and `G = onehot + 0.2`; then W by (3.47). Fails on an X that is all zeros or not
    /// finite, on a graph of the wrong size, and on a start whose GᵀG is singular.
    pub fn start(
        data: Arc<Dataset>,
        spec: &ModelSpec,
        params: RmnmfParams,
        graph: Arc<Csr>,
    ) -> Result<Self, ModelError> {
        let (_, n) = data.x.dim();
        let k = spec.k;
        check_x(&data)?;
        if graph.nrows() != n || graph.ncols() != n {
            return Err(ModelError::BadData {
                why: format!(
                    "the graph is {}×{}, the data has {n} samples",
                    graph.nrows(),
                    graph.ncols()
                ),
            });
        }
        let g = match &spec.init {
            Some(init) => init.h.t().as_standard_layout().into_owned(),
            None => {
                let km = kmeans(data.x.view(), k, 100, spec.seed).map_err(|e| {
                    ModelError::BadData {
                        why: format!("the k-means start of RMNMF failed: {e}"),
                    }
                })?;
                let mut g = Array2::from_elem((n, k), ONE_HOT_OFFSET);
                for (i, &c) in km.labels.iter().enumerate() {
                    g[[i, c]] += 1.0;
                }
                g
            }
        };
        Self::with_g(data, params, graph, g)
    }

    /// Start from this G (n×k) exactly: W by (3.47), Z = [G]_+, E = 0, Γ = 0, Σ = 0, μ = μ₀.
    pub(crate) fn with_g(
        data: Arc<Dataset>,
        params: RmnmfParams,
        graph: Arc<Csr>,
        g: Array2<f64>,
    ) -> Result<Self, ModelError> {
        let (m, n) = data.x.dim();
        let k = g.ncols();
        let xt = data.x.t().as_standard_layout().into_owned();
        let x_norm = data.x.iter().map(|v| v * v).sum::<f64>().sqrt();
        let xg = gemm(xt.view(), Op::T, g.view(), Op::N);
        let w = right_solve_gram(g.view(), xg).ok_or_else(|| ModelError::BadData {
            why: "GᵀG of the start is singular (a cluster of the start is empty, or the \
                  warm start's H has dependent rows): W = X G (GᵀG)⁻¹ cannot be formed"
                .into(),
        })?;
        let z = g.mapv(|v| v.max(0.0));
        let mut s = Self {
            h: z.t().as_standard_layout().into_owned(),
            z,
            params,
            xt,
            w,
            et: Array2::zeros((n, m)),
            gammat: Array2::zeros((n, m)),
            sigma: Array2::zeros((n, k)),
            rt: Array2::zeros((n, m)),
            bt: Array2::zeros((n, m)),
            lg: Array2::zeros((n, k)),
            lz: Array2::zeros((n, k)),
            kmat: Array2::zeros((n, k)),
            penalty: Penalty::new(params.mu0, params.rho, MU_MAX),
            orthonormal: false,
            iteration: 0,
            capped_at: None,
            l21: f64::NAN,
            smoothness: f64::NAN,
            res_e: Residual {
                norm: f64::NAN,
                scale: x_norm,
            },
            res_z: Residual {
                norm: f64::NAN,
                scale: (k as f64).sqrt(),
            },
            graph,
            g,
        };
        s.refresh_residual();
        s.l21 = row_norms(&s.rt).iter().sum();
        s.smoothness = laplacian_pass(&s.graph, &s.g, &mut s.lg);
        s.res_e.norm = s.l2_of_rt_minus_et();
        s.res_z.norm = frobenius_diff(&s.g, &s.z);
        Ok(s)
    }

    /// The checked hyperparameters.
    pub fn params(&self) -> RmnmfParams {
        self.params
    }

    /// `Rᵀ ← Xᵀ − G Wᵀ` (one n×k×m product onto a copy of Xᵀ).
    fn refresh_residual(&mut self) {
        self.rt.assign(&self.xt);
        gemm_into(
            &mut self.rt.view_mut(),
            -1.0,
            self.g.view(),
            Op::N,
            self.w.view(),
            Op::T,
            true,
        );
    }

    fn l2_of_rt_minus_et(&self) -> f64 {
        frobenius_diff(&self.rt, &self.et)
    }

    fn objective_of(&self) -> Objective {
        let graph = self.params.lambda * self.smoothness;
        let term = |name: &str, value: f64| Term {
            name: name.into(),
            value,
        };
        Objective {
            total: self.l21 + graph,
            terms: vec![
                term("l21", self.l21),
                term("graph", graph),
                term("residual_e", self.res_e.norm),
                term("residual_z", self.res_z.norm),
            ],
        }
    }

    /// The primal residuals `(‖X − W Gᵀ − E‖_F / ‖X‖_F, ‖G − Z‖_F / √k)` of the last
    /// iteration.
    pub fn relative_residuals(&self) -> (f64, f64) {
        (self.res_e.relative(), self.res_z.relative())
    }

    /// The current penalty μ.
    pub fn mu(&self) -> f64 {
        self.penalty.mu()
    }
}

/// Refuse an X that is all zeros or has a NaN or ∞ (before the graph is built from it: the
/// kNN search must not see a NaN).
pub(crate) fn check_x(data: &Dataset) -> Result<(), ModelError> {
    if !data.x.iter().all(|v| v.is_finite()) || data.x.iter().all(|&v| v == 0.0) {
        return Err(ModelError::BadData {
            why: "X is all zeros or has a non-finite entry: nothing to factorize".into(),
        });
    }
    Ok(())
}

/// `B (GᵀG)⁻¹` for an n×k G and an m×k B, through faer's Cholesky of the k×k Gram matrix;
/// `None` when GᵀG is not positive definite (or not finite).
fn right_solve_gram(g: ArrayView2<'_, f64>, b: Array2<f64>) -> Option<Array2<f64>> {
    let k = g.ncols();
    let gtg = gemm(g, Op::T, g, Op::N);
    if !gtg.iter().all(|v| v.is_finite()) {
        return None;
    }
    let fm = faer::Mat::from_fn(k, k, |i, j| gtg[[i, j]]);
    let inv = fm.llt(faer::Side::Lower).ok()?.inverse();
    let inv = Array2::from_shape_fn((k, k), |(i, j)| inv[(i, j)]);
    let out = gemm(b.view(), Op::N, inv.view(), Op::N);
    out.iter().all(|v| v.is_finite()).then_some(out)
}

/// `out ← L Y = D Y − S Y` (n×k row-major) and `Tr(Yᵀ L Y) = ½ Σ_ij S_ij ‖y_i − y_j‖²`, in one
/// pass over the nonzeros of S (symmetric, zero diagonal): O(nnz·k), nothing n×n dense. The
/// trace is a sum of nonnegative terms, so it has no cancellation error.
pub(crate) fn laplacian_pass(s: &Csr, y: &Array2<f64>, out: &mut Array2<f64>) -> f64 {
    let k = y.ncols();
    let mut trace = 0.0;
    for (i, mut o) in out.rows_mut().into_iter().enumerate() {
        let yi = y.row(i);
        o.fill(0.0);
        let (cols, vals) = s.row(i);
        let mut deg = 0.0;
        for (&j, &v) in cols.iter().zip(vals) {
            let yj = y.row(j);
            deg += v;
            let mut d2 = 0.0;
            for a in 0..k {
                o[a] -= v * yj[a];
                let d = yi[a] - yj[a];
                d2 += d * d;
            }
            trace += v * d2;
        }
        for a in 0..k {
            o[a] += deg * yi[a];
        }
    }
    0.5 * trace
}

/// The length of every row of a (row-major) array.
fn row_norms(a: &Array2<f64>) -> Vec<f64> {
    a.rows()
        .into_iter()
        .map(|r| r.iter().map(|v| v * v).sum::<f64>().sqrt())
        .collect()
}

/// ‖A − B‖_F.
fn frobenius_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    let mut s = 0.0;
    Zip::from(a).and(b).for_each(|&x, &y| s += (x - y) * (x - y));
    s.sqrt()
}

/// Row-wise argmax (the first maximum on ties).
fn row_argmax(a: &Array2<f64>, i: usize) -> usize {
    let mut best = 0;
    for (c, &v) in a.row(i).iter().enumerate() {
        if v > a[[i, best]] {
            best = c;
        }
    }
    best
}

impl Model for Rmnmf {
    fn kind(&self) -> ModelKind {
        super::KIND
    }

    fn step(&mut self) -> Result<Objective, ModelError> {
        let t = self.iteration + 1;
        let mu = self.penalty.mu();
        let inv = 1.0 / mu;
        let lam_mu = self.params.lambda * inv;
        // 1. (3.41) E ← Shrink_{1/μ}(R + Γ/μ) and 2. B = X − E + Γ/μ, in one pass over the
        //    samples (each row of Eᵀ shrunk and used while in cache).
        let parts: Vec<_> = self
            .et
            .axis_chunks_iter_mut(Axis(0), PASS_ROWS)
            .zip(self.bt.axis_chunks_iter_mut(Axis(0), PASS_ROWS))
            .zip(self.rt.axis_chunks_iter(Axis(0), PASS_ROWS))
            .zip(self.gammat.axis_chunks_iter(Axis(0), PASS_ROWS))
            .zip(self.xt.axis_chunks_iter(Axis(0), PASS_ROWS))
            .collect();
        for_each_part(parts, |_, ((((mut et, mut bt), rt), gammat), xt)| {
            Zip::from(et.rows_mut())
                .and(bt.rows_mut())
                .and(rt.rows())
                .and(gammat.rows())
                .and(xt.rows())
                .for_each(|mut e, mut b, r, gm, x| {
                    Zip::from(&mut e)
                        .and(&r)
                        .and(&gm)
                        .for_each(|e, &r, &gm| *e = r + inv * gm);
                    shrink_columns(e.view_mut().insert_axis(Axis(1)), inv);
                    Zip::from(&mut b)
                        .and(&x)
                        .and(&e)
                        .and(&gm)
                        .for_each(|b, &x, &e, &gm| *b = x - e + inv * gm);
                });
        });
        // 2. (3.42) W ← B G (GᵀG)⁻¹ (GᵀG = I after the first iteration).
        gemm_into(
            &mut self.w.view_mut(),
            1.0,
            self.bt.view(),
            Op::T,
            self.g.view(),
            Op::N,
            false,
        );
        if !self.orthonormal {
            let bg = std::mem::take(&mut self.w);
            self.w = right_solve_gram(self.g.view(), bg).ok_or_else(|| ModelError::Diverged {
                iteration: t,
                what: "GᵀG is singular or not finite in the W step".into(),
            })?;
        }
        // 3. (3.43) Z ← [G + Σ/μ − (λ/μ) L G]_+.
        Zip::from(&mut self.z)
            .and(&self.g)
            .and(&self.sigma)
            .and(&self.lg)
            .for_each(|z, &g, &s, &lg| *z = (g + inv * s - lam_mu * lg).max(0.0));
        // 4. (3.44) G ← Proc(Bᵀ W + Z − Σ/μ ∓ (λ/μ) L Z).
        laplacian_pass(&self.graph, &self.z, &mut self.lz);
        gemm_into(
            &mut self.kmat.view_mut(),
            1.0,
            self.bt.view(),
            Op::N,
            self.w.view(),
            Op::N,
            false,
        );
        let sign = if self.params.legacy_sign { 1.0 } else { -1.0 };
        Zip::from(&mut self.kmat)
            .and(&self.z)
            .and(&self.sigma)
            .and(&self.lz)
            .for_each(|kk, &z, &s, &lz| *kk += z - inv * s + sign * lam_mu * lz);
        self.g = procrustes(self.kmat.view()).map_err(|e| ModelError::Diverged {
            iteration: t,
            what: e.to_string(),
        })?;
        self.orthonormal = true;
        // 5. (3.45) R = X − W Gᵀ, Γ ← Γ + μ (R − E) (the ascent of [`ascend`], fused with the
        //    residual pass), ‖R − E‖_F and ‖X − W Gᵀ‖_{2,1}, one pass over the samples after
        //    the product G Wᵀ; Σ ← Σ + μ (G − Z); (3.46) μ ← ρμ.
        gemm_into(
            &mut self.rt.view_mut(),
            1.0,
            self.g.view(),
            Op::N,
            self.w.view(),
            Op::T,
            false,
        );
        // Per sample: ‖r_i‖² and ‖r_i − e_i‖², added over the samples in order afterwards.
        let mut sums = vec![(0.0, 0.0); self.rt.nrows()];
        let parts: Vec<_> = self
            .rt
            .axis_chunks_iter_mut(Axis(0), PASS_ROWS)
            .zip(self.gammat.axis_chunks_iter_mut(Axis(0), PASS_ROWS))
            .zip(self.xt.axis_chunks_iter(Axis(0), PASS_ROWS))
            .zip(self.et.axis_chunks_iter(Axis(0), PASS_ROWS))
            .zip(sums.chunks_mut(PASS_ROWS))
            .collect();
        for_each_part(parts, |_, ((((mut rt, mut gammat), xt), et), sums)| {
            Zip::from(rt.rows_mut())
                .and(gammat.rows_mut())
                .and(xt.rows())
                .and(et.rows())
                .and(sums)
                .for_each(|mut r, mut gm, x, e, out| {
                    let (mut rr, mut dd) = (0.0, 0.0);
                    Zip::from(&mut r)
                        .and(&mut gm)
                        .and(&x)
                        .and(&e)
                        .for_each(|r, gm, &x, &e| {
                            let v = x - *r;
                            *r = v;
                            rr += v * v;
                            let d = v - e;
                            *gm += mu * d;
                            dd += d * d;
                        });
                    *out = (rr, dd);
                });
        });
        let (mut sq, mut l21) = (0.0, 0.0);
        for &(rr, dd) in &sums {
            l21 += rr.sqrt();
            sq += dd;
        }
        self.res_e.norm = sq.sqrt();
        self.l21 = l21;
        self.res_z.norm = ascend(self.sigma.view_mut(), mu, self.g.view(), self.z.view());
        self.penalty.grow();
        if self.capped_at.is_none() && self.penalty.at_cap() {
            self.capped_at = Some(t);
        }
        // F (3.40) of the new (W, G): its graph term and L G for the next Z step.
        self.smoothness = laplacian_pass(&self.graph, &self.g, &mut self.lg);
        self.h.assign(&self.z.t());
        self.iteration = t;
        Ok(self.objective_of())
    }

    fn h(&self) -> ArrayView2<'_, f64> {
        self.h.view()
    }

    fn w(&self) -> Option<ArrayView2<'_, f64>> {
        Some(self.w.view())
    }

    fn objective(&self) -> Objective {
        self.objective_of()
    }

    fn notes(&self) -> Vec<String> {
        let (re, rz) = self.relative_residuals();
        let mut notes = vec![format!(
            "ALM primal residuals after {} iterations: ‖X − WGᵀ − E‖/‖X‖ = {re:.2e}, \
             ‖G − Z‖/√k = {rz:.2e} (stop rule: both below {RESIDUAL_TOL:.0e}); μ = {:.3e}",
            self.iteration,
            self.penalty.mu()
        )];
        if let Some(t) = self.capped_at {
            notes.push(format!(
                "μ reached its cap {MU_MAX:.0e} at iteration {t}: later steps move little \
                 (docs/models.md §10.4)"
            ));
        }
        let empty = self
            .z
            .rows()
            .into_iter()
            .filter(|r| r.iter().all(|&v| v == 0.0))
            .count();
        if empty > 0 {
            notes.push(format!(
                "{empty} sample(s) have an all-zero row of Z and are labelled by G's row instead"
            ));
        }
        notes
    }

    /// ‖e_i‖, the length of the part of sample i that RMNMF sets aside as outlying.
    /// Row-wise argmax of Z (3.48); a sample whose row of Z is all zero takes G's argmax.
    fn outputs(&self) -> Outputs {
        Outputs {
            values: {
            Some(SampleValues {
                name: "outlier part ‖e_i‖",
                values: row_norms(&self.et),
            })
            },
            assignments: {
            let n = self.z.nrows();
            Some(
                (0..n)
                    .map(|i| {
                        if self.z.row(i).iter().all(|&v| v == 0.0) {
                            row_argmax(&self.g, i)
                        } else {
                            row_argmax(&self.z, i)
                        }
                    })
                    .collect(),
            )
            },
            graph: Some(Arc::clone(&self.graph)),
            ..Outputs::default()
        }
    }

    fn has_converged(&self) -> bool {
        self.iteration > 0 && residuals_below(&[self.res_e, self.res_z], RESIDUAL_TOL)
    }

    /// G (n×k, orthonormal columns) and the outlier part E (m×n).
    fn exports(&self) -> Vec<Export> {
        vec![
            Export {
                name: "G",
                array: self.g.clone(),
            },
            Export {
                name: "E",
                array: self.et.t().as_standard_layout().into_owned(),
            },
        ]
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
