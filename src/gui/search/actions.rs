//! What "explore the points" does off the UI thread (issue 21 point 4): isolate the selection
//! (PCA-2D of its columns, on a background task, again for each new snapshot) and answer the
//! neighbour panel (k nearest in X and in H, on a background task, cached). Both keep at most
//! one task in flight, so a running job's 20 snapshots a second cannot pile tasks up: the
//! next one starts when the last has answered, for the snapshot shown then.

use super::{NAME, PointSearch};
use crate::engine::data::Fingerprint;
use crate::engine::jobs::worker::Snapshot;
use crate::engine::linalg::knn_of;
use crate::engine::linalg::projection::{Projector, pca2_of_samples};
use crate::gui::command::Addressed;
use crate::gui::feature::Shared;
use crate::gui::view::points::{Isolation, NEIGHBOURS, NeighbourList, SnapshotKey};
use ndarray::{Array2, Axis};
use std::sync::Arc;

/// A finished projection of an isolated selection.
pub struct IsolatedDone {
    fingerprint: Fingerprint,
    key: SnapshotKey,
    samples: Vec<usize>,
    projector: Projector,
    result: Result<Array2<f64>, String>,
}

impl Addressed for IsolatedDone {
    const FEATURE: &'static str = NAME;
}

/// A finished neighbour query.
pub struct NeighboursDone {
    fingerprint: Fingerprint,
    sample: usize,
    in_x: Option<NeighbourList>,
    in_h: Option<(SnapshotKey, NeighbourList)>,
}

impl Addressed for NeighboursDone {
    const FEATURE: &'static str = NAME;
}

impl PointSearch {
    /// Once per frame: forget another dataset's points, start the neighbour query and the
    /// isolated re-projection that the shown snapshot calls for (O(1) when nothing changed).
    pub(super) fn update_points(&mut self, app: &mut Shared<'_>) {
        app.view
            .points
            .clear_for(app.session.dataset.as_ref().map(|d| d.fingerprint));
        self.update_neighbours(app);
        self.reproject_isolation(app);
    }

    /// The run's snapshot when it has H for every sample of the dataset.
    fn h_snapshot(app: &Shared<'_>) -> Option<Arc<Snapshot>> {
        let n = app.session.dataset.as_ref()?.n();
        app.run
            .snapshot
            .as_ref()
            .filter(|s| s.h.ncols() == n)
            .cloned()
    }

    /// Ask for the neighbours of the panel's sample that are not cached yet.
    fn update_neighbours(&mut self, app: &mut Shared<'_>) {
        let p = &app.view.points;
        if !p.show_neighbours || p.neighbours.in_flight.is_some() {
            return;
        }
        let (Some(data), Some(sample)) = (app.session.dataset.clone(), p.subject()) else {
            return;
        };
        if sample >= data.n() {
            return;
        }
        let need_x = p.neighbours.in_x(sample).is_none();
        let snap = Self::h_snapshot(app)
            .filter(|s| p.neighbours.in_h(sample, &SnapshotKey::of(s)).is_none());
        if !need_x && snap.is_none() {
            return;
        }
        let key = snap.as_ref().map(SnapshotKey::of);
        let fingerprint = data.fingerprint;
        let spawned = app.tasks.spawn("neighbours", move || {
            let in_x = need_x.then(|| Arc::new(knn_of(data.x.view(), sample, NEIGHBOURS)));
            let in_h = snap.map(|s| {
                (
                    SnapshotKey::of(&s),
                    Arc::new(knn_of(s.h.view(), sample, NEIGHBOURS)),
                )
            });
            NeighboursDone {
                fingerprint,
                sample,
                in_x,
                in_h,
            }
        });
        match spawned {
            Ok(()) => app.view.points.neighbours.in_flight = Some((sample, key)),
            Err(e) => app.session.set_error(e),
        }
    }

    /// A neighbour query answered: cache it (unless the dataset changed meanwhile).
    pub(super) fn neighbours_done(&mut self, done: NeighboursDone, app: &mut Shared<'_>) {
        app.view.points.neighbours.in_flight = None;
        if app.session.dataset.as_ref().map(|d| d.fingerprint) == Some(done.fingerprint) {
            app.view
                .points
                .neighbours
                .insert(done.sample, done.in_x, done.in_h);
        }
    }

    /// Isolate the selection: the scatter shows only those samples, projected on their own.
    pub(super) fn isolate(&mut self, app: &mut Shared<'_>) {
        let selection = app.view.explore.selection.clone();
        if selection.len() < 2 {
            app.session.set_error(
                "Isolate: select at least two samples first (Select tool: drag a lasso)",
            );
            return;
        }
        let count = selection.len();
        app.view.points.isolation = Some(Isolation::new(selection));
        self.reproject_isolation(app);
        app.session.set_status(format!(
            "Isolated {count} samples: their own PCA-2D; Show all brings every sample back"
        ));
    }

    /// Leave the isolated view.
    pub(super) fn show_all(&mut self, app: &mut Shared<'_>) {
        if app.view.points.isolation.take().is_some() {
            app.view.points.refit = true;
            Self::rebuild_scatter(app);
            app.session.set_status("Showing every sample");
        }
    }

    fn rebuild_scatter(app: &mut Shared<'_>) {
        app.view.rebuild_scatter(
            app.session.dataset.as_deref(),
            app.run.snapshot.as_deref(),
            app.session.x_view.as_deref(),
            app.session.evaluation.as_deref(),
        );
    }

    /// Project the isolated samples of the shown snapshot (H of the run, else X before any
    /// run) on a background task, unless it is done or one is in flight.
    fn reproject_isolation(&mut self, app: &mut Shared<'_>) {
        let Some(data) = app.session.dataset.clone() else {
            return;
        };
        let h = Self::h_snapshot(app);
        let Some(iso) = app.view.points.isolation.as_mut() else {
            return;
        };
        let (snap, of_data) = match (h, &app.session.x_view) {
            (Some(s), _) => (s, false),
            (None, Some(x)) if x.projection.nrows() == data.n() => (Arc::clone(x), true),
            _ => return,
        };
        let key = SnapshotKey::of(&snap);
        if iso.pending.is_some() || iso.done.as_ref() == Some(&key) {
            return;
        }
        let Some(mut projector) = iso.projector.take() else {
            return;
        };
        let samples = iso.samples.clone();
        let fingerprint = data.fingerprint;
        let task_key = key.clone();
        let spawned = app.tasks.spawn("isolate", move || {
            let result = if of_data {
                pca2_of_samples(data.x.select(Axis(1), &samples).view())
            } else {
                projector.project(snap.h.select(Axis(1), &samples).view())
            };
            IsolatedDone {
                fingerprint,
                key: task_key,
                samples,
                projector,
                result: result.map_err(|e| e.to_string()),
            }
        });
        match spawned {
            Ok(()) => iso.pending = Some(key),
            Err(e) => {
                iso.projector = Some(Projector::new());
                app.session.set_error(e);
            }
        }
    }

    /// An isolated projection arrived: show it (unless the isolation or the dataset changed
    /// meanwhile), then project the next snapshot if one came in since.
    pub(super) fn isolated(&mut self, done: IsolatedDone, app: &mut Shared<'_>) {
        let here = app.session.dataset.as_ref().map(|d| d.fingerprint);
        let Some(iso) = app.view.points.isolation.as_mut() else {
            return;
        };
        if here != Some(done.fingerprint) || iso.samples != done.samples {
            return;
        }
        iso.pending = None;
        iso.projector = Some(done.projector);
        iso.done = Some(done.key);
        match done.result {
            Ok(coords) => {
                if iso.coords.is_none() {
                    app.view.points.refit = true;
                }
                iso.coords = Some(coords);
                Self::rebuild_scatter(app);
            }
            Err(e) => app.session.set_error(format!("Isolate: {e}")),
        }
        self.reproject_isolation(app);
    }
}
