//! The RPNMF iteration of docs/models.md §4.4–§4.5 (see the module above for the math): the W
//! step, the combined H step as a candidate, the safeguard, and what an H keeps of its parts.

use super::params::RpnmfParams;
use super::triplets::{RoleMatrices, margins_t, sigmoids_and_loss};
use super::KIND;
use crate::engine::models::mu::{FLOOR, MuWork, blocked_pass_over_x, checked_start};
use crate::engine::constraints::{SideInfo, Triplet};
use crate::engine::data::Dataset;
use crate::engine::linalg::gram_of_rows;
use crate::engine::linalg::thin::fixed;
use crate::engine::models::{
    EPS_DIV, Model, ModelError, ModelKind, ModelSpec, Objective, Term,
};
use faer::traits::pulp;
use ndarray::{Array2, ArrayView2};
use std::sync::Arc;


/// What the last H step did (docs/models.md §4.5 step d).
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
/// docs/models.md §4.5 d names one retry, γ = 1/2. One retry is not enough: on `orl_32x32` with the
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
    /// Evaluations of F at a candidate H': one per step when the full step is taken, one more
    /// per damped level tried. Each costs a candidate pass, HHᵀ and the triplet pass.
    pub evaluations: usize,
    /// Rejections in a row, up to the last step.
    pub consecutive_rejected: usize,
    pub last: HStep,
}

/// Ranking Preserving NMF (docs/models.md §4).
pub struct Rpnmf {
    params: RpnmfParams,
    triplets: Vec<Triplet>,
    roles: RoleMatrices,
    /// X, W and the MU products (WᵀX, WᵀW, WᵀW H, XHᵀ, W HHᵀ) with the blocked pass's
    /// workspace: the kit's [`MuWork`], as NMF's.
    work: MuWork,
    /// The current H and what F and the next step need of it.
    cur: Iterate,
    // Workspaces.
    cand: Iterate,       // the candidate H' and its parts
    neg: Array2<f64>,    // k×n  H·Mneg
    pos: Array2<f64>,    // k×n  H·Mpos
    ratio: Array2<f64>,  // k×n  ratio^γ of the damped steps (unused when the full step is taken)
    w_prev: Array2<f64>, // m×k  W before the step (restored on divergence)
    /// `xht` holds XHᵀ of the current H (the single pass left it there), so the W step skips
    /// its product.
    xht_of_cur: bool,
    /// Large X: the H step walks X once in column blocks ([`Rpnmf::blocked_full_candidate`]).
    blocked: bool,
    iteration: usize,
    objective: Objective,
    stats: SafeguardStats,
}

/// One H with the parts of F and of the next step that depend on H alone, computed once when
/// H is set and kept while H stays.
///
/// F(W, H) at the start of a step needs HHᵀ, ⟨WᵀX, H⟩ and the ranking loss of the current H
/// (docs/models.md §4.5 d); the W step needs HHᵀ, the H step σ(t_τ) and Hᵀ. All but ⟨WᵀX, H⟩ are
/// functions of H alone, and the safeguard computed them for the candidate it accepted, so
/// the accepted candidate's parts become the current ones by a swap: in the common
/// full-step-accepted case a step evaluates the triplets once and HHᵀ once (NMF computes HHᵀ
/// too), where a from-scratch F evaluated both twice.
struct Iterate {
    h: Array2<f64>,   // k×n
    h_t: Array2<f64>, // n×k  Hᵀ: one contiguous row per sample, for the margins and H·M
    hht: Array2<f64>, // k×k  HHᵀ: F's Gram term and the next W step's denominator
    t: Vec<f64>,      // t_τ(H) per triplet
    sig: Vec<f64>,    // σ(t_τ(H)) per triplet: the values of Mneg and Mpos (docs/models.md §4.4)
    ranking: f64,     // α Σ_τ sp(t_τ(H))
    finite: bool,     // every entry of H is finite
}

impl Iterate {
    fn new(h: Array2<f64>, triplets: &[Triplet], p: &RpnmfParams) -> Self {
        let (k, n) = h.dim();
        let mut it = Self {
            h,
            h_t: Array2::zeros((n, k)),
            hht: Array2::zeros((k, k)),
            t: Vec::with_capacity(triplets.len()),
            sig: Vec::with_capacity(triplets.len()),
            ranking: 0.0,
            finite: true,
        };
        it.refresh(triplets, p);
        it
    }

    /// All parts from `h` alone (at the start, and after H was changed in place).
    fn refresh(&mut self, triplets: &[Triplet], p: &RpnmfParams) {
        self.h_t.assign(&self.h.t());
        self.finite = self.h.iter().all(|v| v.is_finite());
        self.evaluate(triplets, p);
    }

    /// HHᵀ, the margins, σ and the ranking loss, from `h` and its transpose `h_t` (which the
    /// caller has filled). O(nk² + |T|k).
    fn evaluate(&mut self, triplets: &[Triplet], p: &RpnmfParams) {
        gram_of_rows(&mut self.hht.view_mut(), self.h.view());
        margins_t(self.h_t.view(), triplets, p.delta, &mut self.t);
        self.ranking = sigmoids_and_loss(&self.t, p.alpha, &mut self.sig);
    }
}

/// `Σ a_i b_i` in four partial sums by index mod 4, added in a fixed order (repeatable bit for
/// bit): the Gram term `⟨WᵀW, HHᵀ⟩` of F (k×k).
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut s = [0.0f64; 4];
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        s[i % 4] += x * y;
    }
    (s[0] + s[1]) + (s[2] + s[3])
}

/// Samples per block of [`candidate_pass`]: the block's rows of the candidate's Hᵀ and its row
/// segments of the k×n arrays stay in L1 (k = 20: 5 KiB of each array).
const BLOCK: usize = 32;

/// `cand ← max(H ⊙ r, FLOOR)` and `cand_t ← candᵀ` (`cand_t` n×k, the others k×n, all
/// row-major slices). `ratio_seg(a, p0..p1, r)` writes into `r` the ratios of entries
/// (a, p0..p1). Returns `(⟨WᵀX, cand⟩, ⟨WᵀX, H⟩, cand finite)`.
///
/// Blocks of [`BLOCK`] samples, row by row inside a block: the k×n arrays (the ratio's parts
/// too) are read in contiguous segments, so the ratio and the candidate run as vectors, and
/// the block of `cand_t` stays in L1 while it is written with stride k (docs/performance.md,
/// "RPNMF's triplet kernels (`models/rpnmf/triplets.rs`, `models/rpnmf/algorithm.rs`)").
///
/// Both inner products sum in four partial sums by sample index mod 4, over the same order, so
/// that a candidate equal to H gives exactly H's value: the safeguard sees the exact tie a
/// from-scratch evaluation saw (docs/models.md §4.5 d).
fn candidate_pass(
    (k, n): (usize, usize),
    h: &[f64],
    wtx: &[f64],
    cand: &mut [f64],
    cand_t: &mut [f64],
    ratio_seg: impl FnMut(usize, std::ops::Range<usize>, &mut [f64]),
) -> (f64, f64, bool) {
    let mut acc = CrossSums::default();
    // In pulp's context (AVX-512 where present): no fused multiply-adds are formed, so the
    // same bits as a baseline build.
    pulp::Arch::new().dispatch(CandidateJob {
        kn: (k, n),
        h,
        wtx,
        cand,
        cand_t,
        acc: &mut acc,
        ratio_seg,
    });
    acc.totals()
}

/// [`candidate_columns`] over all samples as a pulp job (a struct with an always-inlined body:
/// a closure would be compiled without the wide instructions).
struct CandidateJob<'a, F> {
    kn: (usize, usize),
    h: &'a [f64],
    wtx: &'a [f64],
    cand: &'a mut [f64],
    cand_t: &'a mut [f64],
    acc: &'a mut CrossSums,
    ratio_seg: F,
}

impl<F: FnMut(usize, std::ops::Range<usize>, &mut [f64])> pulp::WithSimd for CandidateJob<'_, F> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let n = self.kn.1;
        candidate_columns(
            self.kn,
            0..n,
            self.h,
            self.wtx,
            self.cand,
            self.cand_t,
            self.acc,
            self.ratio_seg,
        );
    }
}

/// The running sums of [`candidate_columns`]: ⟨WᵀX, H'⟩ and ⟨WᵀX, H⟩ in four partial sums
/// each (by sample index mod 4), and whether H' is finite so far.
#[derive(Clone, Copy)]
struct CrossSums {
    cand: [f64; 4],
    h: [f64; 4],
    finite: bool,
}

impl Default for CrossSums {
    fn default() -> Self {
        Self {
            cand: [0.0; 4],
            h: [0.0; 4],
            finite: true,
        }
    }
}

impl CrossSums {
    /// `(⟨WᵀX, H'⟩, ⟨WᵀX, H⟩, H' finite)`, the partial sums added in a fixed order.
    fn totals(&self) -> (f64, f64, bool) {
        let total = |s: [f64; 4]| (s[0] + s[1]) + (s[2] + s[3]);
        (total(self.cand), total(self.h), self.finite)
    }
}

/// [`candidate_pass`] on the samples `cols` only, adding into `acc`. With `cols.start` a
/// multiple of [`BLOCK`], the blocks, the partial sums and their order are those of the whole
/// pass, so consecutive ranges give the whole pass's sums bit for bit.
#[expect(
    clippy::too_many_arguments,
    reason = "the slices of candidate_pass plus the range and its sums"
)]
#[inline(always)]
fn candidate_columns(
    (k, n): (usize, usize),
    cols: std::ops::Range<usize>,
    h: &[f64],
    wtx: &[f64],
    cand: &mut [f64],
    cand_t: &mut [f64],
    acc: &mut CrossSums,
    mut ratio_seg: impl FnMut(usize, std::ops::Range<usize>, &mut [f64]),
) {
    let mut rbuf = [0.0f64; BLOCK];
    let (mut cross_c, mut cross_h, finite) = (acc.cand, acc.h, acc.finite);
    let mut top = [0.0f64; 4];
    for p0 in cols.clone().step_by(BLOCK) {
        let p1 = (p0 + BLOCK).min(cols.end);
        let r = &mut rbuf[..p1 - p0];
        let ct = &mut cand_t[p0 * k..p1 * k];
        let len = p1 - p0;
        for a in 0..k {
            ratio_seg(a, p0..p1, r);
            let seg = a * n + p0..a * n + p1;
            let (hs, ws, cs) = (&h[seg.clone()], &wtx[seg.clone()], &mut cand[seg]);
            // Four samples at a time, partial sum l taking sample j = 4q + l: constant lanes,
            // so that the partial sums stay in registers (and run as one vector). No
            // strided store in this loop, and selects rather than `f64::max`, so that it
            // vectorizes: `p > FLOOR ? p : FLOOR` is `p.max(FLOOR)` for every p, NaN included
            // (both give FLOOR), so a candidate entry is never NaN and it is finite iff the
            // running maximum stays below +∞.
            let full = len / 4 * 4;
            for q in (0..full).step_by(4) {
                // Arrays of four, which the compiler makes one vector per operation.
                let (hv, w, rv): (&[f64; 4], &[f64; 4], &[f64; 4]) =
                    (fixed(&hs[q..]), fixed(&ws[q..]), fixed(&r[q..]));
                let mut cv = [0.0f64; 4];
                for l in 0..4 {
                    let p = hv[l] * rv[l];
                    cv[l] = if p > FLOOR { p } else { FLOOR };
                    cross_c[l] += w[l] * cv[l];
                    cross_h[l] += w[l] * hv[l];
                    top[l] = if cv[l] > top[l] { cv[l] } else { top[l] };
                }
                cs[q..q + 4].copy_from_slice(&cv);
            }
            // The rest of a short last block: sample j in partial sum j − full.
            for j in full..len {
                let (l, hv, w) = (j - full, hs[j], ws[j]);
                let p = hv * r[j];
                let cv = if p > FLOOR { p } else { FLOOR };
                cs[j] = cv;
                cross_c[l] += w * cv;
                cross_h[l] += w * hv;
                top[l] = if cv > top[l] { cv } else { top[l] };
            }
            for (j, &cv) in cs.iter().enumerate() {
                ct[j * k + a] = cv;
            }
        }
    }
    let finite = finite && top.iter().all(|&t| t < f64::INFINITY);
    *acc = CrossSums {
        cand: cross_c,
        h: cross_h,
        finite,
    };
}

/// What the ratio of the combined H step is made of (all k×n, row-major).
struct RatioParts<'a> {
    alpha: f64,
    kn: (usize, usize),
    wtx: &'a [f64],
    wtwh: &'a [f64],
    neg: &'a [f64],
    pos: &'a [f64],
}

impl<'a> RatioParts<'a> {
    fn new(
        p: &RpnmfParams,
        wtx: &'a Array2<f64>,
        wtwh: &'a Array2<f64>,
        neg: &'a Array2<f64>,
        pos: &'a Array2<f64>,
    ) -> Self {
        Self {
            alpha: p.alpha,
            kn: wtx.dim(),
            wtx: slice(wtx),
            wtwh: slice(wtwh),
            neg: slice(neg),
            pos: slice(pos),
        }
    }

    /// `r ← (WᵀX + αH·Mneg) ⊘ max(WᵀWH + αH·Mpos, ε)` at entries (a, ps) (docs/models.md §4.4),
    /// each as the earlier separate passes computed it, so bit for bit the same.
    #[inline(always)]
    fn segment(&self, a: usize, ps: std::ops::Range<usize>, r: &mut [f64]) {
        let n = self.kn.1;
        let seg = a * n + ps.start..a * n + ps.end;
        let parts = (self.wtx[seg.clone()].iter().zip(&self.wtwh[seg.clone()]))
            .zip(self.neg[seg.clone()].iter().zip(&self.pos[seg]));
        for (rv, ((&x, &g), (&ng, &ps))) in r.iter_mut().zip(parts) {
            let num = x + self.alpha * ng;
            let den = self.alpha * ps + g;
            *rv = num / den.max(EPS_DIV);
        }
    }
}

/// The reconstruction term `‖X‖² − 2⟨WᵀX, H⟩ + ⟨WᵀW, HHᵀ⟩` (DESIGN.md §4), clamped at 0.
fn reconstruction(x_norm2: f64, cross: f64, gram: f64) -> f64 {
    (x_norm2 - 2.0 * cross + gram).max(0.0)
}

fn slice(a: &Array2<f64>) -> &[f64] {
    a.as_slice().unwrap_or(&[])
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
    /// Seeded start (the NMF init, docs/models.md §4.5 step 2) from a spec, checked here.
    /// Needs at least one triplet.
    pub fn new(data: Arc<Dataset>, spec: &ModelSpec, side: &SideInfo) -> Result<Self, ModelError> {
        let params = RpnmfParams::from_checked(&spec.validate(data.m(), data.n())?)?;
        Self::start(data, spec, params, side)
    }

    /// Seeded start with parameters already checked (the registry's build path).
    pub(super) fn start(
        data: Arc<Dataset>,
        spec: &ModelSpec,
        params: RpnmfParams,
        side: &SideInfo,
    ) -> Result<Self, ModelError> {
        let (w, h) = checked_start(&data, spec)?;
        Self::with_factors(data, params, &side.triplets, w, h)
    }

    /// Start from given factors (tests), clamped to ≥ 1e-16 (docs/models.md §10.1).
    pub fn from_factors(
        data: Arc<Dataset>,
        params: RpnmfParams,
        triplets: &[Triplet],
        w: Array2<f64>,
        h: Array2<f64>,
    ) -> Result<Self, ModelError> {
        let (w, h) = (w.mapv(|v| v.max(1e-16)), h.mapv(|v| v.max(1e-16)));
        Self::with_factors(data, params, triplets, w, h)
    }

    /// Start from these factors exactly (the seeded draw or a warm start; the first update's
    /// floor lifts any zero entry, docs/models.md §10.1).
    fn with_factors(
        data: Arc<Dataset>,
        params: RpnmfParams,
        triplets: &[Triplet],
        w: Array2<f64>,
        h: Array2<f64>,
    ) -> Result<Self, ModelError> {
        let n = data.n();
        if triplets.is_empty() {
            // `build` checks this for every front end; direct callers (tests, warm starts) too.
            KIND.check_side(&SideInfo::default())?;
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
        let (m, k) = (data.m(), w.ncols());
        let mut work = MuWork::new(data, w);
        let blocked = !work.reference && work.data.x.as_slice().is_some();
        // Blocks of the single pass start at multiples of BLOCK (the candidate pass's blocks).
        work.x_block = (work.x_block / BLOCK).max(1) * BLOCK;
        let mut s = Self {
            roles: RoleMatrices::new(n, triplets).ok_or_else(|| ModelError::BadData {
                why: format!(
                    "{} triplets over n = {n} samples: too many for RPNMF's 32-bit role indices",
                    triplets.len()
                ),
            })?,
            cur: Iterate::new(h.clone(), triplets, &params),
            cand: Iterate::new(h, triplets, &params),
            triplets: triplets.to_vec(),
            params,
            work,
            neg: Array2::zeros((k, n)),
            pos: Array2::zeros((k, n)),
            ratio: Array2::zeros((k, n)),
            w_prev: Array2::zeros((m, k)),
            xht_of_cur: false,
            blocked,
            iteration: 0,
            objective: objective_of(0.0, 0.0),
            stats: SafeguardStats::default(),
        };
        s.refresh_w_products();
        // ⟨WᵀX, H⟩ summed as the step sums it (a candidate pass with ratio 1 leaves H as is).
        let (_, cross, _) = candidate_pass(
            s.cur.h.dim(),
            slice(&s.cur.h),
            slice(&s.work.wtx),
            s.cand.h.as_slice_mut().unwrap_or(&mut []),
            s.cand.h_t.as_slice_mut().unwrap_or(&mut []),
            |_, _, r| r.fill(1.0),
        );
        s.objective = objective_of(s.current_recon(cross), s.cur.ranking);
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
        self.work.wtx_whole();
        self.work.refresh_wtw();
    }

    /// `W ← W ⊙ (XHᵀ) ⊘ max(W(HHᵀ), ε)` (docs/models.md §4.4, W step), with the kept HHᵀ of
    /// the current H. XHᵀ comes from the last single pass when that pass made the current H.
    fn w_step(&mut self) {
        if !self.xht_of_cur {
            self.work.xht_whole(&self.cur.h);
            self.xht_of_cur = true;
        }
        // NMF's rule, with its floor.
        self.work.w_rule(&self.cur.hht);
    }

    /// The products the H step needs besides WᵀX (docs/models.md §4.4): `H·Mneg` and `H·Mpos`
    /// (k×n) from the kept σ(t_τ(H)) (Jacobi: σ at the H of the start of the step), gathered
    /// from the kept Hᵀ, and WᵀW H.
    fn h_step_products(&mut self) {
        self.roles.products_from_sigmoids(
            &self.cur.sig,
            self.cur.h_t.view(),
            self.neg.as_slice_mut().unwrap_or(&mut []),
            self.pos.as_slice_mut().unwrap_or(&mut []),
        );
        self.work.wtwh_of(&self.cur.h);
    }

    /// The full candidate `H' = max(H ⊙ ratio, FLOOR)` (docs/models.md §4.4), in one pass that also
    /// gives H'ᵀ. The ratio is not stored: a damped step recomputes it (the full step is
    /// taken in the common case, and one k×n write less keeps more of the step in cache).
    /// Returns `(⟨WᵀX, H'⟩, ⟨WᵀX, H⟩)`.
    fn full_candidate(&mut self) -> (f64, f64) {
        let parts = RatioParts::new(&self.params, &self.work.wtx, &self.work.wtwh, &self.neg, &self.pos);
        let (cross_c, cross_h, finite) = candidate_pass(
            parts.kn,
            slice(&self.cur.h),
            parts.wtx,
            self.cand.h.as_slice_mut().unwrap_or(&mut []),
            self.cand.h_t.as_slice_mut().unwrap_or(&mut []),
            |a, ps, r| parts.segment(a, ps, r),
        );
        self.cand.finite = finite;
        (cross_c, cross_h)
    }

    /// [`Self::full_candidate`] with WᵀX formed on the way, for large X: one blocked pass over X
    /// ([`blocked_pass_over_x`], NMF's single pass), each block of columns B giving `(WᵀX)_B`,
    /// then the candidate columns `H'_B`, then `XH'ᵀ += X_B H'_Bᵀ` while `X_B` is in cache. If
    /// the full step is accepted, that XH'ᵀ is the next W step's XHᵀ, so a step reads X once
    /// instead of twice; otherwise the next W step computes XHᵀ again. WᵀX stays whole (k×n)
    /// for F and the damped steps. Blocks start at multiples of [`BLOCK`], so H', H'ᵀ and both
    /// inner products are bit for bit those of [`Self::full_candidate`] on the same WᵀX; only
    /// the GEMMs' summation order differs. Needs WᵀW, WᵀW H and the role products first.
    /// None (nothing done) when an array is not contiguous row-major.
    fn blocked_full_candidate(&mut self) -> Option<(f64, f64)> {
        let (m, n) = self.work.data.x.dim();
        let k = self.work.w.ncols();
        let x = self.work.data.x.as_slice()?;
        let w = self.work.w.as_slice()?;
        let h = self.cur.h.as_slice()?;
        let (wtwh, neg, pos) = (
            self.work.wtwh.as_slice()?,
            self.neg.as_slice()?,
            self.pos.as_slice()?,
        );
        let wtx = self.work.wtx.as_slice_mut()?;
        let cand = self.cand.h.as_slice_mut()?;
        let cand_t = self.cand.h_t.as_slice_mut()?;
        let xht = self.work.xht.as_slice_mut()?;
        self.xht_of_cur = false;
        let alpha = self.params.alpha;
        let mut acc = CrossSums::default();
        blocked_pass_over_x(
            x,
            (m, n, k),
            w,
            self.work.x_block,
            (wtx, cand, xht),
            &mut self.work.xht_acc,
            |wtx, cand, j0, len| {
                let parts = RatioParts {
                    alpha,
                    kn: (k, n),
                    wtx,
                    wtwh,
                    neg,
                    pos,
                };
                candidate_columns(
                    (k, n),
                    j0..j0 + len,
                    h,
                    wtx,
                    cand,
                    cand_t,
                    &mut acc,
                    |a, ps, r| parts.segment(a, ps, r),
                );
            },
        );
        let (cross_c, cross_h, finite) = acc.totals();
        self.cand.finite = finite;
        Some((cross_c, cross_h))
    }

    /// The damped candidate `H' = max(H ⊙ ratio^γ, FLOOR)`, γ = 2^−level (level ≥ 1, visited
    /// in order 1, 2, …): level 1 stores the ratio's square root in `ratio`, each further
    /// level takes the square root of the stored power in place (one square root per
    /// halving, no powf). Returns `⟨WᵀX, H'⟩`.
    fn damped_candidate(&mut self, level: u8) -> f64 {
        let parts = RatioParts::new(&self.params, &self.work.wtx, &self.work.wtwh, &self.neg, &self.pos);
        let n = parts.kn.1;
        let ratio = self.ratio.as_slice_mut().unwrap_or(&mut []);
        let (cross_c, _, finite) = candidate_pass(
            parts.kn,
            slice(&self.cur.h),
            parts.wtx,
            self.cand.h.as_slice_mut().unwrap_or(&mut []),
            self.cand.h_t.as_slice_mut().unwrap_or(&mut []),
            |a, ps, r| {
                let stored = &mut ratio[a * n + ps.start..a * n + ps.end];
                if level <= 1 {
                    parts.segment(a, ps, stored);
                }
                for (rv, rs) in r.iter_mut().zip(stored) {
                    *rs = rs.sqrt();
                    *rv = *rs;
                }
            },
        );
        self.cand.finite = finite;
        cross_c
    }

    /// The reconstruction term at the current H, for the current W: the Gram term from the
    /// kept HHᵀ, `cross` = ⟨WᵀX, H⟩ from the candidate pass. O(k²).
    fn current_recon(&self, cross: f64) -> f64 {
        reconstruction(
            self.work.x_norm2,
            cross,
            dot(slice(&self.work.wtw), slice(&self.cur.hht)),
        )
    }

    /// `(reconstruction, ranking)` of F(W, H') for the candidate whose ⟨WᵀX, H'⟩ is `cross`:
    /// HHᵀ and the triplet pass of H' (its parts, kept if it is accepted). O(nk² + |T|k).
    fn evaluate_candidate(&mut self, cross: f64) -> (f64, f64) {
        self.stats.evaluations += 1;
        self.cand.evaluate(&self.triplets, &self.params);
        let gram = dot(slice(&self.work.wtw), slice(&self.cand.hht));
        (reconstruction(self.work.x_norm2, cross, gram), self.cand.ranking)
    }

    /// Make the candidate the current H (its parts come along; XHᵀ only if the caller says so).
    fn accept(&mut self) {
        std::mem::swap(&mut self.cur, &mut self.cand);
        self.xht_of_cur = false;
    }
}

impl Model for Rpnmf {
    fn kind(&self) -> ModelKind {
        KIND
    }

    fn step(&mut self) -> Result<Objective, ModelError> {
        self.w_prev.assign(&self.work.w);
        // a. W step (with the kept HHᵀ of H), then the products of the new W.
        self.w_step();
        // b–c. σ at the current H is kept from the step that accepted it; Mneg, Mpos, then the
        // candidate H' = H ⊙ ratio of the combined update (docs/models.md §4.4). Large X: WᵀX and
        // XH'ᵀ in the candidate's single pass over X.
        let pass = if self.blocked {
            self.work.refresh_wtw();
            self.h_step_products();
            self.blocked_full_candidate()
        } else {
            None
        };
        // XH'ᵀ is in `xht` if the pass ran: it serves the next W step if H' is accepted.
        let xht_of_cand = pass.is_some();
        let (mut cross, cross_h) = match pass {
            Some(c) => c,
            None => {
                self.refresh_w_products();
                self.h_step_products();
                self.full_candidate()
            }
        };
        let (r, q) = if self.params.safeguard {
            // F(W, H) at the current H, from its kept parts and ⟨WᵀX, H⟩ of the pass.
            let (r0, q0) = (self.current_recon(cross_h), self.cur.ranking);
            let f0 = r0 + q0;
            // d. Safeguard: the full step, else the damped steps H ⊙ ratio^γ with
            // γ = 1/2, 1/4, …, 2^−MAX_HALVINGS, else keep H.
            let mut level = 0u8;
            loop {
                let (r1, q1) = self.evaluate_candidate(cross);
                if r1 + q1 <= f0 {
                    self.accept();
                    self.stats.consecutive_rejected = 0;
                    if level == 0 {
                        self.xht_of_cur = xht_of_cand;
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
                cross = self.damped_candidate(level);
            }
        } else {
            let rq = self.evaluate_candidate(cross);
            self.accept();
            self.xht_of_cur = xht_of_cand;
            rq
        };
        self.iteration += 1;
        let obj = objective_of(r, q);
        if !obj.is_finite() || !self.cur.finite || !self.work.w.iter().all(|v| v.is_finite()) {
            // Revert to the previous iterate (§10.4). In paper-literal mode cand holds the old H.
            if !self.params.safeguard {
                self.accept();
            }
            std::mem::swap(&mut self.work.w, &mut self.w_prev);
            self.xht_of_cur = false;
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
        self.cur.h.view()
    }

    fn w(&self) -> Option<ArrayView2<'_, f64>> {
        Some(self.work.w.view())
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

    /// With `normalize_w` (the default): unit-L2 W columns,
    /// H rows scaled by the old norms (`ν_a = max(‖w_:a‖, 1e-15)`, §3.1), for k-means only;
    /// the reported objective stays that of the last iterate. Off: nothing (docs/models.md
    /// §4.5 step 4).
    fn finish(&mut self) {
        if !self.params.normalize_w {
            return;
        }
        for (a, mut col) in self.work.w.columns_mut().into_iter().enumerate() {
            let nu = col.dot(&col).sqrt().max(1e-15);
            col /= nu;
            self.cur.h.row_mut(a).mapv_inplace(|v| v * nu);
        }
        // H changed: its kept parts (HHᵀ, σ, the ranking loss) must follow, and XHᵀ is stale.
        self.cur.refresh(&self.triplets, &self.params);
        self.xht_of_cur = false;
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
