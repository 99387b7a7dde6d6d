//! The background worker: fits a model on its own named thread and streams [`Event`]s.
//!
//! Front ends talk to a running job only through [`Command`] (pause, resume, step, throttle,
//! cancel) and the
//! events, each tagged with its [`JobId`] so late events of a replaced run can be ignored.
//! Snapshots (H and its aligned PCA-2D, computed here, never on the UI thread) are throttled to
//! at most 20 per second; progress is sent every iteration (throttled for [`Job::headless`]).
//! Dropping a [`JobHandle`] cancels the job and joins its thread. Cancellation is checked between iterations.

use crate::engine::constraints::SideInfo;
use crate::engine::data::Dataset;
use crate::engine::jobs::experiment::{self, FitOptions, FitRecord, StopReason};
use crate::engine::linalg::projection::Projector;
use crate::engine::models::{self, Export, Interrupt, ModelSpec, Objective, Outputs, Phase};
use ndarray::Array2;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Identifies one run; events of other runs are ignored by whoever tracks the current id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobId(pub u64);

/// A control message to a running job. Commands are read after each iteration's progress
/// and snapshot are sent, so a paused job holds the state the front end last saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    Pause,
    Resume,
    /// Run one more iteration, then hold as if paused (from a paused or a running job).
    Step,
    /// Run at most this many iterations per second (0: as fast as possible), so a teacher
    /// can follow the motion.
    Throttle(u32),
    Cancel,
}

/// The job's control state, changed by [`Command`]s between iterations.
#[derive(Debug)]
struct Control {
    /// Iterations per second at most (0: unthrottled).
    rate: u32,
    /// A Step was asked for: hold after the next iteration.
    step: bool,
    /// When the last iteration's callback ended (the throttle's clock).
    last_tick: Instant,
    /// Time spent held or throttled (excluded from the reported elapsed time).
    waited: Duration,
}

impl Control {
    fn new() -> Self {
        Self {
            rate: 0,
            step: false,
            last_tick: Instant::now(),
            waited: Duration::ZERO,
        }
    }

    /// Apply one command; Pause blocks until Resume, Step or Cancel.
    fn apply(&mut self, cmd: Command, commands: &Receiver<Command>) -> ControlFlow<()> {
        match cmd {
            Command::Cancel => ControlFlow::Break(()),
            Command::Resume => ControlFlow::Continue(()),
            Command::Pause => self.hold(commands),
            Command::Step => {
                self.step = true;
                ControlFlow::Continue(())
            }
            Command::Throttle(r) => {
                self.rate = r;
                ControlFlow::Continue(())
            }
        }
    }

    /// Block (no busy wait) until Resume, Step or Cancel.
    fn hold(&mut self, commands: &Receiver<Command>) -> ControlFlow<()> {
        let t0 = Instant::now();
        let out = loop {
            match commands.recv() {
                Ok(Command::Resume) => break ControlFlow::Continue(()),
                Ok(Command::Step) => {
                    self.step = true;
                    break ControlFlow::Continue(());
                }
                Ok(Command::Pause) => {}
                Ok(Command::Throttle(r)) => self.rate = r,
                Ok(Command::Cancel) | Err(_) => break ControlFlow::Break(()),
            }
        };
        self.waited += t0.elapsed();
        out
    }

    /// After an iteration's events: apply the pending commands, hold if the last command
    /// was a Step, and wait out the throttle (still answering commands).
    fn between_iterations(&mut self, commands: &Receiver<Command>) -> ControlFlow<()> {
        let stepped = std::mem::take(&mut self.step);
        loop {
            match commands.try_recv() {
                Ok(cmd) => self.apply(cmd, commands)?,
                Err(TryRecvError::Disconnected) => return ControlFlow::Break(()),
                Err(TryRecvError::Empty) => break,
            }
        }
        if stepped && !self.step {
            self.hold(commands)?;
        }
        if self.rate > 0 {
            let until = self.last_tick + Duration::from_secs_f64(1.0 / f64::from(self.rate));
            let t0 = Instant::now();
            while let Some(left) = until.checked_duration_since(Instant::now())
                && !left.is_zero()
                && self.rate > 0
            {
                match commands.recv_timeout(left) {
                    Ok(cmd) => self.apply(cmd, commands)?,
                    Err(mpsc::RecvTimeoutError::Timeout) => break,
                    Err(mpsc::RecvTimeoutError::Disconnected) => return ControlFlow::Break(()),
                }
            }
            self.waited += t0.elapsed();
        }
        self.last_tick = Instant::now();
        ControlFlow::Continue(())
    }
}

/// Everything a job needs; cheap to clone (data and side information are shared).
#[derive(Clone, Debug)]
pub struct Job {
    pub id: JobId,
    pub data: Arc<Dataset>,
    pub spec: ModelSpec,
    pub side: Arc<SideInfo>,
    pub fit: FitOptions,
    /// Minimum time between snapshots (default 50 ms: ≤ 20 per second); `None`: no snapshots
    /// (the CLI, which draws nothing, saves the projections).
    pub snapshot_interval: Option<Duration>,
    /// Minimum time between progress events (default zero: every iteration, as the GUI's
    /// convergence plot wants). A front end that only shows a progress bar sets more, so that
    /// a fast fit is not slowed by waking its reader every iteration.
    pub progress_interval: Duration,
    /// Raised with every Cancel sent through the job's handle, so a model can stop within a
    /// long iteration ([`Interrupt`]). A clone of the job shares the flag (the handle keeps
    /// one to raise it), so a clone of a cancelled job starts cancelled: build a new job to rerun.
    pub interrupt: Interrupt,
    /// Hold after the first iteration, as if stepped to it (the teaching controls' "Reset to
    /// start"): set here rather than sent as a Pause, which could arrive iterations late.
    pub start_held: bool,
    /// Threads the fit's products may use (1 by default: sweeps and `Scan k` run fits side by
    /// side; the app's and `run`'s single fit set all cores, [`Self::with_threads`]). The
    /// result is the same bits for any count (`linalg::parallel`).
    pub threads: usize,
}

impl Job {
    pub fn new(id: JobId, data: Arc<Dataset>, spec: ModelSpec, fit: FitOptions) -> Self {
        Self {
            id,
            data,
            spec,
            side: Arc::new(SideInfo::default()),
            fit,
            snapshot_interval: Some(Duration::from_millis(50)),
            progress_interval: Duration::ZERO,
            interrupt: Interrupt::new(),
            start_held: false,
            threads: 1,
        }
    }

    /// The same job with its products on `n` threads (at least 1).
    pub fn with_threads(mut self, n: usize) -> Self {
        self.threads = n.max(1);
        self
    }

    /// The same job with this side information.
    pub fn with_side(mut self, side: Arc<SideInfo>) -> Self {
        self.side = side;
        self
    }

    /// The same job for a front end that draws nothing: no snapshots (nor a final
    /// projection), and at most ten progress events per second (the record of every
    /// iteration comes with the result).
    pub fn headless(mut self) -> Self {
        self.snapshot_interval = None;
        self.progress_interval = Duration::from_millis(100);
        self
    }
}

/// H at some iteration and its 2-D projection (n×2, aligned to the previous snapshot).
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub iteration: usize,
    pub h: Array2<f64>,
    pub projection: Array2<f64>,
    /// W at this iteration (m×k), when the model has one: the basis gallery draws its
    /// columns (O(mk) to copy, against the O(mnk) of an iteration).
    pub w: Option<Array2<f64>>,
    /// What the model shows besides H and W at this iteration ([`models::Model::outputs`]; the
    /// subspace projected to 2-D like H, the graph and the predictions shared by `Arc`).
    pub outputs: Outputs,
}

/// `outputs` with its subspace (s×n) replaced by its 2-D projection (n×2, aligned to the
/// previous one by `projector`), or dropped when `keep` is false or the projection fails.
fn project_subspace(mut outputs: Outputs, projector: &mut Projector, keep: bool) -> Outputs {
    outputs.subspace = outputs
        .subspace
        .filter(|_| keep)
        .and_then(|(name, y)| projector.project(y.view()).ok().map(|p| (name, p)));
    outputs
}

/// The result of a finished (converged, capped or cancelled-with-result) run.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub spec: ModelSpec,
    pub fit: FitOptions,
    pub record: FitRecord,
    pub stop: StopReason,
    /// H after post-processing (k×n).
    pub h: Array2<f64>,
    /// W after post-processing (m×k), when the model has one.
    pub w: Option<Array2<f64>>,
    /// Final projection of H.
    pub projection: Option<Array2<f64>>,
    /// What the model shows after the fit ([`models::Model::outputs`]; the subspace projected to 2-D
    /// as in a [`Snapshot`], and only when the job projects).
    pub outputs: Outputs,
    /// The model's notes on the fit ([`crate::engine::models::Model::notes`]).
    pub notes: Vec<String>,
    /// The model's arrays beyond W and H ([`models::Model::exports`]), for `run --out`.
    pub exports: Vec<Export>,
}

impl RunResult {
    pub fn converged(&self) -> bool {
        self.stop == StopReason::Converged
    }

    /// The final state as a snapshot (iteration = iterations run), when it was projected.
    pub fn snapshot(&self) -> Option<Snapshot> {
        Some(Snapshot {
            iteration: self.record.iterations(),
            h: self.h.clone(),
            projection: self.projection.clone()?,
            w: self.w.clone(),
            outputs: self.outputs.clone(),
        })
    }
}

/// What a job reports. Every variant carries the job id.
#[derive(Clone, Debug)]
pub enum Event {
    Started {
        job: JobId,
        max_iter: usize,
    },
    Progress {
        job: JobId,
        iteration: usize,
        objective: Objective,
        /// Seconds since the fit started (pauses excluded).
        elapsed: f64,
        /// The model's stage at this iteration ([`models::Model::phase`]; multi-stage models only).
        phase: Option<Phase>,
    },
    Snapshot {
        job: JobId,
        snapshot: Arc<Snapshot>,
    },
    Finished {
        job: JobId,
        result: Box<RunResult>,
    },
    Failed {
        job: JobId,
        error: String,
        /// Iterations completed before the failure.
        iterations: usize,
        /// The model could not be built (bad parameters, missing side information, unusable
        /// data): the user's input, not the fit, is at fault (the CLI exits with 2).
        at_build: bool,
    },
    /// Stopped by the user; `result` is the run as it was when it stopped (post-processed
    /// like a finished one), so it can be kept and scored.
    Cancelled {
        job: JobId,
        iterations: usize,
        result: Box<RunResult>,
    },
}

impl Event {
    /// The job this event belongs to.
    pub fn job(&self) -> JobId {
        match self {
            Event::Started { job, .. }
            | Event::Progress { job, .. }
            | Event::Snapshot { job, .. }
            | Event::Finished { job, .. }
            | Event::Failed { job, .. }
            | Event::Cancelled { job, .. } => *job,
        }
    }

    /// Whether this is the last event of its job.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            Event::Finished { .. } | Event::Failed { .. } | Event::Cancelled { .. }
        )
    }
}

/// Called after events are sent (the GUI passes `ctx.request_repaint`).
pub type Waker = Arc<dyn Fn() + Send + Sync>;

/// A running job: send it commands; dropping it cancels and joins.
pub struct JobHandle {
    id: JobId,
    commands: Sender<Command>,
    interrupt: Interrupt,
    thread: Option<JoinHandle<()>>,
}

impl JobHandle {
    /// Start `job` on a new thread named `nmf-job-<id>`, sending its events to `events`.
    pub fn spawn(job: Job, events: Sender<Event>, waker: Waker) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel();
        let id = job.id;
        let interrupt = job.interrupt.clone();
        let thread = std::thread::Builder::new()
            .name(format!("nmf-job-{}", id.0))
            .spawn(move || {
                run_job(job, Some(&rx), &mut |e| {
                    let ok = events.send(e).is_ok();
                    waker();
                    ok
                });
            })?;
        Ok(Self {
            id,
            commands: tx,
            interrupt,
            thread: Some(thread),
        })
    }

    pub fn id(&self) -> JobId {
        self.id
    }

    /// Send a command; ignored if the job already ended. A Cancel also raises the job's
    /// [`Interrupt`], so a model in a long iteration stops within it.
    pub fn send(&self, cmd: Command) {
        if cmd == Command::Cancel {
            self.interrupt.raise();
        }
        let _ = self.commands.send(cmd);
    }

    /// Whether the thread has ended.
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }
}

impl Drop for JobHandle {
    fn drop(&mut self) {
        self.send(Command::Cancel);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Run `job` on the calling thread, handing each event to `on_event` as [`JobHandle`]'s thread
/// sends it (returning false stops the job, as a closed channel does). For front ends that
/// already run on a worker thread of their own (`sweep` runs fits in parallel with rayon).
pub fn run_blocking(job: Job, mut on_event: impl FnMut(Event) -> bool) {
    run_job(job, None, &mut on_event);
}

/// The job body, with a panic inside a model (a bug) turned into [`Event::Failed`] with its
/// message instead of a silently dead thread: the front end keeps running and says what
/// happened, and nothing of the user's (constraints, other runs) is touched.
fn run_job(job: Job, commands: Option<&Receiver<Command>>, send: &mut dyn FnMut(Event) -> bool) {
    let id = job.id;
    let label = job.spec.kind.label();
    let iterations = std::cell::Cell::new(0usize);
    // The fit's thread count, for this thread only (restored for run_blocking's caller).
    let _threads = crate::engine::linalg::ThreadsGuard::new(job.threads);
    // Whether the job already sent its final event (a panic after it changes nothing).
    let ended = std::cell::Cell::new(false);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut tracked = |e: Event| {
            if e.is_terminal() {
                ended.set(true);
            }
            send(e)
        };
        run_job_inner(job, commands, &mut tracked, &iterations);
    }));
    if let Err(payload) = outcome
        && !ended.get()
    {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_owned());
        send(Event::Failed {
            job: id,
            error: format!(
                "{label} stopped with an internal error after {} iterations: {what} (a bug: \
                 please report it with the data and parameters)",
                iterations.get()
            ),
            iterations: iterations.get(),
            at_build: false,
        });
    }
}

/// Build, iterate with pause/cancel, stream progress and snapshots. `iterations` follows the
/// fit even when progress events are throttled (for the panic message of [`run_job`]).
fn run_job_inner(
    job: Job,
    commands: Option<&Receiver<Command>>,
    send: &mut dyn FnMut(Event) -> bool,
    iterations: &std::cell::Cell<usize>,
) {
    let id = job.id;
    if !send(Event::Started {
        job: id,
        max_iter: job.fit.max_iter,
    }) {
        return;
    }
    let mut model = match models::build(&job.spec, Arc::clone(&job.data), &job.side) {
        Ok(m) => m,
        Err(e) => {
            send(Event::Failed {
                job: id,
                error: e.to_string(),
                iterations: 0,
                at_build: true,
            });
            return;
        }
    };
    model.set_interrupt(job.interrupt.clone());
    let mut stream = Stream::new(&job, send);
    let outcome = experiment::fit(model.as_mut(), &job.fit, |t, obj, m| {
        iterations.set(t);
        if !stream.progress(t, obj, m) || !stream.snapshot(t, m) {
            stream.receiver_gone = true;
            return ControlFlow::Break(());
        }
        // Commands (Pause blocks until Resume, Step or Cancel; a Step holds after one more
        // iteration; the throttle waits here), after the events so a held job shows its state.
        match commands {
            Some(commands) => stream.control.between_iterations(commands),
            None => ControlFlow::Continue(()),
        }
    });
    if stream.receiver_gone {
        return;
    }
    let event = match outcome {
        Ok(out) => stream.finished(model.as_ref(), out),
        Err(e) => Event::Failed {
            job: id,
            error: e.error.to_string(),
            iterations: e.record.iterations(),
            at_build: false,
        },
    };
    (stream.send)(event);
}

/// A running fit's events: progress at the job's interval, snapshots (the projection of H
/// and of the model's subspace) at its snapshot interval, and the pause/step/throttle
/// control between iterations.
struct Stream<'a> {
    job: &'a Job,
    send: &'a mut dyn FnMut(Event) -> bool,
    projector: Projector,
    sub_projector: Projector,
    last_snapshot: Option<Instant>,
    last_progress: Option<Instant>,
    control: Control,
    started: Instant,
    receiver_gone: bool,
}

impl<'a> Stream<'a> {
    fn new(job: &'a Job, send: &'a mut dyn FnMut(Event) -> bool) -> Self {
        let mut control = Control::new();
        control.step = job.start_held;
        Self {
            job,
            send,
            projector: Projector::new(),
            sub_projector: Projector::new(),
            last_snapshot: None,
            last_progress: None,
            control,
            started: Instant::now(),
            receiver_gone: false,
        }
    }

    /// Send a progress event when one is due; false when the receiver is gone.
    fn progress(&mut self, t: usize, obj: &Objective, m: &dyn models::Model) -> bool {
        let every = self.job.progress_interval;
        if !(every.is_zero() || self.last_progress.is_none_or(|p| p.elapsed() >= every)) {
            return true;
        }
        self.last_progress = Some(Instant::now());
        let elapsed = self
            .started
            .elapsed()
            .saturating_sub(self.control.waited)
            .as_secs_f64();
        (self.send)(Event::Progress {
            job: self.job.id,
            iteration: t,
            objective: obj.clone(),
            elapsed,
            phase: m.phase(),
        })
    }

    /// Send a snapshot when one is due; false when the receiver is gone. A stepped iteration
    /// always sends its snapshot: the scatter shows every step.
    fn snapshot(&mut self, t: usize, m: &dyn models::Model) -> bool {
        let due = self.job.snapshot_interval.is_some_and(|every| {
            self.control.step || self.last_snapshot.is_none_or(|s| s.elapsed() >= every)
        });
        if !due {
            return true;
        }
        self.last_snapshot = Some(Instant::now());
        let h = m.h().to_owned();
        let Ok(projection) = self.projector.project(h.view()) else {
            return true;
        };
        let snap = Snapshot {
            iteration: t,
            h,
            projection,
            w: m.w().map(|w| w.to_owned()),
            outputs: project_subspace(m.outputs(), &mut self.sub_projector, true),
        };
        (self.send)(Event::Snapshot {
            job: self.job.id,
            snapshot: Arc::new(snap),
        })
    }

    /// The event for a fit that ran to its end (finished, or cancelled with its result).
    fn finished(&mut self, model: &dyn models::Model, out: experiment::FitOutcome) -> Event {
        let job = self.job;
        let h = model.h().to_owned();
        let projection = job
            .snapshot_interval
            .and_then(|_| self.projector.project(h.view()).ok());
        let iterations = out.record.iterations();
        let stop = out.stop;
        // Fit time, as the progress events report it: time held (paused, stepping,
        // throttled) is not fitting.
        let mut record = out.record;
        record.seconds = (record.seconds - self.control.waited.as_secs_f64()).max(0.0);
        let result = Box::new(RunResult {
            spec: job.spec.clone(),
            fit: job.fit,
            record,
            stop,
            w: model.w().map(|w| w.to_owned()),
            h,
            projection,
            notes: out.notes,
            exports: model.exports(),
            outputs: project_subspace(
                model.outputs(),
                &mut self.sub_projector,
                job.snapshot_interval.is_some(),
            ),
        });
        if stop == StopReason::Cancelled {
            Event::Cancelled {
                job: job.id,
                iterations,
                result,
            }
        } else {
            Event::Finished {
                job: job.id,
                result,
            }
        }
    }
}

/// Test helpers shared by the models' tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Command, Event, Job, JobHandle};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// Spawn `job` (which would run for a long time), wait for its fifth iteration, cancel it,
    /// and assert that the worker ends with `Cancelled` within `limit` of the request (the
    /// cancel path every model's tests check, docs/models.md §10.4).
    pub(crate) fn assert_cancels_within(job: Job, limit: Duration) {
        let (tx, rx) = std::sync::mpsc::channel();
        let h = JobHandle::spawn(job, tx, Arc::new(|| {})).expect("spawn the job");
        let deadline = Instant::now() + Duration::from_secs(20);
        while !matches!(
            rx.recv_timeout(Duration::from_secs(20)),
            Ok(Event::Progress { iteration: 5.., .. })
        ) {
            assert!(Instant::now() < deadline, "no progress");
        }
        h.send(Command::Cancel);
        let t0 = Instant::now();
        loop {
            let ev = rx
                .recv_timeout(Duration::from_secs(5))
                .expect("terminal event");
            if ev.is_terminal() {
                assert!(matches!(ev, Event::Cancelled { .. }), "{ev:?}");
                break;
            }
        }
        assert!(t0.elapsed() < limit, "cancel took {:?}", t0.elapsed());
    }
}
