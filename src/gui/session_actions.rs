//! Session files and the recovery journal in the app.
//!
//! Save / Open session take a path (the File menu's dialogs, Ctrl+Shift+S / Ctrl+O and
//! `--session FILE` all end here), so tests drive them without dialogs. Opening a session sets
//! the model settings at once, loads its data with its loader options, and applies its
//! constraints when that load arrives; data whose fingerprint changed since the save is asked
//! about ("open the constraints anyway / stop"). The journal follows the store every frame
//! (debounced, atomic, fsync'd; `engine::files::recovery`), and a start on a dataset with unsaved
//! edits from a killed session offers them back.

use super::format::counted;
use super::state::{DataSource, OpeningSession};
use super::{App, TaskDone};
use crate::engine::data::samples::Sample;
use crate::engine::files::recovery::{self, Journal};
use crate::engine::files::session::{
    Constraints, DataCheck, DatasetRef, ModelSettings, RunFactors, RunRecord, SessionFile,
};
use crate::engine::models::{ModelKind, WarmStart};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

impl App {
    /// Write the session (data reference, constraints, model settings, run history; with
    /// `Settings::session_factors` each run's H and W as `.npy` beside it) to `path`.
    pub fn save_session(&mut self, path: &Path) -> Result<(), String> {
        let Some(data) = self.session.dataset.clone() else {
            return Err("Load a dataset first".into());
        };
        let Some(store) = self.session.store.as_mut() else {
            return Err("Load a dataset first".into());
        };
        let opts = self.session.labels.apply(self.settings.load_options());
        let dataset_path = match &self.session.source {
            Some(DataSource::Path(p)) => std::path::absolute(p)
                .unwrap_or_else(|_| p.clone())
                .display()
                .to_string(),
            Some(DataSource::Sample(s)) => format!("sample:{}", s.name()),
            None => data.source.clone(),
        };
        let model = self.settings.model.clone();
        let mut file = SessionFile {
            version: crate::engine::files::session::VERSION,
            dataset: DatasetRef {
                path: dataset_path,
                // The resolved choice (never `auto`), so the session reopens as it was.
                preprocess: data.preprocess,
                label_column: DatasetRef::label_column_text(&opts.label_column),
                labels_file: opts.labels_file.clone(),
                resize: opts.resize,
                fingerprint: data.fingerprint,
            },
            constraints: Constraints::of(store),
            model: ModelSettings {
                model: model.clone(),
                k: self.settings.k,
                seed: self.settings.seed,
                max_iter: self.settings.max_iter,
                tol: self.settings.tol,
                params: self
                    .settings
                    .params
                    .get(&model)
                    .cloned()
                    .unwrap_or_default(),
            },
            runs: self
                .session
                .history
                .iter()
                .filter(|r| r.data == Some(data.fingerprint))
                .map(|r| {
                    let mut scores = BTreeMap::new();
                    for (name, v) in [("acc", r.acc), ("nmi", r.nmi), ("kept", r.kept)] {
                        if let Some(v) = v {
                            scores.insert(name.to_owned(), v);
                        }
                    }
                    // The number of triplets the run had (for the suggestions' per-batch deltas).
                    scores.insert("triplets".to_owned(), r.triplets as f64);
                    RunRecord {
                        id: r.id,
                        model: ModelKind::all()
                            .find(|k| k.label() == r.model)
                            .map_or_else(|| r.model.clone(), |k| k.name().to_owned()),
                        k: r.k,
                        seed: r.seed,
                        params: r.params.clone(),
                        iterations: r.iterations,
                        seconds: r.seconds,
                        stop: r.stop.clone(),
                        scores,
                        factors: None,
                    }
                })
                .collect(),
        };
        let factors: Vec<RunFactors<'_>> = if self.settings.session_factors {
            self.session
                .history
                .iter()
                .filter(|r| r.data == Some(data.fingerprint) && !r.factors.h.is_empty())
                .map(|r| RunFactors {
                    id: r.id,
                    w: r.factors.w.as_ref(),
                    h: &r.factors.h,
                })
                .collect()
        } else {
            Vec::new()
        };
        file.save(path, &factors).map_err(|e| e.to_string())?;
        store.mark_saved();
        self.session.session_path = Some(path.to_path_buf());
        self.sync_journal();
        Ok(())
    }

    /// Read a session and start loading its data; its constraints follow when the data
    /// arrives ([`Self::session_data_loaded`]). Errors name the file and the entry.
    pub fn open_session(&mut self, path: &Path) -> Result<(), String> {
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
        self.settings.model = m.model.clone();
        self.settings.k = m.k;
        self.settings.seed = m.seed;
        self.settings.max_iter = m.max_iter;
        self.settings.tol = m.tol;
        self.settings.params.remove(&m.model);
        if !m.params.is_empty() {
            self.settings
                .params
                .insert(m.model.clone(), m.params.clone());
        }
        let opts = file.dataset.load_options();
        self.settings.preprocess = opts.preprocess;
        self.settings.resize_images = opts.resize.is_some();
        if let Some(r) = opts.resize {
            self.settings.resize = r;
        }
        self.session.opening = Some(OpeningSession {
            path: path.to_path_buf(),
            file,
            changed: None,
        });
        self.start_load_with(source, opts);
        Ok(())
    }

    /// The session's data arrived (installed): apply its constraints and history, or ask
    /// first when the data changed since the save.
    pub(super) fn session_data_loaded(&mut self) {
        let (Some(open), Some(data)) = (self.session.opening.as_mut(), &self.session.dataset)
        else {
            return;
        };
        match open.file.check_data(&data.fingerprint) {
            DataCheck::Same => self.apply_session(),
            DataCheck::Changed(why) => {
                open.changed = Some(why);
                self.session.set_status(
                    "The data changed since the session was saved: open its constraints anyway, or stop",
                );
            }
        }
    }

    /// The answer to "the data changed": open the constraints anyway, or stop (keeping the
    /// data as loaded, with empty constraints).
    pub(super) fn resolve_session_data_changed(&mut self, open_anyway: bool) {
        if open_anyway {
            self.apply_session();
        } else if let Some(open) = self.session.opening.take() {
            self.session.set_status(format!(
                "Did not open the constraints of {}: the data changed",
                open.path.display()
            ));
        }
    }

    fn apply_session(&mut self) {
        let Some(open) = self.session.opening.take() else {
            return;
        };
        let (Some(data), Some(store)) = (self.session.dataset.clone(), self.session.store.as_mut())
        else {
            return;
        };
        let shown = open.path.display().to_string();
        let (loaded, _) = match open.file.constraints_for(&open.path, &data.fingerprint) {
            Ok(x) => x,
            Err(e) => {
                self.session
                    .set_error(format!("Could not open the session: {e}"));
                return;
            }
        };
        let what = format!("open session {shown}");
        if let Err(e) = store.replace_with(&what, loaded.triplets(), loaded.labels()) {
            self.session.set_error(format!("{shown}: {e}"));
            return;
        }
        store.mark_saved();
        self.session.constraints_rev += 1;
        self.session.session_path = Some(open.path.clone());
        let mut missing = 0;
        for r in &open.file.runs {
            let factors = match open.file.load_factors(&open.path, r.id) {
                Ok(Some(f)) => f,
                Ok(None) => WarmStart::new(
                    None,
                    ndarray::Array2::zeros((0, 0)),
                    format!("run {} (factors not saved)", r.id),
                ),
                Err(_) => {
                    missing += 1;
                    WarmStart::new(
                        None,
                        ndarray::Array2::zeros((0, 0)),
                        format!("run {} (factors missing)", r.id),
                    )
                }
            };
            let id = self.session.history.last().map_or(1, |h| h.id + 1);
            self.session.history.push(super::HistoryRow {
                id,
                model: ModelKind::from_name(&r.model)
                    .map_or_else(|| r.model.clone(), |k| k.label().to_owned()),
                params: r.params.clone(),
                seed: r.seed,
                iterations: r.iterations,
                seconds: r.seconds,
                acc: r.scores.get("acc").copied(),
                nmi: r.scores.get("nmi").copied(),
                kept: r.scores.get("kept").copied(),
                triplets: r.scores.get("triplets").map_or(0, |&t| t as usize),
                curve: super::Series::default(),
                convergence: Arc::default(),
                k: r.k,
                factors: Arc::new(factors),
                data: Some(data.fingerprint),
                dataset: super::evaluation::short_name(&data.source),
                stop: r.stop.clone(),
                snapshot: None,
                evaluation: None,
                predictions: None,
                exports: Arc::default(),
            });
        }
        let note = if missing > 0 {
            format!(" ({missing} runs' factors could not be read)")
        } else {
            String::new()
        };
        self.session.set_status(format!(
            "Opened session {shown}: {} triplets, {} labels, {} runs{note}",
            loaded.triplets().len(),
            loaded.labels().n_labelled(),
            open.file.runs.len()
        ));
    }

    /// Show the native dialog to save (`save`) or open a session, off the UI thread.
    pub(super) fn open_session_dialog(&mut self, save: bool) {
        if self.dialog_open {
            return;
        }
        let spawned = self.tasks.spawn("file-dialog", move || {
            let dialog = rfd::FileDialog::new()
                .set_title(if save { "Save session" } else { "Open session" })
                .add_filter("Session", &["json"]);
            TaskDone::SessionPicked {
                save,
                path: if save {
                    dialog.save_file()
                } else {
                    dialog.pick_file()
                },
            }
        });
        match spawned {
            Ok(()) => self.dialog_open = true,
            Err(e) => self.session.set_error(e),
        }
    }

    /// Save (to the last session file, or asking) / open at `path`, reporting on the status
    /// line.
    pub(super) fn session_file(&mut self, save: bool, path: PathBuf) {
        let shown = path.display().to_string();
        if save {
            match self.save_session(&path) {
                Ok(()) => self
                    .session
                    .set_status(format!("Saved the session to {shown}")),
                Err(e) => self
                    .session
                    .set_error(format!("Could not save the session: {e}")),
            }
        } else if let Err(e) = self.open_session(&path) {
            self.session
                .set_error(format!("Could not open the session: {e}"));
        }
    }

    /// The session dialog closed.
    pub(super) fn session_picked(&mut self, save: bool, path: Option<PathBuf>) {
        self.dialog_open = false;
        match path {
            Some(p) => self.session_file(save, p),
            None => {
                self.session
                    .set_status("No file chosen (or no system file dialog)");
                self.view.ask_path(
                    if save {
                        super::PathAsk::SaveSession
                    } else {
                        super::PathAsk::OpenSession
                    },
                    &self.session,
                );
            }
        }
    }

    /// A dataset was installed with a new store: start its journal and look for unsaved
    /// edits a killed session left for it.
    pub(super) fn start_journal(&mut self) {
        self.session.recovery_offer = None;
        self.journal = None;
        let (Some(dir), Some(store)) = (self.recovery_dir.clone(), &self.session.store) else {
            return;
        };
        let fp = store.fingerprint();
        match recovery::find(&dir, &fp) {
            Ok(found) => self.session.recovery_offer = found,
            Err(e) => self
                .session
                .set_error(format!("Unsaved edits could not be read: {e}")),
        }
        self.journal = Some(Journal::new(&dir, fp, 0));
    }

    /// Follow the store with the journal (every frame; writes only when an edit is due).
    /// Held while a recovery offer is open, so the offered file is not overwritten.
    pub(super) fn sync_journal(&mut self) {
        if self.session.recovery_offer.is_some() {
            return;
        }
        let (Some(journal), Some(store)) = (self.journal.as_mut(), &self.session.store) else {
            return;
        };
        if journal.fingerprint() != store.fingerprint() {
            return;
        }
        match journal.sync(store, Instant::now()) {
            Ok(Some(wait)) => self.ctx.request_repaint_after(wait),
            Ok(None) => {}
            Err(e) => {
                if !self.session.status.is_error {
                    self.session.set_error(format!(
                        "Cannot journal unsaved edits to {}: {e}",
                        journal.path().display()
                    ));
                }
            }
        }
    }

    /// The answer to "Recover N unsaved edits": bring them back (one undo step, unsaved) or
    /// discard the file.
    pub(super) fn resolve_recovery(&mut self, recover: bool) {
        let Some(found) = self.session.recovery_offer.take() else {
            return;
        };
        let fp = found.store.fingerprint();
        if !recover {
            if let Some(dir) = &self.recovery_dir {
                let _ = recovery::discard(dir, &fp);
            }
            self.session.set_status("Discarded the unsaved edits");
            return;
        }
        let Some(store) = self.session.store.as_mut() else {
            return;
        };
        let what = format!("recover {} unsaved edits", found.edits);
        match store.replace_with(&what, found.store.triplets(), found.store.labels()) {
            Ok(()) => {
                self.session.constraints_rev += 1;
                if let Some(dir) = &self.recovery_dir {
                    self.journal = Some(Journal::new(dir, fp, found.edits));
                }
                self.session.set_status(format!(
                    "Recovered {} ({}, {}); save to keep them",
                    counted(found.edits as usize, "unsaved edit", "unsaved edits"),
                    counted(found.store.triplets().len(), "triplet", "triplets"),
                    counted(found.store.labels().n_labelled(), "label", "labels")
                ));
                self.sync_journal();
            }
            Err(e) => self.session.set_error(format!("Could not recover: {e}")),
        }
    }
}
