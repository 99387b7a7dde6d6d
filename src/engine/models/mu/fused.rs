//! The fused H pass of a multiplicative-update iteration: `(WᵀW)·H`, the multiplicative update
//! of H and the Gram matrix `HHᵀ` of the new H, in one sweep over the columns of H.
//!
//! It serves the blocked single pass over a large X ([`super::blocked_pass_over_x`]): H is
//! updated block by block between `(WᵀX)_B` and `XHᵀ += X_B H_Bᵀ`, so the k×k×n products must
//! work on any column range. Each chunk of [`CHUNK`] columns is read once from L1: its
//! denominator is formed in a k×CHUNK buffer, H is updated in place, and the new columns are
//! added into lane-wise partial sums of the upper triangle of `HHᵀ` (symmetric, so half the
//! flops). On small X it is no faster than separate products, so small X keeps one product
//! per pass (docs/performance.md, "Fused H pass (`models/mu/fused.rs`)").
//!
//! Summation orders are fixed by the code, never by the instruction set: every denominator
//! entry sums over `b = 0..k` in order, and `HHᵀ` keeps eight partial sums per entry (column
//! `j` of a chunk goes to lane `j mod 8`, by `linalg::gram::add_to_lanes`, which `HHᵀ` of the
//! other steps shares) that are added in a fixed order at the end. So runs are bit-for-bit
//! repeatable on one machine; against faer's GEMMs only the rounding of the sums differs.

use super::rule::mu_rule;
use crate::engine::linalg::gram::{add_to_lanes, lane_sums_len, lanes_into};
use faer::traits::pulp;

/// Columns per chunk: the k×CHUNK denominator buffer and the chunk of H stay in L1.
pub const CHUNK: usize = 32;

/// Workspace of the fused pass for rank k (allocated once, reused by every iteration).
#[derive(Debug, Clone)]
pub struct HPassWork {
    k: usize,
    /// k×CHUNK denominators `(WᵀW·H)` of the current chunk.
    den: Vec<f64>,
    /// Upper triangle of `HHᵀ`, row by row (`a ≤ b`), eight partial sums each.
    gram_lanes: Vec<f64>,
}

impl HPassWork {
    pub fn new(k: usize) -> Self {
        Self {
            k,
            den: vec![0.0; k * CHUNK],
            gram_lanes: vec![0.0; lane_sums_len(k)],
        }
    }

    /// Start a new `HHᵀ` accumulation.
    pub fn reset_gram(&mut self) {
        self.gram_lanes.fill(0.0);
    }

    /// Write the accumulated `HHᵀ` (both triangles) into `hht` (k×k row-major).
    pub fn gram_into(&self, hht: &mut [f64]) {
        lanes_into(&self.gram_lanes, self.k, hht);
    }

    /// Add columns `cols` of H (k×n row-major in `h`, row stride `hs`) into the `HHᵀ`
    /// accumulator, as [`update_h_columns`] adds the columns it updated: for a model whose H
    /// update is not this pass's (GNMF's graph term), the same `HHᵀ` bit for bit when the
    /// ranges are the same.
    pub fn add_gram_columns(&mut self, h: &[f64], hs: usize, cols: std::ops::Range<usize>) {
        pulp::Arch::new().dispatch(AddGram {
            work: self,
            h,
            hs,
            cols,
        });
    }
}

/// [`HPassWork::add_gram_columns`] as a pulp job.
struct AddGram<'a> {
    work: &'a mut HPassWork,
    h: &'a [f64],
    hs: usize,
    cols: std::ops::Range<usize>,
}

impl pulp::WithSimd for AddGram<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let k = self.work.k;
        add_to_lanes(self.h, self.hs, k, self.cols, &mut self.work.gram_lanes);
    }
}

/// Update columns `h0..h0+len` of H (k×n row-major in `h`, row stride `hs`), whose numerators
/// `(WᵀX)` sit at columns `x0..x0+len` of `wtx` (row stride `xs`); `gram` is `WᵀW` (k×k
/// row-major). `H ← max(H ⊙ WᵀX ⊘ max(WᵀW·H, ε), FLOOR)`, then the new columns are added into
/// the `HHᵀ` accumulator of `work`.
#[expect(
    clippy::too_many_arguments,
    reason = "two strided views and their offsets; a struct would only rename them"
)]
pub fn update_h_columns(
    work: &mut HPassWork,
    gram: &[f64],
    h: &mut [f64],
    hs: usize,
    h0: usize,
    wtx: &[f64],
    xs: usize,
    x0: usize,
    len: usize,
) {
    pulp::Arch::new().dispatch(Pass {
        work,
        gram,
        h,
        hs,
        h0,
        wtx,
        xs,
        x0,
        len,
    });
}

/// The arguments of [`update_h_columns`], run by pulp with the best instruction set of the CPU
/// (AVX-512 or AVX2 + FMA where present): the loops below are written for the compiler to vectorize, and
/// they only get wide registers when inlined into pulp's target-feature context.
struct Pass<'a> {
    work: &'a mut HPassWork,
    gram: &'a [f64],
    h: &'a mut [f64],
    hs: usize,
    h0: usize,
    wtx: &'a [f64],
    xs: usize,
    x0: usize,
    len: usize,
}

impl pulp::WithSimd for Pass<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let Pass {
            work,
            gram,
            h,
            hs,
            h0,
            wtx,
            xs,
            x0,
            len,
        } = self;
        let mut c = 0;
        while c < len {
            let w = (len - c).min(CHUNK);
            if w == CHUNK {
                chunk::<CHUNK>(work, gram, h, hs, h0 + c, wtx, xs, x0 + c);
            } else {
                chunk_tail(work, gram, h, hs, h0 + c, wtx, xs, x0 + c, w);
            }
            c += w;
        }
    }
}

/// One full chunk of `W` = CHUNK columns (constant width, so the compiler keeps the
/// accumulators in registers and vectorizes across columns).
#[inline(always)]
#[expect(clippy::too_many_arguments, reason = "see update_h_columns")]
fn chunk<const W: usize>(
    work: &mut HPassWork,
    gram: &[f64],
    h: &mut [f64],
    hs: usize,
    h0: usize,
    wtx: &[f64],
    xs: usize,
    x0: usize,
) {
    let k = work.k;
    // Denominators of the whole chunk first: every row of the new H needs all old rows.
    for a in 0..k {
        let mut acc = [0.0f64; W];
        for b in 0..k {
            let g = gram[a * k + b];
            let hb = row::<W>(h, b * hs + h0);
            for j in 0..W {
                acc[j] = g.mul_add(hb[j], acc[j]);
            }
        }
        work.den[a * W..(a + 1) * W].copy_from_slice(&acc);
    }
    for a in 0..k {
        let num = row::<W>(wtx, a * xs + x0);
        let den = &work.den[a * W..(a + 1) * W];
        let ha = &mut h[a * hs + h0..a * hs + h0 + W];
        for j in 0..W {
            ha[j] = mu_rule(ha[j], num[j], den[j]);
        }
    }
    // The new columns into the lane sums of HHᵀ's upper triangle.
    add_to_lanes(h, hs, k, h0..h0 + W, &mut work.gram_lanes);
}

/// A last chunk narrower than CHUNK: the same operations in the same order, one column at a time.
#[inline(always)]
#[expect(clippy::too_many_arguments, reason = "see update_h_columns")]
fn chunk_tail(
    work: &mut HPassWork,
    gram: &[f64],
    h: &mut [f64],
    hs: usize,
    h0: usize,
    wtx: &[f64],
    xs: usize,
    x0: usize,
    w: usize,
) {
    let k = work.k;
    for a in 0..k {
        for j in 0..w {
            let mut acc = 0.0f64;
            for b in 0..k {
                acc = gram[a * k + b].mul_add(h[b * hs + h0 + j], acc);
            }
            work.den[a * CHUNK + j] = acc;
        }
    }
    for a in 0..k {
        for j in 0..w {
            let z = &mut h[a * hs + h0 + j];
            let num = wtx[a * xs + x0 + j];
            *z = mu_rule(*z, num, work.den[a * CHUNK + j]);
        }
    }
    add_to_lanes(h, hs, k, h0..h0 + w, &mut work.gram_lanes);
}

/// `W` consecutive elements from `start` (a constant length, so bounds checks fold away).
#[inline(always)]
fn row<const W: usize>(s: &[f64], start: usize) -> &[f64] {
    &s[start..start + W]
}
