use super::*;
use crate::engine::constraints::SideInfo;
use crate::engine::eval::kmeans::{KMeansParams, repeated_kmeans};
use crate::engine::eval::metrics::clustering_accuracy;
use crate::engine::jobs::experiment::{FitOptions, StopReason, fit};
use crate::engine::models::fnmf::KIND;
use crate::engine::models::mu::{FLOOR, fd};
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

fn spec(k: usize, seed: u64) -> ModelSpec {
    ModelSpec::new(KIND, k, seed)
}

fn fnmf(data: &Arc<Dataset>, spec: &ModelSpec) -> Fnmf {
    let params = FnmfParams::from_checked(&spec.validate(data.m(), data.n()).unwrap()).unwrap();
    Fnmf::start(Arc::clone(data), spec, params).unwrap()
}

fn bits(a: &Array2<f64>) -> Vec<u64> {
    a.iter().map(|v| v.to_bits()).collect()
}

/// X = [[1, 1], [2, 0]], r = 1, k = 1, W = (1, 1)ᵀ, H = (1, 1): n = 2 leaves the adaptive graph
/// empty (p is capped at n − 2 = 0) and r = 1 makes P = 1 and the diversity 0. By hand:
/// R = 1, a = (2, 4), b = −2·(2, 2), so θ minimises 2θ₀² − 4θ₀ + 4θ₁² − 4θ₁ on the simplex:
/// θ = (2/3, 1/3). Y = θ ⊙ X = [[2/3, 2/3], [2/3, 0]], YHᵀ = (4/3, 2/3)ᵀ, HDHᵀ = 2, so
/// W′ = (2/3, 1/3)ᵀ; W′ᵀY = (2/3, 4/9), W′ᵀW′ = 5/9, so H′ = (6/5, 4/5); the residual
/// θ ⊙ X − W′H′ = [[−2/15, 2/15], [4/15, −4/15]] gives F = 40/225 = 8/45.
#[test]
fn one_step_on_a_tiny_problem_gives_the_hand_computed_values() {
    let data = dataset(array![[1.0, 1.0], [2.0, 0.0]]);
    let init = WarmStart::new(Some(array![[1.0], [1.0]]), array![[1.0, 1.0]], "hand");
    let s = spec(1, 0)
        .with("components", ParamValue::Number(1.0))
        .with_init(Arc::new(init));
    let mut m = fnmf(&data, &s);
    assert_eq!(m.graph.nnz(), 0);
    assert_eq!(m.p, array![[1.0], [1.0]]);
    let f = m.step().unwrap();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-14 * b.abs().max(1.0);
    for (got, want) in m.theta.iter().zip([2.0 / 3.0, 1.0 / 3.0]) {
        assert!(close(*got, want), "θ {got} vs {want}");
    }
    for (got, want) in m.w.iter().zip([2.0 / 3.0, 1.0 / 3.0]) {
        assert!(close(*got, want), "W {got} vs {want}");
    }
    for (got, want) in m.h.iter().zip([1.2, 0.8]) {
        assert!(close(*got, want), "H {got} vs {want}");
    }
    let names: Vec<_> = f.terms.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["weighted_fit", "graph", "diversity"]);
    assert!(close(f.terms[0].value, 8.0 / 45.0), "{:?}", f.terms);
    assert_eq!((f.terms[1].value, f.terms[2].value), (0.0, 0.0));
    assert!(close(f.total, 8.0 / 45.0));
}

/// The iteration of docs/models.md §5.4 written plainly: dense S, Θ by bisection on the
/// multiplier η (§2.4's alternative, independent of the sorted solver), every product by
/// ndarray's `dot`.
struct Plain {
    x: Array2<f64>,
    s: Array2<f64>,
    beta: f64,
    lambda: f64,
    kept: Vec<usize>,
    w: Array2<f64>,
    h: Array2<f64>,
    theta: Array2<f64>,
    p: Array2<f64>,
}

/// argmin Σ a θ² + b θ on the simplex by bisection on η (θ_t = max(0, (η − b_t)/2a_t)).
fn qp_by_bisection(a: &[f64], b: &[f64]) -> Vec<f64> {
    let g = |eta: f64| -> f64 {
        a.iter()
            .zip(b)
            .map(|(&a, &b)| ((eta - b) / (2.0 * a)).max(0.0))
            .sum()
    };
    let mut lo = b.iter().copied().fold(f64::INFINITY, f64::min);
    let mut hi = b.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        + 2.0 * a.iter().copied().fold(0.0, f64::max);
    while g(hi) < 1.0 {
        hi += hi - lo;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if g(mid) < 1.0 { lo = mid } else { hi = mid }
    }
    let eta = 0.5 * (lo + hi);
    a.iter()
        .zip(b)
        .map(|(&a, &b)| ((eta - b) / (2.0 * a)).max(0.0))
        .collect()
}

impl Plain {
    fn q(&self) -> Array2<f64> {
        let (m, n) = self.x.dim();
        let r = self.theta.nrows();
        let wh = self.w.dot(&self.h);
        Array2::from_shape_fn((n, r), |(i, j)| {
            (0..m)
                .map(|t| (self.theta[[j, t]] * self.x[[t, i]] - wh[[t, i]]).powi(2))
                .sum()
        })
    }

    fn objective(&self) -> (f64, f64, f64) {
        let q = self.q();
        let fit = (&self.p * &self.p * &q).sum();
        let d = Array2::from_diag(&self.s.sum_axis(ndarray::Axis(1)));
        let tr = self.h.dot(&(&d - &self.s)).dot(&self.h.t()).diag().sum();
        let r = self.theta.nrows();
        let mut div = 0.0;
        for j in 0..r {
            for l in j + 1..r {
                div += self.theta.row(j).dot(&self.theta.row(l));
            }
        }
        (fit, self.beta * tr, self.lambda * div)
    }

    fn step(&mut self) {
        let (m, n) = self.x.dim();
        let r = self.theta.nrows();
        let wh = self.w.dot(&self.h);
        for j in 0..r {
            let a: Vec<f64> = self
                .kept
                .iter()
                .map(|&t| {
                    (0..n)
                        .map(|i| self.p[[i, j]].powi(2) * self.x[[t, i]].powi(2))
                        .sum::<f64>()
                })
                .collect();
            let top = a.iter().copied().fold(0.0, f64::max);
            let a: Vec<f64> = a.iter().map(|v| v.max(1e-12 * top)).collect();
            let b: Vec<f64> = self
                .kept
                .iter()
                .map(|&t| {
                    let others: f64 = (0..r).filter(|&l| l != j).map(|l| self.theta[[l, t]]).sum();
                    let c: f64 = (0..n)
                        .map(|i| self.p[[i, j]].powi(2) * self.x[[t, i]] * wh[[t, i]])
                        .sum();
                    self.lambda * others - 2.0 * c
                })
                .collect();
            let th = qp_by_bisection(&a, &b);
            for (u, &t) in self.kept.iter().enumerate() {
                self.theta[[j, t]] = if th[u] < FLOOR { 0.0 } else { th[u] };
            }
        }
        let q = self.q();
        let mean = q.mean().unwrap();
        for i in 0..n {
            let inv: Vec<f64> = (0..r).map(|j| 1.0 / q[[i, j]].max(1e-12 * mean)).collect();
            let tot: f64 = inv.iter().sum();
            for (j, v) in inv.iter().enumerate() {
                self.p[[i, j]] = (v / tot).max(FLOOR);
            }
        }
        let p2 = &self.p * &self.p;
        let y = Array2::from_shape_fn((m, n), |(t, i)| {
            (0..r)
                .map(|j| p2[[i, j]] * self.theta[[j, t]] * self.x[[t, i]])
                .sum::<f64>()
        });
        let d = Array2::from_diag(&p2.sum_axis(ndarray::Axis(1)));
        let rule = |z: &mut Array2<f64>, num: Array2<f64>, den: Array2<f64>| {
            ndarray::Zip::from(z)
                .and(&num)
                .and(&den)
                .for_each(|z, &a, &b| *z = (*z * a / b.max(1e-12)).max(FLOOR));
        };
        let num = y.dot(&self.h.t());
        let den = self.w.dot(&self.h.dot(&d).dot(&self.h.t()));
        rule(&mut self.w, num, den);
        let ds = Array2::from_diag(&self.s.sum_axis(ndarray::Axis(1)));
        let num = self.w.t().dot(&y) + self.beta * self.h.dot(&self.s);
        let den = self.w.t().dot(&self.w).dot(&self.h).dot(&d) + self.beta * self.h.dot(&ds);
        rule(&mut self.h, num, den);
    }
}

fn plain_of(m: &Fnmf, x: &Array2<f64>) -> Plain {
    Plain {
        x: x.clone(),
        s: m.graph.to_dense(),
        beta: m.params.beta,
        lambda: m.params.lambda,
        kept: m.kept.clone(),
        w: m.w.clone(),
        h: m.h.clone(),
        theta: m.theta.clone(),
        p: m.p.clone(),
    }
}

/// A warm start (`--init`) is used as given and followed iterate by iterate by the plain
/// reference, with a zero feature left out of Θ.
#[test]
fn a_warm_start_follows_the_plain_reference() {
    let mut x = random(9, 40, 6);
    x.row_mut(4).fill(0.0);
    let data = dataset(x.clone());
    let (w0, h0) = (random(9, 3, 7), random(3, 40, 8));
    let init = WarmStart::new(Some(w0.clone()), h0.clone(), "given");
    let s = spec(3, 2)
        .with("beta", ParamValue::Number(0.7))
        .with("lambda", ParamValue::Number(0.3))
        .with_init(Arc::new(init));
    let mut m = fnmf(&data, &s);
    assert_eq!((&m.w, &m.h), (&w0, &h0), "used exactly as given");
    assert_eq!(m.dropped, [4]);
    let mut plain = plain_of(&m, &x);
    let rel =
        |a: &Array2<f64>, b: &Array2<f64>| (a - b).mapv(f64::abs).sum() / b.mapv(f64::abs).sum();
    for t in 0..4 {
        let f = m.step().unwrap();
        plain.step();
        assert!(rel(&m.theta, &plain.theta) < 1e-9, "Θ step {t}");
        assert!(rel(&m.p, &plain.p) < 1e-9, "P step {t}");
        assert!(rel(&m.w, &plain.w) < 1e-9, "W step {t}");
        assert!(rel(&m.h, &plain.h) < 1e-9, "H step {t}");
        let (fit, g, div) = plain.objective();
        assert!((f.terms[0].value - fit).abs() < 1e-9 * fit, "{t}");
        assert!((f.terms[1].value - g).abs() < 1e-9 * g, "{t}");
        assert!(
            (f.terms[2].value - div).abs() < 1e-9 * div.max(1e-300),
            "{t}"
        );
        assert!(m.theta.column(4).iter().all(|&v| v == 0.0));
    }
}

/// The W and H rules split the gradient of F: `2 (den − num)` equals ∇F by central
/// differences, with F from the plain reference's terms.
#[test]
fn the_w_and_h_updates_split_the_gradient_of_the_objective() {
    let x = random(7, 25, 9);
    let data = dataset(x.clone());
    let mut m = fnmf(&data, &spec(3, 1).with("beta", ParamValue::Number(0.8)));
    m.step().unwrap();
    let plain = plain_of(&m, &x);
    let total = |p: &Plain| {
        let (a, b, c) = p.objective();
        a + b + c
    };
    let (m_, n) = x.dim();
    let r = plain.theta.nrows();
    let p2 = &plain.p * &plain.p;
    let y = Array2::from_shape_fn((m_, n), |(t, i)| {
        (0..r)
            .map(|j| p2[[i, j]] * plain.theta[[j, t]] * x[[t, i]])
            .sum::<f64>()
    });
    let d = Array2::from_diag(&p2.sum_axis(ndarray::Axis(1)));
    let ds = Array2::from_diag(&plain.s.sum_axis(ndarray::Axis(1)));
    let (w, h, beta) = (plain.w.clone(), plain.h.clone(), plain.beta);
    let gw = 2.0 * (w.dot(&h.dot(&d).dot(&h.t())) - y.dot(&h.t()));
    let numeric = fd::gradient(
        |w| {
            total(&Plain {
                w: w.clone(),
                ..plain_of(&m, &x)
            })
        },
        &w,
        1e-6,
    );
    assert!(fd::relative_error(&gw, &numeric) < 1e-6, "W");
    let gh = 2.0
        * (w.t().dot(&w).dot(&h).dot(&d) + beta * h.dot(&ds)
            - w.t().dot(&y)
            - beta * h.dot(&plain.s));
    let numeric = fd::gradient(
        |h| {
            total(&Plain {
                h: h.clone(),
                ..plain_of(&m, &x)
            })
        },
        &h,
        1e-6,
    );
    assert!(fd::relative_error(&gh, &numeric) < 1e-6, "H");
    // And a wrong split is caught.
    assert!(fd::relative_error(&(&gh * 1.1), &numeric) > 1e-3);
}

/// The Θ step is the exact minimiser of F over θ_j on the simplex: moving mass ε between any
/// two kept features of the new θ_j never lowers F (with P, W, H and the other θ fixed). With
/// λ > 0 this holds for the last component (Gauss–Seidel: θ_1 was optimal for the old θ_2);
/// with λ = 0 the components decouple and it holds for all of them.
#[test]
fn the_theta_step_minimises_the_objective_over_the_simplex() {
    let x = random(6, 30, 21);
    let data = dataset(x.clone());
    for (lambda, first) in [(2.0, 2), (0.0, 0)] {
        let mut m = fnmf(
            &data,
            &spec(2, 3).with("lambda", ParamValue::Number(lambda)),
        );
        m.step().unwrap();
        m.theta_step().unwrap();
        let base = plain_of(&m, &x);
        let f0 = {
            let (a, b, c) = base.objective();
            a + b + c
        };
        for j in first..3 {
            for s in 0..6 {
                for t in 0..6 {
                    let eps = 1e-4_f64.min(base.theta[[j, s]]);
                    if s == t || eps <= 0.0 {
                        continue;
                    }
                    let mut p = plain_of(&m, &x);
                    p.theta[[j, s]] -= eps;
                    p.theta[[j, t]] += eps;
                    let (a, b, c) = p.objective();
                    assert!(
                        a + b + c >= f0 - 1e-12 * f0,
                        "λ {lambda} θ_{j}: {s} → {t}: {} vs {f0}, θ {}",
                        a + b + c,
                        base.theta
                    );
                }
            }
        }
    }
}

/// The data of §5.6's synthetic check, our own draw (seeded): 900 samples, 3 classes, the first
/// two features class-specific Gaussians (means (1,1), (4,1), (2.5,4), σ 0.5, clipped at 0)
/// scaled by 0.25, the last five uniform noise on [0, 3]; no preprocessing.
fn synthetic(seed: u64) -> (Arc<Dataset>, Vec<usize>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let means = [(1.0, 1.0), (4.0, 1.0), (2.5, 4.0)];
    let n = 900;
    let labels: Vec<usize> = (0..n).map(|i| i / 300).collect();
    let mut x = Array2::zeros((7, n));
    for i in 0..n {
        let (a, b) = means[labels[i]];
        for (t, mu) in [(0, a), (1, b)] {
            // Box–Muller.
            let (u, v): (f64, f64) = (1.0 - rng.r#gen::<f64>(), rng.r#gen());
            let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
            x[[t, i]] = 0.25 * (mu + 0.5 * z).max(0.0);
        }
        for t in 2..7 {
            x[[t, i]] = 3.0 * rng.r#gen::<f64>();
        }
    }
    (dataset(x), labels)
}

/// ACC of the best of 10 k-means runs on the columns of H.
fn kmeans_acc(h: ArrayView2<'_, f64>, labels: &[usize]) -> f64 {
    let mut p = KMeansParams::new(3);
    p.restarts = 10;
    let runs = repeated_kmeans(h, &p).unwrap();
    clustering_accuracy(labels, &runs.best_run().unwrap().labels).unwrap()
}

/// §5.6's synthetic check ([`synthetic`]): FNMF (r = 3, β = λ = 1 as §5.6 measured it, β set
/// here since the default β is 0.1 (§9), which gives ACC 0.68 on this draw; k = 3, 200
/// iterations) finds the classes and puts most of θ's mass on the two informative features;
/// NMF (same k, seed and iterations) does not. F never increases. (Measured on four draws and
/// seeds: FNMF ACC 0.83–0.86 with 97–99 % of θ on the informative features, NMF 0.34–0.36.)
#[test]
fn the_synthetic_check_finds_the_clusters_where_nmf_does_not() {
    let (data, labels) = synthetic(56);
    let mut m = fnmf(&data, &spec(3, 1).with("beta", ParamValue::Number(1.0)));
    let mut prev = m.objective().total;
    for t in 0..200 {
        let f = m.step().unwrap().total;
        assert!(f <= prev * (1.0 + 1e-12), "iteration {t}: {f} > {prev}");
        prev = f;
    }
    m.finish();
    let fnmf_acc = kmeans_acc(m.h.view(), &labels);
    let informative = m
        .theta
        .columns()
        .into_iter()
        .take(2)
        .map(|c| c.sum())
        .sum::<f64>()
        / 3.0;
    let mut base = Nmf::new(Arc::clone(&data), &ModelSpec::new(nmf::KIND, 3, 1)).unwrap();
    for _ in 0..200 {
        base.step().unwrap();
    }
    base.finish();
    let nmf_acc = kmeans_acc(base.h(), &labels);
    eprintln!(
        "synthetic: FNMF ACC {fnmf_acc:.3} (θ mass on 2 informative {informative:.3}), NMF {nmf_acc:.3}"
    );
    assert!(fnmf_acc > 0.8, "FNMF ACC {fnmf_acc}");
    assert!(
        informative > 0.9,
        "θ mass on the informative features {informative}"
    );
    assert!(nmf_acc < 0.5, "NMF ACC {nmf_acc}");
}

/// ORL faces 32×32 (`../shared/data/orl_32x32`, unit-norm samples, k = 40): the objective never
/// rises over 60 iterations.
#[test]
fn objective_never_increases_on_orl() {
    let Some(data) = crate::engine::models::testkit::public_set("orl_32x32", &Default::default())
    else {
        return;
    };
    assert_eq!((data.m(), data.n()), (1024, 400));
    let mut m = fnmf(&data, &spec(40, 1));
    let mut prev = m.objective().total;
    for t in 0..60 {
        let f = m.step().unwrap().total;
        assert!(f <= prev * (1.0 + 1e-12), "iteration {t}: {f} > {prev}");
        prev = f;
    }
}

/// A non-finite W stops the fit at the first iteration with the divergence message (the Θ
/// step sees the non-finite reconstruction), not a panic.
#[test]
fn a_non_finite_iterate_stops_the_fit_with_a_message() {
    let data = dataset(random(6, 20, 11));
    for bad in [f64::NAN, f64::INFINITY] {
        let mut m = fnmf(&data, &spec(2, 0));
        m.w[[1, 0]] = bad;
        m.refresh_reconstruction();
        let err = fit(&mut m, &FitOptions::default(), |_, _, _| {
            ControlFlow::Continue(())
        })
        .expect_err("diverges");
        let msg = err.to_string();
        assert!(
            msg.contains("diverged at iteration 1") && msg.contains("Θ step"),
            "{msg}"
        );
    }
    // Data whose squared distances overflow is refused when the model is built.
    let data = dataset(random(4, 30, 15).mapv(|v| 1e155 * (1.0 + v)));
    let p = FnmfParams::defaults().unwrap();
    let e = Fnmf::start(data, &spec(2, 0), p).err().expect("refused");
    assert!(e.to_string().contains("too large"), "{e}");
}

#[test]
fn cancelling_stops_the_fit_after_the_current_iteration() {
    let data = dataset(random(10, 30, 12));
    let mut m = fnmf(&data, &spec(3, 0));
    let out = crate::engine::jobs::experiment::fit_cancelled_at(&mut m, 3);
    assert_eq!(out.stop, StopReason::Cancelled);
    assert_eq!(m.iteration, 3);
    assert!(
        m.w.columns()
            .into_iter()
            .all(|c| (c.dot(&c) - 1.0).abs() < 1e-12)
    );
}

/// Through the worker (the app's path): Cancel ends a long run within a fraction of a second.
#[test]
fn a_worker_job_can_be_cancelled() {
    use crate::engine::jobs::worker::{Job, JobId};
    use std::time::Duration;
    let data = dataset(random(100, 300, 13));
    let job = Job::new(
        JobId(1),
        data,
        spec(5, 1),
        FitOptions {
            max_iter: 10_000_000,
            tol: 0.0,
        },
    );
    crate::engine::jobs::worker::testing::assert_cancels_within(job, Duration::from_millis(500));
}

/// Built by the registry: the same seed repeats bit for bit, another seed differs, and the
/// components start (and stay) distinct.
#[test]
fn the_same_seed_repeats_bit_for_bit() {
    let data = dataset(random(9, 50, 14));
    let side = SideInfo::default();
    let run = |seed: u64| {
        let mut m = build(&spec(3, seed), Arc::clone(&data), &side).unwrap();
        for _ in 0..15 {
            m.step().unwrap();
        }
        m.finish();
        let ex = m.exports();
        (m.h().to_owned(), ex[0].array.clone(), ex[1].array.clone())
    };
    let (h1, t1, p1) = run(8);
    let (h2, t2, p2) = run(8);
    assert_eq!(
        (bits(&h1), bits(&t1), bits(&p1)),
        (bits(&h2), bits(&t2), bits(&p2))
    );
    let (h3, _, _) = run(9);
    assert_ne!(bits(&h1), bits(&h3));
    for j in 0..3 {
        for l in j + 1..3 {
            assert!(
                (&t1.row(j) - &t1.row(l)).mapv(f64::abs).sum() > 1e-3,
                "θ_{j} = θ_{l}"
            );
        }
    }
    assert_eq!(
        crate::engine::models::ModelKind::from_name("fnmf"),
        Some(KIND)
    );
}

/// The hooks: exports Θ (r×m) and P (n×r), feature weights, the dominant component per
/// sample, the graph, and the note naming the all-zero features.
#[test]
fn the_hooks_expose_theta_p_the_graph_and_the_dropped_features() {
    let mut x = random(8, 30, 16);
    x.row_mut(2).fill(0.0);
    x.row_mut(5).fill(0.0);
    let data = dataset(x);
    let mut m = fnmf(
        &data,
        &spec(2, 4).with("components", ParamValue::Number(4.0)),
    );
    for _ in 0..5 {
        m.step().unwrap();
    }
    let ex = m.exports();
    assert_eq!((ex[0].name, ex[0].array.dim()), ("Theta", (4, 8)));
    assert_eq!((ex[1].name, ex[1].array.dim()), ("P", (30, 4)));
    assert_eq!(ex[0].array, m.theta().to_owned());
    assert_eq!(ex[1].array, m.p().to_owned());
    for row in m.theta().rows() {
        assert!((row.sum() - 1.0).abs() < 1e-12 && row.iter().all(|&v| v >= 0.0));
        assert_eq!((row[2], row[5]), (0.0, 0.0));
    }
    for row in m.p().rows() {
        assert!((row.sum() - 1.0).abs() < 1e-12 && row.iter().all(|&v| v > 0.0));
    }
    let (name, fw) = m.outputs().feature_weights.unwrap();
    assert_eq!((name, &fw), ("Theta", &m.theta().to_owned()));
    let sv = m.outputs().values.unwrap();
    assert_eq!(sv.name, DOMINANT_NAME);
    for (i, &v) in sv.values.iter().enumerate() {
        let row = m.p.row(i);
        let top = row.iter().copied().fold(0.0, f64::max);
        assert_eq!(row[v as usize], top);
    }
    let g = m.outputs().graph.unwrap();
    assert!(g.is_symmetric() && g.nnz() >= 5 * 30 && g.nnz() <= 10 * 30);
    let notes = m.notes();
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0].starts_with("features 2, 5 are zero in every sample"),
        "{notes:?}"
    );
    assert_eq!(m.dropped_features(), [2, 5]);
    // No zero feature: no note.
    let m = fnmf(&dataset(random(5, 12, 17)), &spec(2, 0));
    assert!(m.notes().is_empty());
    // An all-zero X is refused with a message.
    let s = spec(1, 0);
    let p = FnmfParams::defaults().unwrap();
    let e = Fnmf::start(dataset(Array2::zeros((3, 5))), &s, p)
        .err()
        .unwrap();
    assert!(e.to_string().contains("all zeros"), "{e}");
}

/// The typed parameters read the table: its defaults (docs/models.md §9, β chosen there over
/// the seven public sets) and a given value.
#[test]
fn typed_parameters_read_the_table() {
    use crate::engine::models::fnmf::{FnmfParams, KIND};
    let p = FnmfParams::defaults().unwrap();
    assert_eq!(
        (p.beta, p.lambda, p.components, p.neighbors),
        (0.1, 1.0, 3, 5)
    );
    let spec = crate::engine::models::ModelSpec::new(KIND, 2, 0)
        .with("components", crate::engine::models::ParamValue::Number(7.0));
    assert_eq!(
        FnmfParams::from_checked(&spec.checked().unwrap())
            .unwrap()
            .components,
        7
    );
}
