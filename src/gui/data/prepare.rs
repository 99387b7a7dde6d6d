//! X prepared for the selected model. `auto` preprocessing depends on the kind of model
//! (docs/models.md §1: a compositional table keeps its scale for a model that compares
//! samples), and the app loads before the user picks the model, so a loaded dataset keeps what
//! `auto` gives for each kind ([`Dataset::auto_choice_for`]). When the selected model needs
//! the other choice, the source is loaded again with it on the loader's background task, as
//! Reload does: the raw content is the same, so the constraints and the label choice stay,
//! and no question is asked.
//!
//! Only one X is ever held (a second, raw copy would double the memory at 200,000 × 784,
//! 1.25 GB each), so preparing again means reading the source again. It is started between
//! frames when no run is active (a run keeps the X it started on until it ends), or at once
//! when a run is asked for on X prepared for another model ([`UiCommand::PrepareForModel`]).

use super::Data;
use crate::engine::data::{AutoFor, Dataset, Preprocess};
use crate::gui::feature::Shared;

/// A load in flight that prepares the current data again for another kind of model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Preparing {
    pub ticket: u64,
    pub kind: AutoFor,
}

/// What the selected model needs that the loaded X is not: `auto`'s choice and reason for the
/// selected model, when the preprocessing is `auto` and X was prepared for another kind of
/// model. `None` when X fits it (or the choice is explicit, or no data is loaded).
pub fn needed_for_model<'a>(
    settings: &crate::gui::state::Settings,
    data: Option<&'a Dataset>,
) -> Option<&'a crate::engine::data::preprocess::AutoChoice> {
    if settings.preprocess != Preprocess::Auto {
        return None;
    }
    data?.auto_choice_for(settings.auto_for())
}

impl Data {
    /// Start preparing X for the selected model when it needs another `auto` choice; not
    /// while something is loading, nor again after it failed on the same data.
    pub(super) fn prepare_for_model(&mut self, app: &mut Shared<'_>) {
        if app.session.loading.is_some() {
            return;
        }
        let data = app.session.dataset.as_deref();
        let Some(need) = needed_for_model(app.settings, data) else {
            return;
        };
        let (Some(data), Some(source)) = (data, app.session.source.clone()) else {
            // Installed from memory: there is nothing to read again; X stays as it is and
            // the Data panel says what it was prepared with.
            return;
        };
        let kind = app.settings.auto_for();
        if self.failed == Some((data.fingerprint, kind)) {
            return;
        }
        let choice = need.choice;
        let model = model_label(app);
        self.start_load(source, app);
        if app.session.loading.is_some() {
            self.preparing = Some(Preparing {
                ticket: self.ticket,
                kind,
            });
            let what = app.session.loading.take().unwrap_or_default();
            app.session.loading = Some(format!("{what} for {model} (auto: {})", choice.name()));
            app.session.set_status(format!(
                "Preparing {what} for {model}: auto preprocessing gives {} for it…",
                choice.name()
            ));
        }
    }
}

impl Preparing {
    /// Whether the selected model still needs what this preparation loads (the user may have
    /// picked another model, or an explicit preprocessing, while it was loading).
    pub(super) fn wanted(self, settings: &crate::gui::state::Settings) -> bool {
        settings.preprocess == Preprocess::Auto && settings.auto_for() == self.kind
    }
}

/// The selected model's name, as the model panel shows it.
pub(super) fn model_label(app: &Shared<'_>) -> &'static str {
    app.settings
        .model_kind()
        .map_or("the selected model", |k| k.label())
}
