//! The egui desktop app (feature `gui`). Draws only; all math runs in the engine's worker.
//!
//! `logic` drains worker and loader events under a small time budget and never blocks; `ui`
//! draws the panels, which push [`UiCommand`]s that are applied at the end of the frame.
//! Persisted [`Settings`] live apart from the runtime [`Session`].

use eframe::egui;

mod command;
mod constraint_actions;
mod evaluation;
mod panels;
mod state;
mod textures;

pub use command::{FileAction, Resolution, UiCommand};
pub use evaluation::{EvalInput, evaluate, history_csv};
pub use panels::results::metric_lines;
pub use state::{
    ColorBy, Convergence, Evaluation, HistoryRow, KeptCache, PALETTE, Pending, Progress,
    ScatterCache, ScatterGroup, Series, Session, Settings, Status, Tool, WorkerState,
};

use crate::engine::constraints::{Generated, ProtocolOptions, Store};
use crate::engine::data::Fingerprint;
use crate::engine::data::samples::{self, Sample};
use crate::engine::data::{self, Dataset};
use crate::engine::worker::{Command, Event, Job, JobHandle, JobId, Snapshot, Waker};
use command::Commands;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

/// Window title and app id.
pub const APP_NAME: &str = "NMF Playground";

/// How long `logic` may spend draining events per frame.
const DRAIN_BUDGET: Duration = Duration::from_millis(5);

/// Worker-driven repaints are coalesced to at most one per this interval (~60 fps).
const REPAINT_INTERVAL: Duration = Duration::from_millis(16);

/// Open the desktop app, on `path` (a dataset file or folder) or on the bundled sample.
///
/// Fails with a message pointing to the headless commands when there is no display.
pub fn run(path: Option<PathBuf>) -> anyhow::Result<()> {
    #[cfg(target_os = "linux")]
    if std::env::var_os("DISPLAY").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none() {
        anyhow::bail!(
            "no display found (DISPLAY and WAYLAND_DISPLAY are unset), so the window cannot open.\n\
             Use the headless commands instead, e.g. `nmf-playground run --help`"
        );
    }
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title(APP_NAME)
            .with_app_id("nmf-playground")
            .with_inner_size([1280.0, 800.0])
            .with_min_inner_size([800.0, 500.0])
            .with_drag_and_drop(true),
        persist_window: true,
        ..eframe::NativeOptions::default()
    };
    eframe::run_native(
        APP_NAME,
        options,
        Box::new(move |cc| Ok(Box::new(App::with_path(cc, path)))),
    )
    .map_err(|e| anyhow::anyhow!("could not open the window: {e}"))
}

/// Where a dataset comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataSource {
    Sample(Sample),
    Path(PathBuf),
}

impl DataSource {
    fn describe(&self) -> String {
        match self {
            DataSource::Sample(s) => format!("sample {}", s.name()),
            DataSource::Path(p) => p.display().to_string(),
        }
    }
}

/// Results of background helpers (loader, file dialog), delivered on a channel.
enum Background {
    Loaded {
        ticket: u64,
        source: DataSource,
        result: Result<Box<Dataset>, String>,
        seconds: f64,
    },
    Picked(Option<PathBuf>),
    /// A path chosen for a constraint file action (None: dialog cancelled).
    ConstraintsPicked(FileAction, Option<PathBuf>),
    /// Triplets generated on a background thread for the dataset `fingerprint`.
    Generated {
        fingerprint: Fingerprint,
        source: &'static str,
        seed: u64,
        result: Result<Generated, String>,
    },
    /// The evaluation of a finished run (tagged inside with the run's history id).
    Evaluated(Box<state::Evaluation>),
}

/// Transient UI state: not persisted, not part of the session's data.
#[derive(Default)]
pub(crate) struct UiFlags {
    /// Text of the typed-path field.
    pub path_input: String,
    pub show_model_help: bool,
    pub show_about: bool,
    /// Text of the constraint file path field.
    pub constraints_path_input: String,
    /// The "Generate triplets" window is open.
    pub show_generate: bool,
    /// Protocol options of the "Generate triplets" window.
    pub generate: ProtocolOptions,
    /// Generate from the ground truth (else from the painted labels).
    pub generate_from_truth: bool,
    /// Percentage of samples whose labels "Reveal" paints.
    pub reveal_percent: f64,
    pub reveal_seed: u64,
}

/// The desktop app.
pub struct App {
    settings: Settings,
    session: Session,
    flags: UiFlags,
    commands: Commands,
    events_tx: Sender<Event>,
    events_rx: Receiver<Event>,
    bg_tx: Sender<Background>,
    bg_rx: Receiver<Background>,
    waker: Waker,
    wake_pending: Arc<AtomicBool>,
    load_ticket: u64,
    dialog_open: bool,
    /// The user agreed to close with unsaved constraints (or saved them).
    allow_close: bool,
    /// Save was chosen in the unsaved-constraints question but needs a path first.
    save_then_resume: bool,
    frame_start: Option<Instant>,
    ctx: egui::Context,
}

impl App {
    /// The app for eframe: settings from storage, opening the bundled sample.
    pub fn new(cc: &eframe::CreationContext<'_>) -> Self {
        Self::with_path(cc, None)
    }

    /// The app for eframe, opening `path` if given.
    pub fn with_path(cc: &eframe::CreationContext<'_>, path: Option<PathBuf>) -> Self {
        let settings = cc
            .storage
            .and_then(|s| eframe::get_value::<Settings>(s, eframe::APP_KEY))
            .unwrap_or_default();
        Self::from_parts(&cc.egui_ctx, settings, path)
    }

    /// The app on a bare egui context with default settings (tests, embedding).
    pub fn new_for_test(ctx: &egui::Context) -> Self {
        Self::from_parts(ctx, Settings::default(), None)
    }

    fn from_parts(ctx: &egui::Context, settings: Settings, path: Option<PathBuf>) -> Self {
        let (events_tx, events_rx) = mpsc::channel();
        let (bg_tx, bg_rx) = mpsc::channel();
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
        ctx.set_theme(if settings.dark {
            egui::Theme::Dark
        } else {
            egui::Theme::Light
        });
        let mut app = Self {
            flags: UiFlags {
                path_input: settings
                    .last_path
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                generate: ProtocolOptions::default(),
                generate_from_truth: true,
                reveal_percent: 10.0,
                ..UiFlags::default()
            },
            settings,
            session: Session::default(),
            commands: Commands::default(),
            events_tx,
            events_rx,
            bg_tx,
            bg_rx,
            waker,
            wake_pending,
            load_ticket: 0,
            dialog_open: false,
            allow_close: false,
            save_then_resume: false,
            frame_start: None,
            ctx: ctx.clone(),
        };
        let source = match path {
            Some(p) => DataSource::Path(p),
            None => DataSource::Sample(
                Sample::ALL
                    .iter()
                    .copied()
                    .find(|s| *s == Sample::Glyphs)
                    .or_else(|| Sample::ALL.first().copied())
                    .unwrap_or(Sample::Glyphs),
            ),
        };
        app.start_load(source);
        app.session.set_status("Welcome: loading data…");
        app
    }

    /// Runtime state: dataset, worker state, histories, status (read-only).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Persisted settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Change settings (e.g. model parameters) as the panels would.
    pub fn settings_mut(&mut self) -> &mut Settings {
        &mut self.settings
    }

    /// Queue a command as if a panel had pushed it; applied at the end of the next frame.
    pub fn push_command(&mut self, cmd: UiCommand) {
        self.commands.push(cmd);
    }

    /// Replace the dataset directly (tests, embedding): cancels any run.
    pub fn set_dataset(&mut self, data: Dataset) {
        self.load_ticket += 1;
        self.session.loading = None;
        self.install_dataset(data, None);
    }

    // ----- background loading -------------------------------------------------------------

    fn start_load(&mut self, source: DataSource) {
        self.load_ticket += 1;
        let ticket = self.load_ticket;
        let opts = self.settings.load_options();
        let tx = self.bg_tx.clone();
        let ctx = self.ctx.clone();
        let what = source.describe();
        let job_source = source.clone();
        let spawned = std::thread::Builder::new()
            .name("nmf-loader".into())
            .spawn(move || {
                let t0 = Instant::now();
                let result = match &job_source {
                    DataSource::Sample(s) => samples::load_sample(*s, &opts)
                        .map_err(|e| format!("sample {}: {e}", s.name())),
                    DataSource::Path(p) => load_path(p, &opts),
                }
                .map(Box::new);
                let _ = tx.send(Background::Loaded {
                    ticket,
                    source: job_source,
                    result,
                    seconds: t0.elapsed().as_secs_f64(),
                });
                ctx.request_repaint();
            });
        match spawned {
            Ok(_) => {
                self.session.loading = Some(what.clone());
                self.session.set_status(format!("Loading {what}…"));
            }
            Err(e) => {
                self.session.loading = None;
                let msg = format!("{what}: could not start the loader thread: {e}");
                self.session.load_error = Some(msg.clone());
                self.session.set_error(msg);
            }
        }
    }

    fn install_dataset(&mut self, data: Dataset, source: Option<DataSource>) {
        self.session.retire_job();
        self.session.clear_run();
        self.session.worker = WorkerState::Idle;
        self.session.load_error = None;
        let msg = format!(
            "Loaded {}: {} samples × {} features{}",
            data.source,
            data.n(),
            data.m(),
            if data.n_classes() > 0 {
                format!(", {} classes", data.n_classes())
            } else {
                String::new()
            }
        );
        if let Some(DataSource::Path(p)) = &source {
            self.settings.last_path = Some(p.clone());
        }
        // Same raw content (e.g. reloaded with other preprocessing): keep the constraints.
        let keep = self
            .session
            .store
            .as_ref()
            .is_some_and(|st| st.fingerprint() == data.fingerprint);
        if !keep {
            // A new dataset: k = c, as in every clustering experiment of the papers
            // (docs/models.md §1); the user can change it afterwards.
            if data.n_classes() > 0 {
                self.settings.k = data.n_classes().min(data.m()).min(data.n());
            }
            self.session.store = Some(Store::new(data.fingerprint));
            self.session.constraints_path = None;
            self.session.constraints_rev += 1;
            self.session.paint_class = data.class_names.first().cloned().unwrap_or_default();
        }
        self.session.partial.clear();
        self.session.lasso.clear();
        self.session.hovered_triplet = None;
        self.session.kept = None;
        self.session.source = source;
        self.session.dataset = Some(Arc::new(data));
        self.session.set_status(msg);
    }

    fn open_dialog(&mut self, folder: bool) {
        if self.dialog_open {
            return;
        }
        let tx = self.bg_tx.clone();
        let ctx = self.ctx.clone();
        let spawned = std::thread::Builder::new()
            .name("nmf-file-dialog".into())
            .spawn(move || {
                let dialog = rfd::FileDialog::new().set_title(if folder {
                    "Open a folder of images"
                } else {
                    "Open a dataset"
                });
                let picked = if folder {
                    dialog.pick_folder()
                } else {
                    dialog
                        .add_filter("Datasets", &["csv", "npy", "mat"])
                        .add_filter("All files", &["*"])
                        .pick_file()
                };
                let _ = tx.send(Background::Picked(picked));
                ctx.request_repaint();
            });
        match spawned {
            Ok(_) => self.dialog_open = true,
            Err(e) => self
                .session
                .set_error(format!("could not open the file dialog: {e}")),
        }
    }

    // ----- draining events ----------------------------------------------------------------

    fn drain_background(&mut self) {
        while let Ok(msg) = self.bg_rx.try_recv() {
            match msg {
                Background::Loaded {
                    ticket,
                    source,
                    result,
                    seconds,
                } => {
                    if ticket != self.load_ticket {
                        continue; // a newer load replaced this one
                    }
                    self.session.loading = None;
                    match result {
                        Ok(data) => {
                            self.install_dataset(*data, Some(source));
                            let s = format!("{} in {seconds:.2} s", self.session.status.text);
                            self.session.set_status(s);
                        }
                        Err(e) => {
                            self.session.load_error = Some(e.clone());
                            self.session.set_error(e);
                        }
                    }
                }
                Background::Picked(path) => {
                    self.dialog_open = false;
                    match path {
                        Some(p) => {
                            self.flags.path_input = p.display().to_string();
                            self.request_load(DataSource::Path(p));
                        }
                        None => self.session.set_status("No file chosen"),
                    }
                }
                Background::ConstraintsPicked(action, path) => {
                    self.dialog_open = false;
                    match path {
                        Some(p) => {
                            self.flags.constraints_path_input = p.display().to_string();
                            self.constraint_file(action, p);
                        }
                        None => {
                            self.save_then_resume = false;
                            self.session.set_status("No file chosen");
                        }
                    }
                }
                Background::Generated {
                    fingerprint,
                    source,
                    seed,
                    result,
                } => {
                    self.session.generating = false;
                    self.generated(fingerprint, source, seed, result);
                }
                Background::Evaluated(ev) => self.evaluated(*ev),
            }
        }
    }

    /// Apply worker events until the channel is empty or the budget is spent.
    fn drain_events(&mut self, deadline: Instant) {
        self.wake_pending.store(false, Ordering::Release);
        // Read before draining: a thread that ended has sent all its events by now.
        let thread_ended = self
            .session
            .job
            .as_ref()
            .is_some_and(JobHandle::is_finished);
        let mut snapshot_dirty = false;
        let mut finished = false;
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
            if Some(event.job()) != self.session.job_id {
                self.session.stale_events += 1;
                continue;
            }
            finished |= matches!(event, Event::Finished { .. });
            snapshot_dirty |= self.apply_event(event);
        }
        if drained && thread_ended && self.session.worker.is_active() {
            // The job thread ended without a final event: it panicked.
            self.session.worker = WorkerState::Failed;
            self.session.set_error(format!(
                "The worker thread stopped unexpectedly after {} iterations (a bug: please report it)",
                self.session.progress.iteration
            ));
            self.session.retire_job();
        }
        if snapshot_dirty {
            self.session.rebuild_scatter();
        }
        if finished {
            self.run_finished();
        }
    }

    /// Apply one event of the current job; returns whether the snapshot changed.
    fn apply_event(&mut self, event: Event) -> bool {
        let s = &mut self.session;
        match event {
            Event::Started { max_iter, .. } => {
                s.progress.max_iter = max_iter;
                false
            }
            Event::Progress {
                iteration,
                objective,
                elapsed,
                ..
            } => {
                s.progress.iteration = iteration;
                s.progress.objective = objective.total;
                s.progress.elapsed = elapsed;
                s.convergence.total.push(iteration, objective.total);
                for t in &objective.terms {
                    match s.convergence.terms.get_mut(&t.name) {
                        Some(series) => series.push(iteration, t.value),
                        None => {
                            let mut series = Series::default();
                            series.push(iteration, t.value);
                            s.convergence.terms.insert(t.name.clone(), series);
                        }
                    }
                }
                false
            }
            Event::Snapshot { snapshot, .. } => {
                let fits = snapshot.projection.ncols() >= 2
                    && s.dataset
                        .as_ref()
                        .is_some_and(|d| d.n() == snapshot.projection.nrows());
                if fits {
                    s.snapshot = Some(snapshot);
                }
                fits
            }
            Event::Finished { result, .. } => {
                let iterations = result.record.iterations();
                s.progress.iteration = iterations;
                s.progress.elapsed = result.record.seconds;
                let mut changed = false;
                if let Some(projection) = &result.projection
                    && projection.ncols() >= 2
                    && s.dataset
                        .as_ref()
                        .is_some_and(|d| d.n() == projection.nrows())
                {
                    s.snapshot = Some(Arc::new(Snapshot {
                        iteration: iterations,
                        h: result.h.clone(),
                        projection: projection.clone(),
                    }));
                    changed = true;
                }
                s.worker = WorkerState::Finished(result.stop);
                let how = match result.stop {
                    crate::engine::experiment::StopReason::Converged => "converged",
                    crate::engine::experiment::StopReason::MaxIter => "reached the iteration cap",
                    crate::engine::experiment::StopReason::Cancelled => "stopped",
                };
                let msg = format!(
                    "Finished: {} k = {} {how} after {iterations} iterations in {:.2} s, objective {}",
                    result.spec.kind.label(),
                    result.spec.k,
                    result.record.seconds,
                    panels::model::format_value(
                        result.record.objective.last().copied().unwrap_or(f64::NAN)
                    ),
                );
                s.result = Some(result);
                s.set_status(msg);
                s.retire_job();
                changed
            }
            Event::Failed {
                error, iterations, ..
            } => {
                s.worker = WorkerState::Failed;
                s.set_error(format!("Run failed after {iterations} iterations: {error}"));
                s.retire_job();
                false
            }
            Event::Cancelled { iterations, .. } => {
                s.worker = WorkerState::Cancelled;
                s.set_status(format!("Cancelled after {iterations} iterations"));
                s.retire_job();
                false
            }
        }
    }

    // ----- commands -----------------------------------------------------------------------

    fn apply_commands(&mut self) {
        for cmd in self.commands.take() {
            match cmd {
                UiCommand::LoadPath(p) => {
                    if p.as_os_str().is_empty() {
                        let msg = "Type a file or folder path first".to_owned();
                        self.session.load_error = Some(msg.clone());
                        self.session.set_error(msg);
                    } else {
                        self.flags.path_input = p.display().to_string();
                        self.request_load(DataSource::Path(p));
                    }
                }
                UiCommand::LoadSample(s) => self.request_load(DataSource::Sample(s)),
                UiCommand::Reload => {
                    if let Some(source) = self.session.source.clone() {
                        self.start_load(source);
                    }
                }
                UiCommand::OpenFileDialog => self.open_dialog(false),
                UiCommand::OpenFolderDialog => self.open_dialog(true),
                UiCommand::Run => self.start_run(),
                UiCommand::Pause => {
                    if self.session.worker == WorkerState::Running
                        && let Some(job) = &self.session.job
                    {
                        job.send(Command::Pause);
                        self.session.worker = WorkerState::Paused;
                        self.session.set_status("Paused (Space resumes)");
                    }
                }
                UiCommand::Resume => {
                    if self.session.worker == WorkerState::Paused
                        && let Some(job) = &self.session.job
                    {
                        job.send(Command::Resume);
                        self.session.worker = WorkerState::Running;
                        self.session.set_status("Running");
                    }
                }
                UiCommand::Stop => {
                    if self.session.worker.is_active()
                        && let Some(job) = &self.session.job
                    {
                        // The worker answers with `Cancelled`; the state follows that event.
                        job.send(Command::Cancel);
                        self.session.set_status("Stopping…");
                    }
                }
                UiCommand::SetDark(dark) => {
                    self.settings.dark = dark;
                    self.ctx.set_theme(if dark {
                        egui::Theme::Dark
                    } else {
                        egui::Theme::Light
                    });
                }
                UiCommand::Quit => {
                    if self.session.has_unsaved_constraints() && !self.allow_close {
                        self.session.pending = Some(Pending::Quit);
                    } else {
                        self.ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                    }
                }
                UiCommand::ExportHistory(p) => self.export_history(&p),
                other => self.constraint_command(other),
            }
        }
    }

    fn start_run(&mut self) {
        let Some(data) = self.session.dataset.clone() else {
            self.session
                .set_error("No dataset loaded: open a file or a sample first");
            return;
        };
        let Some(spec) = self.settings.model_spec() else {
            self.session.set_error("No model available");
            return;
        };
        if let Err(e) = spec.validate(data.m(), data.n()) {
            self.session.set_error(format!("Cannot run: {e}"));
            return;
        }
        let side = self
            .session
            .store
            .as_ref()
            .map(Store::snapshot)
            .unwrap_or_default();
        if let Err(e) = spec.kind.check_side(&side) {
            self.session.set_error(format!("Cannot run: {e}"));
            return;
        }
        self.session.retire_job();
        self.session.clear_run();
        let id = JobId(self.session.next_job);
        self.session.next_job += 1;
        let fit = self.settings.fit_options();
        let label = format!("{} k = {}", spec.kind.label(), spec.k);
        self.session.run_side = Some(Arc::clone(&side));
        let mut job = Job::new(id, data, spec, fit);
        job.side = side;
        match JobHandle::spawn(job, self.events_tx.clone(), Arc::clone(&self.waker)) {
            Ok(handle) => {
                self.session.job = Some(handle);
                self.session.job_id = Some(id);
                self.session.worker = WorkerState::Running;
                self.session.progress.max_iter = fit.max_iter;
                self.session
                    .set_status(format!("Running {label} (Space pauses, Esc stops)"));
            }
            Err(e) => {
                self.session.worker = WorkerState::Failed;
                self.session
                    .set_error(format!("could not start the worker thread: {e}"));
            }
        }
    }

    // ----- input --------------------------------------------------------------------------

    fn handle_input(&mut self, ctx: &egui::Context) {
        if ctx.input(|i| i.viewport().close_requested())
            && self.session.has_unsaved_constraints()
            && !self.allow_close
        {
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            self.session.pending = Some(Pending::Quit);
        }
        if !ctx.text_edit_focused() && self.session.pending.is_none() {
            use egui::{Key, KeyboardShortcut, Modifiers};
            let shortcut = |m, k| KeyboardShortcut::new(m, k);
            let (redo, undo, save) = ctx.input_mut(|i| {
                // Shift+Z first: Ctrl+Z would also match it (extra Shift is ignored).
                let redo = i
                    .consume_shortcut(&shortcut(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z))
                    || i.consume_shortcut(&shortcut(Modifiers::COMMAND, Key::Y));
                let undo = i.consume_shortcut(&shortcut(Modifiers::COMMAND, Key::Z));
                let save = i.consume_shortcut(&shortcut(Modifiers::COMMAND, Key::S));
                (redo, undo, save)
            });
            if redo {
                self.commands.push(UiCommand::Redo);
            }
            if undo {
                self.commands.push(UiCommand::Undo);
            }
            if save {
                self.commands.push(UiCommand::SaveConstraints(None));
            }
            let active = self.session.worker.is_active();
            let building = !self.session.partial.is_empty() || !self.session.lasso.is_empty();
            let (space, esc) = ctx.input_mut(|i| {
                let space = i.consume_key(egui::Modifiers::NONE, egui::Key::Space);
                let esc =
                    (building || active) && i.consume_key(egui::Modifiers::NONE, egui::Key::Escape);
                (space, esc)
            });
            if esc && building {
                self.session.partial.clear();
                self.session.lasso.clear();
                self.session.set_status("Cancelled the partial triplet");
            } else if esc {
                self.commands.push(UiCommand::Stop);
            }
            if space {
                self.commands.push(match self.session.worker {
                    WorkerState::Running => UiCommand::Pause,
                    WorkerState::Paused => UiCommand::Resume,
                    _ => UiCommand::Run,
                });
            }
        }
        let dropped = ctx.input(|i| i.raw.dropped_files.first().map(|f| f.path().to_path_buf()));
        if let Some(p) = dropped {
            self.commands.push(UiCommand::LoadPath(p));
        }
    }

    fn drop_overlay(&self, ctx: &egui::Context) {
        let hovered = ctx.input(|i| i.raw.hovered_files.clone());
        if hovered.is_empty() {
            return;
        }
        let what = hovered
            .first()
            .and_then(|f| f.path.as_ref())
            .map_or_else(|| "file".to_owned(), |p| p.display().to_string());
        let painter = ctx.layer_painter(egui::LayerId::new(
            egui::Order::Foreground,
            egui::Id::unique("drop_overlay"),
        ));
        let rect = ctx.content_rect();
        painter.rect_filled(rect, 0.0, egui::Color32::from_black_alpha(180));
        painter.text(
            rect.center(),
            egui::Align2::CENTER_CENTER,
            format!("Drop to open\n{what}"),
            egui::FontId::proportional(24.0),
            egui::Color32::WHITE,
        );
    }
}

/// Load a dataset file or folder; errors name the path.
fn load_path(path: &Path, opts: &data::LoadOptions) -> Result<Dataset, String> {
    if !path.exists() {
        return Err(format!("{}: no such file or folder", path.display()));
    }
    data::load(path, opts).map_err(|e| {
        let msg = e.to_string();
        let shown = path.display().to_string();
        if msg.contains(&shown) {
            msg
        } else {
            format!("{shown}: {msg}")
        }
    })
}

impl eframe::App for App {
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        let start = Instant::now();
        self.frame_start = Some(start);
        self.drain_background();
        self.drain_events(start + DRAIN_BUDGET);
        self.session.reap_retired();
        self.update_kept();
        self.handle_input(ctx);
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        panels::top_bar(
            ui,
            &mut self.settings,
            &self.session,
            &mut self.commands,
            &mut self.flags,
        );
        panels::status_line(ui, &self.session);
        egui::Panel::left("data_panel")
            .resizable(true)
            .default_size(280.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical()
                    .id_salt("left_scroll")
                    .show(ui, |ui| {
                        panels::data::show(
                            ui,
                            &mut self.settings,
                            &self.session,
                            &mut self.flags,
                            &mut self.commands,
                        );
                        ui.separator();
                        panels::constraints::show(
                            ui,
                            &mut self.session,
                            &mut self.flags,
                            &mut self.commands,
                        );
                    });
            });
        egui::Panel::right("model_panel")
            .resizable(true)
            .default_size(300.0)
            .show(ui, |ui| {
                // Both axes: the history table is wider than the panel.
                egui::ScrollArea::both()
                    .id_salt("right_scroll")
                    .show(ui, |ui| {
                        panels::model::show(
                            ui,
                            &mut self.settings,
                            &self.session,
                            &mut self.flags,
                            &mut self.commands,
                        );
                        ui.separator();
                        panels::results::show(
                            ui,
                            &mut self.settings,
                            &mut self.session,
                            &mut self.commands,
                        );
                    });
            });
        egui::CentralPanel::no_frame().show(ui, |ui| {
            egui::Panel::bottom("convergence_panel")
                .resizable(true)
                .default_size(220.0)
                .min_size(120.0)
                .show(ui, |ui| {
                    panels::convergence::show(ui, &mut self.settings, &self.session);
                });
            egui::CentralPanel::default().show(ui, |ui| {
                panels::scatter::show(ui, &mut self.session, &mut self.commands);
            });
        });
        panels::windows(&ctx, &self.settings, &mut self.flags);
        panels::constraints::generate_window(
            &ctx,
            &self.session,
            &mut self.flags,
            &mut self.commands,
        );
        panels::constraints::unsaved_modal(
            &ctx,
            &self.session,
            &mut self.flags,
            &mut self.commands,
        );
        self.drop_overlay(&ctx);
        self.apply_commands();
        if self.session.loading.is_some() || self.dialog_open {
            // The loader wakes us when done; a slow tick keeps the spinner alive meanwhile.
            ctx.request_repaint_after(Duration::from_millis(100));
        }
        if let Some(start) = self.frame_start.take() {
            self.session.frame_ms = start.elapsed().as_secs_f32() * 1000.0;
        }
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, eframe::APP_KEY, &self.settings);
    }
}
