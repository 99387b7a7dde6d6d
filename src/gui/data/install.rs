//! Installing a loaded dataset: the run on the old data ends, the constraints are kept when
//! the raw content is the same (a new store otherwise, [`Event::NewStore`]), and the PCA-2D of
//! X is computed in the background for the scatter before any run.

use super::{Done, Shared};
use crate::engine::constraints::Store;
use crate::engine::data::{Dataset, Fingerprint};
use crate::engine::jobs::worker::Snapshot;
use crate::gui::feature::Event;
use crate::gui::format::counted;
use crate::gui::state::{DataSource, WorkerState};
use std::sync::Arc;

/// Make `data` the current dataset: ends any run and forgets its results.
pub(super) fn install(data: Dataset, source: Option<DataSource>, app: &mut Shared<'_>) {
    // A run on the old data is cancelled (its thread winds down; its late events are stale
    // and dropped).
    let was_running = app.run.worker.is_active();
    app.run.retire();
    app.clear_run();
    app.run.worker = if was_running {
        WorkerState::Cancelled
    } else {
        WorkerState::Idle
    };
    app.session.load_error = None;
    let msg = format!(
        "Loaded {}: {} samples × {} features{}",
        data.source,
        data.n(),
        data.m(),
        if data.n_classes() > 0 {
            format!(", {} classes", data.n_classes())
        } else {
            String::new()
        }
    );
    if let Some(DataSource::Path(p)) = &source {
        app.settings.last_path = Some(p.clone());
    }
    // Same raw content (e.g. reloaded with other preprocessing): keep the constraints.
    let keep = app
        .session
        .store
        .as_ref()
        .is_some_and(|st| st.fingerprint() == data.fingerprint);
    if !keep {
        // A new dataset: k = c, as in every clustering experiment of the papers
        // (docs/models.md §1); the user can change it afterwards.
        if data.n_classes() > 0 {
            app.settings.k = data.n_classes().min(data.m()).min(data.n());
        }
        app.session.store = Some(Store::new(data.fingerprint));
        app.session.constraints_path = None;
        app.session.constraints_rev += 1;
        app.view.paint_class = data.class_names.first().cloned().unwrap_or_default();
        app.raise(Event::NewStore);
    }
    app.view.clear_picks();
    let cleared = untick_other_data(data.fingerprint, app);
    app.session.kept = None;
    app.session.source = source;
    let data = Arc::new(data);
    app.session.dataset = Some(Arc::clone(&data));
    app.session.x_view = None;
    app.session.set_status(if cleared > 0 {
        format!(
            "{msg} (the overlay of {} from other data was cleared)",
            counted(cleared, "run", "runs")
        )
    } else {
        msg
    });
    start_projection(data, app);
    app.raise(Event::DatasetChanged);
}

/// Untick the history runs fitted on other data than `fingerprint` (their curves would
/// otherwise stay overlaid on the new dataset's); how many were unticked.
fn untick_other_data(fingerprint: Fingerprint, app: &mut Shared<'_>) -> usize {
    let history = &app.session.history;
    let before = app.view.selected_runs.len();
    app.view.selected_runs.retain(|id| {
        history
            .iter()
            .any(|r| r.id == *id && r.data == Some(fingerprint))
    });
    before - app.view.selected_runs.len()
}

/// Compute the PCA-2D of X on a background task ([`Done::Projected`]).
fn start_projection(data: Arc<Dataset>, app: &mut Shared<'_>) {
    let fingerprint = data.fingerprint;
    let spawned = app.tasks.spawn("pca-x", move || Done::Projected {
        fingerprint,
        result: crate::engine::linalg::projection::pca2_of_samples(data.x.view())
            .map_err(|e| e.to_string()),
    });
    if let Err(e) = spawned {
        app.session.set_status(format!("PCA of X: {e}"));
    }
}

/// The PCA-2D of X arrived: keep it for the scatter before (and between) runs, unless
/// another dataset was loaded meanwhile.
pub(super) fn projected(
    fingerprint: Fingerprint,
    result: Result<ndarray::Array2<f64>, String>,
    app: &mut Shared<'_>,
) {
    let Some(data) = app.session.dataset.clone() else {
        return;
    };
    if data.fingerprint != fingerprint {
        return;
    }
    match result {
        Ok(projection) => {
            app.session.x_view = Some(Arc::new(Snapshot {
                iteration: 0,
                h: ndarray::Array2::zeros((2, 0)),
                projection,
                outputs: Default::default(),
                w: None,
            }));
            if app.run.snapshot.is_none() {
                app.view
                    .rebuild_scatter(Some(&data), None, app.session.x_view.as_deref(), None);
            }
        }
        Err(e) => app.session.set_status(format!("PCA of X: {e}")),
    }
}
