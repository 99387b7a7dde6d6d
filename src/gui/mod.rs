//! The egui desktop app (feature `gui`). Draws only; all math runs in the engine's worker and
//! in background tasks.
//!
//! The app is shared state plus features. The shared state, borrowed by every feature as
//! [`shared::Shared`], is the persisted [`Settings`], the domain [`Session`] (dataset,
//! constraints, finished runs, status line), the live run ([`RunController`]) and the
//! [`ViewState`] that several features draw from (the scatter's picture, selections).
//!
//! Each feature is a folder holding its own state, commands, task results and drawing
//! behind [`feature::Feature`]: `data`, `constraints`, `sessions`, `runs` (with the model's
//! controls), `teaching`, `weights`, `results` (scores and history), `scatter`, `convergence`,
//! `gallery`, `compare`, `kscan`, `export`, `tour`, `search`, `suggest`. [`App`] only routes:
//! `frame.rs` delivers task results and runs each feature's `logic` (never blocking);
//! `layout.rs` places the panes and asks the features to draw their places; `dispatch.rs`
//! offers each [`UiCommand`] to the features and tells them the events they raised.
//! A feature asks another for something with a command or a message, never with a call.
//! Adding a feature is a folder plus one line in `fn features()`.

use eframe::egui;

mod background;
mod chrome;
mod command;
pub mod compare;
pub mod constraints;
pub mod convergence;
pub mod data;
mod dispatch;
mod evaluation;
mod exit_plan;
mod explore;
pub mod export;
mod feature;
mod file_prompt;
mod format;
mod frame;
pub mod gallery;
mod input;
pub mod kscan;
mod layout;
mod model_docs;
mod point_image;
pub mod results;
mod run_controller;
pub mod runs;
pub mod scatter;
mod search;
pub mod sessions;
mod shared;
mod state;
mod style;
pub mod suggest;
mod teaching;
mod textures;
pub mod tour;
mod view;
mod weights;

pub use command::{Addressed, FileAction, PathAnswer, PathAsk, UiCommand};
pub use evaluation::{EvalInput, evaluate, history_csv};
pub use exit_plan::ExitPlan;
pub use file_prompt::FilePrompt;
pub use kscan::{KScan, ScanForm};
pub use run_controller::RunController;
pub use state::{
    ColorBy, Convergence, DataSource, Evaluation, HistoryRow, KeptCache, LabelChoice,
    OpeningSession, Pending, Progress, Series, Session, Settings, Status, Tool, WorkerState,
};
pub use view::ViewState;
pub use view::points::{NEIGHBOURS, SnapshotKey};
pub use view::scatter_cache::{PALETTE, ScatterCache, ScatterGroup};

use crate::engine::data::Dataset;
use crate::engine::data::samples::Sample;
use command::Commands;
use feature::{Feature, Features};
use shared::Shared;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Window title and app id.
pub const APP_NAME: &str = "NMF Playground";

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
            if let Some(s) = session {
                app.send(sessions::Command::Open(s));
            }
            app.exit = exit;
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| anyhow::anyhow!("could not open the window: {e}"))
}

/// The desktop app.
pub struct App {
    settings: Settings,
    session: Session,
    view: ViewState,
    run: RunController,
    commands: Commands,
    /// What the command line asked for at closing (`--save-on-exit`, `--close-when-loaded`).
    exit: ExitPlan,
    frame_start: Option<Instant>,
    /// The UI thread's CPU time when this frame's `logic` began.
    frame_cpu_start: Option<Duration>,
    ctx: egui::Context,
    /// The features, each with its own state, commands, tasks and drawing.
    features: Features,
    /// The features' background tasks (results routed back to the feature).
    tasks: shared::Tasks,
    /// Events raised during the current call, told to every feature after it.
    events: Vec<feature::Event>,
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
            features: features(settings.last_path.as_deref(), recovery_dir),
            view: ViewState::new(),
            settings,
            session: Session::default(),
            run: RunController::new(ctx),
            commands: Commands::default(),
            exit: ExitPlan::default(),
            frame_start: None,
            frame_cpu_start: None,
            ctx: ctx.clone(),
            tasks: shared::Tasks::new(ctx),
            events: Vec::new(),
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
        let (features, mut shared) = app.parts();
        if let Some(data) = features.get_mut::<data::Data>() {
            data.start_load(source, &mut shared);
        }
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
                tasks: &self.tasks,
                commands: &mut self.commands,
                ctx: &self.ctx,
                events: &mut self.events,
            },
        )
    }

    /// Replace the dataset directly (tests, embedding): cancels any run.
    pub fn set_dataset(&mut self, data: Dataset) {
        let (features, mut app) = self.parts();
        if let Some(f) = features.get_mut::<data::Data>() {
            f.install_now(data, &mut app);
        }
        self.tell_events();
    }

    /// Write the session to `path` (File ▸ Save session, `--save-on-exit`, tests).
    pub fn save_session(&mut self, path: &std::path::Path) -> Result<(), String> {
        let (features, mut app) = self.parts();
        match features.get_mut::<sessions::Sessions>() {
            Some(f) => f.save(path, &mut app),
            None => Err("sessions are not part of this app".into()),
        }
    }
}

/// The features, in drawing order: one line each.
fn features(last_path: Option<&std::path::Path>, recovery_dir: Option<PathBuf>) -> Features {
    Features::new(vec![
        Box::new(data::Data::new(last_path)),
        Box::new(runs::Runs),
        Box::new(teaching::Teaching::default()),
        Box::new(weights::FeatureWeights::default()),
        Box::new(convergence::ConvergencePlot),
        Box::new(gallery::BasisGallery::default()),
        Box::new(results::Results::default()),
        Box::new(scatter::Scatter::default()),
        Box::new(constraints::Constraints::default()),
        Box::new(sessions::Sessions::new(recovery_dir)),
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
