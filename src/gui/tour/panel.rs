//! The first-run tour (a strip under the menu bar, so it covers nothing; reopened from Help)
//! and the shortcuts overlay toggled by `?`.

use eframe::egui;

use super::Tour;
use crate::gui::state::Settings;
use egui::RichText;

/// The steps of the first-run tour (title, text).
pub const TOUR: [(&str, &str); 4] = [
    (
        "The scatter",
        "Each point is a sample: before a run, the PCA of the data; during and after a run, \
         the 2-D projection of its representation H. Hover a point to see it.",
    ),
    (
        "Run NMF",
        "Pick NMF in the model panel on the right and press Run (or Space). Watch the points \
         move and the objective fall in the convergence plot below.",
    ),
    (
        "Add a triplet",
        "Choose Triplet above the scatter and click three points: an anchor i, a sample j \
         closer to it, a sample q farther. Or press Suggest in the constraints panel and \
         answer the question shown.",
    ),
    (
        "Run RPNMF and compare",
        "Pick RPNMF, press Run, then select both runs in the history table: their curves \
         overlay, and the share of triplets kept tells which one respects your answers.",
    ),
];

/// The keyboard shortcuts the overlay lists (keys, action).
pub const SHORTCUTS: [(&str, &str); 9] = [
    ("Space", "run, pause or resume"),
    ("Esc", "stop the run or cancel a partial triplet"),
    ("Ctrl+Z", "undo a constraint edit"),
    ("Ctrl+Shift+Z / Ctrl+Y", "redo"),
    ("Ctrl+S", "save the constraints"),
    ("Ctrl+Shift+S", "save the session"),
    ("Ctrl+O", "open a session"),
    ("?", "show or hide this list"),
    ("scroll / drag", "zoom / pan the scatter (Inspect mode)"),
];

/// Lines of a tour step's text under its buttons (every step fits them from 800 px up).
const TEXT_ROWS: usize = 2;

/// The tour strip, while a step is shown. Dismissing or finishing it records the tour as
/// seen in the settings (persisted), so it does not come back by itself.
pub fn strip(ui: &mut egui::Ui, settings: &mut Settings, tour: &mut Tour) {
    let Some(step) = tour.step else {
        return;
    };
    let Some((title, text)) = TOUR.get(step) else {
        tour.step = None;
        return;
    };
    // The same height whatever the width and the step (buttons first, so they keep their
    // place from step to step; the text wraps into two lines, cut with "…" only on a window
    // too narrow for that, and is shown whole on hover), so the panels below never move.
    egui::Panel::top("tour").show(ui, |ui| {
        ui.horizontal(|ui| {
            if ui
                .add_enabled(step > 0, egui::Button::new("Back"))
                .clicked()
            {
                tour.step = Some(step - 1);
            }
            let last = step + 1 == TOUR.len();
            if ui
                .button(if last { "Finish tour" } else { "Next" })
                .clicked()
            {
                tour.step = (!last).then_some(step + 1);
                settings.tour_seen |= last;
            }
            if ui.button("Dismiss tour").clicked() {
                tour.step = None;
                settings.tour_seen = true;
            }
            ui.label(RichText::new(format!("Tour {}/{}: {title}", step + 1, TOUR.len())).strong());
        });
        let width = ui.available_width();
        let height = TEXT_ROWS as f32 * ui.text_style_height(&egui::TextStyle::Body);
        ui.allocate_ui(egui::vec2(width, height), |ui| {
            ui.set_min_size(egui::vec2(width, height));
            let mut job = egui::text::LayoutJob::simple(
                (*text).to_owned(),
                egui::TextStyle::Body.resolve(ui.style()),
                ui.visuals().text_color(),
                width,
            );
            job.wrap.max_rows = TEXT_ROWS;
            ui.add(egui::Label::new(job)).on_hover_text(*text);
        });
    });
}

/// The shortcuts overlay, while shown.
pub fn shortcuts(ctx: &egui::Context, tour: &mut Tour) {
    let mut open = tour.show_shortcuts;
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
    tour.show_shortcuts = open;
}
