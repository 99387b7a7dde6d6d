//! The one interface the app routes to. A feature (the comparison of two runs, the k scan,
//! the tour, …) is one folder under `src/gui/` holding its state, its commands, its
//! background tasks' results and its drawing; the app keeps a list of them and calls each in
//! turn, as egui's demo keeps its `Demo`s and brush its `AppPane`s.
//!
//! A feature's commands and task results are its own types, marked [`Addressed`] to it; the
//! app delivers them to [`Feature::on_message`], where the feature downcasts them. It reads
//! and changes what is shared through [`Shared`], never through the app.

use eframe::egui;
use std::any::Any;

use super::command::Routed;
pub use super::command::TaskPanicked;
pub use super::command::UiCommand;
pub use super::shared::{Event, Shared};

/// Where in the window a feature draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// The left panel, from its top: data, constraints, suggestions (in the features'
    /// order).
    Left,
    /// The right panel's upper part, which scrolls: the model's controls, teaching, the
    /// model's feature weights, the scores (in the features' order).
    Right,
    /// The middle, above the foot: the scatter.
    Centre,
    /// The middle's foot, a pane of its own: the convergence plot.
    Foot,
    /// Under the menu bar, the window's whole width.
    TopStrip,
    /// The top bar's File menu, before Quit.
    FileMenu,
    /// The menu bar between File and View: a feature's own menus.
    Menus,
    /// The top bar's View menu.
    ViewMenu,
    /// The top bar's Help menu, after its own items.
    HelpMenu,
    /// The right panel's foot, under the run history.
    History,
    /// Floating windows (the `ui` given is the window's root).
    Windows,
}

/// One feature of the app (see the module docs). Every method but the name has a default
/// that does nothing, so a feature implements only what it uses.
pub trait Feature: Any {
    /// The name its messages are addressed to ([`Addressed::FEATURE`]).
    fn name(&self) -> &'static str;

    /// Work between frames, before drawing: keep what it draws current with the shared state
    /// (prepare, never block).
    fn logic(&mut self, _app: &mut Shared<'_>) {}

    /// Something happened to the shared state.
    fn on_event(&mut self, _event: Event, _app: &mut Shared<'_>) {}

    /// One of the shared commands ([`UiCommand`]: what concerns several features, such as
    /// the path window's answer): carry it out and return `None`, or hand it back when it
    /// is not this feature's.
    fn on_command(&mut self, cmd: UiCommand, _app: &mut Shared<'_>) -> Option<UiCommand> {
        Some(cmd)
    }

    /// The window is closing: write what must not be lost.
    fn on_exit(&mut self, _app: &mut Shared<'_>) {}

    /// A message addressed to it: one of its commands, or its background task's result
    /// ([`TaskPanicked`] when the task panicked).
    fn on_message(&mut self, _msg: Box<dyn Any + Send>, _app: &mut Shared<'_>) {}

    /// Draw its part of `place`.
    fn ui(&mut self, _place: Place, _ui: &mut egui::Ui, _app: &mut Shared<'_>) {}

    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// The app's features, in drawing order.
pub struct Features(Vec<Box<dyn Feature>>);

impl Features {
    pub fn new(list: Vec<Box<dyn Feature>>) -> Self {
        Self(list)
    }

    /// The feature of type `F`, if the app has it.
    pub fn get<F: Feature>(&self) -> Option<&F> {
        self.0.iter().find_map(|f| f.as_any().downcast_ref::<F>())
    }

    /// The feature of type `F`, to change as its panel would.
    pub fn get_mut<F: Feature>(&mut self) -> Option<&mut F> {
        self.0
            .iter_mut()
            .find_map(|f| f.as_any_mut().downcast_mut::<F>())
    }

    /// Deliver `routed` to the feature it is addressed to (dropped when none has that name:
    /// a message of a feature the app does not have).
    pub fn deliver(&mut self, routed: Routed, app: &mut Shared<'_>) {
        if let Some(f) = self.0.iter_mut().find(|f| f.name() == routed.to) {
            f.on_message(routed.msg, app);
        } else if let Ok(p) = routed.msg.downcast::<TaskPanicked>() {
            app.session.set_error(format!(
                "A background task stopped unexpectedly (a bug: please report it): {}",
                p.0
            ));
        }
    }

    /// Offer `cmd` to each feature in turn; what none carried out comes back.
    pub fn command(&mut self, cmd: UiCommand, app: &mut Shared<'_>) -> Option<UiCommand> {
        let mut cmd = Some(cmd);
        for f in &mut self.0 {
            cmd = f.on_command(cmd?, app);
        }
        cmd
    }

    pub fn exit(&mut self, app: &mut Shared<'_>) {
        for f in &mut self.0 {
            f.on_exit(app);
        }
    }

    pub fn logic(&mut self, app: &mut Shared<'_>) {
        for f in &mut self.0 {
            f.logic(app);
        }
    }

    /// Tell every feature `event`.
    pub fn event(&mut self, event: Event, app: &mut Shared<'_>) {
        for f in &mut self.0 {
            f.on_event(event, app);
        }
    }

    pub fn ui(&mut self, place: Place, ui: &mut egui::Ui, app: &mut Shared<'_>) {
        for f in &mut self.0 {
            f.ui(place, ui, app);
        }
    }
}

/// The `as_any` pair every feature implements the same way.
#[macro_export]
macro_rules! feature_any {
    () => {
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
        fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
            self
        }
    };
}
