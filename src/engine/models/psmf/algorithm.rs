//! The PSMF iteration of docs/models.md §6 (see the module above for the math): the whitening
//! (with the PCA of §6.3 when m ≥ n), the two Laplacians, the initialisation and the ALM steps.

use super::params::{LwVariant, PsmfInit, PsmfParams};
use crate::engine::eval::derive_seed;
use crate::engine::eval::kmeans::{KMeansParams, repeated_kmeans};
use crate::engine::linalg::kdtree::knn_auto_unless;
use crate::engine::linalg::thin::{ChunkRows, XhtAccumulator, wt_x_into};
use crate::engine::linalg::{Csr, Op, argmax_rows, gemm, procrustes, shrink_columns};
use crate::engine::models::alm::ascend;
use crate::engine::models::can::{Can, CanParams};
use crate::engine::models::{Outputs, 
    Export, Interrupt, Model, ModelError, ModelKind, ModelSpec, Objective, SampleValues, Term,
};
use ndarray::{Array1, Array2, ArrayView2, Axis};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// The primal residuals below which the ALM has converged.
pub const RESIDUAL_TOL: f64 = 1e-9;
/// Cap of the PCA dimension of §6.3 (r = min(m, n/2, 100) when m ≥ n).
pub const PCA_CAP: usize = 100;
/// k-means starts of the `init = kmeans` option.
pub const KMEANS_STARTS: usize = 10;

/// The whitened data of §6.3: `A = R^{-T} X J` (m'×n) and `R^{-T} x̄`, with what it took.
pub struct Whitened {
    /// A = R^{-T} X J, m'×n (m' = m, or r after the PCA).
    pub a: Array2<f64>,
    /// R^{-T} x̄ (m'), so that `Πᵀ X = Qᵀ A + (Qᵀ b_mean) 1ᵀ`.
    pub b_mean: Array1<f64>,
    /// The final ε of `S_t + εI`.
    pub eps: f64,
    /// Cholesky attempts (1 = the first ε worked).
    pub attempts: usize,
    /// ‖AAᵀ − I‖_F.
    pub aat_error: f64,
    /// The PCA dimension r, when m ≥ n.
    pub pca: Option<usize>,
}

/// §6.3's PCA (when m ≥ n) and §6.3's whitening of the columns of `x`.
///
/// S_t = X J Xᵀ (m'×m') is the one m'×m' dense matrix, formed once (the spec requires it for
/// the Cholesky factor); `A` comes from one triangular solve, never an inverse. The PCA is a
/// thin SVD of the centred X (m×n, m ≥ n), O(mn²).
pub fn whiten(x: ArrayView2<'_, f64>) -> Result<Whitened, ModelError> {
    let (m, n) = x.dim();
    if x.iter().any(|v| !v.is_finite()) {
        return Err(ModelError::BadData {
            why: "X has a NaN or infinite entry".into(),
        });
    }
    let mean = x.mean_axis(Axis(1)).ok_or_else(|| ModelError::BadData {
        why: "X has no samples".into(),
    })?;
    let mut xc = &x - &mean.view().insert_axis(Axis(1));
    let mut xbar = mean;
    let mut pca = None;
    if m >= n {
        let r = m.min(n / 2).clamp(1, PCA_CAP);
        let mat = faer::Mat::from_fn(m, n, |i, j| xc[[i, j]]);
        let svd = mat.thin_svd().map_err(|_| ModelError::BadData {
            why: "the SVD of the centred data (PCA, docs/models.md §6.3) did not converge".into(),
        })?;
        let u = svd.U();
        let ur = Array2::from_shape_fn((m, r), |(i, a)| u[(i, a)]);
        xc = gemm(ur.view(), Op::T, xc.view(), Op::N);
        xbar = ur.t().dot(&xbar);
        pca = Some(r);
    }
    let mp = xc.nrows();
    let st = gemm(xc.view(), Op::N, xc.view(), Op::T);
    let trace: f64 = (0..mp).map(|i| st[[i, i]]).sum();
    if !(trace > 0.0 && trace.is_finite()) {
        return Err(ModelError::BadData {
            why: "every feature is constant: the total scatter S_t is zero".into(),
        });
    }
    let mut eps = 1e-6 * trace / mp as f64;
    let mut attempts = 0;
    let chol = loop {
        attempts += 1;
        let s = faer::Mat::from_fn(mp, mp, |i, j| st[[i, j]] + if i == j { eps } else { 0.0 });
        match s.llt(faer::Side::Lower) {
            Ok(c) => break c,
            Err(_) if attempts < 20 => eps *= 10.0,
            Err(_) => {
                return Err(ModelError::BadData {
                    why: format!("the Cholesky factor of S_t + εI failed up to ε = {eps:.3e}"),
                });
            }
        }
    };
    let l = chol.L();
    let mut rhs = faer::Mat::from_fn(mp, n + 1, |i, j| if j < n { xc[[i, j]] } else { xbar[i] });
    l.solve_lower_triangular_in_place(rhs.as_mut());
    let a = Array2::from_shape_fn((mp, n), |(i, j)| rhs[(i, j)]);
    let b_mean = Array1::from_shape_fn(mp, |i| rhs[(i, n)]);
    // ‖AAᵀ − I‖² = ‖AAᵀ‖² − 2‖A‖² + m', with the smaller Gram matrix.
    let gram = if mp <= n {
        gemm(a.view(), Op::N, a.view(), Op::T)
    } else {
        gemm(a.view(), Op::T, a.view(), Op::N)
    };
    let g2: f64 = gram.iter().map(|v| v * v).sum();
    let a2: f64 = a.iter().map(|v| v * v).sum();
    let aat_error = (g2 - 2.0 * a2 + mp as f64).max(0.0).sqrt();
    Ok(Whitened {
        a,
        b_mean,
        eps,
        attempts,
        aat_error,
        pca,
    })
}

/// `G = Y (YᵀY)^{-1/2}`: `1/√N_a` in column a for the members of class a (n×k).
pub fn scaled_indicator(labels: &[usize], k: usize) -> Array2<f64> {
    let mut sizes = vec![0usize; k];
    for &l in labels {
        sizes[l] += 1;
    }
    let mut g = Array2::zeros((labels.len(), k));
    for (i, &l) in labels.iter().enumerate() {
        g[[i, l]] = 1.0 / (sizes[l] as f64).sqrt();
    }
    g
}

/// `L_W V` for V (n×s, a row per sample) without forming L_W (docs/models.md §6.2):
/// centroid `v_i − mean_{ℓ_j = ℓ_i} v_j` (L_W = I − ŜŜᵀ) or pairwise `2N_a(v_i − mean)`. O(ns).
pub fn lw_apply(labels: &[usize], k: usize, variant: LwVariant, v: ArrayView2<'_, f64>) -> Array2<f64> {
    let s = v.ncols();
    let mut sums = Array2::<f64>::zeros((k, s));
    let mut sizes = vec![0usize; k];
    for (i, &l) in labels.iter().enumerate() {
        sizes[l] += 1;
        let mut row = sums.row_mut(l);
        row += &v.row(i);
    }
    let mut out = v.to_owned();
    for (i, &l) in labels.iter().enumerate() {
        let na = sizes[l] as f64;
        let scale = match variant {
            LwVariant::Centroid => 1.0,
            LwVariant::Pairwise => 2.0 * na,
        };
        for b in 0..s {
            out[[i, b]] = scale * (v[[i, b]] - sums[[l, b]] / na);
        }
    }
    out
}

/// `L_m Z = D Z − S Z` for the sparse graph S (n×n) and Z (n×k). O(nnz·k).
pub fn laplacian_apply(graph: &Csr, degree: &[f64], z: ArrayView2<'_, f64>) -> Array2<f64> {
    let mut sz = Array2::zeros(z.dim());
    graph.mul_dense_into(z, &mut sz.view_mut());
    let mut out = z.to_owned();
    for (i, mut row) in out.rows_mut().into_iter().enumerate() {
        row *= degree[i];
    }
    out - sz
}

/// Pseudo-supervised matrix factorization in a discriminative subspace (docs/models.md §6).
///
/// Works on the whitened A (m'×n) only; holds Q, Z2, Λ3 (m'×s), F (s×k), G, Z1, Λ2 (n×k), E,
/// Λ1 (s×n) and the p-NN graph of QᵀA (sparse). Nothing n×n or m'×m' after the start.
pub struct Psmf {
    params: PsmfParams,
    /// Raised by the front end to stop within an iteration (the p-NN rebuild polls it).
    interrupt: Interrupt,
    k: usize,
    pub(crate) a: Array2<f64>,
    b_mean: Array1<f64>,
    pub(crate) q: Array2<f64>,
    /// QᵀA (s×n) of the current Q (so AᵀQ is its transpose: no product).
    qta: Array2<f64>,
    pub(crate) f: Array2<f64>,
    pub(crate) g: Array2<f64>,
    pub(crate) e: Array2<f64>,
    pub(crate) z1: Array2<f64>,
    pub(crate) z2: Array2<f64>,
    pub(crate) l1: Array2<f64>,
    pub(crate) l2: Array2<f64>,
    pub(crate) l3: Array2<f64>,
    pub(crate) mu: f64,
    mu0: f64,
    /// Gᵀ (k×n), the model's H.
    ht: Array2<f64>,
    /// The pseudo labels L_W is built from (of the current G).
    pub(crate) pseudo: Vec<usize>,
    pub(crate) graph: Arc<Csr>,
    degree: Vec<f64>,
    /// Whether `graph` and `pseudo` are of the current Q and G (true right after the start).
    fresh: bool,
    init_labels: Vec<usize>,
    init_note: String,
    whitening_note: String,
    iteration: usize,
    pub(crate) residuals: [f64; 3],
    objective: Objective,
}

impl Psmf {
    /// Whitening, initial labels (CAN, k-means or the warm start's H), G, Q, F and μ0
    /// (docs/models.md §6.3).
    pub fn new(x: ArrayView2<'_, f64>, spec: &ModelSpec, params: PsmfParams) -> Result<Self, ModelError> {
        let (_, n) = x.dim();
        let k = spec.k;
        let w = whiten(x)?;
        let mp = w.a.nrows();
        let s = params.subspace;
        if s == 0 || s > mp {
            return Err(ModelError::InvalidParam {
                model: "PSMF",
                name: "subspace".into(),
                why: format!(
                    "= {s} must be between 1 and the {mp} dimensions of the whitened data{}",
                    if w.pca.is_some() { " (after the PCA of docs/models.md §6.3)" } else { "" }
                ),
            });
        }
        if n < k.max(2) {
            return Err(ModelError::InvalidRank { k, m: mp, n });
        }
        let (g, init_note) = if let Some(init) = &spec.init {
            let g = procrustes(init.h.t()).map_err(|e| ModelError::BadData {
                why: format!("{}: H cannot start G ({e})", init.source),
            })?;
            (g, format!("G started from {} (its Procrustes factor)", init.source))
        } else {
            match params.init {
                PsmfInit::Can => {
                    let can = CanParams {
                        neighbors: params.can_neighbors,
                        ..CanParams::defaults()?
                    };
                    let (labels, comps) = Can::cluster(x, k, spec.seed, can)?;
                    (
                        scaled_indicator(&labels, k),
                        format!(
                            "pseudo labels started from CAN ({} neighbours; {comps} component(s) \
                             for k = {k})",
                            params.can_neighbors
                        ),
                    )
                }
                PsmfInit::KMeans => {
                    let mut kp = KMeansParams::new(k);
                    kp.restarts = KMEANS_STARTS;
                    kp.seed = spec.seed;
                    let rk = repeated_kmeans(x, &kp).map_err(|e| ModelError::BadData {
                        why: format!("k-means initialisation failed: {e}"),
                    })?;
                    (
                        scaled_indicator(&rk.runs[rk.best].labels, k),
                        format!("pseudo labels started from k-means ({KMEANS_STARTS} starts)"),
                    )
                }
            }
        };
        let pseudo = argmax_rows(g.view());
        let q = lda_start(&w.a, &pseudo, k, s, derive_seed(spec.seed, 1))?;
        let qta = zt_a(&q, &w.a);
        let f = qta.dot(&g);
        let resid = &qta - &f.dot(&g.t());
        let mut norms: Vec<f64> = resid
            .columns()
            .into_iter()
            .map(|c| c.iter().map(|v| v * v).sum::<f64>().sqrt())
            .collect();
        norms.sort_by(f64::total_cmp);
        let median = norms[n / 2];
        let mu0 = params.mu0.unwrap_or(if median > 1e-300 { 1.0 / median } else { 1.0 });
        let whitening_note = format!(
            "PSMF whitening: {}S_t + εI with ε = {:.3e} ({} Cholesky attempt(s)), ‖AAᵀ − I‖_F = \
             {:.3e}; μ0 = {:.4e}{}",
            match w.pca {
                Some(r) => format!(
                    "m = {} ≥ n = {n}, so a PCA to r = {r} dimensions first (docs/models.md §6.3); ",
                    x.nrows()
                ),
                None => String::new(),
            },
            w.eps,
            w.attempts,
            w.aat_error,
            mu0,
            if params.mu0.is_none() { " (1 / median residual norm)" } else { "" }
        );
        let mut m = Self {
            params,
            k,
            e: Array2::zeros((s, n)),
            z1: g.clone(),
            z2: q.clone(),
            l1: Array2::zeros((s, n)),
            l2: Array2::zeros((n, k)),
            l3: Array2::zeros((mp, s)),
            ht: g.t().to_owned(),
            init_labels: pseudo.clone(),
            pseudo,
            a: w.a,
            b_mean: w.b_mean,
            q,
            qta,
            f,
            g,
            mu: mu0,
            mu0,
            graph: Arc::new(Csr::from_entries(n, n, &[])),
            degree: vec![0.0; n],
            fresh: false,
            init_note,
            whitening_note,
            iteration: 0,
            residuals: [0.0; 3],
            objective: Objective::single("l21", 0.0),
            interrupt: Interrupt::new(),
        };
        // A fresh flag is never raised: the first graph is always built.
        m.rebuild_laplacians();
        m.fresh = true;
        m.objective = m.compute_objective();
        Ok(m)
    }

    /// Step 0 of §6.4: pseudo labels of G and the binary p-NN graph of QᵀA, by the k-d tree
    /// when s is small ([`crate::engine::linalg::kdtree`]), else the blocked search (the same
    /// answer). Returns false, changing nothing, when the interrupt was raised during the
    /// search.
    pub(crate) fn rebuild_laplacians(&mut self) -> bool {
        let stop = self.interrupt.clone();
        let Some(nb) = knn_auto_unless(self.qta.view(), self.params.neighbors, &|| stop.is_raised())
        else {
            return false;
        };
        self.pseudo = argmax_rows(self.g.view());
        let graph = nb.binary_graph();
        self.degree = graph.row_sums();
        self.graph = Arc::new(graph);
        true
    }

    /// `C Z = A (L_W (Aᵀ Z))` (m'×s), never forming C, O(m'ns): the products the step
    /// forms inline (sharing AᵀQ = (QᵀA)ᵀ), for the tests.
    #[cfg(test)]
    pub(crate) fn c_apply(&self, z: ArrayView2<'_, f64>) -> Array2<f64> {
        let atz = gemm(self.a.view(), Op::T, z, Op::N);
        let lw = lw_apply(&self.pseudo, self.k, self.params.lw, atz.view());
        gemm(self.a.view(), Op::N, lw.view(), Op::N)
    }

    fn lm_apply(&self, z: ArrayView2<'_, f64>) -> Array2<f64> {
        laplacian_apply(&self.graph, &self.degree, z)
    }

    /// The objective of the current Q, F, G under this iteration's Laplacians, with the primal
    /// residuals as extra terms (not part of the total).
    fn compute_objective(&self) -> Objective {
        let resid = &self.qta - &self.f.dot(&self.g.t());
        let l21: f64 = resid
            .columns()
            .into_iter()
            .map(|c| c.iter().map(|v| v * v).sum::<f64>().sqrt())
            .sum();
        let graph = (&self.g * &self.lm_apply(self.g.view())).sum();
        // Tr(Qᵀ A L_W Aᵀ Q) = ⟨AᵀQ, L_W AᵀQ⟩ with AᵀQ = (QᵀA)ᵀ: no product with A.
        let atq = self.qta.t();
        let lda = (&atq * &lw_apply(&self.pseudo, self.k, self.params.lw, atq)).sum();
        let (g1, g2) = (self.params.lambda1 * graph, self.params.lambda2 * lda);
        let term = |name: &str, value: f64| Term {
            name: name.into(),
            value,
        };
        Objective {
            total: l21 + g1 + g2,
            terms: vec![
                term("l21", l21),
                term("graph", g1),
                term("lda", g2),
                term("residual_e", self.residuals[0]),
                term("residual_z1", self.residuals[1]),
                term("residual_z2", self.residuals[2]),
            ],
        }
    }

    /// The learned embedding `Πᵀ X = Qᵀ A + (Qᵀ R^{-T} x̄) 1ᵀ` (s×n).
    pub fn embedding(&self) -> Array2<f64> {
        let mut y = self.qta.clone();
        let shift = self.q.t().dot(&self.b_mean);
        for mut col in y.columns_mut() {
            col += &shift;
        }
        y
    }

    /// The cluster labels `argmax_a (Z1)_ia` (G's when a row of Z1 is all zero).
    pub fn labels(&self) -> Vec<usize> {
        let from_z1 = argmax_rows(self.z1.view());
        let from_g = argmax_rows(self.g.view());
        (0..self.z1.nrows())
            .map(|i| {
                if self.z1.row(i).iter().all(|&v| v == 0.0) {
                    from_g[i]
                } else {
                    from_z1[i]
                }
            })
            .collect()
    }

    /// The current ALM penalty μ.
    pub fn mu(&self) -> f64 {
        self.mu
    }

    /// The primal residuals `‖QᵀA − FGᵀ − E‖, ‖G − Z1‖, ‖Q − Z2‖` of the last iteration.
    pub fn residuals(&self) -> [f64; 3] {
        self.residuals
    }
}

/// Q's start (docs/models.md §6.3): the top left singular vectors of `A Ŝ` (the top
/// eigenvectors of `A ŜŜᵀ Aᵀ` without forming that m'×m' matrix), completed to s orthonormal
/// columns by a seeded Gaussian draw orthogonalised against them (A is centred, so A Ŝ has rank
/// ≤ k − 1 and at least one column always comes from the draw when s = k).
fn lda_start(a: &Array2<f64>, labels: &[usize], k: usize, s: usize, seed: u64) -> Result<Array2<f64>, ModelError> {
    let mp = a.nrows();
    let shat = scaled_indicator(labels, k);
    let m = a.dot(&shat);
    let fm = faer::Mat::from_fn(mp, k, |i, j| m[[i, j]]);
    let svd = fm.thin_svd().map_err(|_| ModelError::BadData {
        why: "the SVD of A Ŝ (Q's start) did not converge".into(),
    })?;
    let (u, sv) = (svd.U(), svd.S());
    let top = (0..k.min(mp)).map(|a| sv[a]).fold(0.0f64, f64::max);
    let mut cols: Vec<Vec<f64>> = Vec::with_capacity(s);
    for c in 0..k.min(mp) {
        if cols.len() == s || sv[c].is_nan() || sv[c] <= 1e-10 * top {
            break;
        }
        cols.push((0..mp).map(|i| u[(i, c)]).collect());
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut tries = 0;
    while cols.len() < s {
        tries += 1;
        if tries > 10 * s + 10 {
            return Err(ModelError::BadData {
                why: "no orthonormal complement for Q's start".into(),
            });
        }
        let mut v: Vec<f64> = (0..mp).map(|_| normal(&mut rng)).collect();
        for _ in 0..2 {
            for c in &cols {
                let d: f64 = c.iter().zip(&v).map(|(x, y)| x * y).sum();
                v.iter_mut().zip(c).for_each(|(vi, ci)| *vi -= d * ci);
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm > 1e-8 {
            v.iter_mut().for_each(|x| *x /= norm);
            cols.push(v);
        }
    }
    Ok(Array2::from_shape_fn((mp, s), |(i, c)| cols[c][i]))
}

/// Columns per block of [`a_times`]: the block's packed Vᵀ (s padded to 8 or 16 lanes) is at
/// most 512 KB.
const A_TIMES_BLOCK: usize = 4096;

/// `ZᵀA` (s×n) for Z (m'×s) and the whitened A (m'×n): the thin `WᵀX` kernel, its columns
/// split over the fit's threads with the bits of one thread (faer when an operand is not
/// row-major contiguous).
fn zt_a(z: &Array2<f64>, a: &Array2<f64>) -> Array2<f64> {
    let mut out = Array2::zeros((z.ncols(), a.ncols()));
    wt_x_into(&mut out, z, a, ChunkRows::Streaming);
    out
}

/// `A V` (m'×s) for V (n×s): the thin `XHᵀ` kernel with H = Vᵀ over column blocks of A, its
/// rows split over the fit's threads with the bits of one thread (faer when A is not row-major
/// contiguous).
fn a_times(a: &Array2<f64>, v: ArrayView2<'_, f64>) -> Array2<f64> {
    let ((mp, n), s) = (a.dim(), v.ncols());
    let vt = v.t().as_standard_layout().into_owned();
    let (Some(xs), Some(hs)) = (a.as_slice(), vt.as_slice()) else {
        return gemm(a.view(), Op::N, v, Op::N);
    };
    let mut acc = XhtAccumulator::new(mp, s);
    acc.set_all_columns(xs, hs, n, A_TIMES_BLOCK);
    let mut out = Array2::zeros((mp, s));
    if let Some(os) = out.as_slice_mut() {
        acc.write_into(os);
    }
    out
}

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = 1.0 - rng.r#gen::<f64>();
    let u2: f64 = rng.r#gen::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

fn proc_step(k: &Array2<f64>, what: &str, iteration: usize) -> Result<Array2<f64>, ModelError> {
    procrustes(k.view()).map_err(|e| ModelError::Diverged {
        iteration,
        what: format!("{what} step: {e}"),
    })
}

impl Model for Psmf {
    fn kind(&self) -> ModelKind {
        super::KIND
    }

    fn set_interrupt(&mut self, interrupt: Interrupt) {
        self.interrupt = interrupt;
    }

    fn step(&mut self) -> Result<Objective, ModelError> {
        let t = self.iteration + 1;
        if !self.fresh && !self.rebuild_laplacians() {
            return Err(ModelError::Interrupted);
        }
        self.fresh = false;
        let (mu, l1w, l2w) = (self.mu, self.params.lambda1, self.params.lambda2);
        let qta = self.qta.clone();
        // 1. E = Shrink_{1/μ}(QᵀA − FGᵀ + Λ1/μ).
        let mut e = &qta - &self.f.dot(&self.g.t()) + &(&self.l1 / mu);
        shrink_columns(e.view_mut(), 1.0 / mu);
        self.e = e;
        // 2. Z1 = [G + Λ2/μ − (λ1/μ) L_m G]_+.
        let lmg = self.lm_apply(self.g.view());
        self.z1 = (&self.g + &(&self.l2 / mu) - &(lmg * (l1w / mu))).mapv(|v| v.max(0.0));
        // 3. Z2 = Proc(Q + Λ3/μ − (λ2/μ) C Q).
        let cq = {
            // C Q = A (L_W (AᵀQ)), AᵀQ = (QᵀA)ᵀ already at hand: one product with A.
            let lw = lw_apply(&self.pseudo, self.k, self.params.lw, qta.t());
            a_times(&self.a, lw.view())
        };
        let k3 = &self.q + &(&self.l3 / mu) - &(cq * (l2w / mu));
        self.z2 = proc_step(&k3, "Z2", t)?;
        // 4. G = Proc((QᵀA − E + Λ1/μ)ᵀ F + Z1 − Λ2/μ − (λ1/μ) L_m Z1).
        let nmat = &qta - &self.e + &(&self.l1 / mu);
        let lmz1 = self.lm_apply(self.z1.view());
        let k4 = nmat.t().dot(&self.f) + &self.z1 - &(&self.l2 / mu) - &(lmz1 * (l1w / mu));
        self.g = proc_step(&k4, "G", t)?;
        // 5. Q = Proc(A (FGᵀ + E − Λ1/μ)ᵀ + Z2 − Λ3/μ − (λ2/μ) C Z2 [+ Q − A(AᵀQ)]).
        // A Pᵀ − (λ2/μ) C Z2 [− A AᵀQ] as one product A·(Pᵀ − (λ2/μ) L_W(AᵀZ2) [− AᵀQ]).
        let p = self.f.dot(&self.g.t()) + &self.e - &(&self.l1 / mu);
        let z2ta = zt_a(&self.z2, &self.a);
        let mut right = p.t().to_owned()
            - &(lw_apply(&self.pseudo, self.k, self.params.lw, z2ta.t()) * (l2w / mu));
        if self.params.mm {
            right -= &qta.t();
        }
        let mut k5 = a_times(&self.a, right.view()) + &self.z2 - &(&self.l3 / mu);
        if self.params.mm {
            k5 += &self.q;
        }
        self.q = proc_step(&k5, "Q", t)?;
        // 6. F = (QᵀA − E + Λ1/μ) G.
        self.qta = zt_a(&self.q, &self.a);
        let qta = &self.qta;
        self.f = (qta - &self.e + &(&self.l1 / mu)).dot(&self.g);
        // 7. Multipliers and penalty.
        // Λ ← Λ + μ (A − B) in place for QᵀA = FGᵀ + E, G = Z1 and Q = Z2, with their
        // residual norms (the shared ALM step).
        let fit = self.f.dot(&self.g.t()) + &self.e;
        self.residuals = [
            ascend(self.l1.view_mut(), mu, qta.view(), fit.view()),
            ascend(self.l2.view_mut(), mu, self.g.view(), self.z1.view()),
            ascend(self.l3.view_mut(), mu, self.q.view(), self.z2.view()),
        ];
        self.mu = (self.params.rho * mu).min(self.params.mu_max);
        self.ht = self.g.t().to_owned();
        self.iteration = t;
        if self.f.iter().chain(self.e.iter()).any(|v| !v.is_finite()) {
            return Err(ModelError::Diverged {
                iteration: t,
                what: "F or E has a non-finite entry".into(),
            });
        }
        self.objective = self.compute_objective();
        Ok(self.objective.clone())
    }

    fn h(&self) -> ArrayView2<'_, f64> {
        self.ht.view()
    }

    fn w(&self) -> Option<ArrayView2<'_, f64>> {
        None
    }

    fn objective(&self) -> Objective {
        self.objective.clone()
    }

    fn notes(&self) -> Vec<String> {
        let labels = self.labels();
        let changed = labels
            .iter()
            .zip(&self.init_labels)
            .filter(|(a, b)| a != b)
            .count();
        vec![
            self.whitening_note.clone(),
            format!(
                "{}; {changed} of {} labels differ from the start (docs/models.md §6.6: PSMF \
                 keeps most of the labelling it starts from)",
                self.init_note,
                labels.len()
            ),
            format!(
                "PSMF after {} iteration(s): μ = {:.4e} (μ0 = {:.4e}); primal residuals \
                 ‖QᵀA − FGᵀ − E‖ = {:.3e}, ‖G − Z1‖ = {:.3e}, ‖Q − Z2‖ = {:.3e} (plotted as the \
                 terms residual_e, residual_z1, residual_z2, not part of the objective)",
                self.iteration,
                self.mu,
                self.mu0,
                self.residuals[0],
                self.residuals[1],
                self.residuals[2]
            ),
        ]
    }

    /// The learned subspace Πᵀx (s×n), for the app's scatter.
    fn outputs(&self) -> Outputs {
        Outputs {
            values: {
            Some(SampleValues {
                name: "robust residual ‖e_i‖",
                values: self
                    .e
                    .columns()
                    .into_iter()
                    .map(|c| c.iter().map(|v| v * v).sum::<f64>().sqrt())
                    .collect(),
            })
            },
            assignments: Some(self.labels()),
            graph: Some(Arc::clone(&self.graph)),
            subspace: Some(("learned subspace Πᵀx", self.embedding())),
            ..Outputs::default()
        }
    }

    fn has_converged(&self) -> bool {
        self.iteration >= self.params.iterations
            || (self.iteration > 0 && self.residuals.iter().all(|&r| r < RESIDUAL_TOL))
    }

    fn exports(&self) -> Vec<Export> {
        let labels = self.labels();
        vec![
            Export {
                name: "G",
                array: self.g.clone(),
            },
            Export {
                name: "embedding",
                array: self.embedding(),
            },
            Export {
                name: "labels",
                array: Array2::from_shape_fn((labels.len(), 1), |(i, _)| labels[i] as f64),
            },
        ]
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
