//! Applying an opened session once its data is installed: its constraints (one undo step,
//! saved) and its run history (factors read back where they were saved).

use crate::engine::files::session::DataCheck;
use crate::engine::models::{ModelKind, WarmStart};
use crate::gui::evaluation::short_name;
use crate::gui::feature::{Event, Shared};
use crate::gui::state::{HistoryRow, Series};
use std::sync::Arc;

/// The session's data arrived (installed): apply its constraints and history, or ask
/// first when the data changed since the save.
pub(super) fn data_loaded(app: &mut Shared<'_>) {
    let (Some(open), Some(data)) = (app.session.opening.as_mut(), &app.session.dataset) else {
        return;
    };
    match open.file.check_data(&data.fingerprint) {
        DataCheck::Same => apply_session(app),
        DataCheck::Changed(why) => {
            open.changed = Some(why);
            app.session.set_status(
                "The data changed since the session was saved: open its constraints anyway, or stop",
            );
        }
    }
}

/// The answer to "the data changed": open the constraints anyway, or stop (keeping the
/// data as loaded, with empty constraints).
pub(super) fn resolve_data_changed(open_anyway: bool, app: &mut Shared<'_>) {
    if open_anyway {
        apply_session(app);
    } else if let Some(open) = app.session.opening.take() {
        app.session.set_status(format!(
            "Did not open the constraints of {}: the data changed",
            open.path.display()
        ));
    }
}

fn apply_session(app: &mut Shared<'_>) {
    let Some(open) = app.session.opening.take() else {
        return;
    };
    let (Some(data), Some(store)) = (app.session.dataset.clone(), app.session.store.as_mut())
    else {
        return;
    };
    let shown = open.path.display().to_string();
    let (loaded, _) = match open.file.constraints_for(&open.path, &data.fingerprint) {
        Ok(x) => x,
        Err(e) => {
            app.session
                .set_error(format!("Could not open the session: {e}"));
            return;
        }
    };
    let what = format!("open session {shown}");
    if let Err(e) = store.replace_with(&what, loaded.triplets(), loaded.labels()) {
        app.session.set_error(format!("{shown}: {e}"));
        return;
    }
    store.mark_saved();
    app.session.constraints_rev += 1;
    app.session.session_path = Some(open.path.clone());
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
        let id = app.session.history.last().map_or(1, |h| h.id + 1);
        app.session.history.push(HistoryRow {
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
            curve: Series::default(),
            convergence: Arc::default(),
            k: r.k,
            factors: Arc::new(factors),
            data: Some(data.fingerprint),
            dataset: short_name(&data.source),
            preprocess: r.preprocess,
            stop: r.stop.clone(),
            snapshot: None,
            evaluation: None,
            predictions: None,
            exports: Arc::default(),
        });
    }
    app.raise(Event::HistoryChanged);
    let note = if missing > 0 {
        format!(" ({missing} runs' factors could not be read)")
    } else {
        String::new()
    };
    app.session.set_status(format!(
        "Opened session {shown}: {} triplets, {} labels, {} runs{note}",
        loaded.triplets().len(),
        loaded.labels().n_labelled(),
        open.file.runs.len()
    ));
}
