//! The weighted p-NN graph of D. Cai's `constructW` (docs/models.md §2.1): edge weights on
//! the p-NN lists of [`super::knn`], symmetrised by the entry-wise maximum, zero diagonal, as
//! a sparse [`Csr`] (never dense).
//!
//! * `binary`: every edge weighs 1 (2.3);
//! * `heat`: `exp(−‖x_i − x_j‖² / (2t²))` with t the mean Euclidean (not squared) distance
//!   between the samples, over all ordered pairs including a sample with itself, as Cai's
//!   `mean(mean(D))`; over [`HEAT_SAMPLE`] samples drawn with [`HEAT_SEED`] when n is larger;
//! * `cosine`: `x_iᵀx_j / (‖x_i‖ ‖x_j‖)`, 0 for an all-zero sample.
//!
//! [`graph_pass`] is the graph term of the graph-regularised models (GNMF, FNMF): H·S and
//! `Tr(H L Hᵀ)` in one pass over the nonzeros.
//!
//! The neighbours are always the Euclidean ones of the data as given, also for `cosine` (Cai's
//! code normalises the samples for the weights only). Each weight is a symmetric function of
//! the pair computed in the same order from either end (the kNN's exact distances sum over the
//! features in order), so `max(S, Sᵀ)` only merges the two directions of an edge.

use super::knn::Neighbours;
use super::{Csr, Op, gemm};
use ndarray::{ArrayView2, s};
use rand::{SeedableRng, seq::index};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// Samples the heat kernel's t is averaged over when n is larger (Cai's 3000).
pub const HEAT_SAMPLE: usize = 3000;
/// Seed of that draw: fixed, so the graph of a dataset is the same in every run.
pub const HEAT_SEED: u64 = 0x4845_4154;
/// Rows per block of the mean-distance products.
const BLOCK: usize = 256;

/// How the edges of the p-NN graph are weighted (docs/models.md §2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GraphWeight {
    /// 0-1 weights.
    Binary,
    /// Heat kernel `exp(−‖x_i − x_j‖² / (2t²))`, t from [`heat_t`].
    Heat,
    /// Cosine similarity of the two samples.
    Cosine,
}

impl GraphWeight {
    /// The option names of the GNMF `weight` parameter, in table order.
    pub const NAMED: [(&'static str, GraphWeight); 3] = [
        ("binary", GraphWeight::Binary),
        ("heat", GraphWeight::Heat),
        ("cosine", GraphWeight::Cosine),
    ];
}

/// The weighted symmetrised p-NN graph of the columns of `x` (m×n) from their neighbour lists
/// `nb` (docs/models.md §2.1): `S_ij = max(w_ij [j ∈ N(i)], w_ji [i ∈ N(j)])`, zero diagonal,
/// at most 2pn entries.
pub fn weighted_graph(x: ArrayView2<'_, f64>, nb: &Neighbours, weight: GraphWeight) -> Csr {
    let n = nb.n();
    if weight == GraphWeight::Binary {
        return nb.binary_graph();
    }
    let t = if weight == GraphWeight::Heat {
        heat_t(x)
    } else {
        0.0
    };
    let norms: Vec<f64> = if weight == GraphWeight::Cosine {
        x.columns().into_iter().map(|c| c.dot(&c).sqrt()).collect()
    } else {
        Vec::new()
    };
    let mut entries = Vec::with_capacity(2 * n * nb.p());
    for i in 0..n {
        for (&j, &d2) in nb.of(i).iter().zip(nb.sq_dist(i)) {
            let w = match weight {
                GraphWeight::Heat => heat_weight(d2, t),
                GraphWeight::Cosine => cosine(x, &norms, i, j),
                GraphWeight::Binary => 1.0,
            };
            entries.push((i, j, w));
            entries.push((j, i, w));
        }
    }
    // Both directions of an edge carry the same weight: keep one (the maximum), not the sum.
    entries.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then(b.2.total_cmp(&a.2)));
    entries.dedup_by(|later, first| (later.0, later.1) == (first.0, first.1));
    entries.retain(|&(i, j, _)| i != j);
    Csr::from_entries(n, n, &entries)
}

/// `exp(−d² / (2t²))`; 1 at distance 0 (also when t = 0, where every sampled pair coincides).
fn heat_weight(d2: f64, t: f64) -> f64 {
    if d2 == 0.0 {
        1.0
    } else {
        (-d2 / (2.0 * t * t)).exp()
    }
}

/// `x_iᵀx_j / (‖x_i‖ ‖x_j‖)`, summed over the features in order; 0 if either is all zero.
fn cosine(x: ArrayView2<'_, f64>, norms: &[f64], i: usize, j: usize) -> f64 {
    let den = norms[i] * norms[j];
    if den == 0.0 {
        return 0.0;
    }
    let dot: f64 = x
        .column(i)
        .iter()
        .zip(x.column(j))
        .map(|(a, b)| a * b)
        .sum();
    dot / den
}

/// The heat kernel's t: the mean Euclidean distance `Σ_ij ‖x_i − x_j‖ / s²` over all ordered
/// pairs of s samples, i = j included (Cai's `mean(mean(EuDist2(fea)))`): every sample when
/// n ≤ [`HEAT_SAMPLE`], else [`HEAT_SAMPLE`] drawn without replacement with [`HEAT_SEED`].
/// Distances come from the GEMM identity `‖a‖² + ‖b‖² − 2aᵀb` (clamped at 0), blocks of rows
/// in parallel, each block's sum added in block order (the same value for any thread count).
pub fn heat_t(x: ArrayView2<'_, f64>) -> f64 {
    let n = x.ncols();
    if n == 0 {
        return 0.0;
    }
    let mut picked: Vec<usize> = if n > HEAT_SAMPLE {
        let mut rng = ChaCha8Rng::seed_from_u64(HEAT_SEED);
        index::sample(&mut rng, n, HEAT_SAMPLE).into_vec()
    } else {
        (0..n).collect()
    };
    picked.sort_unstable();
    let s = picked.len();
    // The sampled samples as rows (s×m).
    let xs = ndarray::Array2::from_shape_fn((s, x.nrows()), |(r, f)| x[[f, picked[r]]]);
    let norms: Vec<f64> = xs.rows().into_iter().map(|r| r.dot(&r)).collect();
    let blocks: Vec<usize> = (0..s).step_by(BLOCK).collect();
    let sums: Vec<f64> = blocks
        .par_iter()
        .map(|&b0| {
            let b1 = (b0 + BLOCK).min(s);
            // Rows b0..b1 against rows b0..s: the pairs (i, j), j ≥ i, of this block.
            let g = gemm(
                xs.slice(s![b0..b1, ..]),
                Op::N,
                xs.slice(s![b0.., ..]),
                Op::T,
            );
            let mut sum = 0.0;
            for (r, row) in g.rows().into_iter().enumerate() {
                let i = b0 + r;
                // j > i counts twice (the pair both ways); j = i is 0.
                for (off, &gij) in row.iter().enumerate().skip(r + 1) {
                    let j = b0 + off;
                    sum += 2.0 * (norms[i] + norms[j] - 2.0 * gij).max(0.0).sqrt();
                }
            }
            sum
        })
        .collect();
    sums.iter().sum::<f64>() / (s * s) as f64
}

/// `hs ← H·S` for the symmetric S, and `Tr(H L Hᵀ) = ½ Σ_a Σ_c Σ_{r ∈ S_c} S_cr (h_ac − h_ar)²`
/// (3.9), in one pass over the nonzeros of S for each row a of H (k×n row-major; O(nnz·k)).
///
/// Column c of H·S is gathered from row c of S (S = Sᵀ): `Σ_r S_cr h_ar`, in the stored
/// (ascending) order of row c, each row of H read from cache. The trace is a sum of
/// nonnegative terms, so it has no cancellation error (`d_c h_ac² − h_ac (HS)_ac` would); it is
/// zero exactly when H is constant on every connected part of the graph.
pub fn graph_pass(s: &Csr, h: &[f64], (k, n): (usize, usize), hs: &mut [f64]) -> f64 {
    let mut trace = 0.0;
    for a in 0..k {
        let row = &h[a * n..(a + 1) * n];
        let out = &mut hs[a * n..(a + 1) * n];
        let mut lanes = [0.0f64; 4];
        for (c, o) in out.iter_mut().enumerate() {
            let (cols, vals) = s.row(c);
            let hc = row[c];
            let (mut acc, mut tr) = (0.0, 0.0);
            for (&r, &v) in cols.iter().zip(vals) {
                let hr = row[r];
                acc += v * hr;
                let diff = hc - hr;
                tr += v * (diff * diff);
            }
            *o = acc;
            lanes[c % 4] += tr;
        }
        trace += (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    }
    0.5 * trace
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::linalg::knn;
    use ndarray::{Array2, array};

    /// Five samples on a line at 0, 1, 3, 7, 8 (one feature), p = 1. Nearest: sample 0 → 1,
    /// 1 → 0, 2 (at 3) → 1 (2 away, against 4 to the sample at 7), 3 → 4, 4 → 3. Sample 2
    /// chose 1 but 1 chose 0: an asymmetric pair, which max(S, Sᵀ) keeps.
    fn line() -> Array2<f64> {
        array![[0.0, 1.0, 3.0, 7.0, 8.0]]
    }

    #[test]
    fn binary_graph_is_symmetrised_by_max_with_zero_diagonal() {
        let x = line();
        let nb = knn::knn(x.view(), 1);
        assert_eq!(
            nb.to_lists(),
            vec![vec![1], vec![0], vec![1], vec![4], vec![3]]
        );
        let s = weighted_graph(x.view(), &nb, GraphWeight::Binary).to_dense();
        let want = array![
            [0.0, 1.0, 0.0, 0.0, 0.0],
            [1.0, 0.0, 1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 0.0, 1.0],
            [0.0, 0.0, 0.0, 1.0, 0.0],
        ];
        assert_eq!(s, want);
    }

    #[test]
    fn ties_go_to_the_smaller_index() {
        // 2 is at distance 1 from both 1 and 3: with p = 1 it picks 1.
        let x = array![[0.0, 1.0, 2.0, 3.0, 10.0]];
        let nb = knn::knn(x.view(), 1);
        assert_eq!(nb.of(2), &[1]);
        // 1 is at distance 1 from 0 and 2: it picks 0; 3 picks 2; 10 picks 3.
        assert_eq!(
            nb.to_lists(),
            vec![vec![1], vec![0], vec![1], vec![2], vec![3]]
        );
        let s = weighted_graph(x.view(), &nb, GraphWeight::Binary);
        assert!(s.is_symmetric());
        let d = s.to_dense();
        assert_eq!(d[[2, 1]], 1.0);
        assert_eq!(
            d[[2, 3]],
            1.0,
            "3 chose 2, so the edge exists from 2's side too"
        );
        assert_eq!((0..5).map(|i| d[[i, i]]).sum::<f64>(), 0.0);
    }

    #[test]
    fn heat_t_is_the_mean_distance_over_all_ordered_pairs() {
        let x = line();
        // Pairwise distances of 0, 1, 3, 7, 8 (each unordered pair once): 1, 3, 7, 8, 2, 6, 7,
        // 4, 5, 1 → sum 44; ordered pairs twice that, over 25 entries with the diagonal.
        let t = heat_t(x.view());
        assert!((t - 88.0 / 25.0).abs() < 1e-12, "{t}");
        let nb = knn::knn(x.view(), 1);
        let s = weighted_graph(x.view(), &nb, GraphWeight::Heat).to_dense();
        let w = |d: f64| (-d * d / (2.0 * t * t)).exp();
        assert!((s[[0, 1]] - w(1.0)).abs() < 1e-15);
        assert!((s[[1, 2]] - w(2.0)).abs() < 1e-15);
        assert!((s[[2, 1]] - w(2.0)).abs() < 1e-15);
        assert!((s[[3, 4]] - w(1.0)).abs() < 1e-15);
        assert_eq!(s[[0, 2]], 0.0);
        assert_eq!(s[[2, 2]], 0.0);
        assert_eq!(
            weighted_graph(x.view(), &nb, GraphWeight::Heat).nnz(),
            weighted_graph(x.view(), &nb, GraphWeight::Binary).nnz()
        );
    }

    #[test]
    fn heat_t_samples_3000_points_with_a_fixed_seed_beyond_that() {
        use rand::{Rng, SeedableRng};
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let x = Array2::from_shape_simple_fn((3, 3100), || rng.r#gen::<f64>());
        let t = heat_t(x.view());
        assert_eq!(t.to_bits(), heat_t(x.view()).to_bits());
        // The same draw by hand, distances summed directly.
        let mut rng = ChaCha8Rng::seed_from_u64(HEAT_SEED);
        let picked = index::sample(&mut rng, 3100, HEAT_SAMPLE).into_vec();
        let dist = |i: usize, j: usize| {
            (0..3)
                .map(|f| (x[[f, i]] - x[[f, j]]).powi(2))
                .sum::<f64>()
                .sqrt()
        };
        let mean_over = |idx: &[usize]| {
            let mut sum = 0.0;
            for (a, &i) in idx.iter().enumerate() {
                for &j in &idx[a + 1..] {
                    sum += 2.0 * dist(i, j);
                }
            }
            sum / (idx.len() * idx.len()) as f64
        };
        let want = mean_over(&picked);
        assert!((t - want).abs() < 1e-9 * want, "{t} vs {want}");
        // Not the mean over all 3100 samples.
        let all = mean_over(&(0..3100).collect::<Vec<_>>());
        assert!((t - all).abs() > 1e-9, "{t} equals the full mean {all}");
    }

    #[test]
    fn cosine_weights_are_the_cosine_on_euclidean_neighbours() {
        // Columns: (1, 0), (2, 0.1), (0, 1), (0, 0) ; p = 1.
        // Euclidean: 0→1? |(1,0)−(2,0.1)|² = 1.01, |(1,0)−(0,0)|² = 1 → 0 picks 3 (the zero
        // sample), 1 picks 0, 2 picks 3 (distance 1 < 2 to 0), 3 picks 0 (1 = 1 to 2: tie → 0).
        let x = array![[1.0, 2.0, 0.0, 0.0], [0.0, 0.1, 1.0, 0.0]];
        let nb = knn::knn(x.view(), 1);
        assert_eq!(nb.to_lists(), vec![vec![3], vec![0], vec![3], vec![0]]);
        let s = weighted_graph(x.view(), &nb, GraphWeight::Cosine);
        let d = s.to_dense();
        let cos01 = 2.0 / (1.0 * (4.01f64).sqrt());
        assert!((d[[0, 1]] - cos01).abs() < 1e-15);
        assert_eq!(d[[1, 0]], d[[0, 1]]);
        // Edges to the all-zero sample exist with weight 0.
        assert!(s.position(0, 3).is_some() && s.position(2, 3).is_some());
        assert_eq!(d[[0, 3]], 0.0);
        assert_eq!(d[[3, 2]], 0.0);
        assert!(s.is_symmetric());
        assert_eq!(s.nnz(), 6);
    }
}
