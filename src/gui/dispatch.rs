//! Applying what the frame produced: the panels' [`UiCommand`]s and the results of finished
//! background tasks. Both matches are exhaustive on purpose (no catch-all arm), so a new
//! command or task cannot compile without saying what it does.

use eframe::egui;

use super::command::{FileAction, PathAsk};
use super::state::{ColorBy, Convergence, Status};
use super::{App, DataSource, TaskDone, UiCommand};
use crate::engine::constraints::Store;
use std::sync::Arc;

impl App {
    /// Apply every command the panels pushed this frame, in order.
    pub(super) fn apply_commands(&mut self) {
        for cmd in self.commands.take() {
            self.apply(cmd);
        }
    }

    fn apply(&mut self, cmd: UiCommand) {
        match cmd {
            UiCommand::LoadPath(p) => self.load_typed_path(p),
            UiCommand::LoadSample(s) => self.request_load(DataSource::Sample(s)),
            UiCommand::Reload => self.reload(),
            UiCommand::SetLabels(choice) => self.set_labels(choice),
            UiCommand::OpenFileDialog => self.open_dialog(false),
            UiCommand::OpenFolderDialog => self.open_dialog(true),
            UiCommand::Run => self.start_run(None),
            UiCommand::ContinueRun(id) => self.start_run(Some(id)),
            UiCommand::ShowRun(id) => self.show_run(id),
            UiCommand::Pause => {
                let status = self.run.pause();
                self.show(status);
            }
            UiCommand::Resume => {
                let status = self.run.resume();
                self.show(status);
            }
            UiCommand::Stop => {
                let status = self.run.stop();
                self.show(status);
            }
            UiCommand::Step => self.step(),
            UiCommand::ResetRun => self.reset_run(),
            UiCommand::SetRate(rate) => {
                self.view.explore.rate = rate;
                self.run.set_rate(rate);
            }
            UiCommand::SetDark(dark) => {
                self.settings.dark = dark;
                super::style::set_theme(&self.ctx, dark);
            }
            UiCommand::Quit => {
                if self.session.has_unsaved_constraints() && !self.allow_close {
                    self.session.pending = Some(super::Pending::Quit);
                } else {
                    self.ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                }
            }
            UiCommand::AddTriplet(t) => {
                self.edit(|st| st.add_triplet(t).map(|()| format!("Added triplet {t}")));
            }
            UiCommand::RemoveTriplet(t) => {
                self.edit(|st| {
                    st.remove_triplet(t)
                        .map(|()| format!("Removed triplet {t}"))
                });
            }
            UiCommand::PaintLabels(samples) => self.paint_labels(&samples),
            UiCommand::ClearLabels(samples) => self.edit(|st| {
                st.set_labels(&samples, None)
                    .map(|()| format!("Cleared the labels of {} samples", samples.len()))
            }),
            UiCommand::Undo => self.undo_redo(Store::undo, "Undid", "Nothing to undo"),
            UiCommand::Redo => self.undo_redo(Store::redo, "Redid", "Nothing to redo"),
            UiCommand::SaveConstraints(path) => {
                match path.or_else(|| self.session.constraints_path.clone()) {
                    Some(p) => self.constraint_file(FileAction::Save, p),
                    None => self
                        .view
                        .ask_path(PathAsk::Constraints(FileAction::Save), &self.session),
                }
            }
            UiCommand::LoadConstraints(p) => self.constraint_file(FileAction::Load, p),
            UiCommand::ImportTripletsCsv(p) => self.constraint_file(FileAction::ImportCsv, p),
            UiCommand::ExportTripletsCsv(p) => self.constraint_file(FileAction::ExportCsv, p),
            UiCommand::ConstraintsDialog(action) => self.open_constraints_dialog(action),
            UiCommand::GenerateTriplets { opts, from_truth } => {
                self.start_generate(opts, from_truth);
            }
            UiCommand::RevealLabels { fraction, seed } => self.reveal(fraction, seed),
            UiCommand::ResolvePending(r) => self.resolve_pending(r),
            UiCommand::ExportHistory(p) => self.export_history(&p),
            UiCommand::SaveSession(path) => {
                match path.or_else(|| self.session.session_path.clone()) {
                    Some(p) => self.session_file(true, p),
                    None => self.view.ask_path(PathAsk::SaveSession, &self.session),
                }
            }
            UiCommand::OpenSession(p) => {
                if self.session.has_unsaved_constraints() {
                    self.session.pending = Some(super::Pending::Session(p));
                } else {
                    self.session_file(false, p);
                }
            }
            UiCommand::SessionDialog(save) => self.open_session_dialog(save),
            UiCommand::AskPath(ask) => self.view.ask_path(ask, &self.session),
            UiCommand::SessionDataChanged(open) => self.resolve_session_data_changed(open),
            UiCommand::Recover(recover) => self.resolve_recovery(recover),
        }
    }

    /// Apply the result of a finished background task.
    pub(super) fn task_done(&mut self, done: TaskDone) {
        match done {
            TaskDone::Loaded {
                ticket,
                source,
                result,
                seconds,
            } => self.loaded(ticket, source, result, seconds),
            TaskDone::Picked(path) => self.picked(path),
            TaskDone::SessionPicked { save, path } => self.session_picked(save, path),
            TaskDone::ConstraintsPicked(action, path) => self.constraints_picked(action, path),
            TaskDone::Generated {
                fingerprint,
                source,
                seed,
                result,
            } => {
                self.session.generating = false;
                self.generated(fingerprint, source, seed, result);
            }
            TaskDone::Evaluated(ev) => self.evaluated(*ev),
            TaskDone::DataProjected {
                fingerprint,
                result,
            } => self.data_projected(fingerprint, result),
            TaskDone::Panicked { task, message } => self.task_panicked(&task, &message),
        }
    }

    /// A background task panicked: clear the flag that shows it busy, and say so.
    fn task_panicked(&mut self, task: &str, message: &str) {
        let s = &mut self.session;
        match task {
            "loader" => {
                s.loading = None;
                s.labels_pending = None;
                s.load_error = Some(format!("The loader stopped unexpectedly: {message}"));
            }
            "file-dialog" => self.dialog_open = false,
            "evaluate" => s.evaluating = None,
            "generate" => s.generating = false,
            _ => {}
        }
        self.session.set_error(format!(
            "The {task} task stopped unexpectedly (a bug: please report it): {message}"
        ));
    }

    /// The PCA-2D of X arrived: keep it for the scatter before (and between) runs, unless
    /// another dataset was loaded meanwhile.
    fn data_projected(
        &mut self,
        fingerprint: crate::engine::data::Fingerprint,
        result: Result<ndarray::Array2<f64>, String>,
    ) {
        let Some(data) = self.session.dataset.clone() else {
            return;
        };
        if data.fingerprint != fingerprint {
            return;
        }
        match result {
            Ok(projection) => {
                self.session.x_view =
                    Some(std::sync::Arc::new(crate::engine::jobs::worker::Snapshot {
                        iteration: 0,
                        h: ndarray::Array2::zeros((2, 0)),
                        projection,
                        outputs: Default::default(),
                        w: None,
                    }));
                if self.run.snapshot.is_none() {
                    self.view.rebuild_scatter(
                        Some(&data),
                        None,
                        self.session.x_view.as_deref(),
                        None,
                    );
                }
            }
            Err(e) => self.session.set_status(format!("PCA of X: {e}")),
        }
    }

    /// Start a run with the current settings, replacing any running one; with `from`, start
    /// from that history run's factors and rank. Refusals (no data, invalid settings, missing
    /// triplets, factors of another dataset) go to the status line.
    pub(super) fn start_run(&mut self, from: Option<u64>) {
        let Some((data, mut spec)) = self.parts().1.data_and_spec() else {
            return;
        };
        if let Some(id) = from {
            let Some(row) = self.session.history.iter().find(|r| r.id == id) else {
                self.session
                    .set_error(format!("Run {id} is not in the history"));
                return;
            };
            if row.data != Some(data.fingerprint) {
                self.session.set_error(format!(
                    "Cannot continue run {id}: it was fitted on another dataset"
                ));
                return;
            }
            spec.k = row.k;
            spec.init = Some(Arc::clone(&row.factors));
        }
        if let Err(e) = spec.validate(data.m(), data.n()) {
            self.session.set_error(format!("Cannot run: {e}"));
            return;
        }
        let Some(side) = self.parts().1.side_for(spec.kind) else {
            return;
        };
        // A classifier's run is watched by its predictions spreading (issue 19): colour by
        // them from the first frame unless the user chose another colouring; back to the
        // truth for a model that predicts nothing.
        let predicts = spec.kind.output() == crate::engine::models::Output::ClassPredictions;
        match self.view.color_by {
            ColorBy::Truth if predicts => self.view.color_by = ColorBy::Predicted,
            ColorBy::Predicted if !predicts => self.view.color_by = ColorBy::Truth,
            _ => {}
        }
        self.clear_run();
        let fit = self.settings.fit_options();
        let status = self.run.start(data, spec, fit, Arc::clone(&side));
        self.session.status = status;
    }

    /// Forget everything about the previous run (new run or new dataset): its live state, what
    /// was drawn of it, and its evaluation.
    pub(super) fn clear_run(&mut self) {
        self.run.clear();
        self.view.clear_run();
        self.session.evaluating = None;
        self.session.evaluation = None;
        self.session.shown_run = None;
        // Back to the data's own picture until the next run's first snapshot.
        self.view.rebuild_scatter(
            self.session.dataset.as_deref(),
            None,
            self.session.x_view.as_deref(),
            None,
        );
    }

    /// Put history row `id`'s last frame and scores back on the scatter and the results
    /// panel; refused while a run is active (its frames would replace them).
    fn show_run(&mut self, id: u64) {
        if self.run.worker.is_active() {
            self.session
                .set_error("A run is active: stop it or let it finish to show another run");
            return;
        }
        let Some(row) = self.session.history.iter().find(|r| r.id == id) else {
            return;
        };
        let here = self.session.dataset.as_ref().map(|d| d.fingerprint);
        if row.data != here {
            let msg = format!(
                "Run {id} was fitted on {}, not on the loaded data: load that dataset to see it",
                row.dataset
            );
            self.session.set_error(msg);
            return;
        }
        let (snapshot, evaluation) = (row.snapshot.clone(), row.evaluation.clone());
        let convergence = Convergence::clone(&row.convergence);
        let msg = format!("Showing run {id} ({}, {})", row.model, row.stop);
        self.run.snapshot = snapshot;
        // Its own curves: the plot and the exported figures follow the run on screen.
        self.run.convergence = convergence;
        self.session.shown_run = Some(id);
        self.session.evaluation = evaluation;
        self.session.kept = None;
        self.view.rebuild_scatter(
            self.session.dataset.as_deref(),
            self.run.snapshot.as_deref(),
            self.session.x_view.as_deref(),
            self.session.evaluation.as_deref(),
        );
        self.session.set_status(msg);
    }

    /// Show `status` on the status line, when there is one.
    fn show(&mut self, status: Option<Status>) {
        if let Some(status) = status {
            self.session.status = status;
        }
    }
}
