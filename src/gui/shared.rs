//! What every feature may read and change: the parts of the app that are not one feature's
//! own. Features depend on this module, never on the app (`gui/mod.rs`), which only routes.
//!
//! - [`Settings`]: persisted preferences (model, parameters, panels shown).
//! - [`Session`]: the domain state (dataset, constraints, finished runs, status line).
//! - [`RunController`]: the live run.
//! - [`ViewState`]: what several panels draw from (the scatter's groups, hover, selections).
//! - [`Tasks`]: the background-task helper, whose results come back to the feature that
//!   spawned them.
//! - [`Commands`]: the frame's deferred commands (the shared ones and those for one
//!   feature); a feature asks another for something by pushing a command, never by a call.
//! - The events raised for every feature ([`Shared::raise`]).

use eframe::egui;

use super::background::{Background, panic_text};
use super::command::{Addressed, Commands, Routed, TaskPanicked};
use super::run_controller::RunController;
use super::state::{Session, Settings};
use super::view::ViewState;
use crate::engine::constraints::{SideInfo, Store};
use crate::engine::models::{ModelKind, ModelSpec};
use std::sync::Arc;

/// Something that happened to the shared state, told to every feature. A feature raises one
/// with [`Shared::raise`]; the app tells every feature once the current call returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A dataset was installed (a load, a reload, a session): what referred to the previous
    /// one is stale.
    DatasetChanged,
    /// The installed dataset came with a new, empty constraint store (other raw content than
    /// the previous one).
    NewStore,
    /// A run was added to the history, or one of its rows was scored.
    HistoryChanged,
}

/// The shared state, borrowed for one call of a feature (see the module docs).
pub struct Shared<'a> {
    pub settings: &'a mut Settings,
    pub session: &'a mut Session,
    pub run: &'a mut RunController,
    pub view: &'a mut ViewState,
    pub tasks: &'a Tasks,
    pub commands: &'a mut Commands,
    pub ctx: &'a egui::Context,
    pub events: &'a mut Vec<Event>,
}

impl Shared<'_> {
    /// Tell every feature `event` (once the current call returns).
    pub fn raise(&mut self, event: Event) {
        self.events.push(event);
    }

    /// Rebuild the scatter's groups from the current dataset, snapshot and evaluation.
    pub fn redraw_scatter(&mut self) {
        self.view.rebuild_scatter(
            self.session.dataset.as_deref(),
            self.run.snapshot.as_deref(),
            self.session.x_view.as_deref(),
            self.session.evaluation.as_deref(),
        );
    }

    /// Forget everything about the previous run (new run or new dataset): its live state,
    /// what was drawn of it, and its evaluation.
    pub fn clear_run(&mut self) {
        self.run.clear();
        self.view.clear_run();
        self.session.evaluating = None;
        self.session.evaluation = None;
        self.session.shown_run = None;
        // Back to the data's own picture until the next run's first snapshot.
        self.view.rebuild_scatter(
            self.session.dataset.as_deref(),
            None,
            self.session.x_view.as_deref(),
            None,
        );
    }

    /// The dataset and the model spec of the settings; `None` (with the reason on the status
    /// line) when there is no dataset or no model.
    pub fn data_and_spec(&mut self) -> Option<(Arc<crate::engine::data::Dataset>, ModelSpec)> {
        let Some(data) = self.session.dataset.clone() else {
            self.session
                .set_error("No dataset loaded: open a file or a sample first");
            return None;
        };
        let Some(spec) = self.settings.model_spec() else {
            self.session.set_error("No model available");
            return None;
        };
        // `auto` gives this model another preprocessing than X has: prepare X first.
        if let Some(need) = data.auto_choice_for(spec.kind.auto_for())
            && self.settings.preprocess == crate::engine::data::Preprocess::Auto
        {
            self.session.set_error(format!(
                "Preparing the data for {} first (auto preprocessing gives {} for it): run \
                 again when it is loaded",
                spec.kind.label(),
                need.choice.name()
            ));
            self.commands
                .push(super::command::UiCommand::PrepareForModel);
            return None;
        }
        Some((data, spec))
    }

    /// The constraints as side information for a fit of `kind`; `None` (with the reason on
    /// the status line) when the model lacks what it needs.
    pub fn side_for(&mut self, kind: ModelKind) -> Option<Arc<SideInfo>> {
        let side = self
            .session
            .store
            .as_ref()
            .map(Store::snapshot)
            .unwrap_or_default();
        if let Err(e) = kind.check_side(&side) {
            self.session.set_error(format!("Cannot run: {e}"));
            return None;
        }
        Some(side)
    }
}

/// Features' one-off background tasks; each result is routed back to the feature it is
/// addressed to, and a task that panics answers with [`TaskPanicked`] to its feature.
pub struct Tasks(Background<Routed>);

impl Tasks {
    pub fn new(ctx: &egui::Context) -> Self {
        Self(Background::new(ctx, |task, message| Routed {
            to: "",
            msg: Box::new(TaskPanicked(format!("{task}: {message}"), task.to_owned())),
        }))
    }

    /// Run `task` on a thread named `nmf-{name}`; its result goes to the feature `M` is
    /// addressed to. The only error is a thread that could not start.
    pub fn spawn<M: Addressed>(
        &self,
        name: &str,
        task: impl FnOnce() -> M + Send + 'static,
    ) -> Result<(), String> {
        let task_name = name.to_owned();
        self.0.spawn(name, move || {
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(task)) {
                Ok(msg) => Routed::new(msg),
                Err(payload) => Routed {
                    to: M::FEATURE,
                    msg: Box::new(TaskPanicked(panic_text(payload.as_ref()), task_name)),
                },
            }
        })
    }

    /// Every result that has arrived since the last call, oldest first; never blocks.
    pub fn drain(&self) -> Vec<Routed> {
        self.0.drain()
    }
}
