//! The scatter's point groups: one group per class (or per k-means cluster) of the latest
//! snapshot's 2-D projection, built once per snapshot and borrowed by the plot every frame,
//! with each sample's position for triplet lines and picking.

use eframe::egui;

use crate::engine::constraints::Store;
use crate::engine::data::Dataset;
use crate::engine::jobs::worker::Snapshot;
use crate::engine::models::LabelOrigin;
use crate::gui::state::Evaluation;
use egui::Color32;
use egui_plot::{MarkerShape, PlotPoint, PlotTransform};

/// One colour group of the scatter (a class, or all samples when unlabelled).
#[derive(Clone, Debug, PartialEq)]
pub struct ScatterGroup {
    pub name: String,
    pub color: Color32,
    /// Marker of the group's points: circles for the first [`CLASS_COLOURS`]`.len()` classes,
    /// then other shapes (so that colours may repeat without two classes looking alike).
    pub marker: MarkerShape,
    pub points: Vec<PlotPoint>,
    /// Global sample index of each point.
    pub indices: Vec<usize>,
}

impl ScatterGroup {
    /// A group without points yet.
    fn empty(name: String, color: Color32, marker: MarkerShape) -> Self {
        Self {
            name,
            color,
            marker,
            points: Vec::new(),
            indices: Vec::new(),
        }
    }
}

/// Per-label point groups of the latest snapshot, built once per snapshot and borrowed by the
/// plot every frame.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScatterCache {
    /// Iteration of the snapshot the groups were built from.
    pub iteration: usize,
    /// The points are the PCA-2D of X (no run yet), not of a run's H.
    pub of_data: bool,
    /// The points are the model's learned subspace (its name), not H.
    pub subspace: Option<&'static str>,
    pub groups: Vec<ScatterGroup>,
    /// k = 1: the axes are (sample index, h) rather than PCA components.
    pub index_axes: bool,
    /// Position of every sample by index (for triplet lines and picking).
    pub by_sample: Vec<PlotPoint>,
    /// Colour by k-means cluster: positions of the samples whose cluster, mapped to a class by
    /// the Hungarian best map, disagrees with the truth (drawn as crosses).
    pub misassigned: Vec<PlotPoint>,
}

/// One class of painted labels as the scatter rings it: the legend name, the colour and the
/// positions of its samples.
pub type Ring = (String, Color32, Vec<PlotPoint>);

/// The painted labels as rings, prepared when the labels or the scatter's positions change,
/// not every frame (O(n) to build; the plot borrows them).
#[derive(Clone, Debug, Default)]
pub struct PaintedRings {
    /// The app's constraint revision and the store's revision the rings were built at
    /// (`None`: not built since the scatter was).
    built_at: Option<(u64, u64)>,
    rings: Vec<Ring>,
}

impl PaintedRings {
    /// The rings of `store`'s painted labels at the positions of `cache`, built again only
    /// when the store changed since the last call (`constraints_rev` counts replaced stores,
    /// the store's own revision its edits); `colour(name, c)` colours class `c`.
    pub fn get(
        &mut self,
        store: Option<&Store>,
        constraints_rev: u64,
        cache: &ScatterCache,
        colour: impl Fn(&str, usize) -> Color32,
    ) -> &[Ring] {
        let rev = store.map(|st| (constraints_rev, st.revision()));
        if self.built_at != rev || rev.is_none() {
            self.rings = store.map_or_else(Vec::new, |st| rings_of(st, cache, &colour));
            self.built_at = rev;
        }
        &self.rings
    }

    /// The rings of the last [`Self::get`].
    pub fn current(&self) -> &[Ring] {
        &self.rings
    }

    /// The revisions the rings are current for (`None`: to build at the next draw).
    pub fn built_at(&self) -> Option<(u64, u64)> {
        self.built_at
    }
}

/// Group the painted samples by class at their scatter positions (classes with none left out).
fn rings_of(
    store: &Store,
    cache: &ScatterCache,
    colour: &impl Fn(&str, usize) -> Color32,
) -> Vec<Ring> {
    let labels = store.labels();
    let mut by_class: Vec<Vec<PlotPoint>> = vec![Vec::new(); labels.n_classes()];
    for (i, c) in labels.as_slice().iter().enumerate() {
        if let (Some(c), Some(p)) = (c, cache.position(i))
            && let Some(v) = by_class.get_mut(*c)
        {
            v.push(p);
        }
    }
    labels
        .class_names()
        .iter()
        .zip(by_class)
        .enumerate()
        .filter(|(_, (_, v))| !v.is_empty())
        .map(|(c, (name, v))| (format!("painted: {name}"), colour(name, c), v))
        .collect()
}

/// Tab10-like palette, readable on dark and light backgrounds (the first ten of
/// [`CLASS_COLOURS`]; also used for highlights).
pub const PALETTE: [Color32; 10] = [
    Color32::from_rgb(31, 119, 180),
    Color32::from_rgb(255, 127, 14),
    Color32::from_rgb(44, 160, 44),
    Color32::from_rgb(214, 39, 40),
    Color32::from_rgb(148, 103, 189),
    Color32::from_rgb(140, 86, 75),
    Color32::from_rgb(227, 119, 194),
    Color32::from_rgb(127, 127, 127),
    Color32::from_rgb(188, 189, 34),
    Color32::from_rgb(23, 190, 207),
];

/// Forty class colours: Tab10, its light companions (Tab20's second half), then Tab20b's
/// twenty. Enough for ORL's 40 people without a repeat; beyond 40 the colours repeat with
/// another marker ([`class_marker`]).
pub const CLASS_COLOURS: [Color32; 40] = [
    PALETTE[0],
    PALETTE[1],
    PALETTE[2],
    PALETTE[3],
    PALETTE[4],
    PALETTE[5],
    PALETTE[6],
    PALETTE[7],
    PALETTE[8],
    PALETTE[9],
    Color32::from_rgb(174, 199, 232),
    Color32::from_rgb(255, 187, 120),
    Color32::from_rgb(152, 223, 138),
    Color32::from_rgb(255, 152, 150),
    Color32::from_rgb(197, 176, 213),
    Color32::from_rgb(196, 156, 148),
    Color32::from_rgb(247, 182, 210),
    Color32::from_rgb(199, 199, 199),
    Color32::from_rgb(219, 219, 141),
    Color32::from_rgb(158, 218, 229),
    Color32::from_rgb(57, 59, 121),
    Color32::from_rgb(82, 84, 163),
    Color32::from_rgb(107, 110, 207),
    Color32::from_rgb(156, 158, 222),
    Color32::from_rgb(99, 121, 57),
    Color32::from_rgb(140, 162, 82),
    Color32::from_rgb(181, 207, 107),
    Color32::from_rgb(206, 219, 156),
    Color32::from_rgb(140, 109, 49),
    Color32::from_rgb(189, 158, 57),
    Color32::from_rgb(231, 186, 82),
    Color32::from_rgb(231, 203, 148),
    Color32::from_rgb(132, 60, 57),
    Color32::from_rgb(173, 73, 74),
    Color32::from_rgb(214, 97, 107),
    Color32::from_rgb(231, 150, 156),
    Color32::from_rgb(123, 65, 115),
    Color32::from_rgb(165, 81, 148),
    Color32::from_rgb(206, 109, 189),
    Color32::from_rgb(222, 158, 214),
];

/// Markers after the circles of the first 40 classes, one per further block of 40.
const MORE_MARKERS: [MarkerShape; 6] = [
    MarkerShape::Square,
    MarkerShape::Diamond,
    MarkerShape::Up,
    MarkerShape::Down,
    MarkerShape::Plus,
    MarkerShape::Asterisk,
];

/// Colour of class (or cluster) `c`.
pub fn class_colour_of(c: usize) -> Color32 {
    CLASS_COLOURS[c % CLASS_COLOURS.len()]
}

/// Marker of class (or cluster) `c`: a circle for the first 40, then a shape per block of 40.
pub fn class_marker(c: usize) -> MarkerShape {
    match c / CLASS_COLOURS.len() {
        0 => MarkerShape::Circle,
        b => MORE_MARKERS[(b - 1) % MORE_MARKERS.len()],
    }
}

/// Confidence bins of predicted samples when colouring by a classifier's predictions: (lower
/// bound, opacity), highest first; a prediction below every bound falls in the last.
pub const CONFIDENCE_BINS: [(f64, u8); 3] = [(0.9, 230), (0.6, 140), (0.0, 60)];

pub use crate::gui::style::VALUE_RAMP;

impl ScatterCache {
    /// Points drawn over all groups (every sample once when the cache is complete).
    pub fn point_count(&self) -> usize {
        self.groups.iter().map(|g| g.points.len()).sum()
    }

    /// Group the snapshot's projection by label.
    pub fn build(data: &Dataset, snapshot: &Snapshot) -> Self {
        Self::build_coloured(data, snapshot, None)
    }

    /// Group the snapshot's projection by k-means cluster when `eval` has clusters for every
    /// sample (misassigned samples listed apart), else by label.
    pub fn build_coloured(data: &Dataset, snapshot: &Snapshot, eval: Option<&Evaluation>) -> Self {
        let proj = &snapshot.projection;
        let n = proj.nrows().min(data.n());
        if let Some(ev) = eval
            && proj.ncols() >= 2
            && ev.clusters.len() == n
            && n > 0
        {
            let point = |i: usize| PlotPoint::new(proj[[i, 0]], proj[[i, 1]]);
            let mut cache = Self::by_index(snapshot, &ev.clusters, "cluster");
            cache.misassigned = ev
                .misassigned
                .iter()
                .enumerate()
                .filter(|(i, wrong)| **wrong && *i < n)
                .map(|(i, _)| point(i))
                .collect();
            return cache;
        }
        Self::build_by_label(data, snapshot)
    }

    /// Group the snapshot's projection by the model's own labels at that snapshot (CAN, PSMF,
    /// RMNMF), else by ground-truth label.
    pub fn build_by_labels(data: &Dataset, snapshot: &Snapshot) -> Self {
        let n = snapshot.projection.nrows().min(data.n());
        match snapshot
            .outputs
            .assignments
            .as_ref()
            .filter(|a| a.len() == n)
        {
            Some(labels) if snapshot.projection.ncols() >= 2 && n > 0 => {
                Self::by_index(snapshot, labels, "label")
            }
            _ => Self::build_by_label(data, snapshot),
        }
    }

    /// Group the snapshot's projection by a classifier's predictions (2-STGINMF), live: per
    /// class, the given samples (squares), those self-training moved into the training set
    /// (diamonds) and the predicted ones in [`CONFIDENCE_BINS`] of falling opacity; the
    /// predicted samples whose class differs from the truth are listed as misassigned
    /// (crosses). Falls back to the labels when the snapshot has no predictions.
    pub fn build_by_predictions(data: &Dataset, snapshot: &Snapshot) -> Self {
        let proj = &snapshot.projection;
        let n = proj.nrows().min(data.n());
        let Some(pred) = snapshot
            .outputs
            .predictions
            .as_deref()
            .filter(|p| p.labels.len() == n && p.confidence.len() == n && p.origin.len() == n)
        else {
            return Self::build_by_labels(data, snapshot);
        };
        if proj.ncols() < 2 || n == 0 {
            return Self::default();
        }
        let point = |i: usize| PlotPoint::new(proj[[i, 0]], proj[[i, 1]]);
        let class_name = |c: usize| {
            data.class_names
                .get(c)
                .cloned()
                .unwrap_or_else(|| format!("class {}", c + 1))
        };
        // Group key: (class, kind) with kind 0 given, 1 self-trained, 2.. confidence bins.
        let kinds = 2 + CONFIDENCE_BINS.len();
        let kind_of = |i: usize| match pred.origin[i] {
            LabelOrigin::Given => 0,
            LabelOrigin::SelfTrained { .. } => 1,
            LabelOrigin::Predicted => {
                2 + CONFIDENCE_BINS
                    .iter()
                    .position(|&(lo, _)| pred.confidence[i] >= lo)
                    .unwrap_or(CONFIDENCE_BINS.len() - 1)
            }
        };
        let c = pred.labels.iter().copied().max().map_or(0, |m| m + 1);
        let groups: Vec<ScatterGroup> = (0..c * kinds)
            .map(|g| {
                let (class, kind) = (g / kinds, g % kinds);
                let base = class_colour_of(class);
                let (what, alpha, marker) = match kind {
                    0 => ("given".to_owned(), 255, MarkerShape::Square),
                    1 => ("self-trained".to_owned(), 255, MarkerShape::Diamond),
                    b => {
                        let (lo, alpha) = CONFIDENCE_BINS[b - 2];
                        (
                            format!("predicted, confidence ≥ {lo}"),
                            alpha,
                            class_marker(class),
                        )
                    }
                };
                ScatterGroup::empty(
                    format!("{} · {what}", class_name(class)),
                    Color32::from_rgba_unmultiplied(base.r(), base.g(), base.b(), alpha),
                    marker,
                )
            })
            .collect();
        let misassigned = match &data.labels {
            Some(truth) => (0..n)
                .filter(|&i| {
                    pred.origin[i] != LabelOrigin::Given && truth.get(i) != Some(&pred.labels[i])
                })
                .map(point)
                .collect(),
            None => Vec::new(),
        };
        Self {
            index_axes: false,
            misassigned,
            ..Self::of_groups(snapshot, groups, n, point, |i| {
                pred.labels[i] * kinds + kind_of(i)
            })
        }
    }

    /// One group per index in `groups` (sample i in group `groups[i]`, named `"{what} g+1"`,
    /// coloured [`class_colour_of`]`(g)`), empty groups dropped: k-means clusters and a model's
    /// own labels. The projection must have two columns and a row per entry of `groups`.
    fn by_index(snapshot: &Snapshot, groups_of: &[usize], what: &str) -> Self {
        let proj = &snapshot.projection;
        let point = |i: usize| PlotPoint::new(proj[[i, 0]], proj[[i, 1]]);
        let c = groups_of.iter().copied().max().map_or(0, |m| m + 1);
        let groups = (0..c)
            .map(|g| {
                ScatterGroup::empty(
                    format!("{what} {}", g + 1),
                    class_colour_of(g),
                    class_marker(g),
                )
            })
            .collect();
        Self::of_groups(snapshot, groups, groups_of.len(), point, |i| groups_of[i])
    }

    /// Group the snapshot's projection into [`VALUE_RAMP`]'s bins of the model's value per
    /// sample (equal-width bins between its minimum and maximum), else by label.
    pub fn build_by_value(data: &Dataset, snapshot: &Snapshot) -> Self {
        let proj = &snapshot.projection;
        let n = proj.nrows().min(data.n());
        let Some(values) = snapshot
            .outputs
            .values
            .as_ref()
            .filter(|v| v.values.len() == n)
        else {
            return Self::build_by_label(data, snapshot);
        };
        if proj.ncols() < 2 || n == 0 {
            return Self::default();
        }
        let finite = || values.values.iter().copied().filter(|v| v.is_finite());
        let lo = finite().fold(f64::INFINITY, f64::min);
        let hi = finite().fold(f64::NEG_INFINITY, f64::max);
        let bins = VALUE_RAMP.len();
        let width = (hi - lo) / bins as f64;
        let bin_of = |v: f64| {
            if width.is_nan() || width <= 0.0 || !v.is_finite() {
                0
            } else {
                (((v - lo) / width) as usize).min(bins - 1)
            }
        };
        let groups = (0..bins)
            .map(|b| {
                let name = format!(
                    "{} {}–{}",
                    values.name,
                    short(lo + width.max(0.0) * b as f64),
                    short(lo + width.max(0.0) * (b + 1) as f64)
                );
                ScatterGroup::empty(name, VALUE_RAMP[b], MarkerShape::Circle)
            })
            .collect();
        let point = |i: usize| PlotPoint::new(proj[[i, 0]], proj[[i, 1]]);
        // `values` has a value per sample (checked above).
        Self::of_groups(snapshot, groups, n, point, |i| bin_of(values.values[i]))
    }

    fn build_by_label(data: &Dataset, snapshot: &Snapshot) -> Self {
        let proj = &snapshot.projection;
        if proj.ncols() < 2 {
            return Self::default();
        }
        let n = proj.nrows().min(data.n());
        let point = |i: usize| PlotPoint::new(proj[[i, 0]], proj[[i, 1]]);
        let group = |name: &str, color: Color32, marker: MarkerShape| {
            ScatterGroup::empty(name.to_owned(), color, marker)
        };
        let groups: Vec<ScatterGroup> = match &data.labels {
            Some(_) => data
                .class_names
                .iter()
                .enumerate()
                .map(|(c, name)| group(name, class_colour_of(c), class_marker(c)))
                .chain(std::iter::once(group(
                    "(no label)",
                    Color32::GRAY,
                    MarkerShape::Circle,
                )))
                .collect(),
            None => vec![group("samples", PALETTE[0], MarkerShape::Circle)],
        };
        let last = groups.len() - 1;
        Self::of_groups(snapshot, groups, n, point, |i| match &data.labels {
            Some(labels) => labels.get(i).copied().unwrap_or(last).min(last),
            None => 0,
        })
    }

    /// The cache of `groups` with samples 0..n (sample i at `point(i)`) in group `group_of(i)`,
    /// the empty groups dropped: what every way of colouring ends with.
    fn of_groups(
        snapshot: &Snapshot,
        mut groups: Vec<ScatterGroup>,
        n: usize,
        point: impl Fn(usize) -> PlotPoint,
        group_of: impl Fn(usize) -> usize,
    ) -> Self {
        for i in 0..n {
            let g = &mut groups[group_of(i)];
            g.points.push(point(i));
            g.indices.push(i);
        }
        groups.retain(|g| !g.points.is_empty());
        Self {
            iteration: snapshot.iteration,
            of_data: false,
            subspace: None,
            groups,
            index_axes: snapshot.h.nrows() == 1,
            by_sample: (0..n).map(point).collect(),
            misassigned: Vec::new(),
        }
    }

    /// Position of sample `i`, if it is drawn (an isolated view leaves the others at NaN).
    pub fn position(&self, i: usize) -> Option<PlotPoint> {
        self.by_sample
            .get(i)
            .copied()
            .filter(|p| p.x.is_finite() && p.y.is_finite())
    }

    /// Drop the points at non-finite positions from the groups (and the misassigned crosses),
    /// and the groups left empty: an isolated view's projection has NaN for every sample it
    /// leaves out. `by_sample` keeps them (at NaN) so indices stay global; picking, the lasso
    /// and [`Self::position`] skip them.
    pub fn retain_finite(&mut self) {
        let finite = |p: &PlotPoint| p.x.is_finite() && p.y.is_finite();
        for g in &mut self.groups {
            let (points, indices): (Vec<PlotPoint>, Vec<usize>) = g
                .points
                .iter()
                .zip(&g.indices)
                .filter(|(p, _)| finite(p))
                .map(|(p, i)| (*p, *i))
                .unzip();
            g.points = points;
            g.indices = indices;
        }
        self.groups.retain(|g| !g.points.is_empty());
        self.misassigned.retain(finite);
    }

    /// The sample drawn nearest to screen position `pos`, within `max_px` points.
    pub fn nearest(
        &self,
        transform: &PlotTransform,
        pos: egui::Pos2,
        max_px: f32,
    ) -> Option<usize> {
        let mut best: Option<(f32, usize)> = None;
        for (i, p) in self.by_sample.iter().enumerate() {
            let d = transform.position_from_point(p).distance(pos);
            if d <= max_px && best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, i));
            }
        }
        best.map(|(_, i)| i)
    }
}

/// A bin edge for the legend: three decimals, or two significant digits in scientific
/// notation when very small or large.
fn short(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-2..1e4).contains(&a) {
        format!("{v:.1e}")
    } else {
        format!("{v:.3}")
    }
}

/// Colour of painted class `c` called `name`: the ground-truth colour of the class with the
/// same name, else a palette colour after the ground-truth ones.
pub fn class_colour(data: &Dataset, name: &str, c: usize) -> Color32 {
    match data.class_names.iter().position(|n| n == name) {
        Some(k) => class_colour_of(k),
        None => class_colour_of(data.class_names.len() + c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::{Outputs, SampleValues};
    use ndarray::{Array2, array};

    /// The rings are built once per store revision: drawing again reuses them (no O(n) pass
    /// per frame), painting more samples or replacing the store rebuilds them.
    #[test]
    fn painted_rings_are_rebuilt_only_when_the_labels_change() {
        let cache = ScatterCache {
            by_sample: (0..4).map(|i| PlotPoint::new(i as f64, 0.0)).collect(),
            ..ScatterCache::default()
        };
        let fp = crate::engine::data::Fingerprint {
            n: 4,
            m: 2,
            hash: 7,
        };
        let mut store = Store::new(fp);
        store.label_as(&[0, 2], "a").expect("paint");
        let colour = |_: &str, _: usize| Color32::RED;
        let mut rings = PaintedRings::default();
        let built = rings.get(Some(&store), 1, &cache, colour).to_vec();
        assert_eq!(built.len(), 1);
        assert_eq!(built[0].0, "painted: a");
        assert_eq!(
            built[0].2,
            [PlotPoint::new(0.0, 0.0), PlotPoint::new(2.0, 0.0)]
        );
        let at = rings.built_at();
        assert!(at.is_some());
        // Same revisions: kept, not rebuilt (a rebuild from another cache would differ).
        let other = ScatterCache {
            by_sample: vec![PlotPoint::new(9.0, 9.0); 4],
            ..ScatterCache::default()
        };
        assert_eq!(rings.get(Some(&store), 1, &other, colour), built.as_slice());
        assert_eq!(rings.built_at(), at);
        // An edit of the store: rebuilt.
        store.label_as(&[3], "a").expect("paint");
        assert_eq!(rings.get(Some(&store), 1, &cache, colour)[0].2.len(), 3);
        // Another store at the same store revision (a session opened): rebuilt too.
        assert_eq!(
            rings.get(Some(&store), 2, &other, colour)[0].2[0],
            PlotPoint::new(9.0, 9.0)
        );
        assert!(rings.get(None, 2, &cache, colour).is_empty());
    }

    #[test]
    fn colour_by_value_bins_the_values_between_their_extremes() {
        let data = Dataset::from_parts(Array2::ones((2, 4)), None, vec![], "test");
        let snapshot = Snapshot {
            iteration: 3,
            h: Array2::ones((2, 4)),
            projection: array![[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [3.0, 1.0]],
            w: None,
            outputs: Outputs {
                values: Some(SampleValues {
                    name: "weight",
                    values: vec![0.0, 0.5, 1.0, 0.95],
                }),
                ..Outputs::default()
            },
        };
        // The model's own labels group the points by label, live.
        let mut labelled = snapshot.clone();
        labelled.outputs.assignments = Some(vec![1, 0, 1, 1]);
        let by_labels = ScatterCache::build_by_labels(&data, &labelled);
        let names: Vec<(&str, &[usize])> = by_labels
            .groups
            .iter()
            .map(|g| (g.name.as_str(), g.indices.as_slice()))
            .collect();
        assert_eq!(
            names,
            vec![("label 1", &[1][..]), ("label 2", &[0, 2, 3][..])]
        );
        let cache = ScatterCache::build_by_value(&data, &snapshot);
        let groups: Vec<(&str, &[usize])> = cache
            .groups
            .iter()
            .map(|g| (g.name.as_str(), g.indices.as_slice()))
            .collect();
        assert_eq!(
            groups,
            vec![
                ("weight 0.000–0.200", &[0][..]),
                ("weight 0.400–0.600", &[1][..]),
                ("weight 0.800–1.000", &[2, 3][..]),
            ]
        );
        assert_eq!(cache.groups[0].color, VALUE_RAMP[0]);
        assert_eq!(cache.groups[2].color, VALUE_RAMP[4]);
        assert_eq!(cache.position(3), Some(PlotPoint::new(3.0, 1.0)));
        // Without values: by label, as before.
        let mut plain = snapshot;
        plain.outputs.values = None;
        let by_label = ScatterCache::build_by_value(&data, &plain);
        assert_eq!(by_label.groups.len(), 1);
        assert_eq!(by_label.groups[0].name, "samples");
    }
}
