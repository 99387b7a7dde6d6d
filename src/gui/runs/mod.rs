//! The live run and the run history: start, continue, pause, step and stop a run through the
//! [`RunController`](crate::gui::run_controller::RunController); apply its events every
//! frame within a small budget; add a finished run to the history and evaluate it on a
//! background task ([`finish`]); bring a history run back on screen. Its panel is the
//! model's controls at the top of the right panel ([`panel`]).

mod finish;
mod panel;

pub use panel::{MAX_ITER_CAP, ModelGroup, ParamEdit, hyperparameter_row};

use super::command::Addressed;
use super::feature::{Feature, Place, Shared, TaskPanicked};
use super::state::{ColorBy, Convergence, Evaluation, Status, WorkerState};
use std::any::Any;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The name its messages are addressed to.
const NAME: &str = "runs";

/// How long `logic` may spend draining worker events per frame.
const DRAIN_BUDGET: Duration = Duration::from_millis(5);

/// The evaluation of a finished run (tagged inside with the run's history id).
struct Evaluated(Box<Evaluation>);

impl Addressed for Evaluated {
    const FEATURE: &'static str = NAME;
}

/// What the model's controls, the shortcuts, the history table and the teaching controls
/// ask of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Start a run with the current settings, replacing any running one.
    Run,
    Pause,
    Resume,
    Stop,
    /// Bring a history row's scatter and scores back (when no run is active).
    Show(u64),
    /// Start a run of the selected model from this history run's factors (its rank, its W
    /// and H; docs/models.md §10.6).
    Continue(u64),
    /// One iteration of the current run, then hold (a new held run when none is active).
    Step,
    /// Start the selected model again from the same start (seed), held at its start.
    Reset,
}

impl Addressed for Command {
    const FEATURE: &'static str = NAME;
}

/// The feature (its state is the shared run controller and history).
#[derive(Debug, Default)]
pub struct Runs;

impl Feature for Runs {
    fn name(&self) -> &'static str {
        NAME
    }

    fn logic(&mut self, app: &mut Shared<'_>) {
        finish::drain(app, Instant::now() + DRAIN_BUDGET);
        app.run.reap();
    }

    fn on_message(&mut self, msg: Box<dyn Any + Send>, app: &mut Shared<'_>) {
        let msg = match msg.downcast::<Evaluated>() {
            Ok(ev) => return finish::evaluated(*ev.0, app),
            Err(msg) => msg,
        };
        let msg = match msg.downcast::<Command>() {
            Ok(cmd) => return command(*cmd, app),
            Err(msg) => msg,
        };
        if let Ok(p) = msg.downcast::<TaskPanicked>() {
            app.session.evaluating = None;
            app.session.set_error(format!(
                "The evaluate task stopped unexpectedly (a bug: please report it): {}",
                p.0
            ));
        }
    }

    fn ui(&mut self, place: Place, ui: &mut eframe::egui::Ui, app: &mut Shared<'_>) {
        if place == Place::Right {
            panel::show(
                ui,
                app.settings,
                app.session,
                app.run,
                app.view,
                app.commands,
            );
        }
    }

    crate::feature_any!();
}

/// Carry out one of its own commands.
fn command(cmd: Command, app: &mut Shared<'_>) {
    match cmd {
        Command::Run => start_run(None, app),
        Command::Pause => {
            let status = app.run.pause();
            show(status, app);
        }
        Command::Resume => {
            let status = app.run.resume();
            show(status, app);
        }
        Command::Stop => {
            let status = app.run.stop();
            show(status, app);
        }
        Command::Show(id) => show_run(id, app),
        Command::Continue(id) => start_run(Some(id), app),
        Command::Step => {
            if app.run.worker.is_active() {
                let status = app.run.step();
                show(status, app);
            } else {
                reset_run(app);
            }
        }
        Command::Reset => reset_run(app),
    }
}

/// Start a run with the current settings, replacing any running one; with `from`, start
/// from that history run's factors and rank. Refusals (no data, invalid settings, missing
/// triplets, factors of another dataset) go to the status line.
fn start_run(from: Option<u64>, app: &mut Shared<'_>) {
    let Some((data, mut spec)) = app.data_and_spec() else {
        return;
    };
    if let Some(id) = from {
        let Some(row) = app.session.history.iter().find(|r| r.id == id) else {
            app.session
                .set_error(format!("Run {id} is not in the history"));
            return;
        };
        if row.data != Some(data.fingerprint) {
            app.session.set_error(format!(
                "Cannot continue run {id}: it was fitted on another dataset"
            ));
            return;
        }
        spec.k = row.k;
        spec.init = Some(Arc::clone(&row.factors));
    }
    if let Err(e) = spec.validate(data.m(), data.n()) {
        app.session.set_error(format!("Cannot run: {e}"));
        return;
    }
    let Some(side) = app.side_for(spec.kind) else {
        return;
    };
    // A classifier's run is watched by its predictions spreading: colour by them from the
    // first frame unless the user chose another colouring; back to the truth for a model
    // that predicts nothing.
    let predicts = spec.kind.output() == crate::engine::models::Output::ClassPredictions;
    match app.view.color_by {
        ColorBy::Truth if predicts => app.view.color_by = ColorBy::Predicted,
        ColorBy::Predicted if !predicts => app.view.color_by = ColorBy::Truth,
        _ => {}
    }
    app.clear_run();
    let fit = app.settings.fit_options();
    let status = app.run.start(data, spec, fit, Arc::clone(&side));
    app.session.status = status;
}

/// The selected model from the same start (seed), held after its first iteration.
fn reset_run(app: &mut Shared<'_>) {
    app.run.hold_start = true;
    start_run(None, app);
    app.run.hold_start = false;
    if app.run.worker == WorkerState::Paused && app.run.job_id.is_some() {
        app.session.set_status(format!(
            "Reset to the start (seed {}): Step for one iteration, Space runs",
            app.settings.seed
        ));
    }
}

/// Put history row `id`'s last frame and scores back on the scatter and the results panel;
/// refused while a run is active (its frames would replace them).
fn show_run(id: u64, app: &mut Shared<'_>) {
    if app.run.worker.is_active() {
        app.session
            .set_error("A run is active: stop it or let it finish to show another run");
        return;
    }
    let Some(row) = app.session.history.iter().find(|r| r.id == id) else {
        return;
    };
    let here = app.session.dataset.as_ref().map(|d| d.fingerprint);
    if row.data != here {
        let msg = format!(
            "Run {id} was fitted on {}, not on the loaded data: load that dataset to see it",
            row.dataset
        );
        app.session.set_error(msg);
        return;
    }
    let (snapshot, evaluation) = (row.snapshot.clone(), row.evaluation.clone());
    let convergence = Convergence::clone(&row.convergence);
    let msg = format!("Showing run {id} ({}, {})", row.model, row.stop);
    app.run.snapshot = snapshot;
    // Its own curves: the plot and the exported figures follow the run on screen.
    app.run.convergence = convergence;
    app.session.shown_run = Some(id);
    app.session.evaluation = evaluation;
    app.session.kept = None;
    app.redraw_scatter();
    app.session.set_status(msg);
}

/// Show `status` on the status line, when there is one.
fn show(status: Option<Status>, app: &mut Shared<'_>) {
    if let Some(status) = status {
        app.session.status = status;
    }
}
