//! The semi-supervised loop of issue 19 in the app, with egui_kittest: reveal a few labels,
//! run 2-STGINMF, read its scores next to the SVM's, paint the true label of a sample it got
//! wrong (or was least sure of) with one click, undo it as one step, and re-run from there.

#![cfg(feature = "gui")]

mod common;
#[path = "common/pointer.rs"]
mod pointer;
#[path = "common/scatter.rs"]
mod scatter;

use common::{MAX_STEPS, loaded, step_until};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use nmf_playground::engine::models::LabelOrigin;
use nmf_playground::gui::{App, WorkerState, constraints};
use pointer::click_at;

/// Run the current model and wait for the run and its evaluation.
fn run_to_the_end(h: &mut Harness<'static, App>) {
    let before = h.state().session().history.len();
    // 2-STGINMF's hyperparameters and the two-line tour strip push Run down the right
    // panel's scroll area at 1280×800: scroll it into view first.
    h.hover_at(eframe::egui::pos2(5.0, 5.0));
    h.get_by_label("Run").scroll_to_me();
    h.run_steps(10);
    h.get_by_label("Run").click();
    step_until(h, "the run to finish", MAX_STEPS, |a| {
        matches!(a.run().worker, WorkerState::Finished(_)) && a.session().history.len() > before
    });
    step_until(h, "the evaluation", MAX_STEPS, |a| {
        a.session()
            .history
            .last()
            .is_some_and(|r| r.evaluation.is_some())
    });
    h.run_steps(2);
}

#[test]
fn reveal_run_paint_a_correction_undo_it_and_run_again() {
    let mut h = loaded();
    let truth = h
        .state()
        .session()
        .dataset
        .as_ref()
        .and_then(|d| d.labels.clone())
        .expect("the bundled sample has labels");
    let classes = truth.iter().max().map_or(0, |c| c + 1);
    h.state_mut().send(constraints::Command::Reveal {
        fraction: 0.1,
        seed: 0,
    });
    h.run_steps(2);
    let given = h
        .state()
        .session()
        .store
        .as_ref()
        .expect("store")
        .labels()
        .n_labelled();
    assert!(given > 0 && given < truth.len());
    h.state_mut().settings_mut().model = "stginmf".to_owned();
    h.state_mut().settings_mut().k = classes;
    h.run_steps(1);
    run_to_the_end(&mut h);

    // Scores on the samples not given, beside the SVM on the same split.
    let row = h.state().session().history.last().expect("a run").clone();
    let semi = row
        .evaluation
        .as_ref()
        .and_then(|e| e.semi.clone())
        .expect("a classifier run on labelled data is scored on the samples not given");
    assert_eq!(semi.given, given);
    assert_eq!(semi.model.n, truth.len() - given);
    assert!(semi.svm_x.is_some(), "the SVM on X beside the model");
    assert!(
        semi.model.accuracy > 0.5,
        "accuracy {}",
        semi.model.accuracy
    );

    // The predicted sample to correct: a wrong one if any, else the least confident.
    let preds = row
        .snapshot
        .as_ref()
        .and_then(|s| s.outputs.predictions.clone())
        .expect("predictions in the run's last frame");
    let unknown: Vec<usize> = (0..truth.len())
        .filter(|&i| preds.origin[i] != LabelOrigin::Given)
        .collect();
    let target = unknown
        .iter()
        .copied()
        .find(|&i| preds.labels[i] != truth[i])
        .or_else(|| {
            unknown
                .iter()
                .copied()
                .min_by(|&a, &b| preds.confidence[a].total_cmp(&preds.confidence[b]))
        })
        .expect("samples not given");

    // Bring the scatter to a state where the target can be clicked alone.
    h.get_by_label("Label").click();
    h.run_steps(2);
    let class_name = h
        .state()
        .session()
        .dataset
        .as_ref()
        .expect("data")
        .class_names[truth[target]]
        .clone();
    h.state_mut().view_mut().paint_class = class_name;
    h.run_steps(2);
    let undo_before = h
        .state()
        .session()
        .store
        .as_ref()
        .expect("store")
        .undo_len();
    let pos = {
        let v = h.state().view();
        let t = scatter::of(h.state()).plot_transform.expect("transform");
        t.position_from_point(&v.scatter.by_sample[target])
    };
    // Another sample drawn on top of the target would take the click: paint by command then,
    // the same path the click takes (one PaintLabels command).
    let crowded = {
        let v = h.state().view();
        let t = scatter::of(h.state()).plot_transform.expect("transform");
        (0..truth.len()).any(|j| {
            j != target && t.position_from_point(&v.scatter.by_sample[j]).distance(pos) < 6.0
        })
    };
    if crowded {
        h.state_mut()
            .send(constraints::Command::PaintLabels(vec![target]));
        h.run_steps(2);
    } else {
        click_at(&mut h, pos);
        h.run_steps(2);
    }
    {
        let store = h.state().session().store.as_ref().expect("store");
        assert_eq!(store.undo_len(), undo_before + 1, "one undo step");
        assert_eq!(store.labels().get(target), Some(truth[target]));
        assert_eq!(store.labels().n_labelled(), given + 1);
    }
    // Undo takes exactly that edit back; redo restores it.
    h.state_mut().send(constraints::Command::Undo);
    h.run_steps(2);
    assert_eq!(
        h.state()
            .session()
            .store
            .as_ref()
            .expect("store")
            .labels()
            .get(target),
        None
    );
    h.state_mut().send(constraints::Command::Redo);
    h.run_steps(2);

    // Run again: the correction is part of the training set and scored as given.
    run_to_the_end(&mut h);
    let row = h.state().session().history.last().expect("a run").clone();
    let preds = row
        .snapshot
        .as_ref()
        .and_then(|s| s.outputs.predictions.clone())
        .expect("predictions");
    assert_eq!(preds.origin[target], LabelOrigin::Given);
    assert_eq!(preds.labels[target], truth[target]);
    let semi = row
        .evaluation
        .as_ref()
        .and_then(|e| e.semi.clone())
        .expect("semi");
    assert_eq!(semi.given, given + 1);
}
