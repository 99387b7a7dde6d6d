//! The element-wise passes of an FNMF iteration over the m×n arrays X, R = WH and Y, in column
//! chunks small enough that a chunk of a row of X and R and the r rows of P² stay in L1 while
//! every component uses them. Each sum is taken in the order of the plain loop over the whole
//! row (the same lanes, the same operations), so the bits do not depend on the chunking; the
//! loops run under pulp with the CPU's widest vectors.

use faer::traits::pulp;

/// Columns per chunk (a multiple of the 4 lanes of [`add_weighted`]): 512 columns of a row of
/// X and R and of the r rows of P² are 8·(2 + r)·512 bytes, 20 KB at r = 3.
pub(super) const CHUNK: usize = 512;

/// Features per group of [`q_columns`]: each q entry is loaded and stored once per group.
const Q_GROUP: usize = 4;

/// `q_ji = Σ_t (θ_jt x_ti − R_ti)²` for the columns `c0..c0 + len` (`q` holds r rows of `len`),
/// each entry summed over the features in order (`q += e²`, no fused multiply-add), with
/// `Q_GROUP` features per load and store of q.
pub(super) fn q_columns(
    (xs, rs, n): (&[f64], &[f64], usize),
    theta: &[f64],
    c0: usize,
    q: &mut [&mut [f64]],
) {
    pulp::Arch::new().dispatch(QColumns {
        xs,
        rs,
        n,
        theta,
        c0,
        q,
    });
}

struct QColumns<'a, 'b> {
    xs: &'a [f64],
    rs: &'a [f64],
    n: usize,
    /// Θ, r×m row-major.
    theta: &'a [f64],
    c0: usize,
    q: &'a mut [&'b mut [f64]],
}

impl pulp::WithSimd for QColumns<'_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let QColumns {
            xs,
            rs,
            n,
            theta,
            c0,
            q,
        } = self;
        let Some(len) = q.first().map(|r| r.len()) else {
            return;
        };
        let m = xs.len().checked_div(n).unwrap_or(0);
        fn row(a: &[f64], n: usize, t: usize, cols: (usize, usize)) -> &[f64] {
            &a[t * n + cols.0..t * n + cols.0 + cols.1]
        }
        let row = |a, t| row(a, n, t, (c0, len));
        let mut t = 0;
        while t + Q_GROUP <= m {
            let x: [&[f64]; Q_GROUP] = std::array::from_fn(|g| row(xs, t + g));
            let r: [&[f64]; Q_GROUP] = std::array::from_fn(|g| row(rs, t + g));
            for (j, qj) in q.iter_mut().enumerate() {
                let th: [f64; Q_GROUP] = std::array::from_fn(|g| theta[j * m + t + g]);
                for (i, qv) in qj.iter_mut().enumerate() {
                    let mut acc = *qv;
                    for g in 0..Q_GROUP {
                        let e = th[g] * x[g][i] - r[g][i];
                        acc += e * e;
                    }
                    *qv = acc;
                }
            }
            t += Q_GROUP;
        }
        while t < m {
            let (x, r) = (row(xs, t), row(rs, t));
            for (j, qj) in q.iter_mut().enumerate() {
                let th = theta[j * m + t];
                for ((qv, &xv), &rv) in qj.iter_mut().zip(x).zip(r) {
                    let e = th * xv - rv;
                    *qv += e * e;
                }
            }
            t += 1;
        }
    }
}

/// Lanes of the Θ step's sums within a part of [`q_and_sums`]: sample `c0 + i` of the part
/// adds to lane `i mod LANES`.
const LANES: usize = 8;

/// One pass over the columns `c0..c0 + len` of X and R (`q` holds r rows of `len`, `len` a
/// multiple of `LANES` but in the last part) forming both q of the current Θ, with the bits of
/// [`q_columns`], and this part's share of the Θ step's `(a_jt, c_jt) = (Σ_i p_ij² x_ti²,
/// Σ_i p_ij² x_ti R_ti)` for every feature: component j of feature t into `sums[t·r + j]`.
/// Each share is summed over the part's samples in `LANES` lanes, the lanes then added
/// pairwise; the shares of the parts are added in part order by the caller.
pub(super) fn q_and_sums(
    (xs, rs, n): (&[f64], &[f64], usize),
    theta: &[f64],
    p2: &[Vec<f64>],
    c0: usize,
    q: &mut [&mut [f64]],
    sums: &mut [(f64, f64)],
) {
    pulp::Arch::new().dispatch(QAndSums {
        xs,
        rs,
        n,
        theta,
        p2,
        c0,
        q,
        sums,
    });
}

struct QAndSums<'a, 'b> {
    xs: &'a [f64],
    rs: &'a [f64],
    n: usize,
    /// Θ, r×m row-major.
    theta: &'a [f64],
    p2: &'a [Vec<f64>],
    c0: usize,
    q: &'a mut [&'b mut [f64]],
    sums: &'a mut [(f64, f64)],
}

impl pulp::WithSimd for QAndSums<'_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let QAndSums {
            xs,
            rs,
            n,
            theta,
            p2,
            c0,
            q,
            sums,
        } = self;
        let rr = q.len();
        let Some(len) = q.first().map(|r| r.len()) else {
            return;
        };
        let m = xs.len().checked_div(n).unwrap_or(0);
        fn part(a: &[f64], n: usize, t: usize, cols: (usize, usize)) -> &[f64] {
            &a[t * n + cols.0..t * n + cols.0 + cols.1]
        }
        let row = |a, t| part(a, n, t, (c0, len));
        let mut t = 0;
        while t < m {
            if t + Q_GROUP <= m {
                let x: [&[f64]; Q_GROUP] = std::array::from_fn(|g| row(xs, t + g));
                let r: [&[f64]; Q_GROUP] = std::array::from_fn(|g| row(rs, t + g));
                for (j, qj) in q.iter_mut().enumerate() {
                    let th: [f64; Q_GROUP] = std::array::from_fn(|g| theta[j * m + t + g]);
                    let pj = &p2[j][c0..c0 + len];
                    let out = q_and_sums_group(x, r, th, pj, qj);
                    for (g, s) in out.into_iter().enumerate() {
                        sums[(t + g) * rr + j] = s;
                    }
                }
                t += Q_GROUP;
            } else {
                for (j, qj) in q.iter_mut().enumerate() {
                    let pj = &p2[j][c0..c0 + len];
                    let [s] = q_and_sums_group(
                        [row(xs, t)],
                        [row(rs, t)],
                        [theta[j * m + t]],
                        pj,
                        qj,
                    );
                    sums[t * rr + j] = s;
                }
                t += 1;
            }
        }
    }
}

/// The work of [`q_and_sums`] for G features and one component: q gains the G features in
/// order, and each feature's `(a, c)` share of these samples is returned.
#[inline(always)]
fn q_and_sums_group<const G: usize>(
    x: [&[f64]; G],
    r: [&[f64]; G],
    th: [f64; G],
    p: &[f64],
    q: &mut [f64],
) -> [(f64, f64); G] {
    let mut la = [[0.0f64; LANES]; G];
    let mut lc = [[0.0f64; LANES]; G];
    let (qv, qt) = q.as_chunks_mut::<LANES>();
    let (pv, pt) = p.as_chunks::<LANES>();
    let xv: [&[[f64; LANES]]; G] = x.map(|s| s.as_chunks::<LANES>().0);
    let rv: [&[[f64; LANES]]; G] = r.map(|s| s.as_chunks::<LANES>().0);
    for (v, (qa, pa)) in qv.iter_mut().zip(pv).enumerate() {
        let mut acc = *qa;
        for g in 0..G {
            let (xa, ra) = (&xv[g][v], &rv[g][v]);
            for s in 0..LANES {
                let e = th[g] * xa[s] - ra[s];
                acc[s] += e * e;
                let px = pa[s] * xa[s];
                la[g][s] += px * xa[s];
                lc[g][s] += px * ra[s];
            }
        }
        *qa = acc;
    }
    let body = qv.len() * LANES;
    for (s, (qa, &pa)) in qt.iter_mut().zip(pt).enumerate() {
        let i = body + s;
        let mut acc = *qa;
        for g in 0..G {
            let (xa, ra) = (x[g][i], r[g][i]);
            let e = th[g] * xa - ra;
            acc += e * e;
            let px = pa * xa;
            la[g][s] += px * xa;
            lc[g][s] += px * ra;
        }
        *qa = acc;
    }
    std::array::from_fn(|g| (pairwise(&la[g]), pairwise(&lc[g])))
}

/// `((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7))`.
#[inline(always)]
fn pairwise(l: &[f64; LANES]) -> f64 {
    ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]))
}

/// Rows `t0..` of `Y_ti = x_ti Σ_j θ_jt p_ij²` (y holds whole rows of n), the coefficient of
/// each entry summed over the components in order (a zero θ_jt skipped).
pub(super) fn y_rows(xs: &[f64], n: usize, theta: (&[f64], usize), p2: &[Vec<f64>], t0: usize, y: &mut [f64]) {
    pulp::Arch::new().dispatch(YRows {
        xs,
        n,
        theta,
        p2,
        t0,
        y,
    });
}

struct YRows<'a> {
    xs: &'a [f64],
    n: usize,
    /// Θ, r×m row-major, and m.
    theta: (&'a [f64], usize),
    p2: &'a [Vec<f64>],
    t0: usize,
    y: &'a mut [f64],
}

impl pulp::WithSimd for YRows<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let YRows {
            xs,
            n,
            theta: (theta, m),
            p2,
            t0,
            y,
        } = self;
        if n == 0 {
            return;
        }
        let mut coef = [0.0f64; CHUNK];
        let mut c0 = 0;
        while c0 < n {
            let c1 = (c0 + CHUNK).min(n);
            let coef = &mut coef[..c1 - c0];
            for (u, yr) in y.chunks_exact_mut(n).enumerate() {
                let t = t0 + u;
                coef.fill(0.0);
                for (j, pj) in p2.iter().enumerate() {
                    let th = theta[j * m + t];
                    if th != 0.0 {
                        for (c, &pv) in coef.iter_mut().zip(&pj[c0..c1]) {
                            *c += th * pv;
                        }
                    }
                }
                let xr = &xs[t * n + c0..t * n + c1];
                for ((yv, &xv), &cv) in yr[c0..c1].iter_mut().zip(xr).zip(coef.iter()) {
                    *yv = xv * cv;
                }
            }
            c0 = c1;
        }
    }
}
