//! A model's per-component feature weights (FNMF's Θ), in the right panel under the teaching
//! controls: the heat maps' textures are this feature's own, drawn by [`panel`].

mod panel;

use crate::gui::feature::{Feature, Place, Shared};
use eframe::egui;

/// The feature weights' section and its textures.
#[derive(Default)]
pub struct FeatureWeights {
    /// Textures of the weights and the snapshot iteration they show.
    textures: (Option<usize>, Vec<egui::TextureHandle>),
}

impl Feature for FeatureWeights {
    fn name(&self) -> &'static str {
        "weights"
    }

    fn ui(&mut self, place: Place, ui: &mut egui::Ui, app: &mut Shared<'_>) {
        if place != Place::Right {
            return;
        }
        if let (Some(data), Some(snap)) =
            (app.session.dataset.as_deref(), app.run.snapshot.as_deref())
        {
            panel::show(ui, data, snap, &mut self.textures);
        }
    }

    crate::feature_any!();
}
