//! The RPNMF triplet protocol (docs/models.md §8.4, after Chang et al. ICDM 2014) and a seeded
//! "reveal p % of the labels" for demos.
//!
//! Choices marked in §8.4: ⌈f·n⌉ anchors drawn uniformly from all samples (not per
//! class); per anchor, ⌈r/2⌉ label-based triplets (j from i's class, q from another class,
//! both among the labelled samples) and ⌊r/2⌋ neighbour-based ones (j from the p = 5 nearest
//! neighbours of i in X, q from outside N_p(i) ∪ {i}). j cycles through a shuffled pool (without
//! replacement while the pool lasts); q is drawn uniformly, redrawn when the triplet would be a
//! duplicate. An anchor that is unlabelled, alone in its class, or whose class is the only
//! one, gets no label-based triplets (they are skipped, not replaced).

use super::{ConstraintError, Store, Triplet};
use crate::engine::linalg::{Neighbours, knn};
use ndarray::ArrayView2;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, HashSet};

/// Redraws of q per triplet before giving up on it (counted in [`Generated::shortfall`]).
const MAX_DRAWS: usize = 64;

/// Where anchors are drawn from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AnchorPool {
    /// All samples, as in the paper (docs/models.md §8.4 step 1).
    #[default]
    All,
    /// Only labelled samples: for a few painted labels, so that every anchor can also get
    /// label-based triplets. The fraction is then of the labelled samples.
    Labelled,
}

/// Parameters of the protocol (defaults: docs/models.md §8.4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProtocolOptions {
    /// Fraction of samples used as anchors, in [0, 1] (default 0.1).
    pub anchor_fraction: f64,
    /// Triplets per anchor, half label-based and half neighbour-based (default 30).
    pub per_anchor: usize,
    /// Neighbourhood size p of the neighbour-based half (default 5).
    pub neighbours: usize,
    /// Seed of every random choice.
    pub seed: u64,
    /// Where anchors are drawn from (default: all samples).
    pub anchor_pool: AnchorPool,
}

impl Default for ProtocolOptions {
    fn default() -> Self {
        Self {
            anchor_fraction: 0.1,
            per_anchor: 30,
            neighbours: 5,
            seed: 0,
            anchor_pool: AnchorPool::All,
        }
    }
}

/// Invalid protocol inputs.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GenerateError {
    #[error("anchor fraction {0} is outside [0, 1]")]
    AnchorFraction(f64),
    #[error("label fraction {0} is outside [0, 1]")]
    RevealFraction(f64),
    #[error("triplets need at least 3 samples, the dataset has {0}")]
    TooFewSamples(usize),
    #[error("{got} labels given for {n} samples")]
    LabelCount { got: usize, n: usize },
    #[error("the store is for {store} samples, the data has {data}")]
    StoreSize { store: usize, data: usize },
    #[error(transparent)]
    Store(#[from] ConstraintError),
}

/// The outcome of one generation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Generated {
    /// New triplets, anchor by anchor (label-based first); none duplicates another or
    /// `existing`.
    pub triplets: Vec<Triplet>,
    /// The anchors, ascending.
    pub anchors: Vec<usize>,
    /// How many triplets came from labels and from the kNN graph.
    pub label_based: usize,
    pub neighbour_based: usize,
    /// Anchors that got no label-based triplets (unlabelled, singleton class, one class).
    pub anchors_without_label_triplets: usize,
    /// Triplets not made because no non-duplicate could be drawn.
    pub shortfall: usize,
}

/// Draws j by cycling through a reshuffled pool (without replacement while it lasts).
struct Cycler<'a> {
    pool: &'a [usize],
    order: Vec<usize>,
    next: usize,
}

impl<'a> Cycler<'a> {
    fn new(pool: &'a [usize]) -> Self {
        Self {
            pool,
            order: Vec::new(),
            next: 0,
        }
    }

    fn draw(&mut self, rng: &mut ChaCha8Rng) -> usize {
        if self.next == self.order.len() {
            self.order = self.pool.to_vec();
            self.order.shuffle(rng);
            self.next = 0;
        }
        self.next += 1;
        self.order[self.next - 1]
    }
}

/// Generate triplets by the protocol from X (m×n; its p-NN are computed here) and per-sample
/// labels (`labels` empty = no labels: neighbour-based triplets only). Ground truth is
/// `labels = truth.map(Some)`; user-painted labels are partial.
pub fn generate_triplets(
    x: ArrayView2<'_, f64>,
    labels: &[Option<usize>],
    opts: &ProtocolOptions,
    existing: &[Triplet],
) -> Result<Generated, GenerateError> {
    check(x.ncols(), labels, opts)?;
    let nb = knn(x, opts.neighbours);
    generate_with_neighbours(&nb, labels, opts, existing)
}

fn check(n: usize, labels: &[Option<usize>], opts: &ProtocolOptions) -> Result<(), GenerateError> {
    if !(0.0..=1.0).contains(&opts.anchor_fraction) {
        return Err(GenerateError::AnchorFraction(opts.anchor_fraction));
    }
    if n < 3 {
        return Err(GenerateError::TooFewSamples(n));
    }
    if !labels.is_empty() && labels.len() != n {
        return Err(GenerateError::LabelCount {
            got: labels.len(),
            n,
        });
    }
    Ok(())
}

/// [`generate_triplets`] with precomputed neighbour lists (their p is used as is).
pub fn generate_with_neighbours(
    nb: &Neighbours,
    labels: &[Option<usize>],
    opts: &ProtocolOptions,
    existing: &[Triplet],
) -> Result<Generated, GenerateError> {
    let n = nb.n();
    check(n, labels, opts)?;
    let label_of = |i: usize| labels.get(i).copied().flatten();
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let pool: Vec<usize> = match opts.anchor_pool {
        AnchorPool::All => (0..n).collect(),
        AnchorPool::Labelled => (0..n).filter(|&i| label_of(i).is_some()).collect(),
    };
    let n_anchors = ((opts.anchor_fraction * pool.len() as f64).ceil() as usize).min(pool.len());
    let mut anchors: Vec<usize> = rand::seq::index::sample(&mut rng, pool.len(), n_anchors)
        .into_iter()
        .map(|k| pool[k])
        .collect();
    anchors.sort_unstable();

    let mut members: HashMap<usize, Vec<usize>> = HashMap::new();
    for i in 0..n {
        if let Some(c) = label_of(i) {
            members.entry(c).or_default().push(i);
        }
    }
    let labelled: Vec<usize> = (0..n).filter(|&i| label_of(i).is_some()).collect();
    let mut others: HashMap<usize, Vec<usize>> = HashMap::new();

    let n_label = opts.per_anchor - opts.per_anchor / 2;
    let n_nb = opts.per_anchor / 2;
    let mut seen: HashSet<Triplet> = existing.iter().copied().collect();
    let mut out = Generated {
        anchors: anchors.clone(),
        ..Generated::default()
    };

    for &i in &anchors {
        // Label-based half.
        let pools = label_of(i).and_then(|c| {
            let same: Vec<usize> = members
                .get(&c)?
                .iter()
                .copied()
                .filter(|&j| j != i)
                .collect();
            let other = others.entry(c).or_insert_with(|| {
                labelled
                    .iter()
                    .copied()
                    .filter(|&q| label_of(q) != Some(c))
                    .collect()
            });
            (!same.is_empty() && !other.is_empty()).then(|| (same, other.clone()))
        });
        match pools {
            Some((same, other)) if n_label > 0 => {
                let mut js = Cycler::new(&same);
                for _ in 0..n_label {
                    let j = js.draw(&mut rng);
                    let made = (0..MAX_DRAWS).find_map(|_| {
                        let t = Triplet::new(i, j, other[rng.gen_range(0..other.len())]);
                        seen.insert(t).then_some(t)
                    });
                    match made {
                        Some(t) => {
                            out.triplets.push(t);
                            out.label_based += 1;
                        }
                        None => out.shortfall += 1,
                    }
                }
            }
            Some(_) => {}
            None => out.anchors_without_label_triplets += 1,
        }
        // Neighbour-based half.
        let near = nb.of(i);
        if near.is_empty() || near.len() + 1 >= n {
            out.shortfall += n_nb;
            continue;
        }
        let mut js = Cycler::new(near);
        for _ in 0..n_nb {
            let j = js.draw(&mut rng);
            let made = (0..MAX_DRAWS).find_map(|_| {
                let q = rng.gen_range(0..n);
                if q == i || near.contains(&q) {
                    return None;
                }
                let t = Triplet::new(i, j, q);
                seen.insert(t).then_some(t)
            });
            match made {
                Some(t) => {
                    out.triplets.push(t);
                    out.neighbour_based += 1;
                }
                None => out.shortfall += 1,
            }
        }
    }
    Ok(out)
}

/// Generate triplets from X and the store's labels (avoiding the store's triplets) and add
/// them to the store as **one** undo step ("generate N triplets").
pub fn generate_into(
    store: &mut Store,
    x: ArrayView2<'_, f64>,
    opts: &ProtocolOptions,
) -> Result<Generated, GenerateError> {
    if store.n() != x.ncols() {
        return Err(GenerateError::StoreSize {
            store: store.n(),
            data: x.ncols(),
        });
    }
    let labels = if store.labels().n_labelled() == 0 {
        &[][..]
    } else {
        store.labels().as_slice()
    };
    let g = generate_triplets(x, labels, opts, store.triplets())?;
    let what = format!(
        "generate {} triplets ({} anchors, seed {})",
        g.triplets.len(),
        g.anchors.len(),
        opts.seed
    );
    store.add_triplets(&what, g.triplets.iter().copied())?;
    Ok(g)
}

/// Ground-truth labels as the partial labels the protocol takes (everyone labelled).
pub fn labels_from_truth(truth: &[usize]) -> Vec<Option<usize>> {
    truth.iter().map(|&c| Some(c)).collect()
}

/// Reveal the true labels of ⌈fraction·n⌉ samples chosen uniformly at random (seeded):
/// `(sample, class)` pairs, ascending by sample, for [`super::Store::set_label_pairs`].
pub fn reveal_labels(
    truth: &[usize],
    fraction: f64,
    seed: u64,
) -> Result<Vec<(usize, usize)>, GenerateError> {
    if !(0.0..=1.0).contains(&fraction) {
        return Err(GenerateError::RevealFraction(fraction));
    }
    let n = truth.len();
    let k = ((fraction * n as f64).ceil() as usize).min(n);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut idx = rand::seq::index::sample(&mut rng, n, k).into_vec();
    idx.sort_unstable();
    Ok(idx.into_iter().map(|i| (i, truth[i])).collect())
}

/// Reveal the true labels of a stratified, seeded share of the samples: in every class c,
/// ⌈fraction·n_c⌉ samples drawn uniformly (at least one per class when the fraction is
/// positive). The partial labels of `run --reveal P`; ground truth becomes side information
/// only this way, by the user's request.
pub fn reveal_stratified(
    truth: &[usize],
    fraction: f64,
    seed: u64,
) -> Result<Vec<Option<usize>>, GenerateError> {
    if !(0.0..=1.0).contains(&fraction) {
        return Err(GenerateError::RevealFraction(fraction));
    }
    let classes = truth.iter().copied().max().map_or(0, |c| c + 1);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); classes];
    for (i, &c) in truth.iter().enumerate() {
        members[c].push(i);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = vec![None; truth.len()];
    for (c, idx) in members.iter().enumerate() {
        let k = ((fraction * idx.len() as f64).ceil() as usize).min(idx.len());
        for p in rand::seq::index::sample(&mut rng, idx.len(), k) {
            out[idx[p]] = Some(c);
        }
    }
    Ok(out)
}

/// `count` seeded uniform random valid triplets (three distinct samples below n; none when
/// n < 3). Not a protocol: the workload of benchmarks and of tests that need many triplets.
pub fn random_triplets(n: usize, count: usize, seed: u64) -> Vec<Triplet> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(count);
    while out.len() < count && n >= 3 {
        let (i, j, q) = (
            rng.gen_range(0..n),
            rng.gen_range(0..n),
            rng.gen_range(0..n),
        );
        if i != j && i != q && j != q {
            out.push(Triplet { i, j, q });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    /// Three well-separated clusters of 40 points in 4-D, labels = cluster.
    fn clusters() -> (Array2<f64>, Vec<Option<usize>>) {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let n = 120;
        let x = Array2::from_shape_fn((4, n), |(r, c)| {
            let centre = if r == c % 3 { 5.0 } else { 0.0 };
            centre + rng.r#gen::<f64>()
        });
        (x, (0..n).map(|c| Some(c % 3)).collect())
    }

    #[test]
    fn counts_validity_and_no_duplicates() {
        let (x, y) = clusters();
        let nb = knn(x.view(), 5);
        let g = generate_with_neighbours(&nb, &y, &ProtocolOptions::default(), &[]).unwrap();
        assert_eq!(g.anchors.len(), 12);
        assert_eq!(g.triplets.len(), 12 * 30);
        assert_eq!(g.label_based, 12 * 15);
        assert_eq!(g.neighbour_based, 12 * 15);
        assert_eq!(g.shortfall, 0);
        let set: HashSet<Triplet> = g.triplets.iter().copied().collect();
        assert_eq!(set.len(), g.triplets.len(), "no duplicates");
        for (k, t) in g.triplets.iter().enumerate() {
            t.validate(120).unwrap();
            assert!(g.anchors.contains(&t.i));
            let label_part = k % 30 < 15;
            if label_part {
                assert_eq!(y[t.j], y[t.i]);
                assert_ne!(y[t.q], y[t.i]);
            } else {
                assert!(nb.of(t.i).contains(&t.j));
                assert!(!nb.of(t.i).contains(&t.q));
            }
        }
        // j cycles through the 5 neighbours: each used 3 times per anchor.
        let first: Vec<usize> = g.triplets[15..30].iter().map(|t| t.j).collect();
        for &j in nb.of(g.anchors[0]) {
            assert_eq!(first.iter().filter(|&&v| v == j).count(), 3);
        }
    }

    #[test]
    fn deterministic_by_seed_and_avoids_existing() {
        let (x, y) = clusters();
        let opts = ProtocolOptions {
            seed: 4,
            ..ProtocolOptions::default()
        };
        let a = generate_triplets(x.view(), &y, &opts, &[]).unwrap();
        let b = generate_triplets(x.view(), &y, &opts, &[]).unwrap();
        assert_eq!(a, b);
        let c = generate_triplets(x.view(), &y, &ProtocolOptions { seed: 5, ..opts }, &[]).unwrap();
        assert_ne!(a.triplets, c.triplets);
        let d = generate_triplets(x.view(), &y, &opts, &a.triplets).unwrap();
        assert!(d.triplets.iter().all(|t| !a.triplets.contains(t)));
    }

    #[test]
    fn partial_and_missing_labels() {
        let (x, y) = clusters();
        // Only the first 30 samples labelled.
        let partial: Vec<Option<usize>> = y
            .iter()
            .enumerate()
            .map(|(i, c)| if i < 30 { *c } else { None })
            .collect();
        let opts = ProtocolOptions {
            anchor_fraction: 1.0,
            per_anchor: 4,
            ..ProtocolOptions::default()
        };
        let g = generate_triplets(x.view(), &partial, &opts, &[]).unwrap();
        assert_eq!(g.anchors.len(), 120);
        assert_eq!(g.label_based, 30 * 2);
        assert_eq!(g.anchors_without_label_triplets, 90);
        assert_eq!(g.neighbour_based, 120 * 2);
        for t in &g.triplets {
            if partial[t.i].is_some() && partial[t.j] == partial[t.i] && partial[t.q].is_some() {
                assert_ne!(partial[t.q], partial[t.i]);
            }
        }
        let only = ProtocolOptions {
            anchor_fraction: 0.5,
            anchor_pool: AnchorPool::Labelled,
            ..opts
        };
        let g = generate_triplets(x.view(), &partial, &only, &[]).unwrap();
        assert_eq!(g.anchors.len(), 15);
        assert!(g.anchors.iter().all(|&a| a < 30));
        assert_eq!((g.label_based, g.anchors_without_label_triplets), (30, 0));
        let none = generate_triplets(x.view(), &[], &opts, &[]).unwrap();
        assert_eq!(none.label_based, 0);
        assert_eq!(none.neighbour_based, 240);
        assert!(matches!(
            generate_triplets(x.view(), &[Some(0)], &opts, &[]),
            Err(GenerateError::LabelCount { .. })
        ));
        let bad = ProtocolOptions {
            anchor_fraction: 1.5,
            ..opts
        };
        assert!(generate_triplets(x.view(), &y, &bad, &[]).is_err());
    }

    #[test]
    fn generate_into_store_is_one_undo_step() {
        use crate::engine::data::Fingerprint;
        let (x, y) = clusters();
        let mut store = Store::new(Fingerprint {
            n: 120,
            m: 4,
            hash: 1,
        });
        let truth: Vec<usize> = y.iter().map(|c| c.unwrap_or(0)).collect();
        let pairs = reveal_labels(&truth, 0.5, 1).unwrap();
        store
            .transaction("classes", |tx| {
                (0..3).try_for_each(|c| tx.add_class(&format!("c{c}")).map(drop))
            })
            .unwrap();
        store.set_label_pairs("reveal 50%", &pairs).unwrap();
        let g = generate_into(&mut store, x.view(), &ProtocolOptions::default()).unwrap();
        assert_eq!(store.triplets().len(), g.triplets.len());
        assert!(g.label_based > 0 && g.neighbour_based == 12 * 15);
        assert_eq!(
            store.undo_description(),
            Some(
                format!(
                    "generate {} triplets (12 anchors, seed 0)",
                    g.triplets.len()
                )
                .as_str()
            )
        );
        store.undo();
        assert!(store.triplets().is_empty());
        assert_eq!(store.labels().n_labelled(), 60);
        assert_eq!(labels_from_truth(&[2, 0]), vec![Some(2), Some(0)]);
    }

    #[test]
    fn reveal_is_seeded() {
        let truth: Vec<usize> = (0..50).map(|i| i % 4).collect();
        let r = reveal_labels(&truth, 0.1, 3).unwrap();
        assert_eq!(r.len(), 5);
        assert!(r.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(r.iter().all(|&(i, c)| truth[i] == c));
        assert_eq!(r, reveal_labels(&truth, 0.1, 3).unwrap());
        assert_ne!(r, reveal_labels(&truth, 0.1, 4).unwrap());
        assert!(reveal_labels(&truth, -0.1, 3).is_err());
    }

    #[test]
    fn stratified_reveal_takes_the_share_of_every_class_by_seed() {
        // Classes of 10, 5 and 1 samples; 30 %: ⌈3⌉ + ⌈1.5⌉ + ⌈0.3⌉ = 3 + 2 + 1.
        let truth: Vec<usize> = (0..16)
            .map(|i| {
                if i < 10 {
                    0
                } else if i < 15 {
                    1
                } else {
                    2
                }
            })
            .collect();
        let r = reveal_stratified(&truth, 0.3, 4).unwrap();
        let count = |c| r.iter().filter(|l| **l == Some(c)).count();
        assert_eq!((count(0), count(1), count(2)), (3, 2, 1));
        for (i, l) in r.iter().enumerate() {
            assert!(
                l.is_none_or(|c| c == truth[i]),
                "a revealed label is the true one"
            );
        }
        assert_eq!(r, reveal_stratified(&truth, 0.3, 4).unwrap());
        assert_ne!(r, reveal_stratified(&truth, 0.3, 5).unwrap());
        assert!(
            reveal_stratified(&truth, 0.0, 4)
                .unwrap()
                .iter()
                .all(Option::is_none)
        );
        assert!(reveal_stratified(&truth, 1.5, 4).is_err());
    }
}
