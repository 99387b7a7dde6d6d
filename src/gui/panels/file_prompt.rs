//! The typed-path window of [`crate::gui::file_prompt`].

use eframe::egui;

use crate::gui::command::Commands;
use crate::gui::view::ViewState;
use std::path::PathBuf;

/// Draw the path window while one is open; Enter or the action's button carries it out,
/// "Browse…" hands over to the native dialog, Cancel (or Esc) closes it.
pub fn window(ctx: &egui::Context, view: &mut ViewState, cmds: &mut Commands) {
    let Some(prompt) = view.file_prompt.as_mut() else {
        return;
    };
    let ask = prompt.ask;
    let mut close = false;
    let mut open = true;
    egui::Window::new(ask.title())
        .open(&mut open)
        .collapsible(false)
        .resizable(false)
        .default_width(420.0)
        .anchor(egui::Align2::CENTER_CENTER, egui::vec2(0.0, -60.0))
        .show(ctx, |ui| {
            let l = ui.label("File path");
            let resp = ui
                .add(
                    egui::TextEdit::singleline(&mut prompt.path)
                        .desired_width(400.0)
                        .hint_text("folder/name.json"),
                )
                .labelled_by(l.id);
            if std::mem::take(&mut prompt.fresh) {
                resp.request_focus();
            }
            ui.label(
                egui::RichText::new(
                    "Relative paths start in the folder the app was started from; missing \
                     folders are created when saving.",
                )
                .weak()
                .small(),
            );
            let enter = resp.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            let typed = prompt.path.trim().to_owned();
            ui.horizontal(|ui| {
                let go = ui.add_enabled(!typed.is_empty(), egui::Button::new(ask.verb()));
                if go.clicked() || (enter && !typed.is_empty()) {
                    cmds.push(ask.command(PathBuf::from(&typed)));
                    close = true;
                }
                if ui
                    .button("Browse…")
                    .on_hover_text("The system's file dialog, where there is one")
                    .clicked()
                {
                    cmds.push(ask.native());
                    close = true;
                }
                if ui.button("Cancel").clicked() {
                    close = true;
                }
            });
        });
    if close || !open {
        view.file_prompt = None;
    }
}
