//! One file per panel; the small bars and windows live here.

use eframe::egui;

pub mod data;
pub mod file_prompt;
pub mod labels;

use super::command::Commands;
use super::command::UiCommand;
use super::feature::{Features, Place, Shared};
use super::format::counted;
use super::run_controller::RunController;
use super::state::{Session, Settings, WorkerState};
use super::view::ViewState;
use crate::engine::data::samples::Sample;
use egui::{Color32, RichText};

pub use super::style::ERROR_RED;

/// Menu bar; on the right: dataset · n × m · k.
pub fn top_bar(ui: &mut egui::Ui, app: &mut Shared<'_>, features: &mut Features) {
    egui::Panel::top("top_bar").show(ui, |ui| {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui.button("Open file…").clicked() {
                    app.commands.push(UiCommand::OpenFileDialog);
                }
                if ui.button("Open folder…").clicked() {
                    app.commands.push(UiCommand::OpenFolderDialog);
                }
                ui.separator();
                if ui.button("Open session… (Ctrl+O)").clicked() {
                    app.commands.push(UiCommand::AskPath(
                        crate::gui::command::PathAsk::OpenSession,
                    ));
                }
                if ui.button("Save session (Ctrl+Shift+S)").clicked() {
                    app.commands.push(UiCommand::SaveSession(None));
                }
                if ui.button("Save session as…").clicked() {
                    app.commands.push(UiCommand::AskPath(
                        crate::gui::command::PathAsk::SaveSession,
                    ));
                }
                ui.checkbox(
                    &mut app.settings.session_factors,
                    "Include H and W in sessions",
                )
                .on_hover_text("Save each run's H and W as .npy files beside the session");
                ui.separator();
                if ui.button("Quit").clicked() {
                    app.commands.push(UiCommand::Quit);
                }
            });
            ui.menu_button("Samples", |ui| sample_items(ui, app.commands));
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

/// One button per bundled sample.
pub fn sample_items(ui: &mut egui::Ui, cmds: &mut Commands) {
    for &s in Sample::ALL {
        if ui.button(s.name()).clicked() {
            cmds.push(UiCommand::LoadSample(s));
        }
    }
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

/// `text` with every character the loaded fonts cannot draw replaced by a close ASCII
/// stand-in (engine texts are written for Markdown, with math symbols such as ‖).
pub fn displayable(ctx: &egui::Context, text: &str) -> String {
    let font = egui::FontId::proportional(14.0);
    ctx.fonts_mut(|f| {
        text.chars()
            .map(|c| {
                if c.is_control() || f.has_glyph(&font, c) {
                    c.to_string()
                } else {
                    match c {
                        '‖' => "||".to_owned(),
                        '→' => "->".to_owned(),
                        '←' => "<-".to_owned(),
                        '⊘' => "/".to_owned(),
                        'ᵀ' => "^T".to_owned(),
                        '⊙' => "*".to_owned(),
                        '√' => "sqrt".to_owned(),
                        _ => "?".to_owned(),
                    }
                }
            })
            .collect()
    })
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

/// The recovery offer ("Recover N unsaved edits from <time>") and the question about a
/// session whose data changed; at most one shows at a time.
pub fn session_modals(ctx: &egui::Context, session: &Session, cmds: &mut Commands) {
    if let Some(found) = &session.recovery_offer {
        // Only the buttons answer: a click beside the modal or Esc must not discard an
        // hour of edits.
        egui::Modal::new(egui::Id::unique("recovery_offer")).show(ctx, |ui| {
            ui.set_max_width(440.0);
            ui.heading("Unsaved edits found");
            ui.label(format!(
                "Recover {} from {}? ({}, {}; the app was closed without saving them.)",
                counted(found.edits as usize, "unsaved edit", "unsaved edits"),
                found.time_text(),
                counted(found.store.triplets().len(), "triplet", "triplets"),
                counted(
                    found.store.labels().n_labelled(),
                    "painted label",
                    "painted labels"
                )
            ));
            ui.horizontal(|ui| {
                if ui.button("Recover").clicked() {
                    cmds.send(crate::gui::sessions::Command::Recover(true));
                }
                if ui.button("Discard").clicked() {
                    cmds.send(crate::gui::sessions::Command::Recover(false));
                }
            });
        });
        return;
    }
    let Some(open) = &session.opening else {
        return;
    };
    let Some(why) = &open.changed else {
        return;
    };
    let resp = egui::Modal::new(egui::Id::unique("session_data_changed")).show(ctx, |ui| {
        ui.set_max_width(440.0);
        ui.heading("The data changed");
        ui.label(format!(
            "{} was saved on other data: {why}. Its triplets and labels may not mean the same \
             samples any more.",
            open.path.display()
        ));
        ui.horizontal(|ui| {
            if ui.button("Open the constraints anyway").clicked() {
                cmds.send(crate::gui::sessions::Command::DataChanged(true));
            }
            if ui.button("Stop: do not open them").clicked() {
                cmds.send(crate::gui::sessions::Command::DataChanged(false));
            }
        });
    });
    if resp.should_close() {
        cmds.send(crate::gui::sessions::Command::DataChanged(false));
    }
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
