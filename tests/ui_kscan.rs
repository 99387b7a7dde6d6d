//! UI test of the "Scan k" window (issue 21 point 7) with egui_kittest: the model panel's
//! "Scan k…" opens it, Start runs the scan off the UI thread until every k has its point on
//! the curves, "Use k = …" sets the model's k, Cancel stops a scan, and a scan is refused
//! while a run is active.

#![cfg(feature = "gui")]
#![allow(
    clippy::expect_used,
    reason = "test helpers outside #[test] functions: a failed expectation is a failed test"
)]

mod common;

use common::{MAX_STEPS, step_until};
use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use ndarray::Array2;
use nmf_playground::engine::data::Dataset;
use nmf_playground::gui::kscan::{Command, KScan};
use nmf_playground::gui::{App, runs};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The "Scan k" feature's state.
fn scan_of(app: &App) -> &KScan {
    app.feature::<KScan>()
        .unwrap_or_else(|| panic!("the app has the k scan"))
}

/// Three labelled blobs, `m` features, `per` samples each.
fn blobs(m: usize, per: usize) -> Dataset {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let n = 3 * per;
    let labels: Vec<usize> = (0..n).map(|i| i / per).collect();
    let x = Array2::from_shape_fn((m, n), |(r, c)| {
        let centre = if r % 3 == labels[c] { 5.0 } else { 0.2 };
        centre + 0.5 * rng.r#gen::<f64>()
    });
    Dataset::from_parts(
        x,
        Some(labels),
        vec!["a".into(), "b".into(), "c".into()],
        "blobs",
    )
}

/// The app on `data`, with few k-means restarts, and the scan window opened by its button.
fn with_window(data: Dataset) -> Harness<'static, App> {
    let mut h = common::loaded();
    h.state_mut().set_dataset(data);
    h.state_mut().settings_mut().kmeans_restarts = 3;
    h.run_steps(2);
    h.get_by_label("Scan k…").scroll_to_me();
    h.run_steps(20);
    h.get_by_label("Scan k…").click();
    h.run_steps(2);
    assert!(scan_of(h.state()).show, "the button opens the window");
    h
}

fn click(h: &mut Harness<'static, App>, label: &str) {
    h.hover_at(egui::pos2(5.0, 5.0));
    h.run_steps(1);
    h.get_by_label(label).click();
    h.run_steps(1);
}

#[test]
fn a_scan_draws_one_point_per_k_and_use_k_sets_the_rank() {
    let mut h = with_window(blobs(9, 10));
    assert_eq!(h.state().settings().k, 3, "k = c on a new dataset");
    click(&mut h, "Start scan");
    assert!(scan_of(h.state()).is_running() || !scan_of(h.state()).rows.is_empty());
    step_until(&mut h, "the scan to finish", MAX_STEPS, |a| {
        !scan_of(a).is_running()
    });
    h.run_steps(2);
    let scan = scan_of(h.state());
    assert_eq!(scan.ks, [2, 3, 4, 5, 6], "k 2..6 by default");
    assert!(
        matches!(&scan.outcome, Some(Ok(m)) if m.contains("5 ranks")),
        "{:?}",
        scan.outcome
    );
    let c = scan.curves();
    let ks = |s: &[[f64; 2]]| s.iter().map(|p| p[0] as usize).collect::<Vec<_>>();
    for (name, s) in [
        ("error", &c.error),
        ("ACC", &c.acc),
        ("NMI", &c.nmi),
        ("cophenetic", &c.cophenetic),
    ] {
        assert_eq!(ks(s), [2, 3, 4, 5, 6], "{name}: one point per k");
    }
    assert!(
        c.error.windows(2).all(|w| w[1][1] <= w[0][1] + 1e-9),
        "the error falls with k: {:?}",
        c.error
    );
    assert!(scan.rows.iter().all(|r| r.runs == 5), "5 repeats each");
    click(&mut h, "Use k = 5");
    assert_eq!(h.state().settings().k, 5, "Use k sets the model's k");
}

#[test]
fn cancel_stops_a_scan_and_a_running_job_refuses_one() {
    // Slow enough to cancel: 400 samples, up to 5000 iterations without a tolerance.
    let mut h = with_window(blobs(40, 134));
    h.state_mut().settings_mut().tol = 0.0;
    h.state_mut().settings_mut().max_iter = 5000;
    click(&mut h, "Start scan");
    assert!(scan_of(h.state()).is_running());
    click(&mut h, "Cancel scan");
    let scan = scan_of(h.state());
    assert!(
        !scan.is_running(),
        "Cancel ends the scan at once for the UI"
    );
    assert!(
        matches!(&scan.outcome, Some(Err(m)) if m.starts_with("Cancelled")),
        "{:?}",
        scan.outcome
    );
    let rows = scan.rows.len();
    assert!(rows < 5, "cancelled before the end: {rows} ranks");
    for _ in 0..20 {
        h.step();
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(
        scan_of(h.state()).rows.len(),
        rows,
        "nothing arrives after Cancel"
    );
    // Start is offered again (get_by_label panics when it is missing).
    let _ = h.get_by_label("Start scan");

    // A run is active: Start is refused.
    h.state_mut().send(runs::Command::Run);
    h.run_steps(2);
    assert!(h.state().run().worker.is_active());
    h.state_mut().send(Command::Start);
    h.run_steps(1);
    let scan = scan_of(h.state());
    assert!(!scan.is_running());
    assert!(
        matches!(&scan.outcome, Some(Err(m)) if m.contains("A run is active")),
        "{:?}",
        scan.outcome
    );
    h.state_mut().send(runs::Command::Stop);
    h.run_steps(2);
}
