//! The central scatter: the PCA-2D of H (or of X before a run) with its toolbar, legend,
//! overlays and the tools that build constraints and selections ([`panel`]).
//!
//! What only the scatter uses is its own ([`Scatter`]: the tool, the picks being built, the
//! overlays' switches, the plot's transform). The picture it draws is shared, in
//! [`ViewState`](crate::gui::view::ViewState) and its folder: the point groups and painted
//! rings (`view::scatter_cache`), the search, selection and neighbours (`view::points`), the
//! colouring and the painted class, since the search, export, runs and constraints features
//! read them too. `gui::point_image` stamps many points as one image (for the search too).

mod lasso;
mod panel;

pub use panel::{
    HIGHLIGHT, HOVER_PX, MAX_DRAWN, PICK_PX, SIDE_LEGEND_FROM, mark_label, nice_marks, sample_card,
    segment,
};

use crate::gui::feature::{Event, Feature, Place, Shared};
use crate::gui::state::Tool;
use eframe::egui;
use egui_plot::{PlotPoint, PlotTransform};

/// The scatter's own state.
#[derive(Default)]
pub struct Scatter {
    /// What a click on the scatter does.
    pub tool: Tool,
    /// The samples picked so far of the triplet being built (anchor i, then closer j).
    pub partial: Vec<usize>,
    /// The lasso being dragged in Label and Select mode, in plot coordinates.
    pub lasso: Vec<PlotPoint>,
    /// The sample under the pointer, if any.
    pub hovered: Option<usize>,
    /// Draw violated triplets in red.
    pub show_violations: bool,
    /// Draw the model's sample graph (graph models only).
    pub show_graph: bool,
    /// The group (class or cluster, by name) picked in the legend: its points are drawn on
    /// top at full strength and the others faded. `None`: all alike.
    pub highlight: Option<String>,
    /// The legend is shown (`None`: shown unless the plot is narrow).
    pub legend_shown: Option<bool>,
    /// The plot's transform of the last frame (tests click at data coordinates with it).
    pub plot_transform: Option<PlotTransform>,
}

impl Scatter {
    /// A triplet or a lasso is being built.
    fn building(&self) -> bool {
        !self.partial.is_empty() || !self.lasso.is_empty()
    }
}

impl Feature for Scatter {
    fn name(&self) -> &'static str {
        "scatter"
    }

    /// Esc drops the triplet or lasso being built (before the app's shortcuts, where Esc
    /// stops the run).
    fn logic(&mut self, app: &mut Shared<'_>) {
        let ctx = app.ctx;
        if self.building()
            && !ctx.text_edit_focused()
            && app.session.pending.is_none()
            && ctx.input_mut(|i| i.consume_key(egui::Modifiers::NONE, egui::Key::Escape))
        {
            self.partial.clear();
            self.lasso.clear();
            app.session.set_status("Cancelled the partial triplet");
        }
    }

    fn on_event(&mut self, event: Event, _app: &mut Shared<'_>) {
        if event == Event::DatasetChanged {
            // Picks refer to the previous dataset's samples.
            self.partial.clear();
            self.lasso.clear();
            self.hovered = None;
        }
    }

    fn ui(&mut self, place: Place, ui: &mut egui::Ui, app: &mut Shared<'_>) {
        if place == Place::Centre {
            panel::show(ui, app.session, app.run, self, app.view, app.commands);
        }
    }

    crate::feature_any!();
}
