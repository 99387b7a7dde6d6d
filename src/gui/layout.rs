//! The window's layout (DESIGN.md §7): menu bar and status line, data and constraints on the
//! left, model and results on the right, the scatter over the convergence plot in the middle,
//! and the floating windows. Each panel borrows only the state it draws or edits.

use eframe::egui;

use super::feature::Place;
use super::state::Settings;
use super::view::ViewState;
use super::{App, chrome, file_prompt};

/// The narrowest a side panel gets (its widgets wrap or scroll below that).
const SIDE_MIN: f32 = 170.0;

/// Below this window width the data panel folds away (the scatter keeps ~60 % of the width).
const FOLD_BELOW: f32 = 900.0;

/// Default height of the run history at the foot of the right panel.
const HISTORY_HEIGHT: f32 = 190.0;

/// Width of the left panel's combo boxes.
const COMBO_WIDTH: f32 = 150.0;

/// Width the scatter keeps between the side panels wherever the window allows: its toolbar's
/// one row (four tools, the colour box, "Show…") needs this much.
const CENTRE_MIN: f32 = 480.0;

/// The right panel's width at 800 px, where its rows (a hyperparameter's slider, value and
/// *grid* button) are known to fit: it is not made narrower than this for the scatter's sake.
const RIGHT_FLOOR: f32 = 264.0;

/// The widest the left and right panels may be in a window `width` points wide: together
/// at most 60 % of it, the left 45 % of that; the right gives up width, down to
/// [`RIGHT_FLOOR`], so that the scatter keeps [`CENTRE_MIN`] (at 1280 px: 300 + 340; at
/// 1024 px: 276 + 268; at 800 px: 216 + 264). A panel widened by hand in a larger window is
/// narrowed to this when the window shrinks.
pub fn side_panel_widths(width: f32) -> (f32, f32) {
    let share = 0.6 * width;
    let left = (share * 0.45).clamp(SIDE_MIN, 300.0);
    let right = (share * 0.55)
        .min(width - CENTRE_MIN - left)
        .max(RIGHT_FLOOR.min(share * 0.55))
        .clamp(SIDE_MIN, 340.0);
    (left, right)
}

/// Fold the data panel away when the window becomes narrower than [`FOLD_BELOW`] and bring
/// it back when it grows past it again (only on crossing: the user's own choice, from the top
/// bar's "Data" toggle, holds in between).
fn fold_data_panel(view: &mut ViewState, settings: &mut Settings, width: f32) {
    let narrow = width < FOLD_BELOW;
    if view.was_narrow != Some(narrow) {
        if view.was_narrow.is_some() || narrow {
            settings.show_data_panel = !narrow;
        }
        view.was_narrow = Some(narrow);
    }
}

impl App {
    /// Draw every panel; the commands they push are applied afterwards by the caller.
    pub(super) fn draw_panels(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        let (features, mut app) = self.parts();
        chrome::top_bar(ui, &mut app, features);
        let (features, mut app) = self.parts();
        features.ui(Place::TopStrip, ui, &mut app);
        chrome::status_line(
            ui,
            &self.session,
            &self.run,
            self.view.frame_ms,
            self.view.frame_peak.0,
            self.view.frame_cpu,
        );
        self.view
            .explore
            .clear_for(self.session.dataset.as_ref().map(|d| d.fingerprint));
        // Side panels shrink with the window so that the plots keep at least ~40 % of its
        // width; each scrolls, and either can be hidden from the View menu.
        let width = ctx.content_rect().width();
        fold_data_panel(&mut self.view, &mut self.settings, width);
        let (left_max, right_max) = side_panel_widths(width);
        let (mut show_left, mut show_right) = (
            self.settings.show_data_panel,
            self.settings.show_model_panel,
        );
        let left = self.left_panel(ui, left_max, &mut show_left);
        let right = self.right_panel(ui, right_max, &mut show_right);
        self.view.panel_rects = [
            left.map(|r| r.response.rect),
            right.map(|r| r.response.rect),
        ];
        self.settings.show_data_panel = show_left;
        self.settings.show_model_panel = show_right;
        self.central(ui);
        self.windows(ui);
    }

    /// The left panel: what the features draw there (data, constraints, suggestions).
    fn left_panel(
        &mut self,
        ui: &mut egui::Ui,
        max: f32,
        show: &mut bool,
    ) -> Option<egui::InnerResponse<()>> {
        egui::Panel::left("data_panel")
            .resizable(true)
            .default_size(280.0f32.min(max))
            .min_size(SIDE_MIN.min(max))
            .max_size(max)
            .show_collapsible(ui, show, |ui| {
                egui::ScrollArea::vertical()
                    .id_salt("left_scroll")
                    .show(ui, |ui| {
                        // Room for the longest choice ("min-max, then L2") in the panel's
                        // combo boxes, which otherwise cut it short.
                        ui.spacing_mut().combo_width = COMBO_WIDTH.min(ui.available_width() * 0.6);
                        let (features, mut app) = self.parts();
                        features.ui(Place::Left, ui, &mut app);
                    });
            })
    }

    /// The right panel: the model, teaching controls and scores scroll in the upper part;
    /// the run history stays at the foot.
    fn right_panel(
        &mut self,
        ui: &mut egui::Ui,
        max: f32,
        show: &mut bool,
    ) -> Option<egui::InnerResponse<()>> {
        egui::Panel::right("model_panel")
            .resizable(true)
            .default_size(300.0f32.min(max))
            .min_size(SIDE_MIN.min(max))
            .max_size(max)
            .show_collapsible(ui, show, |ui| {
                // The run history at the foot, in view whatever scrolls above it: the model
                // and the scores scroll in the upper part, the history in the lower.
                let total = ui.available_height();
                let history_height = HISTORY_HEIGHT.min(0.45 * total);
                let upper = (total - history_height - ui.spacing().item_spacing.y * 2.0).max(0.0);
                // Both axes: a long parameter row may be wider than the panel.
                egui::ScrollArea::both()
                    .id_salt("right_scroll")
                    .max_height(upper)
                    .auto_shrink([false, false])
                    .show(ui, |ui| {
                        let (features, mut app) = self.parts();
                        features.ui(Place::Right, ui, &mut app);
                    });
                ui.separator();
                egui::ScrollArea::both()
                    .id_salt("history_scroll")
                    .auto_shrink([false, false])
                    .show(ui, |ui| {
                        let (features, mut app) = self.parts();
                        features.ui(Place::History, ui, &mut app);
                        // Room for the panel's horizontal scroll bar, which floats over the
                        // bottom edge.
                        ui.add_space(16.0);
                    });
            })
    }

    /// The middle: the convergence plot at the bottom, the scatter above it.
    fn central(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        egui::CentralPanel::no_frame().show(ui, |ui| {
            // At most a third of the height, so that a short window keeps the scatter.
            let height = ctx.content_rect().height();
            egui::Panel::bottom("convergence_panel")
                .resizable(true)
                .default_size(220.0f32.min(0.28 * height))
                .min_size(100.0)
                .max_size((0.3 * height).max(100.0))
                .show(ui, |ui| {
                    let (features, mut app) = self.parts();
                    features.ui(Place::Foot, ui, &mut app);
                });
            egui::CentralPanel::default().show(ui, |ui| {
                let (features, mut app) = self.parts();
                features.ui(Place::Centre, ui, &mut app);
            });
        });
    }

    /// Floating windows and modals: the panels' and the features'.
    fn windows(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        chrome::windows(&ctx, &self.settings, &mut self.view);
        let (features, mut app) = self.parts();
        features.ui(Place::Windows, ui, &mut app);
        file_prompt::window(&ctx, &mut self.view.file_prompt, &mut self.commands);
        chrome::drop_overlay(&ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scatter_keeps_room_for_its_toolbar_and_small_windows_keep_their_panels() {
        let centre = |w: f32| {
            let (l, r) = side_panel_widths(w);
            w - l - r
        };
        assert!(centre(1024.0) >= CENTRE_MIN, "{}", centre(1024.0));
        assert!(centre(1100.0) >= CENTRE_MIN);
        let near =
            |(a, b): (f32, f32), (c, d): (f32, f32)| (a - c).abs() < 0.01 && (b - d).abs() < 0.01;
        assert!(near(side_panel_widths(1280.0), (300.0, 340.0)));
        assert!(
            near(side_panel_widths(800.0), (216.0, 264.0)),
            "{:?}",
            side_panel_widths(800.0)
        );
        // Continuous: no jump where the floor takes over.
        let (a, b) = (side_panel_widths(929.0), side_panel_widths(931.0));
        assert!((a.0 + a.1 - b.0 - b.1).abs() < 2.0, "{a:?} {b:?}");
    }
}
