//! What a new user trips over first (issue 34), with egui_kittest: figures and curves follow
//! the run on screen; labels attach to unlabelled data; every file action takes a typed path
//! (with a suggested name, creating missing folders); the run history works at the default
//! width; the model picker shows every model grouped; one rule for k; overlays on a dataset
//! change and the normalised view.

#![cfg(feature = "gui")]
#![expect(clippy::expect_used, reason = "test helpers fail loudly")]

mod common;

use common::{MAX_STEPS, loaded, step_until};
use eframe::egui;
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use nmf_playground::engine::data::{self, LoadOptions};
use nmf_playground::engine::models::ModelKind;
use nmf_playground::gui::data as gui_data;
use nmf_playground::gui::export::{Command as ExportCommand, Exports};
use nmf_playground::gui::runs::ModelGroup;
use nmf_playground::gui::{Addressed, App, PathAsk, WorkerState, constraints, runs, sessions};
use std::path::Path;

fn push<M: Addressed>(h: &mut Harness<'static, App>, cmd: M) {
    h.state_mut().send(cmd);
    h.step();
}

/// Run `model` for exactly `iterations` iterations (no tolerance stop) and wait for its
/// evaluation.
fn run_model(h: &mut Harness<'static, App>, model: &str, iterations: usize) {
    let runs = h.state().session().history.len();
    {
        let s = h.state_mut().settings_mut();
        s.model = model.to_owned();
        s.max_iter = iterations;
        s.tol = 0.0;
        s.kmeans_restarts = 3;
    }
    push(h, runs::Command::Run);
    step_until(h, "the run and its evaluation", MAX_STEPS, |a| {
        matches!(a.run().worker, WorkerState::Finished(_))
            && a.session().history.len() == runs + 1
            && a.session().evaluating.is_none()
    });
    h.run_steps(2);
}

/// Away from the last widget, so that its tooltip covers nothing.
fn unhover(h: &mut Harness<'static, App>) {
    h.hover_at(egui::pos2(5.0, 5.0));
    h.run_steps(2);
}

/// Point 1: after NMF then GNMF, "show" on the NMF run puts NMF's curves on the plot and
/// "Save figures" titles the convergence figure "NMF: convergence".
#[test]
fn show_puts_the_runs_curves_on_the_plot_and_in_the_figures() {
    let mut h = loaded();
    run_model(&mut h, "nmf", 12);
    run_model(&mut h, "gnmf", 25);
    let (first, second) = {
        let s = h.state().session();
        (s.history[0].clone(), s.history[1].clone())
    };
    assert_eq!(first.convergence.total.len(), 12);
    assert_eq!(second.convergence.total.len(), 25);
    assert_eq!(h.state().session().shown_run, Some(2));
    assert_eq!(h.state().run().convergence.total.len(), 25);

    unhover(&mut h);
    // Run 1's row is the upper one.
    h.get_all_by_label("show")
        .min_by(|a, b| a.rect().top().total_cmp(&b.rect().top()))
        .expect("a show button")
        .click();
    h.run_steps(3);
    let app = h.state();
    assert_eq!(
        app.session().shown_run,
        Some(1),
        "{:?}",
        app.session().status
    );
    assert_eq!(
        app.run().convergence,
        *first.convergence,
        "the shown run's curves"
    );
    assert_eq!(app.session().evaluation.as_ref().map(|e| e.run), Some(1));
    h.get_by_label("run 1: 12 iterations");

    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("figures");
    let exports = h.state_mut().feature_mut::<Exports>().expect("exports");
    exports.dir_input = out.display().to_string();
    exports.figure_format = nmf_playground::figures::Format::Svg;
    h.state_mut().send(ExportCommand::SaveFigures(
        out.clone(),
        nmf_playground::figures::Format::Svg,
    ));
    h.step();
    step_until(&mut h, "the figures", MAX_STEPS, |a| {
        !a.feature::<Exports>().expect("exports").saving_figures
    });
    let svg = std::fs::read_to_string(out.join("convergence.svg")).expect("convergence.svg");
    assert!(svg.contains("NMF: convergence"), "title of the shown run");
    assert!(!svg.contains("GNMF"), "nothing of the newest run");
    let gallery = std::fs::read_to_string(out.join("gallery.svg")).expect("gallery.svg");
    assert!(
        gallery.contains("NMF: basis W") && !gallery.contains("GNMF"),
        "the shown run's W"
    );
}

/// Write a 12×4 `.npy` matrix (rows = samples) to `path`.
fn write_matrix(path: &Path) {
    let x = ndarray::Array2::from_shape_fn((12, 4), |(i, f)| 0.5 + ((i * 3 + f * 5) % 7) as f64);
    ndarray_npy::write_npy(path, &x).expect("write npy");
}

fn load(h: &mut Harness<'static, App>, path: &Path) {
    push(h, gui_data::Command::LoadPath(path.to_path_buf()));
    let shown = path.display().to_string();
    step_until(h, "the data to load", MAX_STEPS, |a| {
        a.session().loading.is_none()
            && a.session()
                .dataset
                .as_ref()
                .is_some_and(|d| d.source == shown)
    });
    h.step();
}

/// Type `text` into the field labelled `label` (after clearing it) and click `button`.
fn type_and_click(h: &mut Harness<'static, App>, label: &str, text: &str, button: &str) {
    h.get_by_label(label).focus();
    h.run_steps(1);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.get_by_label(label).type_text(text);
    h.run_steps(1);
    h.get_by_label(button).click();
    h.run_steps(1);
}

/// Point 2: an unlabelled `.npy` gets labels from the Data panel's picker; a file with the
/// wrong count is refused with the CLI's message and the data stay as they were; a `y.npy`
/// beside a `.npy` is read by itself.
#[test]
fn labels_attach_to_an_unlabelled_npy_with_the_clis_checks() {
    let dir = tempfile::tempdir().expect("temp dir");
    let x = dir.path().join("x.npy");
    write_matrix(&x);
    let good = dir.path().join("classes.txt");
    let lines: Vec<&str> = (0..12).map(|i| ["cat", "dog", "owl"][i % 3]).collect();
    std::fs::write(&good, lines.join("\n")).expect("write labels");
    let bad = dir.path().join("short.txt");
    std::fs::write(&bad, lines[..10].join("\n")).expect("write labels");

    let mut h = loaded();
    load(&mut h, &x);
    assert_eq!(
        h.state().session().dataset.as_ref().map(|d| d.n_classes()),
        Some(0)
    );
    h.get_by_label("unlabelled");

    // The wrong count: the loader's (and so the CLI's) message; the data stay unlabelled.
    let cli = data::load(
        &x,
        &LoadOptions {
            labels_file: Some(bad.clone()),
            ..LoadOptions::default()
        },
    )
    .expect_err("10 labels for 12 samples")
    .to_string();
    assert!(cli.contains("has 10 labels but"), "{cli}");
    type_and_click(&mut h, "Labels file", bad.to_str().expect("utf8"), "Attach");
    step_until(&mut h, "the refusal", MAX_STEPS, |a| {
        a.session().loading.is_none() && a.session().load_error.is_some()
    });
    let s = h.state().session();
    assert!(
        s.load_error.as_deref().is_some_and(|e| e.contains(&cli)),
        "{:?}",
        s.load_error
    );
    assert_eq!(s.dataset.as_ref().map(|d| d.n_classes()), Some(0));
    assert_eq!(s.labels.file, None, "a refused file is not kept");

    type_and_click(
        &mut h,
        "Labels file",
        good.to_str().expect("utf8"),
        "Attach",
    );
    step_until(&mut h, "the labelled reload", MAX_STEPS, |a| {
        a.session().loading.is_none()
            && a.session()
                .dataset
                .as_ref()
                .is_some_and(|d| d.n_classes() == 3)
    });
    let s = h.state().session();
    let d = s.dataset.as_ref().expect("dataset");
    assert_eq!(d.class_names, ["cat", "dog", "owl"]);
    assert_eq!(
        d.labels.as_ref().map(|l| l[..4].to_vec()),
        Some(vec![0, 1, 2, 0])
    );
    assert_eq!(s.labels.file.as_deref(), Some(good.as_path()));
    assert!(s.load_error.is_none());

    // A y.npy beside the data is read without asking.
    let other = tempfile::tempdir().expect("temp dir");
    let x2 = other.path().join("features.npy");
    write_matrix(&x2);
    let y: ndarray::Array1<i64> = (0..12).map(|i| (i % 2) as i64).collect();
    ndarray_npy::write_npy(other.path().join("y.npy"), &y).expect("write y");
    load(&mut h, &x2);
    let s = h.state().session();
    assert_eq!(s.dataset.as_ref().map(|d| d.n_classes()), Some(2));
    assert_eq!(
        s.labels.file, None,
        "another dataset starts with its own labels"
    );
}

/// Point 3: Save session, Open session and constraint files without a native dialog: the
/// path window suggests a name, saving creates missing folders, Ctrl+O opens by typed path.
#[test]
fn file_actions_take_typed_paths_and_create_missing_folders() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut h = loaded();
    push(
        &mut h,
        constraints::Command::AddTriplet(nmf_playground::engine::constraints::Triplet::new(
            0, 1, 2,
        )),
    );
    // No session file yet: Save session asks, with a name made from the dataset's.
    push(&mut h, sessions::Command::Save(None));
    let prompt = h
        .state()
        .view()
        .file_prompt
        .clone()
        .expect("the path window");
    assert_eq!(prompt.ask, PathAsk::SaveSession);
    assert!(prompt.path.ends_with("-session.json"), "{}", prompt.path);
    // A new window is measured in its first frame and shown in the next.
    h.run_steps(3);
    let session = dir.path().join("new/deeper/s.json");
    type_and_click(&mut h, "File path", session.to_str().expect("utf8"), "Save");
    h.run_steps(1);
    assert!(session.is_file(), "{:?}", h.state().session().status);
    assert!(h.state().view().file_prompt.is_none());
    assert_eq!(
        h.state().session().session_path.as_deref(),
        Some(session.as_path())
    );

    // Constraints into a folder that does not exist yet.
    let constraints = dir.path().join("missing/c.json");
    push(
        &mut h,
        constraints::Command::Save(Some(constraints.clone())),
    );
    assert!(constraints.is_file(), "{:?}", h.state().session().status);
    assert!(!h.state().session().has_unsaved_constraints());

    // Ctrl+O: the path window, prefilled with the session just saved; Open opens it.
    unhover(&mut h);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::O);
    h.run_steps(3);
    let prompt = h
        .state()
        .view()
        .file_prompt
        .clone()
        .expect("the path window");
    assert_eq!(prompt.ask, PathAsk::OpenSession);
    assert_eq!(prompt.path, session.display().to_string());
    h.get_by_label("Open").click();
    step_until(&mut h, "the session to open", MAX_STEPS, |a| {
        a.session().opening.is_none()
            && a.session().loading.is_none()
            && a.session().status.text.starts_with("Opened session")
    });
}

/// Point 4: at the default width the history's key columns and "show" are in view, and a
/// click on a row shows that run with its details line.
#[test]
fn the_history_fits_the_default_width_and_a_row_click_shows_its_run() {
    let mut h = loaded();
    run_model(&mut h, "nmf", 10);
    run_model(&mut h, "gnmf", 10);
    let panel = h.state().view().panel_rects[1].expect("the right panel");
    unhover(&mut h);
    h.get_all_by_label("show")
        .next()
        .expect("a show button")
        .scroll_to_me();
    h.run_steps(20);
    for node in h.get_all_by_label("show") {
        let r = node.rect();
        assert!(
            r.right() <= panel.right() && r.left() >= panel.left(),
            "show at {r:?} outside the panel {panel:?}"
        );
    }
    for header in ["ACC", "NMI"] {
        let r = h.get_by_label(header).rect();
        assert!(
            r.right() <= panel.right(),
            "{header} at {r:?} beyond {panel:?}"
        );
    }
    // A click on run 1's model cell shows run 1.
    h.get_by_label("NMF").click();
    h.run_steps(3);
    assert_eq!(h.state().session().shown_run, Some(1));
    assert!(
        h.query_all_by_label_contains("Run 1: NMF · k=").count() >= 1,
        "the details line of run 1"
    );
}

/// Point 6: the picker lists all eleven models under three headings, every one inside the
/// window (no scroll hides RPNMF or 2-STGINMF).
#[test]
fn the_model_picker_shows_every_model_grouped() {
    let mut h = loaded();
    let groups: Vec<ModelGroup> = ModelKind::all().map(ModelGroup::of).collect();
    assert_eq!(ModelKind::all().count(), 11);
    for g in ModelGroup::ALL {
        assert!(groups.contains(&g), "{g:?} is empty");
    }
    let of = |name: &str| ModelGroup::of(ModelKind::from_name(name).expect("model"));
    assert_eq!(of("nmf"), ModelGroup::Baselines);
    assert_eq!(of("tste"), ModelGroup::SideInformation);
    assert_eq!(of("rpnmf"), ModelGroup::SourcePapers);
    assert_eq!(of("stginmf"), ModelGroup::SourcePapers);

    h.get_by_role_and_label(Role::ComboBox, "Model").click();
    h.run_steps(3);
    let window = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(1280.0, 800.0));
    for heading in ModelGroup::ALL.map(ModelGroup::heading) {
        h.get_by_label(heading);
    }
    for k in ModelKind::all() {
        let label = if k.label() == "NMF" {
            None
        } else {
            Some(k.label())
        };
        let Some(label) = label else { continue };
        let r = h.get_by_label(label).rect();
        assert!(
            window.contains_rect(r),
            "{label} at {r:?} is outside the window"
        );
    }
    h.get_by_label("2-STGINMF").click();
    h.run_steps(2);
    assert_eq!(h.state().settings().model, "stginmf");
}

/// Point 7: k out of range is kept as typed, the field says why with the CLI's words, and
/// Run refuses with the same message.
#[test]
fn an_out_of_range_k_is_refused_with_the_clis_message() {
    let mut h = loaded();
    let (m, n) = {
        let d = h.state().session().dataset.clone().expect("dataset");
        (d.m(), d.n())
    };
    let rule = "need 1 ≤ k ≤ min(m, n)";
    for k in [0, m.min(n) + 1] {
        h.state_mut().settings_mut().k = k;
        h.run_steps(2);
        assert_eq!(h.state().settings().k, k, "not clamped");
        let msg = nmf_playground::engine::models::check_rank(k, m, n)
            .expect_err("out of range")
            .to_string();
        assert!(msg.contains(rule), "{msg}");
        h.get_by_label(&msg);
        push(&mut h, runs::Command::Run);
        let status = &h.state().session().status;
        assert!(status.is_error && status.text.contains(&msg), "{status:?}");
        assert!(!h.state().run().worker.is_active());
    }
    let last = nmf_playground::engine::models::check_rank(m.min(n) + 1, m, n)
        .expect_err("out of range")
        .to_string();
    h.state_mut().settings_mut().k = 2;
    h.run_steps(2);
    assert_eq!(
        h.query_all_by_label(&last).count(),
        0,
        "the field's message goes"
    );
}

/// Point 8: ticked runs of another dataset are unticked when a new one loads; the
/// normalised view divides each curve by its first value.
#[test]
fn overlays_clear_on_a_new_dataset_and_curves_normalise() {
    let mut h = loaded();
    run_model(&mut h, "nmf", 8);
    run_model(&mut h, "gnmf", 8);
    h.state_mut().view_mut().toggle_run(1);
    h.state_mut().view_mut().toggle_run(2);
    h.run_steps(2);
    h.get_by_label("overlay: run 1 and run 2");

    // The normalised view: every drawn curve starts at 1.
    let first = h.state().session().history[0].curve.clone();
    let pts = nmf_playground::gui::convergence::prepared(&first, false, true);
    let pts = pts.points();
    assert!((pts[0].y - 1.0).abs() < 1e-12, "{:?}", pts[0]);
    let ratio = first.linear[3].y / first.linear[0].y;
    assert!((pts[3].y - ratio).abs() < 1e-12);
    h.get_by_label("÷ first value").click();
    h.run_steps(2);
    assert!(h.state().settings().normalise_curves);

    // Another dataset: the overlay of the old one's runs is cleared, and said so.
    push(
        &mut h,
        gui_data::Command::LoadSample(nmf_playground::engine::data::samples::Sample::Blobs),
    );
    step_until(&mut h, "blobs to load", MAX_STEPS, |a| {
        a.session().loading.is_none()
            && a.session()
                .dataset
                .as_ref()
                .is_some_and(|d| d.source.contains("blobs"))
    });
    assert!(h.state().view().selected_runs.is_empty());
    assert!(
        h.state()
            .session()
            .status
            .text
            .contains("overlay of 2 runs from other data was cleared"),
        "{:?}",
        h.state().session().status
    );
    assert_eq!(h.query_all_by_label_contains("overlay: run").count(), 0);
}
