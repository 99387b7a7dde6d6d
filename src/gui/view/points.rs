//! State of "explore the points": the sample search, the isolated selection, the pinned
//! sample and the cache of nearest neighbours in X and in H. The search feature draws it
//! (`search/panel.rs`) and runs its background tasks (`search/actions.rs`).
//!
//! Costs, per the house rule (nothing heavier than O(n) per frame on the UI thread):
//! - search: O(n) substring tests on names lower-cased once per dataset, run only when the
//!   query or the painted labels change (measured under 2 ms at n = 10,000: see the
//!   `search_timing` test);
//! - isolate: the PCA-2D of the selection's columns runs on a background task, again for each
//!   new snapshot of a running job (one task in flight at a time, so it is throttled to what
//!   the machine keeps up with), aligned to its previous frame by the engine's `Projector`;
//! - neighbours: O(nm) in X and O(nk) in H per query, on a background task, cached by sample
//!   (X) and by (sample, snapshot) (H); never per frame.

use crate::engine::constraints::Labels;
use crate::engine::data::{Dataset, Fingerprint};
use crate::engine::jobs::worker::Snapshot;
use crate::engine::linalg::projection::Projector;
use ndarray::Array2;
use std::sync::{Arc, Weak};

/// Neighbours shown per space (X and H).
pub const NEIGHBOURS: usize = 8;

/// Neighbour lists kept per cache (X by sample, H by sample and snapshot).
const CACHE_CAP: usize = 64;

/// Identity of a snapshot: its `Arc`'s address, held by a `Weak` so that the address cannot
/// be reused by a later snapshot while the key exists (a bare address could name a newer
/// snapshot after the old one was freed). Snapshots never change once shared.
#[derive(Clone, Debug)]
pub struct SnapshotKey(Weak<Snapshot>);

impl SnapshotKey {
    /// The key of `snap`.
    pub fn of(snap: &Arc<Snapshot>) -> Self {
        Self(Arc::downgrade(snap))
    }
}

impl PartialEq for SnapshotKey {
    fn eq(&self, other: &Self) -> bool {
        Weak::ptr_eq(&self.0, &other.0)
    }
}

/// A neighbour list: `(sample, squared distance)`, nearest first.
pub type NeighbourList = Arc<Vec<(usize, f64)>>;

/// See the module docs.
#[derive(Default)]
pub struct PointsView {
    /// Text of the "Search samples" field.
    pub query: String,
    /// Samples matching [`Self::query`], ascending.
    pub matches: Vec<usize>,
    /// Position in [`Self::matches`] of the match that "Next" went to last.
    pub current: Option<usize>,
    /// What the matches were computed for: (query, constraints revision).
    searched: Option<(String, u64)>,
    /// Lower-cased sample names of the dataset.
    index: Vec<String>,
    /// The sample pinned by a click (Inspect) or by "Next": the neighbour panel's subject.
    pub focus: Option<usize>,
    /// The last sample the pointer was over in the scatter.
    pub last_hovered: Option<usize>,
    /// Centre the scatter on this sample on the next frame.
    pub pan_to: Option<usize>,
    /// Fit the scatter's bounds to its points on the next frame (isolate, show all).
    pub refit: bool,
    /// The scatter shows only these samples, projected on their own.
    pub isolation: Option<Isolation>,
    /// The neighbour window is open.
    pub show_neighbours: bool,
    pub neighbours: NeighbourCache,
    /// The dataset all of this refers to.
    dataset: Option<Fingerprint>,
}

impl PointsView {
    /// Forget what refers to another dataset's samples.
    pub fn clear_for(&mut self, fingerprint: Option<Fingerprint>) {
        if self.dataset != fingerprint {
            let (query, show) = (std::mem::take(&mut self.query), self.show_neighbours);
            *self = Self {
                query,
                show_neighbours: show,
                dataset: fingerprint,
                ..Self::default()
            };
        }
    }

    /// Recompute the matches of the query when it or the painted labels (revision `rev`)
    /// changed since the last call; cheap otherwise (one string comparison).
    pub fn update_search(&mut self, data: &Dataset, painted: Option<&Labels>, rev: u64) {
        let q = self.query.trim().to_lowercase();
        if self
            .searched
            .as_ref()
            .is_some_and(|(sq, r)| *sq == q && *r == rev)
        {
            return;
        }
        if self.index.len() != data.n() {
            self.index = data.sample_names.iter().map(|s| s.to_lowercase()).collect();
        }
        self.matches = find(&self.index, data, painted, &q);
        self.current = None;
        self.searched = Some((q, rev));
    }

    /// The sample the neighbour panel shows: the pinned one, else the last hovered.
    pub fn subject(&self) -> Option<usize> {
        self.focus.or(self.last_hovered)
    }

    /// Go to the next (or, with `back`, the previous) match among those `shown` (drawn in the
    /// scatter): pin it and centre the scatter on it. Returns the sample.
    pub fn step_match(&mut self, back: bool, shown: impl Fn(usize) -> bool) -> Option<usize> {
        let len = self.matches.len();
        if len == 0 {
            return None;
        }
        let start = self.current;
        for s in 1..=len {
            let pos = match (start, back) {
                (None, false) => s - 1,
                (None, true) => len - s,
                (Some(c), false) => (c + s) % len,
                (Some(c), true) => (c + len * s - s) % len,
            };
            let i = self.matches[pos];
            if shown(i) {
                self.current = Some(pos);
                self.focus = Some(i);
                self.pan_to = Some(i);
                return Some(i);
            }
        }
        None
    }
}

/// The samples whose name, class (ground truth) or painted class contains `query` (already
/// lower-cased and trimmed; empty matches nothing). `names` are the lower-cased sample names.
pub fn find(names: &[String], data: &Dataset, painted: Option<&Labels>, query: &str) -> Vec<usize> {
    if query.is_empty() {
        return Vec::new();
    }
    let hit = |names: &[String]| -> Vec<bool> {
        names
            .iter()
            .map(|c| c.to_lowercase().contains(query))
            .collect()
    };
    let truth_hits = hit(&data.class_names);
    let painted_hits = painted.map(|l| (l.as_slice(), hit(l.class_names())));
    (0..names.len())
        .filter(|&i| {
            names[i].contains(query)
                || data
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(i))
                    .is_some_and(|&c| truth_hits.get(c) == Some(&true))
                || painted_hits.as_ref().is_some_and(|(labels, hits)| {
                    labels
                        .get(i)
                        .copied()
                        .flatten()
                        .is_some_and(|c| hits.get(c) == Some(&true))
                })
        })
        .collect()
}

/// The isolated samples and their own projection.
pub struct Isolation {
    /// The isolated samples, ascending.
    pub samples: Vec<usize>,
    /// Their coordinates (a row per entry of `samples`), once projected.
    pub coords: Option<Array2<f64>>,
    /// The snapshot the last finished projection (or failed one) was of.
    pub done: Option<SnapshotKey>,
    /// The snapshot a background task is projecting now.
    pub pending: Option<SnapshotKey>,
    /// Aligns each projection to the previous one (with the task while one is in flight).
    pub projector: Option<Projector>,
}

impl Isolation {
    /// Isolate `samples` (sorted and deduplicated here); nothing projected yet.
    pub fn new(mut samples: Vec<usize>) -> Self {
        samples.sort_unstable();
        samples.dedup();
        Self {
            samples,
            coords: None,
            done: None,
            pending: None,
            projector: Some(Projector::new()),
        }
    }

    /// An n×2 projection with the isolated samples' coordinates and NaN for every other
    /// sample (which the scatter then leaves out); `None` before the first projection.
    pub fn full_projection(&self, n: usize) -> Option<Array2<f64>> {
        let coords = self.coords.as_ref()?;
        let mut p = Array2::from_elem((n, 2), f64::NAN);
        for (r, &i) in self.samples.iter().enumerate() {
            if i < n && r < coords.nrows() && coords.ncols() >= 2 {
                p[[i, 0]] = coords[[r, 0]];
                p[[i, 1]] = coords[[r, 1]];
            }
        }
        Some(p)
    }
}

/// Neighbour lists computed so far, and the query in flight.
#[derive(Default)]
pub struct NeighbourCache {
    /// In X, by sample (X does not change during a run), oldest first.
    x: Vec<(usize, NeighbourList)>,
    /// In H, by (sample, snapshot), oldest first.
    h: Vec<((usize, SnapshotKey), NeighbourList)>,
    /// The (sample, snapshot) a background task is answering now.
    pub in_flight: Option<(usize, Option<SnapshotKey>)>,
}

impl NeighbourCache {
    /// The neighbours of `sample` in X, if computed.
    pub fn in_x(&self, sample: usize) -> Option<&NeighbourList> {
        self.x.iter().find(|(s, _)| *s == sample).map(|(_, l)| l)
    }

    /// The neighbours of `sample` in the H of snapshot `key`, if computed.
    pub fn in_h(&self, sample: usize, key: &SnapshotKey) -> Option<&NeighbourList> {
        self.h
            .iter()
            .find(|((s, k), _)| *s == sample && k == key)
            .map(|(_, l)| l)
    }

    /// The newest neighbours of `sample` in H, of whichever snapshot (shown while the current
    /// snapshot's are computed).
    pub fn latest_h(&self, sample: usize) -> Option<&NeighbourList> {
        self.h
            .iter()
            .rev()
            .find(|((s, _), _)| *s == sample)
            .map(|(_, l)| l)
    }

    /// Keep the answer of a finished query.
    pub fn insert(
        &mut self,
        sample: usize,
        in_x: Option<NeighbourList>,
        in_h: Option<(SnapshotKey, NeighbourList)>,
    ) {
        if let Some(l) = in_x {
            self.x.retain(|(s, _)| *s != sample);
            self.x.push((sample, l));
            if self.x.len() > CACHE_CAP {
                self.x.remove(0);
            }
        }
        if let Some((key, l)) = in_h {
            self.h.retain(|((s, k), _)| *s != sample || *k != key);
            self.h.push(((sample, key), l));
            if self.h.len() > CACHE_CAP {
                self.h.remove(0);
            }
        }
    }
}

/// How many samples of `a` are also in `b` (the "5 of 8 shared" of the neighbour panel).
pub fn shared(a: &[(usize, f64)], b: &[(usize, f64)]) -> usize {
    a.iter()
        .filter(|(i, _)| b.iter().any(|(j, _)| j == i))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn named(names: &[&str], labels: Vec<usize>, classes: &[&str]) -> Dataset {
        let n = names.len();
        let mut d = Dataset::from_parts(
            Array2::ones((2, n)),
            Some(labels),
            classes.iter().map(|s| (*s).to_owned()).collect(),
            "test",
        );
        d.sample_names = names.iter().map(|s| (*s).to_owned()).collect();
        d
    }

    /// Names and class names match as case-insensitive substrings; an empty query matches
    /// nothing; painted classes match too.
    #[test]
    fn search_matches_names_and_classes_case_insensitively() {
        let data = named(
            &["Alice.png", "bob.png", "carol.PNG", "dave.jpg"],
            vec![0, 1, 1, 0],
            &["Cats", "dogs"],
        );
        let mut v = PointsView::default();
        let search = |v: &mut PointsView, q: &str, painted: Option<&Labels>, rev| {
            v.query = q.to_owned();
            v.update_search(&data, painted, rev);
            v.matches.clone()
        };
        assert_eq!(search(&mut v, "png", None, 0), vec![0, 1, 2]);
        assert_eq!(search(&mut v, "  ALI ", None, 0), vec![0]);
        assert_eq!(search(&mut v, "DOG", None, 0), vec![1, 2]);
        assert_eq!(
            search(&mut v, "a", None, 0),
            vec![0, 2, 3],
            "Alice, carol and dave (of Cats) hold an a; bob.png of dogs does not"
        );
        assert!(search(&mut v, "", None, 0).is_empty());
        assert!(search(&mut v, "zebra", None, 0).is_empty());
        let painted = Labels::from_parts(4, vec![None, None, None, Some(0)], vec!["Zebra".into()])
            .expect("labels");
        assert_eq!(search(&mut v, "zebra", Some(&painted), 1), vec![3]);
    }

    /// "Next" pins each shown match in turn, wrapping; "previous" goes back; hidden matches
    /// are skipped.
    #[test]
    fn next_cycles_the_shown_matches() {
        let mut v = PointsView {
            matches: vec![2, 5, 9],
            ..PointsView::default()
        };
        assert_eq!(v.step_match(false, |_| true), Some(2));
        assert_eq!(v.step_match(false, |_| true), Some(5));
        assert_eq!(v.step_match(false, |_| true), Some(9));
        assert_eq!(v.step_match(false, |_| true), Some(2));
        assert_eq!(v.step_match(true, |_| true), Some(9));
        assert_eq!((v.focus, v.pan_to), (Some(9), Some(9)));
        assert_eq!(v.step_match(false, |i| i != 2), Some(5));
        assert_eq!(v.step_match(false, |_| false), None);
    }

    #[test]
    fn isolation_projection_leaves_the_others_out() {
        let mut iso = Isolation::new(vec![3, 1, 3]);
        assert_eq!(iso.samples, vec![1, 3]);
        assert!(iso.full_projection(4).is_none());
        iso.coords = Some(array![[1.0, 2.0], [3.0, 4.0]]);
        let p = iso.full_projection(4).expect("projected");
        assert_eq!((p[[1, 0]], p[[1, 1]], p[[3, 0]]), (1.0, 2.0, 3.0));
        assert!(p[[0, 0]].is_nan() && p[[2, 1]].is_nan());
    }

    #[test]
    fn neighbour_cache_keeps_x_by_sample_and_h_by_snapshot() {
        let snap = |it| {
            Arc::new(Snapshot {
                iteration: it,
                h: Array2::zeros((2, 3)),
                projection: Array2::zeros((3, 2)),
                outputs: Default::default(),
                w: None,
            })
        };
        let (a, b) = (snap(3), snap(3));
        let mut c = NeighbourCache::default();
        let l = |v: Vec<(usize, f64)>| Arc::new(v);
        c.insert(
            1,
            Some(l(vec![(2, 0.5)])),
            Some((SnapshotKey::of(&a), l(vec![(4, 0.1)]))),
        );
        assert_eq!(c.in_x(1).map(|l| l[0].0), Some(2));
        assert_eq!(c.in_h(1, &SnapshotKey::of(&a)).map(|l| l[0].0), Some(4));
        assert!(
            c.in_h(1, &SnapshotKey::of(&b)).is_none(),
            "another snapshot"
        );
        assert!(c.in_h(2, &SnapshotKey::of(&a)).is_none());
        for s in 0..100 {
            c.insert(s + 10, Some(l(vec![])), None);
        }
        assert!(c.in_x(1).is_none(), "the oldest are dropped past the cap");
        assert_eq!(
            shared(&[(1, 0.0), (2, 0.0), (3, 0.0)], &[(3, 1.0), (1, 1.0)]),
            2
        );
    }

    /// Search cost at n = 10,000 (the brief's bound is 2 ms a keystroke on the UI thread):
    /// `cargo test --lib gui::view::points::tests::search_timing -- --ignored --nocapture`
    #[test]
    #[ignore = "timing; run by hand"]
    fn search_timing() {
        let n = 10_000;
        let names: Vec<String> = (0..n)
            .map(|i| format!("s{}/face_{i:05}.pgm", i % 40))
            .collect();
        let classes: Vec<String> = (0..40).map(|c| format!("person {c}")).collect();
        let mut data = Dataset::from_parts(
            Array2::ones((1, n)),
            Some((0..n).map(|i| i % 40).collect()),
            classes,
            "timing",
        );
        data.sample_names = names;
        let mut v = PointsView {
            query: "x".to_owned(),
            ..PointsView::default()
        };
        v.update_search(&data, None, 0); // builds the lower-cased index once
        let mut worst = 0.0f64;
        for q in [
            "f", "fa", "fac", "face_0", "face_01", "s3", "person 1", "pgm",
        ] {
            v.query = q.to_owned();
            let t = std::time::Instant::now();
            v.update_search(&data, None, 0);
            worst = worst.max(t.elapsed().as_secs_f64() * 1e3);
        }
        eprintln!("search n={n}: worst keystroke {worst:.3} ms");
    }
}
