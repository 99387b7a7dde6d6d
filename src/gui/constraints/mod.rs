//! The constraints of the current dataset: every edit goes through the dataset's [`Store`]
//! (one undo step each), files are read and written by the engine's `io` ([`files`]),
//! triplet generation runs on a background thread ([`generate`]), and unsaved constraints
//! are never dropped without asking: a load, a session or a quit over them waits in
//! [`Pending`] until the user saves, discards or cancels.

mod files;
mod generate;
mod panel;

use super::command::{Addressed, FileAction, PathAnswer, PathAsk, UiCommand};
use super::feature::{Feature, Place, Shared, TaskPanicked};
use super::state::{DataSource, KeptCache, Pending};
use crate::engine::constraints::{ConstraintError, ProtocolOptions, Store, Triplet};
use crate::engine::eval::triplets_satisfied;
use std::any::Any;
use std::path::PathBuf;
use std::sync::Arc;

/// The name its messages are addressed to.
const NAME: &str = "constraints";

/// What its background tasks send back.
enum Done {
    /// A path chosen for a constraint file action (None: dialog cancelled).
    Picked(FileAction, Option<PathBuf>),
    /// Triplets generated for the dataset `fingerprint`.
    Generated(generate::Generated),
}

impl Addressed for Done {
    const FEATURE: &'static str = NAME;
}

/// What the constraints panel, the scatter, the suggestions and the shortcuts ask of the
/// constraints.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Add a triplet through the store (refusals go to the status line).
    AddTriplet(Triplet),
    /// Delete a triplet.
    RemoveTriplet(Triplet),
    /// Paint these samples with the selected class (one undo step).
    PaintLabels(Vec<usize>),
    /// Clear the painted labels of these samples (one undo step).
    ClearLabels(Vec<usize>),
    Undo,
    Redo,
    /// Save the constraints to this path, or to the last one (asking when there is none).
    Save(Option<PathBuf>),
    Load(PathBuf),
    ImportCsv(PathBuf),
    ExportCsv(PathBuf),
    /// Generate triplets by the protocol on a background thread; from the ground truth or
    /// from the painted labels.
    Generate {
        opts: ProtocolOptions,
        from_truth: bool,
    },
    /// Reveal the true labels of this fraction of samples (seeded), as painted labels.
    Reveal {
        fraction: f64,
        seed: u64,
    },
    /// The answer to "unsaved constraints": save, discard or cancel the held-back action.
    Resolve(Resolution),
}

/// How the user answered the unsaved-constraints question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution {
    Save,
    Discard,
    Cancel,
}

impl Addressed for Command {
    const FEATURE: &'static str = NAME;
}

/// The feature's own state.
#[derive(Debug, Default)]
pub struct Constraints {
    /// Save was chosen in the unsaved-constraints question but needs a path first.
    save_then_resume: bool,
    /// What the panel shows that is counted from the store.
    summary: panel::Summary,
}

impl Feature for Constraints {
    fn name(&self) -> &'static str {
        NAME
    }

    fn logic(&mut self, app: &mut Shared<'_>) {
        update_kept(app);
        self.summary.prepare(app.session);
    }

    fn ui(&mut self, place: Place, ui: &mut eframe::egui::Ui, app: &mut Shared<'_>) {
        match place {
            Place::Left => {
                ui.separator();
                panel::show(ui, app.session, app.view, app.commands, &self.summary);
            }
            Place::Windows => {
                panel::generate_window(ui.ctx(), app.session, app.view, app.commands);
                panel::unsaved_modal(ui.ctx(), app.session, app.view, app.commands);
            }
            _ => {}
        }
    }

    fn on_command(&mut self, cmd: UiCommand, app: &mut Shared<'_>) -> Option<UiCommand> {
        match cmd {
            UiCommand::PathGiven(PathAsk::Constraints(action), answer) => match answer {
                PathAnswer::Typed(p) => self.file(action, p, app),
                PathAnswer::Browse => files::open_dialog(action, app),
            },
            other => return Some(other),
        }
        None
    }

    fn on_message(&mut self, msg: Box<dyn Any + Send>, app: &mut Shared<'_>) {
        let msg = match msg.downcast::<Command>() {
            Ok(cmd) => return self.command(*cmd, app),
            Err(msg) => msg,
        };
        let msg = match msg.downcast::<Done>() {
            Ok(done) => {
                return match *done {
                    Done::Picked(action, path) => self.picked(action, path, app),
                    Done::Generated(g) => {
                        app.session.generating = false;
                        generate::generated(g, app);
                    }
                };
            }
            Err(msg) => msg,
        };
        if let Ok(p) = msg.downcast::<TaskPanicked>() {
            let TaskPanicked(message, task) = *p;
            match task.as_str() {
                "generate" => app.session.generating = false,
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

impl Constraints {
    fn command(&mut self, cmd: Command, app: &mut Shared<'_>) {
        match cmd {
            Command::AddTriplet(t) => edit(app, |st| {
                st.add_triplet(t).map(|()| format!("Added triplet {t}"))
            }),
            Command::RemoveTriplet(t) => edit(app, |st| {
                st.remove_triplet(t)
                    .map(|()| format!("Removed triplet {t}"))
            }),
            Command::PaintLabels(samples) => paint_labels(&samples, app),
            Command::ClearLabels(samples) => edit(app, |st| {
                st.set_labels(&samples, None)
                    .map(|()| format!("Cleared the labels of {} samples", samples.len()))
            }),
            Command::Undo => undo_redo(app, Store::undo, "Undid", "Nothing to undo"),
            Command::Redo => undo_redo(app, Store::redo, "Redid", "Nothing to redo"),
            Command::Save(path) => match path.or_else(|| app.session.constraints_path.clone()) {
                Some(p) => self.file(FileAction::Save, p, app),
                None => app
                    .view
                    .ask_path(PathAsk::Constraints(FileAction::Save), app.session),
            },
            Command::Load(p) => self.file(FileAction::Load, p, app),
            Command::ImportCsv(p) => self.file(FileAction::ImportCsv, p, app),
            Command::ExportCsv(p) => self.file(FileAction::ExportCsv, p, app),
            Command::Generate { opts, from_truth } => generate::start(opts, from_truth, app),
            Command::Reveal { fraction, seed } => generate::reveal(fraction, seed, app),
            Command::Resolve(r) => self.resolve_pending(r, app),
        }
    }

    /// The answer to "unsaved constraints": save (then go on), discard (then go on) or
    /// cancel.
    fn resolve_pending(&mut self, r: Resolution, app: &mut Shared<'_>) {
        match r {
            Resolution::Cancel => {
                app.session.pending = None;
                self.save_then_resume = false;
                app.session
                    .set_status("Kept the constraints; nothing was loaded or closed");
            }
            Resolution::Discard => {
                if let Some(store) = app.session.store.as_mut() {
                    store.mark_saved();
                }
                resume_pending(app);
            }
            Resolution::Save => {
                let typed = app.view.constraints_path_input.trim();
                let path = app
                    .session
                    .constraints_path
                    .clone()
                    .or_else(|| (!typed.is_empty()).then(|| PathBuf::from(typed)));
                self.save_then_resume = true;
                match path {
                    Some(p) => self.file(FileAction::Save, p, app),
                    None => app
                        .view
                        .ask_path(PathAsk::Constraints(FileAction::Save), app.session),
                }
            }
        }
    }

    /// The constraint file dialog closed, with a path or cancelled.
    fn picked(&mut self, action: FileAction, path: Option<PathBuf>, app: &mut Shared<'_>) {
        app.view.dialog_open = false;
        match path {
            Some(p) => {
                app.view.constraints_path_input = p.display().to_string();
                self.file(action, p, app);
            }
            None => {
                self.save_then_resume = false;
                app.session
                    .set_status("No file chosen (or no system file dialog): type the path instead");
            }
        }
    }

    /// Save, load, import or export at `path`; a save asked for by the unsaved-constraints
    /// question then carries out the held-back action.
    fn file(&mut self, action: FileAction, path: PathBuf, app: &mut Shared<'_>) {
        let saved = files::file(action, path, app);
        if action == FileAction::Save && std::mem::take(&mut self.save_then_resume) && saved {
            resume_pending(app);
        }
    }
}

/// Carry out the held-back action (the constraints are saved or discarded by now, so the
/// command passes the question this time).
fn resume_pending(app: &mut Shared<'_>) {
    use super::{data, sessions};
    let cmds = &mut *app.commands;
    match app.session.pending.take() {
        Some(Pending::Load(DataSource::Sample(s))) => cmds.send(data::Command::LoadSample(s)),
        Some(Pending::Load(DataSource::Path(p))) => cmds.send(data::Command::LoadPath(p)),
        Some(Pending::Session(path)) => cmds.send(sessions::Command::Open(path)),
        Some(Pending::Quit) => cmds.push(UiCommand::Quit),
        None => {}
    }
}

/// Recompute which triplets H keeps when the snapshot or the triplets changed (once per
/// snapshot, O(|T| k); never per frame).
fn update_kept(app: &mut Shared<'_>) {
    let s = &mut *app.session;
    let (Some(snap), Some(store)) = (&app.run.snapshot, &s.store) else {
        s.kept = None;
        return;
    };
    let id = Arc::as_ptr(snap) as usize;
    if s.kept
        .as_ref()
        .is_some_and(|k| k.snapshot == id && k.rev == s.constraints_rev)
    {
        return;
    }
    let satisfied = triplets_satisfied(snap.h.view(), store.triplets()).unwrap_or_default();
    let share = (!satisfied.is_empty())
        .then(|| satisfied.iter().filter(|&&b| b).count() as f64 / satisfied.len() as f64);
    s.kept = Some(KeptCache {
        snapshot: id,
        iteration: snap.iteration,
        rev: s.constraints_rev,
        satisfied,
        share,
    });
}

/// Paint `samples` with the class chosen in Label mode (one undo step).
fn paint_labels(samples: &[usize], app: &mut Shared<'_>) {
    let name = app.view.paint_class.trim().to_owned();
    if name.is_empty() {
        app.session
            .set_error("Type a class name (or pick one) before painting labels");
        return;
    }
    edit(app, |st| {
        st.label_as(samples, &name)
            .map(|_| format!("Labelled {} samples as `{name}`", samples.len()))
    });
}

/// Undo or redo (`step`) one constraint edit; the status line says what changed.
fn undo_redo(
    app: &mut Shared<'_>,
    step: fn(&mut Store) -> Option<String>,
    done: &str,
    nothing: &str,
) {
    match app.session.store.as_mut().and_then(step) {
        Some(what) => {
            app.session.constraints_rev += 1;
            app.session.set_status(format!("{done}: {what}"));
        }
        None => app.session.set_status(nothing),
    }
}

/// Run one store edit; its message (or refusal) goes to the status line.
fn edit(app: &mut Shared<'_>, f: impl FnOnce(&mut Store) -> Result<String, ConstraintError>) {
    let Some(store) = app.session.store.as_mut() else {
        app.session.set_error("Load a dataset first");
        return;
    };
    match f(store) {
        Ok(msg) => {
            app.session.constraints_rev += 1;
            app.session.set_status(msg);
        }
        Err(e) => app.session.set_error(format!("Refused: {e}")),
    }
}
