//! The first-run tour (a strip under the menu bar, reopened from Help) and the keyboard
//! shortcuts overlay (toggled by `?`): their state here, their drawing in [`panel`].

mod panel;

pub use panel::{SHORTCUTS, TOUR};

use crate::gui::feature::{Feature, Place, Shared};
use eframe::egui;

/// The tour's and the shortcuts overlay's state.
#[derive(Default)]
pub struct Tour {
    /// The tour's current step, while it is shown.
    pub step: Option<usize>,
    /// The shortcuts overlay is shown (toggled by `?`).
    pub show_shortcuts: bool,
    /// The first frame was seen (the tour opens then unless it was seen before).
    started: bool,
}

impl Feature for Tour {
    fn name(&self) -> &'static str {
        "tour"
    }

    fn logic(&mut self, app: &mut Shared<'_>) {
        if !self.started {
            self.started = true;
            if !app.settings.tour_seen {
                self.step = Some(0);
            }
        }
        // `?` is a typed character (Shift+/ on most layouts), not a key of its own.
        let ctx = app.ctx;
        if !ctx.text_edit_focused() && app.session.pending.is_none() {
            let question = ctx.input(|i| {
                i.events
                    .iter()
                    .any(|e| matches!(e, egui::Event::Text(t) if t == "?"))
            });
            if question {
                self.show_shortcuts = !self.show_shortcuts;
            }
        }
    }

    fn ui(&mut self, place: Place, ui: &mut egui::Ui, app: &mut Shared<'_>) {
        match place {
            Place::TopStrip => panel::strip(ui, app.settings, self),
            Place::HelpMenu => {
                if ui.button("Tour").clicked() {
                    self.step = Some(0);
                }
                if ui.button("Keyboard shortcuts (?)").clicked() {
                    self.show_shortcuts = true;
                }
            }
            Place::Windows => panel::shortcuts(ui.ctx(), self),
            _ => {}
        }
    }

    crate::feature_any!();
}
