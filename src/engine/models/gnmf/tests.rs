use super::*;
use crate::engine::linalg::graph::graph_pass;
use crate::engine::constraints::SideInfo;
use crate::engine::jobs::experiment::{FitOptions, StopReason, fit};
use crate::engine::linalg::GraphWeight;
use crate::engine::models::gnmf::KIND;
use crate::engine::models::mu::fd;
use crate::engine::models::nmf::{self, Nmf};
use crate::engine::models::{ParamValue, WarmStart, build};
use ndarray::{Array2, array};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::ops::ControlFlow;

fn dataset(x: Array2<f64>) -> Arc<Dataset> {
    Arc::new(Dataset::from_parts(x, None, vec![], "test"))
}

fn random(m: usize, n: usize, seed: u64) -> Array2<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Array2::from_shape_simple_fn((m, n), || rng.r#gen::<f64>())
}

fn spec(k: usize, seed: u64, lambda: f64) -> ModelSpec {
    ModelSpec::new(KIND, k, seed).with("lambda", ParamValue::Number(lambda))
}

/// GNMF from a spec on `data`, its graph from fresh side information.
fn gnmf(data: &Arc<Dataset>, spec: &ModelSpec) -> Gnmf {
    let params = GnmfParams::from_checked(&spec.validate(data.m(), data.n()).unwrap()).unwrap();
    let graph = SideInfo::default().graph(data, params.neighbors, params.weight);
    Gnmf::start(Arc::clone(data), spec, params, graph).unwrap()
}

fn bits(a: &Array2<f64>) -> Vec<u64> {
    a.iter().map(|v| v.to_bits()).collect()
}

/// Six iterations of NMF and of GNMF with λ = 0 from the same seed: the same W, H and
/// objective, bit for bit, after every iteration.
fn assert_lambda_zero_is_nmf(data: &Arc<Dataset>, k: usize, path: Option<(bool, usize)>) {
    let mut a = Nmf::new(Arc::clone(data), &ModelSpec::new(nmf::KIND, k, 4)).unwrap();
    let mut b = gnmf(data, &spec(k, 4, 0.0));
    if let Some((reference, block)) = path {
        a.force_path(reference, block);
        (b.mu.work.reference, b.mu.work.x_block) = (reference, block);
    }
    assert_eq!(b.mu.work.reference, path.map_or(b.mu.work.reference, |p| p.0));
    for t in 0..6 {
        let (fa, fb) = (a.step().unwrap(), b.step().unwrap());
        assert_eq!(bits(&b.mu.h), bits(&a.h().to_owned()), "H after iteration {t}");
        assert_eq!(
            bits(&b.mu.work.w),
            bits(&a.w().unwrap().to_owned()),
            "W after iteration {t}"
        );
        assert_eq!(fa.total.to_bits(), fb.total.to_bits(), "objective {t}");
        assert_eq!(fb.terms[1].value, 0.0);
        assert!(b.smoothness > 0.0, "the graph term is computed, only weighted by 0");
    }
}

#[test]
fn lambda_zero_gives_nmfs_iterates_bit_for_bit_on_the_reference_path() {
    let data = dataset(random(30, 80, 1));
    let b = gnmf(&data, &spec(4, 4, 0.0));
    assert!(b.mu.work.reference, "small X takes the reference step");
    assert_lambda_zero_is_nmf(&data, 4, None);
}

#[test]
fn lambda_zero_gives_nmfs_iterates_bit_for_bit_on_the_blocked_pass() {
    // 1024×600 is above the 4 MiB of FUSED_MIN_BYTES: NMF's own choice is the blocked pass.
    let data = dataset(random(1024, 600, 2));
    let b = gnmf(&data, &spec(5, 4, 0.0));
    assert!(!b.mu.work.reference);
    assert_lambda_zero_is_nmf(&data, 5, None);
    // Several blocks and a ragged last one (403 = 6·64 + 19), on a small X.
    let data = dataset(random(20, 403, 3));
    assert_lambda_zero_is_nmf(&data, 7, Some((false, 64)));
}

#[test]
fn blocked_pass_matches_the_reference_step_with_the_graph() {
    let data = dataset(random(25, 403, 5));
    let run = |reference: bool| {
        let mut m = gnmf(&data, &spec(6, 2, 3.0));
        (m.mu.work.reference, m.mu.work.x_block) = (reference, 64);
        let obj: Vec<f64> = (0..100).map(|_| m.step().unwrap().total).collect();
        (m.mu.work.w.clone(), m.mu.h.clone(), obj)
    };
    let (w0, h0, f0) = run(true);
    let (w1, h1, f1) = run(false);
    let rel = |a: &Array2<f64>, b: &Array2<f64>| {
        ((a - b).mapv(|v| v * v).sum() / b.mapv(|v| v * v).sum()).sqrt()
    };
    assert!(rel(&w1, &w0) < 1e-10 && rel(&h1, &h0) < 1e-10);
    for (a, b) in f1.iter().zip(&f0) {
        assert!((a - b).abs() <= 1e-10 * b.abs());
    }
    assert_eq!(run(false).1, h1, "repeatable bit for bit");
}

/// X = [[1, 2, 3], [1, 2, 3]], p = 1: sample 0 → 1, 1 → 0 (tie with 2, smaller index), 2 → 1,
/// so S is the path 0 – 1 – 2 and d = (1, 2, 1). From W = (1, 1)ᵀ, H = (1, 1, 1), λ = 1, by
/// hand: WᵀX = (2, 4, 6), WᵀWH = (2, 2, 2), HS = (1, 2, 1), HD = (1, 2, 1), so
/// H′ = (3/3, 6/4, 7/3); then XH′ᵀ = 11 and H′H′ᵀ = 313/36 give W′ = 396/313 in both rows; the
/// graph term is (1 − 3/2)² + (3/2 − 7/3)² = 17/18 and ‖X − W′H′‖² = 52/313.
#[test]
fn one_step_on_a_tiny_problem_gives_the_hand_computed_values() {
    let data = dataset(array![[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]);
    let init = WarmStart::new(Some(array![[1.0], [1.0]]), array![[1.0, 1.0, 1.0]], "hand");
    let s = spec(1, 0, 1.0)
        .with("neighbors", ParamValue::Number(1.0))
        .with_init(Arc::new(init));
    let mut m = gnmf(&data, &s);
    assert_eq!(m.graph.to_dense(), array![[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]);
    let f = m.step().unwrap();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-15 * b.abs().max(1.0);
    for (got, want) in m.mu.h.iter().zip([1.0, 1.5, 7.0 / 3.0]) {
        assert!(close(*got, want), "H {got} vs {want}");
    }
    for got in m.mu.work.w.iter() {
        assert!(close(*got, 396.0 / 313.0), "W {got}");
    }
    assert_eq!(f.terms[0].name, "reconstruction");
    assert_eq!(f.terms[1].name, "graph");
    // The trace identity (3.5) subtracts from ‖X‖² = 28: a few ulp of 28 on a value of 0.17.
    assert!((f.terms[0].value - 52.0 / 313.0).abs() < 1e-12, "{:?}", f.terms);
    assert!(close(f.terms[1].value, 17.0 / 18.0), "{:?}", f.terms);
    assert!((f.total - (52.0 / 313.0 + 17.0 / 18.0)).abs() < 1e-12);
}

/// The update of docs/models.md (3.10)–(3.11) written plainly with dense matrices (S, D, L
/// from the graph), for comparison with the model started from the same given factors.
struct Plain {
    x: Array2<f64>,
    s: Array2<f64>,
    d: Array2<f64>,
    lambda: f64,
    w: Array2<f64>,
    h: Array2<f64>,
}

impl Plain {
    fn step(&mut self) {
        let rule = |z: &mut Array2<f64>, num: Array2<f64>, den: Array2<f64>| {
            ndarray::Zip::from(z)
                .and(&num)
                .and(&den)
                .for_each(|z, &a, &b| *z = (*z * a / b.max(1e-12)).max(FLOOR_PLAIN));
        };
        let (w, x) = (&self.w, &self.x);
        let num = w.t().dot(x) + self.lambda * self.h.dot(&self.s);
        let den = w.t().dot(w).dot(&self.h) + self.lambda * self.h.dot(&self.d);
        rule(&mut self.h, num, den);
        let num = x.dot(&self.h.t());
        let den = self.w.dot(&self.h.dot(&self.h.t()));
        rule(&mut self.w, num, den);
    }

    fn objective(&self) -> (f64, f64) {
        let r = &self.x - &self.w.dot(&self.h);
        let l = &self.d - &self.s;
        let tr = self.h.dot(&l).dot(&self.h.t()).diag().sum();
        (r.mapv(|v| v * v).sum(), self.lambda * tr)
    }
}

const FLOOR_PLAIN: f64 = 4.909_093_465_297_727e-91;

#[test]
fn a_warm_start_follows_the_documented_updates() {
    let x = random(12, 40, 6);
    let data = dataset(x.clone());
    let (w0, h0) = (random(12, 3, 7), random(3, 40, 8));
    for weight in ["binary", "heat", "cosine"] {
        let init = WarmStart::new(Some(w0.clone()), h0.clone(), "given");
        let s = spec(3, 0, 2.5)
            .with("weight", ParamValue::Choice(weight))
            .with_init(Arc::new(init));
        let mut m = gnmf(&data, &s);
        assert_eq!((&m.mu.work.w, &m.mu.h), (&w0, &h0), "used exactly as given");
        let s_dense = m.graph.to_dense();
        let mut plain = Plain {
            d: Array2::from_diag(&s_dense.sum_axis(ndarray::Axis(1))),
            s: s_dense,
            x: x.clone(),
            lambda: 2.5,
            w: w0.clone(),
            h: h0.clone(),
        };
        for t in 0..2 {
            let f = m.step().unwrap();
            plain.step();
            let rel = |a: &Array2<f64>, b: &Array2<f64>| (a - b).mapv(f64::abs).sum() / b.sum();
            assert!(rel(&m.mu.h, &plain.h) < 1e-12, "{weight} H step {t}");
            assert!(rel(&m.mu.work.w, &plain.w) < 1e-12, "{weight} W step {t}");
            let (r, g) = plain.objective();
            assert!((f.terms[0].value - r).abs() < 1e-10 * r, "{weight} {t}");
            assert!((f.terms[1].value - g).abs() < 1e-10 * g, "{weight} {t}");
        }
    }
}

/// The multiplicative split is the gradient: `2 (den − num)` of (3.10) equals ∇_H F by central
/// differences, F from the model's own terms (the trace (3.9) by the graph pass).
#[test]
fn the_h_update_splits_the_gradient_of_the_objective() {
    let x = random(8, 30, 9);
    let data = dataset(x.clone());
    let mut m = gnmf(&data, &spec(3, 1, 0.7).with("weight", ParamValue::Choice("heat")));
    m.step().unwrap();
    let (k, n) = m.mu.h.dim();
    let (w, graph, lambda) = (m.mu.work.w.clone(), Arc::clone(&m.graph), 0.7);
    let f = |h: &Array2<f64>| {
        let mut hs = vec![0.0; k * n];
        let tr = graph_pass(&graph, h.as_slice().unwrap(), (k, n), &mut hs);
        (&x - &w.dot(h)).mapv(|v| v * v).sum() + lambda * tr
    };
    let h = m.mu.h.clone();
    let mut hs = Array2::zeros((k, n));
    graph_pass(&graph, h.as_slice().unwrap(), (k, n), hs.as_slice_mut().unwrap());
    let hd = &h * &Array2::from_shape_fn((k, n), |(_, j)| m.degree[j]);
    let num = w.t().dot(&x) + lambda * &hs;
    let den = w.t().dot(&w).dot(&h) + lambda * &hd;
    let analytic = 2.0 * (den - num);
    let numeric = fd::gradient(f, &h, 1e-6);
    assert!(fd::relative_error(&analytic, &numeric) < 1e-6);
}

/// ORL faces 32×32 (`../shared/data/orl_32x32`, unit-norm samples, k = 40): the objective never
/// rises over 150 iterations, and the graph term ends far below NMF's for the same start.
#[test]
fn objective_never_increases_on_orl() {
    let Some(data) = crate::engine::models::testkit::public_set("orl_32x32", &Default::default()) else {
        return;
    };
    assert_eq!((data.m(), data.n()), (1024, 400));
    let mut m = gnmf(&data, &spec(40, 1, 100.0));
    let mut prev = m.objective().total;
    for t in 0..150 {
        let f = m.step().unwrap().total;
        assert!(f <= prev * (1.0 + 1e-12), "iteration {t}: {f} > {prev}");
        prev = f;
    }
    let mut free = gnmf(&data, &spec(40, 1, 0.0));
    for _ in 0..150 {
        free.step().unwrap();
    }
    assert!(
        m.smoothness < 0.5 * free.smoothness,
        "{} vs NMF {}",
        m.smoothness,
        free.smoothness
    );
}

/// Two groups of samples, each a p = 2 clique of its own: a large λ makes the codes all but
/// constant on each group (Tr(H L Hᵀ) → 0), while each group keeps its own code.
#[test]
fn a_large_lambda_makes_codes_constant_on_each_connected_part() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let x = Array2::from_shape_fn((6, 6), |(r, c)| {
        let group = usize::from(c >= 3);
        if r / 3 == group { 1.0 + 0.3 * rng.r#gen::<f64>() } else { 0.01 }
    });
    let data = dataset(x);
    let s = spec(2, 5, 1e4).with("neighbors", ParamValue::Number(2.0));
    let mut m = gnmf(&data, &s);
    let d = m.graph.to_dense();
    assert!((0..3).all(|i| (3..6).all(|j| d[[i, j]] == 0.0)), "two parts: {d}");
    for _ in 0..3000 {
        m.step().unwrap();
    }
    let h = &m.mu.h;
    let spread = |cols: Range<usize>, a: usize| {
        let v: Vec<f64> = cols.map(|j| h[[a, j]]).collect();
        let hi = v.iter().fold(f64::MIN, |p, &q| p.max(q));
        let lo = v.iter().fold(f64::MAX, |p, &q| p.min(q));
        (hi - lo) / hi.max(1e-300)
    };
    for a in 0..2 {
        assert!(spread(0..3, a) < 1e-3 && spread(3..6, a) < 1e-3, "{h}");
    }
    let (c0, c1) = (h.column(0), h.column(3));
    assert!((c0[0] - c1[0]).abs() + (c0[1] - c1[1]).abs() > 0.1, "{h}");
}

/// A non-finite iterate gives a non-finite objective (the trace identity's `∞ − ∞` is kept,
/// docs/models.md §10.4), also with λ = 0, where the graph term is weighted by 0.
#[test]
fn a_non_finite_iterate_gives_a_non_finite_objective() {
    let data = dataset(random(6, 10, 11));
    for lambda in [0.0, 10.0] {
        for (in_w, bad) in [(true, f64::INFINITY), (false, f64::INFINITY), (false, f64::NAN)] {
            let mut m = gnmf(&data, &spec(2, 0, lambda));
            m.step().unwrap();
            if in_w {
                m.mu.work.w[[1, 0]] = bad;
            } else {
                m.mu.h[[1, 3]] = bad;
            }
            m.refresh_products();
            m.recon = m.mu.trace_recon();
            assert!(!m.objective().is_finite(), "λ {lambda}, W {in_w}, {bad}");
        }
    }
}

/// Data whose squared norm overflows (each sample's does not, so the graph is still built):
/// the fit loop stops at the first iteration with the divergence message, keeping the history
/// (empty) and naming the objective.
#[test]
fn an_overflowing_objective_stops_the_fit_with_a_message() {
    let data = dataset(random(4, 100, 15).mapv(|v| 1.5e153 * (1.0 + 0.1 * v)));
    assert!(data.x.column(0).dot(&data.x.column(0)).is_finite());
    let mut m = gnmf(&data, &spec(2, 0, 1.0));
    let err = fit(&mut m, &FitOptions::default(), |_, _, _| ControlFlow::Continue(()))
        .expect_err("diverges");
    let msg = err.to_string();
    assert!(msg.contains("diverged at iteration 1") && msg.contains("objective is"), "{msg}");
    assert!(err.record.objective.is_empty());
}

#[test]
fn cancelling_stops_the_fit_after_the_current_iteration() {
    let data = dataset(random(10, 30, 12));
    let mut m = gnmf(&data, &spec(3, 0, 1.0));
    let out = crate::engine::jobs::experiment::fit_cancelled_at(&mut m, 3);
    assert_eq!(out.stop, StopReason::Cancelled);
    assert_eq!(out.record.iterations(), 3);
    assert_eq!(m.mu.iteration, 3);
    // finish() ran: unit-norm W columns.
    assert!(m.mu.work.w.columns().into_iter().all(|c| (c.dot(&c) - 1.0).abs() < 1e-12));
}

/// Through the worker (the app's path): the graph is built on the job's thread, and Cancel
/// ends a long run within a fraction of a second.
#[test]
fn a_worker_job_can_be_cancelled() {
    use crate::engine::jobs::worker::{Job, JobId};
    use std::time::Duration;
    let data = dataset(random(100, 300, 13));
    let job = Job::new(
        JobId(1),
        data,
        spec(5, 1, 100.0),
        FitOptions {
            max_iter: 10_000_000,
            tol: 0.0,
        },
    );
    crate::engine::jobs::worker::testing::assert_cancels_within(job, Duration::from_millis(500));
}

#[test]
fn the_registry_builds_it_with_its_graph_and_the_same_seed_repeats() {
    let data = dataset(random(9, 50, 14));
    let side = SideInfo::default();
    let s = spec(3, 8, 10.0).with("weight", ParamValue::Choice("cosine"));
    let run = || {
        let mut m = build(&s, Arc::clone(&data), &side).unwrap();
        for _ in 0..20 {
            m.step().unwrap();
        }
        m.finish();
        (m.h().to_owned(), m.outputs().graph.unwrap())
    };
    let (h1, g1) = run();
    let (h2, g2) = run();
    assert_eq!(h1, h2);
    assert!(Arc::ptr_eq(&g1, &g2), "the side information's graph, built once");
    assert!(Arc::ptr_eq(&g1, &side.graph(&data, 5, GraphWeight::Cosine)));
    assert!(g1.is_symmetric() && g1.nnz() >= 5 * 50 && g1.nnz() <= 10 * 50);
    assert_eq!(KIND.needs(), crate::engine::models::SideNeed::KnnGraph);
    assert_eq!(crate::engine::models::ModelKind::from_name("gnmf"), Some(KIND));
}

/// The typed parameters read the table: its defaults (the defaults protocol's λ, docs/models.md
/// §9; Cai's 100 stays as the preset) and given values, the weight by its option name.
#[test]
fn typed_parameters_read_the_table() {
    use crate::engine::linalg::GraphWeight;
    use crate::engine::models::ParamValue;
    use crate::engine::models::gnmf::{GnmfParams, KIND, params::PRESETS};
    assert_eq!(PRESETS[0].values, &[("lambda", ParamValue::Number(100.0))]);
    let p = GnmfParams::defaults().unwrap();
    assert_eq!((p.lambda, p.neighbors, p.weight), (10.0, 5, GraphWeight::Binary));
    let spec = crate::engine::models::ModelSpec::new(KIND, 2, 0)
        .with("weight", ParamValue::Choice("heat"))
        .with("neighbors", ParamValue::Number(3.0));
    let p = GnmfParams::from_checked(&spec.checked().unwrap()).unwrap();
    assert_eq!((p.weight, p.neighbors), (GraphWeight::Heat, 3));
}
