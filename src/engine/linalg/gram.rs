//! Products of the rows of short, wide row-major matrices by lane sums: `AAᵀ` of a k×n A
//! (k ≪ n), the HHᵀ of the multiplicative rules and of every candidate RPNMF's safeguard
//! evaluates, and `ABᵀ` of an m×n A and a k×n B ([`a_bt_into`]), the `XHᵀ` of the small-X
//! steps of NMF and RPNMF.
//!
//! faer packs both operands of a product this thin, and for HHᵀ its packing and micro-kernel
//! were most of the time GEMMs took in RPNMF. Here the rows are read in place, a column chunk
//! at a time so that the chunk of every row stays in L1, and only the upper triangle is formed
//! (half the flops) (docs/performance.md, "Gram matrix `HHᵀ` (`linalg/gram.rs`,
//! `gram_of_rows_into`)").
//!
//! [`a_bt_into`] packs its chunk of B once as a 64-byte-aligned panel, because rows whose
//! length is not a multiple of 8 (1797 on digits) make vector loads straddle cache lines; it
//! beats faer's `XHᵀ` on an X in cache (docs/performance.md, "Lane-sum `XHᵀ` for X in cache
//! (`linalg/gram.rs`, `a_bt_into`)").
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
    /// Lane sums of [`gram_of_rows_into`] and [`a_bt_into`] (and the latter's packed panel),
    /// reused by every call on the thread (HHᵀ is formed every iteration, five times per
    /// iteration in RPNMF).
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
                let (t, rc, cols) = ((a, stride, k), (r, c), j0..j1);
                match (rt, ct) {
                    (TILE_ROWS, TILE_COLS) => gram_tile::<TILE_ROWS, TILE_COLS>(t, rc, cols, lanes),
                    (TILE_ROWS, 4) => gram_tile::<TILE_ROWS, 4>(t, rc, cols, lanes),
                    (TILE_ROWS, 3) => gram_tile::<TILE_ROWS, 3>(t, rc, cols, lanes),
                    (TILE_ROWS, 2) => gram_tile::<TILE_ROWS, 2>(t, rc, cols, lanes),
                    (TILE_ROWS, _) => gram_tile::<TILE_ROWS, 1>(t, rc, cols, lanes),
                    (_, TILE_COLS) => gram_tile::<1, TILE_COLS>(t, rc, cols, lanes),
                    (_, 4) => gram_tile::<1, 4>(t, rc, cols, lanes),
                    (_, 3) => gram_tile::<1, 3>(t, rc, cols, lanes),
                    (_, 2) => gram_tile::<1, 2>(t, rc, cols, lanes),
                    _ => gram_tile::<1, 1>(t, rc, cols, lanes),
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

/// `out ← A·Bᵀ` for A m×n and B k×n, both row-major with row stride n (`out` m×k row-major):
/// the `XHᵀ` of the multiplicative rules on an X that fits in cache. Entry (i, a) is a lane sum
/// like a Gram entry (column j into lane `j mod LANES`, in column order, then [`sum_lanes`]),
/// so its bits do not depend on the instruction set either. Column chunks of [`CHUNK`]: the
/// chunk of B is packed once ([`pack_panel`]) and stays in L1 while register tiles of
/// [`CROSS_ROWS`] rows of A × up to [`CROSS_COLS`] rows of B pass over it.
///
/// With more than one thread ([`super::parallel`]) the rows of A are cut into parts, each
/// formed by [`a_bt_rows`] as above: the same lane sums per entry, so the same bits.
pub(crate) fn a_bt_into(a: &[f64], b: &[f64], (m, k, n): (usize, usize, usize), out: &mut [f64]) {
    assert!(a.len() >= m * n, "A is smaller than m×n");
    assert!(b.len() >= k * n, "B is smaller than k×n");
    assert!(out.len() >= m * k, "out is smaller than m×k");
    let t = super::parallel::threads();
    let rows = m
        .div_ceil(super::parallel::parts_for(t))
        .div_ceil(CROSS_ROWS)
        * CROSS_ROWS;
    if t <= 1 || m * k * n < super::thin::MIN_SPLIT_FMAS || rows >= m || k == 0 {
        a_bt_rows(a, b, (m, k, n), out);
        return;
    }
    let parts: Vec<(usize, &mut [f64])> = out[..m * k]
        .chunks_mut(rows * k)
        .enumerate()
        .map(|(p, o)| (p * rows, o))
        .collect();
    super::parallel::for_each_part(parts, |_, (r0, o)| {
        a_bt_rows(&a[r0 * n..], b, (o.len() / k, k, n), o);
    });
}

/// [`a_bt_into`] on the calling thread.
fn a_bt_rows(a: &[f64], b: &[f64], (m, k, n): (usize, usize, usize), out: &mut [f64]) {
    LANE_SUMS.with(|cell| {
        let mut buf = cell.borrow_mut();
        let (len, pack_len) = (m * k * LANES, k * CHUNK);
        // LANES values to spare, to start the panel on a 64-byte boundary.
        if buf.len() < len + pack_len + LANES {
            buf.resize(len + pack_len + LANES, 0.0);
        }
        let (lanes, rest) = buf.split_at_mut(len);
        lanes.fill(0.0);
        let skew = (rest.as_ptr() as usize / size_of::<f64>()).wrapping_neg() % LANES;
        let pack = &mut rest[skew..skew + pack_len];
        pulp::Arch::new().dispatch(Cross {
            a,
            b,
            m,
            k,
            n,
            lanes: &mut *lanes,
            pack,
        });
        for (o, l) in out[..m * k].iter_mut().zip(lanes.chunks_exact(LANES)) {
            *o = sum_lanes(fixed(l));
        }
    });
}

/// Rows of A per register tile of [`a_bt_into`].
const CROSS_ROWS: usize = 2;
/// Rows of B per register tile of [`a_bt_into`] (all of k = 10 at once): 2 × 10 entries are
/// twenty FMA chains fed by twelve loads, each row of A read once per chunk; it was the
/// fastest of the tile shapes tried (docs/performance.md, "Lane-sum `XHᵀ` for X in cache
/// (`linalg/gram.rs`, `a_bt_into`)").
const CROSS_COLS: usize = 10;

/// The lane sums of [`a_bt_into`] as a pulp job.
struct Cross<'a> {
    a: &'a [f64],
    b: &'a [f64],
    m: usize,
    k: usize,
    n: usize,
    lanes: &'a mut [f64],
    pack: &'a mut [f64],
}

impl pulp::WithSimd for Cross<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let Cross {
            a,
            b,
            m,
            k,
            n,
            lanes,
            pack,
        } = self;
        let mut j0 = 0;
        while j0 < n {
            let j1 = (j0 + CHUNK).min(n);
            let jv = j0 + (j1 - j0) / LANES * LANES;
            if jv > j0 {
                pack_panel(b, n, k, j0..jv, pack);
                let mut r = 0;
                while r < m {
                    // Full tiles of rows of A, then the last rows one at a time.
                    let rt = if m - r >= CROSS_ROWS { CROSS_ROWS } else { 1 };
                    let mut c = 0;
                    while c < k {
                        let ct = (k - c).min(CROSS_COLS);
                        let (x, y, cols) = ((a, n, r), (&*pack, k, c), j0..jv);
                        let slot = |i: usize, u: usize| Some(((r + i) * k + c + u) * LANES);
                        macro_rules! widths {
                            ($rt:expr; $($w:literal)*) => {
                                match ct {
                                    $($w => cross_tile::<$rt, $w>(x, y, cols, lanes, slot),)*
                                    _ => cross_tile::<$rt, 1>(x, y, cols, lanes, slot),
                                }
                            };
                        }
                        if rt == CROSS_ROWS {
                            widths!(CROSS_ROWS; 10 9 8 7 6 5 4 3 2)
                        } else {
                            widths!(1; 10 9 8 7 6 5 4 3 2)
                        }
                        c += ct;
                    }
                    r += rt;
                }
            }
            // The last columns (fewer than LANES), one at a time into their lanes.
            for j in jv..j1 {
                for i in 0..m {
                    for u in 0..k {
                        let s = &mut lanes[(i * k + u) * LANES + (j - j0) % LANES];
                        *s = a[i * n + j].mul_add(b[u * n + j], *s);
                    }
                }
            }
            j0 = j1;
        }
    }
}

/// The columns `cols` (a multiple of [`LANES`] long) of the k rows of B (row stride
/// `stride`) as a panel ([`panel_group`]) at the front of `pack`.
#[inline(always)]
fn pack_panel(b: &[f64], stride: usize, k: usize, cols: std::ops::Range<usize>, pack: &mut [f64]) {
    for g in 0..cols.len() / LANES {
        for u in 0..k {
            let src = u * stride + cols.start + g * LANES;
            let dst = (g * k + u) * LANES;
            pack[dst..dst + LANES].copy_from_slice(&b[src..src + LANES]);
        }
    }
}

/// Rows of the triangle per tile of [`add_to_lanes`].
const TILE_ROWS: usize = 2;
/// Columns of the triangle per tile of [`add_to_lanes`]: 2 × 5 entries are ten independent
/// FMA chains fed by seven loads, where a row of four entries would be four chains,
/// latency-bound, fed by five loads, and the remainder of each row one chain.
const TILE_COLS: usize = 5;

/// Index of entry (r, c), r ≤ c, in the lane sums (upper triangle row by row).
#[inline(always)]
fn entry(k: usize, r: usize, c: usize) -> usize {
    r * k - r * r.saturating_sub(1) / 2 + (c - r)
}

/// The rows `r..r + N` of a row-major matrix (row stride `stride`) over the columns `cols`,
/// each sliced to exactly `cols.len()` values, so that the loads of a tile need no bounds
/// checks.
#[inline(always)]
fn rows_of<'a, const N: usize>(
    s: &'a [f64],
    stride: usize,
    r: usize,
    cols: &std::ops::Range<usize>,
) -> [&'a [f64]; N] {
    std::array::from_fn(|i| &s[(r + i) * stride + cols.start..(r + i) * stride + cols.end])
}

/// Group g (columns `8g..8g + 8`) of each of the rows.
#[inline(always)]
fn group_of<const N: usize>(rows: &[&[f64]; N], g: usize) -> [[f64; LANES]; N] {
    std::array::from_fn(|i| *fixed(&rows[i][g * LANES..]))
}

/// Group g of the rows `r0..r0 + N` of a panel of `rows` rows (group g of every row side by
/// side, row r at `(g·rows + r)·LANES`): one bounds check per group, then loads at fixed
/// offsets from one pointer.
#[inline(always)]
fn panel_group<const N: usize>(p: &[f64], rows: usize, r0: usize, g: usize) -> [[f64; LANES]; N] {
    let block = &p[(g * rows + r0) * LANES..(g * rows + r0 + N) * LANES];
    std::array::from_fn(|u| *fixed(&block[u * LANES..]))
}

/// One register tile of lane sums: `RT` rows of X (`xv(g)` is their group g of [`LANES`]
/// columns) against `CT` rows of Y (`yv(g)`) over `groups` groups. Entry (i, u) adds into the
/// lanes at `slot(i, u)`, or is formed and dropped when that is `None`.
#[inline(always)]
fn tile<const RT: usize, const CT: usize>(
    xv: impl Fn(usize) -> [[f64; LANES]; RT],
    yv: impl Fn(usize) -> [[f64; LANES]; CT],
    groups: usize,
    lanes: &mut [f64],
    slot: impl Fn(usize, usize) -> Option<usize>,
) {
    let mut acc = [[[0.0f64; LANES]; CT]; RT];
    for (i, acc) in acc.iter_mut().enumerate() {
        for (u, acc) in acc.iter_mut().enumerate() {
            if let Some(p) = slot(i, u) {
                acc.copy_from_slice(&lanes[p..p + LANES]);
            }
        }
    }
    for g in 0..groups {
        // By value, so the sums stay in registers.
        let (x, y) = (xv(g), yv(g));
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
            if let Some(p) = slot(i, u) {
                lanes[p..p + LANES].copy_from_slice(acc);
            }
        }
    }
}

/// One tile of [`add_to_lanes`]: rows `r..r + RT` × columns `c..c + CT` of the triangle of
/// `AAᵀ` (A's rows of stride `stride`) over the columns `cols` (a multiple of [`LANES`] long),
/// entries below the diagonal dropped.
#[inline(always)]
fn gram_tile<const RT: usize, const CT: usize>(
    (a, stride, k): (&[f64], usize, usize),
    (r, c): (usize, usize),
    cols: std::ops::Range<usize>,
    lanes: &mut [f64],
) {
    let xs = rows_of::<RT>(a, stride, r, &cols);
    let ys = rows_of::<CT>(a, stride, c, &cols);
    tile::<RT, CT>(
        |g| group_of(&xs, g),
        |g| group_of(&ys, g),
        cols.len() / LANES,
        lanes,
        |i, u| (c + u >= r + i).then(|| entry(k, r + i, c + u) * LANES),
    );
}

/// One tile of [`a_bt_into`]: `RT` rows of A from row `r` (row stride `stride`) over the
/// columns `cols` against the rows `c..c + CT` of the chunk's panel of B (`rows` = k).
#[inline(always)]
fn cross_tile<const RT: usize, const CT: usize>(
    (a, stride, r): (&[f64], usize, usize),
    (panel, rows, c): (&[f64], usize, usize),
    cols: std::ops::Range<usize>,
    lanes: &mut [f64],
    slot: impl Fn(usize, usize) -> Option<usize>,
) {
    let xs = rows_of::<RT>(a, stride, r, &cols);
    tile::<RT, CT>(
        |g| group_of(&xs, g),
        |g| panel_group::<CT>(panel, rows, c, g),
        cols.len() / LANES,
        lanes,
        slot,
    );
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

    /// `ABᵀ` matches the naive product, and every entry is bit for bit its lane sums by
    /// definition (column j into lane j mod 8, in column order, then pairwise), for shapes
    /// with and without tails of rows (m odd), of B's rows (k above a tile's 10) and of
    /// columns, below and above one chunk.
    #[test]
    fn a_bt_is_the_product_and_the_lane_definition() {
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        for &(m, k, n) in &[
            (1, 1, 1),
            (3, 2, 7),
            (5, 10, 300),
            (64, 10, 1797),
            (7, 13, 517),
            (2, 21, 600),
            (9, 4, 256),
        ] {
            let a: Vec<f64> = (0..m * n).map(|_| rng.r#gen::<f64>() - 0.3).collect();
            let b: Vec<f64> = (0..k * n).map(|_| rng.r#gen::<f64>()).collect();
            let mut out = vec![f64::NAN; m * k];
            a_bt_into(&a, &b, (m, k, n), &mut out);
            for i in 0..m {
                for u in 0..k {
                    let naive: f64 = (0..n).map(|j| a[i * n + j] * b[u * n + j]).sum();
                    let got = out[i * k + u];
                    assert!(
                        (got - naive).abs() <= 1e-12 * (n as f64),
                        "({m}, {k}, {n}) entry ({i}, {u}): {got} vs {naive}"
                    );
                    let mut lanes = [0.0f64; LANES];
                    for j in 0..n {
                        let l = &mut lanes[j % LANES];
                        *l = a[i * n + j].mul_add(b[u * n + j], *l);
                    }
                    assert_eq!(
                        got.to_bits(),
                        sum_lanes(&lanes).to_bits(),
                        "({m}, {k}, {n}) entry ({i}, {u})"
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
