//! Typed paths for every file action that used to need a native dialog (sessions, and the
//! constraint files when their field is empty): a small window with the path field prefilled
//! with a suggested name, the action's button, and "Browse…" for the native dialog where one
//! exists. Saving creates missing folders ([`crate::engine::machine::fsutil::write_atomic`]).
//!
//! The window is shared by the features whose actions need a path (sessions, constraints):
//! [`UiCommand::AskPath`] opens it, and its answer goes back as [`UiCommand::PathGiven`] to
//! the feature whose action it is.

use eframe::egui;

use super::command::{Commands, FileAction, PathAnswer, PathAsk, UiCommand};
use super::state::Session;
use std::path::PathBuf;

/// The open path window: what it is for and the text typed so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilePrompt {
    pub ask: PathAsk,
    pub path: String,
    /// Focus the field on the first frame.
    pub fresh: bool,
}

impl FilePrompt {
    /// The path window for `ask`, prefilled with the last path of its kind or a name made
    /// from the dataset's (`orl_32x32-session.json`, `iris-triplets.csv`).
    pub fn for_ask(ask: PathAsk, s: &Session) -> Self {
        let stem = s.dataset.as_ref().map_or_else(
            || "nmf".to_owned(),
            |d| super::evaluation::short_name(&d.source),
        );
        let last = match ask {
            PathAsk::SaveSession | PathAsk::OpenSession => s.session_path.clone(),
            PathAsk::Constraints(FileAction::Save | FileAction::Load) => s.constraints_path.clone(),
            PathAsk::Constraints(_) => None,
        };
        let suggested = match ask {
            PathAsk::SaveSession | PathAsk::OpenSession => format!("{stem}-session.json"),
            PathAsk::Constraints(FileAction::Save | FileAction::Load) => {
                format!("{stem}-constraints.json")
            }
            PathAsk::Constraints(_) => format!("{stem}-triplets.csv"),
        };
        let path = last.map_or(suggested, |p| p.display().to_string());
        FilePrompt {
            ask,
            path,
            fresh: true,
        }
    }
}

/// Draw the path window while one is open; Enter or the action's button carries it out,
/// "Browse…" hands over to the native dialog, Cancel (or Esc) closes it.
pub fn window(ctx: &egui::Context, open_prompt: &mut Option<FilePrompt>, cmds: &mut Commands) {
    let Some(prompt) = open_prompt.as_mut() else {
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
                    cmds.push(UiCommand::PathGiven(
                        ask,
                        PathAnswer::Typed(PathBuf::from(&typed)),
                    ));
                    close = true;
                }
                if ui
                    .button("Browse…")
                    .on_hover_text("The system's file dialog, where there is one")
                    .clicked()
                {
                    cmds.push(UiCommand::PathGiven(ask, PathAnswer::Browse));
                    close = true;
                }
                if ui.button("Cancel").clicked() {
                    close = true;
                }
            });
        });
    if close || !open {
        *open_prompt = None;
    }
}
