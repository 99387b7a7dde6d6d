//! Suggested triplets: the next question to ask the user, chosen the way active
//! triplet-collection tools choose queries (issue 21 point 5).
//!
//! Candidates come from the kNN graph of the data: for an anchor i, every pair {a, b} of its
//! p nearest neighbours is a question "is a or b closer to i?". Among them the one the current
//! representation is least sure of is proposed: the smallest margin
//! `|‖h_i − h_a‖² − ‖h_i − h_b‖²|` (H's columns, or X's before any run). The triplet is
//! oriented as the representation answers it (j the nearer in H), so "q closer" is the answer
//! that H violates.
//!
//! Deterministic by seed: the anchors are a seeded sample of at most [`MAX_ANCHORS`] samples
//! and ties in the margin are broken by a seeded hash of the triplet, never by iteration
//! order of a hash map. A question already asked — answered either way or skipped — is never
//! proposed again: `(i, j, q)` and `(i, q, j)` are the same question.

use super::Triplet;
use crate::engine::linalg::knn::Neighbours;
use ndarray::ArrayView2;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;

/// At most this many anchors are searched (O(anchors · p² · k) work).
pub const MAX_ANCHORS: usize = 512;

/// A proposed triplet and how unsure the representation is about it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Suggestion {
    /// `(i, j, q)` with j the nearer of the two to i in the representation.
    pub triplet: Triplet,
    /// `‖h_i − h_q‖² − ‖h_i − h_j‖²` (≥ 0): how far H is from answering the other way.
    pub margin: f64,
}

/// Whether the question of `t` (either orientation) is in `asked`.
fn was_asked(asked: &BTreeSet<Triplet>, t: Triplet) -> bool {
    asked.contains(&t) || asked.contains(&Triplet::new(t.i, t.q, t.j))
}

/// Squared Euclidean distance between columns `a` and `b` of `points`.
fn sq_dist(points: ArrayView2<'_, f64>, a: usize, b: usize) -> f64 {
    points
        .column(a)
        .iter()
        .zip(points.column(b))
        .map(|(x, y)| (x - y) * (x - y))
        .sum()
}

/// SplitMix64 of `seed` mixed with the triplet: the seeded tie-breaker.
fn tie_key(seed: u64, t: Triplet) -> u64 {
    let mut z = seed
        ^ (t.i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (t.j as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
        ^ (t.q as u64).wrapping_mul(0x1656_67B1_9E37_79F9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The next triplet to ask about (see the module docs): `points` is k×n (samples as columns,
/// H or X), `neighbours` the kNN graph over the same n samples, `asked` the triplets
/// answered or skipped so far. `None` when every candidate was asked (or n < 3).
pub fn suggest(
    points: ArrayView2<'_, f64>,
    neighbours: &Neighbours,
    asked: &BTreeSet<Triplet>,
    seed: u64,
) -> Option<Suggestion> {
    let n = points.ncols();
    if n < 3 || neighbours.n() != n {
        return None;
    }
    let mut anchors: Vec<usize> = (0..n).collect();
    if n > MAX_ANCHORS {
        anchors.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
        anchors.truncate(MAX_ANCHORS);
    }
    let mut best: Option<(f64, u64, Suggestion)> = None;
    for &i in &anchors {
        let nb = neighbours.of(i);
        let d: Vec<f64> = nb.iter().map(|&a| sq_dist(points, i, a)).collect();
        for (x, &a) in nb.iter().enumerate() {
            for (y, &b) in nb.iter().enumerate().skip(x + 1) {
                let (j, q, margin) = if d[x] <= d[y] {
                    (a, b, d[y] - d[x])
                } else {
                    (b, a, d[x] - d[y])
                };
                let t = Triplet::new(i, j, q);
                if !margin.is_finite() || was_asked(asked, t) {
                    continue;
                }
                let key = tie_key(seed, t);
                let better = best
                    .as_ref()
                    .is_none_or(|(m, k, _)| margin < *m || (margin == *m && key < *k));
                if better {
                    best = Some((margin, key, Suggestion { triplet: t, margin }));
                }
            }
        }
    }
    best.map(|(_, _, s)| s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::linalg::knn::knn;
    use ndarray::Array2;

    /// Points on a line at 0, 1, 3, 6, 10 (k = 1): with anchor 2 (at 3), samples 1 (at 1) and
    /// 3 (at 6) are at squared distances 4 and 9, so a margin of 5; the smallest margin of
    /// all pairs of 2-NN is anchor 1 (at 1) with 0 (at 0, d² = 1) and 2 (at 3, d² = 4): 3.
    #[test]
    fn proposes_the_smallest_margin_oriented_as_the_points_answer() {
        let x = Array2::from_shape_vec((1, 5), vec![0.0, 1.0, 3.0, 6.0, 10.0]).expect("shape");
        let nb = knn(x.view(), 2);
        let s = suggest(x.view(), &nb, &BTreeSet::new(), 0).expect("a suggestion");
        assert_eq!(s.triplet, Triplet::new(1, 0, 2));
        assert!((s.margin - 3.0).abs() < 1e-12, "{}", s.margin);
    }

    /// The same inputs and seed give the same suggestion; asking it (either way round) or
    /// skipping it makes the next call propose another one, until none are left; no
    /// question comes back.
    #[test]
    fn is_deterministic_by_seed_and_never_repeats_an_asked_triplet() {
        let n = 30;
        let x = Array2::from_shape_fn((3, n), |(r, c)| ((c * 7 + r * 13) % 11) as f64);
        let nb = knn(x.view(), 4);
        let mut asked = BTreeSet::new();
        let first = suggest(x.view(), &nb, &asked, 5);
        assert_eq!(first, suggest(x.view(), &nb, &asked, 5));
        let mut seen = BTreeSet::new();
        let mut count = 0;
        while let Some(s) = suggest(x.view(), &nb, &asked, 5) {
            let t = s.triplet;
            assert!(
                seen.insert((t.i, t.j.min(t.q), t.j.max(t.q))),
                "{t} repeated"
            );
            // Alternate the answers: j closer, q closer (the reverse triplet), skipped.
            match count % 3 {
                0 | 2 => asked.insert(t),
                _ => asked.insert(Triplet::new(t.i, t.q, t.j)),
            };
            count += 1;
            assert!(count <= n * 6, "never runs out");
        }
        // Every anchor has C(4, 2) = 6 pairs of neighbours.
        assert_eq!(count, n * 6);
    }

    /// Ties (equal margins everywhere) are broken by the seed: different seeds may propose
    /// different triplets, each seed always the same one.
    #[test]
    fn ties_are_broken_by_the_seed() {
        let x = Array2::from_shape_vec((1, 6), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]).expect("shape");
        let nb = knn(x.view(), 2);
        let picks: BTreeSet<Triplet> = (0..16)
            .filter_map(|seed| suggest(x.view(), &nb, &BTreeSet::new(), seed))
            .map(|s| s.triplet)
            .collect();
        assert!(picks.len() > 1, "{picks:?}");
        for seed in 0..4 {
            assert_eq!(
                suggest(x.view(), &nb, &BTreeSet::new(), seed),
                suggest(x.view(), &nb, &BTreeSet::new(), seed)
            );
        }
    }
}
