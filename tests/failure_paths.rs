//! Every registered model's failure paths, as one table over the registry (issue 20 point 6),
//! so a model added to `models!` joins without a line here:
//!
//! * data whose squares overflow f64 are refused at build with a message naming the data (and
//!   `run` exits 2 naming the file); data just below that edge either stay finite or stop with
//!   "diverged at iteration t: …", never a panic or a hang;
//! * cancel ends the job within 100 ms of the request at n = 10,000 samples;
//! * pause and resume give bit for bit the result of an uninterrupted run with the same seed;
//! * a panic inside a model becomes a `Failed` event with the panic's message.
//! * a fit that diverges ends `run` with exit 1 and "diverged at iteration t" (every model,
//!   through the binary).

#![allow(
    clippy::expect_used,
    reason = "test helpers outside #[test] functions: a failed expectation is a failed test"
)]

use ndarray::{Array2, ArrayView2};
use nmf_playground::engine::constraints::{SideInfo, Triplet, reveal_stratified};
use nmf_playground::engine::data::Dataset;
use nmf_playground::engine::jobs::experiment::FitOptions;
use nmf_playground::engine::jobs::worker::{Command, Event, Job, JobHandle, JobId, run_blocking};
use nmf_playground::engine::models::{
    Build, Descriptor, Model, ModelError, ModelKind, ModelSpec, Objective,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// Three Gaussian blobs in m dimensions, `per` samples each, shifted to be nonnegative, times
/// `scale`; labelled 0, 1, 2.
fn blobs(m: usize, per: usize, scale: f64, seed: u64) -> Arc<Dataset> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = 3 * per;
    let labels: Vec<usize> = (0..n).map(|i| i / per).collect();
    let x = Array2::from_shape_fn((m, n), |(r, c)| {
        let centre = if r % 3 == labels[c] { 4.0 } else { 1.0 };
        scale * (centre + 0.3 * rng.r#gen::<f64>())
    });
    Arc::new(Dataset::from_parts(
        x,
        Some(labels),
        vec!["a".into(), "b".into(), "c".into()],
        format!("blobs {m}×{n}"),
    ))
}

/// Uniform random data in [0, 1), m×n, with random labels 0, 1, 2.
fn uniform(m: usize, n: usize, seed: u64) -> Arc<Dataset> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = Array2::from_shape_simple_fn((m, n), || rng.r#gen::<f64>());
    let labels = (0..n).map(|_| rng.gen_range(0..3)).collect();
    Arc::new(Dataset::from_parts(
        x,
        Some(labels),
        vec!["a".into(), "b".into(), "c".into()],
        format!("uniform {m}×{n}"),
    ))
}

/// Side information every model can run on: triplets from the labels and 10 % of the labels
/// revealed (stratified).
fn side_for(data: &Dataset, triplets: usize, seed: u64) -> Arc<SideInfo> {
    let truth = data.labels.clone().expect("labelled");
    let n = truth.len();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut ts = Vec::with_capacity(triplets);
    while ts.len() < triplets {
        let (i, j, q) = (
            rng.gen_range(0..n),
            rng.gen_range(0..n),
            rng.gen_range(0..n),
        );
        if i != j && truth[i] == truth[j] && truth[i] != truth[q] {
            ts.push(Triplet::new(i, j, q));
        }
    }
    ts.sort_unstable_by_key(|t| (t.i, t.j, t.q));
    ts.dedup();
    let known = reveal_stratified(&truth, 0.1, seed).expect("reveal");
    Arc::new(SideInfo::new(ts, known))
}

fn job(kind: ModelKind, data: &Arc<Dataset>, side: &Arc<SideInfo>, fit: FitOptions) -> Job {
    Job::new(JobId(1), Arc::clone(data), ModelSpec::new(kind, 3, 7), fit)
        .with_side(Arc::clone(side))
}

fn terminal(job: Job) -> Event {
    let mut last = None;
    run_blocking(job, |e| {
        if e.is_terminal() {
            last = Some(e);
        }
        true
    });
    last.expect("every job ends with a terminal event")
}

/// Each registered model's terminal event on three blobs scaled by `scale`, 50 iterations.
fn outcomes_at_scale(scale: f64) -> (Arc<Dataset>, Vec<(ModelKind, Event)>) {
    let data = blobs(6, 10, scale, 1);
    let side = side_for(&data, 40, 1);
    let fit = FitOptions {
        max_iter: 50,
        tol: 0.0,
    };
    let events = ModelKind::all()
        .map(|kind| (kind, terminal(job(kind, &data, &side, fit))))
        .collect();
    (data, events)
}

#[test]
fn every_model_refuses_data_whose_squares_overflow_naming_it() {
    // Entries of 1e200: every square (‖X‖², distances, Gram matrices) is infinite.
    let (data, events) = outcomes_at_scale(1e200);
    for (kind, event) in events {
        match event {
            Event::Failed {
                error,
                at_build: true,
                ..
            } => assert!(
                error.contains(&data.source) && error.contains("overflows"),
                "{}: {error}",
                kind.name()
            ),
            other => panic!("{}: expected a refusal, got {other:?}", kind.name()),
        }
    }
}

#[test]
fn every_model_stops_with_a_message_or_stays_finite_at_the_edge_of_f64() {
    // Entries of 1e150, just below the refusal: squares near 1e300, sums of them within a
    // factor of f64's top. A model either stays finite or stops with "diverged at iteration";
    // it never panics.
    let (data, events) = outcomes_at_scale(1e150);
    for (kind, event) in events {
        match event {
            Event::Failed {
                error, at_build, ..
            } => {
                if at_build {
                    assert!(
                        error.contains(&data.source),
                        "{}: a refusal names the data: {error}",
                        kind.name()
                    );
                } else {
                    assert!(
                        error.contains("diverged at iteration"),
                        "{}: {error}",
                        kind.name()
                    );
                }
                assert!(
                    !error.contains("internal error"),
                    "{}: overflow must not panic: {error}",
                    kind.name()
                );
            }
            Event::Finished { result, .. } => assert!(
                result.h.iter().all(|v| v.is_finite())
                    && result.record.objective.iter().all(|v| v.is_finite()),
                "{}: finished with non-finite numbers",
                kind.name()
            ),
            other => panic!("{}: {other:?}", kind.name()),
        }
    }
}

#[test]
fn run_exits_2_naming_the_file_when_the_data_overflow_for_every_model() {
    let dir = tempfile::tempdir().expect("temp dir");
    let csv = dir.path().join("huge.csv");
    let data = blobs(4, 8, 1e200, 2);
    let mut text = String::from("f1,f2,f3,f4,label\n");
    for c in 0..data.n() {
        let row: Vec<String> = (0..data.m())
            .map(|r| format!("{:e}", data.x[[r, c]]))
            .collect();
        text.push_str(&format!(
            "{},{}\n",
            row.join(","),
            data.labels.as_ref().expect("labelled")[c]
        ));
    }
    std::fs::write(&csv, text).expect("write csv");
    for kind in ModelKind::all() {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_nmf-playground"))
            .args(["run", "--data"])
            .arg(&csv)
            .args(["--model", kind.name(), "--max-iter", "30", "--tol", "0"])
            .args(["--preprocess", "none"])
            .args(["--triplets", "generate", "--reveal", "0.25"])
            .output()
            .expect("run the binary");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code();
        assert!(
            !stderr.contains("panicked"),
            "{}: panicked: {stderr}",
            kind.name()
        );
        assert_eq!(code, Some(2), "{}: {stderr}", kind.name());
        assert!(
            stderr.contains("huge.csv") && stderr.contains("overflows"),
            "{}: {stderr}",
            kind.name()
        );
    }
}

/// Models whose every iteration is a dense n×n eigenproblem (O(n³): minutes at n = 10,000,
/// docs/models.md §2.7): their cancel latency is one round, measured at the n where a round
/// is short. Everything else is checked at n = 10,000.
fn cancel_size(kind: ModelKind) -> (usize, Vec<(&'static str, &'static str)>) {
    match kind.name() {
        "can" => (300, vec![]),
        // PSMF's default start is CAN; from k-means it has no dense n×n step.
        "psmf" => (10_000, vec![("init", "kmeans")]),
        _ => (10_000, vec![]),
    }
}

fn wait_for(rx: &Receiver<Event>, timeout: Duration, pred: impl Fn(&Event) -> bool) -> Event {
    let end = Instant::now() + timeout;
    loop {
        let left = end
            .checked_duration_since(Instant::now())
            .expect("timed out waiting for an event");
        let e = rx.recv_timeout(left).expect("an event before the timeout");
        if pred(&e) {
            return e;
        }
    }
}

#[test]
fn every_model_cancels_within_100_ms_at_ten_thousand_samples() {
    use nmf_playground::engine::models::ParamValue;
    for kind in ModelKind::all() {
        let (n, params) = cancel_size(kind);
        // Structureless data, so that no model converges before it is cancelled.
        let data = uniform(20, n, 3);
        let side = side_for(&data, 500, 3);
        let mut spec = ModelSpec::new(kind, 3, 7);
        for (name, value) in params {
            spec = spec.with(name, ParamValue::Choice(value));
        }
        let fit = FitOptions {
            max_iter: 1_000_000,
            tol: 0.0,
        };
        let job = Job::new(JobId(1), Arc::clone(&data), spec, fit).with_side(side);
        let (tx, rx) = mpsc::channel();
        let h = JobHandle::spawn(job, tx, Arc::new(|| {})).expect("spawn");
        let first = wait_for(&rx, Duration::from_secs(120), |e| {
            matches!(e, Event::Progress { iteration: 2.., .. }) || e.is_terminal()
        });
        assert!(
            matches!(first, Event::Progress { .. }),
            "{}: the job ended before it could be cancelled: {first:?}",
            kind.name()
        );
        h.send(Command::Cancel);
        let t0 = Instant::now();
        let end = wait_for(&rx, Duration::from_secs(30), Event::is_terminal);
        let took = t0.elapsed();
        assert!(
            matches!(end, Event::Cancelled { .. }),
            "{}: {end:?}",
            kind.name()
        );
        assert!(
            took < Duration::from_millis(100),
            "{} at n = {n}: cancel took {took:?}",
            kind.name()
        );
    }
}

/// H of a finished run.
fn final_h(e: Event) -> Array2<f64> {
    match e {
        Event::Finished { result, .. } => result.h,
        other => panic!("expected a finished run, got {other:?}"),
    }
}

#[test]
fn pause_and_resume_give_the_uninterrupted_result_for_every_model() {
    let data = blobs(8, 20, 1.0, 4);
    let side = side_for(&data, 60, 4);
    let fit = FitOptions {
        max_iter: 12,
        tol: 0.0,
    };
    for kind in ModelKind::all() {
        let straight = final_h(terminal(job(kind, &data, &side, fit)));
        let (tx, rx) = mpsc::channel();
        let h = JobHandle::spawn(job(kind, &data, &side, fit), tx, Arc::new(|| {})).expect("spawn");
        h.send(Command::Pause);
        std::thread::sleep(Duration::from_millis(30));
        h.send(Command::Resume);
        h.send(Command::Pause);
        std::thread::sleep(Duration::from_millis(10));
        h.send(Command::Resume);
        let paused = final_h(wait_for(&rx, Duration::from_secs(60), Event::is_terminal));
        let same = straight
            .iter()
            .zip(paused.iter())
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(
            same && straight.dim() == paused.dim(),
            "{}: pausing changed the result",
            kind.name()
        );
    }
}

/// A model that panics at its third step (a stand-in for a bug in a model).
struct Panics {
    h: Array2<f64>,
    t: usize,
}

impl Model for Panics {
    fn kind(&self) -> ModelKind {
        ModelKind::of(&PANICS)
    }
    fn step(&mut self) -> Result<Objective, ModelError> {
        self.t += 1;
        assert!(self.t < 3, "index 7 out of range (a planted bug)");
        Ok(Objective::single("f", 1.0 / self.t as f64))
    }
    fn h(&self) -> ArrayView2<'_, f64> {
        self.h.view()
    }
    fn w(&self) -> Option<ArrayView2<'_, f64>> {
        None
    }
    fn objective(&self) -> Objective {
        Objective::single("f", 2.0)
    }
}

fn build_panics(Build { spec, data, .. }: Build<'_>) -> Result<Box<dyn Model>, ModelError> {
    Ok(Box::new(Panics {
        h: Array2::ones((spec.k, data.n())),
        t: 0,
    }))
}

static PANICS: Descriptor = Descriptor {
    description: "A test model with a planted bug.",
    ..Descriptor::new("panics", "Panics", "none", build_panics)
};

#[test]
fn a_panic_inside_a_model_becomes_a_failed_event_with_its_message() {
    let data = blobs(4, 5, 1.0, 5);
    let spec = ModelSpec::new(ModelKind::of(&PANICS), 2, 0);
    let fit = FitOptions {
        max_iter: 10,
        tol: 0.0,
    };
    // On a worker thread, as the GUI runs it; and on the caller's thread, as `sweep` does.
    let (tx, rx) = mpsc::channel();
    let h = JobHandle::spawn(
        Job::new(JobId(4), Arc::clone(&data), spec.clone(), fit),
        tx,
        Arc::new(|| {}),
    )
    .expect("spawn");
    let end = wait_for(&rx, Duration::from_secs(10), Event::is_terminal);
    drop(h);
    let blocking = terminal(Job::new(JobId(5), data, spec, fit).headless());
    for e in [end, blocking] {
        match e {
            Event::Failed {
                error,
                at_build,
                iterations,
                ..
            } => {
                assert!(!at_build);
                assert_eq!(iterations, 2, "{error}");
                assert!(
                    error.contains("Panics") && error.contains("a planted bug"),
                    "{error}"
                );
            }
            other => panic!("expected Failed, got {other:?}"),
        }
    }
}

/// `blobs` written as a labelled CSV at `path`.
fn write_csv(path: &std::path::Path, data: &Dataset) {
    let mut text = String::new();
    for c in 0..data.n() {
        let row: Vec<String> = (0..data.m())
            .map(|r| format!("{:e}", data.x[[r, c]]))
            .collect();
        let label = data.labels.as_ref().expect("labelled")[c];
        text.push_str(&format!("{},c{label}\n", row.join(",")));
    }
    std::fs::write(path, text).expect("write csv");
}

/// `run` on `csv` with `extra` arguments and environment; exit code and stderr.
fn run_cli(
    csv: &std::path::Path,
    kind: ModelKind,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Option<i32>, String) {
    let m = 6; // the label column's index in every CSV here
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_nmf-playground"));
    cmd.args(["run", "--data"])
        .arg(csv)
        .args(["--label-col", &m.to_string(), "--model", kind.name()])
        .args([
            "--k",
            "3",
            "--max-iter",
            "20",
            "--tol",
            "0",
            "--kmeans-repeats",
            "1",
        ])
        .args(["--triplets", "generate", "--reveal", "0.25"])
        .args(extra);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run the binary");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every registered model's fit that diverges ends `run` with exit 1 and "diverged at
/// iteration t". For every model the divergence is injected (a NaN objective at iteration 1,
/// `experiment::FAULT_ENV`), since no one input makes all of them diverge (most of them stay
/// finite on data at the edge of f64, see above); the models that do diverge on an input
/// through the binary are checked on it too: RMNMF on data of 1e150, and RNMF, FNMF and RPNMF
/// from a warm start of 1e200.
#[test]
fn run_exits_1_with_diverged_at_iteration_for_every_model() {
    use nmf_playground::engine::jobs::experiment::FAULT_ENV;
    let dir = tempfile::tempdir().expect("temp dir");
    let csv = dir.path().join("blobs.csv");
    write_csv(&csv, &blobs(6, 10, 1.0, 6));
    for kind in ModelKind::all() {
        let (code, stderr) = run_cli(&csv, kind, &["--preprocess", "max"], &[(FAULT_ENV, "1")]);
        assert_eq!(code, Some(1), "{}: {stderr}", kind.name());
        assert!(
            stderr.contains("diverged at iteration 1: objective is NaN")
                && stderr.contains(kind.label())
                && !stderr.contains("panicked"),
            "{}: {stderr}",
            kind.name()
        );
    }
    // Inputs that make a model diverge by themselves.
    let edge = dir.path().join("edge.csv");
    write_csv(&edge, &blobs(6, 10, 1e150, 1));
    let warm = dir.path().join("warm");
    std::fs::create_dir(&warm).expect("warm dir");
    let huge = |r, c| Array2::<f64>::from_elem((r, c), 1e200);
    for (name, a) in [("W.npy", huge(6, 3)), ("H.npy", huge(3, 30))] {
        use ndarray_npy::WriteNpyExt;
        let mut buf = Vec::new();
        a.write_npy(&mut buf).expect("npy");
        std::fs::write(warm.join(name), buf).expect("write npy");
    }
    let warm_arg = warm.display().to_string();
    let cases: [(&str, &std::path::Path, Vec<&str>); 4] = [
        ("rmnmf", &edge, vec!["--preprocess", "none"]),
        (
            "rnmf",
            &csv,
            vec!["--preprocess", "max", "--init", &warm_arg],
        ),
        (
            "fnmf",
            &csv,
            vec!["--preprocess", "max", "--init", &warm_arg],
        ),
        (
            "rpnmf",
            &csv,
            vec!["--preprocess", "max", "--init", &warm_arg],
        ),
    ];
    for (name, data, extra) in cases {
        let kind = ModelKind::from_name(name).expect("registered");
        let (code, stderr) = run_cli(data, kind, &extra, &[]);
        assert_eq!(code, Some(1), "{name}: {stderr}");
        assert!(
            stderr.contains("diverged at iteration 1"),
            "{name}: {stderr}"
        );
    }
}
