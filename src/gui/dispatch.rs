//! Routing what the frame produced, in the order it was asked for: a message addressed to
//! one feature goes to it; a shared [`UiCommand`] is offered to the features in turn (the
//! one it concerns carries it out), and the few that are the window's own (theme, quit, the
//! path prompt) are applied here. The events the features raised meanwhile are told to all
//! of them.

use eframe::egui;

use super::command::Queued;
use super::state::Pending;
use super::{App, UiCommand};

/// How many rounds of commands one frame applies: a command may push another (a resolved
/// question carries out the held-back load), never in an endless chain.
const MAX_ROUNDS: usize = 8;

impl App {
    /// Carry out every command pushed and every message sent this frame, in order, and
    /// those they push in turn.
    pub(super) fn apply_commands(&mut self) {
        for _ in 0..MAX_ROUNDS {
            let queued = self.commands.take();
            if queued.is_empty() {
                break;
            }
            for q in queued {
                let (features, mut app) = self.parts();
                match q {
                    Queued::Shared(cmd) => {
                        if let Some(cmd) = features.command(cmd, &mut app) {
                            self.apply(cmd);
                        }
                    }
                    Queued::Routed(msg) => features.deliver(msg, &mut app),
                }
                self.tell_events();
            }
        }
    }

    /// The commands no feature carries out: the window's own.
    fn apply(&mut self, cmd: UiCommand) {
        match cmd {
            UiCommand::SetDark(dark) => {
                self.settings.dark = dark;
                super::style::set_theme(&self.ctx, dark);
            }
            UiCommand::Quit => {
                if self.session.has_unsaved_constraints() {
                    self.session.pending = Some(Pending::Quit);
                } else {
                    self.ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                }
            }
            UiCommand::AskPath(ask) => self.view.ask_path(ask, &self.session),
            other => {
                debug_assert!(false, "no feature carries out {other:?}");
            }
        }
    }

    /// Tell every feature the events raised since the last call (and those raised while
    /// telling them).
    pub(super) fn tell_events(&mut self) {
        for _ in 0..MAX_ROUNDS {
            let events = std::mem::take(&mut self.events);
            if events.is_empty() {
                break;
            }
            for event in events {
                let (features, mut app) = self.parts();
                features.event(event, &mut app);
            }
        }
    }
}
