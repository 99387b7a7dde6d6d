//! The egui desktop app (feature `gui`). Draws only; all math runs in the engine's worker.
//!
//! `logic` drains background tasks and worker events under a small time budget and never
//! blocks; `ui` draws the panels, which push [`UiCommand`]s that are applied at the end of the
//! frame. State is kept in four parts: persisted [`Settings`], the domain [`Session`]
//! (dataset, constraints, finished runs), the live run in the [`RunController`], and the
//! [`ViewState`] (tool mode, hover, selections, typed text).

use eframe::egui;

mod background;
mod command;
pub mod compare;
mod constraint_actions;
mod dispatch;
mod evaluation;
mod exit_plan;
mod explore;
mod explore_actions;
pub mod export;
mod feature;
mod file_prompt;
mod format;
mod input;
pub mod kscan;
mod layout;
mod loading;
mod model_docs;
mod panels;
mod point_image;
mod points;
mod run_controller;
mod scatter_cache;
mod search;
mod session_actions;
mod shared;
mod state;
mod style;
pub mod suggest;
mod textures;
pub mod tour;
mod view;

pub use command::{FileAction, PathAsk, Resolution, UiCommand};
pub use compare::{CompareView, Comparison, PLAY_SECONDS, Pane};
pub use evaluation::{EvalInput, evaluate, history_csv};
pub use exit_plan::ExitPlan;
pub use file_prompt::FilePrompt;
pub use kscan::{KScan, ScanForm};
pub use panels::convergence::prepared as convergence_points;
pub use panels::model::{ModelGroup, ParamEdit, hyperparameter_row};
pub use panels::results::metric_lines;
pub use points::{NEIGHBOURS, SnapshotKey};
pub use run_controller::RunController;
pub use state::{
    ColorBy, Convergence, DataSource, Evaluation, HistoryRow, KeptCache, LabelChoice,
    OpeningSession, PALETTE, Pending, Progress, ScatterCache, ScatterGroup, Series, Session,
    Settings, Status, Tool, WorkerState,
};
pub use view::ViewState;

use crate::engine::constraints::Generated;
use crate::engine::data::Dataset;
use crate::engine::data::Fingerprint;
use crate::engine::data::samples::Sample;
use background::Background;
use command::{Addressed, Commands};
use feature::{Feature, Features};
use shared::Shared;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Window title and app id.
pub const APP_NAME: &str = "NMF Playground";

/// How long `logic` may spend draining worker events per frame.
const DRAIN_BUDGET: Duration = Duration::from_millis(5);

/// Open the desktop app, on `path` (a dataset file or folder) or on the bundled sample.
///
/// Fails with a message pointing to the headless commands when there is no display.
/// A `.json` `path` is opened as a session file, as is `session`.
pub fn run(path: Option<PathBuf>, session: Option<PathBuf>, exit: ExitPlan) -> anyhow::Result<()> {
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
        Box::new(move |cc| {
            let (path, session) = match (path, session) {
                (Some(p), None)
                    if p.extension()
                        .is_some_and(|e| e.eq_ignore_ascii_case("json")) =>
                {
                    (None, Some(p))
                }
                other => other,
            };
            let mut app = App::with_path(
                cc,
                path.filter(|_| session.is_none()),
                crate::engine::files::recovery::default_dir(),
            );
            if let Some(s) = session
                && let Err(e) = app.open_session(&s)
            {
                app.session
                    .set_error(format!("Could not open the session: {e}"));
            }
            app.exit = exit;
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| anyhow::anyhow!("could not open the window: {e}"))
}

/// The result of a finished background task, delivered by [`Background`].
enum TaskDone {
    /// A dataset load, tagged with its ticket (a newer load replaces it).
    Loaded {
        ticket: u64,
        source: DataSource,
        result: Result<Box<Dataset>, String>,
        seconds: f64,
    },
    /// The session dialog's choice, to save or to open (None: cancelled).
    SessionPicked { save: bool, path: Option<PathBuf> },
    /// The dataset dialog's choice (None: cancelled).
    Picked(Option<PathBuf>),
    /// A path chosen for a constraint file action (None: dialog cancelled).
    ConstraintsPicked(FileAction, Option<PathBuf>),
    /// Triplets generated for the dataset `fingerprint`.
    Generated {
        fingerprint: Fingerprint,
        source: &'static str,
        seed: u64,
        result: Result<Generated, String>,
    },
    /// The evaluation of a finished run (tagged inside with the run's history id).
    Evaluated(Box<Evaluation>),
    /// The PCA-2D of the dataset `fingerprint`'s X (n×2), for the scatter before any run.
    DataProjected {
        fingerprint: Fingerprint,
        result: Result<ndarray::Array2<f64>, String>,
    },
    /// A background task panicked (a bug): its busy flag is cleared and the error shown.
    Panicked { task: String, message: String },
}

/// The desktop app.
pub struct App {
    settings: Settings,
    session: Session,
    view: ViewState,
    run: RunController,
    tasks: Background<TaskDone>,
    commands: Commands,
    load_ticket: u64,
    /// A native file dialog is open (at most one at a time).
    dialog_open: bool,
    /// The user agreed to close with unsaved constraints (or saved them).
    allow_close: bool,
    /// What the command line asked for at closing (`--save-on-exit`, `--close-when-loaded`).
    exit: ExitPlan,
    /// Save was chosen in the unsaved-constraints question but needs a path first.
    save_then_resume: bool,
    frame_start: Option<Instant>,
    /// The UI thread's CPU time when this frame's `logic` began.
    frame_cpu_start: Option<Duration>,
    ctx: egui::Context,
    /// Where unsaved edits are journalled (`None`: not journalled, e.g. tests without
    /// `NMF_PLAYGROUND_RECOVERY_DIR`).
    recovery_dir: Option<PathBuf>,
    /// The journal of the current store.
    journal: Option<crate::engine::files::recovery::Journal>,
    /// The features, each with its own state, commands, tasks and drawing.
    features: Features,
    /// The features' background tasks (results routed back to the feature).
    feature_tasks: shared::Tasks,
}

impl App {
    /// The app for eframe: settings from storage, opening the bundled sample. Unsaved edits
    /// are journalled only when `NMF_PLAYGROUND_RECOVERY_DIR` is set (tests build the app
    /// this way; the window of [`run`] journals to the platform's data directory).
    pub fn new(cc: &eframe::CreationContext<'_>) -> Self {
        Self::with_path(cc, None, test_recovery_dir())
    }

    /// The app for eframe, opening `path` if given, journalling unsaved edits to
    /// `recovery_dir`.
    pub fn with_path(
        cc: &eframe::CreationContext<'_>,
        path: Option<PathBuf>,
        recovery_dir: Option<PathBuf>,
    ) -> Self {
        let settings = cc
            .storage
            .and_then(|s| eframe::get_value::<Settings>(s, eframe::APP_KEY))
            .map(Settings::migrated)
            .unwrap_or_default();
        Self::from_parts(&cc.egui_ctx, settings, path, recovery_dir)
    }

    /// The app on a bare egui context with default settings (tests, embedding). Unsaved
    /// edits are journalled only when `NMF_PLAYGROUND_RECOVERY_DIR` is set.
    pub fn new_for_test(ctx: &egui::Context) -> Self {
        Self::from_parts(ctx, Settings::default(), None, test_recovery_dir())
    }

    /// The app on a bare egui context journalling unsaved edits to `recovery_dir` (tests of
    /// recovery).
    pub fn with_recovery_dir(ctx: &egui::Context, recovery_dir: PathBuf) -> Self {
        Self::from_parts(ctx, Settings::default(), None, Some(recovery_dir))
    }

    /// The app on a bare egui context with these settings, as if restored from storage
    /// (tests of persistence).
    pub fn with_settings(ctx: &egui::Context, settings: Settings) -> Self {
        Self::from_parts(ctx, settings, None, test_recovery_dir())
    }

    fn from_parts(
        ctx: &egui::Context,
        settings: Settings,
        path: Option<PathBuf>,
        recovery_dir: Option<PathBuf>,
    ) -> Self {
        style::set_theme(ctx, settings.dark);
        let mut app = Self {
            view: ViewState::new(settings.last_path.as_deref()),
            settings,
            session: Session::default(),
            run: RunController::new(ctx),
            tasks: Background::new(ctx, |task, message| TaskDone::Panicked {
                task: task.to_owned(),
                message,
            }),
            commands: Commands::default(),
            load_ticket: 0,
            dialog_open: false,
            allow_close: false,
            exit: ExitPlan::default(),
            save_then_resume: false,
            frame_start: None,
            frame_cpu_start: None,
            ctx: ctx.clone(),
            recovery_dir,
            journal: None,
            features: features(),
            feature_tasks: shared::Tasks::new(ctx),
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

    /// Domain state: dataset, constraints, finished runs and their scores, status (read-only).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The live run: worker state, progress, convergence, snapshot, result (read-only).
    pub fn run(&self) -> &RunController {
        &self.run
    }

    /// View state: tool mode, hover, selections, typed text, scatter cache (read-only).
    pub fn view(&self) -> &ViewState {
        &self.view
    }

    /// Change the view as the panels would (the class to paint, the tool, …).
    pub fn view_mut(&mut self) -> &mut ViewState {
        &mut self.view
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

    /// Queue a feature's command as if a panel had sent it; delivered at the end of the next
    /// frame.
    pub fn send<M: Addressed>(&mut self, msg: M) {
        self.commands.send(msg);
    }

    /// The feature of type `F` (its state, read-only), if the app has it.
    pub fn feature<F: Feature>(&self) -> Option<&F> {
        self.features.get::<F>()
    }

    /// Change the feature of type `F` as its panel would.
    pub fn feature_mut<F: Feature>(&mut self) -> Option<&mut F> {
        self.features.get_mut::<F>()
    }

    /// The features and the shared state they work on, borrowed apart.
    fn parts(&mut self) -> (&mut Features, Shared<'_>) {
        (
            &mut self.features,
            Shared {
                settings: &mut self.settings,
                session: &mut self.session,
                run: &mut self.run,
                view: &mut self.view,
                tasks: &self.feature_tasks,
                commands: &mut self.commands,
                ctx: &self.ctx,
            },
        )
    }

    /// Replace the dataset directly (tests, embedding): cancels any run.
    pub fn set_dataset(&mut self, data: Dataset) {
        self.load_ticket += 1;
        self.session.loading = None;
        self.install_dataset(data, None);
    }

    /// Apply worker events (within the frame's budget) and what they call for: the status
    /// line, the scatter, the history and evaluation of a finished run.
    fn drain_run(&mut self, deadline: Instant) {
        let n = self.session.dataset.as_ref().map(|d| d.n());
        let drained = self.run.drain(n, deadline);
        if drained.snapshot_changed {
            self.view.rebuild_scatter(
                self.session.dataset.as_deref(),
                self.run.snapshot.as_deref(),
                self.session.x_view.as_deref(),
                self.session.evaluation.as_deref(),
            );
        }
        if let Some(status) = drained.status {
            self.session.status = status;
        }
        if drained.finished {
            self.run_finished();
        }
    }
}

impl eframe::App for App {
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        let start = Instant::now();
        self.frame_start = Some(start);
        self.frame_cpu_start = crate::engine::machine::sys::thread_cpu_time();
        for done in self.tasks.drain() {
            self.task_done(done);
        }
        for done in self.feature_tasks.drain() {
            let (features, mut app) = self.parts();
            features.deliver(done, &mut app);
        }
        self.drain_run(start + DRAIN_BUDGET);
        self.run.reap();
        self.update_kept();
        let (features, mut app) = self.parts();
        features.logic(&mut app);
        self.handle_input(ctx);
        self.sync_journal();
        self.exit.close_if_loaded(ctx, &self.session);
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.draw_panels(ui);
        self.apply_commands();
        for cmd in self.commands.take_routed() {
            let (features, mut app) = self.parts();
            features.deliver(cmd, &mut app);
        }
        if self.session.loading.is_some() || self.dialog_open {
            // The loader wakes us when done; a slow tick keeps the spinner alive meanwhile.
            ui.ctx().request_repaint_after(Duration::from_millis(100));
        }
        if let Some(start) = self.frame_start.take() {
            let now = Instant::now();
            let cpu = self
                .frame_cpu_start
                .take()
                .zip(crate::engine::machine::sys::thread_cpu_time())
                .map(|(a, b)| b.saturating_sub(a).as_secs_f32() * 1000.0);
            self.view
                .frame_time(now.duration_since(start).as_secs_f32() * 1000.0, cpu, now);
        }
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, eframe::APP_KEY, &self.settings);
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        // A clean quit: the journal is removed when nothing is unsaved, and otherwise holds
        // the last edit (the user chose to quit without saving only through "Discard",
        // which marks the store saved).
        if let (Some(j), Some(store)) = (self.journal.as_mut(), &self.session.store) {
            let _ = j.flush(store);
        }
        if let Some(path) = self.exit.save_session.clone()
            && let Err(e) = self.save_session(&path)
        {
            crate::say!(
                "error: could not save the session to {}: {e}",
                path.display()
            );
        }
    }
}

/// The features, in drawing order: one line each.
fn features() -> Features {
    Features::new(vec![
        Box::new(search::PointSearch),
        Box::new(suggest::Suggest::default()),
        Box::new(compare::CompareView::default()),
        Box::new(kscan::KScan::default()),
        Box::new(export::Exports::default()),
        Box::new(tour::Tour::default()),
    ])
}

/// The recovery directory of the test constructors: only an explicit override.
fn test_recovery_dir() -> Option<PathBuf> {
    std::env::var_os(crate::engine::files::recovery::DIR_ENV)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
}
