//! Session files and the recovery journal.
//!
//! Save / Open session take a path (the File menu's dialogs, Ctrl+Shift+S / Ctrl+O and
//! `--session FILE` all end here), so tests drive them without dialogs. Opening a session sets
//! the model settings at once, asks the data feature to load its data with its loader options
//! ([`crate::gui::data::Open`]), and applies its constraints when that dataset is installed
//! ([`apply`]); data whose fingerprint changed since the save is asked about ("open the
//! constraints anyway / stop"). The journal follows the store every frame ([`journal`]).

mod apply;
mod journal;
mod panel;
mod save;

use super::command::{Addressed, PathAnswer, PathAsk, UiCommand};
use super::feature::{Event, Feature, Place, Shared, TaskPanicked};
use super::state::{DataSource, OpeningSession, Pending};
use crate::engine::data::samples::Sample;
use crate::engine::files::session::SessionFile;
use crate::engine::models::ModelKind;
use std::any::Any;
use std::path::{Path, PathBuf};

/// The name its messages are addressed to.
const NAME: &str = "sessions";

/// The session dialog's choice, to save or to open (None: cancelled).
struct Picked {
    save: bool,
    path: Option<PathBuf>,
}

impl Addressed for Picked {
    const FEATURE: &'static str = NAME;
}

/// Save and open a session (the File menu, Ctrl+Shift+S, `--session FILE`, a held-back
/// open), and the answers to the session questions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Save the session to this path, or to the last session file (asking when there is
    /// none).
    Save(Option<PathBuf>),
    /// Open a session file (asks first about unsaved constraints).
    Open(PathBuf),
    /// "The session's data changed": open its constraints anyway (`true`) or stop.
    DataChanged(bool),
    /// "Recover N unsaved edits": recover (`true`) or discard.
    Recover(bool),
}

impl Addressed for Command {
    const FEATURE: &'static str = NAME;
}

/// The feature's own state: where unsaved edits are journalled.
#[derive(Default)]
pub struct Sessions {
    /// Where unsaved edits are journalled (`None`: not journalled, e.g. tests without
    /// `NMF_PLAYGROUND_RECOVERY_DIR`).
    recovery_dir: Option<PathBuf>,
    /// The journal of the current store.
    journal: journal::Journalled,
}

impl Sessions {
    /// Open a session file, first asking about unsaved constraints.
    fn open(&mut self, path: PathBuf, app: &mut Shared<'_>) {
        if app.session.has_unsaved_constraints() {
            app.session.pending = Some(Pending::Session(path));
        } else {
            self.file(false, path, app);
        }
    }

    /// Sessions journalling unsaved edits to `recovery_dir`.
    pub fn new(recovery_dir: Option<PathBuf>) -> Self {
        Self {
            recovery_dir,
            journal: journal::Journalled::default(),
        }
    }

    /// Write the session (data reference, constraints, model settings, run history; with
    /// `Settings::session_factors` each run's H and W as `.npy` beside it) to `path`.
    pub fn save(&mut self, path: &Path, app: &mut Shared<'_>) -> Result<(), String> {
        save::save(path, app)?;
        self.sync_journal(app);
        Ok(())
    }
}

impl Feature for Sessions {
    fn name(&self) -> &'static str {
        NAME
    }

    fn logic(&mut self, app: &mut Shared<'_>) {
        self.sync_journal(app);
    }

    fn on_event(&mut self, event: Event, app: &mut Shared<'_>) {
        match event {
            Event::NewStore => self.start_journal(app),
            Event::DatasetChanged => apply::data_loaded(app),
            Event::HistoryChanged => {}
        }
    }

    fn on_command(&mut self, cmd: UiCommand, app: &mut Shared<'_>) -> Option<UiCommand> {
        match cmd {
            UiCommand::PathGiven(ask @ (PathAsk::SaveSession | PathAsk::OpenSession), answer) => {
                let save = ask == PathAsk::SaveSession;
                match answer {
                    PathAnswer::Typed(p) if save => self.file(true, p, app),
                    PathAnswer::Typed(p) => self.open(p, app),
                    PathAnswer::Browse => open_dialog(save, app),
                }
            }
            other => return Some(other),
        }
        None
    }

    fn ui(&mut self, place: Place, ui: &mut eframe::egui::Ui, app: &mut Shared<'_>) {
        match place {
            Place::FileMenu => panel::file_items(ui, app.settings, app.commands),
            Place::Windows => panel::modals(ui.ctx(), app.session, app.commands),
            _ => {}
        }
    }

    fn on_message(&mut self, msg: Box<dyn Any + Send>, app: &mut Shared<'_>) {
        let msg = match msg.downcast::<Picked>() {
            Ok(p) => return self.picked(p.save, p.path, app),
            Err(msg) => msg,
        };
        let msg = match msg.downcast::<Command>() {
            Ok(cmd) => {
                return match *cmd {
                    Command::Save(path) => {
                        match path.or_else(|| app.session.session_path.clone()) {
                            Some(p) => self.file(true, p, app),
                            None => app.view.ask_path(PathAsk::SaveSession, app.session),
                        }
                    }
                    Command::Open(p) => self.open(p, app),
                    Command::DataChanged(open) => apply::resolve_data_changed(open, app),
                    Command::Recover(recover) => self.resolve_recovery(recover, app),
                };
            }
            Err(msg) => msg,
        };
        if let Ok(p) = msg.downcast::<TaskPanicked>() {
            app.view.dialog_open = false;
            app.session.set_error(format!(
                "The file-dialog task stopped unexpectedly (a bug: please report it): {}",
                p.0
            ));
        }
    }

    fn on_exit(&mut self, app: &mut Shared<'_>) {
        // A clean quit: the journal is removed when nothing is unsaved, and otherwise holds
        // the last edit (the user chose to quit without saving only through "Discard",
        // which marks the store saved).
        self.flush_journal(app);
    }

    crate::feature_any!();
}

impl Sessions {
    /// Save (to the last session file, or asking) / open at `path`, reporting on the status
    /// line.
    fn file(&mut self, save: bool, path: PathBuf, app: &mut Shared<'_>) {
        let shown = path.display().to_string();
        if save {
            match self.save(&path, app) {
                Ok(()) => app
                    .session
                    .set_status(format!("Saved the session to {shown}")),
                Err(e) => app
                    .session
                    .set_error(format!("Could not save the session: {e}")),
            }
        } else if let Err(e) = open(&path, app) {
            app.session
                .set_error(format!("Could not open the session: {e}"));
        }
    }

    /// The session dialog closed.
    fn picked(&mut self, save: bool, path: Option<PathBuf>, app: &mut Shared<'_>) {
        app.view.dialog_open = false;
        match path {
            Some(p) => self.file(save, p, app),
            None => {
                app.session
                    .set_status("No file chosen (or no system file dialog)");
                let ask = if save {
                    PathAsk::SaveSession
                } else {
                    PathAsk::OpenSession
                };
                app.view.ask_path(ask, app.session);
            }
        }
    }
}

/// Read a session and start loading its data; its constraints follow when the data
/// arrives ([`apply::data_loaded`]). Errors name the file and the entry.
fn open(path: &Path, app: &mut Shared<'_>) -> Result<(), String> {
    let file = SessionFile::read(path).map_err(|e| e.to_string())?;
    let source = match file.dataset.sample_name() {
        Some(name) => DataSource::Sample(Sample::from_name(name).ok_or_else(|| {
            format!(
                "{}: dataset.path: unknown bundled sample `{name}`",
                path.display()
            )
        })?),
        None => DataSource::Path(
            file.dataset
                .resolved_path(path)
                .unwrap_or_else(|| PathBuf::from(&file.dataset.path)),
        ),
    };
    let m = &file.model;
    if ModelKind::from_name(&m.model).is_none() {
        return Err(format!(
            "{}: model.model: unknown model `{}` (available: {})",
            path.display(),
            m.model,
            ModelKind::names()
        ));
    }
    let settings = &mut *app.settings;
    settings.model = m.model.clone();
    settings.k = m.k;
    settings.seed = m.seed;
    settings.max_iter = m.max_iter;
    settings.tol = m.tol;
    settings.params.remove(&m.model);
    if !m.params.is_empty() {
        settings.params.insert(m.model.clone(), m.params.clone());
    }
    let opts = file.dataset.load_options();
    settings.preprocess = opts.preprocess;
    settings.resize_images = opts.resize.is_some();
    if let Some(r) = opts.resize {
        settings.resize = r;
    }
    app.session.opening = Some(OpeningSession {
        path: path.to_path_buf(),
        file,
        changed: None,
    });
    app.commands.send(super::data::Open { source, opts });
    Ok(())
}

/// Show the native dialog to save (`save`) or open a session, off the UI thread.
fn open_dialog(save: bool, app: &mut Shared<'_>) {
    if app.view.dialog_open {
        return;
    }
    let spawned = app.tasks.spawn("file-dialog", move || {
        let dialog = rfd::FileDialog::new()
            .set_title(if save { "Save session" } else { "Open session" })
            .add_filter("Session", &["json"]);
        Picked {
            save,
            path: if save {
                dialog.save_file()
            } else {
                dialog.pick_file()
            },
        }
    });
    match spawned {
        Ok(()) => app.view.dialog_open = true,
        Err(e) => app.session.set_error(e),
    }
}
