//! The GNMF iteration of docs/models.md §3.2 (see the module above for the math).

use super::params::GnmfParams;
use crate::engine::data::Dataset;
use crate::engine::linalg::thin::XhtAccumulator;
use crate::engine::linalg::{Csr, gram_of_columns, gram_of_rows};
use crate::engine::models::mu::{w_step, 
    EXACT_EVERY, ExactResidual, FUSED_MIN_BYTES, HPassWork, blocked_pass_over_x, gram_times,
    mu_rule, mu_update, normalize_w_columns, start_wh, trace_reconstruction, wt_x_whole,
    x_block_columns, xh_t_whole,
};
use crate::engine::models::{Model, ModelError, ModelKind, ModelSpec, Objective, Term};
use faer::traits::pulp;
use ndarray::{Array2, ArrayView2};
use std::ops::Range;
use std::sync::Arc;

/// Graph-regularised NMF, `min ‖X − WH‖²_F + λ Tr(H L Hᵀ)` s.t. W, H ≥ 0 (docs/models.md §3.2).
///
/// The workspaces and products are NMF's ([`crate::engine::models::nmf::Nmf`]) plus H·S
/// (k×n) and the degrees `d = S1`; nothing m×n, nothing n×n dense. The graph term costs one
/// pass over the nonzeros of S per iteration, which gives both H·S and `Tr(H L Hᵀ)`.
pub struct Gnmf {
    data: Arc<Dataset>,
    params: GnmfParams,
    /// S: the symmetric p-NN graph, zero diagonal (shared with the side information).
    graph: Arc<Csr>,
    /// `d = S1`, the diagonal of D.
    degree: Vec<f64>,
    w: Array2<f64>,
    h: Array2<f64>,
    /// ‖X‖²_F.
    x_norm2: f64,
    // Workspaces.
    wtx: Array2<f64>,  // k×n  WᵀX
    wtw: Array2<f64>,  // k×k  WᵀW (of the current W)
    wtwh: Array2<f64>, // k×n  WᵀW H
    hs: Array2<f64>,   // k×n  H·S (of the current H)
    xht: Array2<f64>,  // m×k  XHᵀ (of the current H)
    hht: Array2<f64>,  // k×k  HHᵀ (of the current H)
    whht: Array2<f64>, // m×k  W HHᵀ
    residual: ExactResidual,
    hpass: HPassWork,        // HHᵀ lane sums of the blocked pass, as NMF's fused pass forms them
    xht_acc: XhtAccumulator, // blocked pass: XHᵀ sums and the block's Hᵀ
    /// One product per pass (small X, as NMF decides), else the blocked pass over X.
    reference: bool,
    /// Columns per block of the single pass over X.
    x_block: usize,
    iteration: usize,
    /// ‖X − WH‖² of the current iterate.
    recon: f64,
    /// Tr(H L Hᵀ) of the current H (not weighted by λ).
    smoothness: f64,
}

impl Gnmf {
    /// Start from a spec: the warm start or NMF's seeded draw ([`start_wh`], docs/models.md
    /// (3.2)), used as given. `graph` is S (n×n, symmetric, zero diagonal); fails on an
    /// all-zero X or a graph of the wrong size.
    pub fn start(
        data: Arc<Dataset>,
        spec: &ModelSpec,
        params: GnmfParams,
        graph: Arc<Csr>,
    ) -> Result<Self, ModelError> {
        let (m, n) = data.x.dim();
        let mean = data.x.mean().unwrap_or(0.0);
        if !(mean > 0.0 && mean.is_finite()) {
            return Err(ModelError::BadData {
                why: "X is all zeros (or not finite): nothing to factorize".into(),
            });
        }
        if graph.nrows() != n || graph.ncols() != n {
            return Err(ModelError::BadData {
                why: format!(
                    "the graph is {}×{}, the data has {n} samples",
                    graph.nrows(),
                    graph.ncols()
                ),
            });
        }
        let (mut w, mut h) = start_wh(spec, m, n, mean);
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
        let (m, n) = data.x.dim();
        let k = w.ncols();
        let x_norm2 = data.x.iter().map(|v| v * v).sum();
        let mut s = Self {
            degree: graph.row_sums(),
            graph,
            params,
            w,
            h,
            x_norm2,
            wtx: Array2::zeros((k, n)),
            wtw: Array2::zeros((k, k)),
            wtwh: Array2::zeros((k, n)),
            hs: Array2::zeros((k, n)),
            xht: Array2::zeros((m, k)),
            hht: Array2::zeros((k, k)),
            whht: Array2::zeros((m, k)),
            residual: ExactResidual::new(),
            hpass: HPassWork::new(k),
            xht_acc: XhtAccumulator::new(m, k),
            reference: m * n * size_of::<f64>() <= FUSED_MIN_BYTES,
            x_block: x_block_columns(m, n),
            iteration: 0,
            recon: f64::NAN,
            smoothness: f64::NAN,
            data,
        };
        s.refresh_products();
        s.recon = s.trace_objective();
        s
    }

    /// The checked hyperparameters.
    pub fn params(&self) -> GnmfParams {
        self.params
    }

    /// WᵀW, XHᵀ, HHᵀ, H·S and Tr(H L Hᵀ) of the current factors.
    fn refresh_products(&mut self) {
        gram_of_columns(&mut self.wtw.view_mut(), self.w.view());
        xh_t_whole(&mut self.xht, &self.data.x, &self.h);
        gram_of_rows(&mut self.hht.view_mut(), self.h.view());
        self.refresh_graph_products();
    }

    /// H·S and Tr(H L Hᵀ) of the current H ([`graph_pass`]).
    fn refresh_graph_products(&mut self) {
        let (k, n) = self.h.dim();
        let (Some(h), Some(hs)) = (self.h.as_slice(), self.hs.as_slice_mut()) else {
            self.smoothness = f64::NAN;
            return;
        };
        self.smoothness = graph_pass(&self.graph, h, (k, n), hs);
    }

    /// The H update one product per pass: WᵀX (thin kernel), the update (3.10) over all
    /// columns, then XHᵀ and HHᵀ of the new H (lane kernels), as NMF's reference step.
    fn reference_h_step(&mut self) {
        wt_x_whole(&mut self.wtx, &self.w, &self.data.x);
        let (k, n) = self.h.dim();
        if let (Some(h), Some(wtx), Some(wtwh), Some(hs)) = (
            self.h.as_slice_mut(),
            self.wtx.as_slice(),
            self.wtwh.as_slice(),
            self.hs.as_slice(),
        ) {
            let terms = HTerms {
                wtx,
                wtwh,
                hs,
                degree: &self.degree,
                lambda: self.params.lambda,
                kn: (k, n),
            };
            terms.update(h, 0..n);
        } else {
            // Not reached: every array here is built contiguous. The plain rule without the graph.
            mu_update(&mut self.h, &self.wtx, &self.wtwh);
        }
        xh_t_whole(&mut self.xht, &self.data.x, &self.h);
        gram_of_rows(&mut self.hht.view_mut(), self.h.view());
    }

    /// The H update in the kit's blocked single pass over X ([`blocked_pass_over_x`], NMF's):
    /// for each block B of columns, `(WᵀX)_B`, then the update (3.10) of `H_B` (its other
    /// parts, WᵀW·H and H·S, are of the H before the step and were formed already), then
    /// `XHᵀ += X_B H_Bᵀ` while `X_B` may still be in cache, and `HHᵀ` from the same lane sums
    /// NMF's fused pass forms. Returns false (nothing done) when an array is not contiguous.
    fn blocked_h_step(&mut self) -> bool {
        let (m, n) = self.data.x.dim();
        let k = self.h.nrows();
        let (Some(xs), Some(ws), Some(wtwh), Some(hsl)) = (
            self.data.x.as_slice(),
            self.w.as_slice(),
            self.wtwh.as_slice(),
            self.hs.as_slice(),
        ) else {
            return false;
        };
        let (Some(h), Some(wtx), Some(xht)) = (
            self.h.as_slice_mut(),
            self.wtx.as_slice_mut(),
            self.xht.as_slice_mut(),
        ) else {
            return false;
        };
        let (degree, lambda) = (&self.degree, self.params.lambda);
        let gram = &mut self.hpass;
        gram.reset_gram();
        blocked_pass_over_x(
            xs,
            (m, n, k),
            ws,
            self.x_block,
            (wtx, h, xht),
            &mut self.xht_acc,
            |wtx, h, j0, len| {
                let terms = HTerms {
                    wtx,
                    wtwh,
                    hs: hsl,
                    degree,
                    lambda,
                    kn: (k, n),
                };
                terms.update(h, j0..j0 + len);
                gram.add_gram_columns(h, n, j0..j0 + len);
            },
        );
        if let Some(hht) = self.hht.as_slice_mut() {
            self.hpass.gram_into(hht);
        }
        true
    }

    /// ‖X‖² − 2⟨W, XHᵀ⟩ + ⟨WᵀW, HHᵀ⟩ from the cached products (clamped at 0).
    fn trace_objective(&self) -> f64 {
        trace_reconstruction(self.x_norm2, &self.w, &self.xht, &self.wtw, &self.hht)
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

/// The parts of the H update (3.10), all k×n row-major but the degrees (length n).
struct HTerms<'a> {
    wtx: &'a [f64],
    wtwh: &'a [f64],
    hs: &'a [f64],
    degree: &'a [f64],
    lambda: f64,
    kn: (usize, usize),
}

impl HTerms<'_> {
    /// `h_aj ← max(h_aj · (WᵀX + λ HS)_aj / max((WᵀWH)_aj + λ d_j h_aj, ε), φ)` for the columns
    /// `cols` of H (k×n row-major in `h`). With λ = 0 the added terms are exact zeros and this
    /// is NMF's rule (3.3) bit for bit.
    fn update(&self, h: &mut [f64], cols: Range<usize>) {
        pulp::Arch::new().dispatch(UpdateJob {
            terms: self,
            h,
            cols,
        });
    }
}

/// [`HTerms::update`] as a pulp job (a struct with an always-inlined body: a closure would be
/// compiled without the wide instructions).
struct UpdateJob<'a, 'b> {
    terms: &'a HTerms<'b>,
    h: &'a mut [f64],
    cols: Range<usize>,
}

impl pulp::WithSimd for UpdateJob<'_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let t = self.terms;
        let (k, n) = t.kn;
        let lambda = t.lambda;
        let d = &t.degree[self.cols.clone()];
        for a in 0..k {
            let seg = a * n + self.cols.start..a * n + self.cols.end;
            let parts = t.wtx[seg.clone()]
                .iter()
                .zip(&t.wtwh[seg.clone()])
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

/// `hs ← H·S` for the symmetric S, and `Tr(H L Hᵀ) = ½ Σ_a Σ_c Σ_{r ∈ S_c} S_cr (h_ac − h_ar)²`
/// (3.9), in one pass over the nonzeros of S for each row a of H (k×n row-major; O(nnz·k)).
///
/// Column c of H·S is gathered from row c of S (S = Sᵀ): `Σ_r S_cr h_ar`, in the stored
/// (ascending) order of row c, each row of H read from cache. The trace is a sum of
/// nonnegative terms, so it has no cancellation error (`d_c h_ac² − h_ac (HS)_ac` would); it is
/// zero exactly when H is constant on every connected part of the graph.
pub(crate) fn graph_pass(s: &Csr, h: &[f64], (k, n): (usize, usize), hs: &mut [f64]) -> f64 {
    let mut trace = 0.0;
    for a in 0..k {
        let row = &h[a * n..(a + 1) * n];
        let out = &mut hs[a * n..(a + 1) * n];
        let mut lanes = [0.0f64; 4];
        for (c, o) in out.iter_mut().enumerate() {
            let (cols, vals) = s.row(c);
            let hc = row[c];
            let (mut acc, mut tr) = (0.0, 0.0);
            for (&r, &v) in cols.iter().zip(vals) {
                let hr = row[r];
                acc += v * hr;
                let diff = hc - hr;
                tr += v * (diff * diff);
            }
            *o = acc;
            lanes[c % 4] += tr;
        }
        trace += (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    }
    0.5 * trace
}

impl Model for Gnmf {
    fn kind(&self) -> ModelKind {
        super::KIND
    }

    fn step(&mut self) -> Result<Objective, ModelError> {
        // 1. H ← H ⊙ (WᵀX + λHS) ⊘ max(WᵀW H + λHD, ε); WᵀW is cached from the previous W
        //    update, H·S from the end of the previous iteration.
        gram_times(&mut self.wtwh, &self.wtw, &self.h);
        if self.reference || !self.blocked_h_step() {
            self.reference_h_step();
        }
        // 2. H·S and Tr(H L Hᵀ) of the new H.
        self.refresh_graph_products();
        // 3. W ← W ⊙ (XHᵀ) ⊘ max(W HHᵀ, ε).
        w_step(&mut self.w, &self.xht, &self.hht, &mut self.whht);
        // New WᵀW: the objective's Gram term now, the next H update's denominator later.
        gram_of_columns(&mut self.wtw.view_mut(), self.w.view());
        self.iteration += 1;
        // 4. The objective.
        self.recon = if self.iteration.is_multiple_of(EXACT_EVERY) {
            self.residual
                .norm2(&self.data.x, &self.w, &self.h, self.reference)
        } else {
            self.trace_objective()
        };
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

    /// Unit-norm W columns, H rows rescaled so WH is unchanged (docs/models.md (3.7), as NMF
    /// and Cai's code); the products follow H, the reported objective stays the last iterate's.
    fn finish(&mut self) {
        let (recon, smoothness) = (self.recon, self.smoothness);
        normalize_w_columns(&mut self.w, &mut self.h);
        self.refresh_products();
        (self.recon, self.smoothness) = (recon, smoothness);
    }

    fn graph(&self) -> Option<Arc<Csr>> {
        Some(Arc::clone(&self.graph))
    }
}

#[cfg(test)]
mod tests;
