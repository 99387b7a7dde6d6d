//! Shared egui_kittest helpers for the UI tests: a harness of the whole app, stepping until a
//! condition holds (sleeping between frames so worker and loader threads progress), and the
//! app with the bundled sample loaded.

use eframe::egui;
use egui_kittest::Harness;
use nmf_playground::gui::App;
use std::time::Duration;

/// Generous cap for waiting on the worker (steps of ~10 ms each).
pub const MAX_STEPS: usize = 3000;

/// The whole app at 1280×800, as eframe builds it.
pub fn harness() -> Harness<'static, App> {
    Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .with_max_steps(200)
        .build_eframe(|cc| App::new(cc))
}

/// Step frames until `pred` holds; panics with the app's state after `max` steps.
#[track_caller]
pub fn step_until(
    h: &mut Harness<'static, App>,
    what: &str,
    max: usize,
    pred: impl Fn(&App) -> bool,
) {
    for _ in 0..max {
        h.step();
        if pred(h.state()) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let s = h.state().session();
    panic!(
        "timed out waiting for {what}: worker {:?}, status {:?}, iteration {}",
        h.state().run().worker,
        s.status,
        h.state().run().progress.iteration
    );
}

/// A harness with the bundled sample loaded.
pub fn loaded() -> Harness<'static, App> {
    let mut h = harness();
    step_until(&mut h, "the sample to load", MAX_STEPS, |a| {
        a.session().dataset.is_some()
    });
    h.step();
    h
}
