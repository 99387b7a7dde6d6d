//! The fused H pass of a multiplicative-update iteration: `(WᵀW)·H`, the multiplicative update
//! of H and the Gram matrix `HHᵀ` of the new H, in one sweep over the columns of H. Models
//! whose H rule has more terms than NMF's (NMFCC's links) pass them as [`Addends`] to
//! [`update_h_columns_plus`].
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
        add: None,
    });
}

/// Terms a model adds to the numerator and the denominator of the H update, beyond the NMF
/// parts `WᵀX` and `WᵀW·H` (e.g. the link terms of NMFCC, docs/models.md §3.5): two k×n
/// row-major arrays laid out like the `wtx` they go with (same row stride and column offset).
#[derive(Clone, Copy, Debug)]
pub struct Addends<'a> {
    pub num: &'a [f64],
    pub den: &'a [f64],
}

/// [`update_h_columns`] with terms added to both parts of the rule:
/// `H ← max(H ⊙ (WᵀX + num) ⊘ max(WᵀW·H + den, ε), FLOOR)`. Each denominator entry is the same
/// FMA chain over b = 0..k as there, plus `den` added last; each numerator is `WᵀX + num`. So
/// addends that are all +0 give exactly the bits of [`update_h_columns`].
#[expect(clippy::too_many_arguments, reason = "see update_h_columns")]
pub fn update_h_columns_plus(
    work: &mut HPassWork,
    gram: &[f64],
    h: &mut [f64],
    hs: usize,
    h0: usize,
    wtx: &[f64],
    xs: usize,
    x0: usize,
    len: usize,
    add: Addends<'_>,
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
        add: Some(add),
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
    /// Addends of [`update_h_columns_plus`]; `None` compiles the loops without them.
    add: Option<Addends<'a>>,
}

impl pulp::WithSimd for Pass<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        match self.add {
            None => self.columns::<false>(Addends { num: &[], den: &[] }),
            Some(add) => self.columns::<true>(add),
        }
    }
}

impl Pass<'_> {
    /// The chunks of the range, with the addends when `ADD`.
    #[inline(always)]
    fn columns<const ADD: bool>(self, add: Addends<'_>) {
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
            add: _,
        } = self;
        let mut c = 0;
        while c < len {
            let w = (len - c).min(CHUNK);
            if w == CHUNK {
                chunk::<CHUNK, ADD>(work, gram, h, (hs, h0 + c), wtx, (xs, x0 + c), add);
            } else {
                chunk_tail::<ADD>(work, gram, h, (hs, h0 + c), wtx, (xs, x0 + c), add, w);
            }
            c += w;
        }
    }
}

/// One full chunk of `W` = CHUNK columns (constant width, so the compiler keeps the
/// accumulators in registers and vectorizes across columns). `(hs, h0)` and `(xs, x0)` are the
/// row strides and first columns of H and of `wtx` (and of the addends, when `ADD`).
#[inline(always)]
fn chunk<const W: usize, const ADD: bool>(
    work: &mut HPassWork,
    gram: &[f64],
    h: &mut [f64],
    (hs, h0): (usize, usize),
    wtx: &[f64],
    (xs, x0): (usize, usize),
    add: Addends<'_>,
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
        if ADD {
            let d = row::<W>(add.den, a * xs + x0);
            for j in 0..W {
                acc[j] += d[j];
            }
        }
        work.den[a * W..(a + 1) * W].copy_from_slice(&acc);
    }
    for a in 0..k {
        let num = row::<W>(wtx, a * xs + x0);
        let den = &work.den[a * W..(a + 1) * W];
        let ha = &mut h[a * hs + h0..a * hs + h0 + W];
        if ADD {
            let na = row::<W>(add.num, a * xs + x0);
            for j in 0..W {
                ha[j] = mu_rule(ha[j], num[j] + na[j], den[j]);
            }
        } else {
            for j in 0..W {
                ha[j] = mu_rule(ha[j], num[j], den[j]);
            }
        }
    }
    // The new columns into the lane sums of HHᵀ's upper triangle.
    add_to_lanes(h, hs, k, h0..h0 + W, &mut work.gram_lanes);
}

/// A last chunk narrower than CHUNK: the same operations in the same order, one column at a time.
#[inline(always)]
#[expect(clippy::too_many_arguments, reason = "see update_h_columns")]
fn chunk_tail<const ADD: bool>(
    work: &mut HPassWork,
    gram: &[f64],
    h: &mut [f64],
    (hs, h0): (usize, usize),
    wtx: &[f64],
    (xs, x0): (usize, usize),
    add: Addends<'_>,
    w: usize,
) {
    let k = work.k;
    for a in 0..k {
        for j in 0..w {
            let mut acc = 0.0f64;
            for b in 0..k {
                acc = gram[a * k + b].mul_add(h[b * hs + h0 + j], acc);
            }
            if ADD {
                acc += add.den[a * xs + x0 + j];
            }
            work.den[a * CHUNK + j] = acc;
        }
    }
    for a in 0..k {
        for j in 0..w {
            let z = &mut h[a * hs + h0 + j];
            let mut num = wtx[a * xs + x0 + j];
            if ADD {
                num += add.num[a * xs + x0 + j];
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::EPS_DIV;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Zero addends give the bits of the plain pass; nonzero ones give the rule with the
    /// addends, entry by entry as written (the denominator's FMA chain, then `+ den`), on a
    /// range with full chunks and a tail (len 75 = 2·32 + 11) that starts inside the arrays.
    #[test]
    fn addends_enter_both_parts_and_zero_addends_change_nothing() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let (k, n, h0, len) = (5, 90, 7, 75);
        let mut draw = |r: usize, c: usize| -> Vec<f64> {
            (0..r * c).map(|_| rng.r#gen::<f64>() + 0.01).collect()
        };
        let h: Vec<f64> = draw(k, n);
        let wtx = draw(k, n);
        let g0 = draw(k, k);
        // A symmetric Gram matrix.
        let gram: Vec<f64> = (0..k * k)
            .map(|e| g0[e] + g0[(e % k) * k + e / k])
            .collect();
        let (num, den) = (draw(k, n), draw(k, n));
        let zeros = vec![0.0; k * n];
        let run = |add: Option<Addends<'_>>| {
            let mut work = HPassWork::new(k);
            let mut h = h.clone();
            match add {
                None => update_h_columns(&mut work, &gram, &mut h, n, h0, &wtx, n, h0, len),
                Some(a) => {
                    update_h_columns_plus(&mut work, &gram, &mut h, n, h0, &wtx, n, h0, len, a)
                }
            }
            let mut hht = vec![0.0; k * k];
            work.gram_into(&mut hht);
            (h, hht)
        };
        let plain = run(None);
        let zero = run(Some(Addends {
            num: &zeros,
            den: &zeros,
        }));
        assert_eq!(plain, zero);
        let (got, _) = run(Some(Addends {
            num: &num,
            den: &den,
        }));
        for a in 0..k {
            for j in 0..n {
                let e = a * n + j;
                let want = if (h0..h0 + len).contains(&j) {
                    let chain =
                        (0..k).fold(0.0f64, |acc, b| gram[a * k + b].mul_add(h[b * n + j], acc));
                    let r = (wtx[e] + num[e]) / (chain + den[e]).max(EPS_DIV);
                    (h[e] * r).max(crate::engine::models::mu::FLOOR)
                } else {
                    h[e]
                };
                assert_eq!(got[e].to_bits(), want.to_bits(), "({a}, {j})");
            }
        }
    }
}
