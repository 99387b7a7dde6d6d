//! Compare two finished runs side by side: the state of the window ([`state`]), the
//! alignment and triplet flags computed on a background task ([`job`]), and the window
//! ([`panel`]).

mod job;
mod panel;
mod state;

pub use job::{refusal, run_title};
pub use state::{CompareView, Comparison, PLAY_SECONDS, Pane, morph};

use crate::gui::command::Addressed;
use crate::gui::feature::{Feature, Place, Shared, TaskPanicked};
use eframe::egui;
use std::any::Any;

/// The name its messages are addressed to.
const NAME: &str = "compare";

/// What the rest of the app asks of the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Open the comparison of history runs A and B (B aligned to A).
    Runs([u64; 2]),
}

impl Addressed for Command {
    const FEATURE: &'static str = NAME;
}

impl Feature for CompareView {
    fn name(&self) -> &'static str {
        NAME
    }

    fn logic(&mut self, app: &mut Shared<'_>) {
        self.update_compare(app);
    }

    fn on_message(&mut self, msg: Box<dyn Any + Send>, app: &mut Shared<'_>) {
        let msg = match msg.downcast::<Command>() {
            Ok(cmd) => {
                let Command::Runs(pair) = *cmd;
                return self.compare_runs(pair, app);
            }
            Err(msg) => msg,
        };
        let msg = match msg.downcast::<job::Compared>() {
            Ok(done) => return self.compared(*done, app),
            Err(msg) => msg,
        };
        if let Ok(p) = msg.downcast::<TaskPanicked>() {
            self.computing = None;
            app.session.set_error(format!(
                "The compare task stopped unexpectedly (a bug: please report it): {}",
                p.0
            ));
        }
    }

    fn ui(&mut self, place: Place, ui: &mut egui::Ui, app: &mut Shared<'_>) {
        match place {
            Place::Windows => panel::window(ui.ctx(), app.session, self, &mut app.view.thumbnails),
            Place::ViewMenu => self.menu_item(ui, app),
            Place::History => self.history_button(ui, app),
            _ => {}
        }
    }

    crate::feature_any!();
}

impl CompareView {
    /// View ▸ "Compare two runs side by side": the two runs selected in the history, or the
    /// window saying how to pick them.
    fn menu_item(&mut self, ui: &mut egui::Ui, app: &mut Shared<'_>) {
        let clicked = ui
            .button("Compare two runs side by side")
            .on_hover_text("The two runs selected in the history table, B aligned to A")
            .clicked();
        if !clicked {
            return;
        }
        match app.view.selected_runs[..] {
            [a, b] => self.compare_runs([a, b], app),
            _ => {
                self.open = true;
                self.pair = None;
                self.refusal = None;
            }
        }
    }

    /// Under the run history, with two runs ticked: "Compare side by side".
    fn history_button(&mut self, ui: &mut egui::Ui, app: &mut Shared<'_>) {
        if let [a, b] = app.view.selected_runs[..]
            && ui
                .button("Compare side by side")
                .on_hover_text(format!(
                    "Run {a}'s and run {b}'s layouts side by side, run {b}'s aligned to run \
                     {a}'s by Procrustes, with the triplets one keeps and the other violates"
                ))
                .clicked()
        {
            self.compare_runs([a, b], app);
        }
    }
}
