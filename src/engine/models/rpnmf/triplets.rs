//! RPNMF kernels (docs/models.md §4.3–§4.4): triplet margins `t_τ`, the ranking loss
//! `α Σ sp(t_τ)` of eq. (9) and the role matrices `Mneg`/`Mpos`.

use crate::engine::constraints::Triplet;
use crate::engine::linalg::Csr;
use crate::engine::linalg::gram::{LANES, sum_lanes};
use crate::engine::linalg::special::{sigmoid, sigmoid_and_softplus, softplus};
use crate::engine::linalg::thin::fixed;
use ndarray::{Array2, ArrayView2, ArrayViewMut2};

/// `t_τ(H) = ‖h_i − h_j‖² − ‖h_i − h_q‖² + δ` for every triplet (docs/models.md §4.1). O(|T|·k).
///
/// The reference for [`margins_t`], on the k×n H, one coordinate at a time: the same sums in
/// the same order ([`lane_of`], [`sum_lanes`]), so the same values bit for bit.
pub fn margins(h: ArrayView2<'_, f64>, triplets: &[Triplet], delta: f64, out: &mut Vec<f64>) {
    let k = h.nrows();
    out.clear();
    out.extend(triplets.iter().map(|t| {
        let mut acc = [0.0f64; LANES];
        for (a, row) in h.rows().into_iter().enumerate() {
            acc[lane_of(a, k)] += term(row[t.i], row[t.j], row[t.q]);
        }
        delta + sum_lanes(&acc)
    }));
}

/// One coordinate's share of a margin, `(p − q)² − (p − z)²`, without fused multiply-adds.
#[inline(always)]
fn term(p: f64, q: f64, z: f64) -> f64 {
    (p - q) * (p - q) - (p - z) * (p - z)
}

/// The lane of coordinate `a` (of k) in a margin's [`LANES`] partial sums.
///
/// With k ≥ [`LANES`], the coordinates below `k − k mod LANES` go to lane `a mod LANES`, in
/// vectors of [`LANES`], and the last `k mod LANES` go to the top lanes of the vector of the
/// last [`LANES`] coordinates (`a − (k − LANES)`): [`margins_t`] loads that window, which
/// stays inside the row, instead of a short tail. Below [`LANES`], coordinate a is lane a.
#[inline(always)]
fn lane_of(a: usize, k: usize) -> usize {
    let full = k / LANES * LANES;
    if k < LANES {
        a
    } else if a < full {
        a % LANES
    } else {
        a + LANES - k
    }
}

/// The ranking term `α Σ sp(t_τ)` from precomputed margins: triplet τ into lane `τ mod LANES`,
/// in triplet order, then [`sum_lanes`] (the order [`sigmoids_and_loss`] sums in).
pub fn ranking_loss(alpha: f64, margins: &[f64]) -> f64 {
    let mut acc = [0.0f64; LANES];
    for (x, &t) in margins.iter().enumerate() {
        acc[x % LANES] += softplus(t);
    }
    alpha * sum_lanes(&acc)
}

/// [`margins`] from Hᵀ (n×k, one contiguous row per sample) instead of H. O(|T|·k).
///
/// Same values bit for bit. Each margin keeps [`LANES`] partial sums of its coordinates'
/// terms ([`lane_of`]), a vector of eight terms at a time, then adds them in a fixed tree
/// ([`sum_lanes`]) and adds δ last; the order is fixed by the code, not by the CPU, so the
/// same bits on every instruction set. No chain of additions runs through all k coordinates,
/// so the triplets' sums overlap, which makes it faster than a serial sum in coordinate order
/// (docs/performance.md, "RPNMF's triplet kernels (`models/rpnmf/triplets.rs`,
/// `models/rpnmf/algorithm.rs`)").
pub fn margins_t(h_t: ArrayView2<'_, f64>, triplets: &[Triplet], delta: f64, out: &mut Vec<f64>) {
    let k = h_t.ncols();
    let h_t = h_t.as_standard_layout();
    let hs = h_t.as_slice().unwrap_or(&[]);
    // In pulp's context (AVX-512 where present): the same operations, no fused multiply-adds.
    faer::traits::pulp::Arch::new().dispatch(Margins {
        hs,
        k,
        triplets,
        delta,
        out,
    });
}

/// [`margins_of`] as a pulp job (a struct with an always-inlined body: a closure would be
/// compiled without the wide instructions).
struct Margins<'a> {
    hs: &'a [f64],
    k: usize,
    triplets: &'a [Triplet],
    delta: f64,
    out: &'a mut Vec<f64>,
}

impl faer::traits::pulp::WithSimd for Margins<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: faer::traits::pulp::Simd>(self, _simd: S) {
        margins_of(self.hs, self.k, self.triplets, self.delta, self.out);
    }
}

#[inline(always)]
fn margins_of(hs: &[f64], k: usize, triplets: &[Triplet], delta: f64, out: &mut Vec<f64>) {
    // Indices must be below n, as for [`margins`] (a slice of exactly k: no bounds checks below).
    // Plain loops, no iterator adapters: a `map` closure is compiled out of line, without the
    // wide instructions of pulp's context.
    out.clear();
    out.resize(triplets.len(), 0.0);
    if k < LANES {
        for (t, o) in triplets.iter().zip(out.iter_mut()) {
            let (p, q, z) = (row(hs, k, t.i), row(hs, k, t.j), row(hs, k, t.q));
            let mut acc = [0.0f64; LANES];
            for a in 0..k {
                acc[a] += term(p[a], q[a], z[a]);
            }
            *o = delta + sum_lanes(&acc);
        }
        return;
    }
    let full = k / LANES * LANES;
    // The window of the last LANES coordinates counts only in its top k − full lanes: a bit
    // mask (an `and`, one vector instruction) zeroes the others.
    let tail: [u64; LANES] = std::array::from_fn(|l| if l >= LANES - (k - full) { !0 } else { 0 });
    for (t, o) in triplets.iter().zip(out.iter_mut()) {
        let (p, q, z) = (row(hs, k, t.i), row(hs, k, t.j), row(hs, k, t.q));
        let mut acc = [0.0f64; LANES];
        for a0 in (0..full).step_by(LANES) {
            let v = terms(&p[a0..], &q[a0..], &z[a0..]);
            for l in 0..LANES {
                acc[l] += v[l];
            }
        }
        if full < k {
            let w = k - LANES;
            let v = terms(&p[w..], &q[w..], &z[w..]);
            for l in 0..LANES {
                // acc is never −0.0, so adding +0.0 leaves its bits.
                acc[l] += f64::from_bits(v[l].to_bits() & tail[l]);
            }
        }
        *o = delta + sum_lanes(&acc);
    }
}

/// Row p of the n×k row-major `hs`.
#[inline(always)]
fn row(hs: &[f64], k: usize, p: usize) -> &[f64] {
    &hs[p * k..p * k + k]
}

/// [`term`] of the first [`LANES`] coordinates of three rows, as one vector.
#[inline(always)]
fn terms(p: &[f64], q: &[f64], z: &[f64]) -> [f64; LANES] {
    let (p, q, z): ([f64; LANES], [f64; LANES], [f64; LANES]) = (*fixed(p), *fixed(q), *fixed(z));
    let mut v = [0.0f64; LANES];
    for l in 0..LANES {
        v[l] = term(p[l], q[l], z[l]);
    }
    v
}

/// `σ(t_τ)` of every margin into `sig`, and the ranking loss `α Σ_τ sp(t_τ)` of eq. (9).
/// O(|T|).
///
/// σ and sp share one `e^{−|t|}` and one `1 + e^{−|t|}` ([`sigmoid_and_softplus`]), and the
/// loss sums as [`ranking_loss`] does (lane `τ mod LANES`, then [`sum_lanes`]), so both equal
/// [`sigmoid`] and [`ranking_loss`] bit for bit. Eight margins at a time in pulp's context: the
/// special functions are branch-free, so they run as vectors, and the loss's eight partial
/// sums are one vector addition per eight triplets instead of one chain through all |T| terms
/// (docs/performance.md, "RPNMF's triplet kernels (`models/rpnmf/triplets.rs`,
/// `models/rpnmf/algorithm.rs`)").
pub fn sigmoids_and_loss(margins: &[f64], alpha: f64, sig: &mut Vec<f64>) -> f64 {
    sig.clear();
    sig.resize(margins.len(), 0.0);
    alpha * faer::traits::pulp::Arch::new().dispatch(SigmoidsAndLoss { margins, sig })
}

/// The vector loop of [`sigmoids_and_loss`], run by pulp with the CPU's widest instructions
/// (a struct with an always-inlined body: a closure would be compiled without them).
struct SigmoidsAndLoss<'a> {
    margins: &'a [f64],
    sig: &'a mut [f64],
}

impl faer::traits::pulp::WithSimd for SigmoidsAndLoss<'_> {
    type Output = f64;

    #[inline(always)]
    fn with_simd<S: faer::traits::pulp::Simd>(self, _simd: S) -> f64 {
        let mut acc = [0.0f64; LANES];
        let mut ds = self.margins.chunks_exact(LANES);
        let mut ss = self.sig.chunks_exact_mut(LANES);
        for (d, s) in (&mut ds).zip(&mut ss) {
            let d: [f64; LANES] = *fixed(d);
            let (mut sv, mut sp) = ([0.0f64; LANES], [0.0f64; LANES]);
            for l in 0..LANES {
                (sv[l], sp[l]) = sigmoid_and_softplus(d[l]);
            }
            s.copy_from_slice(&sv);
            for l in 0..LANES {
                acc[l] += sp[l];
            }
        }
        // The remainder starts at a multiple of LANES: its x-th triplet is lane x.
        for (x, (&d, s)) in ds.remainder().iter().zip(ss.into_remainder()).enumerate() {
            let sp;
            (*s, sp) = sigmoid_and_softplus(d);
            acc[x] += sp;
        }
        sum_lanes(&acc)
    }
}

/// The two sparse n×n matrices of the combined update (docs/models.md §4.4), with a fixed pattern
/// built once from the triplets; only the values change per iteration. For τ = (i, j, q) with
/// `s = σ(t_τ)`: `Mneg[j,i] += s, Mneg[i,j] += s, Mneg[q,q] += s` and
/// `Mpos[q,i] += s, Mpos[j,j] += s, Mpos[i,q] += s`, so that
/// `∇_H [α Σ sp(t_τ)] = 2α (H·Mpos − H·Mneg)`.
///
/// Both are stored transposed (`mneg_t = Mnegᵀ`, row c = column c of Mneg), so that
/// [`Csr::mul_dense_into`] gathers `(H·Mneg)ᵀ = Mnegᵀ·Hᵀ` row by row from Hᵀ
/// ([`Self::products_into`]).
#[derive(Clone, Debug)]
pub struct RoleMatrices {
    pub mneg_t: Csr,
    pub mpos_t: Csr,
    /// Which triplets' σ each stored value of `mneg_t` / `mpos_t` sums.
    neg_src: Sources,
    pos_src: Sources,
    /// The same patterns and sources, compact, for [`Self::products_from_sigmoids`].
    neg_pat: Pattern,
    pos_pat: Pattern,
    sums: Sums,
    /// |T|: the length of the σ arrays.
    triplets: usize,
    /// What the patterns' `src` indexes: σ per triplet (|T|), then the values of several
    /// triplets ([`Sums`]).
    values: Vec<f64>,
}

/// A role matrix's pattern (transposed, as `mneg_t`/`mpos_t`) in 32-bit indices, for the
/// product that reads each value straight from σ ([`RoleMatrices::products_from_sigmoids`]):
/// per value position p its column `cols[p]` (a row of Hᵀ) and `src[p]`, the index of its
/// value in the extended σ array ([`RoleMatrices::values`]): the triplet itself when one
/// triplet makes the value, else that of its sum of several ([`Sums`]).
///
/// 8 bytes per value position against 24 for the `usize` CSR, its values and their first
/// triplets, and no values array to write and read back, so the hot part of an RPNMF step fits
/// in L2 better; no data-dependent branch in the loop over values.
#[derive(Clone, Debug)]
struct Pattern {
    indptr: Vec<u32>,
    cols: Vec<u32>,
    src: Vec<u32>,
}

/// The values that sum several triplets' σ, over both role matrices: value m is
/// `σ[first[m]] + σ[τ₂] + …`, the later triplets as `(m, τ)` pairs in m order, then triplet
/// order, so the same sums in the same order as [`Sources::fill`].
#[derive(Clone, Debug, Default)]
struct Sums {
    first: Vec<u32>,
    rest: Vec<(u32, u32)>,
}

impl Pattern {
    /// From a CSR pattern and its sources, adding its values of several triplets to `sums`
    /// (the m-th sum is index `triplets + m` of [`RoleMatrices::values`]). None if an index
    /// does not fit in 32 bits.
    fn new(m: &Csr, src: &Sources, triplets: usize, sums: &mut Sums) -> Option<Self> {
        let narrow = |v: usize| u32::try_from(v).ok();
        let mut value_of: Vec<u32> = src
            .first
            .iter()
            .map(|&t| narrow(t))
            .collect::<Option<_>>()?;
        // `rest` is sorted by position: each run of one position becomes one summed value.
        let mut last = usize::MAX;
        for &(p, t) in &src.rest {
            if p != last {
                last = p;
                sums.first.push(value_of[p]);
                value_of[p] = narrow(triplets + sums.first.len() - 1)?;
            }
            let m = narrow(sums.first.len() - 1)?;
            sums.rest.push((m, narrow(t)?));
        }
        let mut indptr = Vec::with_capacity(m.nrows() + 1);
        let mut cols = Vec::with_capacity(m.nnz());
        indptr.push(0);
        for r in 0..m.nrows() {
            for &c in m.row(r).0 {
                cols.push(narrow(c)?);
            }
            indptr.push(narrow(cols.len())?);
        }
        Some(Self {
            indptr,
            cols,
            src: value_of,
        })
    }

    /// Columns `a0..a0 + W` of the product: row c of the transposed matrix times Hᵀ (`hs`,
    /// n×k row-major), written as column c of the k×n `out`. Each sum starts at 0 and adds
    /// `h_t[col] · value` in column order, as [`Csr::mul_dense_into`] does, so the same bits.
    #[inline(always)]
    fn gather_block<const W: usize>(
        &self,
        values: &[f64],
        hs: &[f64],
        k: usize,
        a0: usize,
        out: &mut [f64],
    ) {
        let n = self.indptr.len() - 1;
        for (c, ends) in self.indptr.windows(2).enumerate() {
            let (lo, hi) = (ends[0] as usize, ends[1] as usize);
            let mut acc = [0.0f64; W];
            for (&r, &e) in self.cols[lo..hi].iter().zip(&self.src[lo..hi]) {
                let v = values[e as usize];
                let src: &[f64; W] = fixed(&hs[r as usize * k + a0..]);
                for l in 0..W {
                    acc[l] += src[l] * v;
                }
            }
            for (l, &v) in acc.iter().enumerate() {
                out[(a0 + l) * n + c] = v;
            }
        }
    }

    /// All k columns, in blocks of at most 16 (each block's width fixed at compile time, so
    /// that its sums stay in registers).
    #[inline(always)]
    fn gather(&self, values: &[f64], hs: &[f64], k: usize, out: &mut [f64]) {
        let mut a0 = 0;
        while a0 < k {
            let width = (k - a0).min(16);
            macro_rules! widths {
                ($($w:literal)*) => {
                    match width {
                        $($w => self.gather_block::<$w>(values, hs, k, a0, out),)*
                        _ => self.gather_block::<16>(values, hs, k, a0, out),
                    }
                };
            }
            widths!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
            a0 += width;
        }
    }
}

/// [`RoleMatrices::products_from_sigmoids`] as a pulp job (a struct with an always-inlined
/// body: a closure would be compiled without the wide instructions).
struct RoleGather<'a> {
    neg_pat: &'a Pattern,
    pos_pat: &'a Pattern,
    values: &'a [f64],
    hs: &'a [f64],
    k: usize,
    neg: &'a mut [f64],
    pos: &'a mut [f64],
}

impl faer::traits::pulp::WithSimd for RoleGather<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: faer::traits::pulp::Simd>(self, _simd: S) {
        self.neg_pat.gather(self.values, self.hs, self.k, self.neg);
        self.pos_pat.gather(self.values, self.hs, self.k, self.pos);
    }
}

/// The triplets each stored value of a role matrix sums, for [`RoleMatrices::fill_sigmoids`]:
/// per value position the first triplet, and the later ones as (position, triplet) pairs in
/// position order, then triplet order.
///
/// Filling by value position (a gather from σ, |T| × 8 bytes, in L1, then a short sorted list
/// of additions) instead of by triplet (six additions per triplet at scattered positions of
/// two 100 KB arrays, after zeroing them) gives every value the same sum in the same order,
/// `s_first + s_2 + …` in triplet order (`0 + s_first = s_first` exactly), so the same bits,
/// in about half the time (docs/performance.md, "RPNMF's triplet kernels
/// (`models/rpnmf/triplets.rs`, `models/rpnmf/algorithm.rs`)").
#[derive(Clone, Debug)]
struct Sources {
    first: Vec<usize>,
    rest: Vec<(usize, usize)>,
}

impl Sources {
    /// From the value positions each triplet adds to, in triplet order (distinct within a
    /// triplet). Every one of the `nnz` positions is named by some triplet.
    fn new(nnz: usize, positions: impl Iterator<Item = [usize; 3]>) -> Self {
        let mut first = vec![usize::MAX; nnz];
        let mut rest = Vec::new();
        for (tau, ps) in positions.enumerate() {
            for p in ps {
                if first[p] == usize::MAX {
                    first[p] = tau;
                } else {
                    rest.push((p, tau));
                }
            }
        }
        // A stable sort: the triplets of a position stay in triplet order.
        rest.sort_by_key(|&(p, _)| p);
        debug_assert!(
            first.iter().all(|&t| t != usize::MAX),
            "a value without a triplet"
        );
        Self { first, rest }
    }

    /// `values[p] ← Σ σ_τ` over the triplets of position p, in triplet order.
    fn fill(&self, sig: &[f64], values: &mut [f64]) {
        for (v, &t) in values.iter_mut().zip(&self.first) {
            *v = sig[t];
        }
        for &(p, t) in &self.rest {
            values[p] += sig[t];
        }
    }
}

impl RoleMatrices {
    /// The pattern for `triplets` over n samples (indices must be < n and distinct). None
    /// when n or 3|T| does not fit in 32 bits (the compact patterns' indices).
    pub fn new(n: usize, triplets: &[Triplet]) -> Option<Self> {
        // (row, column) of Mneg and Mpos, entered transposed.
        let neg: Vec<(usize, usize, f64)> = triplets
            .iter()
            .flat_map(|t| [(t.i, t.j, 0.0), (t.j, t.i, 0.0), (t.q, t.q, 0.0)])
            .collect();
        let pos: Vec<(usize, usize, f64)> = triplets
            .iter()
            .flat_map(|t| [(t.i, t.q, 0.0), (t.j, t.j, 0.0), (t.q, t.i, 0.0)])
            .collect();
        let mneg_t = Csr::from_entries(n, n, &neg);
        let mpos_t = Csr::from_entries(n, n, &pos);
        // Position of Mneg[r, c] / Mpos[r, c], i.e. of (c, r) in the transposes.
        let at = |m: &Csr, r: usize, c: usize| m.position(c, r).unwrap_or(usize::MAX);
        let neg_src = Sources::new(
            mneg_t.nnz(),
            triplets.iter().map(|t| {
                [
                    at(&mneg_t, t.j, t.i),
                    at(&mneg_t, t.i, t.j),
                    at(&mneg_t, t.q, t.q),
                ]
            }),
        );
        let pos_src = Sources::new(
            mpos_t.nnz(),
            triplets.iter().map(|t| {
                [
                    at(&mpos_t, t.q, t.i),
                    at(&mpos_t, t.j, t.j),
                    at(&mpos_t, t.i, t.q),
                ]
            }),
        );
        let mut sums = Sums::default();
        let neg_pat = Pattern::new(&mneg_t, &neg_src, triplets.len(), &mut sums)?;
        let pos_pat = Pattern::new(&mpos_t, &pos_src, triplets.len(), &mut sums)?;
        let values = vec![0.0; triplets.len() + sums.first.len()];
        Some(Self {
            mneg_t,
            mpos_t,
            neg_src,
            pos_src,
            neg_pat,
            pos_pat,
            sums,
            triplets: triplets.len(),
            values,
        })
    }

    /// Set the values from every triplet's margin, `s_τ = σ(t_τ)`. O(|T|).
    pub fn fill(&mut self, margins: &[f64]) {
        let sig: Vec<f64> = margins.iter().map(|&t| sigmoid(t)).collect();
        self.fill_sigmoids(&sig);
    }

    /// Set the values from `s_τ = σ(t_τ)` given directly (as [`sigmoids_and_loss`] returns
    /// them; one per triplet, in the order of the triplets of [`Self::new`]). Each entry sums
    /// its triplets' s in triplet order ([`Sources`]). O(|T|).
    pub fn fill_sigmoids(&mut self, sigmoids: &[f64]) {
        self.neg_src.fill(sigmoids, self.mneg_t.values_mut());
        self.pos_src.fill(sigmoids, self.mpos_t.values_mut());
    }

    /// `neg_t ← (H·Mneg)ᵀ` and `pos_t ← (H·Mpos)ᵀ` (n×k each) from Hᵀ (n×k). O(k·nnz).
    pub fn products_into(
        &self,
        h_t: ArrayView2<'_, f64>,
        neg_t: &mut ArrayViewMut2<'_, f64>,
        pos_t: &mut ArrayViewMut2<'_, f64>,
    ) {
        self.mneg_t.mul_dense_into(h_t, neg_t);
        self.mpos_t.mul_dense_into(h_t, pos_t);
    }

    /// `neg ← H·Mneg` and `pos ← H·Mpos` (k×n each, row-major) from `s_τ = σ(t_τ)` (one per
    /// triplet, as for [`Self::fill_sigmoids`]) and Hᵀ (n×k). O(|T| + k·nnz).
    ///
    /// Bit for bit [`Self::fill_sigmoids`] then [`Self::products_into`], transposed: the
    /// values of several triplets are summed first, in the same order, and the product reads
    /// every value from σ or from those sums. The k×n layout lets the H step's ratio run as
    /// vectors (over the n×k products, its stride-k reads made the divisions scalar), and
    /// forming them straight from σ is no slower than the fill and the gather
    /// (docs/performance.md, "RPNMF's triplet kernels (`models/rpnmf/triplets.rs`,
    /// `models/rpnmf/algorithm.rs`)").
    pub fn products_from_sigmoids(
        &mut self,
        sig: &[f64],
        h_t: ArrayView2<'_, f64>,
        neg: &mut [f64],
        pos: &mut [f64],
    ) {
        let (n, k) = h_t.dim();
        let h_t = h_t.as_standard_layout();
        let Some(hs) = h_t.as_slice() else {
            return;
        };
        if sig.len() != self.triplets
            || neg.len() != k * n
            || pos.len() != k * n
            || self.neg_pat.indptr.len() != n + 1
        {
            debug_assert!(false, "role products: shapes do not match");
            return;
        }
        let (head, multi) = self.values.split_at_mut(self.triplets);
        head.copy_from_slice(sig);
        for (v, &t) in multi.iter_mut().zip(&self.sums.first) {
            *v = sig[t as usize];
        }
        for &(m, t) in &self.sums.rest {
            multi[m as usize] += sig[t as usize];
        }
        faer::traits::pulp::Arch::new().dispatch(RoleGather {
            neg_pat: &self.neg_pat,
            pos_pat: &self.pos_pat,
            values: &self.values,
            hs,
            k,
            neg,
            pos,
        });
    }

    /// Mneg as a dense matrix (tests and small n only).
    pub fn mneg_dense(&self) -> Array2<f64> {
        self.mneg_t.to_dense().reversed_axes()
    }

    /// Mpos as a dense matrix (tests and small n only).
    pub fn mpos_dense(&self) -> Array2<f64> {
        self.mpos_t.to_dense().reversed_axes()
    }
}

/// Gradient of `α Σ sp(t_τ)` with respect to H, `2α(H·Mpos − H·Mneg)` (k×n), for tests and
/// diagnostics (None where [`RoleMatrices::new`] is).
pub fn ranking_gradient(
    h: ArrayView2<'_, f64>,
    triplets: &[Triplet],
    alpha: f64,
    delta: f64,
) -> Option<Array2<f64>> {
    let mut t = Vec::new();
    margins(h, triplets, delta, &mut t);
    let mut roles = RoleMatrices::new(h.ncols(), triplets)?;
    roles.fill(&t);
    Some((h.dot(&roles.mpos_dense()) - h.dot(&roles.mneg_dense())) * (2.0 * alpha))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::mu::fd;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn triplets() -> Vec<Triplet> {
        // Shared roles: 0 is an anchor, a closer and a farther point.
        vec![
            Triplet::new(0, 1, 2),
            Triplet::new(1, 0, 3),
            Triplet::new(2, 3, 0),
            Triplet::new(0, 2, 1),
            Triplet::new(4, 0, 1),
        ]
    }

    fn random(r: usize, c: usize, seed: u64) -> Array2<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        Array2::from_shape_simple_fn((r, c), || 0.1 + rng.r#gen::<f64>())
    }

    /// docs/models.md §4.4: the ranking gradient equals central finite differences of α Σ sp(t).
    #[test]
    fn ranking_gradient_matches_finite_differences() {
        let h = random(3, 6, 1);
        let (alpha, delta) = (0.7, 0.3);
        let ts = triplets();
        let loss = |h: &Array2<f64>| {
            let mut t = Vec::new();
            margins(h.view(), &ts, delta, &mut t);
            ranking_loss(alpha, &t)
        };
        let g = ranking_gradient(h.view(), &ts, alpha, delta).unwrap();
        let fd = fd::gradient(loss, &h, 1e-6);
        let rel = fd::relative_error(&g, &fd);
        assert!(rel < 1e-6, "relative error {rel}");
    }

    #[test]
    fn role_matrices_match_the_dense_definition() {
        let ts = triplets();
        let h = random(2, 6, 2);
        let mut t = Vec::new();
        margins(h.view(), &ts, 0.5, &mut t);
        let mut roles = RoleMatrices::new(6, &ts).unwrap();
        roles.fill(&t);
        let (mut neg, mut pos) = (Array2::<f64>::zeros((6, 6)), Array2::<f64>::zeros((6, 6)));
        for (tr, &tt) in ts.iter().zip(&t) {
            let s = sigmoid(tt);
            neg[[tr.j, tr.i]] += s;
            neg[[tr.i, tr.j]] += s;
            neg[[tr.q, tr.q]] += s;
            pos[[tr.q, tr.i]] += s;
            pos[[tr.j, tr.j]] += s;
            pos[[tr.i, tr.q]] += s;
        }
        assert!((roles.mneg_dense() - &neg).iter().all(|v| v.abs() < 1e-15));
        assert!((roles.mpos_dense() - &pos).iter().all(|v| v.abs() < 1e-15));
        assert!(roles.mneg_t.nnz() <= 3 * ts.len());
        // The gathered products are H·Mneg and H·Mpos.
        let h_t = h.t().as_standard_layout().into_owned();
        let (mut hn, mut hp) = (Array2::zeros((6, 2)), Array2::zeros((6, 2)));
        roles.products_into(h_t.view(), &mut hn.view_mut(), &mut hp.view_mut());
        assert!(
            (hn.t().to_owned() - h.dot(&neg))
                .iter()
                .all(|v| v.abs() < 1e-15)
        );
        assert!(
            (hp.t().to_owned() - h.dot(&pos))
                .iter()
                .all(|v| v.abs() < 1e-15)
        );
    }

    /// Filling by value position gives each value the bits of the scatter by triplet (zero,
    /// then `+= s` at the six positions of every triplet, in triplet order), with positions
    /// that many triplets share (30 triplets over 6 samples).
    #[test]
    fn fill_by_position_equals_the_scatter_by_triplet() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let ts: Vec<Triplet> = (0..30)
            .map(|_| {
                loop {
                    let (i, j, q) = (
                        rng.gen_range(0..6),
                        rng.gen_range(0..6),
                        rng.gen_range(0..6),
                    );
                    if i != j && j != q && i != q {
                        break Triplet::new(i, j, q);
                    }
                }
            })
            .collect();
        let sig: Vec<f64> = (0..ts.len()).map(|_| rng.r#gen::<f64>()).collect();
        let mut roles = RoleMatrices::new(6, &ts).unwrap();
        roles.fill_sigmoids(&sig);
        let mut neg = vec![0.0f64; roles.mneg_t.nnz()];
        let mut pos = vec![0.0f64; roles.mpos_t.nnz()];
        let at = |m: &Csr, r: usize, c: usize| m.position(c, r).unwrap();
        for (t, &s) in ts.iter().zip(&sig) {
            neg[at(&roles.mneg_t, t.j, t.i)] += s;
            neg[at(&roles.mneg_t, t.i, t.j)] += s;
            neg[at(&roles.mneg_t, t.q, t.q)] += s;
            pos[at(&roles.mpos_t, t.q, t.i)] += s;
            pos[at(&roles.mpos_t, t.j, t.j)] += s;
            pos[at(&roles.mpos_t, t.i, t.q)] += s;
        }
        assert!(
            roles.mneg_t.nnz() < 3 * ts.len(),
            "no shared positions: a weak case"
        );
        assert_eq!(roles.mneg_t.values(), &neg[..]);
        assert_eq!(roles.mpos_t.values(), &pos[..]);
        // A second fill overwrites (no stale sums from the first).
        roles.fill_sigmoids(&sig);
        assert_eq!(roles.mneg_t.values(), &neg[..]);
    }

    /// The product that reads σ directly equals filling the values and then gathering
    /// (`fill_sigmoids`, `products_into`), transposed, bit for bit: many triplets over a few
    /// samples (values of one and of several triplets), ranks of one and two column blocks,
    /// twice in a row (no stale sums).
    #[test]
    fn products_from_sigmoids_equal_fill_then_gather() {
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let n = 9;
        let ts = crate::engine::constraints::generate::random_triplets(n, 40, 5);
        let mut roles = RoleMatrices::new(n, &ts).unwrap();
        assert!(
            roles.sums.rest.len() > 5,
            "few values of several triplets: a weak case"
        );
        assert!(roles.sums.first.len() < roles.mneg_t.nnz() + roles.mpos_t.nnz());
        for k in [1, 3, 10, 19] {
            for _ in 0..2 {
                let sig: Vec<f64> = (0..ts.len()).map(|_| rng.r#gen::<f64>()).collect();
                let h_t = random(n, k, 30 + k as u64);
                let (mut neg, mut pos) = (vec![0.0; k * n], vec![0.0; k * n]);
                roles.products_from_sigmoids(&sig, h_t.view(), &mut neg, &mut pos);
                roles.fill_sigmoids(&sig);
                let (mut nt, mut pt) = (Array2::zeros((n, k)), Array2::zeros((n, k)));
                roles.products_into(h_t.view(), &mut nt.view_mut(), &mut pt.view_mut());
                let kn = |a: &Array2<f64>| a.t().iter().copied().collect::<Vec<f64>>();
                assert_eq!(neg, kn(&nt), "k = {k}");
                assert_eq!(pos, kn(&pt), "k = {k}");
            }
        }
    }

    /// The margins from Hᵀ, σ and the loss equal [`margins`], [`sigmoid`] and
    /// [`ranking_loss`] bit for bit: ranks below, at and above one vector, with and without a
    /// tail window (k = 3, 7, 8, 10, 16, 19), over 9 triplets (a loss remainder of one).
    #[test]
    fn transposed_margins_and_fused_sigmoids_are_bit_identical() {
        let mut ts = triplets();
        ts.extend([
            Triplet::new(5, 3, 4),
            Triplet::new(3, 5, 1),
            Triplet::new(2, 4, 5),
            Triplet::new(1, 2, 3),
        ]);
        for k in [3, 7, 8, 10, 16, 19] {
            for (seed, delta) in [(3, 0.3), (4, -5.0), (5, 40.0), (6, 0.0)] {
                let h = random(k, 6, seed + 10 * k as u64);
                let mut t = Vec::new();
                margins(h.view(), &ts, delta, &mut t);
                assert!(seed != 4 || t.iter().any(|&v| v < 0.0));
                let h_t = h.t().as_standard_layout().into_owned();
                let mut tt = Vec::new();
                margins_t(h_t.view(), &ts, delta, &mut tt);
                assert_eq!(tt, t, "k = {k}");
                let mut sig = Vec::new();
                let loss = sigmoids_and_loss(&t, 0.7, &mut sig);
                assert_eq!(loss, ranking_loss(0.7, &t));
                assert_eq!(sig, t.iter().map(|&v| sigmoid(v)).collect::<Vec<_>>());
            }
        }
    }

    /// The lane order is a summation order, nothing more: the margins equal the definition
    /// `δ + ‖h_i − h_j‖² − ‖h_i − h_q‖²` (distances summed one coordinate at a time) to
    /// rounding, and every coordinate lands in exactly one lane.
    #[test]
    fn margins_equal_the_definition() {
        let ts = triplets();
        for k in [1, 5, 8, 10, 13, 24] {
            let lanes: Vec<usize> = (0..k).map(|a| lane_of(a, k)).collect();
            assert!(lanes.iter().all(|&l| l < LANES), "k = {k}: {lanes:?}");
            if k >= LANES {
                // The window of the last LANES coordinates: the top lanes, once each.
                let mut tail = lanes[k / LANES * LANES..].to_vec();
                tail.dedup();
                assert_eq!(tail.len(), k % LANES, "k = {k}");
                assert!(tail.iter().all(|&l| l >= LANES - k % LANES));
            }
            let h = random(k, 6, 7 + k as u64);
            let mut t = Vec::new();
            margins(h.view(), &ts, 10.0, &mut t);
            for (tr, &v) in ts.iter().zip(&t) {
                let d = |a: usize, b: usize| -> f64 {
                    (0..k).map(|r| (h[[r, a]] - h[[r, b]]).powi(2)).sum()
                };
                let want = 10.0 + d(tr.i, tr.j) - d(tr.i, tr.q);
                assert!(
                    (v - want).abs() <= 1e-14 * want.abs(),
                    "k = {k}: {v} vs {want}"
                );
            }
        }
    }
}
