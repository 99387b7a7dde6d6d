//! What the exploration views' commands do: step and reset a run (the teaching controls) and
//! suggest a triplet on a background task (the kNN search over X is O(n²m)).

use super::{App, TaskDone};
use crate::engine::constraints::{Suggestion, Triplet, suggest};
use crate::engine::data::Fingerprint;
use crate::engine::linalg::knn;
use std::collections::BTreeSet;

/// Neighbours per sample among which triplets are suggested (C(10, 2) = 45 pairs an anchor).
const SUGGEST_NEIGHBOURS: usize = 10;

impl App {
    /// One iteration of the active run; without one, a new run held at its start.
    pub(super) fn step(&mut self) {
        if self.run.worker.is_active() {
            if let Some(status) = self.run.step() {
                self.session.status = status;
            }
        } else {
            self.reset_run();
        }
    }

    /// The selected model from the same start (seed), held after its first iteration.
    pub(super) fn reset_run(&mut self) {
        self.run.hold_start = true;
        self.start_run(None);
        self.run.hold_start = false;
        if self.run.worker == super::WorkerState::Paused && self.run.job_id.is_some() {
            self.session.set_status(format!(
                "Reset to the start (seed {}): Step for one iteration, Space runs",
                self.settings.seed
            ));
        }
    }

    /// Ask a background task for the next triplet: the least sure under the current H (X
    /// before a run) among the kNN graph's candidates, never one answered or skipped.
    pub(super) fn start_suggest(&mut self) {
        let Some(data) = self.session.dataset.clone() else {
            self.session.set_error("Load a dataset to get suggestions");
            return;
        };
        if self.view.explore.suggesting {
            return;
        }
        let mut asked: BTreeSet<Triplet> = self
            .session
            .store
            .as_ref()
            .map(|s| s.triplets().iter().copied().collect())
            .unwrap_or_default();
        asked.extend(self.view.explore.skipped.iter().copied());
        let h = self
            .run
            .snapshot
            .as_ref()
            .filter(|s| s.h.ncols() == data.n())
            .map(|s| s.h.clone());
        let seed = self.settings.seed;
        let fingerprint = data.fingerprint;
        let spawned = self.tasks.spawn("suggest", move || {
            let neighbours = knn(data.x.view(), SUGGEST_NEIGHBOURS);
            let points = h.as_ref().map_or_else(|| data.x.view(), |h| h.view());
            TaskDone::Suggested {
                fingerprint,
                result: suggest(points, &neighbours, &asked, seed),
            }
        });
        match spawned {
            Ok(()) => self.view.explore.suggesting = true,
            Err(e) => self.session.set_error(e),
        }
    }

    /// A suggestion arrived: show it, unless the dataset changed meanwhile.
    pub(super) fn suggested(&mut self, fingerprint: Fingerprint, result: Option<Suggestion>) {
        self.view.explore.suggesting = false;
        if self.session.dataset.as_ref().map(|d| d.fingerprint) != Some(fingerprint) {
            return;
        }
        self.view.explore.suggestion = result;
        match result {
            Some(s) => self.session.set_status(format!(
                "Suggested triplet {} (margin {:.3e}): answer j closer, q closer or skip",
                s.triplet, s.margin
            )),
            None => self
                .session
                .set_status("No triplet left to suggest: every candidate was answered or skipped"),
        }
    }
}
