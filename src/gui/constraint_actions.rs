//! Carrying out constraint commands: every edit goes through the dataset's [`Store`] (one undo
//! step each), files are read and written by the engine's `io`, triplet generation runs on a
//! background thread, and unsaved constraints are never dropped without asking.

use super::{App, DataSource, FileAction, Pending, Resolution, TaskDone};
use crate::engine::constraints::io as cio;
use crate::engine::constraints::{
    Generated, ProtocolOptions, Store, generate_triplets, labels_from_truth, reveal_stratified,
};
use crate::engine::data::Fingerprint;
use crate::engine::eval::triplets_satisfied;
use crate::gui::state::KeptCache;
use std::path::PathBuf;
use std::sync::Arc;

impl App {
    /// Load a dataset, first asking about unsaved constraints.
    pub(super) fn request_load(&mut self, source: DataSource) {
        if self.session.has_unsaved_constraints() {
            self.session.pending = Some(Pending::Load(source));
        } else {
            self.start_load(source);
        }
    }

    /// Recompute which triplets H keeps when the snapshot or the triplets changed (once per
    /// snapshot, O(|T| k); never per frame).
    pub(super) fn update_kept(&mut self) {
        let s = &mut self.session;
        let (Some(snap), Some(store)) = (&self.run.snapshot, &s.store) else {
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
    pub(super) fn paint_labels(&mut self, samples: &[usize]) {
        let name = self.view.paint_class.trim().to_owned();
        if name.is_empty() {
            self.session
                .set_error("Type a class name (or pick one) before painting labels");
            return;
        }
        self.edit(|st| {
            st.label_as(samples, &name)
                .map(|_| format!("Labelled {} samples as `{name}`", samples.len()))
        });
    }

    /// Undo or redo (`step`) one constraint edit; the status line says what changed.
    pub(super) fn undo_redo(
        &mut self,
        step: fn(&mut Store) -> Option<String>,
        done: &str,
        nothing: &str,
    ) {
        match self.session.store.as_mut().and_then(step) {
            Some(what) => {
                self.session.constraints_rev += 1;
                self.session.set_status(format!("{done}: {what}"));
            }
            None => self.session.set_status(nothing),
        }
    }

    /// Run one store edit; its message (or refusal) goes to the status line.
    pub(super) fn edit(
        &mut self,
        f: impl FnOnce(&mut Store) -> Result<String, crate::engine::constraints::ConstraintError>,
    ) {
        let Some(store) = self.session.store.as_mut() else {
            self.session.set_error("Load a dataset first");
            return;
        };
        match f(store) {
            Ok(msg) => {
                self.session.constraints_rev += 1;
                self.session.set_status(msg);
            }
            Err(e) => self.session.set_error(format!("Refused: {e}")),
        }
    }

    /// Show the native dialog for a constraint file action, off the UI thread; the choice
    /// arrives as [`TaskDone::ConstraintsPicked`].
    pub(super) fn open_constraints_dialog(&mut self, action: FileAction) {
        if self.dialog_open {
            return;
        }
        let spawned = self.tasks.spawn("file-dialog", move || {
            let (title, json) = match action {
                FileAction::Save => ("Save constraints", true),
                FileAction::Load => ("Load constraints", true),
                FileAction::ImportCsv => ("Import triplets (CSV)", false),
                FileAction::ExportCsv => ("Export triplets (CSV)", false),
            };
            let dialog = rfd::FileDialog::new().set_title(title);
            let dialog = if json {
                dialog.add_filter("Constraints", &["json"])
            } else {
                dialog.add_filter("CSV", &["csv"])
            };
            let picked = match action {
                FileAction::Save | FileAction::ExportCsv => dialog.save_file(),
                FileAction::Load | FileAction::ImportCsv => dialog.pick_file(),
            };
            TaskDone::ConstraintsPicked(action, picked)
        });
        match spawned {
            Ok(()) => self.dialog_open = true,
            Err(e) => self.session.set_error(e),
        }
    }

    /// The constraint file dialog closed, with a path or cancelled.
    pub(super) fn constraints_picked(&mut self, action: FileAction, path: Option<PathBuf>) {
        self.dialog_open = false;
        match path {
            Some(p) => {
                self.view.constraints_path_input = p.display().to_string();
                self.constraint_file(action, p);
            }
            None => {
                self.save_then_resume = false;
                self.session
                    .set_status("No file chosen (or no system file dialog): type the path instead");
            }
        }
    }

    /// Save, load, import or export at `path`; errors name the file and the place.
    pub(super) fn constraint_file(&mut self, action: FileAction, path: PathBuf) {
        let Some(data) = self.session.dataset.clone() else {
            self.session.set_error("Load a dataset first");
            return;
        };
        let Some(store) = self.session.store.as_mut() else {
            return;
        };
        let shown = path.display().to_string();
        match action {
            FileAction::Save => match cio::save_json(store, &path) {
                Ok(()) => {
                    self.session.constraints_path = Some(path);
                    self.session
                        .set_status(format!("Saved constraints to {shown}"));
                    if std::mem::take(&mut self.save_then_resume) {
                        self.resume_pending();
                    }
                }
                Err(e) => {
                    self.save_then_resume = false;
                    self.session.set_error(format!("Could not save: {e}"));
                }
            },
            FileAction::Load => match cio::load_json(&path, &data.fingerprint) {
                Ok(loaded) => {
                    let what = format!("load constraints from {shown}");
                    let r = store.replace_with(&what, loaded.triplets(), loaded.labels());
                    match r {
                        Ok(()) => {
                            store.mark_saved();
                            self.session.constraints_rev += 1;
                            self.session.constraints_path = Some(path);
                            self.session.set_status(format!(
                                "Loaded {} triplets and {} labels from {shown} (Ctrl+Z undoes)",
                                loaded.triplets().len(),
                                loaded.labels().n_labelled()
                            ));
                        }
                        Err(e) => self.session.set_error(format!("{shown}: {e}")),
                    }
                }
                Err(e) => self.session.set_error(format!("Could not load: {e}")),
            },
            FileAction::ImportCsv => match cio::import_triplets_csv(&path, &data) {
                Ok(ts) => {
                    let new: Vec<_> = ts.into_iter().filter(|t| !store.contains(t)).collect();
                    let what = format!("import {} triplets from {shown}", new.len());
                    match store.add_triplets(&what, new) {
                        Ok(k) => {
                            self.session.constraints_rev += 1;
                            self.session
                                .set_status(format!("Imported {k} new triplets from {shown}"));
                        }
                        Err(e) => self.session.set_error(format!("{shown}: {e}")),
                    }
                }
                Err(e) => self.session.set_error(format!("Could not import: {e}")),
            },
            FileAction::ExportCsv => {
                let count = store.triplets().len();
                match cio::export_triplets_csv(store.triplets(), &path) {
                    Ok(()) => self
                        .session
                        .set_status(format!("Exported {count} triplets to {shown}")),
                    Err(e) => self.session.set_error(format!("Could not export: {e}")),
                }
            }
        }
    }

    /// Generate triplets by the protocol on a background thread (kNN of X is O(n² m)).
    pub(super) fn start_generate(&mut self, opts: ProtocolOptions, from_truth: bool) {
        if self.session.generating {
            return;
        }
        let (Some(data), Some(store)) = (self.session.dataset.clone(), &self.session.store) else {
            self.session.set_error("Load a dataset first");
            return;
        };
        let labels: Vec<Option<usize>> = if from_truth {
            match &data.labels {
                Some(truth) => labels_from_truth(truth),
                None => {
                    self.session.set_error(
                        "This dataset has no ground-truth labels: generate from painted labels \
                         (or only kNN-based triplets are made)",
                    );
                    return;
                }
            }
        } else if store.labels().n_labelled() == 0 {
            Vec::new()
        } else {
            store.labels().as_slice().to_vec()
        };
        let existing = store.triplets().to_vec();
        let fingerprint = data.fingerprint;
        let source = if from_truth {
            "ground truth"
        } else {
            "painted labels"
        };
        let spawned = self.tasks.spawn("generate", move || {
            let result = generate_triplets(data.x.view(), &labels, &opts, &existing)
                .map_err(|e| e.to_string());
            TaskDone::Generated {
                fingerprint,
                source,
                seed: opts.seed,
                result,
            }
        });
        match spawned {
            Ok(()) => {
                self.session.generating = true;
                self.session
                    .set_status(format!("Generating triplets from the {source}…"));
            }
            Err(e) => self.session.set_error(e),
        }
    }

    /// Add generated triplets as one undo step.
    pub(super) fn generated(
        &mut self,
        fingerprint: Fingerprint,
        source: &str,
        seed: u64,
        result: Result<Generated, String>,
    ) {
        let g = match result {
            Ok(g) => g,
            Err(e) => {
                self.session
                    .set_error(format!("Could not generate triplets: {e}"));
                return;
            }
        };
        let Some(store) = self.session.store.as_mut() else {
            return;
        };
        if store.fingerprint() != fingerprint {
            self.session
                .set_status("Generated triplets dropped: another dataset was loaded meanwhile");
            return;
        }
        // Triplets added by hand while generating are skipped, not refused.
        let new: Vec<_> = g
            .triplets
            .iter()
            .copied()
            .filter(|t| !store.contains(t))
            .collect();
        let what = format!(
            "generate {} triplets ({} anchors, seed {seed}, from the {source})",
            new.len(),
            g.anchors.len()
        );
        match store.add_triplets(&what, new) {
            Ok(k) => {
                self.session.constraints_rev += 1;
                let short = if g.shortfall > 0 {
                    format!(", {} could not be drawn", g.shortfall)
                } else {
                    String::new()
                };
                self.session.set_status(format!(
                    "Generated {k} triplets ({} from labels, {} from the 5-NN graph, {} anchors){short}",
                    g.label_based,
                    g.neighbour_based,
                    g.anchors.len()
                ));
            }
            Err(e) => self
                .session
                .set_error(format!("Could not add the triplets: {e}")),
        }
    }

    pub(super) fn reveal(&mut self, fraction: f64, seed: u64) {
        let Some(data) = self.session.dataset.clone() else {
            self.session.set_error("Load a dataset first");
            return;
        };
        let Some(truth) = &data.labels else {
            self.session
                .set_error("This dataset has no ground-truth labels to reveal");
            return;
        };
        // Stratified, as `run --reveal P` draws it: every class gets its share (at least one
        // sample), so a small budget never leaves a class without a training sample.
        let pairs: Vec<(usize, usize)> = match reveal_stratified(truth, fraction, seed) {
            Ok(given) => given
                .iter()
                .enumerate()
                .filter_map(|(i, c)| c.map(|c| (i, c)))
                .collect(),
            Err(e) => {
                self.session.set_error(format!("Cannot reveal labels: {e}"));
                return;
            }
        };
        let names = data.class_names.clone();
        let pct = fraction * 100.0;
        self.edit(|st| {
            let what = format!("reveal the labels of {} samples ({pct:.0} %)", pairs.len());
            st.transaction(&what, |tx| {
                for &(i, c) in &pairs {
                    let name = names
                        .get(c)
                        .cloned()
                        .unwrap_or_else(|| format!("class {c}"));
                    let class = tx.class_named(&name)?;
                    tx.set_label(i, Some(class))?;
                }
                Ok(())
            })
            .map(|()| format!("Revealed the true labels of {} samples", pairs.len()))
        });
    }

    pub(super) fn resolve_pending(&mut self, r: Resolution) {
        match r {
            Resolution::Cancel => {
                self.session.pending = None;
                self.save_then_resume = false;
                self.session
                    .set_status("Kept the constraints; nothing was loaded or closed");
            }
            Resolution::Discard => {
                if let Some(store) = self.session.store.as_mut() {
                    store.mark_saved();
                }
                self.resume_pending();
            }
            Resolution::Save => {
                let typed = self.view.constraints_path_input.trim();
                let path = self
                    .session
                    .constraints_path
                    .clone()
                    .or_else(|| (!typed.is_empty()).then(|| PathBuf::from(typed)));
                self.save_then_resume = true;
                match path {
                    Some(p) => self.constraint_file(FileAction::Save, p),
                    None => self
                        .view
                        .ask_path(super::PathAsk::Constraints(FileAction::Save), &self.session),
                }
            }
        }
    }

    /// Carry out the held-back action (constraints are saved or discarded by now).
    fn resume_pending(&mut self) {
        match self.session.pending.take() {
            Some(Pending::Load(source)) => self.start_load(source),
            Some(Pending::Session(path)) => self.session_file(false, path),
            Some(Pending::Quit) => {
                self.allow_close = true;
                self.ctx
                    .send_viewport_cmd(eframe::egui::ViewportCommand::Close);
            }
            None => {}
        }
    }
}
