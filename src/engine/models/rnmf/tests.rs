use super::*;
use crate::engine::jobs::experiment::{FitOptions, StopReason, fit};
use crate::engine::linalg::gram_of_rows;
use crate::engine::models::mu::{FLOOR, gram_times};
use crate::engine::models::nmf::Nmf;
use crate::engine::models::rnmf::KIND;
use crate::engine::models::{ModelKind, ParamValue, WarmStart, build};
use crate::engine::constraints::SideInfo;
use ndarray::{Array1, Axis, Zip, array};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::ops::ControlFlow;

fn dataset(x: Array2<f64>) -> Arc<Dataset> {
    Arc::new(Dataset::from_parts(x, None, vec![], "test"))
}

fn random(rows: usize, cols: usize, rng: &mut ChaCha8Rng) -> Array2<f64> {
    Array2::from_shape_simple_fn((rows, cols), || rng.r#gen::<f64>())
}

/// A planted nonnegative rank-k X plus uniform noise, with a few columns replaced by large
/// outliers.
fn noisy(m: usize, n: usize, k: usize, seed: u64) -> Array2<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (w, h) = (random(m, k, &mut rng), random(k, n, &mut rng));
    let mut x = w.dot(&h) + random(m, n, &mut rng) * 0.05;
    for j in [3, n / 2, n - 2] {
        x.column_mut(j).assign(&(random(m, 1, &mut rng).column(0).to_owned() * 8.0));
    }
    x
}

/// ‖x_i − W h_i‖ for every column, directly.
fn direct_residuals(x: &Array2<f64>, w: ArrayView2<'_, f64>, h: ArrayView2<'_, f64>) -> Vec<f64> {
    (x - &w.dot(&h))
        .columns()
        .into_iter()
        .map(|c| c.dot(&c).sqrt())
        .collect()
}

/// The plain reference of docs/models.md §3.3, written from the docs: the residuals of
/// the current iterate by the Gram identity, the weights, the W rule, the H rule with the
/// same weights, F = Σ r_i. The O(mnk) and k×k×n products use the kit's kernels (so the
/// comparison can be bit for bit); everything per sample is a plain loop.
struct Reference {
    x: Array2<f64>,
    w: Array2<f64>,
    h: Array2<f64>,
    eps_r: f64,
}

impl Reference {
    fn new(x: &Array2<f64>, w: &Array2<f64>, h: &Array2<f64>) -> Self {
        let n = x.ncols();
        // ‖X‖²_F from the column norms, summed in sample order as the model sums them.
        let xn: f64 = (0..n).map(|i| norm2(x, i)).sum::<f64>();
        Self {
            x: x.clone(),
            w: w.clone(),
            h: h.clone(),
            eps_r: 1e-8 * xn.sqrt() / (n as f64).sqrt(),
        }
    }

    /// r_i from `(‖x_i‖² − 2 h_iᵀ(WᵀX)_i) + h_iᵀ(WᵀW)h_i`, clamped at 0.
    fn residuals(&self) -> Vec<f64> {
        let (k, n) = self.h.dim();
        let mut wtx = Array2::zeros((k, n));
        wt_x_whole(&mut wtx, &self.w, &self.x);
        let mut g = Array2::zeros((k, k));
        gram_of_columns(&mut g.view_mut(), self.w.view());
        let mut gh = Array2::zeros((k, n));
        gram_times(&mut gh, &g, &self.h);
        (0..n)
            .map(|i| {
                let (mut c, mut q) = (0.0, 0.0);
                for a in 0..k {
                    c += self.h[[a, i]] * wtx[[a, i]];
                    q += self.h[[a, i]] * gh[[a, i]];
                }
                let r2 = (norm2(&self.x, i) - 2.0 * c) + q;
                if r2 < 0.0 { 0.0 } else { r2.sqrt() }
            })
            .collect()
    }

    fn weights(&self) -> Vec<f64> {
        self.residuals()
            .iter()
            .map(|&r| 1.0 / if r < self.eps_r { self.eps_r } else { r })
            .collect()
    }

    /// One iteration; returns F after it.
    fn step(&mut self) -> f64 {
        let (m, n) = self.x.dim();
        let k = self.h.nrows();
        let d = self.weights();
        // W ← W ⊙ (X D Hᵀ) ⊘ max(W (H D Hᵀ), ε).
        let mut hd = self.h.clone();
        for (mut col, &di) in hd.columns_mut().into_iter().zip(&d) {
            col.mapv_inplace(|v| v * di);
        }
        let mut xdht = Array2::zeros((m, k));
        xh_t_whole(&mut xdht, &self.x, &hd);
        let mut hdht = Array2::zeros((k, k));
        a_bt_into(
            hd.as_slice().unwrap(),
            self.h.as_slice().unwrap(),
            (k, k, n),
            hdht.as_slice_mut().unwrap(),
        );
        let mut whdht = Array2::zeros((m, k));
        gemm_into(&mut whdht.view_mut(), 1.0, self.w.view(), Op::N, hdht.view(), Op::N, false);
        mu_update(&mut self.w, &xdht, &whdht);
        // H ← H ⊙ (Wᵀ X D) ⊘ max(Wᵀ W H D, ε), the same D.
        let mut wtx = Array2::zeros((k, n));
        wt_x_whole(&mut wtx, &self.w, &self.x);
        let mut g = Array2::zeros((k, k));
        gram_of_columns(&mut g.view_mut(), self.w.view());
        let mut gh = Array2::zeros((k, n));
        gram_times(&mut gh, &g, &self.h);
        for a in 0..k {
            for i in 0..n {
                self.h[[a, i]] = mu_rule(self.h[[a, i]], wtx[[a, i]] * d[i], gh[[a, i]] * d[i]);
            }
        }
        l21(&self.residuals())
    }
}

/// ‖x_i‖², summed over the features in order.
fn norm2(x: &Array2<f64>, i: usize) -> f64 {
    x.column(i).iter().fold(0.0, |acc, v| acc + v * v)
}

/// Σ r_i: sample i into lane i mod 8, then the lanes pairwise (the documented order).
fn l21(r: &[f64]) -> f64 {
    let mut lanes = [0.0f64; LANES];
    for (i, v) in r.iter().enumerate() {
        lanes[i % LANES] += v;
    }
    sum_lanes(&lanes)
}

/// The same iteration with ndarray's products, for the tolerance check of the kernels.
fn naive_step(x: &Array2<f64>, w: &mut Array2<f64>, h: &mut Array2<f64>, eps_r: f64) -> f64 {
    let d: Array1<f64> = direct_residuals(x, w.view(), h.view())
        .into_iter()
        .map(|r| 1.0 / r.max(eps_r))
        .collect();
    let hd = &*h * &d.view().insert_axis(Axis(0));
    let num = x.dot(&hd.t());
    let den = w.dot(&hd.dot(&h.t()));
    Zip::from(&mut *w).and(&num).and(&den).for_each(|z, &a, &b| *z = (*z * a / b.max(1e-12)).max(FLOOR));
    let num = w.t().dot(x) * d.view().insert_axis(Axis(0));
    let den = w.t().dot(&*w).dot(&*h) * d.view().insert_axis(Axis(0));
    Zip::from(&mut *h).and(&num).and(&den).for_each(|z, &a, &b| *z = (*z * a / b.max(1e-12)).max(FLOOR));
    direct_residuals(x, w.view(), h.view()).iter().sum()
}

fn rel_diff(a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>) -> f64 {
    ((&a - &b).mapv(|v| v * v).sum() / b.mapv(|v| v * v).sum()).sqrt()
}

#[test]
fn gram_identity_residuals_match_the_direct_residuals() {
    let x = noisy(30, 50, 4, 1);
    let mut m = Rnmf::new(dataset(x.clone()), &ModelSpec::new(KIND, 4, 7)).unwrap();
    for t in 0..20 {
        let f = m.step().unwrap().total;
        let direct = direct_residuals(&x, m.w.view(), m.h.view());
        for (i, (&r, &want)) in m.residuals().iter().zip(&direct).enumerate() {
            // The identity's rounding: about u‖x_i‖² in r², so 1e-7‖x_i‖ in r when r is
            // small, 1e-12 relative when it is not.
            let tol = 1e-12 * want + 1e-7 * norm2(&x, i).sqrt();
            assert!((r - want).abs() <= tol, "iteration {t}, sample {i}: {r} vs {want}");
        }
        let sum: f64 = direct.iter().sum();
        assert!((f - sum).abs() <= 1e-10 * sum, "{f} vs {sum}");
    }
    // The weights are 1/r (the residuals here are far above ε_r).
    assert!(m.residuals().iter().all(|&r| r > 1e3 * m.residual_floor()));
    for (&d, &r) in m.weights().iter().zip(m.residuals()) {
        assert_eq!(d, 1.0 / r);
    }
}

/// `--init` and the seeded start both follow the plain reference written from
/// docs/models.md §3.3 bit for bit (the reference path, small X), and the kernels compute
/// the documented products (ndarray's to 1e-12). The warm start is used as given: its
/// zero entry and its unnormalised scale are not touched before the first update.
#[test]
fn iterates_follow_the_documented_updates_bit_for_bit() {
    let x = noisy(20, 37, 3, 2);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let (mut w0, h0) = (random(20, 3, &mut rng) * 5.0, random(3, 37, &mut rng) * 0.1);
    w0[[4, 1]] = 0.0;
    let init = Arc::new(WarmStart::new(Some(w0.clone()), h0.clone(), "test"));
    let seeded = ModelSpec::new(KIND, 3, 11);
    let warm = ModelSpec::new(KIND, 3, 11).with_init(init);
    for spec in [seeded, warm] {
        let mut m = Rnmf::new(dataset(x.clone()), &spec).unwrap();
        assert!(m.reference);
        if spec.init.is_some() {
            assert_eq!((&m.w, &m.h), (&w0, &h0), "the warm start is used as given");
        }
        let mut r = Reference::new(&x, &m.w, &m.h);
        assert_eq!(m.residual_floor().to_bits(), r.eps_r.to_bits());
        assert_eq!(m.objective().total.to_bits(), l21(&r.residuals()).to_bits());
        let (mut nw, mut nh) = (m.w.clone(), m.h.clone());
        for t in 0..15 {
            let f = m.step().unwrap().total;
            let fr = r.step();
            assert_eq!(m.w, r.w, "W after iteration {t}");
            assert_eq!(m.h, r.h, "H after iteration {t}");
            assert_eq!(f.to_bits(), fr.to_bits(), "F after iteration {t}");
            assert_eq!(m.weights(), r.weights().as_slice());
            let fnaive = naive_step(&x, &mut nw, &mut nh, r.eps_r);
            assert!((f - fnaive).abs() <= 1e-12 * fnaive, "{f} vs {fnaive}");
        }
        assert!(rel_diff(m.w.view(), nw.view()) <= 1e-12);
        assert!(rel_diff(m.h.view(), nh.view()) <= 1e-12);
        if spec.init.is_some() {
            assert!(m.w[[4, 1]] > 0.0, "the zero entry was lifted to the floor, then grew");
        }
    }
}

/// With every weight 1 the rules are NMF's (3.4) then (3.3), bit for bit: d = 1 scales
/// nothing, and HDHᵀ's kernel gives NMF's HHᵀ.
#[test]
fn unit_weights_give_nmf_rules_bit_for_bit() {
    let x = noisy(15, 40, 3, 4);
    let mut m = Rnmf::new(dataset(x.clone()), &ModelSpec::new(KIND, 3, 5)).unwrap();
    m.s.d.fill(1.0);
    m.hd.assign(&m.h);
    xh_t_whole(&mut m.xdht, &m.data.x, &m.hd);
    m.weighted_gram();
    let (mut w, mut h) = (m.w.clone(), m.h.clone());
    m.step().unwrap();
    let (k, n) = h.dim();
    // NMF's W rule (3.4) with NMF's kernels, then its H rule (3.3).
    let mut xht = Array2::zeros((15, k));
    xh_t_whole(&mut xht, &x, &h);
    let mut hht = Array2::zeros((k, k));
    gram_of_rows(&mut hht.view_mut(), h.view());
    let mut whht = Array2::zeros((15, k));
    gemm_into(&mut whht.view_mut(), 1.0, w.view(), Op::N, hht.view(), Op::N, false);
    mu_update(&mut w, &xht, &whht);
    let mut wtx = Array2::zeros((k, n));
    wt_x_whole(&mut wtx, &w, &x);
    let mut g = Array2::zeros((k, k));
    gram_of_columns(&mut g.view_mut(), w.view());
    let mut gh = Array2::zeros((k, n));
    gram_times(&mut gh, &g, &h);
    mu_update(&mut h, &wtx, &gh);
    assert_eq!(m.w, w);
    assert_eq!(m.h, h);
}

/// X = I₂, W = (1, 1)ᵀ, H = (1, 2), by hand: residuals 1 and √5, then one iteration.
#[test]
fn a_two_by_two_problem_by_hand() {
    let init = WarmStart::new(Some(array![[1.0], [1.0]]), array![[1.0, 2.0]], "hand");
    let spec = ModelSpec::new(KIND, 1, 0).with_init(Arc::new(init));
    let mut m = Rnmf::new(dataset(array![[1.0, 0.0], [0.0, 1.0]]), &spec).unwrap();
    let s5 = 5f64.sqrt();
    assert!((m.objective().total - (1.0 + s5)).abs() < 1e-15);
    assert_eq!(m.residual_floor(), 1e-8); // ‖X‖_F/√n = √2/√2
    let v = m.outputs().values.unwrap();
    assert_eq!(v.name, WEIGHT_NAME);
    assert!((v.values[0] - 1.0).abs() < 1e-15 && (v.values[1] - 1.0 / s5).abs() < 1e-15);
    m.step().unwrap();
    // d = (1, 1/√5): XDHᵀ = (1, 2/√5)ᵀ, HDHᵀ = 1 + 4/√5, so W = (1, 2/√5)ᵀ / (1 + 4/√5).
    let c = 1.0 + 4.0 / s5;
    let (w1, w2) = (1.0 / c, 2.0 / s5 / c);
    assert!((m.w[[0, 0]] - w1).abs() < 1e-15 && (m.w[[1, 0]] - w2).abs() < 1e-15);
    // WᵀX D = (w1, w2/√5), WᵀW H D = g·(1, 2/√5) with g = w1² + w2²: h = (w1/g, w2/g).
    let g = w1 * w1 + w2 * w2;
    let (h1, h2) = (w1 / g, w2 / g);
    assert!((m.h[[0, 0]] - h1).abs() < 1e-14 && (m.h[[0, 1]] - h2).abs() < 1e-14);
    let r1 = ((1.0 - w1 * h1).powi(2) + (w2 * h1).powi(2)).sqrt();
    let r2 = ((w1 * h2).powi(2) + (1.0 - w2 * h2).powi(2)).sqrt();
    assert!((m.objective().total - (r1 + r2)).abs() < 1e-14);
    assert!(r1 + r2 < 1.0 + s5);
}

/// 30 exact samples `W0 h` (ten on each edge of the cone of W0, ten inside) and one
/// outlier `x̄ + v`, x̄ the inliers' mean and v ⟂ span(W0): the l2,1 optimum fits the
/// inliers exactly and leaves the outlier at distance ‖v‖ from the plane (tilting the plane
/// towards it gains at most what it costs the mean, so less than it costs the 30), so F
/// tends to ‖v‖ and the outlier's weight to 0. NMF, whose squared loss the outlier pulls
/// on, fits the inliers far worse. (Without samples on the cone's edges, the edge
/// samples' small weights keep W's cone too narrow for a long time: F stalled 60 % above
/// the optimum for 100,000 iterations.)
#[test]
fn an_outlier_is_discounted_and_the_inliers_fitted() {
    let (m_, k, n) = (12, 2, 31);
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let w0 = random(m_, k, &mut rng) + 0.1;
    let mut h0 = random(k, n - 1, &mut rng) + 0.1;
    for j in 0..10 {
        h0[[1, j]] = 0.0;
        h0[[0, 10 + j]] = 0.0;
    }
    let inliers = w0.dot(&h0);
    let mean = inliers.mean_axis(Axis(1)).unwrap();
    // v = u minus its projection on span(W0), scaled so that x̄ + v stays ≥ 0.
    let u = random(m_, 1, &mut rng).column(0).to_owned() - 0.5;
    let g = w0.t().dot(&w0);
    let det = g[[0, 0]] * g[[1, 1]] - g[[0, 1]] * g[[1, 0]];
    let ginv = array![[g[[1, 1]], -g[[0, 1]]], [-g[[1, 0]], g[[0, 0]]]] / det;
    let mut v = &u - &w0.dot(&ginv.dot(&w0.t().dot(&u)));
    let room = mean
        .iter()
        .zip(&v)
        .filter(|&(_, &vi)| vi < 0.0)
        .map(|(&a, &vi)| -a / vi)
        .fold(f64::INFINITY, f64::min);
    v *= 0.5 * room;
    let outlier = &mean + &v;
    let mut x = Array2::zeros((m_, n));
    x.slice_mut(ndarray::s![.., ..n - 1]).assign(&inliers);
    x.column_mut(n - 1).assign(&outlier);
    let v_norm = v.dot(&v).sqrt();
    let data = dataset(x.clone());
    let mut m = Rnmf::new(Arc::clone(&data), &ModelSpec::new(KIND, k, 1)).unwrap();
    for _ in 0..5000 {
        m.step().unwrap();
    }
    let f = m.objective().total;
    assert!(f >= v_norm * (1.0 - 1e-9), "{f} below the optimum {v_norm}");
    assert!(f <= v_norm * (1.0 + 1e-3), "F = {f}, optimum {v_norm}");
    let weights = m.outputs().values.unwrap().values;
    let out_w = weights[n - 1];
    assert!(out_w < 1e-2, "outlier weight {out_w}");
    assert!(weights[..n - 1].iter().all(|&w| w > out_w));
    let inlier_fit = |w: ArrayView2<'_, f64>, h: ArrayView2<'_, f64>| -> f64 {
        direct_residuals(&x, w, h)[..n - 1].iter().sum()
    };
    let robust = inlier_fit(m.w.view(), m.h.view());
    let mut nmf = Nmf::new(data, &ModelSpec::new(crate::engine::models::nmf::KIND, k, 1)).unwrap();
    for _ in 0..5000 {
        nmf.step().unwrap();
    }
    let plain = inlier_fit(nmf.w().unwrap(), nmf.h());
    assert!(robust < 0.01 * v_norm, "RNMF inliers' l2,1 error {robust}");
    assert!(plain > 10.0 * robust, "NMF {plain} vs RNMF {robust}");
}

fn assert_monotone(m: &mut Rnmf, iters: usize, what: &str) {
    let mut prev = m.objective().total;
    for t in 0..iters {
        let f = m.step().unwrap().total;
        assert!(f <= prev * (1.0 + 1e-12), "{what}, iteration {t}: {f} > {prev}");
        prev = f;
    }
}

#[test]
fn objective_never_increases_on_noisy_data_with_outliers() {
    let x = noisy(40, 90, 5, 6);
    let mut m = Rnmf::new(dataset(x), &ModelSpec::new(KIND, 5, 2)).unwrap();
    assert_monotone(&mut m, 1000, "synthetic");
}


#[test]
fn blocked_pass_matches_the_reference_step_and_repeats_bit_for_bit() {
    // n = 403: blocks of 64 columns and a 19-column last block.
    let d = dataset(noisy(50, 403, 7, 9));
    let run = |reference: bool| {
        let mut m = Rnmf::new(Arc::clone(&d), &ModelSpec::new(KIND, 7, 3)).unwrap();
        m.reference = reference;
        m.x_block = 64;
        let obj: Vec<f64> = (0..200).map(|_| m.step().unwrap().total).collect();
        (m.w.clone(), m.h.clone(), m.s.d.clone(), obj)
    };
    let (w_ref, h_ref, d_ref, obj_ref) = run(true);
    let (w, h, d, obj) = run(false);
    assert!(rel_diff(w.view(), w_ref.view()) <= 1e-10);
    assert!(rel_diff(h.view(), h_ref.view()) <= 1e-10);
    for (a, b) in d.iter().zip(&d_ref) {
        assert!((a - b).abs() <= 1e-8 * b, "{a} vs {b}");
    }
    for (a, b) in obj.iter().zip(&obj_ref) {
        assert!((a - b).abs() <= 1e-10 * b);
    }
    let (w2, h2, d2, obj2) = run(false);
    assert_eq!((w2, h2, d2, obj2), (w, h, d, obj));
}

#[test]
fn large_data_takes_the_blocked_pass() {
    let m = Rnmf::new(
        dataset(Array2::from_elem((1024, 2500), 1.0)),
        &ModelSpec::new(KIND, 20, 0),
    )
    .unwrap();
    assert!(!m.reference);
}

/// A NaN or ∞ in the iterate makes F non-finite (the clamps let NaN through), and the fit
/// loop stops with its message.
#[test]
fn a_non_finite_iterate_stops_the_fit_with_a_message() {
    let x = noisy(10, 20, 2, 7);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let (w, h) = (random(10, 2, &mut rng), random(2, 20, &mut rng));
    let (mut w_nan, mut h_inf) = (w.clone(), h.clone());
    w_nan[[3, 1]] = f64::NAN;
    h_inf[[0, 5]] = f64::INFINITY;
    for (w, h) in [(w_nan, h), (w, h_inf)] {
        let init = Arc::new(WarmStart::new(Some(w), h, "bad"));
        let spec = ModelSpec::new(KIND, 2, 0).with_init(init);
        let mut m = Rnmf::new(dataset(x.clone()), &spec).unwrap();
        assert!(m.objective().total.is_nan());
        assert!(m.weights().iter().any(|d| d.is_nan()), "the weights hide nothing");
        let err = fit(&mut m, &FitOptions::default(), |_, _, _| ControlFlow::Continue(()))
            .unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err.error, ModelError::Diverged { iteration: 1, .. }), "{msg}");
        assert!(msg.contains("diverged at iteration 1: the iterate is not finite"), "{msg}");
        assert_eq!(err.record.iterations(), 0);
    }
    // Data whose products overflow: F is not finite (an overflowed r_i² is not clamped to
    // 0), and the fit stops.
    let mut huge = x.clone();
    huge[[0, 0]] = 1e200;
    let mut m = Rnmf::new(dataset(huge), &ModelSpec::new(KIND, 2, 0)).unwrap();
    assert!(!m.objective().total.is_finite());
    let err = fit(&mut m, &FitOptions::default(), |_, _, _| ControlFlow::Continue(()))
        .unwrap_err();
    assert!(matches!(err.error, ModelError::Diverged { .. }), "{err}");
    assert!(err.to_string().contains("diverged at iteration"), "{err}");
}

#[test]
fn cancel_stops_the_fit_and_finish_still_runs() {
    let x = noisy(20, 30, 3, 8);
    let mut m = Rnmf::new(dataset(x.clone()), &ModelSpec::new(KIND, 3, 4)).unwrap();
    let out = crate::engine::jobs::experiment::fit_cancelled_at(&mut m, 3);
    assert_eq!(out.stop, StopReason::Cancelled);
    assert_eq!(out.record.iterations(), 3);
    for c in m.w.columns() {
        assert!((c.dot(&c).sqrt() - 1.0).abs() < 1e-12);
    }
    // Through the worker, as the app runs it.
    use crate::engine::jobs::worker::{Command, Event, Job, JobHandle, JobId};
    use std::time::Duration;
    let (tx, rx) = std::sync::mpsc::channel();
    let job = Job::new(JobId(1), dataset(x), ModelSpec::new(KIND, 3, 4), FitOptions {
        max_iter: 10_000_000,
        tol: 0.0,
    });
    let handle = JobHandle::spawn(job, tx, Arc::new(|| {})).unwrap();
    let running = rx.iter().find(|e| matches!(e, Event::Progress { iteration: 5, .. }) || e.is_terminal());
    assert!(matches!(running, Some(Event::Progress { .. })), "{running:?}");
    handle.send(Command::Cancel);
    let end = loop {
        match rx.recv_timeout(Duration::from_secs(5)) {
            Ok(e) if e.is_terminal() => break Some(e),
            Ok(_) => {}
            Err(_) => break None,
        }
    };
    assert!(matches!(end, Some(Event::Cancelled { .. })), "{end:?}");
}

/// The registry builds it with no parameters; same seed, same result; `finish` leaves
/// WH, F and the weights as they were (up to rounding).
#[test]
fn registry_builds_it_deterministically_and_finish_keeps_the_fit() {
    assert_eq!(ModelKind::from_name("RNMF"), Some(KIND));
    assert!(KIND.hyperparameters().is_empty());
    assert_eq!(KIND.param_names(), "none");
    let d = dataset(noisy(12, 25, 2, 10));
    let bad = ModelSpec::new(KIND, 2, 0).with("lambda", ParamValue::Number(1.0));
    let e = build(&bad, Arc::clone(&d), &SideInfo::default()).err().unwrap();
    assert!(matches!(e, ModelError::UnknownParam { .. }), "{e}");
    let run = |seed| {
        let mut m = build(&ModelSpec::new(KIND, 2, seed), Arc::clone(&d), &SideInfo::default())
            .unwrap();
        for _ in 0..30 {
            m.step().unwrap();
        }
        let (wh, f, v) = (m.w().unwrap().dot(&m.h()), m.objective().total, m.outputs().values.unwrap());
        m.finish();
        assert!((m.w().unwrap().dot(&m.h()) - &wh).iter().all(|e| e.abs() < 1e-12));
        assert!((m.objective().total - f).abs() <= 1e-12 * f);
        let after = m.outputs().values.unwrap().values;
        assert_eq!(after.len(), 25);
        assert!(after.iter().zip(&v.values).all(|(a, b)| (a - b).abs() <= 1e-9 * b));
        assert_eq!(after.iter().copied().fold(0.0, f64::max), 1.0);
        m.h().to_owned()
    };
    assert_eq!(run(5), run(5));
    assert_ne!(run(5), run(6));
    let zero = Rnmf::new(dataset(Array2::zeros((3, 4))), &ModelSpec::new(KIND, 2, 0));
    assert!(matches!(zero, Err(ModelError::BadData { .. })));
}
