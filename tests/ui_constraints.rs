//! UI tests of the constraint tools (issue 3 §4) with egui_kittest: triplets clicked on the
//! live scatter at data coordinates (through the stored `PlotTransform`), undo / redo keys,
//! label painting, protocol generation as one undo step, save / load, and RPNMF runs.

#![cfg(feature = "gui")]
#![expect(clippy::expect_used, reason = "test helpers fail loudly")]

mod common;

use common::{MAX_STEPS, loaded, step_until};
use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use nmf_playground::engine::constraints::{ProtocolOptions, Triplet};
use nmf_playground::gui::{App, Tool, UiCommand, WorkerState};

/// The bundled sample loaded and factorized once, so the scatter is drawn.
fn with_scatter() -> Harness<'static, App> {
    let mut h = loaded();
    h.get_by_label("Run").click();
    step_until(&mut h, "the run to finish", MAX_STEPS, |a| {
        matches!(a.session().worker, WorkerState::Finished(_))
    });
    h.run_steps(2);
    assert!(h.state().session().plot_transform.is_some());
    h
}

/// Screen position of sample `i` on the scatter.
fn screen_of(h: &Harness<'static, App>, i: usize) -> egui::Pos2 {
    let s = h.state().session();
    let t = s.plot_transform.expect("transform");
    t.position_from_point(&s.scatter.by_sample[i])
}

/// Press and release the primary button at `pos` (a click), one event per frame.
fn click_at(h: &mut Harness<'static, App>, pos: egui::Pos2) {
    h.hover_at(pos);
    h.step();
    h.drag_at(pos);
    h.step();
    h.event(egui::Event::PointerButton {
        pos,
        button: egui::PointerButton::Primary,
        pressed: false,
        modifiers: egui::Modifiers::NONE,
    });
    h.step();
}

/// Three samples drawn at least 12 px from any other sample (so a click picks exactly them).
fn isolated_samples(h: &Harness<'static, App>, count: usize) -> Vec<usize> {
    let n = h.state().session().scatter.by_sample.len();
    let pos: Vec<egui::Pos2> = (0..n).map(|i| screen_of(h, i)).collect();
    let rect = h
        .state()
        .session()
        .plot_transform
        .expect("transform")
        .frame()
        .shrink(10.0);
    (0..n)
        .filter(|&i| rect.contains(pos[i]))
        .filter(|&i| (0..n).all(|j| j == i || pos[j].distance(pos[i]) > 12.0))
        .take(count)
        .collect()
}

fn triplets(h: &Harness<'static, App>) -> Vec<Triplet> {
    h.state()
        .session()
        .store
        .as_ref()
        .expect("store")
        .triplets()
        .to_vec()
}

#[test]
fn three_clicks_add_a_triplet_and_undo_redo_keys_work() {
    let mut h = with_scatter();
    h.get_by_label("Triplet").click();
    h.run_steps(2);
    assert_eq!(h.state().session().tool, Tool::Triplet);
    h.get_by_label("Triplet: click the anchor i");
    let ids = isolated_samples(&h, 3);
    assert_eq!(ids.len(), 3, "not enough isolated samples on the plot");
    for (k, &i) in ids.iter().enumerate() {
        let p = screen_of(&h, i);
        click_at(&mut h, p);
        if k < 2 {
            assert_eq!(
                h.state().session().partial.len(),
                k + 1,
                "click {k} not picked"
            );
        }
    }
    h.run_steps(2);
    let t = Triplet::new(ids[0], ids[1], ids[2]);
    assert_eq!(triplets(&h), vec![t], "{:?}", h.state().session().status);
    assert!(h.state().session().partial.is_empty());

    // The same triplet again is refused with a message.
    for &i in &ids {
        let p = screen_of(&h, i);
        click_at(&mut h, p);
    }
    h.run_steps(2);
    assert_eq!(triplets(&h).len(), 1);
    assert!(h.state().session().status.is_error);

    h.remove_cursor();
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
    h.run_steps(2);
    assert!(triplets(&h).is_empty(), "Ctrl+Z did not remove the triplet");
    h.key_press_modifiers(
        egui::Modifiers::COMMAND | egui::Modifiers::SHIFT,
        egui::Key::Z,
    );
    h.run_steps(2);
    assert_eq!(triplets(&h), vec![t], "Ctrl+Shift+Z did not restore it");
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
    h.run_steps(1);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Y);
    h.run_steps(2);
    assert_eq!(triplets(&h), vec![t], "Ctrl+Y did not redo");
    h.check_accessibility();
}

#[test]
fn escape_cancels_a_partial_triplet() {
    let mut h = with_scatter();
    h.get_by_label("Triplet").click();
    h.run_steps(2);
    let ids = isolated_samples(&h, 1);
    let p = screen_of(&h, ids[0]);
    click_at(&mut h, p);
    assert_eq!(h.state().session().partial, vec![ids[0]]);
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    assert!(h.state().session().partial.is_empty());
    assert!(triplets(&h).is_empty());
}

#[test]
fn label_mode_click_paints_a_label() {
    let mut h = with_scatter();
    h.get_by_label("Label").click();
    h.run_steps(2);
    let class = h.state().session().paint_class.clone();
    assert!(!class.is_empty(), "no default class to paint");
    let ids = isolated_samples(&h, 1);
    let p = screen_of(&h, ids[0]);
    click_at(&mut h, p);
    h.run_steps(2);
    let s = h.state().session();
    let labels = s.store.as_ref().expect("store").labels();
    let c = labels.get(ids[0]).expect("sample not labelled");
    assert_eq!(labels.class_names()[c], class);
    assert_eq!(labels.n_labelled(), 1);
    assert!(s.store.as_ref().expect("store").is_dirty());
}

#[test]
fn generate_adds_triplets_as_one_undo_step() {
    let mut h = with_scatter();
    h.get_by_label("Generate triplets…").click();
    h.run_steps(2);
    h.get_by_label("Generate").click();
    step_until(&mut h, "generated triplets", MAX_STEPS, |a| {
        !a.session().generating
            && a.session()
                .store
                .as_ref()
                .is_some_and(|s| !s.triplets().is_empty())
    });
    let st = h.state().session().store.as_ref().expect("store");
    assert!(st.triplets().len() > 10, "{}", st.triplets().len());
    // The glyph sample has ground truth: the default source, so label-based triplets exist.
    assert!(
        h.state().session().status.text.contains("from labels")
            && !h.state().session().status.text.contains("(0 from labels"),
        "{:?}",
        h.state().session().status
    );
    assert_eq!(st.undo_len(), 1, "generation must be one undo step");
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
    h.run_steps(2);
    assert!(triplets(&h).is_empty());
}

#[test]
fn save_then_load_round_trips() {
    let mut h = with_scatter();
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("constraints.json");
    h.state_mut().push_command(UiCommand::GenerateTriplets {
        opts: ProtocolOptions {
            anchor_fraction: 0.05,
            per_anchor: 4,
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
    h.state_mut().push_command(UiCommand::RevealLabels {
        fraction: 0.1,
        seed: 3,
    });
    h.run_steps(2);
    let before = triplets(&h);
    let labelled = h
        .state()
        .session()
        .store
        .as_ref()
        .expect("store")
        .labels()
        .clone();
    assert!(labelled.n_labelled() > 0);

    h.state_mut()
        .push_command(UiCommand::SaveConstraints(Some(path.clone())));
    h.run_steps(2);
    assert!(path.exists(), "{:?}", h.state().session().status);
    assert!(
        !h.state()
            .session()
            .store
            .as_ref()
            .expect("store")
            .is_dirty()
    );

    // Change everything, then load the file back.
    h.state_mut().push_command(UiCommand::Undo);
    h.state_mut().push_command(UiCommand::Undo);
    h.run_steps(2);
    assert!(triplets(&h).is_empty());
    h.state_mut()
        .push_command(UiCommand::LoadConstraints(path.clone()));
    h.run_steps(2);
    let s = h.state().session();
    assert!(!s.status.is_error, "{:?}", s.status);
    assert_eq!(triplets(&h), before);
    assert_eq!(s.store.as_ref().expect("store").labels(), &labelled);
}

#[test]
fn rpnmf_without_triplets_explains_and_with_generated_ones_runs() {
    let mut h = with_scatter();
    h.state_mut().settings_mut().model = "rpnmf".to_owned();
    h.run_steps(1);
    h.get_by_label("Run").click();
    h.run_steps(2);
    let s = h.state().session();
    assert!(
        s.status.is_error && s.status.text.contains("needs triplets"),
        "{:?}",
        s.status
    );
    assert!(!s.worker.is_active());

    h.state_mut().push_command(UiCommand::GenerateTriplets {
        opts: ProtocolOptions::default(),
        from_truth: true,
    });
    step_until(&mut h, "generated triplets", MAX_STEPS, |a| {
        a.session()
            .store
            .as_ref()
            .is_some_and(|s| !s.triplets().is_empty())
    });
    h.get_by_label("Run").click();
    step_until(&mut h, "RPNMF to finish", MAX_STEPS, |a| {
        matches!(a.session().worker, WorkerState::Finished(_))
    });
    h.run_steps(2);
    let s = h.state().session();
    let kept = s.kept.as_ref().and_then(|k| k.share).expect("kept share");
    assert!((0.0..=1.0).contains(&kept));
    assert!(
        h.query_all_by_label_contains("triplets kept").count() >= 1,
        "kept share not shown"
    );
    h.get_by_label("Show violations").click();
    h.run_steps(2);
    assert!(h.state().session().show_violations);
    // The triplet lines can be hidden (hundreds of generated triplets hide the points).
    assert!(!h.state().session().hide_triplets);
    h.get_by_label("Show triplets").click();
    h.run_steps(2);
    assert!(h.state().session().hide_triplets);
}
