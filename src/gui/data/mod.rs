//! Opening datasets: the loader and the file dialogs run as background tasks; a loaded dataset
//! is installed ([`install`]: ending any run, keeping the constraints when the raw content is
//! the same). A newer load replaces an older one by ticket, so a slow load never overwrites a
//! later one. Loading another dataset over unsaved constraints first asks
//! ([`crate::gui::state::Pending`]).
//!
//! Other features ask for a load by sending [`Command`] or [`Open`] (a session's data with
//! its loader options). `auto` preprocessing resolves for the selected model, and X is
//! prepared again when another model needs another choice ([`prepare`]). It draws the Data
//! panel at the top of the left panel ([`panel`], with the labels picker of [`labels`]), the
//! File menu's open items and the Samples menu.

mod install;
mod labels;
mod panel;
mod prepare;

pub use prepare::needed_for_model;

use super::command::{Addressed, UiCommand};
use super::feature::{Feature, Place, Shared, TaskPanicked};
use super::state::{DataSource, LabelChoice, Pending};
use crate::engine::data::samples::{self, Sample};
use crate::engine::data::{self, Dataset, Fingerprint};
use std::any::Any;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The name its messages are addressed to.
const NAME: &str = "data";

/// What the Data panel, the menus, dropped files and the unsaved-constraints question ask
/// for.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Load a dataset from a file or folder (background thread).
    LoadPath(PathBuf),
    /// Load a bundled sample.
    LoadSample(Sample),
    /// Load the current source again (new preprocessing or resize).
    Reload,
    /// Load the current source again with its labels from this choice (a labels file, a CSV
    /// column; the default choice: the file's own labels).
    SetLabels(LabelChoice),
    /// Show the native "open file" dialog (background thread).
    OpenFileDialog,
    /// Show the native "open folder" dialog (background thread).
    OpenFolderDialog,
}

impl Addressed for Command {
    const FEATURE: &'static str = NAME;
}

/// Load `source` with these loader options (a session's data).
pub struct Open {
    pub source: DataSource,
    pub opts: data::LoadOptions,
}

impl Addressed for Open {
    const FEATURE: &'static str = NAME;
}

/// What its background tasks send back.
enum Done {
    /// A dataset load, tagged with its ticket (a newer load replaces it).
    Loaded {
        ticket: u64,
        source: DataSource,
        result: Result<Box<Dataset>, String>,
        seconds: f64,
    },
    /// The dataset dialog's choice (None: cancelled).
    Picked(Option<PathBuf>),
    /// The PCA-2D of the dataset `fingerprint`'s X (n×2), for the scatter before any run.
    Projected {
        fingerprint: Fingerprint,
        result: Result<ndarray::Array2<f64>, String>,
    },
}

impl Addressed for Done {
    const FEATURE: &'static str = NAME;
}

/// The feature's own state: the ticket of the newest load, the preparation of X for the
/// selected model in flight or refused, and the Data panel's text fields.
#[derive(Debug, Default)]
pub struct Data {
    /// Text of the typed dataset path field (what is loaded, however it was chosen).
    pub path_input: String,
    /// Text of the labels file field.
    pub labels_path_input: String,
    /// Text of the CSV label column field.
    pub label_column_input: String,
    ticket: u64,
    preparing: Option<prepare::Preparing>,
    /// A preparation that failed (the data and the kind of model): not tried again.
    failed: Option<(Fingerprint, data::AutoFor)>,
}

impl Feature for Data {
    fn name(&self) -> &'static str {
        NAME
    }

    /// X follows the selected model's `auto` choice; a run keeps the X it started on, so
    /// not while one is active.
    fn logic(&mut self, app: &mut Shared<'_>) {
        if !app.run.worker.is_active() {
            self.prepare_for_model(app);
        }
    }

    fn on_command(&mut self, cmd: UiCommand, app: &mut Shared<'_>) -> Option<UiCommand> {
        match cmd {
            UiCommand::PrepareForModel => self.prepare_for_model(app),
            other => return Some(other),
        }
        None
    }

    fn ui(&mut self, place: Place, ui: &mut eframe::egui::Ui, app: &mut Shared<'_>) {
        match place {
            Place::Left => panel::show(ui, self, app),
            Place::FileMenu => panel::open_items(ui, app.commands),
            Place::Menus => {
                ui.menu_button("Samples", |ui| panel::sample_items(ui, app.commands));
            }
            _ => {}
        }
    }

    fn on_message(&mut self, msg: Box<dyn Any + Send>, app: &mut Shared<'_>) {
        let msg = match msg.downcast::<Command>() {
            Ok(cmd) => return self.command(*cmd, app),
            Err(msg) => msg,
        };
        let msg = match msg.downcast::<Open>() {
            Ok(open) => return self.start_load_with(open.source, open.opts, app),
            Err(msg) => msg,
        };
        let msg = match msg.downcast::<Done>() {
            Ok(done) => {
                return match *done {
                    Done::Loaded {
                        ticket,
                        source,
                        result,
                        seconds,
                    } => self.loaded(ticket, source, result, seconds, app),
                    Done::Picked(path) => self.picked(path, app),
                    Done::Projected {
                        fingerprint,
                        result,
                    } => install::projected(fingerprint, result, app),
                };
            }
            Err(msg) => msg,
        };
        if let Ok(p) = msg.downcast::<TaskPanicked>() {
            let TaskPanicked(message, task) = *p;
            match task.as_str() {
                "loader" => {
                    let s = &mut *app.session;
                    s.loading = None;
                    s.labels_pending = None;
                    s.load_error = Some(format!("The loader stopped unexpectedly: {message}"));
                }
                "file-dialog" => app.view.dialog_open = false,
                _ => {}
            }
            app.session.set_error(format!(
                "The {task} task stopped unexpectedly (a bug: please report it): {message}"
            ));
        }
    }

    crate::feature_any!();
}

impl Data {
    /// The feature with the path field showing the last dataset opened.
    pub fn new(last_path: Option<&Path>) -> Self {
        Self {
            path_input: last_path
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            ..Self::default()
        }
    }

    fn command(&mut self, cmd: Command, app: &mut Shared<'_>) {
        match cmd {
            Command::LoadPath(p) => self.load_typed_path(p, app),
            Command::LoadSample(s) => self.request_load(DataSource::Sample(s), app),
            Command::Reload => {
                if let Some(source) = app.session.source.clone() {
                    self.start_load(source, app);
                }
            }
            Command::SetLabels(choice) => self.set_labels(choice, app),
            Command::OpenFileDialog => open_dialog(false, app),
            Command::OpenFolderDialog => open_dialog(true, app),
        }
    }

    /// Load `source` on a background thread, with the settings' loader options (and the
    /// label choice made for the current dataset when `source` is it again).
    pub fn start_load(&mut self, source: DataSource, app: &mut Shared<'_>) {
        let opts = app.settings.load_options();
        let opts = if app.session.source.as_ref() == Some(&source) {
            app.session.labels.apply(opts)
        } else {
            opts
        };
        self.start_load_with(source, opts, app);
    }

    /// Make `data` the current dataset at once (tests, embedding): a load in flight is
    /// dropped when it arrives.
    pub fn install_now(&mut self, data: Dataset, app: &mut Shared<'_>) {
        self.ticket += 1;
        app.session.loading = None;
        install::install(data, None, app);
    }

    /// Load a dataset, first asking about unsaved constraints.
    fn request_load(&mut self, source: DataSource, app: &mut Shared<'_>) {
        if app.session.has_unsaved_constraints() {
            app.session.pending = Some(Pending::Load(source));
        } else {
            self.start_load(source, app);
        }
    }

    /// Reload the current dataset with its labels from `choice`; a refusal (a count that
    /// does not match, a missing file) keeps the dataset and the previous choice.
    fn set_labels(&mut self, choice: LabelChoice, app: &mut Shared<'_>) {
        let Some(source) = app.session.source.clone() else {
            app.session
                .set_error("Load a dataset first, then attach its labels");
            return;
        };
        let opts = choice.apply(app.settings.load_options());
        self.start_load_with(source, opts, app);
    }

    /// [`Self::start_load`] with these loader options (a session's).
    fn start_load_with(
        &mut self,
        source: DataSource,
        opts: data::LoadOptions,
        app: &mut Shared<'_>,
    ) {
        self.ticket += 1;
        let ticket = self.ticket;
        let what = source.describe();
        app.session.labels_pending = Some(LabelChoice::of(&opts));
        if let DataSource::Path(p) = &source {
            // The Path field shows what is loaded, however it was chosen (typed, picked,
            // dropped, a session's or the command line's).
            self.path_input = p.display().to_string();
        }
        let spawned = app.tasks.spawn("loader", move || {
            let t0 = Instant::now();
            let result = match &source {
                DataSource::Sample(s) => {
                    samples::load_sample(*s, &opts).map_err(|e| format!("sample {}: {e}", s.name()))
                }
                DataSource::Path(p) => load_path(p, &opts),
            }
            .map(Box::new);
            Done::Loaded {
                ticket,
                source,
                result,
                seconds: t0.elapsed().as_secs_f64(),
            }
        });
        match spawned {
            Ok(()) => {
                app.session.loading = Some(what.clone());
                app.session.set_status(format!("Loading {what}…"));
            }
            Err(e) => {
                app.session.loading = None;
                let msg = format!("{what}: {e}");
                app.session.load_error = Some(msg.clone());
                app.session.set_error(msg);
            }
        }
    }

    /// A load finished: install it, unless a newer load replaced it.
    fn loaded(
        &mut self,
        ticket: u64,
        source: DataSource,
        result: Result<Box<Dataset>, String>,
        seconds: f64,
        app: &mut Shared<'_>,
    ) {
        if ticket != self.ticket {
            return;
        }
        let preparing = self.preparing.take().filter(|p| p.ticket == ticket);
        app.session.loading = None;
        let labels = app.session.labels_pending.take();
        if preparing.is_some_and(|p| !p.wanted(app.settings)) {
            // Another model (or preprocessing) was picked meanwhile: X stays, and `logic`
            // prepares what the selection needs now.
            return;
        }
        match result {
            Ok(data) => {
                app.session.labels = labels.unwrap_or_default();
                let reason = data.preprocess_reason.clone().unwrap_or_default();
                install::install(*data, Some(source), app);
                let s = match preparing {
                    Some(_) => format!(
                        "Data prepared for {} in {seconds:.2} s: {reason}",
                        prepare::model_label(app)
                    ),
                    None => format!("{} in {seconds:.2} s", app.session.status.text),
                };
                app.session.set_status(s);
            }
            Err(e) if preparing.is_some() => {
                let here = app.session.dataset.as_ref().map(|d| d.fingerprint);
                self.failed = here.zip(preparing.map(|p| p.kind));
                app.session.set_error(format!(
                    "Could not prepare the data for {}: {e}",
                    prepare::model_label(app)
                ));
            }
            Err(e) => {
                let e = match app.session.opening.take() {
                    Some(open) => format!("session {}: {e}", open.path.display()),
                    None => e,
                };
                app.session.load_error = Some(e.clone());
                app.session.set_error(e);
            }
        }
    }

    /// Load a typed path (an empty one is refused with a hint).
    fn load_typed_path(&mut self, path: PathBuf, app: &mut Shared<'_>) {
        if path.as_os_str().is_empty() {
            let msg = "Type a file or folder path first".to_owned();
            app.session.load_error = Some(msg.clone());
            app.session.set_error(msg);
        } else {
            self.path_input = path.display().to_string();
            self.request_load(DataSource::Path(path), app);
        }
    }

    /// The dataset dialog closed, with a path or cancelled.
    fn picked(&mut self, path: Option<PathBuf>, app: &mut Shared<'_>) {
        app.view.dialog_open = false;
        match path {
            Some(p) => {
                self.path_input = p.display().to_string();
                self.request_load(DataSource::Path(p), app);
            }
            None => app
                .session
                .set_status("No file chosen (or no system file dialog): type the path in the Data panel's Path field"),
        }
    }
}

/// Show the native open dialog for a dataset file or folder, off the UI thread (rfd blocks
/// its caller); the choice arrives as [`Done::Picked`].
fn open_dialog(folder: bool, app: &mut Shared<'_>) {
    if app.view.dialog_open {
        return;
    }
    let spawned = app.tasks.spawn("file-dialog", move || {
        let dialog = rfd::FileDialog::new().set_title(if folder {
            "Open a folder of images"
        } else {
            "Open a dataset"
        });
        Done::Picked(if folder {
            dialog.pick_folder()
        } else {
            dialog
                .add_filter("Datasets", &["csv", "npy", "mat"])
                .add_filter("All files", &["*"])
                .pick_file()
        })
    });
    match spawned {
        Ok(()) => app.view.dialog_open = true,
        Err(e) => app.session.set_error(e),
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
