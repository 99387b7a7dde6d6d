//! UI tests of the side-by-side comparison of two runs (issue 21 point 2) with egui_kittest:
//! two finished runs selected in the history, "Compare side by side" opens the window with
//! the two layouts and the morph; the triplet counts agree with each run's "Kept" score;
//! hovering a sample in one view highlights it in the others, a click selects it in all; the
//! morph runs from layout A to aligned layout B; runs on different datasets are refused.

#![cfg(feature = "gui")]
#![expect(clippy::expect_used, reason = "test helpers fail loudly")]

mod common;
#[path = "common/pointer.rs"]
mod pointer;

use common::{MAX_STEPS, step_until};
use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use nmf_playground::engine::constraints::ProtocolOptions;
use nmf_playground::engine::data::samples::Sample;
use nmf_playground::gui::compare::{Command, CompareView, Pane};
use nmf_playground::gui::{App, WorkerState, constraints, data, runs};
use pointer::click_at;

/// The comparison feature's state.
fn compare_of(app: &App) -> &CompareView {
    app.feature::<CompareView>()
        .expect("the app has the comparison")
}

fn loaded() -> Harness<'static, App> {
    let mut h = common::loaded();
    h.state_mut().settings_mut().kmeans_restarts = 3;
    h
}

/// Run the selected `model`, wait for the run and its evaluation (run number `run`).
fn run_and_evaluate(h: &mut Harness<'static, App>, model: &str, run: u64) {
    h.state_mut().settings_mut().model = model.to_owned();
    h.state_mut().send(runs::Command::Run);
    step_until(h, "the run and its evaluation", MAX_STEPS, |a| {
        matches!(a.run().worker, WorkerState::Finished(_))
            && a.session().history.len() as u64 == run
            && a.session().evaluating.is_none()
            && a.session().history.last().is_some_and(|r| r.acc.is_some())
    });
    h.run_steps(2);
}

/// Scroll the widget labelled `label` into view (the right panel scrolls), then click it.
fn click_visible(h: &mut Harness<'static, App>, label: &str) {
    h.hover_at(egui::pos2(5.0, 5.0));
    h.run_steps(2);
    h.get_by_label(label).scroll_to_me();
    h.run_steps(20);
    h.get_by_label(label).click();
    h.run_steps(2);
}

/// Screen positions of every sample in comparison view `pane`.
fn screen(h: &Harness<'static, App>, pane: Pane) -> Vec<egui::Pos2> {
    let cv = &compare_of(h.state());
    let t = cv.transforms[pane as usize].expect("the view was drawn");
    cv.caches[pane as usize]
        .by_sample
        .iter()
        .map(|p| t.position_from_point(p))
        .collect()
}

/// A sample drawn inside view `pane` at least 14 px from every other sample.
fn isolated(h: &Harness<'static, App>, pane: Pane) -> usize {
    let pos = screen(h, pane);
    let frame = compare_of(h.state()).transforms[pane as usize]
        .expect("transform")
        .frame()
        .shrink(12.0);
    (0..pos.len())
        .find(|&i| {
            frame.contains(pos[i])
                && (0..pos.len()).all(|j| j == i || pos[j].distance(pos[i]) > 14.0)
        })
        .expect("an isolated sample")
}

#[test]
fn two_runs_compared_side_by_side_with_linked_hover_and_a_morph() {
    let mut h = loaded();
    h.state_mut().send(constraints::Command::Generate {
        opts: ProtocolOptions {
            anchor_fraction: 0.1,
            per_anchor: 6,
            ..ProtocolOptions::default()
        },
        from_truth: true,
    });
    step_until(&mut h, "generated triplets", MAX_STEPS, |a| {
        a.session()
            .store
            .as_ref()
            .is_some_and(|s| !s.triplets().is_empty())
    });
    run_and_evaluate(&mut h, "nmf", 1);
    run_and_evaluate(&mut h, "rpnmf", 2);
    assert!(
        h.query_by_label("Compare side by side").is_none(),
        "the button needs two selected runs"
    );
    click_visible(&mut h, "run 1");
    click_visible(&mut h, "run 2");
    click_visible(&mut h, "Compare side by side");
    step_until(&mut h, "the comparison", MAX_STEPS, |a| {
        compare_of(a).result.is_some()
    });
    h.hover_at(egui::pos2(5.0, 5.0));
    h.run_steps(3);
    for label in [
        "Layout of run 1",
        "Layout of run 2 aligned to run 1",
        "Morph from run 1 to run 2",
    ] {
        h.get_by_label(label);
    }
    let c = compare_of(h.state()).result.clone().expect("result");
    assert_eq!(c.runs, [1, 2]);
    let n = h.state().session().dataset.as_ref().expect("data").n();
    assert_eq!((c.layout_a.nrows(), c.layout_b.nrows()), (n, n));

    // A's layout is run 1's last frame; B's is run 2's moved by the alignment, which fits
    // A at least as well as B's frame left where it was.
    let history = h.state().session().history.clone();
    let frame = |r: usize| {
        history[r]
            .snapshot
            .as_ref()
            .expect("frame")
            .projection
            .clone()
    };
    assert_eq!(c.layout_a, frame(0));
    let (raw_b, a) = (frame(1), frame(0));
    let moved = c.alignment.apply(raw_b.view());
    assert_eq!(moved, c.layout_b);
    let rms =
        |x: &ndarray::Array2<f64>| ((x - &a).iter().map(|v| v * v).sum::<f64>() / n as f64).sqrt();
    assert!((rms(&c.layout_b) - c.alignment.rms).abs() < 1e-9);
    assert!(c.alignment.rms <= rms(&raw_b) + 1e-12);

    // The counts: each run's flags give its "Kept" score, and the window shows the numbers.
    let k = c.kept.as_ref().expect("triplets were given");
    for (flags, row) in [(&k.kept_a, &history[0]), (&k.kept_b, &history[1])] {
        let share = flags.iter().filter(|&&b| b).count() as f64 / flags.len() as f64;
        let kept = row.kept.expect("kept score");
        assert!((share - kept).abs() < 1e-12, "{share} vs {kept}");
    }
    assert_eq!(
        k.only_a.len() + k.only_b.len() + k.both() + k.neither(),
        c.triplets.len()
    );
    h.get_by_label(&format!("kept by run 1 only: {}", k.only_a.len()));
    h.get_by_label(&format!("kept by run 2 only: {}", k.only_b.len()));

    // Hover a sample in A: the same sample is highlighted in B and in the morph.
    let i = isolated(&h, Pane::A);
    h.hover_at(screen(&h, Pane::A)[i]);
    h.run_steps(3);
    let cv = &compare_of(h.state());
    assert_eq!(cv.hovered, Some(i));
    assert_eq!(cv.drawn_hover, [Some(i); 3]);
    // A click in B selects its sample in all three views; a second click clears it.
    let j = isolated(&h, Pane::B);
    let at_j = screen(&h, Pane::B)[j];
    click_at(&mut h, at_j);
    h.run_steps(2);
    let cv = &compare_of(h.state());
    assert_eq!(cv.selected, Some(j));
    assert_eq!(cv.drawn_selection, [Some(j); 3]);
    click_at(&mut h, at_j);
    h.run_steps(2);
    assert_eq!(compare_of(h.state()).selected, None);

    // The morph starts on A's layout, passes between, and ends on B's aligned layout.
    h.hover_at(egui::pos2(5.0, 5.0));
    h.run_steps(2);
    let pane = |h: &Harness<'static, App>, p: Pane| {
        compare_of(h.state()).caches[p as usize].by_sample.clone()
    };
    assert_eq!(pane(&h, Pane::Morph), pane(&h, Pane::A));
    h.get_by_label("Play").click();
    h.run_steps(5);
    let t = compare_of(h.state()).morph;
    assert!(t > 0.0 && t < 1.0, "morph {t} while playing");
    step_until(&mut h, "the morph to end", MAX_STEPS, |a| {
        !compare_of(a).playing
    });
    h.run_steps(2);
    assert_eq!(compare_of(h.state()).morph, 1.0);
    assert_eq!(pane(&h, Pane::Morph), pane(&h, Pane::B));
    h.get_by_label("at run 1").click();
    h.run_steps(2);
    assert_eq!(pane(&h, Pane::Morph), pane(&h, Pane::A));
    h.check_accessibility();
}

#[test]
fn runs_on_different_datasets_are_not_compared() {
    let mut h = loaded();
    run_and_evaluate(&mut h, "nmf", 1);
    h.state_mut().send(data::Command::LoadSample(Sample::Blobs));
    step_until(&mut h, "the other sample", MAX_STEPS, |a| {
        a.session()
            .dataset
            .as_ref()
            .is_some_and(|d| d.source.contains("blobs"))
    });
    run_and_evaluate(&mut h, "nmf", 2);
    h.state_mut().send(Command::Runs([1, 2]));
    h.run_steps(3);
    let cv = &compare_of(h.state());
    assert!(cv.open && cv.result.is_none() && cv.computing.is_none());
    let why = cv.refusal.clone().expect("a refusal");
    assert!(why.contains("different datasets"), "{why}");
    h.get_by_label(&why);
}
