//! Live-view budget (issue 5 item 5): the GUI's CPU time per frame while an NMF run on
//! n = 10,000 points streams snapshots. Prints p50/p95 of the app's own `frame_ms` (logic +
//! ui) and of the whole `harness.step()`; asserts only a generous bound so CI stays stable.
//! The real figure comes from a release run:
//! `cargo test --release --test frame_budget -- --nocapture`.

#![cfg(feature = "gui")]

use eframe::egui;
use egui_kittest::Harness;
use ndarray::Array2;
use nmf_playground::engine::data::Dataset;
use nmf_playground::gui::{App, WorkerState, runs};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::{Duration, Instant};

const N: usize = 10_000;
const M: usize = 64;
const CLASSES: usize = 10;
const FRAMES: usize = 200;

/// n = 10,000 samples in 10 planted classes, 64 features, labelled.
fn dataset() -> Dataset {
    dataset_of(M, N)
}

/// n samples in 10 planted classes, m features, labelled.
fn dataset_of(m: usize, n: usize) -> Dataset {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let labels: Vec<usize> = (0..n).map(|i| i % CLASSES).collect();
    let x = Array2::from_shape_fn((m, n), |(f, i)| {
        let on = f % CLASSES == labels[i];
        (if on { 1.0 } else { 0.1 }) + 0.2 * rng.r#gen::<f64>()
    });
    let names = (0..CLASSES).map(|c| format!("class {c}")).collect();
    Dataset::from_parts(x, Some(labels), names, format!("synthetic n={n}"))
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

#[test]
fn frame_time_while_snapshots_stream_at_n_10000() {
    frame_times_while_snapshots_stream(dataset(), 50.0);
}

/// The app's target size: 200,000 points, every group drawn as an image
/// (`gui/point_image.rs`), each new snapshot stamped anew. The target is p95 ≤ 16 ms
/// in release: `cargo test --release --test frame_budget -- --ignored --nocapture`.
#[test]
#[ignore = "release only: 200,000 points"]
fn frame_time_while_snapshots_stream_at_n_200000() {
    frame_times_while_snapshots_stream(dataset_of(16, 200_000), 16.0);
}

/// Run NMF on `data` in the app and time 200 frames while snapshots stream; p95 of the app's
/// own frame time must stay below `p95_ms`.
fn frame_times_while_snapshots_stream(data: Dataset, p95_ms: f64) {
    let n = data.n();
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_eframe(|cc| App::new(cc));
    h.state_mut().set_dataset(data);
    {
        let s = h.state_mut().settings_mut();
        s.model = "nmf".into();
        s.k = 10;
        s.max_iter = 1_000_000;
        s.tol = 0.0;
    }
    h.state_mut().send(runs::Command::Run);
    // Wait for the first snapshot (the run started and the scatter has points).
    let t0 = Instant::now();
    while h.state().run().snapshot.is_none() && t0.elapsed() < Duration::from_secs(60) {
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        h.state().run().snapshot.is_some(),
        "no snapshot after 60 s: worker {:?}, status {:?}",
        h.state().run().worker,
        h.state().session().status
    );

    let (mut app_ms, mut step_ms) = (Vec::with_capacity(FRAMES), Vec::with_capacity(FRAMES));
    let mut cpu_ms = Vec::with_capacity(FRAMES);
    let mut snapshots = 0;
    let mut last_iter = None;
    for _ in 0..FRAMES {
        let t = Instant::now();
        h.step();
        step_ms.push(t.elapsed().as_secs_f64() * 1e3);
        app_ms.push(f64::from(h.state().view().frame_ms));
        if let Some((cpu, _)) = h.state().view().frame_cpu {
            cpu_ms.push(f64::from(cpu));
        }
        let it = h.state().run().snapshot.as_ref().map(|s| s.iteration);
        if it != last_iter {
            snapshots += 1;
            last_iter = it;
        }
        // Roughly a 60 Hz display: the worker keeps iterating between frames.
        std::thread::sleep(Duration::from_millis(10));
    }
    let s = h.state().session();
    assert_eq!(
        h.state().run().worker,
        WorkerState::Running,
        "status {:?}",
        s.status
    );
    let shown: usize = h.state().view().scatter.point_count();
    assert_eq!(shown, n, "scatter does not show every point");
    app_ms.sort_by(f64::total_cmp);
    step_ms.sort_by(f64::total_cmp);
    let (a50, a95) = (percentile(&app_ms, 0.5), percentile(&app_ms, 0.95));
    let (s50, s95) = (percentile(&step_ms, 0.5), percentile(&step_ms, 0.95));
    cpu_ms.sort_by(f64::total_cmp);
    if !cpu_ms.is_empty() {
        println!(
            "frame_budget n={n}: the UI thread's CPU per frame p50 {:.2} p95 {:.2} max {:.2} (ms)",
            percentile(&cpu_ms, 0.5),
            percentile(&cpu_ms, 0.95),
            cpu_ms[cpu_ms.len() - 1]
        );
    }
    println!(
        "frame_budget n={n}: {FRAMES} frames, {snapshots} new snapshots; app frame_ms p50 {a50:.2} \
         p95 {a95:.2} max {:.2}; harness.step() p50 {s50:.2} p95 {s95:.2} max {:.2} (ms)",
        app_ms[app_ms.len() - 1],
        step_ms[step_ms.len() - 1],
    );
    assert!(snapshots >= 2, "snapshots did not stream ({snapshots})");
    // At n = 10,000 generous (the target, p95 ≤ 8 ms, is checked on a release build).
    assert!(a95 < p95_ms, "app frame p95 {a95:.2} ms");
}
