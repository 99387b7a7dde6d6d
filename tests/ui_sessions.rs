//! Sessions, recovery and concurrency in the app (issue 20, points 1, 2 and 7), with
//! egui_kittest: session save/open through the path-taking actions and the File menu, the
//! "data changed" question, the recovery offer after an unclean end, and runs replaced by a
//! load or by a second Run.

#![cfg(feature = "gui")]
#![expect(clippy::expect_used, reason = "test helpers fail loudly")]

mod common;

use common::{MAX_STEPS, harness, loaded, step_until};
use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use nmf_playground::engine::constraints::Triplet;
use nmf_playground::engine::data::samples::Sample;
use nmf_playground::engine::files::recovery;
use nmf_playground::gui::{Addressed, App, WorkerState, constraints, data, runs, sessions};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn app_with_recovery(dir: &Path) -> Harness<'static, App> {
    let dir = dir.to_path_buf();
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .with_max_steps(200)
        .build_eframe(move |cc| App::with_recovery_dir(&cc.egui_ctx, dir));
    step_until(&mut h, "the sample to load", MAX_STEPS, |a| {
        a.session().dataset.is_some()
    });
    h.step();
    h
}

fn push<M: Addressed>(h: &mut Harness<'static, App>, cmd: M) {
    h.state_mut().send(cmd);
    h.step();
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

/// A labelled CSV of 12 samples (3 classes); `bump` changes one value (same shape, other
/// content).
fn write_csv(path: &Path, bump: f64) {
    let mut s = String::from("a,b,c,label\n");
    for i in 0..12 {
        let c = i % 3;
        let v = if i == 0 { 1.0 + bump } else { 1.0 };
        s.push_str(&format!(
            "{v},{},{},{}\n",
            (c * 3 + i % 2) as f64 + 0.5,
            (i % 4) as f64 + 0.25,
            ["x", "y", "z"][c]
        ));
    }
    std::fs::write(path, s).expect("write csv");
}

fn open_csv(h: &mut Harness<'static, App>, path: &Path) {
    push(h, data::Command::LoadPath(path.to_path_buf()));
    let shown = path.display().to_string();
    step_until(h, "the CSV to load", MAX_STEPS, |a| {
        a.session()
            .dataset
            .as_ref()
            .is_some_and(|d| d.source == shown)
    });
    h.step();
}

fn finish_a_run(h: &mut Harness<'static, App>) {
    h.state_mut().settings_mut().max_iter = 30;
    h.get_by_label("Run").click();
    step_until(h, "the run to finish", MAX_STEPS, |a| {
        matches!(a.run().worker, WorkerState::Finished(_))
    });
    let n = h.state().session().history.len();
    step_until(h, "the evaluation", MAX_STEPS, |a| {
        a.session()
            .history
            .get(n - 1)
            .is_some_and(|r| r.acc.is_some())
    });
}

#[test]
fn a_saved_session_opens_with_its_data_constraints_settings_and_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let csv = dir.path().join("t.csv");
    write_csv(&csv, 0.0);
    let mut h = loaded();
    open_csv(&mut h, &csv);
    push(
        &mut h,
        constraints::Command::AddTriplet(Triplet::new(0, 3, 1)),
    );
    push(
        &mut h,
        constraints::Command::AddTriplet(Triplet::new(4, 7, 5)),
    );
    h.state_mut().settings_mut().seed = 99;
    finish_a_run(&mut h);
    // The File menu's checkbox turns on saving H and W.
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Include H and W in sessions").click();
    h.run_steps(2);
    assert!(h.state().settings().session_factors);
    let session = dir.path().join("s.json");
    h.state_mut().save_session(&session).expect("save session");
    assert!(
        !h.state().session().has_unsaved_constraints(),
        "a saved session counts as saved constraints"
    );
    assert!(dir.path().join("s.json.factors/run-1/H.npy").exists());

    let mut g = loaded();
    g.state_mut().settings_mut().seed = 0;
    push(&mut g, sessions::Command::Open(session.clone()));
    let shown = csv.display().to_string();
    step_until(
        &mut g,
        "the session's data and constraints",
        MAX_STEPS,
        |a| {
            a.session()
                .dataset
                .as_ref()
                .is_some_and(|d| d.source == shown)
                && a.session().opening.is_none()
        },
    );
    g.step();
    assert_eq!(
        triplets(&g),
        vec![Triplet::new(0, 3, 1), Triplet::new(4, 7, 5)]
    );
    assert!(!g.state().session().has_unsaved_constraints());
    assert_eq!(g.state().settings().seed, 99);
    assert_eq!(
        g.state().feature::<data::Data>().expect("data").path_input,
        shown,
        "the Data panel's Path shows the data that was opened"
    );
    let hist = &g.state().session().history;
    assert_eq!(hist.len(), 1);
    assert_eq!(hist[0].seed, 99);
    assert!(hist[0].acc.is_some(), "the run's scores come back");
    assert_eq!(
        hist[0].factors.h.ncols(),
        12,
        "its H comes back from the .npy"
    );
    assert!(
        g.state().session().status.text.contains("Opened session"),
        "{:?}",
        g.state().session().status
    );
}

#[test]
fn a_session_on_changed_data_asks_before_opening_its_constraints() {
    let dir = tempfile::tempdir().expect("tempdir");
    let csv = dir.path().join("t.csv");
    write_csv(&csv, 0.0);
    let mut h = loaded();
    open_csv(&mut h, &csv);
    push(
        &mut h,
        constraints::Command::AddTriplet(Triplet::new(0, 3, 1)),
    );
    let session = dir.path().join("s.json");
    h.state_mut().save_session(&session).expect("save");
    write_csv(&csv, 0.5); // the data file changes after the save

    for open_anyway in [false, true] {
        let mut g = loaded();
        push(&mut g, sessions::Command::Open(session.clone()));
        step_until(&mut g, "the question", MAX_STEPS, |a| {
            a.session()
                .opening
                .as_ref()
                .is_some_and(|o| o.changed.is_some())
        });
        g.run_steps(2);
        g.get_by_label_contains("content differs");
        let button = if open_anyway {
            "Open the constraints anyway"
        } else {
            "Stop: do not open them"
        };
        g.get_by_label(button).click();
        g.run_steps(2);
        assert!(g.state().session().opening.is_none());
        let expected = if open_anyway {
            vec![Triplet::new(0, 3, 1)]
        } else {
            Vec::new()
        };
        assert_eq!(triplets(&g), expected, "answer {button}");
    }
}

#[test]
fn unsaved_edits_are_offered_back_after_an_unclean_end() {
    let rec = tempfile::tempdir().expect("tempdir");
    let mut h = app_with_recovery(rec.path());
    assert!(h.state().session().recovery_offer.is_none());
    push(
        &mut h,
        constraints::Command::AddTriplet(Triplet::new(0, 1, 2)),
    );
    push(
        &mut h,
        constraints::Command::AddTriplet(Triplet::new(3, 4, 5)),
    );
    let fp = h
        .state()
        .session()
        .dataset
        .as_ref()
        .expect("data")
        .fingerprint;
    let file = recovery::file_for(rec.path(), &fp);
    // Debounced: the journal is written within its interval.
    for _ in 0..100 {
        h.step();
        if recovery::find(rec.path(), &fp)
            .expect("parses")
            .is_some_and(|f| f.store.triplets().len() == 2)
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(file.exists(), "no journal at {}", file.display());
    // The app ends without saving (the harness is dropped, as a kill would): a new start on
    // the same data offers the edits back.
    drop(h);
    let mut g = app_with_recovery(rec.path());
    g.run_steps(2);
    let offer = g.state().session().recovery_offer.as_ref().expect("offer");
    assert_eq!(offer.edits, 2);
    g.get_by_label_contains("Recover 2 unsaved edits from");
    g.get_by_label("Recover").click();
    g.run_steps(2);
    assert_eq!(
        triplets(&g),
        vec![Triplet::new(0, 1, 2), Triplet::new(3, 4, 5)]
    );
    assert!(
        g.state().session().has_unsaved_constraints(),
        "recovered, not saved"
    );
    // A clean save removes the journal.
    let saved = rec.path().join("c.json");
    push(&mut g, constraints::Command::Save(Some(saved)));
    g.run_steps(2);
    assert!(!file.exists(), "the journal outlived a clean save");

    // Discard removes the offer's file.
    let mut k = app_with_recovery(rec.path());
    push(
        &mut k,
        constraints::Command::AddTriplet(Triplet::new(6, 7, 8)),
    );
    for _ in 0..100 {
        k.step();
        if file.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(k);
    let mut d = app_with_recovery(rec.path());
    d.run_steps(2);
    assert!(d.state().session().recovery_offer.is_some());
    d.get_by_label("Discard").click();
    d.run_steps(2);
    assert!(d.state().session().recovery_offer.is_none());
    assert!(!file.exists());
    assert!(triplets(&d).is_empty());
}

fn make_long(h: &mut Harness<'static, App>) {
    let s = h.state_mut().settings_mut();
    s.max_iter = 1_000_000;
    s.tol = 0.0;
}

#[test]
fn loading_another_dataset_during_a_run_cancels_it_cleanly() {
    let mut h = loaded();
    make_long(&mut h);
    h.get_by_label("Run").click();
    step_until(&mut h, "the run to start", MAX_STEPS, |a| {
        a.run().worker == WorkerState::Running && a.run().progress.iteration > 0
    });
    let before = h
        .state()
        .session()
        .dataset
        .as_ref()
        .expect("data")
        .fingerprint;
    push(&mut h, data::Command::LoadSample(Sample::Blobs));
    step_until(&mut h, "the other sample", MAX_STEPS, |a| {
        a.session()
            .dataset
            .as_ref()
            .is_some_and(|d| d.fingerprint != before)
    });
    assert_eq!(h.state().run().worker, WorkerState::Cancelled);
    assert_eq!(h.state().run().job_id, None);
    step_until(&mut h, "the old job's thread to end", MAX_STEPS, |a| {
        a.run().live_jobs() == 0
    });
    for _ in 0..10 {
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    let (run, s) = (h.state().run(), h.state().session());
    assert!(
        run.stale_events > 0,
        "the old job's late events were not seen"
    );
    assert_eq!(
        run.progress.iteration, 0,
        "a stale progress event was applied"
    );
    assert!(run.snapshot.is_none(), "a stale snapshot was applied");
    assert!(run.convergence.total.is_empty());
    assert!(
        s.history.is_empty(),
        "the cancelled run entered the history"
    );
    assert_eq!(run.worker, WorkerState::Cancelled);
    assert_eq!(
        s.dataset.as_ref().expect("data").source,
        "sample:blobs".to_owned()
    );
}

#[test]
fn two_quick_runs_leave_exactly_one_job() {
    let mut h = loaded();
    make_long(&mut h);
    h.get_by_label("Run").click();
    h.step();
    let first = h.state().run().job_id.expect("first");
    h.get_by_label("Run").click();
    h.step();
    let second = h.state().run().job_id.expect("second");
    assert_ne!(first, second);
    step_until(&mut h, "one live job", MAX_STEPS, |a| {
        a.run().live_jobs() == 1 && a.run().progress.iteration > 0
    });
    for _ in 0..20 {
        h.step();
        std::thread::sleep(Duration::from_millis(10));
        assert_eq!(h.state().run().live_jobs(), 1);
    }
    assert_eq!(h.state().run().job_id, Some(second));
    assert_eq!(h.state().run().worker, WorkerState::Running);
    // Two Runs in one frame: still one job.
    push(&mut h, runs::Command::Run);
    h.state_mut().send(runs::Command::Run);
    h.state_mut().send(runs::Command::Run);
    h.step();
    step_until(&mut h, "one live job again", MAX_STEPS, |a| {
        a.run().live_jobs() == 1
    });
    h.get_by_label("Stop").click();
    step_until(&mut h, "no job", MAX_STEPS, |a| {
        a.run().worker == WorkerState::Cancelled && a.run().live_jobs() == 0
    });
}

#[test]
fn ctrl_shift_s_saves_the_session_where_it_was_opened() {
    let dir = tempfile::tempdir().expect("tempdir");
    let session: PathBuf = dir.path().join("s.json");
    let mut h = loaded();
    h.state_mut().save_session(&session).expect("first save");
    push(
        &mut h,
        constraints::Command::AddTriplet(Triplet::new(0, 1, 2)),
    );
    assert!(h.state().session().has_unsaved_constraints());
    h.key_press_modifiers(
        egui::Modifiers::COMMAND | egui::Modifiers::SHIFT,
        egui::Key::S,
    );
    h.run_steps(2);
    assert!(!h.state().session().has_unsaved_constraints());
    let text = std::fs::read_to_string(&session).expect("read");
    assert!(
        text.contains("\"triplets\": [\n      [\n        0,"),
        "{text}"
    );
    let _ = harness; // the plain constructor is used by `loaded`
}
