//! View state: what several features draw from or type into, apart from the data it shows
//! (the [`super::Session`]) and from what is persisted ([`super::Settings`]): the scatter's
//! picture ([`scatter_cache`]: point groups and painted rings; [`points`]: search, selection,
//! neighbours), selections, text fields, open windows, thumbnails. Never persisted; features
//! borrow it mutably while the session is borrowed for reading. What one feature alone uses
//! is that feature's own.

use crate::engine::constraints::ProtocolOptions;
use crate::engine::data::Dataset;
use crate::engine::jobs::worker::Snapshot;
use eframe::egui;

pub mod points;
pub mod scatter_cache;

use super::explore::ExploreView;
use super::state::{ColorBy, Evaluation};
use super::textures::ThumbnailCache;
use points::PointsView;
use scatter_cache::{PaintedRings, ScatterCache};

/// How long the status line's slowest frame stays shown.
pub const FRAME_PEAK_WINDOW: std::time::Duration = std::time::Duration::from_secs(3);

/// See the module docs.
pub struct ViewState {
    /// A native file dialog is open (at most one at a time).
    pub dialog_open: bool,
    // ----- the scatter's picture, shared with search, export, runs and constraints
    /// The class painted in Label mode (an existing class name or a new one).
    pub paint_class: String,
    /// The triplet (position in the store) whose row the pointer is over in the list.
    pub hovered_triplet: Option<usize>,
    /// Do not draw the triplets' i–j / i–q lines (many generated triplets hide the points).
    pub hide_triplets: bool,
    pub color_by: ColorBy,
    /// Show the model's learned subspace (PSMF's Πᵀx) instead of H, when it has one.
    pub show_subspace: bool,
    /// Per-label point groups of the latest snapshot, built once per snapshot.
    pub scatter: ScatterCache,
    /// The painted labels as rings at the scatter's positions, built again when either
    /// changes.
    pub rings: PaintedRings,
    /// The left and right panels' rects of the last frame (None when hidden); tests check
    /// that they never cover the plot.
    pub panel_rects: [Option<egui::Rect>; 2],
    pub(crate) thumbnails: ThumbnailCache,
    /// The exploration views: basis gallery, teaching controls, suggestions, tour.
    pub explore: ExploreView,
    /// Search, isolated selection, pinned sample and neighbours (issue 21 point 4).
    pub points: PointsView,
    // ----- results
    /// History ids selected in the table (at most two; two overlay their curves).
    pub selected_runs: Vec<u64>,
    // ----- text fields and windows
    /// Text of the constraint file path field.
    pub constraints_path_input: String,
    pub show_model_help: bool,
    pub show_about: bool,
    /// The "Generate triplets" window is open.
    pub show_generate: bool,
    /// Protocol options of the "Generate triplets" window.
    pub generate: ProtocolOptions,
    /// Generate from the ground truth (else from the painted labels).
    pub generate_from_truth: bool,
    /// Percentage of samples whose labels "Reveal" paints.
    pub reveal_percent: f64,
    pub reveal_seed: u64,
    /// Frame time of the last `logic` + `ui` pass, in milliseconds.
    pub frame_ms: f32,
    /// The slowest recent frame (milliseconds, and when it was): the status line shows it
    /// beside the last one, so a slow frame among fast ones (a new snapshot) can be read.
    pub frame_peak: (f32, Option<std::time::Instant>),
    /// The UI thread's CPU time in the last frame and the most of the recent ones
    /// (milliseconds; `None` where the clock is missing), reset with `frame_peak`.
    pub frame_cpu: Option<(f32, f32)>,
    /// The typed-path window of a file action, while it is open.
    pub file_prompt: Option<super::file_prompt::FilePrompt>,
    /// Whether the window was narrow (the data panel folded) at the last frame.
    pub was_narrow: Option<bool>,
}

impl Default for ViewState {
    fn default() -> Self {
        Self::new()
    }
}

impl ViewState {
    /// Open the path window for `ask`, prefilled from the session (see
    /// [`FilePrompt::for_ask`](super::file_prompt::FilePrompt::for_ask)).
    pub fn ask_path(&mut self, ask: super::command::PathAsk, session: &super::state::Session) {
        self.file_prompt = Some(super::file_prompt::FilePrompt::for_ask(ask, session));
    }

    /// The view of a fresh app.
    pub fn new() -> Self {
        Self {
            dialog_open: false,
            paint_class: String::new(),
            hovered_triplet: None,
            hide_triplets: false,
            color_by: ColorBy::default(),
            show_subspace: false,
            scatter: ScatterCache::default(),
            rings: PaintedRings::default(),
            panel_rects: [None, None],
            thumbnails: ThumbnailCache::default(),
            explore: ExploreView::default(),
            points: PointsView::default(),
            selected_runs: Vec::new(),
            constraints_path_input: String::new(),
            show_model_help: false,
            show_about: false,
            show_generate: false,
            generate: ProtocolOptions::default(),
            generate_from_truth: true,
            reveal_percent: 10.0,
            reveal_seed: 0,
            frame_ms: 0.0,
            frame_peak: (0.0, None),
            frame_cpu: None,
            file_prompt: None,
            was_narrow: None,
        }
    }

    /// Forget what was drawn of the previous run (new run or new dataset).
    /// Record a frame of `ms` milliseconds: the last one, and the slowest of the last
    /// [`FRAME_PEAK_WINDOW`] (a peak older than that gives way to the next frame).
    pub fn frame_time(&mut self, ms: f32, cpu_ms: Option<f32>, now: std::time::Instant) {
        self.frame_ms = ms;
        let (peak, at) = self.frame_peak;
        let stale = at.is_none_or(|t| now.duration_since(t) > FRAME_PEAK_WINDOW);
        if stale || ms >= peak {
            self.frame_peak = (ms, Some(now));
        }
        self.frame_cpu = cpu_ms.map(|c| match self.frame_cpu {
            Some((_, most)) if !stale => (c, most.max(c)),
            _ => (c, c),
        });
    }

    pub fn clear_run(&mut self) {
        self.scatter = ScatterCache::default();
        self.rings = PaintedRings::default();
    }

    /// Forget picks that refer to the previous dataset's samples (the scatter forgets its
    /// own when told the dataset changed).
    pub fn clear_picks(&mut self) {
        self.hovered_triplet = None;
    }

    /// Rebuild the scatter groups from `snapshot`, coloured as [`Self::color_by`] asks
    /// (clusters need the run's `evaluation`).
    ///
    /// Without a run's snapshot, the PCA-2D of X (`x_view`) is shown, coloured by the truth.
    /// While a selection is isolated, only its samples are kept, at their own projection.
    pub fn rebuild_scatter(
        &mut self,
        data: Option<&Dataset>,
        snapshot: Option<&Snapshot>,
        x_view: Option<&Snapshot>,
        evaluation: Option<&Evaluation>,
    ) {
        let Some(data) = data else {
            return;
        };
        let (snap, of_data) = match (snapshot, x_view) {
            (Some(s), _) => (s, false),
            (None, Some(x)) if x.projection.nrows() == data.n() => (x, true),
            _ => return,
        };
        // The model's subspace in place of H's projection, when asked for and there.
        let swapped;
        let mut subspace = None;
        let snap = match (&snap.outputs.subspace, self.show_subspace) {
            (Some((name, p)), true) if p.nrows() == data.n() => {
                subspace = Some(*name);
                swapped = Snapshot {
                    projection: p.clone(),
                    ..snap.clone()
                };
                &swapped
            }
            _ => snap,
        };
        // Isolated: only the selection, at its own projection (the others at NaN, dropped).
        let isolated;
        let full = self
            .points
            .isolation
            .as_ref()
            .and_then(|iso| iso.full_projection(snap.projection.nrows()));
        let snap = match full {
            Some(projection) => {
                isolated = Snapshot {
                    projection,
                    ..snap.clone()
                };
                &isolated
            }
            None => snap,
        };
        self.rings = PaintedRings::default();
        self.scatter = match self.color_by {
            ColorBy::Cluster if !of_data => ScatterCache::build_coloured(data, snap, evaluation),
            ColorBy::ModelValue if !of_data => ScatterCache::build_by_value(data, snap),
            ColorBy::ModelLabels if !of_data => ScatterCache::build_by_labels(data, snap),
            ColorBy::Predicted if !of_data => ScatterCache::build_by_predictions(data, snap),
            _ => ScatterCache::build_coloured(data, snap, None),
        };
        self.scatter.of_data = of_data;
        self.scatter.subspace = subspace;
        if self.points.isolation.is_some() {
            self.scatter.retain_finite();
        }
    }

    /// What the scatter shows (its caption, and the title of its exported figure).
    pub fn scatter_caption(&self) -> String {
        let cache = &self.scatter;
        if let Some(iso) = &self.points.isolation {
            let what = if cache.of_data { "X" } else { "H" };
            format!(
                "Isolated: PCA-2D of {what} of the {} selected samples alone · iteration {} \
                 (Show all for every sample)",
                iso.samples.len(),
                cache.iteration
            )
        } else if cache.of_data {
            "PCA-2D of X (the data; a run replaces it with its H)".to_owned()
        } else if let Some(name) = cache.subspace {
            format!(
                "PCA-2D of the model's {name} · iteration {}",
                cache.iteration
            )
        } else if cache.index_axes {
            format!("H (k = 1) by sample · iteration {}", cache.iteration)
        } else {
            format!("PCA-2D of H · iteration {}", cache.iteration)
        }
    }

    /// Select or unselect a history row; selecting a third drops the oldest selection.
    pub fn toggle_run(&mut self, id: u64) {
        if let Some(pos) = self.selected_runs.iter().position(|&r| r == id) {
            self.selected_runs.remove(pos);
        } else {
            self.selected_runs.push(id);
            if self.selected_runs.len() > 2 {
                self.selected_runs.remove(0);
            }
        }
    }

    /// Number of thumbnail textures uploaded so far (loaded lazily on hover).
    pub fn thumbnail_textures(&self) -> usize {
        self.thumbnails.len()
    }
}
