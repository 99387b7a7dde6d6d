//! The pipeline's own behaviour: the side-information policies hand and score what they say,
//! the blocking and streaming forms give the same bits as a fit scored by hand, the stages come
//! in order, and the errors say whose fault they are.

use super::*;
use crate::engine::constraints::Triplet;
use crate::engine::eval::{Protocol as EvalProtocol, RunInput, evaluate_run};
use crate::engine::models::{nmf, rpnmf, stginmf};
use ndarray::Array2;

/// Three well-separated nonnegative groups of `per` samples in 6 features, labelled.
fn groups(per: usize) -> Arc<Dataset> {
    let n = 3 * per;
    let labels: Vec<usize> = (0..n).map(|i| i / per).collect();
    let x = Array2::from_shape_fn((6, n), |(r, c)| {
        let on = if r % 3 == labels[c] { 4.0 } else { 0.3 };
        on + 0.1 * ((r * 7 + c * 13) % 11) as f64
    });
    let names = vec!["a".into(), "b".into(), "c".into()];
    Arc::new(Dataset::from_parts(x, Some(labels), names, "groups"))
}

fn fit() -> FitOptions {
    FitOptions {
        max_iter: 40,
        tol: 0.0,
    }
}

fn triplets() -> Arc<Vec<Triplet>> {
    Arc::new(vec![Triplet::new(0, 1, 10), Triplet::new(11, 12, 20)])
}

#[test]
fn a_model_is_handed_only_what_it_uses_but_every_triplet_is_scored() {
    let data = groups(8);
    let side = Side::Policy {
        triplets: TripletPolicy::Given(triplets()),
        labels: LabelPolicy::Reveal(0.5),
        hand: Hand::WhatTheModelUses,
    };
    let nmf = side.resolve(&data, nmf::KIND, 3, false).unwrap();
    assert!(nmf.handed.triplets.is_empty() && nmf.handed.labels.is_empty());
    assert_eq!(nmf.triplets.len(), 2, "scored all the same");
    assert!(
        nmf.known.is_empty(),
        "no labels drawn for a model that ignores them"
    );
    // The semi protocol scores against the known labels: drawn, not handed.
    let scored = side.resolve(&data, nmf::KIND, 3, true).unwrap();
    assert_eq!(scored.known.iter().flatten().count(), 12);
    assert!(scored.handed.labels.is_empty());
    let rp = side.resolve(&data, rpnmf::KIND, 3, false).unwrap();
    assert_eq!(rp.handed.triplets.len(), 2);
    assert!(rp.handed.labels.is_empty());
    let st = side.resolve(&data, stginmf::KIND, 3, false).unwrap();
    assert!(st.handed.triplets.is_empty());
    assert_eq!(st.handed.n_known_labels(), 12);
    // Handed everything, the same seed reveals the same samples.
    let all = Side::Policy {
        triplets: TripletPolicy::Given(triplets()),
        labels: LabelPolicy::Reveal(0.5),
        hand: Hand::Everything,
    };
    let a = all.resolve(&data, nmf::KIND, 3, false).unwrap();
    assert_eq!(a.handed.triplets.len(), 2);
    assert_eq!(*a.known, st.handed.labels, "seeded by the trial's seed");
}

#[test]
fn generated_triplets_are_counted_and_need_labels() {
    let data = groups(10);
    let side = Side::Policy {
        triplets: TripletPolicy::Generate {
            anchor_fraction: 0.2,
            per_anchor: 4,
        },
        labels: LabelPolicy::None,
        hand: Hand::Everything,
    };
    let r = side.resolve(&data, rpnmf::KIND, 1, false).unwrap();
    let g = r.generated.unwrap();
    assert_eq!(g.anchors, 6);
    assert_eq!(g.label_based + g.neighbour_based, r.triplets.len());
    assert_eq!(r.handed.triplets, *r.triplets);
    let bare = Dataset::from_parts(data.x.clone(), None, Vec::new(), "bare");
    let e = side.resolve(&bare, rpnmf::KIND, 1, false).unwrap_err();
    assert!(
        e.is_bad_input() && e.to_string().contains("labelled"),
        "{e}"
    );
}

#[test]
fn a_trial_is_the_fit_scored_by_the_evaluation_and_both_forms_agree() {
    let data = groups(8);
    let mut trial = Trial::new(Arc::clone(&data), ModelSpec::new(nmf::KIND, 3, 5), fit());
    trial.side = Side::Policy {
        triplets: TripletPolicy::Given(triplets()),
        labels: LabelPolicy::None,
        hand: Hand::Everything,
    };
    trial.protocol.kmeans_restarts = 4;
    let blocking = trial.run().unwrap();
    let mut stages = Vec::new();
    let mut progress = 0;
    let streamed = trial
        .run_with(&mut |e| {
            match e {
                TrialEvent::Stage(s) => stages.push(s),
                TrialEvent::Fit(Event::Progress { .. }) => progress += 1,
                TrialEvent::Fit(_) => {}
            }
            true
        })
        .unwrap();
    assert_eq!(stages, [Stage::Side, Stage::Fit, Stage::Evaluation]);
    assert!(progress > 0, "the fit's progress is streamed");
    assert_eq!(blocking.result.h, streamed.result.h);
    // Everything but the evaluation's wall-clock seconds.
    let timeless = |s: &Scores| {
        let mut s = s.clone();
        s.evaluation.seconds = 0.0;
        s
    };
    assert_eq!(timeless(&blocking.scores), timeless(&streamed.scores));
    // The same bits as the evaluation called by hand on the fit.
    let fit = blocking.fit();
    let by_hand = evaluate_run(
        &RunInput {
            h: fit.h.view(),
            x: Some(data.x.view()),
            assignments: None,
            truth: data.labels.as_deref(),
            n_classes: 3,
            triplets: &triplets(),
            seed: 5,
            classifier: None,
            baseline_h: None,
        },
        &EvalProtocol {
            kmeans_restarts: 4,
            ..EvalProtocol::default()
        },
    );
    let ev = &blocking.scores.evaluation;
    assert_eq!(ev.clustering, by_hand.clustering);
    assert_eq!(ev.classification, by_hand.classification);
    assert_eq!((ev.kept_h, ev.kept_x), (by_hand.kept_h, by_hand.kept_x));
    assert!(ev.kept_x.is_some(), "run's protocol measures X too");
    assert!(blocking.scores.given.is_none() && blocking.scores.baseline_note.is_none());
}

#[test]
fn the_semi_protocol_scores_every_model_on_the_samples_not_given() {
    let data = groups(10);
    let mut trial = Trial::new(Arc::clone(&data), ModelSpec::new(nmf::KIND, 3, 2), fit());
    trial.side = Side::Policy {
        triplets: TripletPolicy::None,
        labels: LabelPolicy::Reveal(0.3),
        hand: Hand::WhatTheModelUses,
    };
    trial.protocol = Protocol {
        kmeans_restarts: 2,
        split: false,
        classifier: false,
        kept_in_x: false,
        given: true,
        ..Protocol::default()
    };
    let mut stages = Vec::new();
    let out = trial
        .run_with(&mut |e| {
            if let TrialEvent::Stage(s) = e {
                stages.push(s);
            }
            true
        })
        .unwrap();
    assert!(stages.contains(&Stage::Baseline));
    let given = out.scores.given.unwrap().unwrap();
    assert!(!given.classifier);
    let scored = data.n() - out.side.known.iter().flatten().count();
    assert_eq!(
        given.model.n, scored,
        "scored on the samples not given only"
    );
    assert!(given.svm_x.is_some() && given.svm_h.is_some());
    assert!(out.scores.evaluation.classification.is_none());
}

#[test]
fn errors_say_whose_fault_they_are_and_a_refused_fit_stops_the_trial() {
    let data = groups(4);
    // A rank above min(m, n) is refused when the model is built: the user's input.
    let trial = Trial::new(Arc::clone(&data), ModelSpec::new(nmf::KIND, 50, 0), fit());
    let e = trial.run().unwrap_err();
    assert!(e.is_bad_input() && e.model_error().is_some(), "{e:?}");
    // Stopping the fit from the callback ends the trial without an outcome.
    let trial = Trial::new(data, ModelSpec::new(nmf::KIND, 2, 0), fit());
    let e = trial.run_with(&mut |e| !matches!(e, TrialEvent::Fit(Event::Progress { .. })));
    assert!(matches!(e, Err(TrialError::NoResult { .. })), "{e:?}");
}

#[test]
fn a_fit_only_protocol_ends_after_the_fit_with_the_same_bits() {
    let data = groups(8);
    let spec = ModelSpec::new(nmf::KIND, 3, 5);
    let scored = Trial::new(Arc::clone(&data), spec.clone(), fit())
        .run()
        .unwrap();
    assert!(scored.scores.evaluation.clustering.is_some());
    let mut trial = Trial::new(data, spec, fit());
    trial.protocol = Protocol::FIT_ONLY;
    let mut stages = Vec::new();
    let bare = trial
        .run_with(&mut |e| {
            if let TrialEvent::Stage(s) = e {
                stages.push(s);
            }
            true
        })
        .unwrap();
    assert_eq!(stages, [Stage::Side, Stage::Fit], "no evaluation stage");
    assert_eq!(bare.scores, Scores::default());
    assert_eq!(bare.fit().h, scored.fit().h);
}

/// Receive events until the terminal one (or fail after a generous wait).
fn until_terminal(rx: &std::sync::mpsc::Receiver<Event>, seen: &mut Vec<Event>) -> Event {
    loop {
        let e = rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the spawned fit sends its events");
        if e.is_terminal() {
            return e;
        }
        seen.push(e);
    }
}

#[test]
fn the_steered_form_gives_the_blocking_forms_bits_and_obeys_its_commands() {
    let data = groups(8);
    let trial = Trial::new(Arc::clone(&data), ModelSpec::new(nmf::KIND, 3, 5), fit());
    let blocking = trial.run().unwrap();

    let (tx, rx) = std::sync::mpsc::channel();
    let handle = trial.spawn(false, tx, Arc::new(|| {})).unwrap();
    let mut seen = Vec::new();
    let Event::Finished { result, .. } = until_terminal(&rx, &mut seen) else {
        panic!("the fit finishes");
    };
    assert_eq!(
        result.h, blocking.result.h,
        "the same bits as the blocking form"
    );
    assert!(
        seen.iter().any(|e| matches!(e, Event::Snapshot { .. })),
        "the steered form sends snapshots for the app to draw"
    );
    drop(handle);

    // Held after its first iteration: nothing more arrives until a Step, then a Cancel ends
    // it with its result.
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = trial.spawn(true, tx, Arc::new(|| {})).unwrap();
    let progress_at = |e: &Event| match e {
        Event::Progress { iteration, .. } => Some(*iteration),
        _ => None,
    };
    let mut last = 0;
    while last < 1 {
        let e = rx.recv_timeout(std::time::Duration::from_secs(30)).unwrap();
        last = progress_at(&e).unwrap_or(last);
    }
    std::thread::sleep(std::time::Duration::from_millis(150));
    let quiet: Vec<usize> = rx.try_iter().filter_map(|e| progress_at(&e)).collect();
    assert!(quiet.is_empty(), "a held fit makes no progress: {quiet:?}");
    handle.send(worker::Command::Step);
    handle.send(worker::Command::Cancel);
    let mut seen = Vec::new();
    let end = until_terminal(&rx, &mut seen);
    let stepped: Vec<usize> = seen.iter().filter_map(progress_at).collect();
    assert!(
        stepped.iter().all(|&t| t <= 2),
        "one step at most: {stepped:?}"
    );
    assert!(matches!(end, Event::Cancelled { .. }), "{end:?}");
}
