//! The FNMF iteration of docs/models.md §5.4 (see the module above for the math).

use super::params::FnmfParams;
use crate::engine::data::Dataset;
use crate::engine::linalg::graph::graph_pass;
use crate::engine::linalg::thin::{ChunkRows, XhtAccumulator, wt_x_into};
use crate::engine::linalg::{
    argmax_rows,
    Csr, Op, adaptive_graph, for_each_part, gemm_into, gram_of_columns, weighted_simplex_qp,
};
use crate::engine::models::mu::{FLOOR, gram_times, mu_update, normalize_w_columns, start_wh};
use crate::engine::models::{
    Export, Model, ModelError, ModelKind, ModelSpec, Objective, Outputs, SampleValues, Term,
};
use ndarray::{Array2, ArrayView2, Axis};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// What the sample values of [`Model::outputs`] call the values.
pub(crate) const DOMINANT_NAME: &str = "dominant component";
/// Relative floor of the Θ step's curvature a (docs/models.md §5.4, step 1).
const A_FLOOR: f64 = 1e-12;
/// Samples per part of the pass over X and R that forms q (parts run on the fit's threads).
const PASS_COLS: usize = 2048;
/// Columns per block of the `Y Hᵀ` product: the block's packed Hᵀ (16 lanes) is 512 KB.
const YHT_BLOCK: usize = 4096;
/// Features per part of the pass that forms Y.
const PASS_ROWS: usize = 16;
/// Relative floor of the P step's q (docs/models.md §5.4, step 2).
const Q_FLOOR: f64 = 1e-12;
/// At most this many dropped features are named in the note.
const NAMED_MAX: usize = 20;

/// Feature-weighted NMF (docs/models.md §5).
///
/// Workspaces: Y (m×n, the size of X; R = WH is formed a chunk at a time inside the passes
/// that read it, never stored), the k×n and m×k products of the MU
/// steps, and the r×m / r×n / m×r arrays of the Θ and P steps (r ≤ 10). Nothing n×n dense: the
/// graph is sparse (at most 2pn nonzeros). Per iteration three products of cost O(mnk)
/// (Y Hᵀ, Wᵀ Y, W H, on the thin kernels) and four passes over the m×n arrays of cost
/// O(r·mn) (q with the next Θ step's a and c, q of the new Θ, Y), plus O(nnz(S)·k) for the graph and O(r·m log m) for the QPs.
pub struct Fnmf {
    data: Arc<Dataset>,
    params: FnmfParams,
    /// S: the symmetrised adaptive-neighbour graph (n×n, zero diagonal).
    graph: Arc<Csr>,
    /// `d_S = S1`.
    degree: Vec<f64>,
    /// Features (rows of X) that are nonzero in some sample; θ is zero elsewhere.
    kept: Vec<usize>,
    /// Features that are zero in every sample.
    dropped: Vec<usize>,
    w: Array2<f64>,
    h: Array2<f64>,
    /// Θ, r×m: row j is θ_j (on the simplex over the kept features).
    theta: Array2<f64>,
    /// P, n×r: row i is p_i (on the simplex).
    p: Array2<f64>,
    // Workspaces.
    y: Array2<f64>,      // m×n  Y = Σ_j Θ_j X diag(p_:j²)
    q: Array2<f64>,      // r×n  q_ji = ‖θ_j ⊙ x_i − r_i‖²
    a: Array2<f64>,      // r×m  a_jt = Σ_i p_ij² x_ti²
    c: Array2<f64>,      // r×m  c_jt = Σ_i p_ij² x_ti R_ti
    d: Vec<f64>,         // n    d_i = Σ_j p_ij²
    yht: Array2<f64>,    // m×k  Y Hᵀ
    hd: Array2<f64>,     // k×n  H diag(d)
    hdht: Array2<f64>,   // k×k  H D Hᵀ
    whdh: Array2<f64>,   // m×k  W (H D Hᵀ)
    wty: Array2<f64>,    // k×n  Wᵀ Y
    wtw: Array2<f64>,    // k×k  Wᵀ W
    wtwh: Array2<f64>,   // k×n  Wᵀ W H
    hs: Array2<f64>,     // k×n  H·S
    xht: XhtAccumulator, // Y Hᵀ's lane sums (m×k padded) and a block's packed Hᵀ
    order: Vec<usize>,   // the QP's sort workspace
    iteration: usize,
    /// Σ_ij p_ij² q_ij of the current iterate.
    fit: f64,
    /// Tr(H L Hᵀ) of the current H (not weighted by β).
    smoothness: f64,
}

impl Fnmf {
    /// Start from a spec: W, H from the warm start or NMF's seeded draw ([`start_wh`]), Θ and P
    /// from Dirichlet(1) (docs/models.md §5.3), the adaptive-neighbour graph of X (§2.2). Fails
    /// on an X that is all zeros or not finite.
    pub fn start(
        data: Arc<Dataset>,
        spec: &ModelSpec,
        params: FnmfParams,
    ) -> Result<Self, ModelError> {
        let (m, n) = data.x.dim();
        let mean = data.x.mean().unwrap_or(0.0);
        if !(mean > 0.0 && mean.is_finite()) {
            return Err(ModelError::BadData {
                why: "X is all zeros (or not finite): nothing to factorize".into(),
            });
        }
        // The graph's squared distances are at most 4·max‖x_i‖²: refuse data where they overflow.
        let top = data
            .x
            .columns()
            .into_iter()
            .map(|c| c.dot(&c))
            .fold(0.0, f64::max);
        if !(4.0 * top).is_finite() {
            return Err(ModelError::BadData {
                why: "values too large: squared distances between samples overflow".into(),
            });
        }
        let graph = Arc::new(adaptive_graph(data.x.view(), params.neighbors));
        // WH starts at the magnitude of ΘX (θ spreads 1 over the kept features), not of X.
        let kept = (0..m)
            .filter(|&t| data.x.row(t).iter().any(|&v| v != 0.0))
            .count()
            .max(1);
        let (w, h) = start_wh(spec, m, n, mean / kept as f64);
        let (theta, p) = dirichlet_start(&data.x, params.components, spec.seed);
        Ok(Self::with_factors(data, params, graph, w, h, theta, p))
    }

    /// Start from these factors exactly (θ is set to 0 on the all-zero features and each row
    /// renormalised; the rows of P are taken as given).
    fn with_factors(
        data: Arc<Dataset>,
        params: FnmfParams,
        graph: Arc<Csr>,
        w: Array2<f64>,
        h: Array2<f64>,
        mut theta: Array2<f64>,
        p: Array2<f64>,
    ) -> Self {
        let (m, n) = data.x.dim();
        let k = w.ncols();
        let r = params.components;
        let (kept, dropped): (Vec<usize>, Vec<usize>) =
            (0..m).partition(|&t| data.x.row(t).iter().any(|&v| v != 0.0));
        for &t in &dropped {
            theta.column_mut(t).fill(0.0);
        }
        for mut row in theta.rows_mut() {
            let s = row.sum();
            if s > 0.0 {
                row.mapv_inplace(|v| v / s);
            }
        }
        let mut s = Self {
            degree: graph.row_sums(),
            graph,
            params,
            kept,
            dropped,
            w,
            h,
            theta,
            p,
            y: Array2::zeros((m, n)),
            q: Array2::zeros((r, n)),
            a: Array2::zeros((r, m)),
            c: Array2::zeros((r, m)),
            d: vec![0.0; n],
            yht: Array2::zeros((m, k)),
            hd: Array2::zeros((k, n)),
            hdht: Array2::zeros((k, k)),
            whdh: Array2::zeros((m, k)),
            wty: Array2::zeros((k, n)),
            wtw: Array2::zeros((k, k)),
            wtwh: Array2::zeros((k, n)),
            hs: Array2::zeros((k, n)),
            xht: XhtAccumulator::new(m, k),
            order: Vec::with_capacity(m),
            iteration: 0,
            fit: f64::NAN,
            smoothness: f64::NAN,
            data,
        };
        s.refresh_graph_products();
        s.refresh_reconstruction();
        s
    }

    /// The checked hyperparameters.
    pub fn params(&self) -> FnmfParams {
        self.params
    }

    /// Θ (r×m): row j is the feature weighting θ_j, zero on the dropped all-zero features.
    pub fn theta(&self) -> ArrayView2<'_, f64> {
        self.theta.view()
    }

    /// P (n×r): row i is sample i's soft assignment to the components.
    pub fn p(&self) -> ArrayView2<'_, f64> {
        self.p.view()
    }

    /// The features left out because they are zero in every sample.
    pub fn dropped_features(&self) -> &[usize] {
        &self.dropped
    }

    /// H·S and Tr(H L Hᵀ) of the current H (GNMF's pass over the nonzeros of S).
    fn refresh_graph_products(&mut self) {
        let (k, n) = self.h.dim();
        let (Some(h), Some(hs)) = (self.h.as_slice(), self.hs.as_slice_mut()) else {
            self.smoothness = f64::NAN;
            return;
        };
        self.smoothness = graph_pass(&self.graph, h, (k, n), hs);
    }

    /// q of the current Θ and R = WH with the next Θ step's a and c (one pass), and the
    /// weighted fit Σ p_ij² q_ij.
    fn refresh_reconstruction(&mut self) {
        self.refresh_q_and_sums();
        let mut fit = 0.0;
        for (j, qj) in self.q.rows().into_iter().enumerate() {
            fit += qj
                .iter()
                .zip(self.p.column(j))
                .map(|(&q, &p)| p * p * q)
                .sum::<f64>();
        }
        self.fit = fit;
    }

    /// `q_ji = Σ_t (θ_jt x_ti − R_ti)²`, summed directly (no cancellation), one pass over X for
    /// all components, R = WH formed from W and H a chunk at a time: O((r + k)·mn).
    fn refresh_q(&mut self) {
        let x = &self.data.x;
        let (w, h) = (self.w.as_standard_layout(), self.h.as_standard_layout());
        let (Some(xs), Some(ws), Some(hs), Some(theta)) = (
            x.as_slice(),
            w.as_slice(),
            h.as_slice(),
            self.theta.as_slice(),
        ) else {
            return;
        };
        let f = passes::Factors {
            w: ws,
            h: hs,
            k: h.nrows(),
        };
        let n = x.ncols();
        self.q.fill(0.0);
        // Parts of PASS_COLS samples: each q_ji is summed over the features in order, so
        // the bits do not depend on the split or the thread count.
        let parts: Vec<_> = self
            .q
            .axis_chunks_iter_mut(Axis(1), PASS_COLS)
            .enumerate()
            .collect();
        for_each_part(parts, |_, (part, mut q)| {
            let mut rows: Vec<&mut [f64]> = q
                .rows_mut()
                .into_iter()
                .filter_map(|row| row.into_slice())
                .collect();
            passes::q_columns((xs, n), f, theta, part * PASS_COLS, &mut rows);
        });
    }

    /// q of the current Θ and R (the bits of [`Self::refresh_q`]) and, in the same pass over X
    /// and R, the next Θ step's `a_jt = Σ_i p_ij² x_ti²` and `c_jt = Σ_i p_ij² x_ti R_ti` of
    /// the current P and R: in parts of PASS_COLS samples, each part's share of a and c summed
    /// alone and the shares added in part order, so the bits do not depend on the split or the
    /// thread count.
    fn refresh_q_and_sums(&mut self) {
        let x = &self.data.x;
        let rr = self.params.components;
        let p2 = self.p_squared();
        let (w, h) = (self.w.as_standard_layout(), self.h.as_standard_layout());
        let (Some(xs), Some(ws), Some(hs), Some(theta)) = (
            x.as_slice(),
            w.as_slice(),
            h.as_slice(),
            self.theta.as_slice(),
        ) else {
            return;
        };
        let f = passes::Factors {
            w: ws,
            h: hs,
            k: h.nrows(),
        };
        let (m, n) = x.dim();
        let per_part = (m * rr).max(1);
        self.q.fill(0.0);
        let mut shares = vec![(0.0, 0.0); n.div_ceil(PASS_COLS) * per_part];
        let parts: Vec<_> = self
            .q
            .axis_chunks_iter_mut(Axis(1), PASS_COLS)
            .zip(shares.chunks_mut(per_part))
            .enumerate()
            .collect();
        for_each_part(parts, |_, (part, (mut q, share))| {
            let mut rows: Vec<&mut [f64]> = q
                .rows_mut()
                .into_iter()
                .filter_map(|row| row.into_slice())
                .collect();
            passes::q_and_sums((xs, n), f, theta, &p2, part * PASS_COLS, &mut rows, share);
        });
        self.a.fill(0.0);
        self.c.fill(0.0);
        for share in shares.chunks(per_part) {
            for (t, s) in share.chunks(rr).enumerate() {
                for (j, &(a, c)) in s.iter().enumerate() {
                    self.a[[j, t]] += a;
                    self.c[[j, t]] += c;
                }
            }
        }
    }

    /// `p_ij²`, r rows of n.
    fn p_squared(&self) -> Vec<Vec<f64>> {
        (0..self.params.components)
            .map(|j| self.p.column(j).iter().map(|v| v * v).collect())
            .collect()
    }

    /// The Θ step (docs/models.md §5.4, step 1): θ_1 … θ_r in turn by the exact weighted
    /// simplex QP over the kept features, each with the freshest others in b, from a and c of
    /// the current P and R (formed with q at the end of the previous iteration, or at the
    /// start). Fails (state unchanged) when a coefficient is not finite.
    fn theta_step(&mut self) -> Result<(), ModelError> {
        if self.data.x.as_slice().is_none() {
            return Err(ModelError::BadData {
                why: "X is not stored contiguously".into(),
            });
        }
        let rr = self.params.components;
        let lambda = self.params.lambda;
        let nk = self.kept.len();
        let mut sum = vec![0.0; nk];
        for j in 0..rr {
            for (s, &t) in sum.iter_mut().zip(&self.kept) {
                *s += self.theta[[j, t]];
            }
        }
        let (mut a, mut b, mut th) = (vec![0.0; nk], vec![0.0; nk], vec![0.0; nk]);
        for j in 0..rr {
            let top = self
                .kept
                .iter()
                .map(|&t| self.a[[j, t]])
                .fold(0.0, f64::max);
            let floor = (A_FLOOR * top).max(f64::MIN_POSITIVE);
            for (u, &t) in self.kept.iter().enumerate() {
                a[u] = self.a[[j, t]].max(floor);
                b[u] = lambda * (sum[u] - self.theta[[j, t]]) - 2.0 * self.c[[j, t]];
            }
            if weighted_simplex_qp(&a, &b, &mut th, &mut self.order).is_none() {
                return Err(ModelError::Diverged {
                    iteration: self.iteration + 1,
                    what: format!(
                        "the Θ step of component {} met a non-finite coefficient",
                        j + 1
                    ),
                });
            }
            for (u, &t) in self.kept.iter().enumerate() {
                // Weights below the MU floor are zero for every purpose: flushed, so that no
                // product with them is subnormal (slow).
                if th[u] < FLOOR {
                    th[u] = 0.0;
                }
                sum[u] += th[u] - self.theta[[j, t]];
                self.theta[[j, t]] = th[u];
            }
        }
        Ok(())
    }

    /// The P step (docs/models.md §5.4, step 2) from the current q: `p_ij ∝ 1/max(q_ij, ε_q)`.
    fn p_step(&mut self) -> Result<(), ModelError> {
        let (rr, n) = self.q.dim();
        let mean = self.q.mean().unwrap_or(0.0);
        if !mean.is_finite() {
            return Err(ModelError::Diverged {
                iteration: self.iteration + 1,
                what: "the P step met a non-finite residual".into(),
            });
        }
        let floor = (Q_FLOOR * mean).max(f64::MIN_POSITIVE);
        for i in 0..n {
            let mut total = 0.0;
            for j in 0..rr {
                let inv = 1.0 / self.q[[j, i]].max(floor);
                self.p[[i, j]] = inv;
                total += inv;
            }
            for j in 0..rr {
                // Floored at the MU floor 2⁻³⁰⁰ (a shift of the sum by at most r·2⁻³⁰⁰) so that
                // p² and its products stay normal: subnormal arithmetic is slow.
                self.p[[i, j]] = (self.p[[i, j]] / total).max(FLOOR);
            }
        }
        Ok(())
    }

    /// `Y_ti = x_ti Σ_j θ_jt p_ij²` and `d_i = Σ_j p_ij²` (docs/models.md §5.4, step 3).
    fn form_y(&mut self) {
        let (m, n) = self.data.x.dim();
        let rr = self.params.components;
        for i in 0..n {
            self.d[i] = (0..rr).map(|j| self.p[[i, j]] * self.p[[i, j]]).sum();
        }
        let p2 = self.p_squared();
        let (Some(xs), Some(theta)) = (self.data.x.as_slice(), self.theta.as_slice()) else {
            return;
        };
        let Some(ys) = self.y.as_slice_mut() else {
            return;
        };
        // Parts of PASS_ROWS features (rows of Y), each entry computed alone: the same bits
        // for any split.
        let parts: Vec<_> = ys.chunks_mut((PASS_ROWS * n).max(1)).enumerate().collect();
        for_each_part(parts, |_, (part, y)| {
            passes::y_rows(xs, n, (theta, m), &p2, part * PASS_ROWS, y);
        });
        debug_assert_eq!(m, self.y.nrows());
    }

    /// `W ← W ⊙ (Y Hᵀ) ⊘ max(W (H D Hᵀ), ε)` (docs/models.md §5.4, step 3).
    fn w_step(&mut self) {
        let n = self.h.ncols();
        if let (Some(ys), Some(hs), Some(out)) = (
            self.y.as_slice(),
            self.h.as_slice(),
            self.yht.as_slice_mut(),
        ) {
            // The thin kernel by column blocks, its rows split over the fit's threads.
            self.xht.set_all_columns(ys, hs, n, YHT_BLOCK);
            self.xht.write_into(out);
        } else {
            gemm_into(
                &mut self.yht.view_mut(),
                1.0,
                self.y.view(),
                Op::N,
                self.h.view(),
                Op::T,
                false,
            );
        }
        for (mut row, hrow) in self.hd.rows_mut().into_iter().zip(self.h.rows()) {
            for ((o, &hv), &dv) in row.iter_mut().zip(hrow.iter()).zip(&self.d) {
                *o = hv * dv;
            }
        }
        gemm_into(
            &mut self.hdht.view_mut(),
            1.0,
            self.hd.view(),
            Op::N,
            self.h.view(),
            Op::T,
            false,
        );
        gemm_into(
            &mut self.whdh.view_mut(),
            1.0,
            self.w.view(),
            Op::N,
            self.hdht.view(),
            Op::N,
            false,
        );
        mu_update(&mut self.w, &self.yht, &self.whdh);
    }

    /// `H ← H ⊙ (Wᵀ Y + β H S) ⊘ max(Wᵀ W H D + β H D_S, ε)` with the new W and H·S of the
    /// current H (docs/models.md §5.4, step 4); then H·S and Tr(H L Hᵀ) of the new H.
    fn h_step(&mut self) {
        wt_x_into(&mut self.wty, &self.w, &self.y, ChunkRows::Streaming);
        gram_of_columns(&mut self.wtw.view_mut(), self.w.view());
        gram_times(&mut self.wtwh, &self.wtw, &self.h);
        let beta = self.params.beta;
        let (k, n) = self.h.dim();
        for a in 0..k {
            for i in 0..n {
                let num = self.wty[[a, i]] + beta * self.hs[[a, i]];
                let den = self.wtwh[[a, i]] * self.d[i] + beta * self.degree[i] * self.h[[a, i]];
                // Stored as the rule's numerator and denominator for mu_update below.
                self.wty[[a, i]] = num;
                self.wtwh[[a, i]] = den;
            }
        }
        mu_update(&mut self.h, &self.wty, &self.wtwh);
        self.refresh_graph_products();
    }

    /// λ Σ_{j<l} θ_jᵀ θ_l.
    fn diversity(&self) -> f64 {
        let rr = self.params.components;
        let mut total = 0.0;
        for j in 0..rr {
            for l in j + 1..rr {
                total += self.theta.row(j).dot(&self.theta.row(l));
            }
        }
        self.params.lambda * total
    }

    /// The objective's three terms of the current iterate.
    fn objective_of(&self) -> Objective {
        let graph = self.params.beta * self.smoothness;
        let diversity = self.diversity();
        Objective {
            total: self.fit + graph + diversity,
            terms: vec![
                Term {
                    name: "weighted_fit".into(),
                    value: self.fit,
                },
                Term {
                    name: "graph".into(),
                    value: graph,
                },
                Term {
                    name: "diversity".into(),
                    value: diversity,
                },
            ],
        }
    }
}

/// θ_j (r×m) and the rows of P (n×r) drawn from Dirichlet(1) (normalised exponentials), from
/// stream 1 of `ChaCha8Rng::seed_from_u64(seed)` (stream 0 draws W and H), θ first, row by row
/// (docs/models.md §5.3). θ is drawn over all m features; the all-zero ones are zeroed after.
fn dirichlet_start(x: &Array2<f64>, r: usize, seed: u64) -> (Array2<f64>, Array2<f64>) {
    let (m, n) = x.dim();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(1);
    let mut draw = |rows: usize, cols: usize| {
        let mut z = Array2::from_shape_simple_fn((rows, cols), || -(1.0 - rng.r#gen::<f64>()).ln());
        for mut row in z.rows_mut() {
            let s = row.sum();
            if s > 0.0 {
                row.mapv_inplace(|v| v / s);
            } else {
                row.fill(1.0 / cols as f64);
            }
        }
        z
    };
    let theta = draw(r, m);
    let p = draw(n, r);
    (theta, p)
}

impl Model for Fnmf {
    fn kind(&self) -> ModelKind {
        super::KIND
    }

    fn step(&mut self) -> Result<Objective, ModelError> {
        // 1. Θ (with R = WH of the current W, H, kept from the previous iteration).
        self.theta_step()?;
        // 2. P from q of the new Θ.
        self.refresh_q();
        self.p_step()?;
        // 3. Y, d and W.
        self.form_y();
        self.w_step();
        // 4. H with the new W, then H·S and the graph term.
        self.h_step();
        self.iteration += 1;
        // 5. R = WH, q and the objective.
        self.refresh_reconstruction();
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

    /// Unit-norm W columns, H rows rescaled so WH is unchanged (docs/models.md §10.3); H·S
    /// follows H, the reported objective stays the last iterate's.
    fn finish(&mut self) {
        let smoothness = self.smoothness;
        normalize_w_columns(&mut self.w, &mut self.h);
        self.refresh_graph_products();
        self.smoothness = smoothness;
    }

    fn notes(&self) -> Vec<String> {
        if self.dropped.is_empty() {
            return Vec::new();
        }
        let named: Vec<String> = self
            .dropped
            .iter()
            .take(NAMED_MAX)
            .map(|t| t.to_string())
            .collect();
        let more = if self.dropped.len() > NAMED_MAX {
            format!(" … ({} in all)", self.dropped.len())
        } else {
            String::new()
        };
        let (noun, verb) = if self.dropped.len() == 1 {
            ("feature", "is")
        } else {
            ("features", "are")
        };
        vec![format!(
            "{noun} {}{more} {verb} zero in every sample and were left out of the feature \
             weights (their θ is 0; counted from 0, docs/models.md §5.3)",
            named.join(", ")
        )]
    }

    /// The dominant component of each sample: the argmax of its row of P (first on ties).
    fn outputs(&self) -> Outputs {
        Outputs {
            values: Some(SampleValues {
                name: DOMINANT_NAME,
                values: argmax_rows(self.p.view())
                    .into_iter()
                    .map(|j| j as f64)
                    .collect(),
            }),
            graph: Some(Arc::clone(&self.graph)),
            feature_weights: Some(("Theta", self.theta.clone())),
            ..Outputs::default()
        }
    }

    fn exports(&self) -> Vec<Export> {
        vec![
            Export {
                name: "Theta",
                array: self.theta.clone(),
            },
            Export {
                name: "P",
                array: self.p.clone(),
            },
        ]
    }
}

#[path = "passes.rs"]
mod passes;

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
