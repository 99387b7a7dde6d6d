//! p-nearest-neighbour search and graph (MODELS.md §2.1, DESIGN.md §4).
//!
//! Squared Euclidean distances come from blocked GEMM, `‖a‖² + ‖b‖² − 2aᵀb`, one block of
//! [`BLOCK`] query columns at a time, so memory stays O(BLOCK·n). Each row keeps its p nearest
//! with a partial sort (`select_nth_unstable_by`); ties are broken by the smaller index, so the
//! result is deterministic. Blocks run in parallel with rayon (results do not depend on the
//! number of threads).

use super::{Csr, Op, gemm};
use ndarray::{ArrayView2, s};
use rayon::prelude::*;
use std::cmp::Ordering;

/// Query columns per GEMM block.
pub const BLOCK: usize = 256;

/// The p nearest neighbours of every sample (column), self excluded, nearest first.
#[derive(Clone, Debug, PartialEq)]
pub struct Neighbours {
    /// Neighbours per sample: `min(p, n − 1)`.
    p: usize,
    /// `idx[i*p .. (i+1)*p]`: neighbours of sample i, nearest first (ties: smaller index first).
    idx: Vec<usize>,
    /// Squared distances matching `idx` (from the GEMM identity, clamped at 0).
    dist2: Vec<f64>,
}

impl Neighbours {
    /// Neighbours per sample.
    pub fn p(&self) -> usize {
        self.p
    }

    /// Number of samples.
    pub fn n(&self) -> usize {
        self.idx.len().checked_div(self.p).unwrap_or(0)
    }

    /// The neighbours of sample i, nearest first.
    pub fn of(&self, i: usize) -> &[usize] {
        &self.idx[i * self.p..(i + 1) * self.p]
    }

    /// Squared distances from sample i to [`Self::of`]`(i)`.
    pub fn sq_dist(&self, i: usize) -> &[f64] {
        &self.dist2[i * self.p..(i + 1) * self.p]
    }

    /// One list per sample.
    pub fn to_lists(&self) -> Vec<Vec<usize>> {
        (0..self.n()).map(|i| self.of(i).to_vec()).collect()
    }

    /// Binary symmetrised graph: `S_ij = 1` when j is among i's p-NN **or** i among j's,
    /// zero diagonal (MODELS.md §2.1 steps 2–3, weight mode "binary").
    pub fn binary_graph(&self) -> Csr {
        let n = self.n();
        let mut entries = Vec::with_capacity(2 * n * self.p);
        for i in 0..n {
            for &j in self.of(i) {
                entries.push((i, j, 1.0));
                entries.push((j, i, 1.0));
            }
        }
        let mut g = Csr::from_entries(n, n, &entries);
        // max(S, Sᵀ) of a 0/1 matrix: duplicates were summed to 2, clip back to 1.
        for v in g.values_mut() {
            *v = v.min(1.0);
        }
        g
    }
}

fn by_dist_then_index(a: &(f64, usize), b: &(f64, usize)) -> Ordering {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
}

/// Up to `cap` best `(dist, index)` pairs for each of `len` slots, kept sorted: a bounded
/// insertion list, cheap when most candidates are rejected by the current worst.
struct TopLists {
    cap: usize,
    count: Vec<usize>,
    items: Vec<(f64, usize)>,
}

impl TopLists {
    fn new(len: usize, cap: usize) -> Self {
        Self {
            cap,
            count: vec![0; len],
            items: vec![(f64::INFINITY, usize::MAX); len * cap],
        }
    }

    fn offer(&mut self, slot: usize, cand: (f64, usize)) {
        let list = &mut self.items[slot * self.cap..(slot + 1) * self.cap];
        let cnt = &mut self.count[slot];
        if *cnt == self.cap && by_dist_then_index(&cand, &list[self.cap - 1]) != Ordering::Less {
            return;
        }
        let mut pos = (*cnt).min(self.cap - 1);
        while pos > 0 && by_dist_then_index(&cand, &list[pos - 1]) == Ordering::Less {
            list[pos] = list[pos - 1];
            pos -= 1;
        }
        list[pos] = cand;
        *cnt = (*cnt + 1).min(self.cap);
    }

    fn get(&self, slot: usize) -> &[(f64, usize)] {
        &self.items[slot * self.cap..slot * self.cap + self.count[slot]]
    }
}

/// What one block of query columns `b0..b1` contributes: the best candidates of its own rows
/// among columns `b0..n`, and of every later sample `c ≥ b1` among the block's columns.
struct BlockOut {
    b0: usize,
    b1: usize,
    rows: Vec<(f64, usize)>,
    rows_p: usize,
    later: TopLists,
}

/// The p nearest neighbours (Euclidean) of every column of `x` (m×n), excluding itself.
/// `p` is capped at `n − 1`.
///
/// Uses the symmetry of the distance: block `I` computes `X_Iᵀ X_{J}` only for columns at or
/// after its own, so each pair's distance is computed once (half the GEMM flops), and each
/// pair is seen with the same rounded value from both sides.
pub fn knn(x: ArrayView2<'_, f64>, p: usize) -> Neighbours {
    let n = x.ncols();
    let p = p.min(n.saturating_sub(1));
    if p == 0 {
        return Neighbours {
            p: 0,
            idx: Vec::new(),
            dist2: Vec::new(),
        };
    }
    let norms: Vec<f64> = x.columns().into_iter().map(|c| c.dot(&c)).collect();
    // Samples as contiguous rows (n×m): both GEMM operands are then plain row slices, which
    // measured ~20% faster than slicing columns of X (one extra copy of X in memory).
    let xt = x.t().as_standard_layout().into_owned();
    let blocks: Vec<usize> = (0..n).step_by(BLOCK).collect();
    let outs: Vec<BlockOut> = blocks
        .par_iter()
        .map(|&b0| {
            let b1 = (b0 + BLOCK).min(n);
            let xb = xt.slice(s![b0..b1, ..]);
            let xr = xt.slice(s![b0.., ..]);
            let g = gemm(xb, Op::N, xr, Op::T); // (b1−b0) × (n−b0)
            // Own rows: candidates among columns b0..n (self excluded).
            let rows_p = p.min(n - b0 - 1);
            let mut rows = Vec::with_capacity((b1 - b0) * rows_p);
            let mut later = TopLists::new(n - b1, p.min(b1 - b0));
            let mut cand: Vec<(f64, usize)> = Vec::with_capacity(n - b0);
            for (r, g_row) in g.rows().into_iter().enumerate() {
                let i = b0 + r;
                let ni = norms[i];
                cand.clear();
                for (off, (&gic, &nc)) in g_row.iter().zip(&norms[b0..]).enumerate() {
                    let c = b0 + off;
                    if c == i {
                        continue;
                    }
                    let d = (ni + nc - 2.0 * gic).max(0.0);
                    cand.push((d, c));
                    if c >= b1 {
                        later.offer(c - b1, (d, i));
                    }
                }
                if rows_p > 0 {
                    cand.select_nth_unstable_by(rows_p - 1, by_dist_then_index);
                    let head = &mut cand[..rows_p];
                    head.sort_unstable_by(by_dist_then_index);
                    rows.extend_from_slice(head);
                }
            }
            BlockOut {
                b0,
                b1,
                rows,
                rows_p,
                later,
            }
        })
        .collect();
    // Merge: sample i's candidates are its own block's row list plus the `later` lists of
    // every earlier block.
    let mut idx = Vec::with_capacity(n * p);
    let mut dist2 = Vec::with_capacity(n * p);
    let mut merged: Vec<(f64, usize)> = Vec::new();
    for (bi, own) in outs.iter().enumerate() {
        for i in own.b0..own.b1 {
            merged.clear();
            let r = i - own.b0;
            merged.extend_from_slice(&own.rows[r * own.rows_p..(r + 1) * own.rows_p]);
            for earlier in &outs[..bi] {
                merged.extend_from_slice(earlier.later.get(i - earlier.b1));
            }
            merged.sort_unstable_by(by_dist_then_index);
            idx.extend(merged[..p].iter().map(|&(_, c)| c));
            dist2.extend(merged[..p].iter().map(|&(d, _)| d));
        }
    }
    Neighbours { p, idx, dist2 }
}

/// The binary symmetrised p-NN graph of the columns of `x` (MODELS.md §2.1), as CSR.
pub fn knn_graph(x: ArrayView2<'_, f64>, p: usize) -> Csr {
    knn(x, p).binary_graph()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random(m: usize, n: usize, seed: u64) -> Array2<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        Array2::from_shape_fn((m, n), |_| rng.r#gen::<f64>())
    }

    fn brute(x: &Array2<f64>, p: usize) -> Vec<Vec<usize>> {
        let n = x.ncols();
        (0..n)
            .map(|i| {
                let mut d: Vec<(f64, usize)> = (0..n)
                    .filter(|&j| j != i)
                    .map(|j| {
                        let diff = &x.column(i) - &x.column(j);
                        (diff.dot(&diff), j)
                    })
                    .collect();
                d.sort_by(by_dist_then_index);
                d.iter().take(p).map(|&(_, j)| j).collect()
            })
            .collect()
    }

    #[test]
    fn matches_brute_force_across_blocks() {
        // n > BLOCK so several blocks (and a ragged last one) are exercised.
        let x = random(7, 600, 1);
        let nb = knn(x.view(), 5);
        assert_eq!(nb.p(), 5);
        assert_eq!(nb.n(), 600);
        assert_eq!(nb.to_lists(), brute(&x, 5));
        for i in [0, 255, 256, 599] {
            let exact: Vec<f64> = nb
                .of(i)
                .iter()
                .map(|&j| {
                    let d = &x.column(i) - &x.column(j);
                    d.dot(&d)
                })
                .collect();
            for (a, b) in exact.iter().zip(nb.sq_dist(i)) {
                assert!((a - b).abs() < 1e-10);
            }
        }
    }

    #[test]
    fn ties_break_by_index_and_p_is_capped() {
        // Four identical points: everyone is at distance 0 from everyone.
        let x = Array2::<f64>::ones((3, 4));
        let nb = knn(x.view(), 10);
        assert_eq!(nb.p(), 3);
        assert_eq!(
            nb.to_lists(),
            vec![vec![1, 2, 3], vec![0, 2, 3], vec![0, 1, 3], vec![0, 1, 2]]
        );
        let single = knn(Array2::<f64>::ones((2, 1)).view(), 5);
        assert_eq!(single.n(), 0);
    }

    #[test]
    fn graph_is_symmetric_binary_without_diagonal() {
        let x = random(4, 50, 2);
        let nb = knn(x.view(), 3);
        let g = nb.binary_graph();
        assert!(g.is_symmetric());
        let d = g.to_dense();
        for i in 0..50 {
            assert_eq!(d[[i, i]], 0.0);
            for &j in nb.of(i) {
                assert_eq!(d[[i, j]], 1.0);
                assert_eq!(d[[j, i]], 1.0);
            }
        }
        assert!(d.iter().all(|&v| v == 0.0 || v == 1.0));
        // Every edge comes from one of the two endpoints' lists.
        for i in 0..50 {
            for j in 0..50 {
                if d[[i, j]] == 1.0 {
                    assert!(nb.of(i).contains(&j) || nb.of(j).contains(&i));
                }
            }
        }
    }

    /// Timing on the size of DESIGN.md §4 (run by hand, release):
    /// `cargo test --release --no-default-features --lib knn::tests::timing -- --ignored --nocapture`
    #[test]
    #[ignore = "timing; run by hand in release mode"]
    fn timing_n10000_m1024_p5() {
        let x = random(1024, 10_000, 3);
        let t = std::time::Instant::now();
        let nb = knn(x.view(), 5);
        let secs = t.elapsed().as_secs_f64();
        eprintln!(
            "knn n=10000 m=1024 p=5: {secs:.3} s (rayon threads: {})",
            rayon::current_num_threads()
        );
        assert_eq!(nb.n(), 10_000);
    }
}
