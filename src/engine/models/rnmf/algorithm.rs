//! The RNMF iteration of docs/models.md §3.3 (see the module above for the math).

use crate::engine::data::Dataset;
use crate::engine::linalg::gram::{LANES, a_bt_into, sum_lanes};
use crate::engine::linalg::thin::{ChunkRows, XhtAccumulator, wt_x_columns};
use crate::engine::linalg::{Op, gemm_into, gram_of_columns};
use crate::engine::models::mu::{
    FUSED_MIN_BYTES, blocked_pass_over_x, mu_rule, mu_update, normalize_w_columns, start_wh,
    wt_x_whole, x_block_columns, xh_t_whole,
};
use crate::engine::models::{Outputs, Model, ModelError, ModelKind, ModelSpec, Objective, SampleValues};
use faer::traits::pulp;
use ndarray::{Array2, ArrayView2};
use std::ops::Range;
use std::sync::Arc;

/// `ε_r = RESIDUAL_FLOOR · ‖X‖_F / √n`: the smallest residual a weight is computed from
/// (docs/models.md §3.3). The Gram identity gives `r_i²` to about `u·‖x_i‖²` (u = 2⁻⁵³), so
/// residuals below about `1e-8·‖x_i‖` are rounding noise; the floor sits at that level for a
/// sample of average length.
const RESIDUAL_FLOOR: f64 = 1e-8;

/// What the sample values of [`Model::outputs`] call the weights.
const WEIGHT_NAME: &str = "residual weight (largest = 1)";

/// l2,1-norm robust NMF, `min Σ_i ‖x_i − W h_i‖` s.t. W, H ≥ 0 (docs/models.md §3.3).
///
/// One [`Model::step`]: the weights `d_i = 1/max(r_i, ε_r)` of the current iterate (kept from
/// the previous step), `W ← W ⊙ (XDHᵀ) ⊘ max(W·HDHᵀ, ε)`, then `H ← H ⊙ (WᵀX D) ⊘ max(WᵀW H D,
/// ε)`, then the new residuals, F = Σ r_i and the next weights. All products go to
/// preallocated workspaces; nothing m×n is formed. The two big products are NMF's: `WᵀX`
/// (for the H update, and again for the residuals of the new H) and `X (HD)ᵀ`.
pub struct Rnmf {
    data: Arc<Dataset>,
    w: Array2<f64>,
    h: Array2<f64>,
    /// Per-sample state: ‖x_i‖², residuals, weights.
    s: Samples,
    // Workspaces.
    wtx: Array2<f64>,   // k×n  WᵀX (of the current W)
    wtw: Array2<f64>,   // k×k  WᵀW (of the current W)
    gh: Array2<f64>,    // k×n  WᵀW·H (old H in the update, then new H for the residuals)
    hd: Array2<f64>,    // k×n  H D: H's columns scaled by the weights
    xdht: Array2<f64>,  // m×k  X D Hᵀ = X (HD)ᵀ (of the current H and weights)
    hdht: Array2<f64>,  // k×k  H D Hᵀ = (HD) Hᵀ
    whdht: Array2<f64>, // m×k  W·HDHᵀ
    xht_acc: XhtAccumulator, // single pass: X(HD)ᵀ sums (m×k padded) and the block's (HD)ᵀ
    /// Use the reference step (one product per pass; small X, and the tests' baseline).
    reference: bool,
    /// Columns per block of the single pass over X.
    x_block: usize,
    iteration: usize,
    objective: f64,
}

/// Per-sample vectors (length n) and the residual floor.
struct Samples {
    /// ‖x_i‖², fixed.
    xn2: Vec<f64>,
    /// `r_i = ‖x_i − W h_i‖` of the current iterate, from the Gram identity.
    resid: Vec<f64>,
    /// `d_i = 1 / max(r_i, ε_r)`: the weights of the next update.
    d: Vec<f64>,
    /// Scratch: `h_iᵀ(WᵀX)_i` and `h_iᵀ(WᵀW)h_i`.
    cross: Vec<f64>,
    quad: Vec<f64>,
    /// ε_r.
    eps_r: f64,
}

impl Rnmf {
    /// Seeded initial W, H, or the spec's warm start used as given (docs/models.md §3.1,
    /// §10.6); fails on an all-zero X.
    pub fn new(data: Arc<Dataset>, spec: &ModelSpec) -> Result<Self, ModelError> {
        let (m, n) = data.x.dim();
        let mean = data.x.mean().unwrap_or(0.0);
        if !(mean > 0.0 && mean.is_finite()) {
            return Err(ModelError::BadData {
                why: "X is all zeros (or not finite): nothing to factorize".into(),
            });
        }
        let (w, h) = start_wh(spec, m, n, mean);
        Ok(Self::with_factors(data, w, h))
    }

    /// Start from these factors exactly (values as given; stored row-major).
    fn with_factors(data: Arc<Dataset>, w: Array2<f64>, h: Array2<f64>) -> Self {
        let (m, n) = data.x.dim();
        let k = w.ncols();
        let row_major = |a: Array2<f64>| {
            if a.is_standard_layout() {
                a
            } else {
                a.as_standard_layout().into_owned()
            }
        };
        let xn2 = column_norms2(&data.x);
        let x_norm = xn2.iter().sum::<f64>().sqrt();
        let mut s = Self {
            w: row_major(w),
            h: row_major(h),
            s: Samples {
                resid: vec![0.0; n],
                d: vec![0.0; n],
                cross: vec![0.0; n],
                quad: vec![0.0; n],
                eps_r: RESIDUAL_FLOOR * x_norm / (n.max(1) as f64).sqrt(),
                xn2,
            },
            wtx: Array2::zeros((k, n)),
            wtw: Array2::zeros((k, k)),
            gh: Array2::zeros((k, n)),
            hd: Array2::zeros((k, n)),
            xdht: Array2::zeros((m, k)),
            hdht: Array2::zeros((k, k)),
            whdht: Array2::zeros((m, k)),
            xht_acc: XhtAccumulator::new(m, k),
            reference: m * n * size_of::<f64>() <= FUSED_MIN_BYTES || data.x.as_slice().is_none(),
            x_block: x_block_columns(m, n),
            iteration: 0,
            objective: f64::NAN,
            data,
        };
        s.refresh();
        s
    }

    /// Everything derived from W and H: WᵀW, WᵀX, the residuals and F, the weights, HD,
    /// XDHᵀ and HDHᵀ (at the start, and after `finish` rescaled the factors).
    fn refresh(&mut self) {
        gram_of_columns(&mut self.wtw.view_mut(), self.w.view());
        wt_x_whole(&mut self.wtx, &self.w, &self.data.x);
        let n = self.h.ncols();
        self.columns(0..n, false);
        xh_t_whole(&mut self.xdht, &self.data.x, &self.hd);
        self.weighted_gram();
        self.objective = self.s.l21();
    }

    /// [`column_pass`] on this model's arrays, with WᵀX already in `wtx`.
    fn columns(&mut self, cols: Range<usize>, update: bool) {
        let (k, n) = self.h.dim();
        if let (Some(gram), Some(wtx), Some(h), Some(gh), Some(hd)) = (
            self.wtw.as_slice(),
            self.wtx.as_slice(),
            self.h.as_slice_mut(),
            self.gh.as_slice_mut(),
            self.hd.as_slice_mut(),
        ) {
            column_pass(
                Columns {
                    kn: (k, n),
                    gram,
                    wtx,
                    h,
                    gh,
                    hd,
                    s: &mut self.s,
                },
                cols,
                update,
            );
        }
    }

    /// `HDHᵀ = (HD)Hᵀ`, the lane kernel (k×k; with every d_i = 1 it gives NMF's HHᵀ bit for bit).
    fn weighted_gram(&mut self) {
        let (k, n) = self.h.dim();
        if let (Some(hd), Some(h), Some(out)) = (
            self.hd.as_slice(),
            self.h.as_slice(),
            self.hdht.as_slice_mut(),
        ) {
            a_bt_into(hd, h, (k, k, n), out);
        }
    }

    /// The H update and what follows it, one product per pass: WᵀX (thin kernel), the
    /// column pass over all columns, X(HD)ᵀ. The reference the blocked pass is tested against.
    fn reference_h_step(&mut self) {
        wt_x_whole(&mut self.wtx, &self.w, &self.data.x);
        let n = self.h.ncols();
        self.columns(0..n, true);
        xh_t_whole(&mut self.xdht, &self.data.x, &self.hd);
    }

    /// The same in one blocked pass over X ([`blocked_pass_over_x`]): for each block B of
    /// columns, `(WᵀX)_B`, then the column pass on B (H update, residuals, weights, `(HD)_B`),
    /// then `X(HD)ᵀ += X_B (HD)_Bᵀ` while `X_B` may still be in cache. Returns false (nothing
    /// done) when an array is not contiguous row-major.
    fn blocked_h_step(&mut self) -> bool {
        let (m, n) = self.data.x.dim();
        let k = self.h.nrows();
        let (Some(x), Some(w), Some(gram)) = (
            self.data.x.as_slice(),
            self.w.as_slice(),
            self.wtw.as_slice(),
        ) else {
            return false;
        };
        let (Some(h), Some(gh), Some(wtx), Some(hd), Some(xdht)) = (
            self.h.as_slice_mut(),
            self.gh.as_slice_mut(),
            self.wtx.as_slice_mut(),
            self.hd.as_slice_mut(),
            self.xdht.as_slice_mut(),
        ) else {
            return false;
        };
        let s = &mut self.s;
        blocked_pass_over_x(
            x,
            (m, n, k),
            w,
            self.x_block,
            (wtx, hd, xdht),
            &mut self.xht_acc,
            |wtx, hd, j0, len| {
                column_pass(
                    Columns {
                        kn: (k, n),
                        gram,
                        wtx,
                        h: &mut *h,
                        gh: &mut *gh,
                        hd,
                        s: &mut *s,
                    },
                    j0..j0 + len,
                    true,
                );
            },
        );
        true
    }

    /// `r_i = ‖x_i − W h_i‖` of the current iterate (from the Gram identity).
    pub fn residuals(&self) -> &[f64] {
        &self.s.resid
    }

    /// The weights `d_i = 1/max(r_i, ε_r)` of the current iterate (the next update's).
    pub fn weights(&self) -> &[f64] {
        &self.s.d
    }

    /// ε_r of this data.
    pub fn residual_floor(&self) -> f64 {
        self.s.eps_r
    }
}

impl Samples {
    /// `F = Σ r_i`: sample i into lane `i mod 8`, in sample order, then the lanes pairwise
    /// ([`sum_lanes`]); NaN if any residual is.
    fn l21(&self) -> f64 {
        let mut lanes = [0.0f64; LANES];
        let chunks = self.resid.chunks_exact(LANES);
        let rest = chunks.remainder();
        for c in chunks {
            for (l, r) in lanes.iter_mut().zip(c) {
                *l += r;
            }
        }
        for (l, r) in lanes.iter_mut().zip(rest) {
            *l += r;
        }
        sum_lanes(&lanes)
    }
}

/// `‖x_i‖²` of every column of X, summed over the rows in order (row by row, so a row-major X
/// is read sequentially).
fn column_norms2(x: &Array2<f64>) -> Vec<f64> {
    let mut out = vec![0.0; x.ncols()];
    for row in x.rows() {
        for (o, v) in out.iter_mut().zip(row) {
            *o += v * v;
        }
    }
    out
}

/// The arrays of [`column_pass`] (k×n row-major, stride n), borrowed apart from the big
/// products' buffers so that the blocked pass can call it block by block.
struct Columns<'a> {
    kn: (usize, usize),
    /// WᵀW (k×k) of the current W.
    gram: &'a [f64],
    /// WᵀX of the current W (at least the columns of the range).
    wtx: &'a [f64],
    h: &'a mut [f64],
    /// Workspace: WᵀW·H.
    gh: &'a mut [f64],
    /// Out: HD.
    hd: &'a mut [f64],
    s: &'a mut Samples,
}

/// The per-sample part of an iteration on the columns `cols`:
///
/// 1. with `update`, the H update `h_i ← max(h_i ⊙ (WᵀX)_i d_i ⊘ max((WᵀW h_i) d_i, ε), φ)`
///    with the weights of the start of the iteration;
/// 2. `g_i = WᵀW h_i` of the (new) H, `c_i = h_iᵀ(WᵀX)_i`, `q_i = h_iᵀ g_i` (each summed over
///    the rank in order, no fused multiply-adds), `r_i² = (‖x_i‖² − 2c_i) + q_i`, clamped at 0;
/// 3. `r_i`, `d_i = 1 / max(r_i, ε_r)`, and `(HD)_i = h_i d_i`.
///
/// A NaN anywhere stays NaN through the clamps (they are written so that a NaN compares
/// false and passes through, and an overflowed `r_i² = −∞` becomes NaN, not 0), so a
/// non-finite iterate gives a non-finite objective.
/// Each `WᵀW·H` is the thin kernel (one FMA chain over the rank per entry, as `gram_times`).
fn column_pass(c: Columns<'_>, cols: Range<usize>, update: bool) {
    let (k, n) = c.kn;
    if update {
        wt_x_columns(c.gram, (k, k), c.h, n, cols.clone(), c.gh, n, ChunkRows::Cached);
    }
    pulp::Arch::new().dispatch(UpdateH {
        c,
        cols,
        update,
    });
}

/// [`column_pass`] after its first `WᵀW·H`, run by pulp with the CPU's widest instructions.
struct UpdateH<'a> {
    c: Columns<'a>,
    cols: Range<usize>,
    update: bool,
}

impl pulp::WithSimd for UpdateH<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let UpdateH { c, cols, update } = self;
        let (k, n) = c.kn;
        let Columns {
            gram,
            wtx,
            h,
            gh,
            hd,
            s,
            ..
        } = c;
        let (lo, hi) = (cols.start, cols.end);
        if update {
            let d = &s.d[lo..hi];
            for a in 0..k {
                let row = a * n;
                let (h_a, num, den) = (
                    &mut h[row + lo..row + hi],
                    &wtx[row + lo..row + hi],
                    &gh[row + lo..row + hi],
                );
                for j in 0..hi - lo {
                    h_a[j] = mu_rule(h_a[j], num[j] * d[j], den[j] * d[j]);
                }
            }
        }
        wt_x_columns(gram, (k, k), h, n, cols, gh, n, ChunkRows::Cached);
        let (cross, quad) = (&mut s.cross[lo..hi], &mut s.quad[lo..hi]);
        cross.fill(0.0);
        quad.fill(0.0);
        for a in 0..k {
            let row = a * n;
            let (h_a, x_a, g_a) = (
                &h[row + lo..row + hi],
                &wtx[row + lo..row + hi],
                &gh[row + lo..row + hi],
            );
            for j in 0..hi - lo {
                cross[j] += h_a[j] * x_a[j];
                quad[j] += h_a[j] * g_a[j];
            }
        }
        let eps_r = s.eps_r;
        let (xn2, resid, d) = (&s.xn2[lo..hi], &mut s.resid[lo..hi], &mut s.d[lo..hi]);
        for j in 0..hi - lo {
            let r2 = (xn2[j] - 2.0 * cross[j]) + quad[j];
            // Only a finite negative r² is rounding (clamped to 0); −∞ (an overflow) and NaN
            // give a NaN r, and `r < eps_r` is false for NaN, which then passes through.
            let r = if r2 < 0.0 && r2.is_finite() { 0.0 } else { r2.sqrt() };
            resid[j] = r;
            d[j] = 1.0 / if r < eps_r { eps_r } else { r };
        }
        for a in 0..k {
            let row = a * n;
            let (h_a, hd_a) = (&h[row + lo..row + hi], &mut hd[row + lo..row + hi]);
            for j in 0..hi - lo {
                hd_a[j] = h_a[j] * d[j];
            }
        }
    }
}

impl Model for Rnmf {
    fn kind(&self) -> ModelKind {
        super::KIND
    }

    fn step(&mut self) -> Result<Objective, ModelError> {
        // The multiplicative rule floors a NaN (its `max` drops it), so a non-finite iterate
        // would turn into a finite one; F is non-finite exactly when it is not.
        if !self.objective.is_finite() {
            return Err(ModelError::Diverged {
                iteration: self.iteration + 1,
                what: format!(
                    "the iterate is not finite before the update (F = {}): W or H has a NaN \
                     or infinite entry",
                    self.objective
                ),
            });
        }
        // W ← W ⊙ (XDHᵀ) ⊘ max(W·HDHᵀ, ε), with the weights and products of the current H.
        gemm_into(
            &mut self.whdht.view_mut(),
            1.0,
            self.w.view(),
            Op::N,
            self.hdht.view(),
            Op::N,
            false,
        );
        mu_update(&mut self.w, &self.xdht, &self.whdht);
        gram_of_columns(&mut self.wtw.view_mut(), self.w.view());
        // H ← H ⊙ (WᵀX D) ⊘ max(WᵀW H D, ε), the new residuals and weights, X(HD)ᵀ.
        if self.reference || !self.blocked_h_step() {
            self.reference_h_step();
        }
        self.weighted_gram();
        self.iteration += 1;
        self.objective = self.s.l21();
        Ok(self.objective())
    }

    fn h(&self) -> ArrayView2<'_, f64> {
        self.h.view()
    }

    fn w(&self) -> Option<ArrayView2<'_, f64>> {
        Some(self.w.view())
    }

    fn objective(&self) -> Objective {
        Objective::single("l21", self.objective)
    }

    /// Unit-norm W columns, H rows rescaled so WH is unchanged (§10.3); the residuals, and
    /// so F and the weights, are unchanged up to rounding.
    fn finish(&mut self) {
        normalize_w_columns(&mut self.w, &mut self.h);
        self.refresh();
    }

    /// The weights `d_i` of the current iterate divided by the largest: 1 for the sample
    /// fitted best (or any within ε_r), near 0 for the samples RNMF discounts.
    fn outputs(&self) -> Outputs {
        Outputs {
            values: {
            let top = self.s.d.iter().copied().fold(0.0f64, f64::max);
            let values = if top > 0.0 && top.is_finite() {
                self.s.d.iter().map(|d| d / top).collect()
            } else {
                self.s.d.clone()
            };
            Some(SampleValues {
                name: WEIGHT_NAME,
                values,
            })
            },
            ..Outputs::default()
        }
    }

}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
