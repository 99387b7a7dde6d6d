//! p-nearest-neighbour search and graph (docs/models.md §2.1, DESIGN.md §4).
//!
//! Squared Euclidean distances come from blocked GEMM, `‖a‖² + ‖b‖² − 2aᵀb`, one block of
//! [`BLOCK`] query columns at a time, so memory stays O(BLOCK·n). Each row keeps its p nearest
//! with a partial sort (`select_nth_unstable_by`); ties are broken by the smaller index, so the
//! result is deterministic. Blocks run in parallel with rayon (results do not depend on the
//! number of threads).

use super::{Csr, Op, gemm};
use faer::{Accum, MatMut, MatRef, Par};
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
    /// Squared distances matching `idx`, summed directly in f64.
    dist2: Vec<f64>,
}

impl Neighbours {
    /// From `p` neighbours per sample, their indices and squared distances (row after row).
    pub(crate) fn from_parts(p: usize, idx: Vec<usize>, dist2: Vec<f64>) -> Self {
        Self { p, idx, dist2 }
    }

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
    /// zero diagonal (docs/models.md §2.1 steps 2–3, weight mode "binary").
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

    /// Inserts `cand` in slot's list; false when a full list refused it (it was no better
    /// than the list's worst).
    fn offer(&mut self, slot: usize, cand: (f64, usize)) -> bool {
        let list = &mut self.items[slot * self.cap..(slot + 1) * self.cap];
        let cnt = &mut self.count[slot];
        if *cnt == self.cap && by_dist_then_index(&cand, &list[self.cap - 1]) != Ordering::Less {
            return false;
        }
        let mut pos = (*cnt).min(self.cap - 1);
        while pos > 0 && by_dist_then_index(&cand, &list[pos - 1]) == Ordering::Less {
            list[pos] = list[pos - 1];
            pos -= 1;
        }
        list[pos] = cand;
        *cnt = (*cnt + 1).min(self.cap);
        true
    }

    /// The distance a candidate must beat to enter slot's list: its worst when full, else +∞.
    fn bar(&self, slot: usize) -> f64 {
        if self.count[slot] == self.cap {
            self.items[slot * self.cap + self.cap - 1].0
        } else {
            f64::INFINITY
        }
    }

    fn get(&self, slot: usize) -> &[(f64, usize)] {
        &self.items[slot * self.cap..slot * self.cap + self.count[slot]]
    }

    fn is_full(&self, slot: usize) -> bool {
        self.count[slot] == self.cap
    }
}

/// A [`TopLists`] for the few of `len` slots that receive a candidate: a slot's list is made
/// on its first entry. Once the merged lists of the earlier blocks bar a block's later
/// columns, most of them receive none, and a dense `len × cap` array would only be
/// allocated, zeroed and read back.
struct SlotLists {
    /// Per slot: its list's row in `lists`, or `u32::MAX` while it has none.
    at: Vec<u32>,
    /// The slots that have a list, in the order their lists were made.
    slots: Vec<usize>,
    lists: TopLists,
}

impl SlotLists {
    fn new(len: usize, cap: usize) -> Self {
        Self {
            at: vec![u32::MAX; len],
            slots: Vec::new(),
            lists: TopLists::new(0, cap),
        }
    }

    /// [`TopLists::offer`], making the slot's list first if it has none.
    fn offer(&mut self, slot: usize, cand: (f64, usize)) -> bool {
        let row = match self.at[slot] {
            u32::MAX => {
                let row = self.slots.len();
                self.at[slot] = u32::try_from(row).unwrap_or(u32::MAX - 1);
                self.slots.push(slot);
                self.lists.count.push(0);
                let cap = self.lists.cap;
                self.lists
                    .items
                    .resize((row + 1) * cap, (f64::INFINITY, usize::MAX));
                row
            }
            r => r as usize,
        };
        self.lists.offer(row, cand)
    }

    /// The bar of the slot's list (+∞ while it is not full). Only for a slot with a list.
    fn bar(&self, slot: usize) -> f64 {
        self.lists.bar(self.at[slot] as usize)
    }

    fn is_full(&self, slot: usize) -> bool {
        self.lists.is_full(self.at[slot] as usize)
    }

    /// Each slot with a list and its list, sorted.
    fn each(&self) -> impl Iterator<Item = (usize, &[(f64, usize)])> {
        self.slots
            .iter()
            .enumerate()
            .map(|(row, &slot)| (slot, self.lists.get(row)))
    }
}

/// What one block of query columns `b0..b1` contributes, in approximate (GEMM) distances:
/// for each own row, every column ≥ b0 within the row's margin of its p-th best; for every
/// later sample `c ≥ b1`, its best `2p` among the block's columns.
struct BlockOut {
    b1: usize,
    rows: Vec<Vec<(f64, usize)>>,
    later: SlotLists,
}

/// One block's scan of its approximate Gram rows `g` (rows `b0..b1` against columns `b0..n`).
struct BlockScan<'a> {
    b0: usize,
    b1: usize,
    p: usize,
    cap: usize,
    norms: &'a [f64],
    margin: &'a [f64],
    /// Per sample, the bar of its merged list of earlier blocks when the block's wave began
    /// (+∞ while that list is not full): a later column's candidate at or above it would be
    /// refused by the merge anyway (every entry there has a smaller index).
    merged_bars: &'a [f64],
}

impl BlockScan<'_> {
    /// Two passes per row over `g` (f32 or f64 products, widened to f64): the first finds the
    /// row's p-th best distance with a bounded list and offers each later column the row,
    /// both refusing by one comparison against a running bar (most candidates), the second
    /// keeps the columns within the row's margin of that p-th best. The same candidate sets
    /// as sorting every row, without storing or sorting it: the bars only skip offers the
    /// lists would refuse (equal distances lose to the earlier index already held).
    fn run<T: Copy + Into<f64>>(&self, g: &[T]) -> BlockOut {
        let (b0, b1, p) = (self.b0, self.b1, self.p);
        let n = self.norms.len();
        let w = n - b0;
        let rb = b1 - b0;
        let mut rows = Vec::with_capacity(rb);
        let mut later = SlotLists::new(n - b1, self.cap);
        let mut bars = self.merged_bars[b1..].to_vec();
        let own_p = p.min(w - 1);
        let mut best: Vec<(f64, usize)> = Vec::with_capacity(own_p + 1);
        for r in 0..rb {
            let i = b0 + r;
            let ni = self.norms[i];
            let row = &g[r * w..(r + 1) * w];
            let dist = |off: usize| ni + self.norms[b0 + off] - 2.0 * row[off].into();
            if own_p == 0 {
                rows.push(Vec::new());
                continue;
            }
            best.clear();
            let mut bar = f64::INFINITY;
            let mut keep = |d: f64, c: usize, best: &mut Vec<(f64, usize)>| {
                // Not below the bar (a NaN distance included).
                if d.partial_cmp(&bar) != Some(Ordering::Less) && best.len() == own_p {
                    return;
                }
                let mut pos = best.len();
                best.push((d, c));
                while pos > 0 && by_dist_then_index(&(d, c), &best[pos - 1]) == Ordering::Less {
                    best[pos] = best[pos - 1];
                    pos -= 1;
                }
                best[pos] = (d, c);
                best.truncate(own_p);
                if best.len() == own_p {
                    bar = best[own_p - 1].0;
                }
            };
            for off in 0..rb {
                if off != r {
                    keep(dist(off), b0 + off, &mut best);
                }
            }
            for (slot, b) in bars.iter_mut().enumerate() {
                let off = rb + slot;
                let d = dist(off);
                keep(d, b0 + off, &mut best);
                // Below the column's bar, or a NaN distance (which the list then ranks).
                let at_or_above =
                    matches!(d.partial_cmp(b), Some(Ordering::Greater | Ordering::Equal));
                if !at_or_above && later.offer(slot, (d, i)) && later.is_full(slot) {
                    // Every entry of the full list is below the old bar (or the bar is NaN,
                    // which ranks nothing): its worst is the tighter bar.
                    *b = later.bar(slot);
                }
            }
            let limit = best[own_p - 1].0 + self.margin[i];
            rows.push(
                (0..w)
                    .filter(|&off| off != r)
                    .map(|off| (dist(off), b0 + off))
                    .filter(|&(d, _)| d <= limit)
                    .collect(),
            );
        }
        BlockOut { b1, rows, later }
    }
}

/// Squared Euclidean distance between rows a and b of `xt`, summed directly in f64: the
/// reference value every reported distance comes from.
fn exact(xt: &[f64], m: usize, a: usize, b: usize) -> f64 {
    let (ra, rb) = (&xt[a * m..(a + 1) * m], &xt[b * m..(b + 1) * m]);
    ra.iter().zip(rb).map(|(u, v)| (u - v) * (u - v)).sum()
}

/// The p nearest neighbours (Euclidean) of every column of `x` (m×n), excluding itself.
/// `p` is capped at `n − 1`. Exact: the result equals brute force with f64 distances
/// `Σ_k (x_ki − x_kc)²`, ties broken by the smaller index.
///
/// How: the GEMM identity `‖a‖² + ‖b‖² − 2aᵀb` in **f32** (twice the f64 GEMM rate) gives
/// approximate distances `d̃` with a rigorous error bound `|d̃ − d| ≤ E_i = κ‖a_i‖·max_c‖a_c‖`,
/// `κ = 2(m+4)·2⁻²⁴` (rounding of the inputs and of any summation order). A sample c can only
/// be among i's p nearest if `d̃_c ≤ d̃_(p) + 2E_i`; those few candidates are re-ranked with
/// exact f64 distances. The symmetry of the distance halves the GEMM work: block I computes
/// `X_Iᵀ X_J` only for columns at or after its own. Data beyond the f32 range uses f64 GEMM
/// with the same bound at f64 precision.
pub fn knn(x: ArrayView2<'_, f64>, p: usize) -> Neighbours {
    knn_unless(x, p, &|| false).unwrap_or_else(|| Neighbours {
        p: 0,
        idx: Vec::new(),
        dist2: Vec::new(),
    })
}

/// [`knn`], giving up (`None`) as soon as `stop()` returns true; it is asked before each block
/// of [`BLOCK`] samples, so a cancel takes effect within a block's work (O(BLOCK·n·m)), not
/// the whole O(n²m) search.
pub fn knn_unless(
    x: ArrayView2<'_, f64>,
    p: usize,
    stop: &(dyn Fn() -> bool + Sync),
) -> Option<Neighbours> {
    let (m, n) = x.dim();
    let p = p.min(n.saturating_sub(1));
    if p == 0 {
        return Some(Neighbours {
            p: 0,
            idx: Vec::new(),
            dist2: Vec::new(),
        });
    }
    // Samples as contiguous rows (n×m): both GEMM operands are plain row slices.
    let xt_arr = x.t().as_standard_layout().into_owned();
    let xt: &[f64] = xt_arr.as_slice().unwrap_or(&[]);
    let norms: Vec<f64> = (0..n)
        .map(|i| xt[i * m..(i + 1) * m].iter().map(|v| v * v).sum())
        .collect();
    let max_norm = norms.iter().fold(0.0f64, |a, &b| a.max(b)).sqrt();
    let max_abs = xt.iter().fold(0.0f64, |a, &b| a.max(b.abs()));
    // Squares that overflow (entries of 1e200) would make every distance NaN: rank the data
    // scaled by 1/max|x| (the same order) and scale the squared distances back.
    if !max_norm.is_finite() && max_abs.is_finite() && max_abs > 0.0 {
        let scaled = x.mapv(|v| v / max_abs);
        let mut nb = knn_unless(scaled.view(), p, stop)?;
        for d in &mut nb.dist2 {
            *d *= max_abs * max_abs;
        }
        return Some(nb);
    }
    let use_f32 = max_abs < 1e15 && (max_norm * max_norm) < 1e30;
    let unit = if use_f32 {
        f64::from(f32::EPSILON) / 2.0
    } else {
        f64::EPSILON / 2.0
    };
    let kappa = 2.0 * (m as f64 + 4.0) * unit * 1.01;
    // Margin 2E_i, plus an absolute slack for the f64 arithmetic of the identity itself.
    let margin: Vec<f64> = norms
        .iter()
        .map(|&ni| 2.0 * kappa * ni.sqrt() * max_norm + 1e-12 * (ni + max_norm * max_norm))
        .collect();
    let xt32: Vec<f32> = if use_f32 {
        xt.iter().map(|&v| v as f32).collect()
    } else {
        Vec::new()
    };
    let gram = Gram {
        m,
        xt_arr: &xt_arr,
        xt32: &xt32,
        norms: &norms,
        margin: &margin,
    };
    let cap = (2 * p).max(p + 4);
    let (earlier, own_rows) = gram.scan_blocks(p, cap, stop)?;
    let (mut exact_c, rescan) = gram.candidates(p, &earlier, &own_rows);
    gram.rescan_near_ties(&rescan, &mut exact_c, stop)?;
    Some(rank_exact(exact_c, p))
}

/// Per sample, candidate neighbours as (squared distance, index).
type Candidates = Vec<Vec<(f64, usize)>>;

/// The samples as rows (f64, and f32 when the approximate products run in f32), their
/// squared norms and each one's error margin: what every stage of [`knn_unless`] reads.
struct Gram<'a> {
    m: usize,
    xt_arr: &'a ndarray::Array2<f64>,
    /// Empty when the approximate products run in f64.
    xt32: &'a [f32],
    norms: &'a [f64],
    margin: &'a [f64],
}

impl Gram<'_> {
    fn xt(&self) -> &[f64] {
        self.xt_arr.as_slice().unwrap_or(&[])
    }

    fn n(&self) -> usize {
        self.norms.len()
    }

    /// Every block's approximate scan: per sample, the row list of its own block and the
    /// merged list of the later columns of earlier blocks. `None` when stopped.
    ///
    /// Blocks run in waves of a few per thread; after each wave its `later` lists are merged
    /// into one list per sample (the best `cap` of all earlier blocks' columns: the same set
    /// whatever the order of the merges, as the order (distance, index) is total), so memory
    /// stays O(wave·n·cap + n·cap) instead of O(n²·cap / BLOCK).
    fn scan_blocks(
        &self,
        p: usize,
        cap: usize,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Option<(TopLists, Candidates)> {
        let n = self.n();
        let blocks: Vec<usize> = (0..n).step_by(BLOCK).collect();
        let wave = 2 * rayon::current_num_threads().max(1);
        let mut earlier = TopLists::new(n, cap);
        let mut own_rows: Candidates = Vec::with_capacity(n);
        for chunk in blocks.chunks(wave) {
            let merged_bars: Vec<f64> = (0..n).map(|c| earlier.bar(c)).collect();
            let outs: Vec<BlockOut> = chunk
                .par_iter()
                .map(|&b0| {
                    if stop() {
                        return None;
                    }
                    let b1 = (b0 + BLOCK).min(n);
                    let scan = BlockScan {
                        b0,
                        b1,
                        p,
                        cap,
                        norms: self.norms,
                        margin: self.margin,
                        merged_bars: &merged_bars,
                    };
                    Some(self.scan_block(&scan))
                })
                .collect::<Option<Vec<_>>>()?;
            for out in outs {
                for (slot, list) in out.later.each() {
                    // Each list is sorted: once one entry is refused, so are the rest.
                    for &e in list {
                        if !earlier.offer(out.b1 + slot, e) {
                            break;
                        }
                    }
                }
                own_rows.extend(out.rows);
            }
        }
        Some((earlier, own_rows))
    }

    /// One block's Gram rows against its own and every later column,
    /// `g[r*w + off] ≈ x_{b0+r} · x_{b0+off}`, scanned.
    fn scan_block(&self, scan: &BlockScan<'_>) -> BlockOut {
        let (b0, b1, m) = (scan.b0, scan.b1, self.m);
        let (rb, w) = (b1 - b0, self.n() - b0);
        if self.xt32.is_empty() {
            let xb = self.xt_arr.slice(s![b0..b1, ..]);
            let xr = self.xt_arr.slice(s![b0.., ..]);
            let g = gemm(xb, Op::N, xr, Op::T).into_raw_vec_and_offset().0;
            scan.run(&g)
        } else {
            let mut g32 = vec![0.0f32; rb * w];
            let lhs = MatRef::from_row_major_slice(&self.xt32[b0 * m..b1 * m], rb, m);
            let rhs = MatRef::from_row_major_slice(&self.xt32[b0 * m..], w, m).transpose();
            let dst = MatMut::from_row_major_slice_mut(&mut g32, rb, w);
            faer::linalg::matmul::matmul(dst, Accum::Replace, lhs, rhs, 1.0f32, Par::Seq);
            super::gemm::clear_upper_state();
            scan.run(&g32)
        }
    }

    /// Per sample: its own block's row list and the earlier blocks' merged list, all
    /// approximate; keep those within the margin of the p-th best, ranked exactly. With them,
    /// the samples (and their limits) whose earlier columns must be scanned again.
    fn candidates(
        &self,
        p: usize,
        earlier: &TopLists,
        own_rows: &[Vec<(f64, usize)>],
    ) -> (Candidates, Vec<(usize, f64)>) {
        let xt = self.xt();
        let mut exact_c: Candidates = Vec::with_capacity(own_rows.len());
        let mut rescan: Vec<(usize, f64)> = Vec::new();
        let mut approx: Vec<(f64, usize)> = Vec::new();
        for (i, own_row) in own_rows.iter().enumerate() {
            approx.clear();
            approx.extend_from_slice(own_row);
            approx.extend_from_slice(earlier.get(i));
            approx.select_nth_unstable_by(p - 1, by_dist_then_index);
            let limit = approx[p - 1].0 + self.margin[i];
            exact_c.push(
                approx
                    .iter()
                    .filter(|&&(d, _)| d <= limit)
                    .map(|&(_, c)| (exact(xt, self.m, i, c), c))
                    .collect(),
            );
            // A full merged list whose worst entry is within the limit may have dropped a
            // candidate (some block's list was full of near-ties): every earlier column within
            // the limit is ranked exactly, found by a second approximate pass (rare: many
            // samples at nearly one distance).
            if earlier.is_full(i) && earlier.get(i).last().is_some_and(|&(d, _)| d <= limit) {
                rescan.push((i, limit));
            }
        }
        (exact_c, rescan)
    }

    /// The approximate Gram rows of the samples `rows` against the columns `..cols`: f32
    /// products (the f64 vector empty) or f64 ones (the f32 vector empty).
    fn rows_against(&self, rows: &[usize], cols: usize) -> (Vec<f32>, Vec<f64>) {
        let m = self.m;
        if self.xt32.is_empty() {
            let lhs = self.xt_arr.select(ndarray::Axis(0), rows);
            let rhs = self.xt_arr.slice(s![..cols, ..]);
            (
                Vec::new(),
                gemm(lhs.view(), Op::N, rhs, Op::T)
                    .into_raw_vec_and_offset()
                    .0,
            )
        } else {
            let lhs32: Vec<f32> = rows
                .iter()
                .flat_map(|&i| self.xt32[i * m..(i + 1) * m].iter().copied())
                .collect();
            let mut g32 = vec![0.0f32; rows.len() * cols];
            let lhs = MatRef::from_row_major_slice(&lhs32, rows.len(), m);
            let rhs = MatRef::from_row_major_slice(&self.xt32[..cols * m], cols, m).transpose();
            let dst = MatMut::from_row_major_slice_mut(&mut g32, rows.len(), cols);
            faer::linalg::matmul::matmul(dst, Accum::Replace, lhs, rhs, 1.0f32, Par::Seq);
            super::gemm::clear_upper_state();
            (g32, Vec::new())
        }
    }

    /// For each sample of `rescan`, every earlier column within its limit, ranked exactly and
    /// added to its candidates; batches of [`BLOCK`] samples, one product each. `None` when
    /// stopped.
    fn rescan_near_ties(
        &self,
        rescan: &[(usize, f64)],
        exact_c: &mut [Vec<(f64, usize)>],
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Option<()> {
        let (xt, norms) = (self.xt(), self.norms);
        for batch in rescan.chunks(BLOCK) {
            if stop() {
                return None;
            }
            let rows: Vec<usize> = batch.iter().map(|&(i, _)| i).collect();
            let cols = batch.iter().map(|&(i, _)| i - i % BLOCK).max().unwrap_or(0);
            let (g32, g64) = self.rows_against(&rows, cols);
            let g = |at: usize| g32.get(at).map_or_else(|| g64[at], |&v| f64::from(v));
            let found: Vec<Vec<(f64, usize)>> = batch
                .par_iter()
                .enumerate()
                .map(|(r, &(i, limit))| {
                    let ni = norms[i];
                    (0..i - i % BLOCK)
                        .filter(|&c| ni + norms[c] - 2.0 * g(r * cols + c) <= limit)
                        .map(|c| (exact(xt, self.m, i, c), c))
                        .collect()
                })
                .collect();
            for (&(i, _), f) in batch.iter().zip(found) {
                exact_c[i].extend(f);
            }
        }
        Some(())
    }
}

/// Each sample's `p` nearest from its exactly ranked candidates, by (distance, index).
fn rank_exact(exact_c: Candidates, p: usize) -> Neighbours {
    let n = exact_c.len();
    let mut idx = Vec::with_capacity(n * p);
    let mut dist2 = Vec::with_capacity(n * p);
    for mut cands in exact_c {
        cands.sort_unstable_by(by_dist_then_index);
        cands.dedup_by_key(|e| e.1);
        // dedup_by_key only merges neighbours: equal indices have equal exact distances,
        // so after sorting by (distance, index) duplicates are adjacent.
        idx.extend(cands[..p].iter().map(|&(_, c)| c));
        dist2.extend(cands[..p].iter().map(|&(d, _)| d));
    }
    Neighbours { p, idx, dist2 }
}

/// Bytes [`knn`] holds at its peak for `n` samples of `m` features and `p` neighbours with
/// `threads` blocks in flight: the samples as rows (an f64 and an f32 copy), each block's
/// distances (f32 and f64) and candidates, a wave's lists for the samples after each block
/// and their merge (O(threads·n·p)), and the result. Checked by the models before they search
/// ([`crate::engine::models::footprint`]).
pub fn footprint(m: usize, n: usize, p: usize, threads: usize) -> u128 {
    let p = p.min(n.saturating_sub(1)) as u128;
    if p == 0 {
        return 0;
    }
    let (mu, nu) = (m as u128, n as u128);
    let cap = (2 * p).max(p + 4);
    let pair = 16u128; // (f64, usize)
    let rows = nu * mu * 12;
    let in_flight = (threads.max(1) as u128).min(nu.div_ceil(BLOCK as u128));
    let block = in_flight * (BLOCK as u128) * nu * (12 + pair);
    // One wave's lists for the samples after each block, and the merged list per sample.
    let wave = 2 * (threads.max(1) as u128);
    let later = wave.min(nu.div_ceil(BLOCK as u128)) * nu * cap * pair + nu * cap * pair;
    let own = nu * (p + 4) * pair;
    rows + block + later + own + nu * p * pair
}

/// The `p` nearest columns of `x` (m×n) to column `i`, itself excluded, nearest first, as
/// `(index, squared distance)`; ties broken by the smaller index, as [`knn`] does. `p` is
/// capped at `n − 1`; an `i` out of range gives none.
///
/// One query, for the GUI's neighbour panel: a direct O(nm) pass in f64 (no GEMM, no n×n
/// work), summing each distance over the features in order, so the distances are the same
/// numbers [`knn`] reports. Reads `x` row by row (contiguous for a standard-layout X).
pub fn knn_of(x: ArrayView2<'_, f64>, i: usize, p: usize) -> Vec<(usize, f64)> {
    let n = x.ncols();
    if i >= n {
        return Vec::new();
    }
    let p = p.min(n - 1);
    if p == 0 {
        return Vec::new();
    }
    let mut d2 = vec![0.0f64; n];
    for row in x.rows() {
        let xi = row[i];
        for (d, &v) in d2.iter_mut().zip(row.iter()) {
            *d += (v - xi) * (v - xi);
        }
    }
    let mut cand: Vec<(f64, usize)> = d2
        .into_iter()
        .enumerate()
        .filter(|&(c, _)| c != i)
        .map(|(c, d)| (d, c))
        .collect();
    cand.select_nth_unstable_by(p - 1, by_dist_then_index);
    cand.truncate(p);
    cand.sort_unstable_by(by_dist_then_index);
    cand.into_iter().map(|(d, c)| (c, d)).collect()
}

/// The binary symmetrised p-NN graph of the columns of `x` (docs/models.md §2.1), as CSR.
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

    #[test]
    fn the_footprint_grows_linearly_in_n() {
        assert_eq!(footprint(5, 1, 3, 2), 0, "one sample has no neighbours");
        // n = 300, both blocks in flight: rows 300·4·12, block 256·300·28, both blocks' lists
        // (cap 7 pairs of 16 bytes per sample) and their merge, the own rows' candidates
        // (p + 4 pairs), the result 300·3·16.
        assert_eq!(
            footprint(4, 300, 3, 2),
            300 * 4 * 12
                + 2 * 256 * 300 * 28
                + 2 * 300 * 7 * 16
                + 300 * 7 * 16
                + 300 * 7 * 16
                + 300 * 3 * 16
        );
        let small = footprint(10, 10_000, 5, 1);
        let big = footprint(10, 100_000, 5, 1);
        assert!(big < 11 * small, "{small} {big}");
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
    fn exact_with_many_ties_and_in_the_f64_fallback() {
        // Small integers: many exactly equal distances, so ties must break by index.
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let x = Array2::from_shape_fn((3, 700), |_| f64::from(rng.gen_range(0..3u8)));
        assert_eq!(knn(x.view(), 6).to_lists(), brute(&x, 6));
        // 600 identical samples: every candidate list overflows, the exact fallback runs.
        let same = Array2::<f64>::ones((5, 600));
        let nb = knn(same.view(), 4);
        for i in [0, 3, 300, 599] {
            let want: Vec<usize> = (0..600).filter(|&c| c != i).take(4).collect();
            assert_eq!(nb.of(i), want.as_slice());
        }
        // Beyond the f32 range: the f64 GEMM path.
        let big = random(4, 300, 6).mapv(|v| v * 1e20);
        assert_eq!(knn(big.view(), 3).to_lists(), brute(&big, 3));
    }

    /// Beyond one wave of blocks the later columns are barred by the merged lists of the
    /// earlier waves, and near-ties send samples to the batched rescan: still brute force.
    #[test]
    fn several_waves_with_and_without_ties_match_brute_force() {
        let waves = 2 * rayon::current_num_threads().max(1) * BLOCK;
        let n = waves + 3 * BLOCK + 17;
        let x = random(6, n, 12);
        let nb = knn(x.view(), 7);
        assert_eq!(nb.to_lists(), brute(&x, 7));
        let mut rng = ChaCha8Rng::seed_from_u64(13);
        let ties = Array2::from_shape_fn((2, n), |_| f64::from(rng.gen_range(0..4u8)));
        assert_eq!(knn(ties.view(), 5).to_lists(), brute(&ties, 5));
    }

    #[test]
    fn entries_whose_squares_overflow_keep_their_order() {
        let x = ndarray::array![[0.0, 1e200, 3e200, 10e200]];
        let nb = knn(x.view(), 1);
        assert_eq!(nb.to_lists(), vec![vec![1], vec![0], vec![1], vec![2]]);
        assert!(
            nb.sq_dist(0)[0].is_infinite(),
            "1e400 is beyond f64: reported as +∞"
        );
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

    /// The one-query search equals brute force (and the all-pairs search, distances bit for
    /// bit) on random data, on data full of ties, and in a non-standard (transposed) layout.
    #[test]
    fn one_query_matches_brute_force_and_the_full_search() {
        let x = random(9, 300, 11);
        let all = knn(x.view(), 8);
        let want = brute(&x, 8);
        for i in [0, 1, 150, 299] {
            let got = knn_of(x.view(), i, 8);
            let idx: Vec<usize> = got.iter().map(|&(c, _)| c).collect();
            assert_eq!(idx, want[i], "sample {i}");
            assert_eq!(idx.as_slice(), all.of(i));
            let d: Vec<f64> = got.iter().map(|&(_, d)| d).collect();
            assert_eq!(d.as_slice(), all.sq_dist(i), "same sums, same order");
        }
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        let ties = Array2::from_shape_fn((2, 80), |_| f64::from(rng.gen_range(0..2u8)));
        let brute_ties = brute(&ties, 8);
        for (i, want) in brute_ties.iter().enumerate() {
            let idx: Vec<usize> = knn_of(ties.view(), i, 8).iter().map(|c| c.0).collect();
            assert_eq!(&idx, want);
        }
        let t = random(40, 6, 13).reversed_axes();
        let brute_t = brute(&t.to_owned(), 3);
        let idx: Vec<usize> = knn_of(t.view(), 2, 3).iter().map(|c| c.0).collect();
        assert_eq!(idx, brute_t[2]);
        // p capped at n − 1; no sample, no neighbours.
        assert_eq!(knn_of(x.view(), 0, 1000).len(), 299);
        assert!(knn_of(x.view(), 300, 8).is_empty());
        assert!(knn_of(Array2::<f64>::ones((3, 1)).view(), 0, 8).is_empty());
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
