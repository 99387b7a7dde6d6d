//! The state every multiplicative-update model keeps, and NMF's iteration on it.
//!
//! * [`MuWork`]: X, W and the products of the two updates (`WᵀX`, `WᵀW`, `WᵀW·H`, `XHᵀ`,
//!   `W·HHᵀ`), with the blocked pass's workspace: what NMF, GNMF, NMFCC and RPNMF all hold.
//!   RPNMF keeps its own H (a current and a candidate iterate) next to it.
//! * [`MuState`]: the work, H, `HHᵀ` and the objective's workspaces, with the H step, the W
//!   step and the reconstruction term of NMF's iteration (docs/models.md §3.1). GNMF and NMFCC
//!   hold one and pass their own term of the H rule as an [`HRule`]; everything else is
//!   NMF's, in NMF's order, so that a model with its term switched off gives NMF's bits.

use super::fused::{HPassWork, update_h_columns};
use super::init::start_wh;
use super::objective::{EXACT_EVERY, ExactResidual, squared_norm, trace_reconstruction};
use super::products::{
    FUSED_MIN_BYTES, blocked_pass_over_x, gram_times, wt_x_whole, x_block_columns, xh_t_whole,
};
use super::rule::{mu_update, normalize_w_columns, w_step};
use crate::engine::data::Dataset;
use crate::engine::linalg::thin::XhtAccumulator;
use crate::engine::linalg::{gram_of_columns, gram_of_rows};
use crate::engine::models::{ModelError, ModelSpec};
use ndarray::Array2;
use std::sync::Arc;

/// The starting factors of a MU model from a spec ([`start_wh`]: the warm start or the seeded
/// draw scaled by the mean of X); fails on an all-zero or non-finite X.
pub fn checked_start(
    data: &Dataset,
    spec: &ModelSpec,
) -> Result<(Array2<f64>, Array2<f64>), ModelError> {
    let (m, n) = data.x.dim();
    let mean = data.x.mean().unwrap_or(0.0);
    if !(mean > 0.0 && mean.is_finite()) {
        return Err(ModelError::BadData {
            why: "X is all zeros (or not finite): nothing to factorize".into(),
        });
    }
    Ok(start_wh(spec, m, n, mean))
}

/// X, W and the products of the MU updates, allocated once (nothing m×n).
pub struct MuWork {
    pub(crate) data: Arc<Dataset>,
    pub(crate) w: Array2<f64>,
    /// ‖X‖²_F.
    pub(crate) x_norm2: f64,
    pub(crate) wtx: Array2<f64>,  // k×n  WᵀX
    pub(crate) wtw: Array2<f64>,  // k×k  WᵀW (of the current W)
    pub(crate) wtwh: Array2<f64>, // k×n  WᵀW H
    pub(crate) xht: Array2<f64>,  // m×k  XHᵀ
    pub(crate) whht: Array2<f64>, // m×k  W HHᵀ
    /// The blocked pass's XHᵀ sums (m×k padded) and the block's Hᵀ.
    pub(crate) xht_acc: XhtAccumulator,
    /// X fits in cache: one product per pass (and the tests' reference), not the blocked pass.
    pub(crate) reference: bool,
    /// Columns per block of the single pass over X.
    pub(crate) x_block: usize,
}

impl MuWork {
    /// Workspaces for W (m×k) on `data`; products not formed yet.
    pub fn new(data: Arc<Dataset>, w: Array2<f64>) -> Self {
        let (m, n) = data.x.dim();
        let k = w.ncols();
        Self {
            x_norm2: squared_norm(&data.x),
            wtx: Array2::zeros((k, n)),
            wtw: Array2::zeros((k, k)),
            wtwh: Array2::zeros((k, n)),
            xht: Array2::zeros((m, k)),
            whht: Array2::zeros((m, k)),
            xht_acc: XhtAccumulator::new(m, k),
            reference: m * n * size_of::<f64>() <= FUSED_MIN_BYTES,
            x_block: x_block_columns(m, n),
            w,
            data,
        }
    }

    /// WᵀX over all columns ([`wt_x_whole`]).
    pub fn wtx_whole(&mut self) {
        wt_x_whole(&mut self.wtx, &self.w, &self.data.x);
    }

    /// XHᵀ over all columns ([`xh_t_whole`]).
    pub fn xht_whole(&mut self, h: &Array2<f64>) {
        xh_t_whole(&mut self.xht, &self.data.x, h);
    }

    /// WᵀW of the current W.
    pub fn refresh_wtw(&mut self) {
        gram_of_columns(&mut self.wtw.view_mut(), self.w.view());
    }

    /// `WᵀW·H` into `wtwh` ([`gram_times`]).
    pub fn wtwh_of(&mut self, h: &Array2<f64>) {
        gram_times(&mut self.wtwh, &self.wtw, h);
    }

    /// NMF's W rule `W ← max(W ⊙ XHᵀ ⊘ max(W·HHᵀ, ε), φ)` with the cached XHᵀ and the given
    /// HHᵀ ([`w_step`]).
    pub fn w_rule(&mut self, hht: &Array2<f64>) {
        w_step(&mut self.w, &self.xht, hht, &mut self.whht);
    }

    /// `‖X‖² − 2⟨W, XHᵀ⟩ + ⟨WᵀW, HHᵀ⟩` from the cached products (clamped at 0).
    pub fn trace_recon(&self, hht: &Array2<f64>) -> f64 {
        trace_reconstruction(self.x_norm2, &self.w, &self.xht, &self.wtw, hht)
    }
}

/// A model's H rule: NMF's `H ← H ⊙ WᵀX ⊘ max(WᵀW·H, ε)` with the model's own terms added.
pub trait HRule {
    /// The rule reads `WᵀW·H` (formed before the H update) in the blocked pass too; false when
    /// the pass forms it chunk by chunk itself ([`update_h_columns`]).
    const WTWH_IN_BLOCKED_PASS: bool;

    /// The rule over all of H (k×n), from the whole `WᵀX` and `WᵀW·H`: the one-product-per-pass
    /// step.
    fn update_whole(&self, h: &mut Array2<f64>, wtx: &Array2<f64>, wtwh: &Array2<f64>);

    /// The rule over columns `j0..j0 + len` of H inside the blocked pass, adding the new columns
    /// into the `HHᵀ` accumulator of `hpass`.
    fn update_block(&self, b: Block<'_>);
}

/// One block of columns of the blocked pass, for [`HRule::update_block`]: all arrays k×n
/// row-major (`wtx` holds the block's columns of WᵀX), `wtw` k×k.
pub struct Block<'a> {
    pub(crate) hpass: &'a mut HPassWork,
    pub(crate) wtw: &'a [f64],
    /// `WᵀW·H` of the H before the step; empty unless [`HRule::WTWH_IN_BLOCKED_PASS`].
    pub(crate) wtwh: &'a [f64],
    pub(crate) h: &'a mut [f64],
    pub(crate) wtx: &'a [f64],
    pub(crate) n: usize,
    pub(crate) j0: usize,
    pub(crate) len: usize,
}

/// NMF's rule, nothing added: `mu_update` over all of H, the fused pass per block.
pub struct PlainRule;

impl HRule for PlainRule {
    const WTWH_IN_BLOCKED_PASS: bool = false;

    fn update_whole(&self, h: &mut Array2<f64>, wtx: &Array2<f64>, wtwh: &Array2<f64>) {
        mu_update(h, wtx, wtwh);
    }

    fn update_block(&self, b: Block<'_>) {
        let Block {
            hpass,
            wtw,
            h,
            wtx,
            n,
            j0,
            len,
            ..
        } = b;
        update_h_columns(hpass, wtw, h, n, j0, wtx, n, j0, len);
    }
}

/// NMF's state: [`MuWork`], H, HHᵀ and the objective's workspaces.
pub struct MuState {
    pub(crate) work: MuWork,
    pub(crate) h: Array2<f64>,
    pub(crate) hht: Array2<f64>, // k×k  HHᵀ (of the current H)
    /// m×256 residual block, allocated on the first exact recomputation.
    pub(crate) residual: ExactResidual,
    /// The fused H pass: k×CHUNK denominators, HHᵀ partial sums.
    pub(crate) hpass: HPassWork,
    pub(crate) iteration: usize,
}

impl MuState {
    /// The state at these factors with WᵀW, XHᵀ and HHᵀ formed.
    pub fn new(data: Arc<Dataset>, w: Array2<f64>, h: Array2<f64>) -> Self {
        let k = w.ncols();
        let mut s = Self {
            work: MuWork::new(data, w),
            h,
            hht: Array2::zeros((k, k)),
            residual: ExactResidual::new(),
            hpass: HPassWork::new(k),
            iteration: 0,
        };
        s.refresh_products();
        s
    }

    /// WᵀW, XHᵀ and HHᵀ of the current factors.
    pub fn refresh_products(&mut self) {
        self.work.refresh_wtw();
        self.refresh_h_products();
    }

    /// W's columns to unit length and H's rows scaled to keep WH ([`normalize_w_columns`]),
    /// with the cached products scaled along (WᵀW by `1/(ν_a ν_b)`, XHᵀ's column a by `ν_a`,
    /// HHᵀ by `ν_a ν_b`): O(mk + k²) where forming them again reads X (on the 1,797 × 64
    /// digits, 5 % of a fit's fixed cost). They agree with freshly formed products up to
    /// rounding, and only a further step reads them.
    pub fn normalize_w(&mut self) {
        let nu = normalize_w_columns(&mut self.work.w, &mut self.h);
        for ((a, b), v) in self.work.wtw.indexed_iter_mut() {
            *v /= nu[a] * nu[b];
        }
        for ((_, a), v) in self.work.xht.indexed_iter_mut() {
            *v *= nu[a];
        }
        for ((a, b), v) in self.hht.indexed_iter_mut() {
            *v *= nu[a] * nu[b];
        }
    }

    /// XHᵀ and HHᵀ of the current H: the W update's numerator and Gram matrix, reused by the
    /// trace-identity objective.
    pub fn refresh_h_products(&mut self) {
        self.work.xht_whole(&self.h);
        gram_of_rows(&mut self.hht.view_mut(), self.h.view());
    }

    /// The H update by `rule`, then XHᵀ and HHᵀ of the new H: the blocked single pass over a
    /// large X, one product per pass on a small one.
    pub fn h_step<R: HRule>(&mut self, rule: &R) {
        if R::WTWH_IN_BLOCKED_PASS {
            self.work.wtwh_of(&self.h);
        }
        if self.work.reference || !self.blocked_h_step(rule) {
            self.reference_h_step(rule);
        }
    }

    /// One product per pass: WᵀX and WᵀW·H (thin kernel), the rule, XHᵀ and HHᵀ (lane kernels
    /// of `linalg::gram`). The reference the blocked pass is tested against.
    fn reference_h_step<R: HRule>(&mut self, rule: &R) {
        self.work.wtx_whole();
        if !R::WTWH_IN_BLOCKED_PASS {
            self.work.wtwh_of(&self.h);
        }
        rule.update_whole(&mut self.h, &self.work.wtx, &self.work.wtwh);
        self.refresh_h_products();
    }

    /// The same with X read once ([`blocked_pass_over_x`]): for each block B of columns,
    /// `(WᵀX)_B`, the rule on `H_B` (its parts are of the H before the step, formed already),
    /// then `XHᵀ += X_B H_Bᵀ` while `X_B` may still be in cache, and `HHᵀ` from the lane sums
    /// of the pass. Returns false (nothing done) when an array is not contiguous row-major.
    ///
    /// Reading X once per iteration, by kernels that do not pack it, makes this about twice as
    /// fast as the reference step with faer on a large X (docs/performance.md, "Blocked single
    /// pass over a large X (`models/nmf`, `fused_h_step`; RPNMF's H step)").
    fn blocked_h_step<R: HRule>(&mut self, rule: &R) -> bool {
        let work = &mut self.work;
        let (m, n) = work.data.x.dim();
        let k = self.h.nrows();
        let (Some(xs), Some(ws), Some(wtw)) = (
            work.data.x.as_slice(),
            work.w.as_slice(),
            work.wtw.as_slice(),
        ) else {
            return false;
        };
        let wtwh: &[f64] = if R::WTWH_IN_BLOCKED_PASS {
            match work.wtwh.as_slice() {
                Some(s) => s,
                None => return false,
            }
        } else {
            &[]
        };
        let (Some(h), Some(wtx), Some(xht)) = (
            self.h.as_slice_mut(),
            work.wtx.as_slice_mut(),
            work.xht.as_slice_mut(),
        ) else {
            return false;
        };
        let hpass = &mut self.hpass;
        hpass.reset_gram();
        blocked_pass_over_x(
            xs,
            (m, n, k),
            ws,
            work.x_block,
            (wtx, h, xht),
            &mut work.xht_acc,
            |wtx, h, j0, len| {
                rule.update_block(Block {
                    hpass,
                    wtw,
                    wtwh,
                    h,
                    wtx,
                    n,
                    j0,
                    len,
                });
            },
        );
        if let Some(hht) = self.hht.as_slice_mut() {
            self.hpass.gram_into(hht);
        }
        true
    }

    /// `W ← W ⊙ (XHᵀ) ⊘ max(W HHᵀ, ε)`, then the new WᵀW: the objective's Gram term now, the
    /// next H update's denominator later.
    pub fn w_step(&mut self) {
        self.work.w_rule(&self.hht);
        self.work.refresh_wtw();
    }

    /// Count the iteration and return the reconstruction term of the new iterate: by the trace
    /// identity, exactly from the residual every [`EXACT_EVERY`] iterations (§10.5).
    pub fn advance(&mut self) -> f64 {
        self.iteration += 1;
        if self.iteration.is_multiple_of(EXACT_EVERY) {
            self.exact_recon()
        } else {
            self.trace_recon()
        }
    }

    /// ‖X‖² − 2⟨W, XHᵀ⟩ + ⟨WᵀW, HHᵀ⟩ from the cached products (clamped at 0).
    pub fn trace_recon(&self) -> f64 {
        self.work.trace_recon(&self.hht)
    }

    /// ‖X − WH‖²_F computed from the residual, in column blocks (no m×n temporary).
    pub fn exact_recon(&mut self) -> f64 {
        let w = &self.work;
        self.residual.norm2(&w.data.x, &w.w, &self.h, w.reference)
    }

    /// Take the reference step (`true`) or the blocked pass with `x_block` columns per block,
    /// whatever the size of X: for tests that compare a model's paths with NMF's.
    #[cfg(test)]
    pub(crate) fn force_path(&mut self, reference: bool, x_block: usize) {
        (self.work.reference, self.work.x_block) = (reference, x_block);
    }
}
