//! Lloyd's k-means on the columns of a matrix (docs/models.md §2.6), single and repeated (§8.2).
//!
//! Points are the **columns** of a d×n view (d = k latent dimensions, n samples), as H is stored.
//! Distances use `‖x‖² + ‖c‖² − 2xᵀc`; the points are low-dimensional and c ≤ ~100, so the
//! n×c×d assignment loop is the whole cost and is run on a row-major copy of the points.

use super::{EvalError, derive_seed};
use ndarray::{Array2, ArrayView2};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Parameters of (repeated) k-means.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KMeansParams {
    /// Number of clusters c.
    pub n_clusters: usize,
    /// Maximum number of assignment passes per run (docs/models.md §2.6: 100).
    pub max_iter: usize,
    /// Number of random starts R (docs/models.md §8.2: 50 in the RPNMF protocol).
    pub restarts: usize,
    /// Seed; restart r uses [`derive_seed`]`(seed, r)`.
    pub seed: u64,
}

impl KMeansParams {
    /// Defaults of the RPNMF protocol: 100 iterations, 50 restarts, seed 0.
    pub fn new(n_clusters: usize) -> Self {
        Self {
            n_clusters,
            max_iter: 100,
            restarts: 50,
            seed: 0,
        }
    }

    fn check(&self, n: usize) -> Result<(), EvalError> {
        if self.n_clusters == 0 || self.n_clusters > n {
            return Err(EvalError::InvalidClusterCount {
                clusters: self.n_clusters,
                samples: n,
            });
        }
        if self.max_iter == 0 {
            return Err(EvalError::InvalidParam {
                name: "max_iter",
                why: "must be at least 1".into(),
            });
        }
        if self.restarts == 0 {
            return Err(EvalError::InvalidParam {
                name: "restarts",
                why: "must be at least 1".into(),
            });
        }
        Ok(())
    }
}

/// The outcome of one k-means run.
#[derive(Clone, Debug, PartialEq)]
pub struct KMeansResult {
    /// Cluster of each sample, in `0..c`.
    pub labels: Vec<usize>,
    /// Centroids as columns (d×c).
    pub centroids: Array2<f64>,
    /// Sum of squared distances of the samples to their centroids.
    pub inertia: f64,
    /// Assignment passes made (the last one changed nothing when `converged`).
    pub iterations: usize,
    /// Whether the assignments stopped changing within `max_iter` passes.
    pub converged: bool,
}

/// One restart of repeated k-means (centroids dropped to keep R runs cheap to hold).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KMeansRun {
    pub labels: Vec<usize>,
    pub inertia: f64,
    pub iterations: usize,
    pub converged: bool,
}

/// All restarts of repeated k-means, in restart order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepeatedKMeans {
    pub runs: Vec<KMeansRun>,
    /// Index of the run with the lowest inertia (the first one on ties).
    pub best: usize,
}

impl RepeatedKMeans {
    /// The run with the lowest inertia.
    pub fn best_run(&self) -> Option<&KMeansRun> {
        self.runs.get(self.best)
    }
}

/// Points copied row-major (one sample per row) with their squared norms, and column-major
/// (one coordinate per row) for the assignment of [`assign_all`].
struct Points {
    data: Vec<f64>,
    /// d×n: coordinate j of sample i at `j·n + i`.
    by_coordinate: Vec<f64>,
    norms: Vec<f64>,
    d: usize,
    n: usize,
}

impl Points {
    fn new(points: ArrayView2<'_, f64>) -> Result<Self, EvalError> {
        let (d, n) = points.dim();
        let mut data = Vec::with_capacity(d * n);
        let mut norms = Vec::with_capacity(n);
        for (sample, col) in points.columns().into_iter().enumerate() {
            let mut s = 0.0;
            for (coordinate, &v) in col.iter().enumerate() {
                if !v.is_finite() {
                    return Err(EvalError::NonFinite { sample, coordinate });
                }
                data.push(v);
                s += v * v;
            }
            norms.push(s);
        }
        let mut by_coordinate = vec![0.0; d * n];
        for (i, row) in data.chunks_exact(d.max(1)).enumerate() {
            for (j, &v) in row.iter().enumerate() {
                by_coordinate[j * n + i] = v;
            }
        }
        Ok(Self {
            data,
            by_coordinate,
            norms,
            d,
            n,
        })
    }

    /// The samples `idx` (ascending) as points of their own.
    fn subset(&self, idx: &[usize]) -> Self {
        let (d, n) = (self.d, idx.len());
        let mut data = Vec::with_capacity(d * n);
        for &i in idx {
            data.extend_from_slice(self.row(i));
        }
        let mut by_coordinate = vec![0.0; d * n];
        for (t, &i) in idx.iter().enumerate() {
            for j in 0..d {
                by_coordinate[j * n + t] = self.by_coordinate[j * self.n + i];
            }
        }
        Self {
            data,
            by_coordinate,
            norms: idx.iter().map(|&i| self.norms[i]).collect(),
            d,
            n,
        }
    }

    fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.d..(i + 1) * self.d]
    }
}

fn sq_dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// One k-means run on the columns of `points` (d×n) with c clusters (docs/models.md §2.6):
/// 'sample' start (c distinct samples drawn uniformly), Lloyd iterations until the assignments
/// stop changing or `max_iter` assignment passes were made; an empty cluster is re-seeded with
/// the sample farthest from its current centroid. Ties in the assignment go to the lowest cluster.
pub fn kmeans(
    points: ArrayView2<'_, f64>,
    n_clusters: usize,
    max_iter: usize,
    seed: u64,
) -> Result<KMeansResult, EvalError> {
    let params = KMeansParams {
        n_clusters,
        max_iter,
        restarts: 1,
        seed,
    };
    params.check(points.ncols())?;
    let pts = Points::new(points)?;
    let (labels, centroids, iterations, converged) = lloyd(&pts, n_clusters, max_iter, seed);
    let inertia = inertia(&pts, &labels, &centroids);
    let mut c_mat = Array2::zeros((pts.d, n_clusters));
    for (k, mut col) in c_mat.columns_mut().into_iter().enumerate() {
        for (a, v) in col.iter_mut().enumerate() {
            *v = centroids[k * pts.d + a];
        }
    }
    Ok(KMeansResult {
        labels,
        centroids: c_mat,
        inertia,
        iterations,
        converged,
    })
}

/// Repeated k-means (docs/models.md §8.2): `params.restarts` independent runs, run r seeded with
/// [`derive_seed`]`(params.seed, r)`. Runs execute in parallel on the rayon pool; each run is
/// sequential and depends only on its seed, so the result does not depend on the thread count.
pub fn repeated_kmeans(
    points: ArrayView2<'_, f64>,
    params: &KMeansParams,
) -> Result<RepeatedKMeans, EvalError> {
    repeated_kmeans_with(points, params, &|| {})
}

/// [`repeated_kmeans`], calling `on_restart` as each restart ends (from the rayon threads;
/// for a progress display).
pub fn repeated_kmeans_with(
    points: ArrayView2<'_, f64>,
    params: &KMeansParams,
    on_restart: &(dyn Fn() + Sync),
) -> Result<RepeatedKMeans, EvalError> {
    params.check(points.ncols())?;
    let pts = Points::new(points)?;
    let runs: Vec<KMeansRun> = (0..params.restarts)
        .into_par_iter()
        .map(|r| {
            let seed = derive_seed(params.seed, r as u64);
            let (labels, centroids, iterations, converged) =
                restart(&pts, params.n_clusters, params.max_iter, seed);
            let inertia = inertia(&pts, &labels, &centroids);
            on_restart();
            KMeansRun {
                labels,
                inertia,
                iterations,
                converged,
            }
        })
        .collect();
    let mut best = 0;
    for (r, run) in runs.iter().enumerate() {
        if run.inertia < runs[best].inertia {
            best = r;
        }
    }
    Ok(RepeatedKMeans { runs, best })
}

/// Exact inertia Σ‖x_i − c_{l_i}‖² (not the expanded form, which cancels near zero).
fn inertia(pts: &Points, labels: &[usize], centroids: &[f64]) -> f64 {
    let d = pts.d;
    labels
        .iter()
        .enumerate()
        .map(|(i, &l)| sq_dist(pts.row(i), &centroids[l * d..(l + 1) * d]))
        .sum()
}

/// From this many samples on, a restart of repeated k-means starts from the centroids its
/// Lloyd passes reach on a seeded sample of [`START_SAMPLE`] samples, then makes at most
/// [`FINISH_PASSES`] passes over all of them (docs/models.md §8.2). Below, every restart is
/// plain Lloyd on all samples, as before. At 200,000 samples the restarts of a barely
/// clustered H ran to their cap of 100 passes over every sample: ~20 s of CPU, most of a
/// finished run's evaluation (docs/performance.md, "k-means and the SVM at 200,000 samples").
pub const SAMPLED_START_FROM: usize = 50_000;

/// Samples of the seeded start of a large restart ([`SAMPLED_START_FROM`]).
pub const START_SAMPLE: usize = 20_000;

/// Passes over all samples after the seeded start ([`SAMPLED_START_FROM`]).
pub const FINISH_PASSES: usize = 20;

/// One restart of repeated k-means: Lloyd from `seed`'s start, on a sample first when the
/// data is large ([`SAMPLED_START_FROM`]).
fn restart(
    pts: &Points,
    c: usize,
    max_iter: usize,
    seed: u64,
) -> (Vec<usize>, Vec<f64>, usize, bool) {
    if pts.n < SAMPLED_START_FROM || c > START_SAMPLE / 10 {
        return lloyd(pts, c, max_iter, seed);
    }
    // Its own stream: the sample does not depend on the start the seed draws within it.
    let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(seed, u64::MAX));
    let mut idx = rand::seq::index::sample(&mut rng, pts.n, START_SAMPLE).into_vec();
    idx.sort_unstable();
    let sample = pts.subset(&idx);
    let (_, start, sampled, _) = lloyd(&sample, c, max_iter, seed);
    let (labels, centroids, passes, converged) =
        lloyd_from(pts, c, start, FINISH_PASSES.min(max_iter));
    (labels, centroids, sampled + passes, converged)
}

/// Lloyd's iterations from `c` distinct samples drawn by `seed`. Centroids are stored
/// row-major (c×d). Returns (labels, centroids, assignment passes, converged).
fn lloyd(
    pts: &Points,
    c: usize,
    max_iter: usize,
    seed: u64,
) -> (Vec<usize>, Vec<f64>, usize, bool) {
    let d = pts.d;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut centroids = vec![0.0; c * d];
    for (k, i) in rand::seq::index::sample(&mut rng, pts.n, c)
        .into_iter()
        .enumerate()
    {
        centroids[k * d..(k + 1) * d].copy_from_slice(pts.row(i));
    }
    lloyd_from(pts, c, centroids, max_iter)
}

/// Lloyd's iterations from the given centroids (row-major, c×d).
fn lloyd_from(
    pts: &Points,
    c: usize,
    mut centroids: Vec<f64>,
    max_iter: usize,
) -> (Vec<usize>, Vec<f64>, usize, bool) {
    let (d, n) = (pts.d, pts.n);
    let mut labels = vec![usize::MAX; n];
    let mut ct = vec![0.0; d * c];
    let mut nearest = vec![0usize; n];
    let mut cnorms = vec![0.0; c];
    let mut counts = vec![0usize; c];
    let mut iterations = 0;
    let mut converged = false;
    loop {
        // Assignment: argmin_k ‖c_k‖² − 2 xᵀc_k (‖x‖² is common to all k).
        for (k, cn) in cnorms.iter_mut().enumerate() {
            *cn = centroids[k * d..(k + 1) * d].iter().map(|v| v * v).sum();
        }
        iterations += 1;
        let mut changed = false;
        // Centroids transposed (d×c) for the points after the last whole block of
        // [`POINT_BLOCK`].
        for k in 0..c {
            for j in 0..d {
                ct[j * c + k] = centroids[k * d + j];
            }
        }
        assign_all(pts, &centroids, &ct, &cnorms, &mut nearest);
        for (label, &best) in labels.iter_mut().zip(&nearest) {
            if *label != best {
                *label = best;
                changed = true;
            }
        }
        if !changed {
            converged = true;
            break;
        }
        if iterations >= max_iter {
            break;
        }
        // Update: centroids = means of their samples.
        update_means(pts, &labels, &mut centroids, &mut counts);
        // Empty clusters: re-seed each with the sample farthest from its current centroid
        // (docs/models.md §2.6); that sample moves to the empty cluster.
        if counts.contains(&0) {
            let mut far: Vec<(f64, usize)> = (0..n)
                .map(|i| {
                    let l = labels[i];
                    (
                        pts.norms[i] + cnorm(&centroids, l, d)
                            - 2.0 * dot(pts.row(i), &centroids[l * d..(l + 1) * d]),
                        i,
                    )
                })
                .collect();
            // Farthest first; ties by lower index, so the order is fully determined.
            far.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            let mut next = far.iter();
            for k in 0..c {
                if counts[k] != 0 {
                    continue;
                }
                // Skip samples whose cluster would be emptied by the move.
                for &(dist, i) in next.by_ref() {
                    if dist <= 0.0 {
                        break;
                    }
                    let from = labels[i];
                    if counts[from] > 1 {
                        counts[from] -= 1;
                        counts[k] = 1;
                        labels[i] = k;
                        break;
                    }
                }
            }
            update_means(pts, &labels, &mut centroids, &mut counts);
        }
    }
    (labels, centroids, iterations, converged)
}

/// Points per block of [`assign_all`]: one vector of eight lanes.
const POINT_BLOCK: usize = 8;

/// The nearest centroid of every point into `out` (as [`nearest_centroid`] finds it: the same
/// dot products bit for bit, the same ties). Whole blocks of [`POINT_BLOCK`] points read their
/// coordinates from `pts.by_coordinate`, eight points' dot products with one centroid side by
/// side in the lanes of a vector (every lane the chain over j = 0, 1, … of one point); the
/// last points go one at a time. The assignment was most of a k-means restart, and at
/// 200,000 samples most of a run's evaluation (docs/performance.md, "k-means and the SVM at
/// 200,000 samples").
fn assign_all(pts: &Points, centroids: &[f64], ct: &[f64], cnorms: &[f64], out: &mut [usize]) {
    faer::traits::pulp::Arch::new().dispatch(Assign {
        pts,
        centroids,
        ct,
        cnorms,
        out,
    });
}

/// [`assign_all`] as a pulp job (the loops vectorize with the CPU's widest instructions).
struct Assign<'a> {
    pts: &'a Points,
    centroids: &'a [f64],
    ct: &'a [f64],
    cnorms: &'a [f64],
    out: &'a mut [usize],
}

impl faer::traits::pulp::WithSimd for Assign<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: faer::traits::pulp::Simd>(self, _simd: S) {
        let Assign {
            pts,
            centroids,
            ct,
            cnorms,
            out,
        } = self;
        let (d, n) = (pts.d, pts.n);
        let whole = n / POINT_BLOCK * POINT_BLOCK;
        for i0 in (0..whole).step_by(POINT_BLOCK) {
            let mut best = [0usize; POINT_BLOCK];
            let mut best_val = [f64::INFINITY; POINT_BLOCK];
            for (k, &cn) in cnorms.iter().enumerate() {
                let mut acc = [-0.0f64; POINT_BLOCK];
                for j in 0..d {
                    let cv = centroids[k * d + j];
                    let xs: &[f64; POINT_BLOCK] =
                        crate::engine::linalg::thin::fixed(&pts.by_coordinate[j * n + i0..]);
                    for p in 0..POINT_BLOCK {
                        acc[p] += xs[p] * cv;
                    }
                }
                for p in 0..POINT_BLOCK {
                    let val = cn - 2.0 * acc[p];
                    if val < best_val[p] {
                        best_val[p] = val;
                        best[p] = k;
                    }
                }
            }
            out[i0..i0 + POINT_BLOCK].copy_from_slice(&best);
        }
        for (i, o) in out.iter_mut().enumerate().take(n).skip(whole) {
            *o = nearest_centroid(pts.row(i), ct, cnorms);
        }
    }
}

/// Centroids per block of [`nearest_centroid`]: that many dot products in flight at once.
const CENTROID_BLOCK: usize = 8;

/// The centroid minimising `‖c_k‖² − 2 xᵀc_k` (the first of equals), from the transposed
/// centroids `ct` (d×c) and their squared norms. Each dot product is the sum of `x_j·c_kj` in
/// order j = 0, 1, … from −0.0, as `Iterator::sum` adds, so the labels are those of one dot
/// product at a time; the products of a block of centroids are formed side by side, which
/// takes the additions' latency out of the loop (the assignment was most of a restart).
fn nearest_centroid(x: &[f64], ct: &[f64], cnorms: &[f64]) -> usize {
    let c = cnorms.len();
    let mut best = 0;
    let mut best_val = f64::INFINITY;
    let mut k0 = 0;
    while k0 < c {
        let kb = (c - k0).min(CENTROID_BLOCK);
        let mut acc = [-0.0f64; CENTROID_BLOCK];
        for (j, &xj) in x.iter().enumerate() {
            let row = &ct[j * c + k0..j * c + k0 + kb];
            for (a, &v) in acc.iter_mut().zip(row) {
                *a += xj * v;
            }
        }
        for (t, &a) in acc[..kb].iter().enumerate() {
            let val = cnorms[k0 + t] - 2.0 * a;
            if val < best_val {
                best_val = val;
                best = k0 + t;
            }
        }
        k0 += kb;
    }
    best
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn cnorm(centroids: &[f64], k: usize, d: usize) -> f64 {
    centroids[k * d..(k + 1) * d].iter().map(|v| v * v).sum()
}

/// Recompute the means of non-empty clusters; an empty cluster keeps its old centroid.
fn update_means(pts: &Points, labels: &[usize], centroids: &mut [f64], counts: &mut [usize]) {
    let d = pts.d;
    let c = counts.len();
    let mut sums = vec![0.0; c * d];
    counts.iter_mut().for_each(|v| *v = 0);
    for (i, &l) in labels.iter().enumerate() {
        counts[l] += 1;
        for (s, &x) in sums[l * d..(l + 1) * d].iter_mut().zip(pts.row(i)) {
            *s += x;
        }
    }
    for k in 0..c {
        if counts[k] > 0 {
            let inv = 1.0 / counts[k] as f64;
            for a in 0..d {
                centroids[k * d + a] = sums[k * d + a] * inv;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::eval::metrics::clustering_accuracy;
    use ndarray::Array2;

    /// Three well-separated blobs in 2-D, 20 points each, as columns (2×60).
    fn blobs() -> (Array2<f64>, Vec<usize>) {
        let centres = [(0.0, 0.0), (10.0, 0.0), (0.0, 10.0)];
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut pts = Array2::zeros((2, 60));
        let mut truth = Vec::new();
        for i in 0..60 {
            let (cx, cy) = centres[i % 3];
            pts[[0, i]] = cx + rand::Rng::gen_range(&mut rng, -1.0..1.0);
            pts[[1, i]] = cy + rand::Rng::gen_range(&mut rng, -1.0..1.0);
            truth.push(i % 3);
        }
        (pts, truth)
    }

    /// The blocked assignment picks the centroid the one-at-a-time loop picks, ties and all.
    #[test]
    fn blocked_assignment_matches_one_dot_product_at_a_time() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for &(c, d) in &[(1, 4), (3, 2), (8, 10), (11, 7), (20, 3)] {
            let cents: Vec<f64> = (0..c * d).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let mut ct = vec![0.0; d * c];
            for k in 0..c {
                for j in 0..d {
                    ct[j * c + k] = cents[k * d + j];
                }
            }
            let cn: Vec<f64> = (0..c).map(|k| cnorm(&cents, k, d)).collect();
            for p in 0..500 {
                // Every tenth point a centroid itself, or the origin (all values equal).
                let x: Vec<f64> = match p % 10 {
                    0 => cents[(p % c) * d..(p % c + 1) * d].to_vec(),
                    1 => vec![0.0; d],
                    _ => (0..d).map(|_| rng.gen_range(-1.0..1.0)).collect(),
                };
                let mut want = (0, f64::INFINITY);
                for k in 0..c {
                    let dot: f64 = x.iter().zip(&cents[k * d..]).map(|(a, b)| a * b).sum();
                    let val = cn[k] - 2.0 * dot;
                    if val < want.1 {
                        want = (k, val);
                    }
                }
                assert_eq!(nearest_centroid(&x, &ct, &cn), want.0, "c {c}, d {d}");
            }
            // Eight points at a time from the coordinates' rows, and the last ones alone.
            let n = 8 * 7 + 5;
            let pts = Array2::from_shape_fn((d, n), |(j, i)| {
                if i % 9 == 0 {
                    cents[(i % c) * d + j]
                } else {
                    rng.gen_range(-1.0..1.0)
                }
            });
            let pts = Points::new(pts.view()).expect("finite");
            let mut out = vec![usize::MAX; n];
            assign_all(&pts, &cents, &ct, &cn, &mut out);
            for (i, &o) in out.iter().enumerate() {
                assert_eq!(
                    o,
                    nearest_centroid(pts.row(i), &ct, &cn),
                    "c {c}, d {d}, point {i}"
                );
            }
        }
    }

    /// From [`SAMPLED_START_FROM`] samples on, a restart starts from a sample: on three
    /// separated blobs it still finds them, the same on any thread count, and its passes over
    /// all samples stay within [`FINISH_PASSES`].
    #[test]
    fn large_restarts_start_from_a_sample_and_still_find_the_blobs() {
        let n = SAMPLED_START_FROM + 1000;
        let centres = [(0.0, 0.0), (10.0, 0.0), (0.0, 10.0)];
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut pts = Array2::zeros((2, n));
        let truth: Vec<usize> = (0..n).map(|i| i % 3).collect();
        for i in 0..n {
            let (cx, cy) = centres[i % 3];
            pts[[0, i]] = cx + rand::Rng::gen_range(&mut rng, -1.0..1.0);
            pts[[1, i]] = cy + rand::Rng::gen_range(&mut rng, -1.0..1.0);
        }
        let mut params = KMeansParams::new(3);
        params.restarts = 3;
        let a = repeated_kmeans(pts.view(), &params).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let b = pool.install(|| repeated_kmeans(pts.view(), &params).unwrap());
        assert_eq!(a, b);
        let best = a.best_run().unwrap();
        assert_eq!(clustering_accuracy(&truth, &best.labels).unwrap(), 1.0);
        // The sample's passes plus at most FINISH_PASSES over everything.
        assert!(best.iterations <= params.max_iter + FINISH_PASSES);
        assert!(best.converged);
    }

    #[test]
    fn recovers_three_blobs() {
        let (pts, truth) = blobs();
        let mut params = KMeansParams::new(3);
        params.restarts = 10;
        params.seed = 42;
        let rep = repeated_kmeans(pts.view(), &params).unwrap();
        let best = rep.best_run().unwrap();
        assert!(best.converged);
        assert_eq!(clustering_accuracy(&truth, &best.labels).unwrap(), 1.0);
        let single = kmeans(pts.view(), 3, 100, 42).unwrap();
        assert_eq!(single.centroids.dim(), (2, 3));
        // The inertia is the sum of squared distances to the returned centroids.
        let mut direct = 0.0;
        for i in 0..60 {
            let l = single.labels[i];
            direct += (pts[[0, i]] - single.centroids[[0, l]]).powi(2)
                + (pts[[1, i]] - single.centroids[[1, l]]).powi(2);
        }
        assert!((direct - single.inertia).abs() < 1e-9);
    }

    #[test]
    fn deterministic_by_seed_and_thread_count() {
        let (pts, _) = blobs();
        let mut params = KMeansParams::new(4); // 4 clusters on 3 blobs: starts matter
        params.restarts = 16;
        params.seed = 3;
        let a = repeated_kmeans(pts.view(), &params).unwrap();
        let b = repeated_kmeans(pts.view(), &params).unwrap();
        assert_eq!(a, b);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let c = pool.install(|| repeated_kmeans(pts.view(), &params).unwrap());
        assert_eq!(a, c);
        params.seed = 4;
        let d = repeated_kmeans(pts.view(), &params).unwrap();
        assert_ne!(a, d);
    }

    #[test]
    fn empty_cluster_is_reseeded() {
        // Two identical far points and duplicates: with c = 3 on points {0,0,0,10,10,20},
        // every run ends with 3 non-empty clusters.
        let pts = Array2::from_shape_vec((1, 6), vec![0.0, 0.0, 0.0, 10.0, 10.0, 20.0]).unwrap();
        for seed in 0..20 {
            let r = kmeans(pts.view(), 3, 100, seed).unwrap();
            let mut seen = [false; 3];
            r.labels.iter().for_each(|&l| seen[l] = true);
            assert!(seen.iter().all(|&s| s), "seed {seed}: {:?}", r.labels);
        }
    }

    #[test]
    fn rejects_bad_parameters() {
        let pts = Array2::<f64>::zeros((2, 3));
        assert!(matches!(
            kmeans(pts.view(), 4, 100, 0),
            Err(EvalError::InvalidClusterCount { .. })
        ));
        assert!(matches!(
            kmeans(pts.view(), 0, 100, 0),
            Err(EvalError::InvalidClusterCount { .. })
        ));
        assert!(matches!(
            kmeans(pts.view(), 2, 0, 0),
            Err(EvalError::InvalidParam { .. })
        ));
        let mut bad = pts.clone();
        bad[[1, 2]] = f64::NAN;
        assert!(matches!(
            kmeans(bad.view(), 2, 10, 0),
            Err(EvalError::NonFinite {
                sample: 2,
                coordinate: 1
            })
        ));
    }
}
