//! UI tests of the constraint tools (issue 3 §4) with egui_kittest: triplets clicked on the
//! live scatter at data coordinates (through the stored `PlotTransform`), undo / redo keys,
//! label painting, protocol generation as one undo step, save / load, and RPNMF runs.

#![cfg(feature = "gui")]
#![expect(clippy::expect_used, reason = "test helpers fail loudly")]

mod common;
#[path = "common/pointer.rs"]
mod pointer;
#[path = "common/scatter.rs"]
mod scatter;

use common::{MAX_STEPS, loaded, step_until};
use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use nmf_playground::engine::constraints::{ProtocolOptions, Triplet};
use nmf_playground::gui::{App, Tool, UiCommand, WorkerState, constraints, data};
use pointer::click_at;

/// The bundled sample loaded and factorized once, so the scatter is drawn.
fn with_scatter() -> Harness<'static, App> {
    let mut h = loaded();
    h.get_by_label("Run").click();
    step_until(&mut h, "the run to finish", MAX_STEPS, |a| {
        matches!(a.run().worker, WorkerState::Finished(_))
    });
    h.run_steps(2);
    assert!(scatter::of(h.state()).plot_transform.is_some());
    h
}

/// Screen position of sample `i` on the scatter.
fn screen_of(h: &Harness<'static, App>, i: usize) -> egui::Pos2 {
    let v = h.state().view();
    let t = scatter::of(h.state()).plot_transform.expect("transform");
    t.position_from_point(&v.scatter.by_sample[i])
}

/// Three samples drawn at least 12 px from any other sample (so a click picks exactly them).
fn isolated_samples(h: &Harness<'static, App>, count: usize) -> Vec<usize> {
    let n = h.state().view().scatter.by_sample.len();
    let pos: Vec<egui::Pos2> = (0..n).map(|i| screen_of(h, i)).collect();
    let rect = scatter::of(h.state())
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
    assert_eq!(scatter::of(h.state()).tool, Tool::Triplet);
    h.get_by_label("Triplet: click the anchor i");
    let ids = isolated_samples(&h, 3);
    assert_eq!(ids.len(), 3, "not enough isolated samples on the plot");
    for (k, &i) in ids.iter().enumerate() {
        let p = screen_of(&h, i);
        click_at(&mut h, p);
        if k < 2 {
            assert_eq!(
                scatter::of(h.state()).partial.len(),
                k + 1,
                "click {k} not picked"
            );
        }
    }
    h.run_steps(2);
    let t = Triplet::new(ids[0], ids[1], ids[2]);
    assert_eq!(triplets(&h), vec![t], "{:?}", h.state().session().status);
    assert!(scatter::of(h.state()).partial.is_empty());

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
    assert_eq!(scatter::of(h.state()).partial, vec![ids[0]]);
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    assert!(scatter::of(h.state()).partial.is_empty());
    assert!(triplets(&h).is_empty());
}

#[test]
fn label_mode_click_paints_a_label() {
    let mut h = with_scatter();
    h.get_by_label("Label").click();
    h.run_steps(2);
    let class = h.state().view().paint_class.clone();
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
    h.state_mut().send(constraints::Command::Generate {
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
    h.state_mut().send(constraints::Command::Reveal {
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
        .send(constraints::Command::Save(Some(path.clone())));
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
    h.state_mut().send(constraints::Command::Undo);
    h.state_mut().send(constraints::Command::Undo);
    h.run_steps(2);
    assert!(triplets(&h).is_empty());
    h.state_mut().send(constraints::Command::Load(path.clone()));
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
    assert!(!h.state().run().worker.is_active());

    h.state_mut().send(constraints::Command::Generate {
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
        matches!(a.run().worker, WorkerState::Finished(_))
    });
    h.run_steps(2);
    let s = h.state().session();
    let kept = s.kept.as_ref().and_then(|k| k.share).expect("kept share");
    assert!((0.0..=1.0).contains(&kept));
    assert!(
        h.query_all_by_label_contains("triplets kept").count() >= 1,
        "kept share not shown"
    );
    // The overlays sit in the toolbar's "Show…" menu, which stays open until a click outside.
    h.get_by_label("Show…").click();
    h.run_steps(2);
    h.get_by_label("Show violations").click();
    h.run_steps(2);
    assert!(scatter::of(h.state()).show_violations);
    // The triplet lines can be hidden (hundreds of generated triplets hide the points).
    assert!(!h.state().view().hide_triplets);
    h.get_by_label("Show triplets").click();
    h.run_steps(2);
    assert!(h.state().view().hide_triplets);
}

/// Drag the primary button along `path` (screen points), one pointer event per frame.
fn drag_along(h: &mut Harness<'static, App>, path: &[egui::Pos2]) {
    let first = path[0];
    h.hover_at(first);
    h.step();
    h.drag_at(first);
    h.step();
    for &p in &path[1..] {
        h.hover_at(p);
        h.step();
    }
    let last = *path.last().expect("path");
    h.event(egui::Event::PointerButton {
        pos: last,
        button: egui::PointerButton::Primary,
        pressed: false,
        modifiers: egui::Modifiers::NONE,
    });
    h.step();
}

/// The points of the rectangle's outline, every `step` px, starting and ending at `r.min`.
fn outline(r: egui::Rect, step: f32) -> Vec<egui::Pos2> {
    let corners = [
        r.left_top(),
        r.right_top(),
        r.right_bottom(),
        r.left_bottom(),
    ];
    let mut pts = Vec::new();
    for (a, b) in corners.iter().zip(corners.iter().cycle().skip(1)) {
        let steps = (a.distance(*b) / step).ceil().max(1.0) as usize;
        for s in 0..steps {
            pts.push(a.lerp(*b, s as f32 / steps as f32));
        }
    }
    pts.push(r.left_top());
    pts
}

#[test]
fn lasso_paints_the_points_inside_as_one_undo_step() {
    let mut h = with_scatter();
    h.get_by_label("Label").click();
    h.run_steps(2);
    let class = h.state().view().paint_class.clone();
    let n = h.state().view().scatter.by_sample.len();
    let pos: Vec<egui::Pos2> = (0..n).map(|i| screen_of(&h, i)).collect();
    // A rectangle around the densest spot of the plot: centred on a sample with many others
    // within 60 px.
    let frame = scatter::of(h.state())
        .plot_transform
        .expect("transform")
        .frame()
        .shrink(70.0);
    let centre = (0..n)
        .filter(|&i| frame.contains(pos[i]))
        .max_by_key(|&i| pos.iter().filter(|p| p.distance(pos[i]) < 60.0).count())
        .expect("a sample inside the frame");
    let rect = egui::Rect::from_center_size(pos[centre], egui::vec2(110.0, 110.0));
    let clearly_in: Vec<usize> = (0..n)
        .filter(|&i| rect.shrink(6.0).contains(pos[i]))
        .collect();
    let clearly_out: Vec<usize> = (0..n)
        .filter(|&i| !rect.expand(6.0).contains(pos[i]))
        .collect();
    assert!(
        clearly_in.len() >= 3,
        "only {} samples in the lasso",
        clearly_in.len()
    );

    drag_along(&mut h, &outline(rect, 8.0));
    h.run_steps(2);
    let s = h.state().session();
    let st = s.store.as_ref().expect("store");
    let labels = st.labels();
    let c = labels
        .class_names()
        .iter()
        .position(|nm| *nm == class)
        .expect("painted class");
    for &i in &clearly_in {
        assert_eq!(
            labels.get(i),
            Some(c),
            "sample {i} inside the lasso: {:?}",
            s.status
        );
    }
    for &i in &clearly_out {
        assert_eq!(
            labels.get(i),
            None,
            "sample {i} outside the lasso was painted"
        );
    }
    assert!(
        scatter::of(h.state()).lasso.is_empty(),
        "the lasso is cleared after the drag"
    );
    assert_eq!(st.undo_len(), 1, "one drag is one undo step");

    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
    h.run_steps(2);
    let st = h.state().session().store.as_ref().expect("store");
    assert_eq!(
        st.labels().n_labelled(),
        0,
        "Ctrl+Z unpaints the whole lasso"
    );
}

/// Loading another dataset with unsaved constraints asks first: Cancel keeps everything,
/// Save writes the typed file and then loads, Discard loads without saving.
#[test]
fn unsaved_constraints_modal_cancel_save_discard() {
    use nmf_playground::engine::data::samples::Sample;
    let mut h = with_scatter();
    let n0 = h.state().session().dataset.as_ref().expect("data").n();
    let t = Triplet::new(0, 1, 2);
    h.state_mut().send(constraints::Command::AddTriplet(t));
    h.run_steps(2);
    assert!(h.state().session().has_unsaved_constraints());

    let ask = |h: &mut Harness<'static, App>| {
        h.state_mut().send(data::Command::LoadSample(Sample::Blobs));
        h.run_steps(3);
        assert!(h.state().session().pending.is_some());
        h.get_by_label("Unsaved constraints");
    };
    let n_now = |h: &Harness<'static, App>| h.state().session().dataset.as_ref().map(|d| d.n());

    // Cancel: nothing loaded, the triplet is still there.
    ask(&mut h);
    h.get_by_label("Cancel").click();
    h.run_steps(3);
    assert!(h.state().session().pending.is_none());
    assert_eq!(n_now(&h), Some(n0));
    assert_eq!(triplets(&h), vec![t]);

    // Save: the typed path is written, then the new dataset loads.
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("kept.json");
    ask(&mut h);
    let field = h.get_by_label("Save to");
    field.focus();
    field.type_text(path.to_str().expect("utf8"));
    h.run_steps(1);
    h.get_by_label("Save").click();
    step_until(&mut h, "the blobs sample to load", MAX_STEPS, |a| {
        a.session().dataset.as_ref().is_some_and(|d| d.n() != n0)
    });
    let text = std::fs::read_to_string(&path).expect("constraints were saved before loading");
    assert!(text.contains("\"triplets\""), "{text}");

    // Discard: back to the glyphs, add a triplet, load blobs again and throw it away.
    h.state_mut()
        .send(data::Command::LoadSample(Sample::Glyphs));
    step_until(&mut h, "the glyphs to load", MAX_STEPS, |a| {
        a.session().dataset.as_ref().is_some_and(|d| d.n() == n0)
    });
    h.state_mut().send(constraints::Command::AddTriplet(t));
    h.run_steps(2);
    ask(&mut h);
    h.get_by_label("Discard").click();
    step_until(&mut h, "the blobs sample to load", MAX_STEPS, |a| {
        a.session().dataset.as_ref().is_some_and(|d| d.n() != n0)
    });
    assert!(triplets(&h).is_empty());
    assert!(!h.state().session().has_unsaved_constraints());

    // Quitting with unsaved constraints asks the same question; Cancel keeps the window.
    h.state_mut().send(constraints::Command::AddTriplet(t));
    h.state_mut().push_command(UiCommand::Quit);
    h.run_steps(3);
    h.get_by_label_contains("Quitting loses them");
    h.get_by_label("Cancel").click();
    h.run_steps(3);
    assert!(h.state().session().pending.is_none());
    assert_eq!(triplets(&h), vec![t]);
}

/// Export CSV writes `i,j,q` lines through the typed path; Import CSV adds them back as one
/// undo step; a malformed file is refused with the line named.
#[test]
fn csv_export_and_import_through_the_panel() {
    let mut h = with_scatter();
    let ts = [Triplet::new(0, 1, 2), Triplet::new(3, 4, 5)];
    for t in ts {
        h.state_mut().send(constraints::Command::AddTriplet(t));
    }
    h.run_steps(2);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("t.csv");
    let field = h.get_by_label("Constraints file");
    field.focus();
    field.type_text(path.to_str().expect("utf8"));
    h.run_steps(1);
    h.get_by_label("Export CSV…").click();
    h.run_steps(2);
    let text = std::fs::read_to_string(&path).expect("exported");
    let rows: Vec<&str> = text.lines().filter(|l| !l.starts_with('i')).collect();
    assert_eq!(rows, vec!["0,1,2", "3,4,5"], "{text}");

    h.state_mut().send(constraints::Command::Undo);
    h.state_mut().send(constraints::Command::Undo);
    h.run_steps(2);
    assert!(triplets(&h).is_empty());
    let undo_before = h
        .state()
        .session()
        .store
        .as_ref()
        .expect("store")
        .undo_len();
    h.get_by_label("Import CSV…").click();
    h.run_steps(2);
    assert_eq!(
        triplets(&h),
        ts.to_vec(),
        "{:?}",
        h.state().session().status
    );
    let st = h.state().session().store.as_ref().expect("store");
    assert_eq!(st.undo_len(), undo_before + 1, "an import is one undo step");

    std::fs::write(&path, "i,j,q\n0,1,2\n7,7\n").expect("write");
    h.state_mut()
        .send(constraints::Command::ImportCsv(path.clone()));
    h.run_steps(2);
    let s = h.state().session();
    assert!(s.status.is_error, "{:?}", s.status);
    assert!(s.status.text.contains("line 3"), "{}", s.status.text);
    assert_eq!(
        triplets(&h),
        ts.to_vec(),
        "a refused import changes nothing"
    );
}
