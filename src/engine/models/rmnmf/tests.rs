use super::*;
use crate::engine::constraints::SideInfo;
use crate::engine::jobs::experiment::{FitOptions, StopReason, fit};
use crate::engine::linalg::GraphWeight;
use crate::engine::models::rmnmf::KIND;
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

/// `groups` groups of `per` samples in m = 4·groups features, group c on its own four
/// features (plus noise): the clusters a model should find exactly.
fn clustered(groups: usize, per: usize, seed: u64) -> (Array2<f64>, Vec<usize>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = groups * per;
    let truth: Vec<usize> = (0..n).map(|i| i / per).collect();
    let x = Array2::from_shape_fn((4 * groups, n), |(r, c)| {
        let on = r / 4 == truth[c];
        if on { 1.0 + 0.5 * rng.r#gen::<f64>() } else { 0.05 * rng.r#gen::<f64>() }
    });
    (x, truth)
}

fn spec(k: usize, seed: u64, lambda: f64, mu0: f64) -> ModelSpec {
    ModelSpec::new(KIND, k, seed)
        .with("lambda", ParamValue::Number(lambda))
        .with("mu0", ParamValue::Number(mu0))
}

/// RMNMF from a spec on `data`, its graph from fresh side information.
fn rmnmf(data: &Arc<Dataset>, spec: &ModelSpec) -> Rmnmf {
    let params = RmnmfParams::from_checked(&spec.validate(data.m(), data.n()).unwrap()).unwrap();
    let graph = SideInfo::default().graph(data, params.neighbors, GraphWeight::Binary);
    Rmnmf::start(Arc::clone(data), spec, params, graph).unwrap()
}

/// The inverse of a small symmetric positive definite matrix by Gauss–Jordan elimination.
fn inverse(a: &Array2<f64>) -> Array2<f64> {
    let k = a.nrows();
    let mut m = a.clone();
    let mut inv = Array2::eye(k);
    for c in 0..k {
        let p = m[[c, c]];
        for j in 0..k {
            m[[c, j]] /= p;
            inv[[c, j]] /= p;
        }
        for r in 0..k {
            if r != c {
                let f = m[[r, c]];
                for j in 0..k {
                    m[[r, j]] -= f * m[[c, j]];
                    inv[[r, j]] -= f * inv[[c, j]];
                }
            }
        }
    }
    inv
}

/// The plain reference of (3.41)–(3.47): m×n layout, ndarray's products, a dense Laplacian,
/// its own shrinkage loop, the Gram solve by Gauss–Jordan in the first iteration.
struct Plain {
    x: Array2<f64>,
    l: Array2<f64>,
    lambda: f64,
    sign: f64,
    rho: f64,
    mu: f64,
    first: bool,
    w: Array2<f64>,
    g: Array2<f64>,
    z: Array2<f64>,
    e: Array2<f64>,
    gamma: Array2<f64>,
    sigma: Array2<f64>,
}

impl Plain {
    fn new(x: &Array2<f64>, graph: &Csr, p: RmnmfParams, g: Array2<f64>) -> Self {
        let s = graph.to_dense();
        let d = Array2::from_diag(&s.sum_axis(ndarray::Axis(1)));
        let w = x.dot(&g).dot(&inverse(&g.t().dot(&g)));
        let (m, n) = x.dim();
        let k = g.ncols();
        Self {
            x: x.clone(),
            l: &d - &s,
            lambda: p.lambda,
            sign: if p.legacy_sign { 1.0 } else { -1.0 },
            rho: p.rho,
            mu: p.mu0,
            first: true,
            w,
            z: g.mapv(|v| v.max(0.0)),
            g,
            e: Array2::zeros((m, n)),
            gamma: Array2::zeros((m, n)),
            sigma: Array2::zeros((n, k)),
        }
    }

    fn step(&mut self) {
        let (mu, lam) = (self.mu, self.lambda);
        let mut e = &self.x - &self.w.dot(&self.g.t()) + &self.gamma / mu;
        for mut col in e.columns_mut() {
            let norm = col.dot(&col).sqrt();
            let scale = (1.0 - (1.0 / mu) / norm).max(0.0);
            col.mapv_inplace(|v| v * scale);
        }
        self.e = e;
        let b = &self.x - &self.e + &self.gamma / mu;
        self.w = b.dot(&self.g);
        if self.first {
            self.w = self.w.dot(&inverse(&self.g.t().dot(&self.g)));
            self.first = false;
        }
        self.z = (&self.g + &self.sigma / mu - &self.l.dot(&self.g) * (lam / mu))
            .mapv(|v| v.max(0.0));
        let k = b.t().dot(&self.w) + &self.z - &self.sigma / mu
            + &self.l.dot(&self.z) * (self.sign * lam / mu);
        self.g = procrustes(k.view()).unwrap();
        self.gamma = &self.gamma + &((&self.x - &self.w.dot(&self.g.t()) - &self.e) * mu);
        self.sigma = &self.sigma + &((&self.g - &self.z) * mu);
        self.mu = (self.mu * self.rho).min(MU_MAX);
    }

    /// ‖X − W Gᵀ‖_{2,1} + λ Tr(Gᵀ L G).
    fn objective(&self) -> f64 {
        let r = &self.x - &self.w.dot(&self.g.t());
        let l21: f64 = r.columns().into_iter().map(|c| c.dot(&c).sqrt()).sum();
        l21 + self.lambda * self.g.t().dot(&self.l).dot(&self.g).diag().sum()
    }
}

fn max_rel(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    let scale = b.iter().fold(0.0f64, |p, v| p.max(v.abs())).max(1e-300);
    (a - b).iter().fold(0.0f64, |p, v| p.max(v.abs())) / scale
}

/// Follow the plain reference for `iters` iterations from the model's own start.
fn assert_follows_plain(m: &mut Rmnmf, x: &Array2<f64>, iters: usize) {
    let mut p = Plain::new(x, &m.graph, m.params, m.g.clone());
    assert!(max_rel(&m.w, &p.w) < 1e-12, "start W");
    for t in 0..iters {
        let f = m.step().unwrap().total;
        p.step();
        let (dw, dg, dz) = (max_rel(&m.w, &p.w), max_rel(&m.g, &p.g), max_rel(&m.z, &p.z));
        let de = max_rel(&m.et.t().to_owned(), &p.e);
        let dgam = max_rel(&m.gammat.t().to_owned(), &p.gamma);
        let ds = max_rel(&m.sigma, &p.sigma);
        for (what, d) in [("W", dw), ("G", dg), ("Z", dz), ("E", de), ("Γ", dgam), ("Σ", ds)] {
            assert!(d < 1e-8, "{what} after iteration {t}: {d}");
        }
        assert!((f - p.objective()).abs() <= 1e-9 * f.abs(), "F {t}");
        assert_eq!(m.mu(), p.mu);
    }
}

/// The iterates (W, G, Z, E, Γ, Σ, μ and F) follow the plain reference from the k-means start,
/// with the derived sign and with `legacy_sign`, and the two signs give different fits.
#[test]
fn iterates_follow_the_plain_reference_with_both_signs() {
    let (x, _) = clustered(3, 10, 1);
    let x = x + &random(12, 30, 2) * 0.3;
    let data = dataset(x.clone());
    let mut a = rmnmf(&data, &spec(3, 4, 0.5, 0.1));
    assert_follows_plain(&mut a, &x, 20);
    let legacy = spec(3, 4, 0.5, 0.1).with("legacy_sign", ParamValue::Flag(true));
    let mut b = rmnmf(&data, &legacy);
    assert_follows_plain(&mut b, &x, 20);
    assert!(max_rel(&a.g, &b.g) > 1e-6, "the sign of (λ/μ) L Z matters");
}

/// A warm start (G = Hᵀ of `--init`, W by (3.47)) followed against the plain reference, through
/// the registry; the warm H need not be orthonormal.
#[test]
fn a_warm_start_follows_the_plain_reference() {
    let x = random(7, 25, 5);
    let data = dataset(x.clone());
    let h = random(3, 25, 6) + 0.1;
    let s = spec(3, 0, 2.0, 1.0).with_init(Arc::new(WarmStart::new(None, h.clone(), "t")));
    let mut m = rmnmf(&data, &s);
    assert_eq!(m.g, h.t().to_owned(), "G starts as Hᵀ");
    assert_follows_plain(&mut m, &x, 25);
    // Through the registry too (has_w = false: no W is needed for --init).
    let mut r = build(&s, Arc::clone(&data), &SideInfo::default()).unwrap();
    let mut again = rmnmf(&data, &s);
    for _ in 0..5 {
        assert_eq!(r.step().unwrap(), again.step().unwrap());
    }
}

/// One iteration by hand. X = [[3, 0], [0, 4]], k = 1, λ = 0, μ₀ = 1, ρ = 1, G₀ = (1, 1)ᵀ:
/// W₀ = X G₀ / 2 = (1.5, 2), R₀ has two columns of length 2.5, so F₀ = 5 and E = 0.6 R₀
/// (shrinkage by 1); B = X − E; W = B G₀ / 2 = (1.5, 2) again; Z = G₀; K = BᵀW + Z =
/// (6.55, 7.95), G = K/‖K‖; Γ = X − W Gᵀ − E, Σ = G − Z.
#[test]
fn one_iteration_by_hand() {
    let x = array![[3.0, 0.0], [0.0, 4.0]];
    let data = dataset(x.clone());
    let s = spec(1, 0, 0.0, 1.0)
        .with("rho", ParamValue::Number(1.0))
        .with("neighbors", ParamValue::Number(1.0))
        .with_init(Arc::new(WarmStart::new(None, array![[1.0, 1.0]], "t")));
    let mut m = rmnmf(&data, &s);
    assert!(max_rel(&m.w, &array![[1.5], [2.0]]) < 1e-15);
    assert!((m.objective().total - 5.0).abs() < 1e-14);
    let f = m.step().unwrap();
    let e = array![[0.9, -0.9], [-1.2, 1.2]];
    assert!(max_rel(&m.et.t().to_owned(), &e) < 1e-14, "{}", m.et);
    assert!(max_rel(&m.w, &array![[1.5], [2.0]]) < 1e-14, "{}", m.w);
    let norm = (6.55f64 * 6.55 + 7.95 * 7.95).sqrt();
    let g = array![[6.55 / norm], [7.95 / norm]];
    assert!(max_rel(&m.g, &g) < 1e-14, "{}", m.g);
    assert_eq!(m.z, array![[1.0], [1.0]]);
    let r = &x - &array![[1.5], [2.0]].dot(&g.t());
    assert!(max_rel(&m.gammat.t().to_owned(), &(&r - &e)) < 1e-13);
    assert!(max_rel(&m.sigma, &(&g - &array![[1.0], [1.0]])) < 1e-14);
    let l21: f64 = r.columns().into_iter().map(|c| c.dot(&c).sqrt()).sum();
    assert!((f.total - l21).abs() < 1e-13 && f.terms[1].value == 0.0);
    let rz = ((g[[0, 0]] - 1.0).powi(2) + (g[[1, 0]] - 1.0).powi(2)).sqrt();
    assert!((f.terms[3].value - rz).abs() < 1e-14);
    assert_eq!(m.mu(), 1.0, "ρ = 1 keeps μ");
}

/// Two samples joined by the graph (p = 1), X = diag(3, 4), G₀ = I, λ = μ₀ = 1, ρ = 1. By
/// hand: iteration 1 keeps W = X, E = 0 and G = I (K = diag(10, 17)), sets Z = [I − L]_+ =
/// [[0, 1], [1, 0]] and Σ = G − Z = L, so ‖G − Z‖ = 2 and the graph term is Tr(L) = 2;
/// iteration 2 gives Z = [I + L − L]_+ = I and ‖G − Z‖ = 0.
#[test]
fn the_graph_terms_by_hand() {
    let x = array![[3.0, 0.0], [0.0, 4.0]];
    let data = dataset(x.clone());
    let s = spec(2, 0, 1.0, 1.0)
        .with("rho", ParamValue::Number(1.0))
        .with("neighbors", ParamValue::Number(1.0))
        .with_init(Arc::new(WarmStart::new(None, Array2::eye(2), "t")));
    let mut m = rmnmf(&data, &s);
    let f = m.step().unwrap();
    assert_eq!(m.z, array![[0.0, 1.0], [1.0, 0.0]]);
    assert!(max_rel(&m.g, &Array2::eye(2)) < 1e-15 && max_rel(&m.w, &x) < 1e-15);
    assert!(max_rel(&m.sigma, &array![[1.0, -1.0], [-1.0, 1.0]]) < 1e-15);
    assert!((f.terms[3].value - 2.0).abs() < 1e-14 && (f.terms[1].value - 2.0).abs() < 1e-14);
    assert!(f.terms[0].value.abs() < 1e-14 && f.terms[2].value.abs() < 1e-14);
    let f = m.step().unwrap();
    assert!(max_rel(&m.z, &Array2::eye(2)) < 1e-15, "{}", m.z);
    assert!(f.terms[3].value < 1e-14);
}

/// The ALM's primal residuals shrink (by orders of magnitude as μ grows), the fit stops by
/// the model's own rule before the iteration cap, and its labels are the three groups.
#[test]
fn the_alm_residuals_shrink_and_the_labels_are_the_groups() {
    let (x, truth) = clustered(3, 15, 7);
    let data = dataset(x);
    let mut m = rmnmf(&data, &spec(3, 2, 1.0, 0.1));
    let mut early = (0.0, 0.0);
    for t in 0..10 {
        m.step().unwrap();
        if t == 9 {
            early = m.relative_residuals();
        }
    }
    let out = fit(
        &mut m,
        &FitOptions {
            max_iter: 1000,
            tol: 0.0,
        },
        |_, _, _| ControlFlow::Continue(()),
    )
    .unwrap();
    assert_eq!(out.stop, StopReason::Converged, "{:?}", out.notes);
    assert!(m.has_converged() && m.iteration < 1010);
    let (re, rz) = m.relative_residuals();
    assert!(re < RESIDUAL_TOL && rz < RESIDUAL_TOL);
    assert!(re < 1e-3 * early.0 && rz < 1e-3 * early.1, "{early:?} → {re} {rz}");
    let gtg = gemm(m.g.view(), Op::T, m.g.view(), Op::N);
    assert!(max_rel(&gtg, &Array2::eye(3)) < 1e-12);
    let labels = m.outputs().assignments.unwrap();
    let acc = crate::engine::eval::clustering_accuracy(&truth, &labels).unwrap();
    assert_eq!(acc, 1.0, "{labels:?}");
    assert!(out.notes[0].contains("ALM primal residuals"), "{:?}", out.notes);
}

/// Iris (`../shared/data/iris`, unit-norm samples): the residuals fall below the tolerance
/// within 1000 iterations and the labels score well above chance (the PSMF paper: 88.93 %).
#[test]
fn iris_converges_by_its_residuals() {
    let Some(data) = crate::engine::models::testkit::public_set("iris/iris.csv", &Default::default()) else {
        return;
    };
    let mut m = rmnmf(&data, &spec(3, 0, 1.0, 1e-5));
    let out = fit(
        &mut m,
        &FitOptions {
            max_iter: 1000,
            tol: 0.0,
        },
        |_, _, _| ControlFlow::Continue(()),
    )
    .unwrap();
    assert_eq!(out.stop, StopReason::Converged);
    let truth = data.labels.clone().unwrap();
    let acc = crate::engine::eval::clustering_accuracy(&truth, &m.outputs().assignments.unwrap()).unwrap();
    assert!(acc > 0.85, "{acc}");
}

/// A NaN or ∞ in an iterate stops the fit with "diverged at iteration t" (the model's own
/// count) and a message, no
/// panic: in the first iteration at the Gram solve of (3.42), later at the Procrustes step,
/// which refuses it. A non-finite or all-zero X is
/// refused when the model is built.
#[test]
fn non_finite_values_stop_the_fit_with_a_message() {
    let data = dataset(random(5, 20, 9));
    for (warm, bad) in [(0, f64::NAN), (0, f64::INFINITY), (1, f64::NAN), (1, f64::INFINITY)] {
        let mut m = rmnmf(&data, &spec(2, 0, 1.0, 1.0));
        for _ in 0..warm {
            m.step().unwrap();
        }
        m.gammat[[3, 1]] = bad;
        let err = fit(&mut m, &FitOptions::default(), |_, _, _| {
            ControlFlow::Continue(())
        })
        .expect_err("diverges");
        let msg = err.to_string();
        let want = if warm == 0 { "not finite in the W step" } else { "Procrustes step has a non-finite entry" };
        assert!(
            msg.contains(&format!("diverged at iteration {}", warm + 1)) && msg.contains(want),
            "{msg}"
        );
    }
    let mut x = random(5, 20, 9);
    x[[2, 2]] = f64::NAN;
    let e = build(&spec(2, 0, 1.0, 1.0), dataset(x), &SideInfo::default());
    assert!(e.err().unwrap().to_string().contains("non-finite"));
    let e = build(
        &spec(2, 0, 1.0, 1.0),
        dataset(Array2::zeros((5, 20))),
        &SideInfo::default(),
    );
    assert!(e.err().unwrap().to_string().contains("all zeros"));
}

/// Through the worker (the app's path): Cancel ends a long run within a fraction of a second.
#[test]
fn a_worker_job_can_be_cancelled() {
    use crate::engine::jobs::worker::{Command, Event, Job, JobHandle, JobId};
    use std::time::{Duration, Instant};
    let data = dataset(random(60, 200, 13));
    let job = Job::new(JobId(1), data, spec(5, 1, 1.0, 1e-5), FitOptions {
        max_iter: 10_000_000,
        tol: 0.0,
    });
    let (tx, rx) = std::sync::mpsc::channel();
    let h = JobHandle::spawn(job, tx, Arc::new(|| {})).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !matches!(
        rx.recv_timeout(Duration::from_secs(20)),
        Ok(Event::Progress { iteration: 5.., .. })
    ) {
        assert!(Instant::now() < deadline, "no progress");
    }
    h.send(Command::Cancel);
    let t0 = Instant::now();
    loop {
        let ev = rx.recv_timeout(Duration::from_secs(5)).expect("terminal event");
        if ev.is_terminal() {
            assert!(
                matches!(ev, Event::Cancelled { .. } | Event::Finished { .. }),
                "{ev:?}"
            );
            break;
        }
    }
    assert!(t0.elapsed() < Duration::from_millis(500), "{:?}", t0.elapsed());
}

/// The registry builds it with the side information's binary graph; the same seed gives the
/// same bits (H, labels, exports), another seed another k-means start.
#[test]
fn the_registry_builds_it_and_the_same_seed_repeats() {
    let data = dataset(random(9, 50, 14));
    let side = SideInfo::default();
    let run = |seed: u64| {
        let mut m = build(&spec(3, seed, 1.0, 0.1), Arc::clone(&data), &side).unwrap();
        for _ in 0..20 {
            m.step().unwrap();
        }
        m.finish();
        (m.h().to_owned(), m.outputs().assignments.unwrap(), m.exports(), m.outputs().graph.unwrap())
    };
    let (h1, l1, x1, g1) = run(8);
    let (h2, l2, x2, g2) = run(8);
    let bits = |a: &Array2<f64>| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&h1), bits(&h2));
    assert_eq!((l1, x1.len()), (l2, 2));
    assert_eq!(bits(&x1[1].array), bits(&x2[1].array));
    assert_eq!(x1[1].array.dim(), (9, 50));
    assert!(Arc::ptr_eq(&g1, &g2));
    assert!(Arc::ptr_eq(&g1, &side.graph(&data, 5, GraphWeight::Binary)));
    let (h3, ..) = run(9);
    assert_ne!(bits(&h1), bits(&h3));
    assert_eq!(KIND.output(), crate::engine::models::Output::ClusterLabels);
}

/// `laplacian_pass` against the dense L: L Y and Tr(Yᵀ L Y) on a random graph.
#[test]
fn the_laplacian_pass_matches_the_dense_laplacian() {
    let data = dataset(random(4, 40, 21));
    let s = SideInfo::default().graph(&data, 3, GraphWeight::Binary);
    let y = random(40, 4, 22) - 0.5;
    let mut out = Array2::zeros((40, 4));
    let tr = laplacian_pass(&s, &y, &mut out);
    let sd = s.to_dense();
    let l = Array2::from_diag(&sd.sum_axis(ndarray::Axis(1))) - &sd;
    assert!(max_rel(&out, &l.dot(&y)) < 1e-14);
    let want = y.t().dot(&l).dot(&y).diag().sum();
    assert!((tr - want).abs() < 1e-12 * want);
}

/// The typed parameters read the table: its defaults (the defaults protocol's λ and μ₀,
/// docs/models.md §9) and a given flag.
#[test]
fn typed_parameters_read_the_table() {
    use crate::engine::models::rmnmf::{KIND, RmnmfParams};
    let p = RmnmfParams::defaults().unwrap();
    let values = (p.lambda, p.mu0, p.rho, p.neighbors, p.legacy_sign);
    assert_eq!(values, (0.1, 0.01, 1.05, 5, false));
    let spec = crate::engine::models::ModelSpec::new(KIND, 2, 0).with("legacy_sign", crate::engine::models::ParamValue::Flag(true));
    assert!(RmnmfParams::from_checked(&spec.checked().unwrap()).unwrap().legacy_sign);
}
