//! `AAᵀ` of a short, wide row-major A (k×n, k ≪ n): the HHᵀ of the multiplicative rules and of
//! every candidate RPNMF's safeguard evaluates.
//!
//! faer packs both operands of a product this thin, and on digits (H 10×1797) the packing and
//! its 16×8 micro-kernel were most of the 12 % that GEMMs took of an RPNMF run with the
//! protocol's triplets (five HHᵀ per iteration, one per candidate). Here the rows are read in
//! place, a column chunk at a time so that the chunk of every row stays in L1, and only the
//! upper triangle is formed (half the flops).
//!
//! Summation order is fixed by the code: entry (a, b) keeps [`LANES`] partial sums, column j
//! going to lane `j mod LANES` in column order, and the lanes are added pairwise in a fixed
//! order at the end. So the result is the same on every instruction set (pulp runs the loops
//! with the widest the CPU has).

use super::thin::fixed;
use faer::traits::pulp;

/// Partial sums per entry (one 512-bit vector).
pub(crate) const LANES: usize = 8;
/// Columns per chunk: 10 rows × 256 × 8 bytes = 20 KiB in L1 at k = 10.
const CHUNK: usize = 256;

/// `out ← A·Aᵀ` for A k×n row-major in `a` (`out` k×k row-major, both triangles written).
pub(crate) fn gram_of_rows_into(a: &[f64], (k, n): (usize, usize), out: &mut [f64]) {
    assert!(a.len() >= k * n, "A is smaller than k×n");
    assert!(out.len() >= k * k, "out is smaller than k×k");
    LANE_SUMS.with(|cell| {
        // The thread's buffer of lane sums, grown on first use: no allocation per call.
        let mut lanes = cell.borrow_mut();
        let len = lane_sums_len(k);
        if lanes.len() < len {
            lanes.resize(len, 0.0);
        }
        let lanes = &mut lanes[..len];
        lanes.fill(0.0);
        pulp::Arch::new().dispatch(Gram { a, k, n, lanes });
        lanes_into(lanes, k, out);
    });
}

thread_local! {
    /// Lane sums of [`gram_of_rows_into`], reused by every call on the thread (HHᵀ is formed
    /// every iteration, five times per iteration in RPNMF).
    static LANE_SUMS: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Length of the lane sums of a k×k Gram matrix: the upper triangle, [`LANES`] each.
pub(crate) fn lane_sums_len(k: usize) -> usize {
    k * (k + 1) / 2 * LANES
}

/// `lanes += ` the columns `cols` of the k rows of A (row stride `stride` in `a`), entry (r, c),
/// r ≤ c, of the upper triangle row by row, column j into lane `(j − cols.start) mod LANES`, in
/// column order. Ranges that start at multiples of [`LANES`] after one another give the sums of
/// their union. Shared by [`gram_of_rows_into`] and NMF's fused H pass, which forms HHᵀ chunk by
/// chunk while it updates H; call it inside a pulp context.
#[inline(always)]
pub(crate) fn add_to_lanes(
    a: &[f64],
    stride: usize,
    k: usize,
    cols: std::ops::Range<usize>,
    lanes: &mut [f64],
) {
    let (j0, j1) = (cols.start, cols.start + cols.len() / LANES * LANES);
    if j1 > j0 {
        // Tiles of TILE_ROWS rows × TILE_COLS columns of the triangle, starting on the
        // diagonal: entries below it that a tile covers are formed and dropped.
        let mut r = 0;
        while r < k {
            let rt = (k - r).min(TILE_ROWS);
            let mut c = r;
            while c < k {
                let ct = (k - c).min(TILE_COLS);
                let t = Tile {
                    a,
                    stride,
                    k,
                    r,
                    c,
                    cols: j0..j1,
                };
                match (rt, ct) {
                    (TILE_ROWS, TILE_COLS) => tile::<TILE_ROWS, TILE_COLS>(t, lanes),
                    (TILE_ROWS, 4) => tile::<TILE_ROWS, 4>(t, lanes),
                    (TILE_ROWS, 3) => tile::<TILE_ROWS, 3>(t, lanes),
                    (TILE_ROWS, 2) => tile::<TILE_ROWS, 2>(t, lanes),
                    (TILE_ROWS, _) => tile::<TILE_ROWS, 1>(t, lanes),
                    (_, TILE_COLS) => tile::<1, TILE_COLS>(t, lanes),
                    (_, 4) => tile::<1, 4>(t, lanes),
                    (_, 3) => tile::<1, 3>(t, lanes),
                    (_, 2) => tile::<1, 2>(t, lanes),
                    _ => tile::<1, 1>(t, lanes),
                }
                c += ct;
            }
            r += rt;
        }
    }
    // The last columns (fewer than LANES), one at a time into their lanes.
    if j1 < cols.end {
        let mut p = 0;
        for r in 0..k {
            for c in r..k {
                for j in j1..cols.end {
                    let s = &mut lanes[p * LANES + (j - j0) % LANES];
                    *s = a[r * stride + j].mul_add(a[c * stride + j], *s);
                }
                p += 1;
            }
        }
    }
}

/// Rows of the triangle per tile of [`add_to_lanes`].
const TILE_ROWS: usize = 2;
/// Columns of the triangle per tile of [`add_to_lanes`]: 2 × 5 entries are ten independent
/// FMA chains fed by seven loads, where a row of four entries (the kernel until 2026-12-01)
/// was four chains, latency-bound, fed by five loads, and the remainder of each row one chain.
const TILE_COLS: usize = 5;

/// Index of entry (r, c), r ≤ c, in the lane sums (upper triangle row by row).
#[inline(always)]
fn entry(k: usize, r: usize, c: usize) -> usize {
    r * k - r * r.saturating_sub(1) / 2 + (c - r)
}

/// One tile of [`add_to_lanes`]: rows `r..r + RT` × columns `c..c + CT` of the triangle over
/// the columns `cols` of A (a multiple of [`LANES`] long).
struct Tile<'a> {
    a: &'a [f64],
    stride: usize,
    k: usize,
    r: usize,
    c: usize,
    cols: std::ops::Range<usize>,
}

#[inline(always)]
fn tile<const RT: usize, const CT: usize>(t: Tile<'_>, lanes: &mut [f64]) {
    let Tile {
        a,
        stride,
        k,
        r,
        c,
        cols,
    } = t;
    let real = |i: usize, u: usize| c + u >= r + i;
    let mut acc = [[[0.0f64; LANES]; CT]; RT];
    for (i, acc) in acc.iter_mut().enumerate() {
        for (u, acc) in acc.iter_mut().enumerate() {
            if real(i, u) {
                let p = entry(k, r + i, c + u) * LANES;
                acc.copy_from_slice(&lanes[p..p + LANES]);
            }
        }
    }
    let xs: [&[f64]; RT] =
        std::array::from_fn(|i| &a[(r + i) * stride + cols.start..(r + i) * stride + cols.end]);
    let ys: [&[f64]; CT] =
        std::array::from_fn(|u| &a[(c + u) * stride + cols.start..(c + u) * stride + cols.end]);
    for g in 0..cols.len() / LANES {
        // By value, so the sums stay in registers.
        let x: [[f64; LANES]; RT] = std::array::from_fn(|i| *fixed(&xs[i][g * LANES..]));
        let y: [[f64; LANES]; CT] = std::array::from_fn(|u| *fixed(&ys[u][g * LANES..]));
        for i in 0..RT {
            for u in 0..CT {
                for l in 0..LANES {
                    acc[i][u][l] = x[i][l].mul_add(y[u][l], acc[i][u][l]);
                }
            }
        }
    }
    for (i, acc) in acc.iter().enumerate() {
        for (u, acc) in acc.iter().enumerate() {
            if real(i, u) {
                let p = entry(k, r + i, c + u) * LANES;
                lanes[p..p + LANES].copy_from_slice(acc);
            }
        }
    }
}

/// The total of [`LANES`] partial sums, added pairwise in a fixed order:
/// `((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7))`. Every lane-wise sum of the engine ends
/// here (the Gram entries, RPNMF's margins and ranking loss), so its bits do not depend on the
/// instruction set.
#[inline(always)]
pub(crate) fn sum_lanes(l: &[f64; LANES]) -> f64 {
    ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]))
}

/// The k×k Gram matrix from its lane sums (both triangles of `out`, k×k row-major): the
/// [`LANES`] sums of each entry added pairwise in a fixed order.
pub(crate) fn lanes_into(lanes: &[f64], k: usize, out: &mut [f64]) {
    let mut p = 0;
    for r in 0..k {
        for c in r..k {
            let v = sum_lanes(fixed(&lanes[p * LANES..]));
            out[r * k + c] = v;
            out[c * k + r] = v;
            p += 1;
        }
    }
}

/// The lane sums of [`gram_of_rows_into`] as a pulp job (a struct with an always-inlined body:
/// a closure would be compiled without the wide instructions).
struct Gram<'a> {
    a: &'a [f64],
    k: usize,
    n: usize,
    lanes: &'a mut [f64],
}

impl pulp::WithSimd for Gram<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let Gram { a, k, n, lanes } = self;
        let mut j0 = 0;
        while j0 < n {
            let j1 = (j0 + CHUNK).min(n);
            add_to_lanes(a, n, k, j0..j1, lanes);
            j0 = j1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn matches_the_naive_gram_on_every_tail() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        // k = 1, 3, 4, 5, 10, 21 (groups of four and remainders); n with and without a tail,
        // below and above one chunk.
        for &(k, n) in &[(1, 1), (3, 7), (4, 8), (5, 300), (10, 1797), (21, 517)] {
            let a: Vec<f64> = (0..k * n).map(|_| rng.r#gen::<f64>() - 0.3).collect();
            let mut out = vec![f64::NAN; k * k];
            gram_of_rows_into(&a, (k, n), &mut out);
            for r in 0..k {
                for c in 0..k {
                    let want: f64 = (0..n).map(|j| a[r * n + j] * a[c * n + j]).sum();
                    let got = out[r * k + c];
                    assert!(
                        (got - want).abs() <= 1e-12 * (n as f64).max(1.0),
                        "k = {k}, n = {n}: ({r}, {c}) {got} vs {want}"
                    );
                    assert_eq!(got, out[c * k + r]);
                }
            }
        }
    }

    /// The tiles only regroup the entries: every entry must be bit for bit its lane sums by
    /// definition (column j into lane j mod 8, in column order, chunk after chunk), whatever
    /// tile of the triangle computes it.
    #[test]
    fn tiles_give_the_bits_of_the_lane_definition() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for &(k, n) in &[(2, 16), (6, 40), (7, 300), (10, 1797), (13, 600)] {
            let a: Vec<f64> = (0..k * n).map(|_| rng.r#gen::<f64>()).collect();
            let mut out = vec![f64::NAN; k * k];
            gram_of_rows_into(&a, (k, n), &mut out);
            for r in 0..k {
                for c in r..k {
                    let mut lanes = [0.0f64; LANES];
                    for j in 0..n {
                        let l = &mut lanes[j % LANES];
                        *l = a[r * n + j].mul_add(a[c * n + j], *l);
                    }
                    let want = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3]))
                        + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
                    assert_eq!(
                        out[r * k + c].to_bits(),
                        want.to_bits(),
                        "k {k} n {n} ({r}, {c})"
                    );
                }
            }
        }
    }

    #[test]
    fn lanes_follow_the_column_index() {
        // Lane j mod 8 in column order, then pairwise: column 0 holds 1e8 (a square of 1e16);
        // with the squares of 1 in columns 8 and 16 (the same lane) each one is lost, in
        // columns 9 and 17 (lane 1) they first make 2, which survives.
        let mut a = vec![0.0; 24];
        a[0] = 1e8;
        a[8] = 1.0;
        a[16] = 1.0;
        let mut out = [f64::NAN];
        gram_of_rows_into(&a, (1, 24), &mut out);
        assert_eq!(out[0], 1e16);
        a.swap(8, 9);
        a.swap(16, 17);
        gram_of_rows_into(&a, (1, 24), &mut out);
        assert_eq!(out[0], 1e16 + 2.0);
    }
}
