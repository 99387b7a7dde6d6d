//! The convergence plot at the foot of the middle: the live run's objective and terms, and
//! the two ticked history runs overlaid ([`plot`]).

mod plot;

pub use plot::prepared;

use crate::gui::feature::{Feature, Place, Shared};
use eframe::egui;

/// The plot's feature: it draws from the shared run and history, and holds nothing of its own.
#[derive(Debug, Default)]
pub struct ConvergencePlot;

impl Feature for ConvergencePlot {
    fn name(&self) -> &'static str {
        "convergence"
    }

    fn ui(&mut self, place: Place, ui: &mut egui::Ui, app: &mut Shared<'_>) {
        if place == Place::Foot {
            plot::show(
                ui,
                app.settings,
                app.session,
                app.run,
                &app.view.selected_runs,
            );
        }
    }

    crate::feature_any!();
}
