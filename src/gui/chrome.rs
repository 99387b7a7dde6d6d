//! The window's frame around the features: the menu bar, the status line, the About
//! windows and the drop overlay. The features draw their own menu items and panes.

use eframe::egui;

use super::command::UiCommand;
use super::feature::{Features, Place, Shared};
use super::run_controller::RunController;
use super::state::{Session, Settings, WorkerState};
use super::style::{ERROR_RED, displayable};
use super::view::ViewState;
use egui::{Color32, RichText};

/// Menu bar; on the right: dataset · n × m · k.
pub fn top_bar(ui: &mut egui::Ui, app: &mut Shared<'_>, features: &mut Features) {
    egui::Panel::top("top_bar").show(ui, |ui| {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                features.ui(Place::FileMenu, ui, app);
                ui.separator();
                if ui.button("Quit").clicked() {
                    app.commands.push(UiCommand::Quit);
                }
            });
            features.ui(Place::Menus, ui, app);
            ui.menu_button("View", |ui| {
                let mut dark = app.settings.dark;
                if ui.checkbox(&mut dark, "Dark theme").changed() {
                    app.commands.push(UiCommand::SetDark(dark));
                }
                ui.checkbox(&mut app.settings.log_y, "Log-scale objective");
                ui.separator();
                ui.checkbox(
                    &mut app.settings.show_data_panel,
                    "Data and constraints panel",
                );
                ui.checkbox(
                    &mut app.settings.show_model_panel,
                    "Model and results panel",
                );
                ui.checkbox(
                    &mut app.view.points.show_neighbours,
                    "Neighbours in X and in H",
                );
                features.ui(Place::ViewMenu, ui, app);
            });
            ui.menu_button("Help", |ui| {
                if ui.button("About NMF Playground").clicked() {
                    app.view.show_about = true;
                }
                if ui.button("About the selected model").clicked() {
                    app.view.show_model_help = true;
                }
                ui.separator();
                features.ui(Place::HelpMenu, ui, app);
            });
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                // The side panels fold away here (and in the View menu) to give the plots
                // the window on a small screen.
                ui.toggle_value(&mut app.settings.show_model_panel, "Model")
                    .on_hover_text("Show or hide the model and results panel");
                ui.toggle_value(&mut app.settings.show_data_panel, "Data")
                    .on_hover_text("Show or hide the data and constraints panel");
                ui.separator();
                let text = match &app.session.dataset {
                    Some(d) => format!(
                        "{} · {} × {} · k = {}",
                        d.source,
                        d.n(),
                        d.m(),
                        app.settings.k
                    ),
                    None => format!("no dataset · k = {}", app.settings.k),
                };
                ui.add(egui::Label::new(text.clone()).truncate())
                    .on_hover_text(text);
            });
        });
    });
}

/// Bottom status line: worker state, last message (errors in red), the last frame's time and
/// the slowest of the last few seconds.
pub fn status_line(
    ui: &mut egui::Ui,
    session: &Session,
    run: &RunController,
    frame_ms: f32,
    peak_ms: f32,
    cpu_ms: Option<(f32, f32)>,
) {
    egui::Panel::bottom("status_line").show(ui, |ui| {
        ui.horizontal(|ui| {
            let state = run.worker;
            let color = match state {
                WorkerState::Running => Color32::from_rgb(80, 170, 80),
                WorkerState::Paused => Color32::from_rgb(220, 170, 40),
                WorkerState::Failed => ERROR_RED,
                WorkerState::Idle | WorkerState::Finished(_) | WorkerState::Cancelled => {
                    ui.visuals().weak_text_color()
                }
            };
            ui.label(RichText::new(format!("worker: {}", state.label())).color(color))
                .on_hover_text("Worker state");
            ui.separator();
            // The frame time first, from the right; the message takes what is left and is
            // cut with "…" (whole on hover) rather than run into it.
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                let cpu =
                    cpu_ms.map_or_else(String::new, |(_, most)| format!(" · CPU max {most:.1}"));
                ui.label(
                    RichText::new(format!("frame {frame_ms:.1} ms (max {peak_ms:.1}{cpu})"))
                        .weak()
                        .small(),
                )
                .on_hover_text(format!(
                    "The last frame's time on the UI thread (logic and layout), the slowest \
                     of the last {} s, and the most CPU time one of them used (on a busy \
                     machine a frame also waits for a core)",
                    crate::gui::view::FRAME_PEAK_WINDOW.as_secs()
                ));
                ui.separator();
                ui.with_layout(egui::Layout::left_to_right(egui::Align::Center), |ui| {
                    let text = RichText::new(&session.status.text);
                    let text = if session.status.is_error {
                        text.color(ERROR_RED)
                    } else {
                        text
                    };
                    ui.add(egui::Label::new(text).truncate())
                        .on_hover_text(&session.status.text);
                });
            });
        });
    });
}

/// Floating windows: model explanation and about.
pub fn windows(ctx: &egui::Context, settings: &Settings, view: &mut ViewState) {
    if let Some(kind) = settings.model_kind() {
        egui::Window::new(format!("About {}", kind.label()))
            .open(&mut view.show_model_help)
            .default_width(380.0)
            // Beside the model panel, not over the data panel.
            .default_pos(ctx.content_rect().right_top() + egui::vec2(-720.0, 60.0))
            .collapsible(false)
            .show(ctx, |ui| {
                ui.label(displayable(ui.ctx(), kind.description()));
                ui.add_space(6.0);
                ui.label(RichText::new(format!("Math: {}", kind.section())).weak());
                if let Some(text) = crate::gui::model_docs::section(kind.section()) {
                    egui::CollapsingHeader::new(format!("Show {}", kind.section()))
                        .id_salt(("model_docs", kind.name()))
                        .show(ui, |ui| {
                            egui::ScrollArea::vertical()
                                .max_height(320.0)
                                .show(ui, |ui| {
                                    ui.label(
                                        RichText::new(displayable(ui.ctx(), text))
                                            .monospace()
                                            .small(),
                                    );
                                });
                        });
                }
            });
    }
    egui::Window::new("About NMF Playground")
        .open(&mut view.show_about)
        .collapsible(false)
        .show(ctx, |ui| {
            ui.label(
                "Nonnegative matrix factorization with side information, live.\n\
                 Load data, pick a model, press Run (Space) and watch H converge.\n\
                 Every figure can be reproduced headless: `nmf-playground run --help`.",
            );
        });
}

/// While files are dragged over the window: a dimmed overlay naming what would open.
pub fn drop_overlay(ctx: &egui::Context) {
    let hovered = ctx.input(|i| i.raw.hovered_files.clone());
    if hovered.is_empty() {
        return;
    }
    let what = hovered
        .first()
        .and_then(|f| f.path.as_ref())
        .map_or_else(|| "file".to_owned(), |p| p.display().to_string());
    let painter = ctx.layer_painter(egui::LayerId::new(
        egui::Order::Foreground,
        egui::Id::unique("drop_overlay"),
    ));
    let rect = ctx.content_rect();
    painter.rect_filled(rect, 0.0, egui::Color32::from_black_alpha(180));
    painter.text(
        rect.center(),
        egui::Align2::CENTER_CENTER,
        format!("Drop to open\n{what}"),
        egui::FontId::proportional(24.0),
        egui::Color32::WHITE,
    );
}
