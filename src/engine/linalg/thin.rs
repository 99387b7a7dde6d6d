//! The two big products of an NMF/RPNMF iteration on a large row-major X with a thin factor
//! (rank k ≪ m, n): `WᵀX` on a range of columns, and `XHᵀ` accumulated over column ranges.
//!
//! faer's general GEMM packs its operands for square-ish shapes, and on column blocks of a
//! large row-major X with a thin factor it runs far below its in-cache rate. These kernels
//! need no packing of X at all:
//!
//! - [`wt_x_columns`]: register tiles of [`TILE_ROWS`] rows of `Wᵀ` × 16 columns (20 vectors of
//!   8 lanes), fed by a broadcast of `W[i, r]` and two loads of `X[i, j..j + 16]` per row i,
//!   walking [`ChunkRows`] rows of X at a time so that the block is read as a few sequential
//!   streams (16 rows: DRAM-friendly; 32 rows: best in cache).
//! - [`XhtAccumulator`]: `XHᵀ` with k padded to lanes of 8; H's columns of the block are packed
//!   once into `Hᵀ` rows, and each tile of rows of X accumulates `X[i, j] · Hᵀ[j, :]` (a
//!   broadcast of X, up to 4 vectors of `Hᵀ`), reading each row of X sequentially.
//!
//! On a large X both prefetch each row of X a few cache lines ahead ([`crate::engine::machine::sys::prefetch`]);
//! the hardware prefetchers alone fell behind (see [`PREFETCH_COLUMNS`]).
//!
//! Both beat faer on the blocks of a large X, and `WᵀX` also on an X in cache
//! (docs/performance.md, "Thin `WᵀX` (`linalg/thin.rs`, `wt_x_columns`)" and "Thin `XHᵀ`
//! accumulator (`linalg/thin.rs`, `XhtAccumulator`)").
//!
//! Summation orders are fixed by the code, not by the instruction set: every output entry is
//! one fused multiply-add chain in index order (over the rows of X for `WᵀX`, over the columns
//! of the blocks in order for `XHᵀ`), and the 8 lanes of a vector are 8 different entries. So
//! results are bit-for-bit repeatable, and the same with AVX2 or AVX-512 (pulp picks the widest
//! the CPU has; the kernels are plain loops over `[f64; 8]` that vectorize in its context).

use super::parallel::{for_each_part, parts_for, threads};
use crate::engine::machine::sys::prefetch;
use faer::traits::pulp;
use std::ops::Range;

/// Fused multiply-adds below which a product is not worth splitting over threads (about
/// 0.1 ms of one core: waking a helper that went to sleep costs tens of µs, more on a loaded
/// machine). The bits are the same either way.
pub(crate) const MIN_SPLIT_FMAS: usize = 1 << 22;

/// Rows of `Wᵀ` (entries of the rank) per register tile of [`wt_x_columns`].
const TILE_ROWS: usize = 10;
/// Columns of X per register tile of [`wt_x_columns`].
const TILE_COLS: usize = 16;
/// Lanes of one vector of the `XHᵀ` accumulator (k is padded to a multiple).
const LANES: usize = 8;
/// At most this many vectors of `Hᵀ` per register tile of [`XhtAccumulator`] (k ≤ 32 in one
/// sweep; larger k takes several).
const MAX_VECS: usize = 4;

/// f64 values per 64-byte cache line: the step of the prefetches below.
const LINE: usize = 8;
/// How far ahead (in columns) [`ChunkRows::Streaming`] prefetches each row of X: with 16 rows
/// read side by side, 128 bytes of each per tile, the hardware prefetchers fall behind; 48
/// columns was the fastest distance tried (docs/performance.md, "Thin `WᵀX`
/// (`linalg/thin.rs`, `wt_x_columns`)").
const PREFETCH_COLUMNS: usize = 48;
/// How far ahead (in columns) [`XhtAccumulator`] prefetches each of its tile's rows of X, one
/// cache line per row every 8 columns. A smaller gain than in `WᵀX`, since these rows are read
/// whole, 8 at a time, which the hardware prefetchers follow better
/// (docs/performance.md, "Thin `XHᵀ` accumulator (`linalg/thin.rs`, `XhtAccumulator`)").
const XHT_PREFETCH_COLUMNS: usize = 32;

/// Rows of X per chunk of [`wt_x_columns`]: the accumulators go back to memory once per chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChunkRows {
    /// 16 rows: X comes from DRAM, read as 16 concurrent sequential streams, each prefetched
    /// [`PREFETCH_COLUMNS`] ahead; chosen from chunks of 4 to 32 rows on a large X
    /// (docs/performance.md, "Thin `WᵀX` (`linalg/thin.rs`, `wt_x_columns`)").
    Streaming,
    /// 32 rows: X is in cache, so fewer accumulator round trips is all that counts
    /// (docs/performance.md, "Thin `WᵀX` (`linalg/thin.rs`, `wt_x_columns`)").
    Cached,
}

impl ChunkRows {
    fn rows(self) -> usize {
        match self {
            Self::Streaming => 16,
            Self::Cached => 32,
        }
    }

    /// Columns of prefetch distance (0: none).
    fn prefetch(self) -> usize {
        match self {
            Self::Streaming => PREFETCH_COLUMNS,
            Self::Cached => 0,
        }
    }
}

/// `out[r, j] = Σ_i W[i, r] · X[i, j]` for `j ∈ cols`: W is m×k row-major in `w`, X has m rows
/// of stride `xs` in `x`, `out` has k rows of stride `os` (only the columns `cols` are written).
#[expect(
    clippy::too_many_arguments,
    reason = "two strided matrices, their shapes and the column range; a struct would only rename them"
)]
pub(crate) fn wt_x_columns(
    w: &[f64],
    (m, k): (usize, usize),
    x: &[f64],
    xs: usize,
    cols: Range<usize>,
    out: &mut [f64],
    os: usize,
    chunk: ChunkRows,
) {
    assert!(w.len() >= m * k, "W is smaller than m×k");
    assert!(
        cols.end <= xs || m == 0,
        "columns beyond the row stride of X"
    );
    assert!(
        m == 0 || x.len() >= (m - 1) * xs + cols.end,
        "X is too short"
    );
    assert!(
        k == 0 || out.len() >= (k - 1) * os + cols.end,
        "out is too short"
    );
    pulp::Arch::new().dispatch(WtX {
        w,
        m,
        k,
        x,
        xs,
        cols,
        out,
        os,
        chunk: chunk.rows(),
        prefetch: chunk.prefetch(),
    });
}

/// [`wt_x_columns`] with the columns cut into parts over the calling thread's
/// [`threads`](super::parallel::threads): each part writes its columns into its own rows of a
/// scratch buffer, then they are copied into `out`. Every entry is the same FMA chain over the
/// rows of X as in one call, so the bits are those of [`wt_x_columns`] whatever the count.
#[expect(clippy::too_many_arguments, reason = "the arguments of wt_x_columns")]
pub(crate) fn wt_x_columns_split(
    w: &[f64],
    (m, k): (usize, usize),
    x: &[f64],
    xs: usize,
    cols: Range<usize>,
    out: &mut [f64],
    os: usize,
    chunk: ChunkRows,
) {
    let len = cols.len();
    let t = threads();
    // Parts of whole 16-column tiles.
    let width = len.div_ceil(parts_for(t)).div_ceil(TILE_COLS) * TILE_COLS;
    if t <= 1 || m * len * k < MIN_SPLIT_FMAS || width >= len {
        wt_x_columns(w, (m, k), x, xs, cols, out, os, chunk);
        return;
    }
    assert!(
        m == 0 || x.len() >= (m - 1) * xs + cols.end,
        "X is too short"
    );
    SCRATCH.with(|cell| {
        let mut scratch = cell.borrow_mut();
        if scratch.len() < k * len {
            scratch.resize(k * len, 0.0);
        }
        let parts: Vec<(usize, &mut [f64])> = scratch[..k * len]
            .chunks_mut(k * width)
            .enumerate()
            .map(|(p, buf)| (cols.start + p * width, buf))
            .collect();
        for_each_part(parts, |_, (c0, buf)| {
            let pw = buf.len() / k.max(1);
            wt_x_columns(w, (m, k), &x[c0..], xs, 0..pw, buf, pw, chunk);
        });
        for (p, buf) in scratch[..k * len].chunks(k * width).enumerate() {
            let (c0, pw) = (cols.start + p * width, buf.len() / k.max(1));
            for r in 0..k {
                out[r * os + c0..r * os + c0 + pw].copy_from_slice(&buf[r * pw..(r + 1) * pw]);
            }
        }
    });
}

/// `out ← WᵀX` over all columns for arrays (X m×n, W m×k, out k×n): [`wt_x_columns_split`]
/// with `rows`, its columns split over the fit's threads with the bits of one thread; faer when
/// an array is not contiguous row-major.
pub(crate) fn wt_x_into(
    out: &mut ndarray::Array2<f64>,
    w: &ndarray::Array2<f64>,
    x: &ndarray::Array2<f64>,
    rows: ChunkRows,
) {
    let (m, n) = x.dim();
    let k = w.ncols();
    if let (true, Some(xs), Some(ws), Some(os)) = (
        w.nrows() == m,
        x.as_slice(),
        w.as_slice(),
        out.as_slice_mut(),
    ) {
        wt_x_columns_split(ws, (m, k), xs, n, 0..n, os, n, rows);
    } else {
        super::gemm_into(
            &mut out.view_mut(),
            1.0,
            w.view(),
            super::Op::T,
            x.view(),
            super::Op::N,
            false,
        );
    }
}

thread_local! {
    /// The parts' columns of [`wt_x_columns_split`], reused by every call on the thread.
    static SCRATCH: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
}

struct WtX<'a> {
    w: &'a [f64],
    m: usize,
    k: usize,
    x: &'a [f64],
    xs: usize,
    cols: Range<usize>,
    out: &'a mut [f64],
    os: usize,
    chunk: usize,
    prefetch: usize,
}

impl pulp::WithSimd for WtX<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let WtX {
            w,
            m,
            k,
            x,
            xs,
            cols,
            out,
            os,
            chunk,
            prefetch,
        } = self;
        let mut i0 = 0;
        while i0 < m {
            let rows = i0..(i0 + chunk).min(m);
            let first = i0 == 0;
            let mut c = cols.start;
            while c < cols.end {
                // 16-wide strips, then 8, then single columns for the tail.
                let width = match cols.end - c {
                    r if r >= TILE_COLS => TILE_COLS,
                    r if r >= 8 => 8,
                    _ => 1,
                };
                let mut r0 = 0;
                while r0 < k {
                    let kt = (k - r0).min(TILE_ROWS);
                    let t = Strip {
                        w,
                        k,
                        r0,
                        x,
                        xs,
                        col: c,
                        rows: rows.clone(),
                        first,
                        // The first tile of rows of Wᵀ brings the chunk's rows of X in; the
                        // others read them from L1.
                        prefetch: if r0 == 0 { prefetch } else { 0 },
                    };
                    match width {
                        TILE_COLS => strip_rows::<TILE_COLS>(kt, t, out, os),
                        8 => strip_rows::<8>(kt, t, out, os),
                        _ => strip_rows::<1>(kt, t, out, os),
                    }
                    r0 += kt;
                }
                c += width;
            }
            i0 = rows.end;
        }
    }
}

/// One strip of `WᵀX`: rows `r0..r0 + KT` of `Wᵀ`, columns `col..col + SW`, summed over `rows`.
#[derive(Clone)]
struct Strip<'a> {
    w: &'a [f64],
    k: usize,
    r0: usize,
    x: &'a [f64],
    xs: usize,
    col: usize,
    rows: Range<usize>,
    /// The first chunk of rows: start from zero instead of the stored partial sums.
    first: bool,
    /// Prefetch each row this many columns ahead (0: none; full-width tiles only).
    prefetch: usize,
}

#[inline(always)]
fn strip_rows<const SW: usize>(kt: usize, t: Strip<'_>, out: &mut [f64], os: usize) {
    match kt {
        1 => strip::<1, SW>(t, out, os),
        2 => strip::<2, SW>(t, out, os),
        3 => strip::<3, SW>(t, out, os),
        4 => strip::<4, SW>(t, out, os),
        5 => strip::<5, SW>(t, out, os),
        6 => strip::<6, SW>(t, out, os),
        7 => strip::<7, SW>(t, out, os),
        8 => strip::<8, SW>(t, out, os),
        9 => strip::<9, SW>(t, out, os),
        _ => strip::<TILE_ROWS, SW>(t, out, os),
    }
}

#[inline(always)]
fn strip<const KT: usize, const SW: usize>(t: Strip<'_>, out: &mut [f64], os: usize) {
    let Strip {
        w,
        k,
        r0,
        x,
        xs,
        col,
        rows,
        first,
        prefetch: ahead,
    } = t;
    let mut acc = [[0.0f64; SW]; KT];
    if !first {
        for (a, acc) in acc.iter_mut().enumerate() {
            let o = (r0 + a) * os + col;
            acc.copy_from_slice(&out[o..o + SW]);
        }
    }
    for i in rows {
        if SW == TILE_COLS && ahead > 0 {
            // The two cache lines of this row's tile `ahead` columns on (a row is 64-byte
            // aligned when X is, and tiles start at multiples of 16 columns).
            prefetch(x, i * xs + col + ahead);
            prefetch(x, i * xs + col + ahead + LINE);
        }
        let xr: &[f64; SW] = fixed(&x[i * xs + col..]);
        let wr: &[f64; KT] = fixed(&w[i * k + r0..]);
        for a in 0..KT {
            for s in 0..SW {
                acc[a][s] = wr[a].mul_add(xr[s], acc[a][s]);
            }
        }
    }
    for (a, acc) in acc.iter().enumerate() {
        let o = (r0 + a) * os + col;
        out[o..o + SW].copy_from_slice(acc);
    }
}

/// The first `N` entries of `s` as an array reference (one bounds check).
#[inline(always)]
#[expect(
    clippy::expect_used,
    reason = "cannot fail: `s[..N]` has length N (and panics first if s is shorter)"
)]
pub(crate) fn fixed<const N: usize>(s: &[f64]) -> &[f64; N] {
    s[..N].try_into().expect("slice of length N")
}

/// `XHᵀ` (m×k) accumulated over column blocks of X and H, with its workspace: the m×kp sums
/// (k padded to a multiple of 8) and the packed `Hᵀ` of the current block. Allocated once per
/// model; [`Self::add_columns`] per block, [`Self::write_into`] at the end of the pass.
#[derive(Debug, Clone)]
pub(crate) struct XhtAccumulator {
    m: usize,
    k: usize,
    /// k rounded up to a multiple of [`LANES`].
    kp: usize,
    /// m×kp row-major sums; the padding lanes stay 0.
    sums: Vec<f64>,
    /// len×kp row-major `Hᵀ` of the current block; the padding lanes stay 0.
    ht: Vec<f64>,
}

impl XhtAccumulator {
    pub(crate) fn new(m: usize, k: usize) -> Self {
        let kp = k.div_ceil(LANES).max(1) * LANES;
        Self {
            m,
            k,
            kp,
            sums: vec![0.0; m * kp],
            ht: Vec::new(),
        }
    }

    /// `sums = X · Hᵀ` over all n columns (X m×n and H k×n row-major), in column blocks of
    /// `block` (a long row segment per block; the sums stay in cache across blocks).
    pub(crate) fn set_all_columns(&mut self, x: &[f64], h: &[f64], n: usize, block: usize) {
        let mut j0 = 0;
        while j0 < n {
            let j1 = (j0 + block.max(1)).min(n);
            self.add_columns(x, n, h, n, j0..j1, j0 == 0);
            j0 = j1;
        }
    }

    /// `sums (+)= X[:, cols] · H[:, cols]ᵀ`: X has m rows of stride `xs`, H has k rows of stride
    /// `hs`; `first` replaces the sums instead of adding.
    pub(crate) fn add_columns(
        &mut self,
        x: &[f64],
        xs: usize,
        h: &[f64],
        hs: usize,
        cols: Range<usize>,
        first: bool,
    ) {
        let (m, k, kp) = (self.m, self.k, self.kp);
        let len = cols.len();
        assert!(
            m == 0 || x.len() >= (m - 1) * xs + cols.end,
            "X is too short"
        );
        assert!(
            k == 0 || h.len() >= (k - 1) * hs + cols.end,
            "H is too short"
        );
        if self.ht.len() < len * kp {
            self.ht.resize(len * kp, 0.0);
        }
        for a in 0..k {
            let row = &h[a * hs + cols.start..a * hs + cols.end];
            for (j, &v) in row.iter().enumerate() {
                self.ht[j * kp + a] = v;
            }
        }
        let ht = &self.ht[..len * kp];
        let t = threads();
        // Parts of whole 16-row tiles: every entry of the sums is the same FMA chain over the
        // columns whoever forms its rows, so the bits do not depend on the thread count.
        let rows = m.div_ceil(parts_for(t)).div_ceil(16) * 16;
        if t <= 1 || m * len * kp < MIN_SPLIT_FMAS || rows >= m {
            pulp::Arch::new().dispatch(Xht {
                x: &x[cols.start..],
                xs,
                m,
                len,
                ht,
                kp,
                sums: &mut self.sums,
                first,
            });
            return;
        }
        let parts: Vec<(usize, &mut [f64])> = self
            .sums
            .chunks_mut(rows * kp)
            .enumerate()
            .map(|(p, sums)| (p * rows, sums))
            .collect();
        for_each_part(parts, |_, (i0, sums)| {
            pulp::Arch::new().dispatch(Xht {
                x: &x[i0 * xs + cols.start..],
                xs,
                m: sums.len() / kp,
                len,
                ht,
                kp,
                sums,
                first,
            });
        });
    }

    /// Copy the sums into `xht` (m×k row-major).
    pub(crate) fn write_into(&self, xht: &mut [f64]) {
        let (k, kp) = (self.k, self.kp);
        for (dst, src) in xht.chunks_exact_mut(k).zip(self.sums.chunks_exact(kp)) {
            dst.copy_from_slice(&src[..k]);
        }
    }
}

struct Xht<'a> {
    /// X starting at the block's first column.
    x: &'a [f64],
    xs: usize,
    m: usize,
    len: usize,
    ht: &'a [f64],
    kp: usize,
    sums: &'a mut [f64],
    first: bool,
}

impl pulp::WithSimd for Xht<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let Xht {
            x,
            xs,
            m,
            len,
            ht,
            kp,
            sums,
            first,
        } = self;
        let job = XhtJob {
            x,
            xs,
            len,
            ht,
            kp,
            first,
        };
        let nv = kp / LANES;
        let mut v0 = 0;
        while v0 < nv {
            let rv = (nv - v0).min(MAX_VECS);
            // Rows per tile so that the accumulators fill ~24 of the 32 AVX-512 registers.
            match rv {
                1 => xht_rows::<16, 1>(&job, m, v0, sums),
                2 => xht_rows::<12, 2>(&job, m, v0, sums),
                3 => xht_rows::<8, 3>(&job, m, v0, sums),
                _ => xht_rows::<6, MAX_VECS>(&job, m, v0, sums),
            }
            v0 += rv;
        }
    }
}

/// The read-only part of an [`Xht`] job.
struct XhtJob<'a> {
    x: &'a [f64],
    xs: usize,
    len: usize,
    ht: &'a [f64],
    kp: usize,
    first: bool,
}

#[inline(always)]
fn xht_rows<const IT: usize, const RV: usize>(
    job: &XhtJob<'_>,
    m: usize,
    v0: usize,
    sums: &mut [f64],
) {
    let mut i0 = 0;
    while i0 + IT <= m {
        xht_tile::<IT, RV>(job, i0, v0, sums);
        i0 += IT;
    }
    while i0 < m {
        xht_tile::<1, RV>(job, i0, v0, sums);
        i0 += 1;
    }
}

/// Rows `i0..i0 + IT` of the sums, lanes `8·v0..8·(v0 + RV)`: one pass over the block's columns.
#[inline(always)]
fn xht_tile<const IT: usize, const RV: usize>(
    job: &XhtJob<'_>,
    i0: usize,
    v0: usize,
    sums: &mut [f64],
) {
    let XhtJob {
        x,
        xs,
        len,
        ht,
        kp,
        first,
    } = *job;
    let at = |t: usize, v: usize| (i0 + t) * kp + (v0 + v) * LANES;
    let mut acc = [[[0.0f64; LANES]; RV]; IT];
    if !first {
        for (t, acc) in acc.iter_mut().enumerate() {
            for (v, acc) in acc.iter_mut().enumerate() {
                acc.copy_from_slice(&sums[at(t, v)..at(t, v) + LANES]);
            }
        }
    }
    let rows: [&[f64]; IT] = std::array::from_fn(|t| &x[(i0 + t) * xs..(i0 + t) * xs + len]);
    // Columns in steps of one cache line of each row, whose line XHT_PREFETCH_COLUMNS on is
    // requested first.
    let mut j0 = 0;
    while j0 < len {
        for row in &rows {
            prefetch(row, j0 + XHT_PREFETCH_COLUMNS);
        }
        for j in j0..(j0 + LINE).min(len) {
            let hr = &ht[j * kp + v0 * LANES..j * kp + (v0 + RV) * LANES];
            // By value: with references the compiler kept the sums on the stack, scalar.
            let hv: [[f64; LANES]; RV] = std::array::from_fn(|v| *fixed(&hr[v * LANES..]));
            for t in 0..IT {
                let xb = rows[t][j];
                for v in 0..RV {
                    for l in 0..LANES {
                        acc[t][v][l] = xb.mul_add(hv[v][l], acc[t][v][l]);
                    }
                }
            }
        }
        j0 += LINE;
    }
    for (t, acc) in acc.iter().enumerate() {
        for (v, acc) in acc.iter().enumerate() {
            sums[at(t, v)..at(t, v) + LANES].copy_from_slice(acc);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random(len: usize, seed: u64) -> Vec<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..len).map(|_| rng.r#gen::<f64>()).collect()
    }

    /// Shapes that exercise every tail: rows not a multiple of the chunk or tile, columns not a
    /// multiple of 16 or 8, k not a multiple of 10 or 8, and k > 32 (two sweeps of `Hᵀ`).
    const SHAPES: [(usize, usize, usize); 6] = [
        (1, 1, 1),
        (7, 13, 3),
        (37, 45, 10),
        (64, 131, 20),
        (9, 40, 33),
        (50, 70, 41),
    ];

    #[test]
    fn wt_x_matches_the_naive_product_on_column_ranges() {
        for (s, &(m, n, k)) in SHAPES.iter().enumerate() {
            let x = random(m * n, s as u64);
            let w = random(m * k, 100 + s as u64);
            for chunk in [ChunkRows::Streaming, ChunkRows::Cached] {
                // Two ranges, the second starting mid-row; the rest of `out` must stay NaN.
                let cut = n / 3;
                let mut out = vec![f64::NAN; k * n];
                wt_x_columns(&w, (m, k), &x, n, 0..cut, &mut out, n, chunk);
                wt_x_columns(&w, (m, k), &x, n, cut..n, &mut out, n, chunk);
                for r in 0..k {
                    for j in 0..n {
                        let want: f64 = (0..m).map(|i| w[i * k + r] * x[i * n + j]).sum();
                        let got = out[r * n + j];
                        assert!(
                            (got - want).abs() <= 1e-12 * want.abs().max(1.0),
                            "{m}×{n}, k = {k}, {chunk:?}: ({r}, {j}) {got} vs {want}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn xht_matches_the_naive_product_over_blocks() {
        for (s, &(m, n, k)) in SHAPES.iter().enumerate() {
            let x = random(m * n, 200 + s as u64);
            let h = random(k * n, 300 + s as u64);
            let mut acc = XhtAccumulator::new(m, k);
            // Stale sums from an earlier pass must be replaced by the first block.
            acc.sums.fill(1e300);
            let mut j0 = 0;
            for len in [5, 1, 17, 64].iter().cycle() {
                if j0 >= n {
                    break;
                }
                let end = (j0 + len).min(n);
                acc.add_columns(&x, n, &h, n, j0..end, j0 == 0);
                j0 = end;
            }
            let mut xht = vec![f64::NAN; m * k];
            acc.write_into(&mut xht);
            for i in 0..m {
                for r in 0..k {
                    let want: f64 = (0..n).map(|j| x[i * n + j] * h[r * n + j]).sum();
                    let got = xht[i * k + r];
                    assert!(
                        (got - want).abs() <= 1e-12 * want.abs().max(1.0),
                        "{m}×{n}, k = {k}: ({i}, {r}) {got} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn sums_run_in_index_order() {
        // Each entry is one FMA chain in index order, so a sum that depends on the order shows
        // it: 1e16 + 1 + 1 − 1e16 is 0 summed left to right (each +1 is lost), 2 otherwise.
        let x = [1e16, 1.0, 1.0, -1e16];
        let w = [1.0];
        let mut out = [f64::NAN; 1];
        // X as a 4×1 column: WᵀX sums over the rows.
        wt_x_columns(
            &w.repeat(4),
            (4, 1),
            &x,
            1,
            0..1,
            &mut out,
            1,
            ChunkRows::Streaming,
        );
        assert_eq!(out[0], 0.0);
        // X as a 1×4 row, H = ones: XHᵀ sums over the columns.
        let mut acc = XhtAccumulator::new(1, 1);
        acc.add_columns(&x, 4, &[1.0; 4], 4, 0..4, true);
        let mut xht = [f64::NAN];
        acc.write_into(&mut xht);
        assert_eq!(xht[0], 0.0);
    }
}
