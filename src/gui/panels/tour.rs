//! The first-run tour (a strip under the menu bar, so it covers nothing; reopened from Help)
//! and the shortcuts overlay toggled by `?` (issue 21 point 9).

use eframe::egui;

use crate::gui::explore::{SHORTCUTS, TOUR};
use crate::gui::state::Settings;
use crate::gui::view::ViewState;
use egui::RichText;

/// The tour strip, while a step is shown. Dismissing or finishing it records the tour as
/// seen in the settings (persisted), so it does not come back by itself.
pub fn strip(ui: &mut egui::Ui, settings: &mut Settings, view: &mut ViewState) {
    let Some(step) = view.explore.tour else {
        return;
    };
    let Some((title, text)) = TOUR.get(step) else {
        view.explore.tour = None;
        return;
    };
    // One line whatever the width (buttons first, so they keep their place from step to
    // step; the text is cut with "…" and shown whole on hover), so the panels below never
    // move as the steps change.
    egui::Panel::top("tour").show(ui, |ui| {
        ui.horizontal(|ui| {
            if ui
                .add_enabled(step > 0, egui::Button::new("Back"))
                .clicked()
            {
                view.explore.tour = Some(step - 1);
            }
            let last = step + 1 == TOUR.len();
            if ui
                .button(if last { "Finish tour" } else { "Next" })
                .clicked()
            {
                view.explore.tour = (!last).then_some(step + 1);
                settings.tour_seen |= last;
            }
            if ui.button("Dismiss tour").clicked() {
                view.explore.tour = None;
                settings.tour_seen = true;
            }
            ui.label(RichText::new(format!("Tour {}/{}: {title}", step + 1, TOUR.len())).strong());
            ui.add(egui::Label::new(*text).truncate())
                .on_hover_text(*text);
        });
    });
}

/// The shortcuts overlay, while shown.
pub fn shortcuts(ctx: &egui::Context, view: &mut ViewState) {
    let mut open = view.explore.show_shortcuts;
    egui::Window::new("Keyboard shortcuts")
        .open(&mut open)
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
        .show(ctx, |ui| {
            egui::Grid::new("shortcuts").striped(true).show(ui, |ui| {
                for (keys, what) in SHORTCUTS {
                    ui.label(RichText::new(keys).monospace().strong());
                    ui.label(what);
                    ui.end_row();
                }
            });
        });
    view.explore.show_shortcuts = open;
}
