//! Worker protocol: events, pause/resume, cancel latency, drop = cancel + join, job ids.

use ndarray::Array2;
use nmf_playground::engine::data::Dataset;
use nmf_playground::engine::jobs::experiment::FitOptions;
use nmf_playground::engine::jobs::worker::{Command, Event, Job, JobHandle, JobId, Waker};
use nmf_playground::engine::models::{ModelSpec, nmf};
use rand::{Rng, SeedableRng};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

fn data(m: usize, n: usize) -> Arc<Dataset> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let x = Array2::from_shape_simple_fn((m, n), || rng.r#gen::<f64>());
    Arc::new(Dataset::from_parts(x, None, vec![], "random"))
}

fn no_waker() -> Waker {
    Arc::new(|| {})
}

/// A job that would run for a long time (tolerance off, huge cap).
fn long_job(id: u64) -> Job {
    Job::new(
        JobId(id),
        data(200, 400),
        ModelSpec::new(nmf::KIND, 10, 1),
        FitOptions {
            max_iter: 10_000_000,
            tol: 0.0,
        },
    )
}

fn wait_for(
    rx: &Receiver<Event>,
    timeout: Duration,
    pred: impl Fn(&Event) -> bool,
) -> Option<Event> {
    let end = Instant::now() + timeout;
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(e) if pred(&e) => return Some(e),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    None
}

#[test]
fn a_job_streams_started_progress_snapshot_and_finished() {
    let (tx, rx) = mpsc::channel();
    let job = Job::new(
        JobId(7),
        data(20, 30),
        ModelSpec::new(nmf::KIND, 3, 2),
        FitOptions {
            max_iter: 50,
            tol: 0.0,
        },
    );
    let _h = JobHandle::spawn(job, tx, no_waker()).expect("spawn");
    let mut events = Vec::new();
    while let Ok(e) = rx.recv_timeout(Duration::from_secs(10)) {
        let done = e.is_terminal();
        events.push(e);
        if done {
            break;
        }
    }
    assert!(events.iter().all(|e| e.job() == JobId(7)));
    assert!(matches!(
        events.first(),
        Some(Event::Started { max_iter: 50, .. })
    ));
    let progress: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            Event::Progress { iteration, .. } => Some(*iteration),
            _ => None,
        })
        .collect();
    assert_eq!(progress, (1..=50).collect::<Vec<_>>());
    let snap = events.iter().find_map(|e| match e {
        Event::Snapshot { snapshot, .. } => Some(snapshot.clone()),
        _ => None,
    });
    let snap = snap.expect("at least one snapshot");
    assert_eq!(snap.projection.dim(), (30, 2));
    assert_eq!(snap.h.dim(), (3, 30));
    match events.last() {
        Some(Event::Finished { result, .. }) => {
            assert_eq!(result.record.iterations(), 50);
            assert_eq!(result.h.dim(), (3, 30));
            assert!(result.projection.is_some());
        }
        other => panic!("expected Finished, got {other:?}"),
    }
}

#[test]
fn snapshots_are_throttled_to_twenty_per_second() {
    let (tx, rx) = mpsc::channel();
    let h = JobHandle::spawn(long_job(1), tx, no_waker()).expect("spawn");
    std::thread::sleep(Duration::from_millis(600));
    h.send(Command::Cancel);
    let mut snaps = 0;
    let mut progress = 0;
    while let Ok(e) = rx.recv_timeout(Duration::from_secs(5)) {
        match e {
            Event::Snapshot { .. } => snaps += 1,
            Event::Progress { .. } => progress += 1,
            e if e.is_terminal() => break,
            _ => {}
        }
    }
    assert!(progress > snaps, "progress {progress}, snapshots {snaps}");
    // 600 ms at ≤ 20/s is ≤ 12 (+1 for the first one and scheduling slack).
    assert!(snaps <= 14, "{snaps} snapshots in 0.6 s");
    assert!(snaps >= 2, "{snaps} snapshots in 0.6 s");
}

#[test]
fn pause_stops_progress_and_resume_continues() {
    let (tx, rx) = mpsc::channel();
    let h = JobHandle::spawn(long_job(2), tx, no_waker()).expect("spawn");
    wait_for(&rx, Duration::from_secs(10), |e| {
        matches!(e, Event::Progress { .. })
    })
    .expect("runs");
    h.send(Command::Pause);
    std::thread::sleep(Duration::from_millis(150));
    // Drain what was in flight before the pause took effect.
    while rx.try_recv().is_ok() {}
    let during_pause = wait_for(&rx, Duration::from_millis(300), |_| true);
    assert!(
        during_pause.is_none(),
        "event while paused: {during_pause:?}"
    );
    h.send(Command::Resume);
    let after = wait_for(&rx, Duration::from_secs(5), |e| {
        matches!(e, Event::Progress { .. })
    });
    assert!(after.is_some(), "no progress after resume");
}

/// The iterations of the progress events that arrive within `window`.
fn progress_within(rx: &Receiver<Event>, window: Duration) -> Vec<usize> {
    let end = Instant::now() + window;
    let mut its = Vec::new();
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(Event::Progress { iteration, .. }) => its.push(iteration),
            Ok(_) => {}
            Err(_) => break,
        }
    }
    its
}

/// From a paused job, each Step runs exactly one iteration (its progress and a snapshot
/// arrive), then the job holds again; a Step sent to a running job holds it after one more.
#[test]
fn step_runs_one_iteration_then_holds() {
    let (tx, rx) = mpsc::channel();
    let h = JobHandle::spawn(long_job(11), tx, no_waker()).expect("spawn");
    wait_for(&rx, Duration::from_secs(10), |e| {
        matches!(e, Event::Progress { .. })
    })
    .expect("runs");
    h.send(Command::Pause);
    std::thread::sleep(Duration::from_millis(150));
    let mut last = 0;
    while let Ok(e) = rx.try_recv() {
        if let Event::Progress { iteration, .. } = e {
            last = iteration;
        }
    }
    assert!(progress_within(&rx, Duration::from_millis(200)).is_empty());
    // Each Step runs exactly one iteration: its progress, then its snapshot. The first step's
    // iteration is counted from the held one (`last` may lag it by an iteration that ended
    // while Pause was on its way, on a loaded machine).
    let mut stepped: Option<usize> = None;
    for _ in 0..3 {
        h.send(Command::Step);
        let mut seen = Vec::new();
        loop {
            match rx.recv_timeout(Duration::from_secs(5)) {
                Ok(Event::Progress { iteration, .. }) => seen.push(iteration),
                Ok(Event::Snapshot { .. }) => break,
                Ok(_) => {}
                Err(e) => panic!("a stepped iteration sends its snapshot: {e}"),
            }
        }
        let it = *seen.last().expect("a stepped iteration sends its progress");
        match stepped {
            Some(prev) => assert_eq!(seen, [prev + 1], "one iteration per Step"),
            None => assert!(it == last + 1 || it == last + 2, "{last} then {seen:?}"),
        }
        stepped = Some(it);
        // Nothing more until the next Step.
        assert!(progress_within(&rx, Duration::from_millis(200)).is_empty());
    }
    h.send(Command::Resume);
    let its = progress_within(&rx, Duration::from_millis(300));
    let held = stepped.expect("three steps");
    assert_eq!(
        its.first(),
        Some(&(held + 1)),
        "three steps, then on: {its:?}"
    );
    // A Step while running: one more iteration, then it holds.
    h.send(Command::Step);
    std::thread::sleep(Duration::from_millis(150));
    while rx.try_recv().is_ok() {}
    assert!(progress_within(&rx, Duration::from_millis(200)).is_empty());
}

/// Throttle(20) keeps a fast job to about 20 iterations per second; Throttle(0) lifts it.
#[test]
fn throttle_limits_the_iterations_per_second() {
    let (tx, rx) = mpsc::channel();
    let mut job = long_job(12);
    job.data = data(10, 20);
    let h = JobHandle::spawn(job, tx, no_waker()).expect("spawn");
    h.send(Command::Throttle(20));
    wait_for(&rx, Duration::from_secs(10), |e| {
        matches!(e, Event::Progress { iteration: 3.., .. })
    })
    .expect("runs");
    // Drop what ran before the command was read.
    std::thread::sleep(Duration::from_millis(100));
    while rx.try_recv().is_ok() {}
    let its = progress_within(&rx, Duration::from_millis(1000));
    assert!(
        (15..=25).contains(&its.len()),
        "{} iterations in 1 s: {:?}",
        its.len(),
        &its[..its.len().min(30)]
    );
    h.send(Command::Throttle(0));
    std::thread::sleep(Duration::from_millis(60));
    let fast = progress_within(&rx, Duration::from_millis(300));
    assert!(
        fast.len() > 100,
        "{} iterations in 0.3 s unthrottled",
        fast.len()
    );
}

#[test]
fn cancel_takes_effect_within_100_ms() {
    let (tx, rx) = mpsc::channel();
    let h = JobHandle::spawn(long_job(3), tx, no_waker()).expect("spawn");
    wait_for(&rx, Duration::from_secs(10), |e| {
        matches!(e, Event::Progress { iteration: 5, .. })
    })
    .expect("runs");
    let t0 = Instant::now();
    h.send(Command::Cancel);
    let ev = wait_for(&rx, Duration::from_secs(5), Event::is_terminal).expect("terminal");
    let dt = t0.elapsed();
    assert!(matches!(ev, Event::Cancelled { .. }), "{ev:?}");
    assert!(dt < Duration::from_millis(100), "cancel took {dt:?}");
}

#[test]
fn cancel_while_paused_ends_the_job() {
    let (tx, rx) = mpsc::channel();
    let h = JobHandle::spawn(long_job(4), tx, no_waker()).expect("spawn");
    wait_for(&rx, Duration::from_secs(10), |e| {
        matches!(e, Event::Progress { .. })
    })
    .expect("runs");
    h.send(Command::Pause);
    std::thread::sleep(Duration::from_millis(50));
    h.send(Command::Cancel);
    let ev = wait_for(&rx, Duration::from_secs(2), Event::is_terminal).expect("terminal");
    assert!(matches!(ev, Event::Cancelled { .. }));
}

#[test]
fn dropping_the_handle_cancels_and_joins_and_ids_keep_jobs_apart() {
    let (tx, rx) = mpsc::channel();
    let first = JobHandle::spawn(long_job(10), tx.clone(), no_waker()).expect("spawn");
    wait_for(&rx, Duration::from_secs(10), |e| {
        matches!(e, Event::Progress { .. })
    })
    .expect("runs");
    let t0 = Instant::now();
    drop(first); // replaced by a new run
    assert!(
        t0.elapsed() < Duration::from_millis(500),
        "drop took {:?}",
        t0.elapsed()
    );
    let second = Job::new(
        JobId(11),
        data(10, 12),
        ModelSpec::new(nmf::KIND, 2, 1),
        FitOptions {
            max_iter: 5,
            tol: 0.0,
        },
    );
    let _h2 = JobHandle::spawn(second, tx, no_waker()).expect("spawn");
    // The consumer tracks the current id: everything else is stale and must be skippable.
    let mut stale = 0;
    let mut current_done = false;
    while let Ok(e) = rx.recv_timeout(Duration::from_secs(5)) {
        if e.job() != JobId(11) {
            assert_eq!(e.job(), JobId(10));
            stale += 1;
            continue;
        }
        if e.is_terminal() {
            assert!(matches!(e, Event::Finished { .. }));
            current_done = true;
            break;
        }
    }
    assert!(current_done);
    // The first job's thread was joined on drop: nothing of it can arrive any more.
    assert!(rx.try_recv().is_err());
    let _ = stale;
}

#[test]
fn a_bad_spec_fails_with_a_message() {
    let (tx, rx) = mpsc::channel();
    let job = Job::new(
        JobId(5),
        data(4, 5),
        ModelSpec::new(nmf::KIND, 9, 1),
        FitOptions::default(),
    );
    let _h = JobHandle::spawn(job, tx, no_waker()).expect("spawn");
    let ev = wait_for(&rx, Duration::from_secs(5), Event::is_terminal).expect("terminal");
    match ev {
        Event::Failed { error, .. } => assert!(error.contains("k = 9"), "{error}"),
        other => panic!("{other:?}"),
    }
}

/// A headless job (the CLI's) sends no snapshot and only throttled progress, yet its result
/// carries the objective of every iteration, and `run_blocking` delivers the same result on
/// the calling thread.
#[test]
fn a_headless_job_throttles_progress_and_keeps_the_whole_record() {
    use nmf_playground::engine::jobs::worker::run_blocking;
    let job = Job::new(
        JobId(3),
        data(20, 30),
        ModelSpec::new(nmf::KIND, 3, 2),
        FitOptions {
            max_iter: 2000,
            tol: 0.0,
        },
    )
    .headless();
    let (mut progress, mut snapshots, mut result) = (0, 0, None);
    run_blocking(job.clone(), |e| {
        match e {
            Event::Progress { .. } => progress += 1,
            Event::Snapshot { .. } => snapshots += 1,
            Event::Finished { result: r, .. } => result = Some(r),
            _ => {}
        }
        true
    });
    let result = result.expect("finished");
    assert_eq!(
        result.record.objective.len(),
        2000,
        "every iteration is recorded"
    );
    assert_eq!(snapshots, 0);
    assert!(result.projection.is_none());
    // 2000 tiny iterations take milliseconds: the first progress event, and at most one per
    // 100 ms after it.
    let allowed = 1 + (result.record.seconds / 0.1).ceil() as usize;
    assert!(
        progress >= 1 && progress <= allowed,
        "{progress} progress events"
    );
    // On a thread, through the channel, the same bits.
    let (tx, rx) = mpsc::channel();
    let _h = JobHandle::spawn(job, tx, no_waker()).expect("spawn");
    let Some(Event::Finished {
        result: threaded, ..
    }) = wait_for(&rx, Duration::from_secs(30), Event::is_terminal)
    else {
        panic!("no result");
    };
    assert_eq!(threaded.h, result.h);
    assert_eq!(threaded.record.objective, result.record.objective);
}

/// A model with a learned subspace (PSMF) streams it, projected to n×2 like H, in its
/// snapshots and its result, for the app's "Learned subspace" view; NMF streams none.
#[test]
fn snapshots_carry_the_learned_subspace_of_models_that_have_one() {
    use nmf_playground::engine::models::ModelKind;
    let psmf = ModelKind::from_name("psmf").expect("psmf registered");
    let n = 60;
    // Three separated groups, so that CAN (PSMF's start) finds them.
    let x = Array2::from_shape_fn((5, n), |(f, i)| {
        let g = i % 3;
        1.0 + if f == g { 10.0 } else { 0.0 } + 0.01 * ((i * 7 + f) % 5) as f64
    });
    let data = Arc::new(Dataset::from_parts(
        x,
        Some((0..n).map(|i| i % 3).collect()),
        vec!["a".into(), "b".into(), "c".into()],
        "groups",
    ));
    for (kind, expect) in [(psmf, true), (nmf::KIND, false)] {
        let (tx, rx) = mpsc::channel();
        let job = Job::new(
            JobId(1),
            Arc::clone(&data),
            ModelSpec::new(kind, 3, 0),
            FitOptions {
                max_iter: 30,
                tol: 0.0,
            },
        );
        let _h = JobHandle::spawn(job, tx, no_waker()).expect("spawn");
        let end =
            wait_for(&rx, Duration::from_secs(20), |e| e.is_terminal()).expect("the job ends");
        let Event::Finished { result, .. } = end else {
            panic!("{end:?}");
        };
        let snap = result.snapshot().expect("projected");
        assert_eq!(snap.outputs.subspace.is_some(), expect, "{}", kind.name());
        if let Some((name, p)) = &snap.outputs.subspace {
            assert_eq!(p.dim(), (n, 2));
            assert!(name.contains("subspace"));
        }
    }
}
