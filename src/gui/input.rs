//! Keyboard and window input that is not a widget's: shortcuts, the close request and
//! dropped files. Everything becomes a command, applied at the end of the frame.

use eframe::egui;

use super::{App, PathAsk, Pending, UiCommand, WorkerState};
use super::{constraints, data, runs, sessions};

impl App {
    /// Keyboard shortcuts (undo/redo/save, Space run/pause/resume, Esc cancel), the close
    /// request with unsaved constraints, and dropped files; all become commands.
    pub(super) fn handle_input(&mut self, ctx: &egui::Context) {
        if ctx.input(|i| i.viewport().close_requested()) && self.session.has_unsaved_constraints() {
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            self.session.pending = Some(Pending::Quit);
        }
        if !ctx.text_edit_focused() && self.session.pending.is_none() {
            use egui::{Key, KeyboardShortcut, Modifiers};
            let shortcut = |m, k| KeyboardShortcut::new(m, k);
            let (redo, undo, save, save_session, open_session) = ctx.input_mut(|i| {
                // Shift+Z first: Ctrl+Z would also match it (extra Shift is ignored).
                let redo = i
                    .consume_shortcut(&shortcut(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z))
                    || i.consume_shortcut(&shortcut(Modifiers::COMMAND, Key::Y));
                let undo = i.consume_shortcut(&shortcut(Modifiers::COMMAND, Key::Z));
                // Shift+S first, as for Z.
                let save_session =
                    i.consume_shortcut(&shortcut(Modifiers::COMMAND | Modifiers::SHIFT, Key::S));
                let save = i.consume_shortcut(&shortcut(Modifiers::COMMAND, Key::S));
                let open_session = i.consume_shortcut(&shortcut(Modifiers::COMMAND, Key::O));
                (redo, undo, save, save_session, open_session)
            });
            if save_session {
                self.commands.send(sessions::Command::Save(None));
            }
            if open_session {
                self.commands.push(UiCommand::AskPath(PathAsk::OpenSession));
            }
            if redo {
                self.commands.send(constraints::Command::Redo);
            }
            if undo {
                self.commands.send(constraints::Command::Undo);
            }
            if save {
                self.commands.send(constraints::Command::Save(None));
            }
            // Esc while a triplet is being built was taken by the scatter.
            let active = self.run.worker.is_active();
            let (space, esc) = ctx.input_mut(|i| {
                let space = i.consume_key(egui::Modifiers::NONE, egui::Key::Space);
                let esc = active && i.consume_key(egui::Modifiers::NONE, egui::Key::Escape);
                (space, esc)
            });
            if esc {
                self.commands.send(runs::Command::Stop);
            }
            if space {
                self.commands.send(match self.run.worker {
                    WorkerState::Running => runs::Command::Pause,
                    WorkerState::Paused => runs::Command::Resume,
                    WorkerState::Idle
                    | WorkerState::Finished(_)
                    | WorkerState::Failed
                    | WorkerState::Cancelled => runs::Command::Run,
                });
            }
        }
        let dropped = ctx.input(|i| i.raw.dropped_files.first().map(|f| f.path().to_path_buf()));
        if let Some(p) = dropped {
            self.commands.send(data::Command::LoadPath(p));
        }
    }
}
