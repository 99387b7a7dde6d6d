//! The run controller: owns the current model run (the handle of the engine pipeline's steered
//! fit, [`Trial::spawn`], and the channel its events arrive on) and the run's live state
//! (worker state, progress, convergence history, latest snapshot, result). The app asks it to start, pause, resume or stop, and reads its
//! state; the controller alone applies the worker's events, so the rules "a replaced job's
//! late events are ignored" and "draining never blocks the frame" live in one place.

use crate::engine::linalg;
use eframe::egui;

use super::state::{Convergence, Progress, Status, WorkerState};
use crate::engine::constraints::SideInfo;
use crate::engine::data::Dataset;
use crate::engine::jobs::experiment::{FitOptions, StopReason};
use crate::engine::jobs::trial::{Side, Trial};
use crate::engine::jobs::worker::{Command, Event, JobHandle, JobId, RunResult, Snapshot, Waker};
use crate::engine::models::ModelSpec;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

/// Worker-driven repaints are coalesced to at most one per this interval (~60 fps).
const REPAINT_INTERVAL: Duration = Duration::from_millis(16);

/// What one [`RunController::drain`] changed, for the app to follow up on.
#[derive(Debug, Default)]
pub struct Drained {
    /// A new snapshot (or the final one) is in place: the scatter needs rebuilding.
    pub snapshot_changed: bool,
    /// The run finished: [`RunController::result`] holds its result.
    pub finished: bool,
    /// The message for the status line, when an event called for one.
    pub status: Option<Status>,
}

/// The current run and its live state (see the module docs).
pub struct RunController {
    events_tx: Sender<Event>,
    events_rx: Receiver<Event>,
    waker: Waker,
    /// Set by the waker, cleared by `drain`: at most one pending repaint request.
    wake_pending: Arc<AtomicBool>,
    ctx: egui::Context,
    /// The current job (its events are the only ones applied).
    job: Option<JobHandle>,
    /// Replaced or ended jobs whose threads are still winding down (dropped once finished,
    /// so the UI never waits on a join).
    retired: Vec<JobHandle>,
    next_job: u64,
    /// Id of the current job, if any.
    pub job_id: Option<JobId>,
    pub worker: WorkerState,
    pub progress: Progress,
    pub convergence: Convergence,
    pub snapshot: Option<Arc<Snapshot>>,
    /// The result of the last finished run.
    pub result: Option<Box<RunResult>>,
    /// Events of replaced jobs that arrived and were dropped.
    pub stale_events: u64,
    /// The side information the current run was started with (for "triplets kept").
    pub side: Option<Arc<SideInfo>>,
    /// Iterations per second asked of every run (0: full speed; the teaching controls).
    pub rate: u32,
    /// The next [`Self::start`] holds its job after the first iteration (then cleared).
    pub hold_start: bool,
}

impl RunController {
    /// No run yet; worker events will wake `ctx`.
    pub fn new(ctx: &egui::Context) -> Self {
        let (events_tx, events_rx) = mpsc::channel();
        let wake_pending = Arc::new(AtomicBool::new(false));
        let waker: Waker = {
            let ctx = ctx.clone();
            let pending = Arc::clone(&wake_pending);
            // Called by the worker after every event: coalesce into one delayed repaint.
            Arc::new(move || {
                if !pending.swap(true, Ordering::AcqRel) {
                    ctx.request_repaint_after(REPAINT_INTERVAL);
                }
            })
        };
        Self {
            events_tx,
            events_rx,
            waker,
            wake_pending,
            ctx: ctx.clone(),
            job: None,
            retired: Vec::new(),
            next_job: 0,
            job_id: None,
            worker: WorkerState::Idle,
            progress: Progress::default(),
            convergence: Convergence::default(),
            snapshot: None,
            result: None,
            stale_events: 0,
            side: None,
            rate: 0,
            hold_start: false,
        }
    }

    /// Replace any current run by a new one on `data`; returns the status line's message
    /// (an error when the worker thread could not start).
    pub fn start(
        &mut self,
        data: Arc<Dataset>,
        spec: ModelSpec,
        fit: FitOptions,
        side: Arc<SideInfo>,
    ) -> Status {
        self.retire();
        self.clear();
        let id = JobId(self.next_job);
        self.next_job += 1;
        let label = format!("{} k = {}", spec.kind.label(), spec.k);
        self.side = Some(Arc::clone(&side));
        // The pipeline's steered form: its fit stage on a thread of its own (the scoring
        // stages run later, on the user's protocol: evaluation.rs). One fit on every core;
        // the bits are those of one thread (linalg::parallel).
        let mut trial = Trial::new(data, spec, fit);
        trial.side = Side::Shared(side);
        trial.threads = linalg::available_threads();
        trial.id = id;
        let held = std::mem::take(&mut self.hold_start);
        match trial.spawn(held, self.events_tx.clone(), Arc::clone(&self.waker)) {
            Ok(handle) => {
                if self.rate > 0 {
                    handle.send(Command::Throttle(self.rate));
                }
                self.job = Some(handle);
                self.job_id = Some(id);
                self.worker = if held {
                    WorkerState::Paused
                } else {
                    WorkerState::Running
                };
                self.progress.max_iter = fit.max_iter;
                Status::info(format!("Running {label} (Space pauses, Esc stops)"))
            }
            Err(e) => {
                self.worker = WorkerState::Failed;
                Status::error(e.to_string())
            }
        }
    }

    /// Pause a running job; the status message when it did.
    pub fn pause(&mut self) -> Option<Status> {
        let job = self
            .job
            .as_ref()
            .filter(|_| self.worker == WorkerState::Running)?;
        job.send(Command::Pause);
        self.worker = WorkerState::Paused;
        Some(Status::info("Paused (Space resumes)"))
    }

    /// Resume a paused job; the status message when it did.
    pub fn resume(&mut self) -> Option<Status> {
        let job = self
            .job
            .as_ref()
            .filter(|_| self.worker == WorkerState::Paused)?;
        job.send(Command::Resume);
        self.worker = WorkerState::Running;
        Some(Status::info("Running"))
    }

    /// One more iteration of a running or paused job, which then holds (shown as paused);
    /// the status message when there was a job to step.
    pub fn step(&mut self) -> Option<Status> {
        let job = self.job.as_ref().filter(|_| self.worker.is_active())?;
        job.send(Command::Step);
        self.worker = WorkerState::Paused;
        Some(Status::info(
            "One iteration (Step for the next, Space resumes)",
        ))
    }

    /// Run at most `rate` iterations per second from now on (0: full speed), this run and
    /// the next ones.
    pub fn set_rate(&mut self, rate: u32) {
        self.rate = rate;
        if let Some(job) = &self.job {
            job.send(Command::Throttle(rate));
        }
    }

    /// Ask a running or paused job to stop; the worker answers with `Cancelled`, which sets
    /// the state. The status message when there was a job to stop.
    pub fn stop(&mut self) -> Option<Status> {
        let job = self.job.as_ref().filter(|_| self.worker.is_active())?;
        job.send(Command::Cancel);
        Some(Status::info("Stopping…"))
    }

    /// Cancel the current job without waiting: its thread winds down in the background and
    /// its late events are counted as stale.
    pub fn retire(&mut self) {
        if let Some(job) = self.job.take() {
            job.send(Command::Cancel);
            self.retired.push(job);
        }
        self.job_id = None;
    }

    /// Forget the previous run's live state (new run or new dataset).
    pub fn clear(&mut self) {
        self.progress = Progress::default();
        self.convergence = Convergence::default();
        self.snapshot = None;
        self.result = None;
    }

    /// Drop retired handles whose threads have ended (joining them is then instant).
    pub fn reap(&mut self) {
        self.retired.retain(|h| !h.is_finished());
    }

    /// Job threads still alive (current and retired).
    pub fn live_jobs(&self) -> usize {
        self.job
            .iter()
            .chain(&self.retired)
            .filter(|j| !j.is_finished())
            .count()
    }

    /// Whether a job thread is still alive (current or retired).
    pub fn has_threads(&self) -> bool {
        self.job.as_ref().is_some_and(|j| !j.is_finished())
            || self.retired.iter().any(|j| !j.is_finished())
    }

    /// Apply the current job's events until the channel is empty or `deadline` passes (then
    /// ask for another frame). `n_samples` is the loaded dataset's n: snapshots of another
    /// size are not shown.
    pub fn drain(&mut self, n_samples: Option<usize>, deadline: Instant) -> Drained {
        self.wake_pending.store(false, Ordering::Release);
        // Read before draining: a thread that ended has sent all its events by now.
        let thread_ended = self.job.as_ref().is_some_and(JobHandle::is_finished);
        let mut out = Drained::default();
        let mut count = 0u32;
        let mut drained = false;
        loop {
            // Check the clock every 64 events: cheap enough, and it bounds the frame.
            if count % 64 == 63 && Instant::now() >= deadline {
                self.ctx.request_repaint();
                break;
            }
            let Ok(event) = self.events_rx.try_recv() else {
                drained = true;
                break;
            };
            count += 1;
            if Some(event.job()) != self.job_id {
                self.stale_events += 1;
                continue;
            }
            self.apply(event, n_samples, &mut out);
        }
        if drained && thread_ended && self.worker.is_active() {
            // The job thread ended without a final event: it panicked.
            self.worker = WorkerState::Failed;
            out.status = Some(Status::error(format!(
                "The worker thread stopped unexpectedly after {} iterations (a bug: please report it)",
                self.progress.iteration
            )));
            self.retire();
        }
        out
    }

    /// Apply one event of the current job.
    fn apply(&mut self, event: Event, n_samples: Option<usize>, out: &mut Drained) {
        match event {
            Event::Started { max_iter, .. } => self.progress.max_iter = max_iter,
            Event::Progress {
                iteration,
                objective,
                elapsed,
                phase,
                ..
            } => {
                if let Some(phase) = phase {
                    self.convergence.mark_phase(iteration, phase);
                }
                self.progress.iteration = iteration;
                self.progress.objective = objective.total;
                self.progress.elapsed = elapsed;
                self.convergence.total.push(iteration, objective.total);
                for t in &objective.terms {
                    self.convergence
                        .terms
                        .entry(t.name.clone())
                        .or_default()
                        .push(iteration, t.value);
                }
            }
            Event::Snapshot { snapshot, .. } => {
                let fits = snapshot.projection.ncols() >= 2
                    && n_samples == Some(snapshot.projection.nrows());
                if fits {
                    self.snapshot = Some(snapshot);
                    out.snapshot_changed = true;
                }
            }
            Event::Finished { result, .. } => {
                let iterations = result.record.iterations();
                if !result.record.phases.is_empty() {
                    self.convergence.set_phases(&result.record.phases);
                }
                self.progress.iteration = iterations;
                self.progress.elapsed = result.record.seconds;
                if let Some(snapshot) = result.snapshot()
                    && snapshot.projection.ncols() >= 2
                    && n_samples == Some(snapshot.projection.nrows())
                {
                    self.snapshot = Some(Arc::new(snapshot));
                    out.snapshot_changed = true;
                }
                self.worker = WorkerState::Finished(result.stop);
                let how = match result.stop {
                    StopReason::Converged => "converged",
                    StopReason::MaxIter => "reached the iteration cap",
                    StopReason::Cancelled => "stopped",
                };
                out.status = Some(Status::info(format!(
                    "Finished: {} k = {} {how} after {iterations} iterations in {:.2} s, objective {}",
                    result.spec.kind.label(),
                    result.spec.k,
                    result.record.seconds,
                    super::format::format_value(
                        result.record.objective.last().copied().unwrap_or(f64::NAN)
                    ),
                )));
                self.result = Some(result);
                out.finished = true;
                self.retire();
            }
            Event::Failed {
                error, iterations, ..
            } => {
                self.worker = WorkerState::Failed;
                out.status = Some(Status::error(format!(
                    "Run failed after {iterations} iterations: {error}"
                )));
                self.retire();
            }
            Event::Cancelled {
                iterations, result, ..
            } => {
                if !result.record.phases.is_empty() {
                    self.convergence.set_phases(&result.record.phases);
                }
                self.progress.iteration = iterations;
                self.progress.elapsed = result.record.seconds;
                if let Some(snapshot) = result.snapshot()
                    && snapshot.projection.ncols() >= 2
                    && n_samples == Some(snapshot.projection.nrows())
                {
                    self.snapshot = Some(Arc::new(snapshot));
                    out.snapshot_changed = true;
                }
                self.worker = WorkerState::Cancelled;
                out.status = Some(Status::info(format!(
                    "Stopped at iteration {iterations}: kept in the history and scored"
                )));
                self.result = Some(result);
                out.finished = true;
                self.retire();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    fn data() -> Arc<Dataset> {
        let x = Array2::from_shape_fn((6, 12), |(f, i)| 0.1 + ((f * 7 + i * 3) % 5) as f64);
        Arc::new(Dataset::from_parts(x, None, Vec::new(), "test"))
    }

    /// Drain until `done` holds or 20 s pass.
    fn drain_until(run: &mut RunController, n: usize, done: impl Fn(&RunController) -> bool) {
        let t0 = Instant::now();
        while !done(run) && t0.elapsed() < Duration::from_secs(20) {
            run.drain(Some(n), Instant::now() + Duration::from_millis(5));
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(done(run), "timed out: worker {:?}", run.worker);
    }

    /// A run replaced while running: only the second job's events are applied (its history
    /// runs 1, 2, 3, … without restarting), the first job's late events are counted as stale,
    /// and the second run finishes with a result and a snapshot.
    #[test]
    fn a_replaced_runs_late_events_are_ignored() {
        let ctx = egui::Context::default();
        let mut run = RunController::new(&ctx);
        let data = data();
        let n = data.n();
        let spec = ModelSpec::new(crate::engine::models::nmf::KIND, 2, 0);
        let long = FitOptions {
            max_iter: 1_000_000,
            tol: 0.0,
        };
        let side = Arc::new(SideInfo::default());
        let first = run.start(Arc::clone(&data), spec.clone(), long, Arc::clone(&side));
        assert!(!first.is_error, "{first:?}");
        drain_until(&mut run, n, |r| r.progress.iteration > 0);
        let first_id = run.job_id;

        let short = FitOptions {
            max_iter: 30,
            tol: 0.0,
        };
        run.start(data, spec, short, side);
        assert_ne!(run.job_id, first_id);
        drain_until(&mut run, n, |r| {
            matches!(r.worker, WorkerState::Finished(_)) && r.stale_events > 0
        });
        assert!(run.result.is_some() && run.snapshot.is_some());
        assert_eq!(run.convergence.total.len(), 30);
        for (t, p) in run.convergence.total.linear.iter().enumerate() {
            assert_eq!(p.x, (t + 1) as f64, "history mixes runs at position {t}");
        }
        assert_eq!(run.job_id, None, "a finished job is retired");
    }
}
