//! Explore the points: search by name or label, isolate a selection on its own projection,
//! and the nearest neighbours of a sample in X and in H ([`actions`], off the UI thread), with
//! the bar above the scatter, its marks on the plot and the neighbour window ([`panel`]).
//!
//! What the scatter draws from (the matches, the isolation, the pinned sample, the neighbour
//! cache) is [`crate::gui::view::points::PointsView`] in the shared view state, since the scatter's
//! groups are rebuilt from it; this feature starts and receives the work that fills it.

mod actions;
pub mod panel;

use crate::gui::command::Addressed;
use crate::gui::feature::{Feature, Place, Shared, TaskPanicked};
use actions::{IsolatedDone, NeighboursDone};
use eframe::egui;
use std::any::Any;

/// The name its messages are addressed to.
const NAME: &str = "points";

/// What the bar above the scatter asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Show only the selected samples, projected on their own (background task).
    Isolate,
    /// Leave the isolated view: every sample again.
    ShowAll,
    /// Unselect every sample, and say so on the status line.
    ClearSelection,
}

impl Addressed for Command {
    const FEATURE: &'static str = NAME;
}

/// The feature (its state is the shared [`crate::gui::view::points::PointsView`]; see the module
/// docs).
#[derive(Debug, Default)]
pub struct PointSearch;

impl Feature for PointSearch {
    fn name(&self) -> &'static str {
        NAME
    }

    fn logic(&mut self, app: &mut Shared<'_>) {
        self.update_points(app);
    }

    fn on_message(&mut self, msg: Box<dyn Any + Send>, app: &mut Shared<'_>) {
        let msg = match msg.downcast::<Command>() {
            Ok(cmd) => {
                match *cmd {
                    Command::Isolate => self.isolate(app),
                    Command::ShowAll => self.show_all(app),
                    Command::ClearSelection => {
                        app.view.explore.selection.clear();
                        app.view.explore.basis = None;
                        // Not left saying "Selected N samples …" from the lasso.
                        app.session.set_status("Selection cleared");
                    }
                }
                return;
            }
            Err(msg) => msg,
        };
        let msg = match msg.downcast::<IsolatedDone>() {
            Ok(done) => return self.isolated(*done, app),
            Err(msg) => msg,
        };
        let msg = match msg.downcast::<NeighboursDone>() {
            Ok(done) => return self.neighbours_done(*done, app),
            Err(msg) => msg,
        };
        if let Ok(p) = msg.downcast::<TaskPanicked>() {
            // Which of the two tasks it was is unknown: clear both busy flags.
            let points = &mut app.view.points;
            points.neighbours.in_flight = None;
            if let Some(iso) = points.isolation.as_mut() {
                iso.pending = None;
            }
            app.session.set_error(format!(
                "A points task stopped unexpectedly (a bug: please report it): {}",
                p.0
            ));
        }
    }

    fn ui(&mut self, place: Place, ui: &mut egui::Ui, app: &mut Shared<'_>) {
        if place == Place::Windows {
            panel::window(ui.ctx(), app.session.dataset.as_deref(), app.run, app.view);
        }
    }

    crate::feature_any!();
}
