//! The element-wise passes of an FNMF iteration over the m×n arrays X, R = WH and Y, in column
//! chunks small enough that a chunk of a row of X and R and the r rows of P² stay in L1 while
//! every component uses them. Each sum is taken in the order of the plain loop over the whole
//! row (the same lanes, the same operations), so the bits do not depend on the chunking; the
//! loops run under pulp with the CPU's widest vectors.

use faer::traits::pulp;

/// Columns per chunk (a multiple of the 4 lanes of [`add_weighted`]): 512 columns of a row of
/// X and R and of the r rows of P² are 8·(2 + r)·512 bytes, 20 KB at r = 3.
pub(super) const CHUNK: usize = 512;

/// Four lanes of `Σ_i p_i x_i²` and of `Σ_i p_i x_i r_i`.
#[derive(Clone, Copy, Default)]
struct Lanes {
    a: [f64; 4],
    c: [f64; 4],
}

impl Lanes {
    fn total(&self) -> (f64, f64) {
        let (a, c) = (self.a, self.c);
        ((a[0] + a[1]) + (a[2] + a[3]), (c[0] + c[1]) + (c[2] + c[3]))
    }
}

/// Adds columns of one chunk to the lanes: sample i goes to lane `i mod 4` of the row (chunks
/// start at multiples of 4; only the row's last chunk has a remainder, whose samples go to
/// lanes 0, 1, 2 as in one pass over the row).
#[inline(always)]
fn add_weighted(x: &[f64], r: &[f64], p: &[f64], l: &mut Lanes) {
    let (xc, rc, pc) = (x.chunks_exact(4), r.chunks_exact(4), p.chunks_exact(4));
    let (xt, rt, pt) = (xc.remainder(), rc.remainder(), pc.remainder());
    for ((xv, rv), pv) in xc.zip(rc).zip(pc) {
        for s in 0..4 {
            let px = pv[s] * xv[s];
            l.a[s] += px * xv[s];
            l.c[s] += px * rv[s];
        }
    }
    for (s, ((&xv, &rv), &pv)) in xt.iter().zip(rt).zip(pt).enumerate() {
        let px = pv * xv;
        l.a[s] += px * xv;
        l.c[s] += px * rv;
    }
}

/// The Θ step's `(a_jt, c_jt) = (Σ_i p_ij² x_ti², Σ_i p_ij² x_ti R_ti)` for the features
/// `kept`, component j of feature `kept[u]` into `out[u·r + j]`. X and R are m×n row-major,
/// `p2[j]` holds `p_ij²` for every sample.
pub(super) fn theta_sums(
    (xs, rs, n): (&[f64], &[f64], usize),
    kept: &[usize],
    p2: &[Vec<f64>],
    out: &mut [(f64, f64)],
) {
    pulp::Arch::new().dispatch(ThetaSums {
        xs,
        rs,
        n,
        kept,
        p2,
        out,
    });
}

struct ThetaSums<'a> {
    xs: &'a [f64],
    rs: &'a [f64],
    n: usize,
    kept: &'a [usize],
    p2: &'a [Vec<f64>],
    out: &'a mut [(f64, f64)],
}

impl pulp::WithSimd for ThetaSums<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let ThetaSums {
            xs,
            rs,
            n,
            kept,
            p2,
            out,
        } = self;
        let rr = p2.len();
        let mut lanes = vec![Lanes::default(); kept.len() * rr];
        let mut c0 = 0;
        while c0 < n {
            let c1 = (c0 + CHUNK).min(n);
            for (&t, lanes) in kept.iter().zip(lanes.chunks_mut(rr)) {
                let (x, r) = (&xs[t * n + c0..t * n + c1], &rs[t * n + c0..t * n + c1]);
                for (pj, l) in p2.iter().zip(lanes.iter_mut()) {
                    add_weighted(x, r, &pj[c0..c1], l);
                }
            }
            c0 = c1;
        }
        for (o, l) in out.iter_mut().zip(&lanes) {
            *o = l.total();
        }
    }
}

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
