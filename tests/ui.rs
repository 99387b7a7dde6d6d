//! UI tests of the desktop app with egui_kittest (no GPU): the app is driven as a person uses
//! it (widgets found by their accessible label, clicked, frames stepped while a job runs) and
//! its state is checked through `App::session()`, `App::run()` and `App::view()`.

#![cfg(feature = "gui")]
#![expect(clippy::expect_used, reason = "test helpers fail loudly")]

mod common;
#[path = "common/scatter.rs"]
mod scatter;

use common::{MAX_STEPS, loaded, step_until};
use eframe::egui;
use egui::accesskit::{Role, Toggled};
use egui_kittest::Harness;
use egui_kittest::kittest::NodeT;
use egui_kittest::kittest::Queryable;
use nmf_playground::engine::models::{HyperParam, ParamKind, ParamValue, rpnmf};
use nmf_playground::gui::runs::{ParamEdit, hyperparameter_row};
use nmf_playground::gui::{App, Settings, WorkerState};
use std::time::Duration;

/// Settings for a run that lasts long enough to be paused or stopped.
fn make_long(h: &mut Harness<'static, App>) {
    let s = h.state_mut().settings_mut();
    s.max_iter = 1_000_000;
    s.tol = 0.0;
}

/// Click Run and wait until the job has reported some progress.
fn start_running(h: &mut Harness<'static, App>) {
    h.get_by_label("Run").click();
    step_until(h, "the run to start", MAX_STEPS, |a| {
        a.run().worker == WorkerState::Running && a.run().progress.iteration > 0
    });
}

#[test]
fn opens_on_a_bundled_sample_and_shows_its_size() {
    let h = loaded();
    let data = h.state().session().dataset.clone().expect("dataset");
    assert!(data.source.starts_with("sample:"), "source {}", data.source);
    assert!(data.n() > 0);
    h.get_by_label(&format!("n = {} samples", data.n()));
    h.get_by_label(&format!("m = {} features", data.m()));
    assert!(h.state().session().load_error.is_none());
    assert_eq!(h.state().run().worker, WorkerState::Idle);
    // A labelled dataset sets k to its number of classes (k = c, docs/models.md §1).
    assert_eq!(h.state().settings().k, data.n_classes());
    h.check_accessibility();
}

/// Before any run the scatter shows the PCA-2D of X (computed on a background task) with the
/// Inspect / Triplet / Label bar, so that triplets can be clicked at once; a run replaces it
/// with H's projection.
#[test]
fn before_the_first_run_the_scatter_shows_the_data_and_the_mode_bar() {
    let mut h = loaded();
    step_until(&mut h, "the PCA of X", MAX_STEPS, |a| {
        a.view().scatter.of_data
    });
    h.run_steps(2);
    let n = h.state().session().dataset.as_ref().expect("dataset").n();
    assert_eq!(h.state().view().scatter.by_sample.len(), n);
    h.get_by_label("PCA-2D of X (the data; a run replaces it with its H)");
    h.get_by_label("Triplet").click();
    h.run_steps(2);
    assert_eq!(
        scatter::of(h.state()).tool,
        nmf_playground::gui::Tool::Triplet
    );
    h.get_by_label("Run").click();
    step_until(&mut h, "the run to finish", MAX_STEPS, |a| {
        matches!(a.run().worker, WorkerState::Finished(_))
    });
    h.run_steps(2);
    assert!(!h.state().view().scatter.of_data);
}

#[test]
fn run_until_finished_fills_history_and_scatter() {
    let mut h = loaded();
    h.get_by_label("Run").click();
    step_until(&mut h, "the run to finish", MAX_STEPS, |a| {
        matches!(a.run().worker, WorkerState::Finished(_))
    });
    h.step();
    let s = h.state().session();
    assert!(
        !h.state().run().convergence.total.is_empty(),
        "no convergence history"
    );
    assert!(h.state().run().snapshot.is_some(), "no snapshot");
    assert!(h.state().run().result.is_some(), "no result");
    assert!(
        !h.state().view().scatter.groups.is_empty(),
        "no scatter groups"
    );
    let n: usize = h.state().view().scatter.point_count();
    assert_eq!(n, s.dataset.as_ref().expect("dataset").n());
    assert!(
        scatter::of(h.state()).plot_transform.is_some(),
        "scatter transform not stored"
    );
    assert!(s.status.text.starts_with("Finished"), "{:?}", s.status);
    assert!(!s.status.is_error);
    // The plot and its legend keep the window accessible.
    h.check_accessibility();
}

#[test]
fn stop_cancels_within_a_few_frames() {
    let mut h = loaded();
    make_long(&mut h);
    start_running(&mut h);
    h.get_by_label("Stop").click();
    step_until(&mut h, "the job to be cancelled", 300, |a| {
        a.run().worker == WorkerState::Cancelled
    });
    let s = h.state().session();
    assert!(
        s.status.text.contains("Stopped at iteration"),
        "{:?}",
        s.status
    );
    // The stopped run is kept (and scored) like a finished one.
    assert_eq!(s.history.len(), 1);
    assert!(s.history[0].stop.starts_with("stopped at iteration"));
    assert!(h.state().run().progress.iteration < 1_000_000);
    assert!(h.state().run().job_id.is_none());
}

#[test]
fn pause_then_resume() {
    let mut h = loaded();
    make_long(&mut h);
    start_running(&mut h);
    h.get_by_label("Pause").click();
    h.step();
    assert_eq!(h.state().run().worker, WorkerState::Paused);
    // Drain whatever was sent before the pause took effect, then check nothing more arrives.
    for _ in 0..20 {
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    let paused_at = h.state().run().progress.iteration;
    std::thread::sleep(Duration::from_millis(100));
    h.run_steps(5);
    assert_eq!(
        h.state().run().progress.iteration,
        paused_at,
        "iterations advanced while paused"
    );

    h.get_by_label("Resume").click();
    h.step();
    assert_eq!(h.state().run().worker, WorkerState::Running);
    step_until(
        &mut h,
        "iterations to advance after resume",
        MAX_STEPS,
        |a| a.run().progress.iteration > paused_at,
    );
    h.get_by_label("Stop").click();
    step_until(&mut h, "the job to be cancelled", 300, |a| {
        a.run().worker == WorkerState::Cancelled
    });
}

#[test]
fn keyboard_space_and_escape() {
    let mut h = loaded();
    make_long(&mut h);
    h.key_press(egui::Key::Space);
    step_until(&mut h, "Space to start a run", MAX_STEPS, |a| {
        a.run().worker == WorkerState::Running
    });
    h.key_press(egui::Key::Space);
    h.step();
    assert_eq!(h.state().run().worker, WorkerState::Paused);
    h.key_press(egui::Key::Escape);
    step_until(&mut h, "Esc to cancel", 300, |a| {
        a.run().worker == WorkerState::Cancelled
    });
}

#[test]
fn bad_path_shows_an_error_and_keeps_the_dataset() {
    let mut h = loaded();
    let before = h.state().session().dataset.clone().expect("dataset");
    let bad = "/definitely/not/here/data.csv";
    h.get_by_label("Path").click();
    h.step();
    h.get_by_label("Path").type_text(bad);
    h.step();
    h.get_by_label("Load").click();
    step_until(&mut h, "the load error", MAX_STEPS, |a| {
        a.session().load_error.is_some()
    });
    h.step();
    let s = h.state().session();
    let err = s.load_error.clone().expect("error");
    assert!(err.contains(bad), "error does not name the path: {err}");
    assert!(s.status.is_error);
    assert!(s.loading.is_none());
    let after = s.dataset.clone().expect("dataset kept");
    assert_eq!(after.fingerprint, before.fingerprint);
    // Shown in the window (data panel and status line), not only in the state.
    assert!(h.query_all_by_label_contains(bad).count() >= 1);
}

#[test]
fn a_second_run_replaces_the_first_and_its_late_events_are_ignored() {
    let mut h = loaded();
    make_long(&mut h);
    start_running(&mut h);
    let first = h.state().run().job_id.expect("first job");
    h.get_by_label("Run").click();
    h.step();
    let second = h.state().run().job_id.expect("second job");
    assert_ne!(first, second);
    // The first job's Cancelled (at least) arrives after the switch and must be dropped.
    step_until(&mut h, "a stale event of the first job", MAX_STEPS, |a| {
        a.run().stale_events > 0 && a.run().progress.iteration > 0
    });
    for _ in 0..10 {
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    let s = h.state().session();
    assert_eq!(h.state().run().job_id, Some(second));
    assert_eq!(
        h.state().run().worker,
        WorkerState::Running,
        "{:?}",
        s.status
    );
    // The history is the second run's alone: iterations 1, 2, 3, ... without restarts.
    for (t, p) in h.state().run().convergence.total.linear.iter().enumerate() {
        assert_eq!(p.x, (t + 1) as f64, "history mixes runs at position {t}");
    }
    h.get_by_label("Stop").click();
    step_until(&mut h, "the job to be cancelled", 300, |a| {
        a.run().worker == WorkerState::Cancelled
    });
}

#[test]
fn settings_round_trip_and_default_missing_fields() {
    let s = Settings {
        k: 7,
        log_y: false,
        ..Settings::default()
    };
    let json = serde_json::to_string(&s).expect("serialize");
    let back: Settings = serde_json::from_str(&json).expect("deserialize");
    assert_eq!(back, s);
    let partial: Settings = serde_json::from_str(r#"{"k": 5}"#).expect("partial");
    assert_eq!(partial.k, 5);
    assert_eq!(partial.max_iter, Settings::default().max_iter);
}

#[test]
fn model_help_window_explains_the_model() {
    let mut h = loaded();
    h.get_by_label("?").click();
    h.run_steps(3);
    let kind = h.state().settings().model_kind().expect("a model");
    // The window is titled after the model and cites the docs/models.md section.
    h.get_by_label(&format!("About {}", kind.label()));
    h.get_by_label(&format!("Math: {}", kind.section()));
}

/// On/off hyperparameters (RPNMF's safeguard, normalize_w) are checkboxes storing 0 or 1,
/// and only once the user ticks them: before that the table's default is shown, not stored.
#[test]
fn flag_hyperparameters_are_checkboxes() {
    let mut h = loaded();
    h.state_mut().settings_mut().model = "rpnmf".to_owned();
    h.run_steps(2);
    let value =
        |h: &Harness<'static, App>, name: &str| h.state().settings().edited_param("rpnmf", name);
    assert_eq!(
        value(&h, "safeguard"),
        None,
        "an unedited flag is not stored"
    );
    assert_eq!(
        h.get_by_role_and_label(Role::CheckBox, "safeguard")
            .accesskit_node()
            .toggled(),
        Some(Toggled::True),
        "the default (on) is shown"
    );
    h.get_by_label("safeguard").click();
    h.run_steps(2);
    assert_eq!(
        value(&h, "safeguard"),
        Some(ParamValue::Flag(false)),
        "unticking turns it off"
    );
    h.get_by_label("normalize_w").click();
    h.run_steps(2);
    assert_eq!(
        value(&h, "normalize_w"),
        Some(ParamValue::Flag(false)),
        "normalize_w is on by default: a click turns it off"
    );
}

/// A table row of hyperparameters on its own, as the model panel draws it: the edit goes to
/// `edited` as the panel stores it in the settings.
struct Row {
    hp: HyperParam,
    edited: Option<ParamValue>,
}

fn row_harness(hp: HyperParam, edited: Option<ParamValue>) -> Harness<'static, Row> {
    Harness::builder()
        .with_size(egui::vec2(600.0, 120.0))
        .build_ui_state(
            |ui, row: &mut Row| {
                egui::Grid::new("row").show(ui, |ui| {
                    match hyperparameter_row(ui, &row.hp, "docs/models.md §4.2", row.edited) {
                        Some(ParamEdit::Set(v)) => row.edited = Some(v),
                        Some(ParamEdit::Reset) => row.edited = None,
                        None => {}
                    }
                    ui.end_row();
                });
            },
            Row { hp, edited },
        )
}

/// RPNMF's table entry called `name`.
fn rpnmf_param(name: &str) -> HyperParam {
    *rpnmf::KIND.param(name).expect("RPNMF parameter")
}

/// `(default, min, max, log_scale)` of a number parameter.
fn number(hp: &HyperParam) -> (f64, f64, f64, bool) {
    match hp.kind {
        ParamKind::Number {
            default,
            min,
            max,
            log_scale,
            ..
        } => (default, min, max, log_scale),
        _ => panic!("{} is not a number", hp.name),
    }
}

/// The number an edit holds.
fn edited_number(row: &Row) -> Option<f64> {
    match row.edited {
        Some(ParamValue::Number(x)) => Some(x),
        None => None,
        other => panic!("not a number: {other:?}"),
    }
}

/// The value a labelled slider shows.
fn slider_value(h: &Harness<'_, impl Sized>, label: &str) -> f64 {
    h.get_by_role_and_label(Role::Slider, label)
        .accesskit_node()
        .numeric_value()
        .expect("slider value")
}

/// Press and release the pointer at `pos`, as a click on a slider rail.
fn click_at(h: &mut Harness<'static, Row>, pos: egui::Pos2) {
    h.hover_at(pos);
    h.run_steps(2);
    h.drag_at(pos);
    h.run_steps(2);
    h.drop_at(pos);
    h.run_steps(2);
}

/// α ∈ [0, 1000] is log-scale with minimum 0: the middle of the rail is a geometric middle
/// (≈ 0.3, not 500), and 0 is reachable exactly, by the rail's left end and by "0".
#[test]
fn log_scale_parameter_from_zero_drags_logarithmically_and_reaches_zero() {
    let alpha = rpnmf_param("alpha");
    let (default, min, max, log_scale) = number(&alpha);
    assert!(log_scale && min == 0.0 && max == 1e3);
    let mut h = row_harness(alpha, None);
    h.run();
    assert_eq!(slider_value(&h, "alpha"), default);
    let rail = h.get_by_role_and_label(Role::Slider, "alpha").rect();

    click_at(&mut h, rail.center());
    let mid = edited_number(h.state()).expect("the click is an edit");
    assert!(
        (0.01..10.0).contains(&mid),
        "the rail's middle gives {mid}: not a logarithmic scale over [1e-4, 1e3]"
    );

    click_at(&mut h, rail.right_center() - egui::vec2(1.0, 0.0));
    assert_eq!(edited_number(h.state()), Some(max));

    h.get_by_label("alpha = 0").click();
    h.run();
    assert_eq!(
        edited_number(h.state()),
        Some(0.0),
        "the 0 button sets exactly 0"
    );
    assert_eq!(slider_value(&h, "alpha"), 0.0);

    click_at(&mut h, rail.center());
    click_at(&mut h, rail.left_center() + egui::vec2(1.0, 0.0));
    assert_eq!(
        edited_number(h.state()),
        Some(0.0),
        "the rail's left end is exactly 0"
    );
}

/// Only edited hyperparameters are persisted; the rest are shown from the model's table, so
/// a default changed in the table reaches an app restored from old settings.
#[test]
fn unedited_parameters_are_not_persisted_and_follow_the_table_default() {
    let mut h = loaded();
    h.state_mut().settings_mut().model = "rpnmf".to_owned();
    h.run_steps(2);
    let alpha = rpnmf_param("alpha");
    let (alpha_default, ..) = number(&alpha);
    assert_eq!(slider_value(&h, "alpha"), alpha_default);
    let json = serde_json::to_value(h.state().settings()).expect("serialize");
    assert_eq!(
        json["params"],
        serde_json::json!({}),
        "parameters the user never touched are persisted"
    );

    // One edit is stored, and only it; "reset" forgets it again.
    h.get_by_label("delta = 0").click();
    h.run_steps(2);
    let json = serde_json::to_value(h.state().settings()).expect("serialize");
    assert_eq!(json["params"], serde_json::json!({"rpnmf": {"delta": 0.0}}));
    let spec = h.state().settings().model_spec().expect("spec");
    assert_eq!(spec.resolved_params()["delta"], ParamValue::Number(0.0));
    assert_eq!(
        spec.resolved_params()["alpha"],
        ParamValue::Number(alpha_default)
    );
    h.get_by_label("presets for delta").click();
    h.run_steps(2);
    h.get_by_label("reset delta").click();
    h.run_steps(2);
    assert_eq!(h.state().settings().edited_param("rpnmf", "delta"), None);
    assert!(h.state().settings().params.is_empty());

    // A fresh app restored from those settings shows the table's default...
    let restored: Settings = serde_json::from_value(json).expect("deserialize");
    let mut fresh = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_eframe(move |cc| App::with_settings(&cc.egui_ctx, restored));
    fresh.run_steps(2);
    assert_eq!(slider_value(&fresh, "delta"), 0.0, "the edit is kept");
    assert_eq!(slider_value(&fresh, "alpha"), alpha_default);
    // ...and the widget follows whatever that default is: a table with another default shows
    // the other value for the same (empty) settings.
    let ParamKind::Number {
        min,
        max,
        log_scale,
        grid,
        ..
    } = alpha.kind
    else {
        panic!("alpha is a number")
    };
    let changed = HyperParam {
        kind: ParamKind::Number {
            default: 2.5,
            min,
            max,
            log_scale,
            grid,
        },
        ..alpha
    };
    let mut h = row_harness(changed, None);
    h.run();
    assert_eq!(slider_value(&h, "alpha"), 2.5);
    assert_eq!(h.state().edited, None, "showing a default is not an edit");
}

/// RPNMF's "paper" preset sets the paper's α, δ and raw H in one click; "defaults" forgets
/// every edit again.
#[test]
fn the_paper_preset_sets_the_papers_values_and_defaults_undoes_it() {
    let mut h = loaded();
    h.state_mut().settings_mut().model = "rpnmf".to_owned();
    h.run_steps(2);
    h.get_by_label("preset paper").click();
    h.run_steps(2);
    let edited =
        |h: &Harness<'static, App>, name: &str| h.state().settings().edited_param("rpnmf", name);
    assert_eq!(edited(&h, "alpha"), Some(ParamValue::Number(0.1)));
    assert_eq!(edited(&h, "delta"), Some(ParamValue::Number(10.0)));
    assert_eq!(edited(&h, "normalize_w"), Some(ParamValue::Flag(false)));
    assert_eq!(slider_value(&h, "delta"), 10.0);
    h.get_by_label("all parameters to their defaults").click();
    h.run_steps(2);
    assert!(h.state().settings().params.is_empty());
    assert_eq!(slider_value(&h, "delta"), 1e-3, "the table's default again");
}

/// At 1024×768 and 800×600 the scatter keeps a real share of the window after a run, no
/// side panel covers it, and hiding a panel from the View menu gives its room to the plot.
#[test]
fn at_small_window_sizes_no_panel_covers_the_plot() {
    for (w, hgt) in [(1024.0, 768.0), (800.0, 600.0)] {
        let mut h = Harness::builder()
            .with_size(egui::vec2(w, hgt))
            .with_max_steps(200)
            .build_eframe(|cc| App::new(cc));
        step_until(&mut h, "the sample to load", MAX_STEPS, |a| {
            a.session().dataset.is_some()
        });
        h.get_by_label("Run").click();
        step_until(&mut h, "the run to finish", MAX_STEPS, |a| {
            matches!(a.run().worker, WorkerState::Finished(_))
        });
        h.run_steps(3);
        let plot = |h: &Harness<'static, App>| {
            *scatter::of(h.state())
                .plot_transform
                .expect("scatter drawn")
                .frame()
        };
        let frame = plot(&h);
        assert!(
            frame.width() > 0.25 * w && frame.height() > 100.0,
            "{w}: {frame:?}"
        );
        let [left, right] = h.state().view().panel_rects;
        for p in [left, right].into_iter().flatten() {
            assert!(
                !p.intersects(frame.shrink(1.0)),
                "{w}: panel {p:?} over plot {frame:?}"
            );
        }
        let wide = frame.width();
        h.state_mut().settings_mut().show_model_panel = false;
        h.run_steps(30);
        assert!(h.state().view().panel_rects[1].is_none());
        assert!(
            plot(&h).width() > wide + 100.0,
            "{w}: hiding the right panel"
        );
    }
}
