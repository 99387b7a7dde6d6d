use super::*;
use crate::engine::constraints::Triplet;
use crate::engine::constraints::generate::{
    ProtocolOptions, generate_triplets, labels_from_truth,
};
use crate::engine::jobs::experiment::{FitOptions, StopReason, fit};
use crate::engine::models::mu::{FUSED_MIN_BYTES, start_wh};
use crate::engine::models::nmf::{self, Nmf};
use crate::engine::models::nmfcc::KIND;
use crate::engine::models::nmfcc::links::tests::random_links;
use crate::engine::models::{EPS_DIV, ParamValue, WarmStart, build};
use ndarray::array;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::ops::ControlFlow;

fn dataset(x: Array2<f64>) -> Arc<Dataset> {
    Arc::new(Dataset::from_parts(x, None, vec![], "test"))
}

fn random_data(m: usize, n: usize, seed: u64) -> Arc<Dataset> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    dataset(Array2::from_shape_simple_fn((m, n), || rng.r#gen::<f64>()))
}

fn spec(k: usize, seed: u64, alpha: f64, beta: f64) -> ModelSpec {
    ModelSpec::new(KIND, k, seed)
        .with("alpha", ParamValue::Number(alpha))
        .with("beta", ParamValue::Number(beta))
}

fn rel_diff(a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>) -> f64 {
    ((&a - &b).mapv(|v| v * v).sum() / b.mapv(|v| v * v).sum()).sqrt()
}

/// α = β = 0 gives NMF's iterates and objectives bit for bit, on X in cache (one product
/// per pass) and on X above 4 MiB (the blocked single pass), from the same seed.
#[test]
fn zero_weights_give_nmf_bit_for_bit() {
    for (m, n, k, iters) in [(30, 70, 4, 120), (520, 1030, 5, 8)] {
        let data = random_data(m, n, 3);
        let links = random_links(n, 3 * n, 4);
        let s = spec(k, 11, 0.0, 0.0);
        let p = NmfccParams::from_checked(&s.checked().unwrap()).unwrap();
        let (w0, h0) = start_wh(&s, m, n, data.x.mean().unwrap());
        let mut cc = Nmfcc::with_factors(Arc::clone(&data), p, &links, w0, h0).unwrap();
        let mut nmf = Nmf::new(Arc::clone(&data), &ModelSpec::new(nmf::KIND, k, 11)).unwrap();
        assert_eq!(cc.mu.work.reference, m * n * 8 <= FUSED_MIN_BYTES);
        assert_eq!(cc.objective().total.to_bits(), nmf.objective().total.to_bits());
        for t in 0..iters {
            let (a, b) = (cc.step().unwrap(), nmf.step().unwrap());
            assert_eq!(a.total.to_bits(), b.total.to_bits(), "{m}×{n} iteration {t}");
            assert_eq!(cc.h(), nmf.h(), "{m}×{n} iteration {t}");
            assert_eq!(cc.w(), nmf.w(), "{m}×{n} iteration {t}");
        }
        assert_eq!(
            cc.objective().terms.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            ["reconstruction", "must_link", "cannot_link"]
        );
    }
}

/// docs/models.md §3.5 by hand, one iteration on m = 2, n = 3, k = 1: X all ones, W = (1, 1)ᵀ,
/// H = (0.5, 1, 1), must-link (0, 1), cannot-link (1, 2), α = 2, β = 1.
///
/// Before: WH = (0.5, 1, 1) in both rows, reconstruction 2 · 0.5² = 0.5; s₀₁ = 0.5, must-link
/// 2 · 0.5² = 0.5; s₁₂ = 1, cannot-link 1. WᵀX = (2, 2, 2), WᵀW H = (1, 2, 2).
/// H: column 0 (4 = 2 + α h₁) / (2 = 1 + α s₀₁ h₁) → 1; column 1 (3 = 2 + α h₀) /
/// (3.5 = 2 + α s₀₁ h₀ + β s₁₂ h₂) → 6/7; column 2: 2 / (3 = 2 + β s₁₂ h₁) → 2/3.
/// W: XHᵀ = 1 + 6/7 + 2/3 = 53/21, HHᵀ = 1 + 36/49 + 4/9 = 961/441, so each entry of W
/// becomes (53/21) / (961/441) = 1113/961. After: s₀₁ = 6/7 and s₁₂ = 4/7, so must-link
/// 2/49 and cannot-link 16/49.
#[test]
fn one_step_by_hand() {
    let links = Links {
        must: vec![(0, 1)],
        cannot: vec![(1, 2)],
    };
    let p = NmfccParams {
        alpha: 2.0,
        beta: 1.0,
    };
    let data = dataset(Array2::ones((2, 3)));
    let mut m = Nmfcc::with_factors(data, p, &links, array![[1.0], [1.0]], array![[0.5, 1.0, 1.0]])
        .unwrap();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-15 * b.abs().max(1.0);
    let o = m.objective();
    assert!(close(o.terms[0].value, 0.5) && close(o.terms[1].value, 0.5));
    assert!(close(o.terms[2].value, 1.0) && close(o.total, 2.0), "{o:?}");
    let o = m.step().unwrap();
    let h = m.h();
    for (got, want) in h.iter().zip([1.0, 6.0 / 7.0, 2.0 / 3.0]) {
        assert!(close(*got, want), "{h}");
    }
    let w = 1113.0 / 961.0;
    assert!(m.w().unwrap().iter().all(|&v| close(v, w)));
    let recon: f64 = 2.0 * [1.0, 6.0 / 7.0, 2.0 / 3.0].iter().map(|h| (1.0 - w * h).powi(2)).sum::<f64>();
    assert!(close(o.terms[0].value, recon), "{o:?}");
    assert!(close(o.terms[1].value, 2.0 / 49.0) && close(o.terms[2].value, 16.0 / 49.0));
    assert!(close(o.total, recon + 18.0 / 49.0));
}

/// The plain rules of docs/models.md §3.5, written densely: H then W, each floored at φ.
fn reference_step(
    x: &Array2<f64>,
    w: &mut Array2<f64>,
    h: &mut Array2<f64>,
    links: &Links,
    alpha: f64,
    beta: f64,
) {
    let (_, _, num_l, den_l) =
        crate::engine::models::nmfcc::links::tests::reference(h, links, alpha, beta);
    let num = w.t().dot(x) + num_l;
    let den = w.t().dot(&*w).dot(&*h) + den_l;
    Zip::from(&mut *h)
        .and(&num)
        .and(&den)
        .for_each(|z, &a, &b| *z = (*z * a / b.max(EPS_DIV)).max(crate::engine::models::mu::FLOOR));
    let num = x.dot(&h.t());
    let den = w.dot(&h.dot(&h.t()));
    Zip::from(&mut *w)
        .and(&num)
        .and(&den)
        .for_each(|z, &a, &b| *z = (*z * a / b.max(EPS_DIV)).max(crate::engine::models::mu::FLOOR));
}

/// A warm start (`run --init DIR`, docs/models.md §10.6) is used exactly as given, zeros
/// included, and the steps from it follow the plain rules.
#[test]
fn a_warm_start_follows_the_documented_updates() {
    let (m, n, k) = (12, 30, 3);
    let data = random_data(m, n, 7);
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let mut w = Array2::from_shape_simple_fn((m, k), || rng.r#gen::<f64>());
    let mut h = Array2::from_shape_simple_fn((k, n), || rng.r#gen::<f64>() * 0.6);
    w[[2, 1]] = 0.0;
    h[[0, 4]] = 0.0;
    // Triplets as the front ends give them; the links are what SideInfo derives.
    let ts: Vec<Triplet> = (0..20).map(|t| Triplet::new(t, (t + 1) % n, (t + 7) % n)).collect();
    let side = SideInfo::with_triplets(ts);
    let links = side.links();
    let (alpha, beta) = (0.5, 2.0);
    let init = Arc::new(WarmStart::new(Some(w.clone()), h.clone(), "test"));
    let s = spec(k, 0, alpha, beta).with_init(init);
    let mut model = build(&s, Arc::clone(&data), &side).unwrap();
    assert_eq!(model.h(), h.view(), "used exactly as given");
    assert_eq!(model.w().unwrap(), w.view());
    for t in 0..2 {
        model.step().unwrap();
        reference_step(&data.x, &mut w, &mut h, &links, alpha, beta);
        let (dh, dw) = (rel_diff(model.h(), h.view()), rel_diff(model.w().unwrap(), w.view()));
        assert!(dh < 1e-13 && dw < 1e-13, "step {t}: H {dh:e}, W {dw:e}");
    }
    assert!(h[[0, 4]] > 0.0, "the floor lifted the zero");
}

/// The blocked single pass over X gives the reference step's iterates up to the rounding of
/// the sums, and repeats bit for bit (blocks of 64 columns, a short last block).
#[test]
fn blocked_pass_matches_the_reference_step() {
    let (m, n, k) = (40, 403, 6);
    let data = random_data(m, n, 9);
    let links = random_links(n, 2 * n, 10);
    let p = NmfccParams {
        alpha: 0.5,
        beta: 0.5,
    };
    let run = |reference: bool| {
        let s = ModelSpec::new(KIND, k, 3);
        let (w0, h0) = start_wh(&s, m, n, data.x.mean().unwrap());
        let mut cc = Nmfcc::with_factors(Arc::clone(&data), p, &links, w0, h0).unwrap();
        cc.mu.work.reference = reference;
        cc.mu.work.x_block = 64;
        let obj: Vec<f64> = (0..150).map(|_| cc.step().unwrap().total).collect();
        (cc.mu.work.w.clone(), cc.mu.h.clone(), obj)
    };
    let (w_ref, h_ref, obj_ref) = run(true);
    let (w, h, obj) = run(false);
    assert!(rel_diff(w.view(), w_ref.view()) <= 1e-10);
    assert!(rel_diff(h.view(), h_ref.view()) <= 1e-10);
    for (a, b) in obj.iter().zip(&obj_ref) {
        assert!((a - b).abs() <= 1e-10 * b.abs());
    }
    assert_eq!(run(false), (w, h, obj));
}

/// A non-finite iterate makes the objective non-finite, and the fit loop stops with a
/// message. The multiplicative rule itself turns a NaN entry into the floor (`f64::max`
/// returns the number), so an iterate goes non-finite by overflow: here W so large that
/// the W rule overflows to +∞ (H is floored and stays finite), which only the objective
/// shows (the trace identity gives ∞ − ∞).
#[test]
fn a_non_finite_iterate_stops_the_fit() {
    let (m, n, k) = (6, 10, 2);
    let data = random_data(m, n, 1);
    let side = SideInfo::with_triplets(vec![Triplet::new(0, 1, 2), Triplet::new(3, 4, 5)]);
    let start = |w: Array2<f64>, h: Array2<f64>| {
        let init = Arc::new(WarmStart::new(Some(w), h, "test"));
        build(&spec(k, 0, 1.0, 1.0).with_init(init), Arc::clone(&data), &side).unwrap()
    };
    let mut nan_h = Array2::from_elem((k, n), 0.5);
    nan_h[[1, 3]] = f64::NAN;
    let model = start(Array2::from_elem((m, k), 0.5), nan_h);
    assert!(model.objective().total.is_nan());
    assert!(model.objective().terms.iter().all(|t| t.value.is_nan()), "{:?}", model.objective());
    let mut model = start(Array2::from_elem((m, k), 1e250), Array2::from_elem((k, n), 0.5));
    let err = fit(model.as_mut(), &FitOptions::default(), |_, _, _| ControlFlow::Continue(()))
        .unwrap_err();
    assert!(matches!(err.error, ModelError::Diverged { iteration: 1, .. }), "{err}");
    assert_eq!(err.to_string(), "diverged at iteration 1: objective is NaN (try a smaller step or other parameters)");
    assert!(model.h().iter().all(|v| v.is_finite()));
    assert!(model.w().unwrap().iter().any(|v| v.is_infinite()));
}

/// The observer's break cancels the fit after the iteration it saw.
#[test]
fn a_cancelled_fit_stops_where_it_was_told() {
    let data = random_data(10, 40, 2);
    let side = SideInfo::with_triplets(vec![Triplet::new(0, 1, 2), Triplet::new(5, 6, 7)]);
    let mut model = build(&spec(3, 1, 1.0, 1.0), data, &side).unwrap();
    let out = crate::engine::jobs::experiment::fit_cancelled_at(model.as_mut(), 7);
    assert_eq!((out.stop, out.record.iterations()), (StopReason::Cancelled, 7));
}

/// Without links the model is refused with the registry's message, as by every front end;
/// two painted labels are enough (they give one link).
#[test]
fn refuses_without_links_with_the_registrys_message() {
    let data = random_data(5, 8, 3);
    let want = KIND.check_side(&SideInfo::default()).unwrap_err().to_string();
    assert!(want.contains("must-link / cannot-link pairs"), "{want}");
    for side in [
        SideInfo::default(),
        SideInfo::new(Vec::new(), vec![Some(0), None, None, None, None, None, None, None]),
    ] {
        let e = build(&spec(2, 0, 1.0, 1.0), Arc::clone(&data), &side).err().unwrap();
        assert!(matches!(e, ModelError::MissingSideInfo { .. }), "{e}");
        assert_eq!(e.to_string(), want);
    }
    let e = Nmfcc::with_factors(
        Arc::clone(&data),
        NmfccParams::defaults().unwrap(),
        &Links::default(),
        Array2::ones((5, 2)),
        Array2::ones((2, 8)),
    )
    .err()
    .unwrap();
    assert_eq!(e.to_string(), want);
    let two = SideInfo::new(Vec::new(), vec![Some(0), Some(1), None, None, None, None, None, None]);
    let m = Nmfcc::new(data, &spec(2, 0, 1.0, 1.0), &two).unwrap();
    assert_eq!(m.link_counts(), (0, 1, 0));
    assert_eq!(KIND.needs(), crate::engine::models::SideNeed::Links);
    assert_eq!(crate::engine::models::ModelKind::from_name("NMFCC"), Some(KIND));
}

/// The same seed gives the same fit; contradictory pairs are reported in the notes.
#[test]
fn repeatable_and_contradictions_are_noted() {
    let data = random_data(8, 30, 4);
    // (0, 1, 2) and (0, 2, 1): (0, 1) and (0, 2) are each both a must- and a cannot-link.
    let side = SideInfo::with_triplets(vec![Triplet::new(0, 1, 2), Triplet::new(0, 2, 1)]);
    let run = |seed| {
        let mut m = build(&spec(3, seed, 1.0, 1.0), Arc::clone(&data), &side).unwrap();
        for _ in 0..30 {
            m.step().unwrap();
        }
        m.finish();
        (m.h().to_owned(), m.w().unwrap().to_owned(), m.notes())
    };
    let (h, w, notes) = run(5);
    assert_eq!(run(5), (h.clone(), w, notes.clone()));
    assert_ne!(run(6).0, h);
    assert_eq!(notes.len(), 1);
    assert!(notes[0].starts_with("2 of the 2 must-link pairs"), "{}", notes[0]);
}

/// Digits (`../shared/data/digits_sklearn`, unit-norm samples as `run` loads them), links
/// from the protocol's triplets (docs/models.md §8.4), 300 iterations. The rule (3.52) is
/// not a proven descent step: from NMF's start, whose codes have inner products far below
/// the 1 the must-links ask for, the first step overshoots (F doubles). From the second
/// iteration on F falls every iteration, and it ends far below the start.
#[test]
fn objective_on_real_data() {
    let Some(data) = crate::engine::models::testkit::public_set("digits_sklearn/digits_sklearn.csv", &Default::default()) else {
        return;
    };
    let truth = data.labels.clone().unwrap();
    let ts = generate_triplets(data.x.view(), &labels_from_truth(&truth), &ProtocolOptions::default(), &[])
        .unwrap()
        .triplets;
    let side = SideInfo::with_triplets(ts);
    let mut m = build(&ModelSpec::new(KIND, 10, 1), data, &side).unwrap();
    let first = m.objective().total;
    let mut prev = first;
    let mut rises = Vec::new();
    for t in 0..300 {
        let f = m.step().unwrap().total;
        if f > prev * (1.0 + 1e-12) {
            rises.push((t, prev, f));
        }
        prev = f;
    }
    let later: Vec<_> = rises.iter().filter(|r| r.0 > 0).collect();
    assert!(later.is_empty(), "F rose after the first iteration: {later:?}");
    assert!(prev < 0.5 * first, "F = {prev} after 300 iterations, {first} at the start");
}

/// The typed parameters read the table: its defaults (docs/models.md §9, β chosen there over
/// the seven public sets) and a given value.
#[test]
fn typed_parameters_read_the_table() {
    use crate::engine::models::nmfcc::{KIND, NmfccParams};
    let p = NmfccParams::defaults().unwrap();
    assert_eq!((p.alpha, p.beta), (0.1, 0.1));
    let spec = crate::engine::models::ModelSpec::new(KIND, 2, 0).with("beta", crate::engine::models::ParamValue::Number(0.0));
    let p = NmfccParams::from_checked(&spec.checked().unwrap()).unwrap();
    assert_eq!((p.alpha, p.beta), (0.1, 0.0));
}
