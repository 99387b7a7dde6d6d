//! The window's layout (DESIGN.md §7): menu bar and status line, data and constraints on the
//! left, model and results on the right, the scatter over the convergence plot in the middle,
//! and the floating windows. Each panel borrows only the state it draws or edits.

use eframe::egui;

use super::{App, panels};

impl App {
    /// Draw every panel; the commands they push are applied afterwards by the caller.
    pub(super) fn draw_panels(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        panels::top_bar(
            ui,
            &mut self.settings,
            &self.session,
            &mut self.view,
            &mut self.commands,
        );
        panels::status_line(ui, &self.session, &self.run, self.view.frame_ms);
        egui::Panel::left("data_panel")
            .resizable(true)
            .default_size(280.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical()
                    .id_salt("left_scroll")
                    .show(ui, |ui| {
                        panels::data::show(
                            ui,
                            &mut self.settings,
                            &self.session,
                            &mut self.view,
                            &mut self.commands,
                        );
                        ui.separator();
                        panels::constraints::show(
                            ui,
                            &self.session,
                            &mut self.view,
                            &mut self.commands,
                        );
                    });
            });
        egui::Panel::right("model_panel")
            .resizable(true)
            .default_size(300.0)
            .show(ui, |ui| {
                // Both axes: the history table is wider than the panel.
                egui::ScrollArea::both()
                    .id_salt("right_scroll")
                    .show(ui, |ui| {
                        panels::model::show(
                            ui,
                            &mut self.settings,
                            &self.session,
                            &self.run,
                            &mut self.view,
                            &mut self.commands,
                        );
                        ui.separator();
                        panels::results::show(
                            ui,
                            &mut self.settings,
                            &self.session,
                            &mut self.view,
                            &mut self.commands,
                        );
                    });
            });
        egui::CentralPanel::no_frame().show(ui, |ui| {
            egui::Panel::bottom("convergence_panel")
                .resizable(true)
                .default_size(220.0)
                .min_size(120.0)
                .show(ui, |ui| {
                    panels::convergence::show(
                        ui,
                        &mut self.settings,
                        &self.session,
                        &self.run,
                        &self.view.selected_runs,
                    );
                });
            egui::CentralPanel::default().show(ui, |ui| {
                panels::scatter::show(
                    ui,
                    &mut self.session,
                    &self.run,
                    &mut self.view,
                    &mut self.commands,
                );
            });
        });
        panels::windows(&ctx, &self.settings, &mut self.view);
        panels::constraints::generate_window(
            &ctx,
            &self.session,
            &mut self.view,
            &mut self.commands,
        );
        panels::constraints::unsaved_modal(&ctx, &self.session, &mut self.view, &mut self.commands);
        self.drop_overlay(&ctx);
    }
}
