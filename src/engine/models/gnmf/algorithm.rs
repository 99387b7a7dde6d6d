//! The GNMF iteration of docs/models.md §3.2 (see the module above for the math).

use super::params::GnmfParams;
use crate::engine::data::Dataset;
use crate::engine::linalg::Csr;
use crate::engine::linalg::graph::graph_pass;
use crate::engine::models::mu::{
    Block, HRule, MuState, checked_start, mu_rule, mu_update, normalize_w_columns,
};
use crate::engine::models::{Outputs, Model, ModelError, ModelKind, ModelSpec, Objective, Term};
use faer::traits::pulp;
use ndarray::{Array2, ArrayView2};
use std::ops::Range;
use std::sync::Arc;

/// Graph-regularised NMF, `min ‖X − WH‖²_F + λ Tr(H L Hᵀ)` s.t. W, H ≥ 0 (docs/models.md §3.2).
///
/// NMF's state and iteration ([`MuState`]) with the graph term in the H rule ([`GraphRule`]),
/// plus H·S (k×n) and the degrees `d = S1`; nothing m×n, nothing n×n dense. The graph term
/// costs one pass over the nonzeros of S per iteration, which gives both H·S and
/// `Tr(H L Hᵀ)`.
pub struct Gnmf {
    pub(crate) mu: MuState,
    params: GnmfParams,
    /// S: the symmetric p-NN graph, zero diagonal (shared with the side information).
    graph: Arc<Csr>,
    /// `d = S1`, the diagonal of D.
    degree: Vec<f64>,
    hs: Array2<f64>, // k×n  H·S (of the current H)
    /// ‖X − WH‖² of the current iterate.
    pub(crate) recon: f64,
    /// Tr(H L Hᵀ) of the current H (not weighted by λ).
    smoothness: f64,
}

impl Gnmf {
    /// Start from a spec: the warm start or NMF's seeded draw (`start_wh`, docs/models.md
    /// (3.2)), used as given. `graph` is S (n×n, symmetric, zero diagonal); fails on an
    /// all-zero X or a graph of the wrong size.
    pub fn start(
        data: Arc<Dataset>,
        spec: &ModelSpec,
        params: GnmfParams,
        graph: Arc<Csr>,
    ) -> Result<Self, ModelError> {
        let n = data.n();
        let (mut w, mut h) = checked_start(&data, spec)?;
        if graph.nrows() != n || graph.ncols() != n {
            return Err(ModelError::BadData {
                why: format!(
                    "the graph is {}×{}, the data has {n} samples",
                    graph.nrows(),
                    graph.ncols()
                ),
            });
        }
        // Cai's start (NormalizeUV): W's columns to unit length, H's rows scaled to keep WH, so
        // that H is on the scale λ was chosen for in his code and the graph term weighs what it
        // weighs there (docs/models.md §3.2). Not with λ = 0 (NMF bit for bit) nor a warm start
        // (used as given).
        if params.lambda > 0.0 && spec.init.is_none() {
            normalize_w_columns(&mut w, &mut h);
        }
        Ok(Self::with_factors(data, params, graph, w, h))
    }

    /// Start from these factors exactly.
    fn with_factors(
        data: Arc<Dataset>,
        params: GnmfParams,
        graph: Arc<Csr>,
        w: Array2<f64>,
        h: Array2<f64>,
    ) -> Self {
        let hs = Array2::zeros(h.dim());
        let mut s = Self {
            mu: MuState::new(data, w, h),
            degree: graph.row_sums(),
            graph,
            params,
            hs,
            recon: f64::NAN,
            smoothness: f64::NAN,
        };
        s.refresh_graph_products();
        s.recon = s.mu.trace_recon();
        s
    }

    /// The checked hyperparameters.
    pub fn params(&self) -> GnmfParams {
        self.params
    }

    /// WᵀW, XHᵀ, HHᵀ, H·S and Tr(H L Hᵀ) of the current factors.
    pub(crate) fn refresh_products(&mut self) {
        self.mu.refresh_products();
        self.refresh_graph_products();
    }

    /// H·S and Tr(H L Hᵀ) of the current H ([`graph_pass`]).
    fn refresh_graph_products(&mut self) {
        let (k, n) = self.mu.h.dim();
        let (Some(h), Some(hs)) = (self.mu.h.as_slice(), self.hs.as_slice_mut()) else {
            self.smoothness = f64::NAN;
            return;
        };
        self.smoothness = graph_pass(&self.graph, h, (k, n), hs);
    }

    /// `(reconstruction, λ·Tr(H L Hᵀ))` as the objective's two terms.
    fn objective_of(&self) -> Objective {
        let graph = self.params.lambda * self.smoothness;
        Objective {
            total: self.recon + graph,
            terms: vec![
                Term {
                    name: "reconstruction".into(),
                    value: self.recon,
                },
                Term {
                    name: "graph".into(),
                    value: graph,
                },
            ],
        }
    }
}

/// GNMF's terms of the H update (3.10): H·S (k×n row-major, of the H before the step) and the
/// degrees (length n), weighted by λ.
struct GraphRule<'a> {
    hs: &'a [f64],
    degree: &'a [f64],
    lambda: f64,
    kn: (usize, usize),
}

impl HRule for GraphRule<'_> {
    const WTWH_IN_BLOCKED_PASS: bool = true;

    fn update_whole(&self, h: &mut Array2<f64>, wtx: &Array2<f64>, wtwh: &Array2<f64>) {
        let n = self.kn.1;
        if let (Some(hsl), Some(wtx), Some(wtwh)) = (h.as_slice_mut(), wtx.as_slice(), wtwh.as_slice())
        {
            self.update(hsl, wtx, wtwh, 0..n);
        } else {
            // Not reached: every array here is built contiguous. The plain rule without the graph.
            mu_update(h, wtx, wtwh);
        }
    }

    fn update_block(&self, b: Block<'_>) {
        let cols = b.j0..b.j0 + b.len;
        self.update(b.h, b.wtx, b.wtwh, cols.clone());
        b.hpass.add_gram_columns(b.h, b.n, cols);
    }
}

impl GraphRule<'_> {
    /// `h_aj ← max(h_aj · (WᵀX + λ HS)_aj / max((WᵀWH)_aj + λ d_j h_aj, ε), φ)` for the columns
    /// `cols` of H (k×n row-major in `h`). With λ = 0 the added terms are exact zeros and this
    /// is NMF's rule (3.3) bit for bit.
    fn update(&self, h: &mut [f64], wtx: &[f64], wtwh: &[f64], cols: Range<usize>) {
        pulp::Arch::new().dispatch(UpdateJob {
            rule: self,
            h,
            wtx,
            wtwh,
            cols,
        });
    }
}

/// [`GraphRule::update`] as a pulp job (a struct with an always-inlined body: a closure would
/// be compiled without the wide instructions).
struct UpdateJob<'a, 'b> {
    rule: &'a GraphRule<'b>,
    h: &'a mut [f64],
    wtx: &'a [f64],
    wtwh: &'a [f64],
    cols: Range<usize>,
}

impl pulp::WithSimd for UpdateJob<'_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let t = self.rule;
        let (k, n) = t.kn;
        let lambda = t.lambda;
        let d = &t.degree[self.cols.clone()];
        for a in 0..k {
            let seg = a * n + self.cols.start..a * n + self.cols.end;
            let parts = self.wtx[seg.clone()]
                .iter()
                .zip(&self.wtwh[seg.clone()])
                .zip(&t.hs[seg.clone()])
                .zip(d);
            for (z, (((&x, &g), &s), &dj)) in self.h[seg].iter_mut().zip(parts) {
                let num = x + lambda * s;
                let den = g + lambda * (dj * *z);
                *z = mu_rule(*z, num, den);
            }
        }
    }
}

impl Model for Gnmf {
    fn kind(&self) -> ModelKind {
        super::KIND
    }

    fn step(&mut self) -> Result<Objective, ModelError> {
        // 1. H ← H ⊙ (WᵀX + λHS) ⊘ max(WᵀW H + λHD, ε); WᵀW is cached from the previous W
        //    update, H·S from the end of the previous iteration.
        let Some(hs) = self.hs.as_slice() else {
            return Err(ModelError::BadData {
                why: "GNMF: H·S is not contiguous".into(),
            });
        };
        let rule = GraphRule {
            hs,
            degree: &self.degree,
            lambda: self.params.lambda,
            kn: self.mu.h.dim(),
        };
        self.mu.h_step(&rule);
        // 2. H·S and Tr(H L Hᵀ) of the new H.
        self.refresh_graph_products();
        // 3. W ← W ⊙ (XHᵀ) ⊘ max(W HHᵀ, ε), and the new WᵀW.
        self.mu.w_step();
        // 4. The objective.
        self.recon = self.mu.advance();
        Ok(self.objective_of())
    }

    fn h(&self) -> ArrayView2<'_, f64> {
        self.mu.h.view()
    }

    fn w(&self) -> Option<ArrayView2<'_, f64>> {
        Some(self.mu.work.w.view())
    }

    fn objective(&self) -> Objective {
        self.objective_of()
    }

    /// Unit-norm W columns, H rows rescaled so WH is unchanged (docs/models.md (3.7), as NMF
    /// and Cai's code); the products follow H, the reported objective stays the last iterate's.
    fn finish(&mut self) {
        let (recon, smoothness) = (self.recon, self.smoothness);
        normalize_w_columns(&mut self.mu.work.w, &mut self.mu.h);
        self.refresh_products();
        (self.recon, self.smoothness) = (recon, smoothness);
    }

    fn outputs(&self) -> Outputs {
        Outputs {
            graph: Some(Arc::clone(&self.graph)),
            ..Outputs::default()
        }
    }

}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
