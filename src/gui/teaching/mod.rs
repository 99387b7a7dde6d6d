//! Teaching controls in the right panel, under the model's: step, reset, the run's speed, and
//! the model's update rule with its terms' values ([`panel`]). The chosen speed is its own.

mod panel;

use crate::gui::command::Addressed;
use crate::gui::feature::{Feature, Place, Shared};
use eframe::egui;
use std::any::Any;

/// The name its messages are addressed to.
const NAME: &str = "teaching";

/// What its panel asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Run at most this many iterations per second (0: full speed).
    SetRate(u32),
}

impl Addressed for Command {
    const FEATURE: &'static str = NAME;
}

/// The teaching controls' state.
#[derive(Debug, Default)]
pub struct Teaching {
    /// Iterations per second asked for (0: full speed).
    rate: u32,
}

impl Feature for Teaching {
    fn name(&self) -> &'static str {
        NAME
    }

    fn on_message(&mut self, msg: Box<dyn Any + Send>, app: &mut Shared<'_>) {
        if let Ok(cmd) = msg.downcast::<Command>() {
            let Command::SetRate(rate) = *cmd;
            self.rate = rate;
            app.run.set_rate(rate);
        }
    }

    fn ui(&mut self, place: Place, ui: &mut egui::Ui, app: &mut Shared<'_>) {
        if place == Place::Right {
            panel::show(ui, app.settings, app.run, self.rate, app.commands);
        }
    }

    crate::feature_any!();
}
