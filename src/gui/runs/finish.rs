//! A finished run: it joins the history and is evaluated on a background task (the
//! evaluation stages of the engine's trial, off the UI thread); the history can be written
//! as CSV.

use super::Evaluated;
use crate::engine::eval::EvalProgress;
use crate::engine::jobs::experiment::StopReason;
use crate::engine::jobs::trial::FitView;
use crate::engine::models::{WarmStart, params_string};
use crate::gui::evaluation::{EvalInput, evaluate, short_name};
use crate::gui::feature::{Event, Shared};
use crate::gui::state::{Evaluation, HistoryRow, Series};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

/// Apply worker events (within the frame's budget) and what they call for: the status
/// line, the scatter, the history and evaluation of a finished run.
pub(super) fn drain(app: &mut Shared<'_>, deadline: Instant) {
    let n = app.session.dataset.as_ref().map(|d| d.n());
    let drained = app.run.drain(n, deadline);
    if drained.snapshot_changed {
        app.redraw_scatter();
    }
    if let Some(status) = drained.status {
        app.session.status = status;
    }
    if drained.finished {
        run_finished(app);
    }
}

/// Add the finished run to the history and start its evaluation on a background thread.
fn run_finished(app: &mut Shared<'_>) {
    let s = &mut app.session;
    let Some(result) = &app.run.result else {
        return;
    };
    let fit = FitView::of(result);
    let id = s.history.last().map_or(1, |r| r.id + 1);
    let mut curve = Series::default();
    for (it, &v) in fit.record.objective.iter().enumerate() {
        curve.push(it + 1, v);
    }
    let mut params = format!("k={}", fit.spec.k);
    let resolved = fit.spec.resolved_params();
    if !resolved.is_empty() {
        let _ = write!(params, " {}", params_string(&resolved, " "));
    }
    let side = app.run.side.as_deref();
    s.history.push(HistoryRow {
        id,
        model: fit.spec.kind.label().to_owned(),
        params,
        seed: fit.spec.seed,
        iterations: fit.record.iterations(),
        seconds: fit.record.seconds,
        acc: None,
        nmi: None,
        kept: None,
        triplets: side.map_or(0, |side| side.triplets.len()),
        curve,
        convergence: Arc::new(app.run.convergence.clone()),
        k: fit.spec.k,
        factors: Arc::new(WarmStart::new(
            fit.w.cloned(),
            fit.h.clone(),
            format!("run {id}"),
        )),
        data: s.dataset.as_ref().map(|d| d.fingerprint),
        dataset: s
            .dataset
            .as_ref()
            .map_or_else(String::new, |d| short_name(&d.source)),
        preprocess: s.dataset.as_ref().map(|d| d.preprocess),
        stop: match fit.stop {
            StopReason::Converged => "converged".to_owned(),
            StopReason::MaxIter => "iteration cap".to_owned(),
            StopReason::Cancelled => {
                format!("stopped at iteration {}", fit.record.iterations())
            }
        },
        snapshot: app.run.snapshot.clone(),
        evaluation: None,
        predictions: fit.predictions.cloned(),
        exports: Arc::new(fit.exports.to_vec()),
    });
    app.events.push(Event::HistoryChanged);
    s.shown_run = Some(id);
    let data = s.dataset.as_ref();
    let input = EvalInput {
        run: id,
        h: fit.h.clone(),
        assignments: fit.assignments.map(<[usize]>::to_vec),
        labels: data.and_then(|d| d.labels.clone()),
        n_classes: data.map_or(0, |d| d.n_classes()),
        triplets: side.map(|side| side.triplets.clone()).unwrap_or_default(),
        seed: fit.spec.seed,
        restarts: app.settings.kmeans_restarts.max(1),
        svm: app.settings.svm,
        predictions: fit.predictions.cloned(),
        known: side.map(|side| side.labels.clone()).unwrap_or_default(),
        data: s.dataset.clone(),
        progress: Arc::new(EvalProgress::default()),
    };
    s.eval_progress = Arc::clone(&input.progress);
    let spawned = app
        .tasks
        .spawn("evaluate", move || Evaluated(Box::new(evaluate(&input))));
    match spawned {
        Ok(()) => s.evaluating = Some(id),
        Err(e) => s.set_error(e),
    }
}

/// An evaluation arrived: keep it if it belongs to the run being evaluated.
pub(super) fn evaluated(ev: Evaluation, app: &mut Shared<'_>) {
    let s = &mut app.session;
    if s.evaluating != Some(ev.run) {
        return; // a newer run replaced it
    }
    s.evaluating = None;
    if let Some(row) = s.history.iter_mut().find(|r| r.id == ev.run) {
        row.acc = ev.clustering.as_ref().map(|c| c.acc.mean);
        row.nmi = ev.clustering.as_ref().map(|c| c.nmi_sqrt.mean);
        row.kept = ev.kept_h;
    }
    app.events.push(Event::HistoryChanged);
    let ev = Arc::new(ev);
    if let Some(row) = s.history.iter_mut().find(|r| r.id == ev.run) {
        row.evaluation = Some(Arc::clone(&ev));
    }
    // Another run brought back with "show" meanwhile keeps the screen.
    if s.shown_run.is_some_and(|id| id != ev.run) {
        return;
    }
    s.evaluation = Some(ev);
    // The status line keeps the run's "Finished" message; the scores are in the panel.
    app.view.rebuild_scatter(
        s.dataset.as_deref(),
        app.run.snapshot.as_deref(),
        s.x_view.as_deref(),
        s.evaluation.as_deref(),
    );
}
