//! [`SideInfo`]: the side information a model is handed — a snapshot of the user's triplets
//! and partial labels — with the derived views the models need, each computed at most once
//! per snapshot and shared by every job that holds it: must-link / cannot-link pairs
//! ([`SideInfo::links`]), the p-NN lists of the dataset ([`SideInfo::neighbours`]) and its
//! weighted graph ([`SideInfo::graph`]).
//!
//! Ground-truth labels never enter here unless the user revealed or painted them.

use super::triplet::{Triplet, unordered_pairs};
use crate::engine::data::{Dataset, Fingerprint, Preprocess};
use crate::engine::linalg::knn::{Neighbours, knn};
use crate::engine::linalg::{Csr, GraphWeight, weighted_graph};
use rand::{SeedableRng, seq::index};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, OnceLock};

/// At most this many must-links and, separately, cannot-links come from painted labels; more
/// are drawn at random (seeded by [`LINK_SEED`]). Links from triplets are never capped.
pub const MAX_LABEL_LINKS: usize = 20_000;
/// Seed of the draw of label links when there would be more than [`MAX_LABEL_LINKS`].
pub const LINK_SEED: u64 = 0x4c49_4e4b;

/// Must-link and cannot-link pairs, unordered `(min, max)`, sorted, without repeats.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Links {
    pub must: Vec<(usize, usize)>,
    pub cannot: Vec<(usize, usize)>,
}

/// A snapshot of the constraint store, shared (in an `Arc`) by the jobs that use it.
#[derive(Debug, Default)]
pub struct SideInfo {
    pub triplets: Vec<Triplet>,
    /// Partial labels (class index) per sample; empty when none are known.
    pub labels: Vec<Option<usize>>,
    links: OnceLock<Arc<Links>>,
    /// p-NN lists built so far, keyed by the data they were built on and p.
    graphs: Mutex<Vec<(GraphKey, Arc<Neighbours>)>>,
    /// Weighted p-NN graphs built so far, keyed by the data, p and the weighting.
    weighted: Mutex<Vec<WeightedEntry>>,
}

/// One cached weighted graph: the data, p and the weighting it was built for.
type WeightedEntry = ((GraphKey, GraphWeight), Arc<Csr>);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct GraphKey {
    data: Fingerprint,
    preprocess: Preprocess,
    p: usize,
}

impl Clone for SideInfo {
    /// The triplets and labels; derived views are recomputed on demand by the clone.
    fn clone(&self) -> Self {
        Self::new(self.triplets.clone(), self.labels.clone())
    }
}

impl PartialEq for SideInfo {
    fn eq(&self, other: &Self) -> bool {
        self.triplets == other.triplets && self.labels == other.labels
    }
}

impl SideInfo {
    pub fn new(triplets: Vec<Triplet>, labels: Vec<Option<usize>>) -> Self {
        let labels = if labels.iter().any(Option::is_some) {
            labels
        } else {
            Vec::new()
        };
        Self {
            triplets,
            labels,
            ..Self::default()
        }
    }

    /// Triplets only.
    pub fn with_triplets(triplets: Vec<Triplet>) -> Self {
        Self::new(triplets, Vec::new())
    }

    /// How many samples have a known label.
    pub fn n_known_labels(&self) -> usize {
        self.labels.iter().flatten().count()
    }

    /// `(sample, class)` of every known label, ascending by sample.
    pub fn known_labels(&self) -> Vec<(usize, usize)> {
        self.labels
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.map(|c| (i, c)))
            .collect()
    }

    /// Must-links and cannot-links: every triplet (i, j, q) gives must (i, j) and cannot
    /// (i, q) (docs/models.md §3.5, §8.4); known labels give must-links within a class and
    /// cannot-links across classes, at most [`MAX_LABEL_LINKS`] of each (seeded draw). A pair
    /// that is both (contradictory constraints) stays in both lists; the model decides.
    pub fn links(&self) -> Arc<Links> {
        Arc::clone(self.links.get_or_init(|| Arc::new(self.derive_links())))
    }

    fn derive_links(&self) -> Links {
        let known = self.known_labels();
        let mut must = Vec::new();
        let mut cannot = Vec::new();
        for (a, &(i, ci)) in known.iter().enumerate() {
            for &(j, cj) in &known[a + 1..] {
                if ci == cj {
                    must.push((i, j));
                } else {
                    cannot.push((i, j));
                }
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(LINK_SEED);
        for pairs in [&mut must, &mut cannot] {
            if pairs.len() > MAX_LABEL_LINKS {
                let keep = index::sample(&mut rng, pairs.len(), MAX_LABEL_LINKS);
                *pairs = keep.into_iter().map(|p| pairs[p]).collect();
            }
        }
        let must: BTreeSet<_> = must
            .into_iter()
            .chain(unordered_pairs(self.triplets.iter().map(|t| (t.i, t.j))))
            .collect();
        let cannot: BTreeSet<_> = cannot
            .into_iter()
            .chain(unordered_pairs(self.triplets.iter().map(|t| (t.i, t.q))))
            .collect();
        Links {
            must: must.into_iter().collect(),
            cannot: cannot.into_iter().collect(),
        }
    }

    /// The p nearest neighbours of every sample of `data` (blocked exact kNN,
    /// docs/models.md §2.1), built on first use and shared by every later job on the same
    /// data and p.
    pub fn neighbours(&self, data: &Dataset, p: usize) -> Arc<Neighbours> {
        let key = GraphKey {
            data: data.fingerprint,
            preprocess: data.preprocess,
            p,
        };
        let found = self.graphs.lock().ok().and_then(|g| {
            g.iter()
                .find(|(k, _)| *k == key)
                .map(|(_, n)| Arc::clone(n))
        });
        if let Some(n) = found {
            return n;
        }
        // Built outside the lock: two jobs may both build it once; both get the same graph.
        let built = Arc::new(knn(data.x.view(), p));
        if let Ok(mut g) = self.graphs.lock() {
            g.push((key, Arc::clone(&built)));
        }
        built
    }

    /// The symmetrised p-NN graph of `data` with `weight`ed edges (docs/models.md §2.1), as
    /// sparse CSR: built on first use from [`Self::neighbours`] and shared by every later job
    /// on the same data, p and weighting (GNMF and the graph models).
    pub fn graph(&self, data: &Dataset, p: usize, weight: GraphWeight) -> Arc<Csr> {
        let key = (
            GraphKey {
                data: data.fingerprint,
                preprocess: data.preprocess,
                p,
            },
            weight,
        );
        let found = self.weighted.lock().ok().and_then(|g| {
            g.iter()
                .find(|(k, _)| *k == key)
                .map(|(_, s)| Arc::clone(s))
        });
        if let Some(s) = found {
            return s;
        }
        let nb = self.neighbours(data, p);
        let built = Arc::new(weighted_graph(data.x.view(), &nb, weight));
        if let Ok(mut g) = self.weighted.lock() {
            g.push((key, Arc::clone(&built)));
        }
        built
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn links_come_from_triplets_and_labels() {
        let t = vec![Triplet::new(0, 1, 2), Triplet::new(3, 1, 0)];
        let labels = vec![Some(0), None, Some(0), None, Some(1)];
        let side = SideInfo::new(t, labels);
        let l = side.links();
        // Triplets: must (0,1), (1,3); cannot (0,2), (0,3). Labels: must (0,2); cannot (0,4),
        // (2,4). (0,2) is both: the triplet and the labels disagree.
        assert_eq!(l.must, vec![(0, 1), (0, 2), (1, 3)]);
        assert_eq!(l.cannot, vec![(0, 2), (0, 3), (0, 4), (2, 4)]);
        assert!(Arc::ptr_eq(&l, &side.links()), "computed once");
        assert_eq!(side.n_known_labels(), 3);
        assert_eq!(side.known_labels(), vec![(0, 0), (2, 0), (4, 1)]);
    }

    #[test]
    fn label_links_are_capped_by_a_seeded_draw() {
        // 300 labelled samples in two classes: 2 · C(150, 2) = 22,350 must-links.
        let labels: Vec<_> = (0..300).map(|i| Some(i % 2)).collect();
        let a = SideInfo::new(Vec::new(), labels.clone()).links();
        let b = SideInfo::new(Vec::new(), labels).links();
        assert_eq!(a.must.len(), MAX_LABEL_LINKS);
        assert_eq!(a.cannot.len(), MAX_LABEL_LINKS);
        assert_eq!(a, b, "the same draw every time");
        assert!(a.must.iter().all(|&(i, j)| i < j && i % 2 == j % 2));
    }

    #[test]
    fn no_known_label_means_no_labels() {
        let side = SideInfo::new(Vec::new(), vec![None; 4]);
        assert!(side.labels.is_empty());
        assert_eq!(side.links().must.len(), 0);
    }

    #[test]
    fn neighbours_are_built_once_per_data_and_p() {
        let x = array![[0.0, 1.0, 5.0, 6.0], [0.0, 0.0, 0.0, 0.0]];
        let data = Dataset::from_parts(x, None, vec![], "test");
        let side = SideInfo::default();
        let a = side.neighbours(&data, 1);
        assert_eq!(a.of(0), &[1]);
        assert_eq!(a.of(2), &[3]);
        assert!(Arc::ptr_eq(&a, &side.neighbours(&data, 1)));
        assert!(!Arc::ptr_eq(&a, &side.neighbours(&data, 2)));
    }

    #[test]
    fn weighted_graphs_are_built_once_per_data_p_and_weight() {
        let x = array![[0.0, 1.0, 5.0, 6.0], [1.0, 1.0, 1.0, 1.0]];
        let data = Dataset::from_parts(x, None, vec![], "test");
        let side = SideInfo::default();
        let b = side.graph(&data, 1, GraphWeight::Binary);
        assert_eq!(
            b.to_dense(),
            side.neighbours(&data, 1).binary_graph().to_dense()
        );
        assert!(Arc::ptr_eq(&b, &side.graph(&data, 1, GraphWeight::Binary)));
        let h = side.graph(&data, 1, GraphWeight::Heat);
        assert!(!Arc::ptr_eq(&b, &h));
        assert_eq!(h.nnz(), b.nnz());
        assert!(h.values().iter().all(|&v| v > 0.0 && v < 1.0));
        assert!(!Arc::ptr_eq(&b, &side.graph(&data, 2, GraphWeight::Binary)));
    }
}
