//! State of the side-by-side comparison of two finished runs (issue 21 point 2, the RPNMF
//! paper's Figure 2, live): run B's layout aligned to run A's by Procrustes, the triplets one
//! run keeps and the other violates, hover and selection linked across the views, and a morph
//! from one layout to the other.
//!
//! The alignment and the per-triplet flags are computed once per pair (and constraint
//! revision) on a background task ([`super::job`]); drawing only reads them. The
//! morph's points are an O(n) interpolation, rebuilt when the slider moves.

use crate::engine::constraints::Triplet;
use crate::engine::data::{Dataset, Fingerprint};
use crate::engine::eval::KeptByOne;
use crate::engine::jobs::worker::Snapshot;
use crate::engine::linalg::projection::Similarity;
use crate::gui::view::scatter_cache::ScatterCache;
use egui_plot::PlotTransform;
use ndarray::{Array2, ArrayView2};
use std::sync::Arc;

/// Seconds the play button takes to move the morph from 0 to 1.
pub const PLAY_SECONDS: f64 = 2.0;

/// The three views of the comparison, by index into [`CompareView`]'s per-view arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    /// Run A's layout as its last frame showed it.
    A = 0,
    /// Run B's layout aligned to A's.
    B = 1,
    /// The morph between them.
    Morph = 2,
}

impl Pane {
    pub const ALL: [Pane; 3] = [Pane::A, Pane::B, Pane::Morph];
}

/// What the background task computed for one pair of runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// History ids of runs A and B.
    pub runs: [u64; 2],
    /// The dataset both were fitted on.
    pub fingerprint: Fingerprint,
    /// The constraint revision the triplet flags belong to.
    pub rev: u64,
    /// Run A's layout (n×2).
    pub layout_a: Array2<f64>,
    /// Run B's layout after the alignment (n×2).
    pub layout_b: Array2<f64>,
    /// The similarity that maps B's layout onto A's, with its residual.
    pub alignment: Similarity,
    /// The RMS distance of A's points to their mean: the residual's yardstick.
    pub spread_a: f64,
    /// The store's triplets at `rev` (what `kept` indexes).
    pub triplets: Vec<Triplet>,
    /// Which triplets each run's H keeps (`None` without triplets).
    pub kept: Option<KeptByOne>,
    /// Each run's title (run, model, scores) and its parameters.
    pub titles: [[String; 2]; 2],
}

impl Comparison {
    /// The points at morph `t` (0: A's layout, 1: B's aligned layout), linearly in between.
    pub fn morph(&self, t: f64) -> Array2<f64> {
        morph(self.layout_a.view(), self.layout_b.view(), t)
    }
}

/// `(1 − t)·a + t·b`, with t clamped to [0, 1]; exactly `a` at 0 and `b` at 1.
pub fn morph(a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>, t: f64) -> Array2<f64> {
    let t = t.clamp(0.0, 1.0);
    if t == 0.0 {
        return a.to_owned();
    }
    if t == 1.0 {
        return b.to_owned();
    }
    &a * (1.0 - t) + &b * t
}

/// The comparison window's state (see the module docs).
#[derive(Default)]
pub struct CompareView {
    /// The window is shown.
    pub open: bool,
    /// The pair asked for (A, B).
    pub pair: Option<[u64; 2]>,
    /// Why the pair cannot be compared (another dataset, k = 1, ...).
    pub refusal: Option<String>,
    /// The pair and constraint revision being computed on a background task.
    pub computing: Option<([u64; 2], u64)>,
    pub result: Option<Arc<Comparison>>,
    /// The sample under the pointer in any of the views (highlighted in all).
    pub hovered: Option<usize>,
    /// The sample clicked in any of the views (ringed in all); a second click clears it.
    pub selected: Option<usize>,
    /// Morph position: 0 = A's layout, 1 = B's aligned layout.
    pub morph: f64,
    /// The play button is moving the morph.
    pub playing: bool,
    /// Do not mark the triplets kept by A only / by B only.
    pub hide_only: [bool; 2],
    /// Point groups of each view (A, B aligned, morph), built when the result arrives; the
    /// morph's again when the slider moves (`morph_built` is the value it was built at).
    pub caches: [ScatterCache; 3],
    pub morph_built: Option<f64>,
    /// Each view's transform of the last frame (tests hover and click at data coordinates).
    pub transforms: [Option<PlotTransform>; 3],
    /// The sample each view drew as hovered, and as selected, in the last frame.
    pub drawn_hover: [Option<usize>; 3],
    pub drawn_selection: [Option<usize>; 3],
}

impl CompareView {
    /// Ask for `pair`: forget the previous pair's result, hover and selection when it differs.
    pub fn begin(&mut self, pair: [u64; 2]) {
        self.open = true;
        self.refusal = None;
        if self.pair != Some(pair) {
            self.pair = Some(pair);
            self.result = None;
            self.hovered = None;
            self.selected = None;
            self.morph = 0.0;
            self.playing = false;
            self.caches = Default::default();
            self.morph_built = None;
        }
    }

    /// Refuse the pair asked for, saying why.
    pub fn refuse(&mut self, why: String) {
        self.result = None;
        self.computing = None;
        self.caches = Default::default();
        self.morph_built = None;
        self.refusal = Some(why);
    }

    /// Keep `result` and build the A and B views' groups (coloured by the truth).
    pub fn install(&mut self, data: &Dataset, result: Comparison) {
        self.caches[Pane::A as usize] = layout_cache(data, &result.layout_a);
        self.caches[Pane::B as usize] = layout_cache(data, &result.layout_b);
        self.morph_built = None;
        self.result = Some(Arc::new(result));
        self.rebuild_morph(data);
    }

    /// Rebuild the morph view's groups when the slider moved since the last build.
    pub fn rebuild_morph(&mut self, data: &Dataset) {
        let Some(result) = &self.result else {
            return;
        };
        if self.morph_built == Some(self.morph) {
            return;
        }
        self.caches[Pane::Morph as usize] = layout_cache(data, &result.morph(self.morph));
        self.morph_built = Some(self.morph);
    }

    /// Advance the play animation by `dt` seconds; returns whether it is still playing.
    pub fn advance(&mut self, dt: f64) -> bool {
        if !self.playing {
            return false;
        }
        self.morph = (self.morph + dt / PLAY_SECONDS).min(1.0);
        if self.morph >= 1.0 {
            self.playing = false;
        }
        self.playing
    }

    /// Start playing from where the slider is (from 0 when it is at the end).
    pub fn play(&mut self) {
        if self.morph >= 1.0 {
            self.morph = 0.0;
        }
        self.playing = true;
    }
}

/// The scatter groups of an n×2 layout, coloured by the dataset's truth as the main scatter.
fn layout_cache(data: &Dataset, layout: &Array2<f64>) -> ScatterCache {
    let snapshot = Snapshot {
        iteration: 0,
        // Two rows: a k = 1 (index against value) layout is refused before this.
        h: Array2::zeros((2, 0)),
        projection: layout.clone(),
        outputs: Default::default(),
        w: None,
    };
    ScatterCache::build_coloured(data, &snapshot, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// The morph is A at 0 and B at 1 exactly, linear in between, clamped outside; playing
    /// moves it over [`PLAY_SECONDS`] and stops at 1, and playing again starts from 0.
    #[test]
    fn morph_ends_at_the_two_layouts_and_play_runs_once_over_two_seconds() {
        let a = array![[0.0, 0.0], [1.0, 2.0]];
        let b = array![[4.0, -2.0], [1.0, 0.5]];
        assert_eq!(morph(a.view(), b.view(), 0.0), a);
        assert_eq!(morph(a.view(), b.view(), 1.0), b);
        assert_eq!(
            morph(a.view(), b.view(), 0.25),
            array![[1.0, -0.5], [1.0, 1.625]]
        );
        assert_eq!(morph(a.view(), b.view(), 7.0), b);
        let mut v = CompareView::default();
        v.play();
        assert!(v.advance(PLAY_SECONDS / 2.0));
        assert!((v.morph - 0.5).abs() < 1e-12);
        assert!(!v.advance(PLAY_SECONDS));
        assert_eq!(v.morph, 1.0);
        assert!(!v.advance(1.0), "stopped at the end");
        v.play();
        assert_eq!(v.morph, 0.0);
    }
}
