//! The NMF iteration of docs/models.md §3.1 (see the module above for the math).

use crate::engine::data::Dataset;
use crate::engine::models::mu::{MuState, PlainRule, blocked_pass_over_x, checked_start};
use crate::engine::models::{Model, ModelError, ModelKind, ModelSpec, Objective};
use ndarray::{Array2, ArrayView2};
use std::sync::Arc;

/// Euclidean NMF, `min ‖X − WH‖²_F` s.t. W, H ≥ 0 (docs/models.md §3.1).
///
/// One [`Model::step`] is H ← H ⊙ (WᵀX) ⊘ max(WᵀW H, ε), then W ← W ⊙ (XHᵀ) ⊘ max(W HHᵀ, ε):
/// the kit's [`MuState`] with its [`PlainRule`]. All products go to preallocated workspaces;
/// nothing m×n is formed. The objective comes from the trace identity ‖X‖² − 2⟨W, XHᵀ⟩ +
/// ⟨WᵀW, HHᵀ⟩, reusing XHᵀ and HHᵀ of the W update and the new WᵀW (which the next H update
/// reuses too), so monitoring costs O(mk²). Large X goes through the blocked single pass that
/// streams X once per iteration.
pub struct Nmf {
    pub(crate) mu: MuState,
    objective: f64,
}

impl Nmf {
    /// Seeded initial W, H (docs/models.md §3.1) or the spec's warm start (§10.6); fails on
    /// an all-zero X.
    pub fn new(data: Arc<Dataset>, spec: &ModelSpec) -> Result<Self, ModelError> {
        let (w, h) = checked_start(&data, spec)?;
        Ok(Self::with_factors(data, w, h))
    }

    /// Start from given factors (tests). Entries are clamped to ≥ 1e-16 so that none locks at
    /// zero (docs/models.md §10.1).
    pub fn from_factors(data: Arc<Dataset>, w: Array2<f64>, h: Array2<f64>) -> Self {
        Self::with_factors(data, w.mapv(|v| v.max(1e-16)), h.mapv(|v| v.max(1e-16)))
    }

    /// Start from these factors exactly (the seeded draw or a warm start; the first update's
    /// floor lifts any zero entry, docs/models.md §10.1).
    fn with_factors(data: Arc<Dataset>, w: Array2<f64>, h: Array2<f64>) -> Self {
        let mu = MuState::new(data, w, h);
        let objective = mu.trace_recon();
        Self { mu, objective }
    }

    /// WᵀX and XHᵀ of the current W and H by the same kernels and column blocks as
    /// [`Model::step`], updating nothing else: the "two big products" that `bench` divides an
    /// iteration by.
    pub fn big_products(&mut self) {
        let work = &mut self.mu.work;
        let (m, n) = work.data.x.dim();
        let k = work.w.ncols();
        if !work.reference
            && let (Some(x), Some(w), Some(h), Some(wtx), Some(xht)) = (
                work.data.x.as_slice(),
                work.w.as_slice(),
                self.mu.h.as_slice_mut(),
                work.wtx.as_slice_mut(),
                work.xht.as_slice_mut(),
            )
        {
            // The update leaves H as it is.
            blocked_pass_over_x(
                x,
                (m, n, k),
                w,
                work.x_block,
                (wtx, h, xht),
                &mut work.xht_acc,
                |_, _, _, _| {},
            );
        } else {
            work.wtx_whole();
            work.xht_whole(&self.mu.h);
        }
    }

    /// Take the reference step (`true`) or the blocked pass with `x_block` columns per block,
    /// whatever the size of X: for tests that compare a model's paths with NMF's.
    #[cfg(test)]
    pub(crate) fn force_path(&mut self, reference: bool, x_block: usize) {
        self.mu.force_path(reference, x_block);
    }

    /// ‖X − WH‖²_F computed from the residual, in column blocks (no m×n temporary; the kit's
    /// `ExactResidual`).
    pub fn exact_objective(&mut self) -> f64 {
        self.mu.exact_recon()
    }
}

impl Model for Nmf {
    fn kind(&self) -> ModelKind {
        super::KIND
    }

    fn step(&mut self) -> Result<Objective, ModelError> {
        self.mu.h_step(&PlainRule);
        self.mu.w_step();
        self.objective = self.mu.advance();
        Ok(self.objective())
    }

    fn h(&self) -> ArrayView2<'_, f64> {
        self.mu.h.view()
    }

    fn w(&self) -> Option<ArrayView2<'_, f64>> {
        Some(self.mu.work.w.view())
    }

    fn objective(&self) -> Objective {
        Objective::single("reconstruction", self.objective)
    }

    /// Unit-norm W columns, H rows rescaled so WH is unchanged (Cai's convention, §3.1/§10.3).
    fn finish(&mut self) {
        self.mu.normalize_w();
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
