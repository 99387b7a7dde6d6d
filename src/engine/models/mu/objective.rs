//! The reconstruction term `‖X − WH‖²_F` of the MU models: cheaply by the trace identity
//! from the products an iteration formed anyway ([`trace_reconstruction`]), and exactly from
//! the residual in column blocks ([`ExactResidual`]), which NMF and GNMF run every 50
//! iterations to bound the identity's cancellation error (docs/models.md (3.5), §10.5).

use crate::engine::linalg::gram::{LANES, sum_lanes};
use crate::engine::linalg::parallel::parts_for;
use crate::engine::linalg::thin::{ChunkRows, wt_x_columns};
use crate::engine::linalg::{Op, for_each_part, gemm_into, threads};
use ndarray::{Array2, ArrayViewMut2, Zip, s};

/// Recompute the objective exactly (from the residual, in column blocks) every this many
/// iterations, bounding the cancellation error of the trace identity (docs/models.md §10.5).
pub const EXACT_EVERY: usize = 50;
/// Column block of the exact residual: the buffer is m × EXACT_BLOCK, never m × n.
const EXACT_BLOCK: usize = 256;

/// `‖X‖² − 2⟨W, XHᵀ⟩ + ⟨WᵀW, HHᵀ⟩` from the cached products, a negative value (rounding)
/// clamped at 0 and a NaN kept: a non-finite W or H gives `∞ − ∞` here, and the fit loop must
/// see it (docs/models.md §10.4; `f64::max` would turn the NaN into 0).
pub fn trace_reconstruction(
    x_norm2: f64,
    w: &Array2<f64>,
    xht: &Array2<f64>,
    wtw: &Array2<f64>,
    hht: &Array2<f64>,
) -> f64 {
    let cross: f64 = Zip::from(w).and(xht).fold(0.0, |acc, &a, &b| acc + a * b);
    let gram: f64 = Zip::from(wtw).and(hht).fold(0.0, |acc, &a, &b| acc + a * b);
    let f = x_norm2 - 2.0 * cross + gram;
    if f < 0.0 { 0.0 } else { f }
}

/// `‖X‖²_F` in [`LANES`] partial sums (entry t of X's memory order into lane `t mod LANES`,
/// then [`sum_lanes`]): one chain of additions is bound by the adder's latency and was a tenth
/// of a small fit's fixed cost (the 1,797 × 64 digits from Python). Fixed order, so fixed bits.
pub fn squared_norm(x: &Array2<f64>) -> f64 {
    let Some(values) = x.as_slice_memory_order() else {
        return x.iter().map(|v| v * v).sum();
    };
    let mut lanes = [0.0f64; LANES];
    let chunks = values.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for (l, v) in lanes.iter_mut().zip(c) {
            *l += v * v;
        }
    }
    for (l, v) in lanes.iter_mut().zip(rest) {
        *l += v * v;
    }
    sum_lanes(&lanes)
}

/// `‖X − WH‖²_F` from the residual, in column blocks (no m×n temporary); holds its buffer
/// (m×EXACT_BLOCK and Wᵀ, allocated on first use).
#[derive(Debug, Default, Clone)]
pub struct ExactResidual {
    buf: Option<Vec<f64>>,
}

impl ExactResidual {
    pub fn new() -> Self {
        Self::default()
    }

    /// `‖X − WH‖²_F`. `small` (X in cache, the MU models' reference step): each block
    /// `(WH)_B` comes from the thin kernel as `(Wᵀ)ᵀ H_B` (`Wᵀ` k×m, formed per call), then the
    /// residual's squares are summed in one pass, in eight partial sums, which beats faer's
    /// `X_B − W H_B` on a copy of `X_B` with one chain of additions. Large X (and arrays not
    /// contiguous row-major) keep faer, which was faster there (docs/performance.md, "Exact
    /// objective (`Nmf::exact_objective`)").
    pub fn norm2(&mut self, x: &Array2<f64>, w: &Array2<f64>, h: &Array2<f64>, small: bool) -> f64 {
        let (m, n) = x.dim();
        let k = w.ncols();
        let block = EXACT_BLOCK.min(n.max(1));
        let buf = self.buf.get_or_insert_with(|| vec![0.0; m * block + k * m]);
        let (wh, wt) = buf.split_at_mut(m * block);
        if let (true, Some(xs), Some(hs)) = (small, x.as_slice(), h.as_slice()) {
            for (t, w) in wt.iter_mut().zip(w.t().iter()) {
                *t = *w;
            }
            // Eight partial sums (a single chain of additions is latency-bound).
            let mut lanes = [0.0f64; LANES];
            let mut start = 0;
            while start < n {
                let len = block.min(n - start);
                wt_x_columns(
                    wt,
                    (k, m),
                    &hs[start..],
                    n,
                    0..len,
                    wh,
                    len,
                    ChunkRows::Cached,
                );
                for r in 0..m {
                    let xr = &xs[r * n + start..r * n + start + len];
                    let pr = &wh[r * len..(r + 1) * len];
                    let (xc, pc) = (xr.chunks_exact(LANES), pr.chunks_exact(LANES));
                    let (xt, pt) = (xc.remainder(), pc.remainder());
                    for (a, b) in xc.zip(pc) {
                        for l in 0..LANES {
                            lanes[l] += (a[l] - b[l]) * (a[l] - b[l]);
                        }
                    }
                    for (l, (a, b)) in xt.iter().zip(pt).enumerate() {
                        lanes[l] += (a - b) * (a - b);
                    }
                }
                start += len;
            }
            return sum_lanes(&lanes);
        }
        // Each block's sum of squares, then the blocks added in order: the same bits whether
        // the blocks are formed on one thread or several (`linalg::parallel`).
        let blocks = n.div_ceil(block);
        let mut sums = vec![0.0; blocks];
        let per = blocks.div_ceil(parts_for(threads()));
        if per >= blocks {
            block_squares(x, w, h, block, wh, &mut sums, 0);
        } else {
            let parts: Vec<(usize, &mut [f64])> = sums
                .chunks_mut(per)
                .enumerate()
                .map(|(p, s)| (p * per, s))
                .collect();
            for_each_part(parts, |_, (b0, s)| {
                let mut buf = vec![0.0; m * block];
                block_squares(x, w, h, block, &mut buf, s, b0);
            });
        }
        sums.iter().sum()
    }
}

/// The sums of squares of `X_B − W·H_B` for the column blocks `b0..b0 + sums.len()` of `block`
/// columns, into `sums`, by faer on `buf` (at least m×block).
fn block_squares(
    x: &Array2<f64>,
    w: &Array2<f64>,
    h: &Array2<f64>,
    block: usize,
    buf: &mut [f64],
    sums: &mut [f64],
    b0: usize,
) {
    let (m, n) = x.dim();
    for (b, total) in sums.iter_mut().enumerate() {
        let start = (b0 + b) * block;
        let end = (start + block).min(n);
        let len = end - start;
        // A contiguous m×len view of the buffer, so the GEMM writes in place.
        let Ok(mut r) = ArrayViewMut2::from_shape((m, len), &mut buf[..m * len]) else {
            *total = f64::NAN;
            continue;
        };
        r.assign(&x.slice(s![.., start..end]));
        let hb = h.slice(s![.., start..end]);
        gemm_into(&mut r, -1.0, w.view(), Op::N, hb, Op::N, true);
        *total = r.iter().map(|v| v * v).sum::<f64>();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn trace_reconstruction_clamps_rounding_but_keeps_a_nan() {
        let (w, xht) = (array![[1.0]], array![[2.0]]);
        let (wtw, hht) = (array![[1.0]], array![[3.0]]);
        // 4 − 2·2 + 3 = 3; 0.5 − 4 + 3 < 0 is rounding of a tiny residual: 0.
        assert_eq!(trace_reconstruction(4.0, &w, &xht, &wtw, &hht), 3.0);
        assert_eq!(trace_reconstruction(0.5, &w, &xht, &wtw, &hht), 0.0);
        let inf = array![[f64::INFINITY]];
        assert!(trace_reconstruction(4.0, &inf, &xht, &inf, &hht).is_nan());
    }
}
