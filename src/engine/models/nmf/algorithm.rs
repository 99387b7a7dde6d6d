use super::init::random_wh;
use crate::engine::data::Dataset;
use crate::engine::linalg::{Op, gemm_into};
use crate::engine::models::{EPS_DIV, Model, ModelError, ModelKind, ModelSpec, Objective};
use ndarray::{Array2, ArrayView2, ArrayViewMut2, Zip, s};
use std::sync::Arc;

/// Recompute the objective exactly (from the residual, in column blocks) every this many
/// iterations, bounding the cancellation error of the trace identity (MODELS.md §10.5).
const EXACT_EVERY: usize = 50;
/// Column block of the exact residual: the buffer is m × EXACT_BLOCK, never m × n.
const EXACT_BLOCK: usize = 256;

/// Euclidean NMF, `min ‖X − WH‖²_F` s.t. W, H ≥ 0 (MODELS.md §3.1).
///
/// One [`Model::step`] is H ← H ⊙ (WᵀX) ⊘ max(WᵀW H, ε), then W ← W ⊙ (XHᵀ) ⊘ max(W HHᵀ, ε).
/// All products go to preallocated workspaces; nothing m×n is formed. The objective comes from
/// the trace identity ‖X‖² − 2⟨W, XHᵀ⟩ + ⟨WᵀW, HHᵀ⟩, reusing XHᵀ and HHᵀ of the W update and
/// the new WᵀW (which the next H update reuses too), so monitoring costs O(mk²).
pub struct Nmf {
    data: Arc<Dataset>,
    w: Array2<f64>,
    h: Array2<f64>,
    /// ‖X‖²_F.
    x_norm2: f64,
    // Workspaces.
    wtx: Array2<f64>,           // k×n  WᵀX
    wtw: Array2<f64>,           // k×k  WᵀW (of the current W)
    wtwh: Array2<f64>,          // k×n  WᵀW H
    xht: Array2<f64>,           // m×k  XHᵀ (of the current H)
    hht: Array2<f64>,           // k×k  HHᵀ (of the current H)
    whht: Array2<f64>,          // m×k  W HHᵀ
    residual: Option<Vec<f64>>, // m×EXACT_BLOCK, allocated on first exact recomputation
    iteration: usize,
    objective: f64,
}

impl Nmf {
    /// Seeded initial W, H (MODELS.md §3.1 [C]); fails on an all-zero X.
    pub fn new(data: Arc<Dataset>, spec: &ModelSpec) -> Result<Self, ModelError> {
        let (m, n) = data.x.dim();
        let k = spec.k;
        let mean = data.x.mean().unwrap_or(0.0);
        if !(mean > 0.0 && mean.is_finite()) {
            return Err(ModelError::BadData {
                why: "X is all zeros (or not finite): nothing to factorize".into(),
            });
        }
        let (w, h) = random_wh(m, n, k, mean, spec.seed);
        Ok(Self::from_factors(data, w, h))
    }

    /// Start from given factors (tests, warm starts). Entries are clamped to ≥ 1e-16 so that
    /// none locks at zero (MODELS.md §10.1).
    pub fn from_factors(data: Arc<Dataset>, w: Array2<f64>, h: Array2<f64>) -> Self {
        let (m, n) = data.x.dim();
        let k = w.ncols();
        let x_norm2 = data.x.iter().map(|v| v * v).sum();
        let mut s = Self {
            w: w.mapv(|v| v.max(1e-16)),
            h: h.mapv(|v| v.max(1e-16)),
            x_norm2,
            wtx: Array2::zeros((k, n)),
            wtw: Array2::zeros((k, k)),
            wtwh: Array2::zeros((k, n)),
            xht: Array2::zeros((m, k)),
            hht: Array2::zeros((k, k)),
            whht: Array2::zeros((m, k)),
            residual: None,
            iteration: 0,
            objective: f64::NAN,
            data,
        };
        s.refresh_products();
        s.objective = s.trace_objective();
        s
    }

    /// WᵀW, XHᵀ and HHᵀ of the current factors.
    fn refresh_products(&mut self) {
        gemm_into(
            &mut self.wtw.view_mut(),
            1.0,
            self.w.view(),
            Op::T,
            self.w.view(),
            Op::N,
            false,
        );
        self.refresh_h_products();
    }

    /// XHᵀ and HHᵀ of the current H: the W update's numerator and Gram matrix, reused by the
    /// trace-identity objective.
    fn refresh_h_products(&mut self) {
        gemm_into(
            &mut self.xht.view_mut(),
            1.0,
            self.data.x.view(),
            Op::N,
            self.h.view(),
            Op::T,
            false,
        );
        gemm_into(
            &mut self.hht.view_mut(),
            1.0,
            self.h.view(),
            Op::N,
            self.h.view(),
            Op::T,
            false,
        );
    }

    /// ‖X‖² − 2⟨W, XHᵀ⟩ + ⟨WᵀW, HHᵀ⟩ from the cached products (clamped at 0).
    fn trace_objective(&self) -> f64 {
        let cross: f64 = Zip::from(&self.w)
            .and(&self.xht)
            .fold(0.0, |acc, &a, &b| acc + a * b);
        let gram: f64 = Zip::from(&self.wtw)
            .and(&self.hht)
            .fold(0.0, |acc, &a, &b| acc + a * b);
        (self.x_norm2 - 2.0 * cross + gram).max(0.0)
    }

    /// ‖X − WH‖²_F computed from the residual, in column blocks (no m×n temporary).
    pub fn exact_objective(&mut self) -> f64 {
        let (m, n) = self.data.x.dim();
        let block = EXACT_BLOCK.min(n.max(1));
        let buf = self.residual.get_or_insert_with(|| vec![0.0; m * block]);
        let mut total = 0.0;
        let mut start = 0;
        while start < n {
            let end = (start + block).min(n);
            let len = end - start;
            // A contiguous m×len view of the buffer, so the GEMM writes in place.
            let Ok(mut r) = ArrayViewMut2::from_shape((m, len), &mut buf[..m * len]) else {
                return f64::NAN;
            };
            r.assign(&self.data.x.slice(s![.., start..end]));
            let hb = self.h.slice(s![.., start..end]);
            gemm_into(&mut r, -1.0, self.w.view(), Op::N, hb, Op::N, true);
            total += r.iter().map(|v| v * v).sum::<f64>();
            start = end;
        }
        total
    }
}

/// Floor of a factor entry after an update: the smallest normal f64. Without it, entries that
/// MU drives towards zero become subnormal after a few thousand iterations and every GEMM that
/// reads them takes a microcode assist (measured on digits, k = 10: 0.19 ms per iteration up to
/// iteration 3000, 1.2 ms per iteration averaged over 15,000). Only entries below 2.2e-308
/// change, so results are otherwise bit-identical.
pub(crate) const FLOOR: f64 = f64::MIN_POSITIVE;

/// `z ← max(z ⊙ num ⊘ max(den, ε), FLOOR)` in one pass (the multiplicative rule, MODELS.md §1).
pub(crate) fn mu_update(z: &mut Array2<f64>, num: &Array2<f64>, den: &Array2<f64>) {
    Zip::from(z)
        .and(num)
        .and(den)
        .for_each(|z, &a, &b| *z = (*z * (a / b.max(EPS_DIV))).max(FLOOR));
}

impl Model for Nmf {
    fn kind(&self) -> ModelKind {
        ModelKind::Nmf
    }

    fn step(&mut self) -> Result<Objective, ModelError> {
        let x = self.data.x.view();
        // H ← H ⊙ (WᵀX) ⊘ max(WᵀW H, ε); WᵀW is cached from the previous W update.
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
            &mut self.wtwh.view_mut(),
            1.0,
            self.wtw.view(),
            Op::N,
            self.h.view(),
            Op::N,
            false,
        );
        mu_update(&mut self.h, &self.wtx, &self.wtwh);
        // W ← W ⊙ (XHᵀ) ⊘ max(W HHᵀ, ε).
        self.refresh_h_products();
        gemm_into(
            &mut self.whht.view_mut(),
            1.0,
            self.w.view(),
            Op::N,
            self.hht.view(),
            Op::N,
            false,
        );
        mu_update(&mut self.w, &self.xht, &self.whht);
        // New WᵀW: the objective's Gram term now, the next H update's denominator later.
        gemm_into(
            &mut self.wtw.view_mut(),
            1.0,
            self.w.view(),
            Op::T,
            self.w.view(),
            Op::N,
            false,
        );
        self.iteration += 1;
        self.objective = if self.iteration.is_multiple_of(EXACT_EVERY) {
            self.exact_objective()
        } else {
            self.trace_objective()
        };
        Ok(self.objective())
    }

    fn h(&self) -> ArrayView2<'_, f64> {
        self.h.view()
    }

    fn w(&self) -> Option<ArrayView2<'_, f64>> {
        Some(self.w.view())
    }

    fn objective(&self) -> Objective {
        Objective::single("reconstruction", self.objective)
    }

    /// Unit-norm W columns, H rows rescaled so WH is unchanged (Cai's convention, §3.1/§10.3).
    fn finish(&mut self) {
        normalize_w_columns(&mut self.w, &mut self.h);
        self.refresh_products();
    }
}

/// `w_:a ← w_:a/ν_a`, `h_a: ← ν_a h_a:` with `ν_a = max(‖w_:a‖, 1e-15)` (MODELS.md §3.1).
pub(crate) fn normalize_w_columns(w: &mut Array2<f64>, h: &mut Array2<f64>) {
    for a in 0..w.ncols() {
        let nu = w
            .column(a)
            .iter()
            .map(|v| v * v)
            .sum::<f64>()
            .sqrt()
            .max(1e-15);
        w.column_mut(a).mapv_inplace(|v| v / nu);
        h.row_mut(a).mapv_inplace(|v| v * nu);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn planted(m: usize, n: usize, k: usize, seed: u64) -> (Array2<f64>, Array2<f64>, Array2<f64>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let w = Array2::from_shape_simple_fn((m, k), || rng.r#gen::<f64>());
        let h = Array2::from_shape_simple_fn((k, n), || rng.r#gen::<f64>());
        let x = w.dot(&h);
        (x, w, h)
    }

    fn dataset(x: Array2<f64>) -> Arc<Dataset> {
        Arc::new(Dataset::from_parts(x, None, vec![], "test"))
    }

    #[test]
    fn trace_identity_matches_the_direct_objective() {
        let (x, _, _) = planted(30, 40, 4, 1);
        let mut model =
            Nmf::new(dataset(x.clone()), &ModelSpec::new(ModelKind::Nmf, 4, 7)).expect("model");
        for _ in 0..7 {
            let trace = model.step().expect("step").total;
            let direct = (&x - &model.w.dot(&model.h)).mapv(|v| v * v).sum();
            assert!(
                (trace - direct).abs() <= 1e-9 * direct.max(1.0),
                "{trace} vs {direct}"
            );
            assert!((model.exact_objective() - direct).abs() <= 1e-9 * direct.max(1.0));
        }
    }

    #[test]
    fn objective_never_increases_and_planted_factorization_is_recovered() {
        let (x, _, _) = planted(40, 60, 3, 2);
        let x_norm2 = x.mapv(|v| v * v).sum();
        let mut model = Nmf::new(dataset(x), &ModelSpec::new(ModelKind::Nmf, 3, 3)).expect("model");
        let mut prev = model.objective().total;
        for t in 0..3000 {
            let f = model.step().expect("step").total;
            assert!(
                f <= prev * (1.0 + 1e-12) + 1e-12,
                "iteration {t}: {f} > {prev}"
            );
            prev = f;
        }
        // Exact nonnegative rank-3 data: relative error must become small.
        assert!(prev / x_norm2 < 1e-4, "relative error {}", prev / x_norm2);
    }

    #[test]
    fn same_seed_gives_identical_h_and_finish_keeps_wh() {
        let (x, _, _) = planted(10, 12, 2, 4);
        let d = dataset(x);
        let run = |seed| {
            let mut m =
                Nmf::new(Arc::clone(&d), &ModelSpec::new(ModelKind::Nmf, 2, seed)).expect("m");
            for _ in 0..20 {
                m.step().expect("step");
            }
            let before = m.w.dot(&m.h);
            m.finish();
            let after = m.w.dot(&m.h);
            assert!((&before - &after).mapv(f64::abs).sum() < 1e-9);
            for c in m.w.columns() {
                assert!((c.dot(&c).sqrt() - 1.0).abs() < 1e-12);
            }
            m.h.clone()
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }

    #[test]
    fn all_zero_data_is_refused() {
        let r = Nmf::new(
            dataset(Array2::zeros((3, 4))),
            &ModelSpec::new(ModelKind::Nmf, 2, 0),
        );
        assert!(matches!(r, Err(ModelError::BadData { .. })));
    }
}
