//! Suggested triplets: "Suggest" asks a background task for the triplet the current H (X
//! before a run) is least sure of, among the kNN graph's candidates, never one answered or
//! skipped; the constraints panel's foot shows it with its one-click answers ([`panel`]).
//!
//! The suggestion itself is in the shared view state (`view.explore.suggestion`): the scatter
//! draws it.

mod panel;

use crate::engine::constraints::{Suggestion, Triplet, suggest};
use crate::engine::data::Fingerprint;
use crate::engine::linalg::knn;
use crate::gui::command::Addressed;
use crate::gui::feature::{Feature, Place, Shared, TaskPanicked};
use eframe::egui;
use std::any::Any;
use std::collections::BTreeSet;

/// The name its messages are addressed to.
const NAME: &str = "suggest";

/// Neighbours per sample among which triplets are suggested (C(10, 2) = 45 pairs an anchor).
const SUGGEST_NEIGHBOURS: usize = 10;

/// What the panel asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Propose the next triplet to ask about (background task).
    Suggest,
}

impl Addressed for Command {
    const FEATURE: &'static str = NAME;
}

/// The suggested triplet for the dataset `fingerprint` (None: every candidate asked).
struct Suggested {
    fingerprint: Fingerprint,
    result: Option<Suggestion>,
}

impl Addressed for Suggested {
    const FEATURE: &'static str = NAME;
}

/// The feature's own state.
#[derive(Debug, Default)]
pub struct Suggest {
    /// A suggestion is being computed.
    pub suggesting: bool,
    /// Suggested triplets the user skipped (never proposed again for this dataset).
    pub skipped: BTreeSet<Triplet>,
    /// The dataset `skipped` refers to.
    dataset: Option<Fingerprint>,
}

impl Feature for Suggest {
    fn name(&self) -> &'static str {
        NAME
    }

    fn logic(&mut self, app: &mut Shared<'_>) {
        let here = app.session.dataset.as_ref().map(|d| d.fingerprint);
        if self.dataset != here {
            self.dataset = here;
            self.skipped.clear();
        }
    }

    fn on_message(&mut self, msg: Box<dyn Any + Send>, app: &mut Shared<'_>) {
        let msg = match msg.downcast::<Command>() {
            Ok(cmd) => {
                let Command::Suggest = *cmd;
                return self.start(app);
            }
            Err(msg) => msg,
        };
        let msg = match msg.downcast::<Suggested>() {
            Ok(done) => return self.suggested(*done, app),
            Err(msg) => msg,
        };
        if let Ok(p) = msg.downcast::<TaskPanicked>() {
            self.suggesting = false;
            app.session.set_error(format!(
                "The suggest task stopped unexpectedly (a bug: please report it): {}",
                p.0
            ));
        }
    }

    fn ui(&mut self, place: Place, ui: &mut egui::Ui, app: &mut Shared<'_>) {
        if place == Place::Left {
            panel::show(ui, self, app);
        }
    }

    crate::feature_any!();
}

impl Suggest {
    /// Ask a background task for the next triplet: the least sure under the current H (X
    /// before a run) among the kNN graph's candidates, never one answered or skipped.
    fn start(&mut self, app: &mut Shared<'_>) {
        let Some(data) = app.session.dataset.clone() else {
            app.session.set_error("Load a dataset to get suggestions");
            return;
        };
        if self.suggesting {
            return;
        }
        let mut asked: BTreeSet<Triplet> = app
            .session
            .store
            .as_ref()
            .map(|s| s.triplets().iter().copied().collect())
            .unwrap_or_default();
        asked.extend(self.skipped.iter().copied());
        let h = app
            .run
            .snapshot
            .as_ref()
            .filter(|s| s.h.ncols() == data.n())
            .map(|s| s.h.clone());
        let seed = app.settings.seed;
        let fingerprint = data.fingerprint;
        let spawned = app.tasks.spawn("suggest", move || {
            let neighbours = knn(data.x.view(), SUGGEST_NEIGHBOURS);
            let points = h.as_ref().map_or_else(|| data.x.view(), |h| h.view());
            Suggested {
                fingerprint,
                result: suggest(points, &neighbours, &asked, seed),
            }
        });
        match spawned {
            Ok(()) => self.suggesting = true,
            Err(e) => app.session.set_error(e),
        }
    }

    /// A suggestion arrived: show it, unless the dataset changed meanwhile.
    fn suggested(&mut self, done: Suggested, app: &mut Shared<'_>) {
        self.suggesting = false;
        if app.session.dataset.as_ref().map(|d| d.fingerprint) != Some(done.fingerprint) {
            return;
        }
        app.view.explore.suggestion = done.result;
        match done.result {
            Some(s) => app.session.set_status(format!(
                "Suggested triplet {} (margin {:.3e}): answer j closer, q closer or skip",
                s.triplet, s.margin
            )),
            None => app
                .session
                .set_status("No triplet left to suggest: every candidate was answered or skipped"),
        }
    }
}
