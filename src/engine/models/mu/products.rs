//! The products of a multiplicative-update iteration, on the whole X or in one blocked pass:
//! `WᵀX`, `XHᵀ`, `G·H` for a k×k Gram matrix G, and the single pass over a large X that forms
//! `(WᵀX)_B`, lets the model update `H_B`, and accumulates `XHᵀ` while `X_B` is in cache.
//! Never an m×n temporary (docs/models.md §3.1).

use crate::engine::linalg::gram::a_bt_into;
use crate::engine::linalg::thin::{ChunkRows, XhtAccumulator, wt_x_columns_split, wt_x_into};
use crate::engine::linalg::{Op, gemm_into};
use ndarray::Array2;

/// X larger than this (bytes) takes the blocked single pass over X ([`blocked_pass_over_x`]);
/// smaller X stays in cache between the two products and takes one product per pass (thin
/// `WᵀX` and `WᵀW·H`, the lane kernel's `XHᵀ`), which is as fast or faster there
/// (docs/performance.md, "Blocked single pass over a large X (`models/nmf`, `fused_h_step`;
/// RPNMF's H step)").
pub const FUSED_MIN_BYTES: usize = 4 << 20;
/// Bytes of X per column block of the single pass: 4096 columns at m = 4096. Long row
/// segments matter more than keeping the block in cache for the second product
/// (docs/performance.md, "Blocked single pass over a large X (`models/nmf`, `fused_h_step`;
/// RPNMF's H step)").
const X_BLOCK_BYTES: usize = 128 << 20;

/// `out ← WᵀX` over all columns (X m×n, W m×k, out k×n): the thin kernel with X in cache
/// (faster than faer's packing GEMM for this thin product; docs/performance.md, "Thin `WᵀX`
/// (`linalg/thin.rs`, `wt_x_columns`)"), faer when an array is not contiguous row-major. The
/// small-X steps of the MU models.
pub fn wt_x_whole(out: &mut Array2<f64>, w: &Array2<f64>, x: &Array2<f64>) {
    wt_x_into(out, w, x, ChunkRows::Cached);
}

/// `out ← XHᵀ` over all columns (X m×n, H k×n, out m×k): the lane kernel
/// [`crate::engine::linalg::gram::a_bt_into`] with X in cache. faer when an array is not
/// contiguous row-major, and for X above [`FUSED_MIN_BYTES`], where the m×k lane sums would no
/// longer stay in cache across the column chunks.
pub fn xh_t_whole(out: &mut Array2<f64>, x: &Array2<f64>, h: &Array2<f64>) {
    let (m, n) = x.dim();
    let k = h.nrows();
    let small = m * n * size_of::<f64>() <= FUSED_MIN_BYTES;
    if let (true, Some(xs), Some(hs), Some(os)) =
        (small, x.as_slice(), h.as_slice(), out.as_slice_mut())
    {
        a_bt_into(xs, hs, (m, k, n), os);
    } else {
        gemm_into(
            &mut out.view_mut(),
            1.0,
            x.view(),
            Op::N,
            h.view(),
            Op::T,
            false,
        );
    }
}

/// `out ← G·H` for a symmetric k×k G (WᵀW) and H k×n as [`wt_x_whole`]`(G, H)`, which is
/// `GᵀH` = `G·H`: the thin kernel, every entry one FMA chain over b = 0..k in order (faer packs
/// both operands of this thin product and is slower here; docs/performance.md, "Thin `WᵀX`
/// (`linalg/thin.rs`, `wt_x_columns`)").
pub fn gram_times(out: &mut Array2<f64>, g: &Array2<f64>, h: &Array2<f64>) {
    wt_x_whole(out, g, h);
}

/// Columns per block of the single pass over X: [`X_BLOCK_BYTES`] of X, at least 64.
pub fn x_block_columns(m: usize, n: usize) -> usize {
    (X_BLOCK_BYTES / (m.max(1) * size_of::<f64>())).clamp(64, n.max(64))
}

/// One blocked pass over X (m×n row-major `x`; W m×k row-major `w`): for each block B of
/// `block` columns, `(WᵀX)_B` into those columns of `wtx` (k×n row-major), then
/// `update(wtx, h, j0, len)` sets columns `j0..j0 + len` of H (k×n row-major `h`), then
/// `XHᵀ += X_B H_Bᵀ` into `xht` (m×k row-major, replaced), while `X_B` may still be in cache. The
/// blocked single pass of NMF and of RPNMF's H step; both products are the thin kernels of
/// [`crate::engine::linalg::thin`] (`acc` is their `XHᵀ` workspace), split over the calling
/// thread's threads by columns (`WᵀX`) and by rows of X (`XHᵀ`) with the bits of one thread;
/// `update` runs on the calling thread.
pub(crate) fn blocked_pass_over_x(
    x: &[f64],
    (m, n, k): (usize, usize, usize),
    w: &[f64],
    block: usize,
    (wtx, h, xht): (&mut [f64], &mut [f64], &mut [f64]),
    acc: &mut XhtAccumulator,
    mut update: impl FnMut(&[f64], &mut [f64], usize, usize),
) {
    let block = block.max(1);
    let mut j0 = 0;
    while j0 < n {
        let len = block.min(n - j0);
        wt_x_columns_split(w, (m, k), x, n, j0..j0 + len, wtx, n, ChunkRows::Streaming);
        update(wtx, h, j0, len);
        acc.add_columns(x, n, h, n, j0..j0 + len, j0 == 0);
        j0 += len;
    }
    acc.write_into(xht);
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn gram_times_is_g_h_summed_over_b_in_order() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        for &(k, n) in &[(1, 5), (3, 17), (10, 1797), (21, 40)] {
            let w = Array2::from_shape_simple_fn((2 * k + 3, k), || rng.r#gen::<f64>());
            let g = w.t().dot(&w);
            let h = Array2::from_shape_simple_fn((k, n), || rng.r#gen::<f64>());
            let mut out = Array2::from_elem((k, n), f64::NAN);
            gram_times(&mut out, &g, &h);
            for a in 0..k {
                for j in 0..n {
                    // One FMA chain over b down G's column a (the kernel computes GᵀH), which is
                    // G's row a for symmetric G.
                    let want = (0..k).fold(0.0f64, |acc, b| g[[b, a]].mul_add(h[[b, j]], acc));
                    assert_eq!(out[[a, j]].to_bits(), want.to_bits(), "k {k} ({a}, {j})");
                    let plain: f64 = (0..k).map(|b| g[[a, b]] * h[[b, j]]).sum();
                    assert!((out[[a, j]] - plain).abs() <= 1e-12 * plain.abs().max(1.0));
                }
            }
        }
    }
}
