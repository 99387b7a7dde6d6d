//! The similarity matrices of 2-STGINMF (docs/models.md §7.1): the base similarity of two
//! samples (Gaussian on the distance, not squared, or cosine), σ from the training set, the
//! label-augmented train–train S (dense, n_L×n_L), the dual-sparse test–train P and the
//! row-sparse, symmetrised test–test K (both CSR; no n×n dense matrix is formed: each row is
//! computed in blocks, reduced to its kept entries, and dropped).

use super::params::{SigmaRule, SimKind};
use crate::engine::linalg::{Csr, parallel};
use crate::engine::models::ModelError;
use ndarray::{Array2, ArrayView2, s};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Mutex, PoisonError};

/// Rows of similarities computed at once (one matrix product of this many samples).
const BLOCK: usize = 256;

/// A set of samples as rows (samples × features) with their squared norms, for blocks of
/// distances or cosines by one matrix product.
pub struct Points {
    pub rows: Array2<f64>,
    sq: Vec<f64>,
}

impl Points {
    /// The columns `idx` of `x` (m×n, columns = samples) as rows.
    pub fn gather(x: ArrayView2<'_, f64>, idx: &[usize]) -> Self {
        let m = x.nrows();
        let mut rows = Array2::zeros((idx.len(), m));
        for (r, &i) in idx.iter().enumerate() {
            rows.row_mut(r).assign(&x.column(i));
        }
        let sq = rows.rows().into_iter().map(|r| r.dot(&r)).collect();
        Self { rows, sq }
    }

    pub fn len(&self) -> usize {
        self.rows.nrows()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The base similarity with its scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sim {
    pub kind: SimKind,
    /// σ of the Gaussian (unused by the cosine).
    pub sigma: f64,
}

impl Sim {
    /// `Sim(a_r, b_c)` for the rows `r0..r1` of `a` against every row of `b`.
    pub fn block(&self, a: &Points, r0: usize, r1: usize, b: &Points) -> Array2<f64> {
        let mut g = a.rows.slice(s![r0..r1, ..]).dot(&b.rows.t());
        for (r, mut row) in g.rows_mut().into_iter().enumerate() {
            let sa = a.sq[r0 + r];
            for (v, &sb) in row.iter_mut().zip(&b.sq) {
                *v = match self.kind {
                    SimKind::Gaussian => {
                        let d = (sa + sb - 2.0 * *v).max(0.0).sqrt();
                        (-d / (20.0 * self.sigma)).exp()
                    }
                    SimKind::Cosine => {
                        let den = (sa * sb).sqrt();
                        if den > 0.0 { (*v / den).max(0.0) } else { 0.0 }
                    }
                };
            }
        }
        g
    }
}

/// Euclidean distances between the rows of `a` and of `b` (dense; used on the training set
/// only, n_L×n_L).
fn distances(a: &Points, b: &Points) -> Array2<f64> {
    let mut g = a.rows.dot(&b.rows.t());
    for (r, mut row) in g.rows_mut().into_iter().enumerate() {
        for (v, &sb) in row.iter_mut().zip(&b.sq) {
            *v = (a.sq[r] + sb - 2.0 * *v).max(0.0).sqrt();
        }
    }
    g
}

/// σ of docs/models.md §7.1 from the training points and labels: the smallest distance between
/// two training samples of different classes ([`SigmaRule::Pair`]) or between two class
/// centroids ([`SigmaRule::Centroids`]). A zero σ (duplicate samples with different labels)
/// falls back to the smallest positive such distance, and to 1 when there is none; the second
/// value says whether a fallback was taken.
pub fn sigma(train: &Points, labels: &[usize], k: usize, rule: SigmaRule) -> (f64, bool) {
    let mut positive = f64::INFINITY;
    let mut min = f64::INFINITY;
    let mut see = |d: f64| {
        min = min.min(d);
        if d > 0.0 {
            positive = positive.min(d);
        }
    };
    match rule {
        SigmaRule::Pair => {
            let d = distances(train, train);
            for i in 0..labels.len() {
                for j in i + 1..labels.len() {
                    if labels[i] != labels[j] {
                        see(d[[i, j]]);
                    }
                }
            }
        }
        SigmaRule::Centroids => {
            let m = train.rows.ncols();
            let mut sums = Array2::<f64>::zeros((k, m));
            let mut counts = vec![0usize; k];
            for (r, &c) in labels.iter().enumerate() {
                sums.row_mut(c).scaled_add(1.0, &train.rows.row(r));
                counts[c] += 1;
            }
            let present: Vec<usize> = (0..k).filter(|&c| counts[c] > 0).collect();
            for &c in &present {
                let nc = counts[c] as f64;
                sums.row_mut(c).mapv_inplace(|v| v / nc);
            }
            for (a, &c) in present.iter().enumerate() {
                for &e in &present[a + 1..] {
                    let diff = &sums.row(c) - &sums.row(e);
                    see(diff.dot(&diff).sqrt());
                }
            }
        }
    }
    if min > 0.0 && min.is_finite() {
        (min, false)
    } else if positive.is_finite() {
        (positive, true)
    } else {
        (1.0, true)
    }
}

/// The label-augmented train–train matrix (docs/models.md §7.1 item 1): 1 within a class
/// (the diagonal included), `a · Sim` across classes.
pub fn train_matrix(train: &Points, labels: &[usize], sim: &Sim, a: f64) -> Array2<f64> {
    let mut s = sim.block(train, 0, train.len(), train);
    for ((i, j), v) in s.indexed_iter_mut() {
        *v = if labels[i] == labels[j] { 1.0 } else { a * *v };
    }
    s
}

/// Relative similarity of one row (docs/models.md §7.1): every entry divided by the row's
/// largest entry outside `skip` (the sample itself in a square matrix). A row whose maximum is
/// 0 stays 0 (docs/models.md §10.2).
pub fn relative(row: &mut [f64], skip: Option<usize>) {
    let max = row
        .iter()
        .enumerate()
        .filter(|&(j, _)| Some(j) != skip)
        .fold(0.0f64, |m, (_, &v)| m.max(v));
    if max > 0.0 {
        for v in row.iter_mut() {
            *v /= max;
        }
    } else {
        row.fill(0.0);
    }
}

/// The N-th largest of `vals` (N capped at the length; −∞ for an empty slice): keeping the
/// entries ≥ it keeps exactly the top N when there are no ties.
pub fn nth_largest(vals: &[f64], n: usize) -> f64 {
    if vals.is_empty() || n == 0 {
        return f64::INFINITY;
    }
    let n = n.min(vals.len());
    let mut v = vals.to_vec();
    let (_, nth, _) = v.select_nth_unstable_by(n - 1, |a, b| b.total_cmp(a));
    *nth
}

/// A stop request polled between blocks of rows.
pub type Stop<'a> = &'a dyn Fn() -> bool;

/// The rows of a similarity matrix, produced in blocks: `rows(r0, r1)` returns rows r0..r1,
/// already made relative. Blocks are independent, so several are made at once on the fit's
/// threads ([`in_waves`]).
pub type RowBlocks<'a> = &'a (dyn Fn(usize, usize) -> Array2<f64> + Sync);

/// Hand every block of [`BLOCK`] rows of `nrows` to `take`, in row order, making them a wave
/// of one block per fit thread at a time ([`parallel::for_each_part`]). A block's entries do
/// not depend on which thread made it, nor on the others of its wave, so the result is the
/// same bits for any thread count; the wave holds one block per thread in memory. `stop` is
/// polled before each wave.
fn in_waves(
    nrows: usize,
    rows: RowBlocks<'_>,
    stop: Stop<'_>,
    mut take: impl FnMut(usize, Array2<f64>),
) -> Result<(), ModelError> {
    let wave = parallel::threads().max(1) * BLOCK;
    let mut w0 = 0;
    while w0 < nrows {
        if stop() {
            return Err(ModelError::Interrupted);
        }
        let w1 = (w0 + wave).min(nrows);
        let starts: Vec<usize> = (w0..w1).step_by(BLOCK).collect();
        let made: Vec<Mutex<Option<Array2<f64>>>> =
            starts.iter().map(|_| Mutex::new(None)).collect();
        parallel::for_each_part(starts.clone(), |i, r0| {
            let block = rows(r0, (r0 + BLOCK).min(nrows));
            *made[i].lock().unwrap_or_else(PoisonError::into_inner) = Some(block);
        });
        for (r0, slot) in starts.into_iter().zip(made) {
            if let Some(block) = slot.into_inner().unwrap_or_else(PoisonError::into_inner) {
                take(r0, block);
            }
        }
        w0 = w1;
    }
    Ok(())
}

/// Dual-sparse operation (docs/models.md §7.1): entry (i, j) is kept when it is ≥ the N-th
/// largest of row i **and** ≥ the N-th largest of column j (N capped at each length), and
/// entries equal to 0 are dropped. One pass over the rows keeps each row's candidates and each
/// column's N largest values (a bounded heap); memory O((nrows + ncols)·N).
pub fn dual_sparse(
    nrows: usize,
    ncols: usize,
    n: usize,
    rows: RowBlocks<'_>,
    stop: Stop<'_>,
) -> Result<Csr, ModelError> {
    let nc = n.min(nrows);
    // Column heaps of the nc largest values (as bits: the values are ≥ 0 and finite, where
    // the bit order is the numeric order).
    let mut cols: Vec<BinaryHeap<Reverse<u64>>> = vec![BinaryHeap::new(); ncols];
    let mut cand: Vec<(usize, usize, f64)> = Vec::new();
    in_waves(nrows, rows, stop, |r0, block| {
        for (r, row) in block.rows().into_iter().enumerate() {
            let Some(row) = row.as_slice() else {
                continue;
            };
            let t = nth_largest(row, n);
            for (j, &v) in row.iter().enumerate() {
                if v >= t && v > 0.0 {
                    cand.push((r0 + r, j, v));
                }
                let heap = &mut cols[j];
                let bits = v.max(0.0).to_bits();
                if heap.len() < nc {
                    heap.push(Reverse(bits));
                } else if heap.peek().is_some_and(|&Reverse(m)| bits > m) {
                    heap.pop();
                    heap.push(Reverse(bits));
                }
            }
        }
    })?;
    let col_t: Vec<f64> = cols
        .iter()
        .map(|h| h.peek().map_or(f64::INFINITY, |&Reverse(b)| f64::from_bits(b)))
        .collect();
    cand.retain(|&(_, j, v)| v >= col_t[j]);
    Ok(Csr::from_entries(nrows, ncols, &cand))
}

/// Row-sparse operation (docs/models.md §7.1) on a square matrix without its diagonal: entry
/// (i, j), j ≠ i, is kept when it is ≥ the N-th largest of row i's off-diagonal entries (N
/// capped at n − 1) and positive; the diagonal is 0.
pub fn row_sparse(
    n_rows: usize,
    n: usize,
    rows: RowBlocks<'_>,
    stop: Stop<'_>,
) -> Result<Csr, ModelError> {
    let mut kept: Vec<(usize, usize, f64)> = Vec::new();
    let mut off = Vec::with_capacity(n_rows);
    in_waves(n_rows, rows, stop, |r0, block| {
        for (r, row) in block.rows().into_iter().enumerate() {
            let i = r0 + r;
            off.clear();
            off.extend(row.iter().enumerate().filter(|&(j, _)| j != i).map(|(_, &v)| v));
            let t = nth_largest(&off, n);
            for (j, &v) in row.iter().enumerate() {
                if j != i && v >= t && v > 0.0 {
                    kept.push((i, j, v));
                }
            }
        }
    })?;
    Ok(Csr::from_entries(n_rows, n_rows, &kept))
}

/// `max(K, Kᵀ)` entry by entry (docs/models.md §7.1 [C]): the stage-2 model `K ≈ UUᵀ` is
/// symmetric, and row-wise sparsification is not.
pub fn symmetrise_max(k: &Csr) -> Csr {
    let mut entries: Vec<(usize, usize, f64)> = Vec::with_capacity(2 * k.nnz());
    for i in 0..k.nrows() {
        let (cols, vals) = k.row(i);
        for (&j, &v) in cols.iter().zip(vals) {
            entries.push((i, j, v));
            entries.push((j, i, v));
        }
    }
    // Keep the larger of duplicates: sort by position, then value descending, and dedup.
    entries.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then(b.2.total_cmp(&a.2)));
    entries.dedup_by(|b, a| a.0 == b.0 && a.1 == b.1);
    Csr::from_entries(k.nrows(), k.ncols(), &entries)
}
