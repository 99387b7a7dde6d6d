//! t-STE against a plain reference written from docs/models.md §3.6, finite differences, hand
//! computed values, the schedule, the best-Y rule, warm starts, NaN stops and cancellation.

use super::*;
use crate::engine::constraints::generate::{
    ProtocolOptions, generate_triplets, labels_from_truth, random_triplets,
};
use crate::engine::constraints::{SideInfo, Triplet};
use crate::engine::data::Dataset;
use crate::engine::eval::triplets::triplets_kept;
use crate::engine::jobs::experiment::{self, FitOptions, StopReason};
use crate::engine::models::mu::fd;
use crate::engine::models::tste::KIND;
use crate::engine::models::{self, ModelKind, ParamValue, SideNeed, WarmStart};
use ndarray::{Array2, array};
use std::ops::ControlFlow;
use std::sync::Arc;

fn spec(k: usize, seed: u64, params: &[(&str, f64)]) -> ModelSpec {
    let mut s = ModelSpec::new(KIND, k, seed);
    for (name, v) in params {
        s = s.with(name, ParamValue::Number(*v));
    }
    s
}

fn model(n: usize, s: &ModelSpec, ts: &[Triplet]) -> Tste {
    let p = TsteParams::from_checked(&s.checked().unwrap(), s.k).unwrap();
    Tste::new(n, s, p, ts).unwrap()
}

/// A dataset of n samples with 10 features (t-STE never reads them; the rank check needs m ≥ k).
fn dataset(n: usize) -> Arc<Dataset> {
    Arc::new(Dataset::from_parts(
        Array2::from_elem((10, n), 1.0),
        None,
        vec![],
        "test",
    ))
}

fn packed(ts: &[Triplet]) -> Vec<[u32; 3]> {
    ts.iter()
        .map(|t| [t.i as u32, t.j as u32, t.q as u32])
        .collect()
}

fn active_of(n: usize, ts: &[Triplet]) -> Vec<u32> {
    (0..n as u32)
        .filter(|&s| {
            let s = s as usize;
            ts.iter().any(|t| t.i == s || t.j == s || t.q == s)
        })
        .collect()
}

/// The fast pass on an n×k embedding: cost and gradient.
fn fast(y: &Array2<f64>, ts: &[Triplet], p: &TsteParams) -> (Cost, Array2<f64>) {
    let (n, k) = y.dim();
    let mut g = vec![f64::NAN; n * k];
    let y = y.as_standard_layout();
    let c = cost_and_gradient(
        y.as_slice().unwrap(),
        k,
        &packed(ts),
        &active_of(n, ts),
        p,
        &mut g,
    );
    (c, Array2::from_shape_vec((n, k), g).unwrap())
}

/// docs/models.md §3.6 written out literally: the kernel (3.61) by `powf`, p_τ (3.62), the cost
/// (3.63) with the reference code's clamp of p at the smallest positive double, and the
/// gradient (3.65) with `u_ab = 1/(1 + d_ab/α)` and `s = 1 − p_τ`. Returns (loss, l2, ∇C).
fn plain(y: &Array2<f64>, ts: &[Triplet], alpha: f64, lambda: f64) -> (f64, f64, Array2<f64>) {
    let (n, _) = y.dim();
    let d = |a: usize, b: usize| {
        let r = &y.row(a) - &y.row(b);
        r.dot(&r)
    };
    let kern = |d: f64| (1.0 + d / alpha).powf(-(alpha + 1.0) / 2.0);
    let mut g = Array2::<f64>::zeros(y.dim());
    let mut loss = 0.0;
    for t in ts {
        let (kij, kiq) = (kern(d(t.i, t.j)), kern(d(t.i, t.q)));
        let p = kij / (kij + kiq);
        loss -= p.max(f64::MIN_POSITIVE).ln();
        let gamma = (alpha + 1.0) / alpha;
        let s = 1.0 - p;
        let uij = 1.0 / (1.0 + d(t.i, t.j) / alpha);
        let uiq = 1.0 / (1.0 + d(t.i, t.q) / alpha);
        let dij = &y.row(t.i) - &y.row(t.j);
        let diq = &y.row(t.i) - &y.row(t.q);
        let gi = (&dij * uij - &diq * uiq) * (gamma * s);
        let mut row = g.row_mut(t.i);
        row += &gi;
        let mut row = g.row_mut(t.j);
        row -= &(&dij * (gamma * s * uij));
        let mut row = g.row_mut(t.q);
        row += &(&diq * (gamma * s * uiq));
    }
    let mut l2 = 0.0;
    for s in active_of(n, ts) {
        let s = s as usize;
        l2 += lambda * y.row(s).dot(&y.row(s));
        let mut row = g.row_mut(s);
        row += &(&y.row(s) * (2.0 * lambda));
    }
    (loss, l2, g)
}

fn uniform(n: usize, k: usize, seed: u64) -> Array2<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Array2::from_shape_simple_fn((n, k), || 2.0 * rng.r#gen::<f64>() - 1.0)
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-300)
}

#[test]
fn gradient_matches_finite_differences_and_the_plain_reference() {
    let (n, k) = (9, 3);
    let y = uniform(n, k, 4);
    let ts = random_triplets(n, 25, 3);
    for (alpha, lambda) in [(2.0, 0.0), (0.7, 0.3), (20.0, 1.5)] {
        let p = TsteParams { dof: alpha, lambda };
        let (cost, g) = fast(&y, &ts, &p);
        let num = fd::gradient(|z| fast(z, &ts, &p).0.total(), &y, 1e-6);
        let err = fd::relative_error(&g, &num);
        assert!(err < 1e-7, "α {alpha} λ {lambda}: {err:e}");
        let (loss, l2, pg) = plain(&y, &ts, alpha, lambda);
        assert!(close(cost.loss, loss, 1e-13), "{} vs {loss}", cost.loss);
        assert!(close(cost.l2, l2, 1e-13), "{} vs {l2}", cost.l2);
        assert!(fd::relative_error(&pg, &g) < 1e-12);
        // The L2 term and its gradient are there exactly when λ > 0.
        assert_eq!(cost.l2 == 0.0, lambda == 0.0);
    }
    // A wrong gradient (the L2 part dropped) is caught.
    let p = TsteParams {
        dof: 0.7,
        lambda: 0.3,
    };
    let (_, g) = fast(&y, &ts, &TsteParams { lambda: 0.0, ..p });
    let num = fd::gradient(|z| fast(z, &ts, &p).0.total(), &y, 1e-6);
    assert!(fd::relative_error(&g, &num) > 1e-2);
}

/// y₀ = (0, 0), y₁ = (1, 0), y₂ = (0, 2), one triplet (0, 1, 2), α = 1: K₀₁ = 1/2,
/// K₀₂ = 1/5, so p = 5/7, the loss is ln(7/5), s = 2/7, γ = 2, u₀₁ = 1/2, u₀₂ = 1/5 and the
/// gradient rows are (−2/7, 1.6/7), (2/7, 0), (0, −1.6/7).
#[test]
fn cost_and_gradient_of_a_hand_computed_configuration() {
    let y = array![[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]];
    let ts = [Triplet::new(0, 1, 2)];
    let (c, g) = fast(&y, &ts, &TsteParams { dof: 1.0, lambda: 0.0 });
    assert!(close(c.loss, (7.0f64 / 5.0).ln(), 1e-15), "{}", c.loss);
    assert_eq!(c.l2, 0.0);
    let want = array![[-2.0 / 7.0, 1.6 / 7.0], [2.0 / 7.0, 0.0], [0.0, -1.6 / 7.0]];
    assert!((&g - &want).iter().all(|v| v.abs() < 1e-15), "{g}");
    // λ = 1/2 adds λ Σ‖y‖² = 2.5 and 2λy = y.
    let (c, g) = fast(&y, &ts, &TsteParams { dof: 1.0, lambda: 0.5 });
    assert!(close(c.l2, 2.5, 1e-15) && close(c.total(), (1.4f64).ln() + 2.5, 1e-15));
    assert!((&g - &(&want + &y)).iter().all(|v| v.abs() < 1e-15), "{g}");
    // Swapping j and q: p = 2/7.
    let (c, _) = fast(&y, &[Triplet::new(0, 2, 1)], &TsteParams { dof: 1.0, lambda: 0.0 });
    assert!(close(c.loss, (3.5f64).ln(), 1e-15));
}

/// Eight points on a line and every triplet their order implies: the embedding must keep them
/// all, so every point's distances grow along the line.
#[test]
fn points_on_a_line_end_up_ordered() {
    let n: usize = 8;
    let mut ts = Vec::new();
    for i in 0..n {
        for j in 0..n {
            for q in 0..n {
                let (a, b) = (i.abs_diff(j), i.abs_diff(q));
                if i != j && i != q && j != q && a < b {
                    ts.push(Triplet::new(i, j, q));
                }
            }
        }
    }
    let s = spec(2, 1, &[]);
    let mut m = model(n, &s, &ts);
    let y0 = m.h().to_owned();
    let kept0 = triplets_kept(y0.view(), &ts).unwrap();
    let opts = FitOptions {
        max_iter: 1000,
        tol: 0.0,
    };
    experiment::fit(&mut m, &opts, |_, _, _| ControlFlow::Continue(())).unwrap();
    let kept = triplets_kept(m.h(), &ts).unwrap();
    assert!(kept0 < 0.9, "the random start keeps {kept0}");
    assert_eq!(kept, 1.0, "{} triplets", ts.len());
    assert!(m.objective().total < 0.5 * ts.len() as f64 * 2f64.ln());
}

/// (3.68): ×1.01 after a decrease of more than 10⁻⁷, ×½ and a failure otherwise, reset by a
/// decrease; five failures in a row stop the fit loop (tolerance off), with a note.
#[test]
fn schedule_grows_halves_and_stops_after_five_failures() {
    let n = 10;
    let ts = random_triplets(n, 30, 5);
    let s = spec(2, 2, &[("lambda", 0.1)]);
    let mut m = model(n, &s, &ts);
    assert_eq!(m.eta(), ETA_START);
    let (mut grew, mut halved, mut run) = (0, 0, 0usize);
    let mut steps = 0;
    while !m.has_converged() {
        assert!(steps < 20_000, "no stop after {steps} steps");
        let (eta, before) = (m.eta(), m.objective().total);
        let after = m.step().unwrap().total;
        steps += 1;
        if before - after > MIN_DECREASE {
            assert_eq!(m.eta(), eta * ETA_GROWTH, "step {steps}");
            grew += 1;
            run = 0;
        } else {
            assert_eq!(m.eta(), eta * ETA_SHRINK, "step {steps}");
            halved += 1;
            run += 1;
        }
        assert_eq!(m.failures(), run);
        if steps == 1 {
            assert_eq!(m.eta(), 2.0 * 1.01, "the first step decreases");
        }
    }
    assert_eq!(run, MAX_FAILURES);
    assert!(grew > 10 && halved >= MAX_FAILURES, "{grew} {halved}");
    // The fit loop stops on the same iteration, as converged, and says why.
    let mut m2 = model(n, &s, &ts);
    let opts = FitOptions {
        max_iter: 1_000_000,
        tol: 0.0,
    };
    let out = experiment::fit(&mut m2, &opts, |_, _, _| ControlFlow::Continue(())).unwrap();
    assert_eq!(out.stop, StopReason::Converged);
    assert_eq!(out.record.iterations(), steps);
    assert!(
        out.notes.iter().any(|n| n.contains("stopped after 5 steps")),
        "{:?}",
        out.notes
    );
}

/// A step that raises the cost is taken (the reference never rejects a step), and `finish`
/// returns the best Y seen, bit for bit, with a note; the cost never ends above its start.
#[test]
fn finish_returns_the_best_embedding_seen() {
    let n = 30;
    let ts = random_triplets(n, 90, 7);
    let s = spec(3, 3, &[("lambda", 0.1)]);
    let mut m = model(n, &s, &ts);
    let start = m.objective().total;
    for _ in 0..30 {
        m.step().unwrap();
    }
    let (best_cost, best_at) = m.best();
    let best = m.best.clone();
    // A huge step: Y ← Y − c(2λY + …) with c ≈ 3·10³ flips and inflates Y, so the L2 term
    // explodes.
    m.eta = 1e4;
    let before = m.objective().total;
    let after = m.step().unwrap().total;
    assert!(after > 100.0 * before, "{before} → {after}");
    assert_eq!(m.eta(), 5e3);
    assert_eq!(m.best(), (best_cost, best_at), "a worse iterate is not kept");
    m.finish();
    assert_eq!(m.h(), best.t());
    assert_eq!(m.objective().total, best_cost.total());
    assert!(best_cost.total() <= start);
    let notes = m.notes();
    assert!(
        notes
            .iter()
            .any(|n| n.contains(&format!("from iteration {best_at}")) && n.contains("31")),
        "{notes:?}"
    );
    m.finish();
    assert_eq!(m.h(), best.t(), "finish is idempotent");

    // Through the fit loop, on contradictory triplets: the result is the lowest cost seen.
    let mut m = model(n, &spec(3, 3, &[]), &ts);
    let opts = FitOptions {
        max_iter: 300,
        tol: 0.0,
    };
    let out = experiment::fit(&mut m, &opts, |_, _, _| ControlFlow::Continue(())).unwrap();
    let lowest = out
        .record
        .objective
        .iter()
        .fold(out.record.initial_objective, |a, &b| a.min(b));
    assert_eq!(m.objective().total, lowest);
    assert!(lowest < out.record.initial_objective);
}

/// Samples in no triplet keep their start bit for bit, even with λ > 0 (the penalty covers
/// the samples in triplets only), and the notes say how many.
#[test]
fn samples_in_no_triplet_keep_their_start_and_are_counted() {
    let n = 12;
    let ts = random_triplets(8, 30, 9);
    assert_eq!(active_of(n, &ts).len(), 8);
    let s = spec(3, 4, &[("lambda", 0.5)]);
    let mut m = model(n, &s, &ts);
    let y0 = m.h().to_owned();
    for _ in 0..40 {
        m.step().unwrap();
    }
    let y = m.h();
    for i in 0..n {
        let same = y.column(i) == y0.column(i);
        assert_eq!(same, i >= 8, "sample {i}");
    }
    assert_eq!(m.untouched(), 4);
    let notes = m.notes();
    assert!(
        notes[0].contains("4 of 12 samples are in no triplet") && notes[0].contains("random"),
        "{notes:?}"
    );
    // Every sample in a triplet: no such note.
    let all = model(8, &spec(3, 4, &[]), &ts);
    assert!(all.notes().is_empty(), "{:?}", all.notes());
}

/// `--init`: H (k×n, negative entries allowed) is the start exactly, through the registry's
/// build; two steps follow (3.67)–(3.68) as the plain reference computes them.
#[test]
fn warm_start_follows_the_documented_updates() {
    let (n, k) = (15, 3);
    let ts = random_triplets(n, 45, 11);
    let h0 = uniform(k, n, 12);
    assert!(h0.iter().any(|&v| v < 0.0));
    let (alpha, lambda) = (1.5, 0.2);
    let s = spec(k, 0, &[("dof", alpha), ("lambda", lambda)])
        .with_init(Arc::new(WarmStart::new(None, h0.clone(), "run 1")));
    let side = SideInfo::with_triplets(ts.clone());
    let mut m = models::build(&s, dataset(n), &side).unwrap();
    assert_eq!(m.h(), h0.view());
    let scale = n as f64 / ts.len() as f64;
    let y0 = h0.t().to_owned();
    let (l0, r0, g0) = plain(&y0, &ts, alpha, lambda);
    let y1 = &y0 - &(&g0 * (2.0 * scale));
    let (l1, r1, g1) = plain(&y1, &ts, alpha, lambda);
    let eta1 = if (l0 + r0) - (l1 + r1) > 1e-7 {
        2.02
    } else {
        1.0
    };
    let y2 = &y1 - &(&g1 * (eta1 * scale));
    let (l2, r2, _) = plain(&y2, &ts, alpha, lambda);
    let o1 = m.step().unwrap();
    assert!(close(o1.total, l1 + r1, 1e-12), "{} vs {}", o1.total, l1 + r1);
    let o2 = m.step().unwrap();
    assert!(close(o2.total, l2 + r2, 1e-12));
    assert_eq!(o2.terms[0].name, "triplet_loss");
    assert_eq!(o2.terms[1].name, "l2");
    assert!(close(o2.terms[1].value, r2, 1e-12));
    let h = m.h().t().to_owned();
    assert!(fd::relative_error(&y2, &h) < 1e-12);
    // A warm start of the wrong shape is refused naming H and both shapes.
    let bad = spec(k, 0, &[]).with_init(Arc::new(WarmStart::new(
        None,
        Array2::zeros((k, n + 1)),
        "run 1",
    )));
    let e = models::build(&bad, dataset(n), &side).err().unwrap().to_string();
    assert!(e.contains("H.npy") && e.contains("3×16") && e.contains("3×15"), "{e}");
    // The note names a given start.
    let mut ts8 = random_triplets(8, 20, 1);
    ts8.truncate(20);
    let s = spec(k, 0, &[]).with_init(Arc::new(WarmStart::new(None, h0, "run 1")));
    let m = models::build(&s, dataset(n), &SideInfo::with_triplets(ts8)).unwrap();
    assert!(m.notes()[0].contains("keep their given start"), "{:?}", m.notes());
}

/// docs/models.md §10.4: a non-finite embedding stops the fit with a message, whether the
/// bad entry is in a triplet (the cost turns NaN or ∞) or not (the loop's check of H).
#[test]
fn a_non_finite_embedding_stops_the_fit_with_a_message() {
    let (n, k) = (10, 2);
    let ts = random_triplets(7, 20, 2);
    let opts = FitOptions {
        max_iter: 50,
        tol: 0.0,
    };
    let run = |sample: usize, bad: f64| {
        let mut h0 = uniform(k, n, 3);
        h0[[1, sample]] = bad;
        let s = spec(k, 0, &[]).with_init(Arc::new(WarmStart::new(None, h0, "test")));
        let mut m = models::build(&s, dataset(n), &SideInfo::with_triplets(ts.clone())).unwrap();
        let err = experiment::fit(m.as_mut(), &opts, |_, _, _| ControlFlow::Continue(()))
            .expect_err("stops");
        assert!(
            matches!(err.error, ModelError::Diverged { iteration: 1, .. }),
            "{}",
            err.error
        );
        err.error.to_string()
    };
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let e = run(0, bad);
        assert!(e.contains("diverged at iteration 1: objective is"), "{e}");
        let e = run(9, bad);
        assert!(e.contains("H has a non-finite entry"), "{e}");
    }
    // In the middle of a run: the cost turns non-finite on the next step.
    let mut m = model(n, &spec(k, 0, &[]), &ts);
    for _ in 0..5 {
        assert!(m.step().unwrap().is_finite());
    }
    m.y[[ts[0].i, 0]] = f64::INFINITY;
    assert!(!m.step().unwrap().is_finite());
}

/// Cancelling (the observer breaks, as the worker does on `Command::Cancel`) ends the fit as
/// cancelled, after `finish`; so does the worker's command on a long job.
#[test]
fn cancel_ends_the_fit_with_the_best_embedding() {
    let n = 40;
    let ts = random_triplets(n, 120, 4);
    let mut m = model(n, &spec(3, 5, &[]), &ts);
    let out = crate::engine::jobs::experiment::fit_cancelled_at(&mut m, 3);
    assert_eq!(out.stop, StopReason::Cancelled);
    assert_eq!(out.record.iterations(), 3);
    assert_eq!(m.objective().total, m.best().0.total());

    use crate::engine::jobs::worker::{Command, Event, Job, JobHandle, JobId};
    use std::time::{Duration, Instant};
    let n = 2000;
    let job = Job::new(
        JobId(1),
        dataset(n),
        spec(10, 1, &[]),
        FitOptions {
            max_iter: 10_000_000,
            tol: 0.0,
        },
    )
    .with_side(Arc::new(SideInfo::with_triplets(random_triplets(n, 6000, 1))));
    let (tx, rx) = std::sync::mpsc::channel();
    let h = JobHandle::spawn(job, tx, Arc::new(|| {})).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut sent = None;
    let ev = loop {
        let e = rx.recv_timeout(Duration::from_secs(20)).unwrap();
        if let Event::Progress { iteration: 5, .. } = e {
            h.send(Command::Cancel);
            sent = Some(Instant::now());
        }
        if e.is_terminal() || Instant::now() > deadline {
            break e;
        }
    };
    assert!(matches!(ev, Event::Cancelled { .. }), "{ev:?}");
    let dt = sent.map(|t| t.elapsed()).unwrap_or_default();
    assert!(dt < Duration::from_millis(500), "cancel took {dt:?}");
}

/// The same seed gives the same start, iterates and costs bit for bit; another seed another
/// start. The start is 10⁻⁴ times standard normal draws (3.66).
#[test]
fn seeded_runs_repeat_bit_for_bit_and_start_small_and_normal() {
    let n = 50;
    let ts = random_triplets(n, 150, 6);
    let run = |seed| {
        let mut m = model(n, &spec(4, seed, &[]), &ts);
        let objs: Vec<u64> = (0..60)
            .map(|_| m.step().unwrap().total.to_bits())
            .collect();
        m.finish();
        (m.h().to_owned(), objs)
    };
    assert_eq!(run(8), run(8));
    assert_ne!(run(8).0, run(9).0);
    let z = gaussian_start(5000, 4, 3);
    let count = z.len() as f64;
    let mean = z.sum() / count;
    let var = z.mapv(|v| v * v).sum() / count - mean * mean;
    assert!(mean.abs() < 5e-6, "{mean}");
    assert!((var.sqrt() / START_SCALE - 1.0).abs() < 0.03, "{}", var.sqrt());
    let within_one = z.iter().filter(|v| v.abs() < START_SCALE).count() as f64 / count;
    assert!((within_one - 0.6827).abs() < 0.02, "{within_one}");
}

#[test]
fn build_needs_triplets_a_positive_dof_and_valid_indices() {
    assert_eq!(ModelKind::from_name("tste"), Some(KIND));
    assert_eq!(KIND.needs(), SideNeed::Triplets);
    assert!(!KIND.descriptor().has_w);
    let side = SideInfo::with_triplets(random_triplets(6, 10, 1));
    let e = models::build(&spec(2, 0, &[]), dataset(6), &SideInfo::default())
        .err()
        .unwrap();
    assert!(matches!(e, ModelError::MissingSideInfo { .. }), "{e}");
    let e = models::build(&spec(1, 0, &[]), dataset(6), &side)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("k ≥ 2"), "{e}");
    assert!(models::build(&spec(1, 0, &[("dof", 1.0)]), dataset(6), &side).is_ok());
    let bad = SideInfo::with_triplets(vec![Triplet::new(0, 1, 6)]);
    let e = models::build(&spec(2, 0, &[]), dataset(6), &bad)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("(0, 1, 6)") && e.contains("n = 6"), "{e}");
    let m = models::build(&spec(2, 0, &[]), dataset(6), &side).unwrap();
    assert!(m.w().is_none());
    assert_eq!(m.h().dim(), (2, 6));
}

/// On the digits with the protocol's triplets (docs/models.md §8.4), as `run --triplets
/// generate` fits them: the best cost falls, and the embedding keeps most triplets.
#[test]
fn digits_with_protocol_triplets_embed_most_of_them() {
    let Some(data) = crate::engine::models::testkit::public_set("digits_sklearn/digits_sklearn.csv", &Default::default()) else {
        return;
    };
    let truth = data.labels.clone().unwrap();
    let ts = generate_triplets(
        data.x.view(),
        &labels_from_truth(&truth),
        &ProtocolOptions::default(),
        &[],
    )
    .unwrap()
    .triplets;
    let mut m = model(data.n(), &spec(10, 0, &[]), &ts);
    let start = m.objective().total;
    let mut best = start;
    for _ in 0..300 {
        let o = m.step().unwrap();
        best = best.min(o.total);
        assert_eq!(m.best().0.total(), best, "the best cost never rises");
    }
    m.finish();
    assert!(m.objective().total < 0.25 * start, "{} from {start}", m.objective().total);
    let kept = triplets_kept(m.h(), &ts).unwrap();
    assert!(kept > 0.95, "kept {kept}");
    assert!(m.notes()[0].contains("samples are in no triplet"), "{:?}", m.notes());
}
