//! RPNMF — Ranking Preserving NMF (Wang et al., IJCAI 2018; MODELS.md §4).
//!
//! `F(W, H) = ‖X − WH‖²_F + α Σ_{τ∈T} sp(t_τ(H))`, eq. (9), with
//! `t_τ = ‖h_i − h_j‖² − ‖h_i − h_q‖² + δ` for each triplet τ = (i, j, q).
//!
//! One [`Model::step`] (MODELS.md §4.5): the W step `W ← W ⊙ (XHᵀ) ⊘ max(W(HHᵀ), ε)`, then the
//! combined H step `H ← H ⊙ (WᵀX + αH·Mneg) ⊘ max(WᵀW H + αH·Mpos, ε)` (§4.4, Jacobi: σ(t) at
//! the H of the start of the step), then — by default — the safeguard: if F rose, retry with
//! the damped steps `H ⊙ ratio^γ`, γ = 1/2, 1/4, … (see [`MAX_HALVINGS`]), and if F still
//! rose keep H. Off ("paper-literal"), a
//! non-finite iterate is reverted and reported as [`ModelError::Diverged`] (§10.4).
//!
//! Cost per iteration O(mnk + |T|k): the products XHᵀ and WᵀX, k×k Gram matrices, Wᵀ W H and
//! W(HHᵀ); the ranking parts are sparse (nnz ≤ 3|T| each). Nothing n×n dense, nothing m×n.
//! The objective uses the trace identity `‖X‖² − 2⟨WᵀX, H⟩ + ⟨WᵀW, HHᵀ⟩`, so the safeguard's
//! extra evaluations cost O(nk² + |T|k). W and H are never rescaled (§4.5 step 4, §10.3).

pub mod algorithm;
pub mod params;

pub use params::RpnmfParams;

use super::nmf::algorithm::{FLOOR, mu_update};
use super::nmf::init::random_wh;
use crate::engine::data::Dataset;
use crate::engine::linalg::{Op, gemm_into};
use crate::engine::models::{
    EPS_DIV, Model, ModelError, ModelKind, ModelSpec, Objective, SideInfo, Term, Triplet,
};
use algorithm::{RoleMatrices, margins, ranking_loss};
use ndarray::{Array2, ArrayView2, Zip};
use std::sync::Arc;

/// What the last H step did (MODELS.md §4.5 step d).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HStep {
    /// The full multiplicative step was taken.
    #[default]
    Full,
    /// The full step raised F; the damped step `H ⊙ ratio^γ`, γ = 2^−level, was taken.
    Damped(u8),
    /// Both raised F; H was kept (only W moved). Repeated rejections mean the safeguard has
    /// stalled the H updates: the triplets are probably contradictory.
    Rejected,
}

/// Halvings of the exponent γ the safeguard tries before it keeps H (γ ≥ 2⁻¹⁰).
///
/// MODELS.md §4.5 d names one retry, γ = 1/2. One retry is not enough: on `orl_32x32` with the
/// paper's α = 0.1, δ = 10 both the full and the γ = 1/2 step raised F from about iteration 80
/// on, and H then stayed frozen for the rest of the run (418 of 500 steps rejected). Because
/// `H ⊙ ratio^γ ≈ H + γ H ⊙ log(ratio)` and `log(ratio)` has the sign of −∇F, a small enough γ
/// always descends unless H is stationary, so halving γ further restores progress.
pub const MAX_HALVINGS: u8 = 10;

/// Rejections in a row after which the notes call H stalled.
const STALL_STEPS: usize = 10;

/// How often the safeguard intervened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SafeguardStats {
    pub damped: usize,
    /// The most halvings of γ a taken step needed.
    pub deepest: u8,
    pub rejected: usize,
    /// Rejections in a row, up to the last step.
    pub consecutive_rejected: usize,
    pub last: HStep,
}

/// Ranking Preserving NMF (MODELS.md §4).
pub struct Rpnmf {
    data: Arc<Dataset>,
    params: RpnmfParams,
    triplets: Vec<Triplet>,
    roles: RoleMatrices,
    w: Array2<f64>,
    h: Array2<f64>,
    x_norm2: f64,
    // Workspaces.
    wtx: Array2<f64>,    // k×n  WᵀX for the current W
    wtw: Array2<f64>,    // k×k
    num: Array2<f64>,    // k×n
    den: Array2<f64>,    // k×n
    cand: Array2<f64>,   // k×n  candidate H
    xht: Array2<f64>,    // m×k  XHᵀ (W step)
    whht: Array2<f64>,   // m×k  W HHᵀ (W step)
    w_prev: Array2<f64>, // m×k  W before the step (restored on divergence)
    scratch: Scratch,    // margins and HHᵀ
    iteration: usize,
    objective: Objective,
    stats: SafeguardStats,
}

/// Buffers reused by every objective evaluation: the margins and HHᵀ (k×k).
struct Scratch {
    t: Vec<f64>,
    hht: Array2<f64>,
}

/// `(reconstruction, ranking)` of H given the products of the current W.
fn terms(
    x_norm2: f64,
    wtx: &Array2<f64>,
    wtw: &Array2<f64>,
    h: ArrayView2<'_, f64>,
    triplets: &[Triplet],
    p: &RpnmfParams,
    scratch: &mut Scratch,
) -> (f64, f64) {
    let Scratch { t, hht } = scratch;
    gemm_into(&mut hht.view_mut(), 1.0, h, Op::N, h, Op::T, false);
    let cross: f64 = Zip::from(wtx).and(h).fold(0.0, |acc, &a, &b| acc + a * b);
    let gram: f64 = Zip::from(wtw)
        .and(&*hht)
        .fold(0.0, |acc, &a, &b| acc + a * b);
    let recon = (x_norm2 - 2.0 * cross + gram).max(0.0);
    margins(h, triplets, p.delta, t);
    (recon, ranking_loss(p.alpha, t))
}

fn objective_of(recon: f64, ranking: f64) -> Objective {
    Objective {
        total: recon + ranking,
        terms: vec![
            Term {
                name: "reconstruction".into(),
                value: recon,
            },
            Term {
                name: "ranking".into(),
                value: ranking,
            },
        ],
    }
}

impl Rpnmf {
    /// Seeded start (the NMF init, MODELS.md §4.5 step 2). Needs at least one triplet.
    pub fn new(data: Arc<Dataset>, spec: &ModelSpec, side: &SideInfo) -> Result<Self, ModelError> {
        let params = RpnmfParams::from_spec(spec)?;
        let (m, n) = data.x.dim();
        spec.validate(m, n)?;
        let mean = data.x.mean().unwrap_or(0.0);
        if !(mean > 0.0 && mean.is_finite()) {
            return Err(ModelError::BadData {
                why: "X is all zeros (or not finite): nothing to factorize".into(),
            });
        }
        let (w, h) = random_wh(m, n, spec.k, mean, spec.seed);
        Self::from_factors(data, params, &side.triplets, w, h)
    }

    /// Start from given factors (tests, warm starts), clamped to ≥ 1e-16 (MODELS.md §10.1).
    pub fn from_factors(
        data: Arc<Dataset>,
        params: RpnmfParams,
        triplets: &[Triplet],
        w: Array2<f64>,
        h: Array2<f64>,
    ) -> Result<Self, ModelError> {
        let params = params.check()?;
        let n = data.n();
        if triplets.is_empty() {
            return Err(ModelError::MissingSideInfo {
                model: "RPNMF",
                what: "at least one triplet (i, j, q): add some on the scatter or generate them"
                    .into(),
            });
        }
        if let Some(bad) = triplets
            .iter()
            .find(|t| t.i.max(t.j).max(t.q) >= n || t.i == t.j || t.i == t.q || t.j == t.q)
        {
            return Err(ModelError::InvalidParam {
                model: "RPNMF",
                name: "triplets".into(),
                why: format!(
                    "contain ({}, {}, {}), which is not three distinct samples below n = {n}",
                    bad.i, bad.j, bad.q
                ),
            });
        }
        let k = w.ncols();
        let x_norm2 = data.x.iter().map(|v| v * v).sum();
        let mut s = Self {
            roles: RoleMatrices::new(n, triplets),
            triplets: triplets.to_vec(),
            params,
            w: w.mapv(|v| v.max(1e-16)),
            h: h.mapv(|v| v.max(1e-16)),
            x_norm2,
            wtx: Array2::zeros((k, n)),
            wtw: Array2::zeros((k, k)),
            num: Array2::zeros((k, n)),
            den: Array2::zeros((k, n)),
            cand: Array2::zeros((k, n)),
            xht: Array2::zeros((data.m(), k)),
            whht: Array2::zeros((data.m(), k)),
            w_prev: Array2::zeros((data.m(), k)),
            scratch: Scratch {
                t: Vec::with_capacity(triplets.len()),
                hht: Array2::zeros((k, k)),
            },
            iteration: 0,
            objective: objective_of(0.0, 0.0),
            stats: SafeguardStats::default(),
            data,
        };
        s.refresh_w_products();
        let (r, q) = terms(
            s.x_norm2,
            &s.wtx,
            &s.wtw,
            s.h.view(),
            &s.triplets,
            &s.params,
            &mut s.scratch,
        );
        s.objective = objective_of(r, q);
        Ok(s)
    }

    /// The checked hyperparameters.
    pub fn params(&self) -> RpnmfParams {
        self.params
    }

    /// How often the safeguard damped or rejected the H step.
    pub fn safeguard_stats(&self) -> SafeguardStats {
        self.stats
    }

    /// Iterations done.
    pub fn iteration(&self) -> usize {
        self.iteration
    }

    /// WᵀX and WᵀW for the current W.
    fn refresh_w_products(&mut self) {
        let x = self.data.x.view();
        gemm_into(
            &mut self.wtx.view_mut(),
            1.0,
            self.w.view(),
            Op::T,
            x,
            Op::N,
            false,
        );
        gemm_into(
            &mut self.wtw.view_mut(),
            1.0,
            self.w.view(),
            Op::T,
            self.w.view(),
            Op::N,
            false,
        );
    }

    /// `W ← W ⊙ (XHᵀ) ⊘ max(W(HHᵀ), ε)` (MODELS.md §4.4, W step [P]).
    fn w_step(&mut self) {
        let x = self.data.x.view();
        gemm_into(
            &mut self.xht.view_mut(),
            1.0,
            x,
            Op::N,
            self.h.view(),
            Op::T,
            false,
        );
        gemm_into(
            &mut self.scratch.hht.view_mut(),
            1.0,
            self.h.view(),
            Op::N,
            self.h.view(),
            Op::T,
            false,
        );
        gemm_into(
            &mut self.whht.view_mut(),
            1.0,
            self.w.view(),
            Op::N,
            self.scratch.hht.view(),
            Op::N,
            false,
        );
        // The NMF rule, floored at the smallest normal f64 (subnormals slow every product).
        mu_update(&mut self.w, &self.xht, &self.whht);
    }
}

impl Model for Rpnmf {
    fn kind(&self) -> ModelKind {
        ModelKind::Rpnmf
    }

    fn step(&mut self) -> Result<Objective, ModelError> {
        self.w_prev.assign(&self.w);
        // a. W step, then the products of the new W.
        self.w_step();
        self.refresh_w_products();
        // b. F at the current H, margins, σ, Mneg and Mpos.
        let (r0, q0) = terms(
            self.x_norm2,
            &self.wtx,
            &self.wtw,
            self.h.view(),
            &self.triplets,
            &self.params,
            &mut self.scratch,
        );
        let f0 = r0 + q0;
        self.roles.fill(&self.scratch.t);
        // c. Candidate H' = H ⊙ ratio, ratio = (WᵀX + αH·Mneg) ⊘ max(WᵀWH + αH·Mpos, ε).
        let alpha = self.params.alpha;
        self.roles.mneg.left_mul_into(self.h.view(), &mut self.num);
        self.roles.mpos.left_mul_into(self.h.view(), &mut self.den);
        Zip::from(&mut self.num)
            .and(&self.wtx)
            .for_each(|n, &a| *n = a + alpha * *n);
        self.den.mapv_inplace(|v| alpha * v);
        gemm_into(
            &mut self.den.view_mut(),
            1.0,
            self.wtw.view(),
            Op::N,
            self.h.view(),
            Op::N,
            true,
        );
        // num ← ratio.
        Zip::from(&mut self.num)
            .and(&self.den)
            .for_each(|n, &d| *n /= d.max(EPS_DIV));
        Zip::from(&mut self.cand)
            .and(&self.h)
            .and(&self.num)
            .for_each(|c, &h, &r| *c = (h * r).max(FLOOR));

        let (r, q) = if self.params.safeguard {
            // d. Safeguard: the full step, else the damped steps H ⊙ ratio^γ with
            // γ = 1/2, 1/4, …, 2^−MAX_HALVINGS, else keep H.
            let mut level = 0u8;
            loop {
                let (r1, q1) = terms(
                    self.x_norm2,
                    &self.wtx,
                    &self.wtw,
                    self.cand.view(),
                    &self.triplets,
                    &self.params,
                    &mut self.scratch,
                );
                if r1 + q1 <= f0 {
                    std::mem::swap(&mut self.h, &mut self.cand);
                    self.stats.consecutive_rejected = 0;
                    if level == 0 {
                        self.stats.last = HStep::Full;
                    } else {
                        self.stats.last = HStep::Damped(level);
                        self.stats.damped += 1;
                        self.stats.deepest = self.stats.deepest.max(level);
                    }
                    break (r1, q1);
                }
                if level == MAX_HALVINGS {
                    self.stats.last = HStep::Rejected;
                    self.stats.rejected += 1;
                    self.stats.consecutive_rejected += 1;
                    break (r0, q0);
                }
                level += 1;
                // ratio^γ → ratio^(γ/2): one square root per halving, no powf.
                Zip::from(&mut self.cand)
                    .and(&self.h)
                    .and(&mut self.num)
                    .for_each(|c, &h, r| {
                        *r = r.sqrt();
                        *c = (h * *r).max(FLOOR);
                    });
            }
        } else {
            std::mem::swap(&mut self.h, &mut self.cand);
            terms(
                self.x_norm2,
                &self.wtx,
                &self.wtw,
                self.h.view(),
                &self.triplets,
                &self.params,
                &mut self.scratch,
            )
        };
        self.iteration += 1;
        let obj = objective_of(r, q);
        if !obj.is_finite()
            || !self.h.iter().all(|v| v.is_finite())
            || !self.w.iter().all(|v| v.is_finite())
        {
            // Revert to the previous iterate (§10.4). In paper-literal mode cand holds the old H.
            if !self.params.safeguard {
                std::mem::swap(&mut self.h, &mut self.cand);
            }
            std::mem::swap(&mut self.w, &mut self.w_prev);
            self.refresh_w_products();
            return Err(ModelError::Diverged {
                iteration: self.iteration,
                what: "RPNMF produced a non-finite W, H or objective (contradictory triplets? \
                       turn the safeguard on)"
                    .into(),
            });
        }
        self.objective = obj.clone();
        Ok(obj)
    }

    fn h(&self) -> ArrayView2<'_, f64> {
        self.h.view()
    }

    fn w(&self) -> Option<ArrayView2<'_, f64>> {
        Some(self.w.view())
    }

    fn objective(&self) -> Objective {
        self.objective.clone()
    }

    /// A note when the safeguard kept H in some iterations (only W moved there), and when it
    /// stalled H for good: the triplets then probably contradict each other or the data.
    fn notes(&self) -> Vec<String> {
        let s = self.stats;
        // An odd rejection near the end is rounding at a stationary point, not news.
        let many = s.rejected >= 3 && s.rejected * 20 >= self.iteration;
        if !many && s.consecutive_rejected < STALL_STEPS {
            return Vec::new();
        }
        let mut note = format!(
            "safeguard kept H unchanged in {} of {} iterations (every step H ⊙ ratio^γ down to \
             γ = 2^-{MAX_HALVINGS} raised the objective; damped steps taken in {} more)",
            s.rejected, self.iteration, s.damped
        );
        if s.consecutive_rejected >= STALL_STEPS {
            note.push_str(&format!(
                "; H has not moved for the last {} iterations: it is stationary for this W, \
                 or the triplets contradict each other or the data (check them, or lower α)",
                s.consecutive_rejected
            ));
        }
        vec![note]
    }

    /// Nothing by default (MODELS.md §4.5 step 4). With `normalize_w = 1`: unit-L2 W columns,
    /// H rows scaled by the old norms (`ν_a = max(‖w_:a‖, 1e-15)`, §3.1), for k-means only;
    /// the reported objective stays that of the last iterate.
    fn finish(&mut self) {
        if !self.params.normalize_w {
            return;
        }
        for (a, mut col) in self.w.columns_mut().into_iter().enumerate() {
            let nu = col.dot(&col).sqrt().max(1e-15);
            col /= nu;
            self.h.row_mut(a).mapv_inplace(|v| v * nu);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::build;
    use ndarray::array;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn dataset(x: Array2<f64>) -> Arc<Dataset> {
        Arc::new(Dataset::from_parts(x, None, vec![], "test"))
    }

    /// Three clusters of 20 samples in 12-D, unit-L2 columns; labels = cluster.
    fn clusters(seed: u64) -> (Arc<Dataset>, Vec<usize>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = 60;
        let mut x = Array2::from_shape_fn((12, n), |(r, c)| {
            let centre = if r / 4 == c % 3 { 1.0 } else { 0.0 };
            centre + 0.3 * rng.r#gen::<f64>()
        });
        for mut col in x.columns_mut() {
            let norm = col.dot(&col).sqrt();
            col /= norm;
        }
        (dataset(x), (0..n).map(|c| c % 3).collect())
    }

    /// Label-consistent triplets: j from i's class, q from another.
    fn label_triplets(y: &[usize], count: usize, seed: u64) -> Vec<Triplet> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = y.len();
        let mut out = std::collections::BTreeSet::new();
        while out.len() < count {
            let (i, j, q) = (
                rng.gen_range(0..n),
                rng.gen_range(0..n),
                rng.gen_range(0..n),
            );
            if i != j && y[i] == y[j] && y[q] != y[i] {
                out.insert(Triplet::new(i, j, q));
            }
        }
        out.into_iter().collect()
    }

    fn spec(k: usize, seed: u64, params: &[(&str, f64)]) -> ModelSpec {
        let mut s = ModelSpec::new(ModelKind::Rpnmf, k, seed);
        for (n, v) in params {
            s.params.insert((*n).into(), *v);
        }
        s
    }

    fn sq(h: ArrayView2<'_, f64>, a: usize, b: usize) -> f64 {
        h.rows().into_iter().map(|r| (r[a] - r[b]).powi(2)).sum()
    }

    /// MODELS.md §4.4: `2(WᵀWH + αH·Mpos) − 2(WᵀX + αH·Mneg)` is the gradient of F in H.
    #[test]
    fn full_gradient_matches_finite_differences() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let x = Array2::from_shape_simple_fn((5, 6), || rng.r#gen::<f64>());
        let w = Array2::from_shape_simple_fn((5, 3), || 0.1 + rng.r#gen::<f64>());
        let h = Array2::from_shape_simple_fn((3, 6), || 0.1 + rng.r#gen::<f64>());
        let ts = [
            Triplet::new(0, 1, 2),
            Triplet::new(1, 0, 3),
            Triplet::new(2, 3, 0),
            Triplet::new(5, 0, 4),
        ];
        let (alpha, delta) = (0.8, 0.2);
        let f = |h: &Array2<f64>| {
            let r = &x - &w.dot(h);
            let mut t = Vec::new();
            margins(h.view(), &ts, delta, &mut t);
            r.mapv(|v| v * v).sum() + ranking_loss(alpha, &t)
        };
        let mut t = Vec::new();
        margins(h.view(), &ts, delta, &mut t);
        let mut roles = RoleMatrices::new(6, &ts);
        roles.fill(&t);
        let plus = w.t().dot(&w).dot(&h) + roles.mpos.left_mul(h.view()) * alpha;
        let minus = w.t().dot(&x) + roles.mneg.left_mul(h.view()) * alpha;
        let g = (plus - minus) * 2.0;
        let eps = 1e-6;
        let mut fd = Array2::<f64>::zeros(h.dim());
        for idx in ndarray::indices(h.dim()) {
            let (mut hp, mut hm) = (h.clone(), h.clone());
            hp[idx] += eps;
            hm[idx] -= eps;
            fd[idx] = (f(&hp) - f(&hm)) / (2.0 * eps);
        }
        let rel = (&g - &fd).mapv(|v| v * v).sum().sqrt() / g.mapv(|v| v * v).sum().sqrt();
        assert!(rel < 1e-6, "relative error {rel}");
    }

    /// MODELS.md §9.2, Proposition 1: NMF's H breaks a triplet that holds in X; RPNMF's keeps it.
    #[test]
    fn proposition_1_counterexample() {
        let x = array![
            [1.0, 1.0, 0.9, 1.0],
            [1.0, 1.0, 1.0, 3.0],
            [1.0, 1.0, 1.0, 1.0],
            [1.0, 1.0, 1.0, 4.0],
            [1.0, 1.0, 1.0, 1.0]
        ];
        let w = array![
            [0.2661, 1.5532, 0.4821],
            [0.9419, 0.8432, 1.3544],
            [0.3476, 1.6137, 0.3875],
            [1.0476, 0.4657, 2.0592],
            [0.2785, 1.6166, 0.4675]
        ];
        let h = array![
            [0.4413, 0.0642, 0.3550, 1.4064],
            [0.5042, 0.5211, 0.4858, 0.0233],
            [0.1377, 0.3449, 0.1934, 1.2220]
        ];
        let (i, j, q) = (0, 1, 2);
        assert!(sq(x.view(), i, j) < sq(x.view(), i, q));
        assert!((sq(h.view(), i, j) - 0.1854).abs() < 1e-3);
        assert!((sq(h.view(), i, q) - 0.0109).abs() < 1e-3);
        assert!(((&x - &w.dot(&h)).mapv(|v| v * v).sum().sqrt() - 0.0863).abs() < 1e-3);

        // Plain NMF (Lee–Seung MU, H then W) from this point keeps violating the triplet.
        let (mut wn, mut hn) = (w.clone(), h.clone());
        for _ in 0..500 {
            let num = wn.t().dot(&x);
            let den = wn.t().dot(&wn).dot(&hn);
            Zip::from(&mut hn)
                .and(&num)
                .and(&den)
                .for_each(|h, &a, &b| *h *= a / b.max(EPS_DIV));
            let num = x.dot(&hn.t());
            let den = wn.dot(&hn.dot(&hn.t()));
            Zip::from(&mut wn)
                .and(&num)
                .and(&den)
                .for_each(|w, &a, &b| *w *= a / b.max(EPS_DIV));
        }
        assert!(
            sq(hn.view(), i, j) > sq(hn.view(), i, q),
            "NMF's H violates the triplet"
        );

        // RPNMF from the same point with the triplet (i, j, q) keeps it.
        let params = RpnmfParams {
            alpha: 0.1,
            delta: 0.1,
            ..RpnmfParams::default()
        };
        let mut m = Rpnmf::from_factors(dataset(x.clone()), params, &[Triplet::new(i, j, q)], w, h)
            .unwrap();
        for _ in 0..500 {
            m.step().unwrap();
        }
        let hr = m.h();
        assert!(
            sq(hr, i, j) < sq(hr, i, q),
            "RPNMF keeps it: {} vs {}",
            sq(hr, i, j),
            sq(hr, i, q)
        );
        let recon = m.objective().terms[0].value;
        assert!(recon.sqrt() < 0.2, "still a good fit: {}", recon.sqrt());
    }

    #[test]
    fn guarded_objective_never_increases_with_consistent_triplets() {
        let (data, y) = clusters(1);
        let ts = label_triplets(&y, 180, 2);
        for alpha in [0.1, 1.0] {
            let side = SideInfo {
                triplets: ts.clone(),
                labels: vec![],
            };
            let mut m = Rpnmf::new(
                data.clone(),
                &spec(3, 5, &[("alpha", alpha), ("delta", 1.0)]),
                &side,
            )
            .unwrap();
            let mut prev = m.objective().total;
            for it in 0..200 {
                let o = m.step().unwrap();
                assert!(
                    o.total <= prev * (1.0 + 1e-12),
                    "alpha {alpha}, iteration {it}: {} > {prev}",
                    o.total
                );
                assert_eq!(
                    o.terms.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
                    ["reconstruction", "ranking"]
                );
                assert!(
                    (o.terms[0].value + o.terms[1].value - o.total).abs()
                        < 1e-12 * o.total.max(1.0)
                );
                prev = o.total;
            }
        }
    }

    #[test]
    fn paper_literal_rule_also_descends_on_consistent_triplets() {
        let (data, y) = clusters(4);
        let side = SideInfo {
            triplets: label_triplets(&y, 120, 3),
            labels: vec![],
        };
        let mut m = Rpnmf::new(
            data,
            &spec(3, 1, &[("safeguard", 0.0), ("delta", 1.0)]),
            &side,
        )
        .unwrap();
        let first = m.objective().total;
        for _ in 0..100 {
            m.step().unwrap();
        }
        assert!(m.objective().total < first);
        assert_eq!(m.safeguard_stats(), SafeguardStats::default());
    }

    /// Random unit-norm data (12×60) and 180 random triplets.
    fn random_case() -> (Arc<Dataset>, Vec<Triplet>) {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let n = 60;
        let mut x = Array2::from_shape_fn((12, n), |_| rng.r#gen::<f64>());
        for mut col in x.columns_mut() {
            let norm = col.dot(&col).sqrt();
            col /= norm;
        }
        let mut set = std::collections::BTreeSet::new();
        while set.len() < 180 {
            let t = Triplet::new(
                rng.gen_range(0..n),
                rng.gen_range(0..n),
                rng.gen_range(0..n),
            );
            if t.i != t.j && t.i != t.q && t.j != t.q {
                set.insert(t);
            }
        }
        (dataset(x), set.into_iter().collect())
    }

    /// MODELS.md §10.4: a non-finite iterate is reverted and reported as divergence.
    #[test]
    fn paper_literal_divergence_is_reported_and_reverted() {
        let (data, ts) = random_case();
        let side = SideInfo {
            triplets: ts,
            labels: vec![],
        };
        let s = spec(3, 1, &[("alpha", 1.0), ("delta", 10.0), ("safeguard", 0.0)]);
        let mut lit = Rpnmf::new(data.clone(), &s, &side).unwrap();
        let err = (0..300).find_map(|_| lit.step().err()).expect("diverges");
        assert!(matches!(err, ModelError::Diverged { .. }), "{err}");
        assert!(err.to_string().contains("safeguard"), "{err}");
        assert!(
            lit.h()
                .iter()
                .chain(lit.w().unwrap().iter())
                .all(|v| v.is_finite())
        );
        // The guarded run on the same input is fine.
        let mut m =
            Rpnmf::new(data, &spec(3, 1, &[("alpha", 1.0), ("delta", 10.0)]), &side).unwrap();
        for _ in 0..300 {
            assert!(m.step().unwrap().is_finite());
        }
    }

    /// Random triplets (many contradict X and each other) plus the reversal (i, q, j) of half of
    /// them: the plain rule's objective jumps up (MODELS.md §4.5 d); the guarded one stays
    /// finite and monotone, because the safeguard damps the steps that would raise F.
    #[test]
    fn contradictory_triplets_do_not_blow_up() {
        let (data, base) = random_case();
        let mut ts = base.clone();
        ts.extend(base.iter().take(90).map(|t| Triplet::new(t.i, t.q, t.j)));
        assert!(
            ts.contains(&base[0]) && ts.contains(&Triplet::new(base[0].i, base[0].q, base[0].j))
        );
        let side = SideInfo {
            triplets: ts,
            labels: vec![],
        };
        let params = [("alpha", 1.0), ("delta", 10.0)];

        let mut m = Rpnmf::new(data.clone(), &spec(3, 1, &params), &side).unwrap();
        let mut prev = m.objective().total;
        for _ in 0..300 {
            let o = m.step().unwrap();
            assert!(o.total <= prev * (1.0 + 1e-12), "{} > {prev}", o.total);
            prev = o.total;
        }
        assert!(m.h().iter().all(|v| v.is_finite()));
        let stats = m.safeguard_stats();
        assert!(
            stats.damped > 50,
            "the full step often raises F here: {stats:?}"
        );
        // Damping by more than the one square root of MODELS.md §4.5 d was needed at times.
        assert!(stats.deepest > 1, "{stats:?}");

        // Paper-literal: the objective rises (or the run reports divergence); never a panic,
        // and H stays finite (a non-finite iterate is reverted).
        let mut lit = Rpnmf::new(
            data,
            &spec(3, 1, &[params[0], params[1], ("safeguard", 0.0)]),
            &side,
        )
        .unwrap();
        let mut prev = lit.objective().total;
        let mut worst_rise = 0.0f64;
        for _ in 0..300 {
            match lit.step() {
                Ok(o) => {
                    worst_rise = worst_rise.max((o.total - prev) / prev);
                    prev = o.total;
                }
                Err(ModelError::Diverged { .. }) => {
                    worst_rise = f64::INFINITY;
                    break;
                }
                Err(e) => panic!("unexpected {e}"),
            }
        }
        assert!(
            worst_rise > 1.0,
            "the plain rule more than doubled F at some step: {worst_rise}"
        );
        assert!(lit.h().iter().all(|v| v.is_finite()));
    }

    /// The notes speak up only when the safeguard kept H, and call a long run of rejections a
    /// stall (the user-facing message of MODELS.md §4.5 d).
    #[test]
    fn notes_report_rejections_and_stalls() {
        let (data, ts) = random_case();
        let side = SideInfo {
            triplets: ts,
            labels: vec![],
        };
        let mut m = Rpnmf::new(data, &spec(3, 1, &[]), &side).unwrap();
        for _ in 0..20 {
            m.step().unwrap();
        }
        assert!(m.notes().is_empty(), "{:?}", m.notes());
        m.stats.rejected = 2;
        m.stats.consecutive_rejected = 1;
        assert!(
            m.notes().is_empty(),
            "two rejections in 20 iterations are rounding"
        );
        m.stats.rejected = 3;
        m.stats.consecutive_rejected = 1;
        let notes = m.notes();
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("3 of 20 iterations"), "{}", notes[0]);
        assert!(!notes[0].contains("not moved"), "{}", notes[0]);
        m.stats.consecutive_rejected = STALL_STEPS;
        assert!(m.notes()[0].contains("not moved for the last 10 iterations"));
    }

    #[test]
    fn build_needs_triplets_and_is_deterministic() {
        let (data, y) = clusters(3);
        let e = build(&spec(3, 0, &[]), data.clone(), &SideInfo::default())
            .err()
            .unwrap();
        assert!(matches!(e, ModelError::MissingSideInfo { .. }), "{e}");
        assert!(ModelKind::Rpnmf.needs_triplets());
        assert_eq!(ModelKind::from_name("rpnmf"), Some(ModelKind::Rpnmf));
        let side = SideInfo {
            triplets: label_triplets(&y, 30, 1),
            labels: vec![],
        };
        let bad = SideInfo {
            triplets: vec![Triplet::new(0, 1, 60)],
            labels: vec![],
        };
        assert!(matches!(
            build(&spec(3, 0, &[]), data.clone(), &bad).err().unwrap(),
            ModelError::InvalidParam { .. }
        ));
        let run = |seed| {
            let mut m = build(&spec(3, seed, &[]), data.clone(), &side).unwrap();
            for _ in 0..20 {
                m.step().unwrap();
            }
            m.finish();
            (m.h().to_owned(), m.w().unwrap().to_owned())
        };
        assert_eq!(run(9), run(9));
        assert_ne!(run(9).0, run(10).0);
        // Same start as NMF on the same seed (MODELS.md §4.5 step 2).
        let m = Rpnmf::new(data.clone(), &spec(3, 9, &[]), &side).unwrap();
        let (w0, h0) = random_wh(12, 60, 3, data.x.mean().unwrap(), 9);
        assert_eq!(m.w().unwrap(), w0.view());
        assert_eq!(m.h(), h0.view());
        // No normalisation by default; optional unit-norm W keeps WH.
        let mut m = Rpnmf::new(data.clone(), &spec(3, 9, &[]), &side).unwrap();
        m.step().unwrap();
        let (w1, h1) = (m.w().unwrap().to_owned(), m.h().to_owned());
        m.finish();
        assert_eq!((m.w().unwrap(), m.h()), (w1.view(), h1.view()));
        let mut m = Rpnmf::new(data, &spec(3, 9, &[("normalize_w", 1.0)]), &side).unwrap();
        m.step().unwrap();
        let wh = m.w().unwrap().dot(&m.h());
        m.finish();
        let w = m.w().unwrap();
        assert!(
            w.columns()
                .into_iter()
                .all(|c| (c.dot(&c) - 1.0).abs() < 1e-12)
        );
        assert!((w.dot(&m.h()) - wh).iter().all(|v| v.abs() < 1e-12));
    }
}
