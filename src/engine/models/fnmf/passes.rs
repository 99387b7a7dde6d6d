//! The element-wise passes of an FNMF iteration over the m×n arrays X, R = WH and Y. R is
//! never stored: the passes that read it form it a chunk at a time from W and H (each entry
//! one FMA chain over the rank in order, the bits of the stored product it replaces), for a group
//! of features and a sub-chunk of columns small enough that the chunk of R, of X and the
//! rows of P² stay in L1 while every component uses them. Every sum is taken in an order fixed
//! by the sample and feature indices alone, so the bits do not depend on the chunking or on
//! the thread count; the loops run under pulp with the CPU's widest vectors.

use faer::traits::pulp;

/// Columns per chunk of [`y_rows`] and per sub-chunk of the passes that form R: 512 columns
/// of Q_GROUP rows of X and R are 32 KB.
pub(super) const CHUNK: usize = 512;

/// Features per group: each q entry is loaded and stored once per group, and R is formed for
/// a group at a time.
const Q_GROUP: usize = 4;

/// Lanes of the Θ step's sums within a part of [`q_and_sums`]: sample `c0 + i` of the part
/// adds to lane `i mod LANES`.
const LANES: usize = 8;

/// W (m×k row-major) and H (k×n row-major), the factors of R = WH.
#[derive(Clone, Copy)]
pub(super) struct Factors<'a> {
    pub w: &'a [f64],
    pub h: &'a [f64],
    pub k: usize,
}

/// `R_ti` for the G features `t..t + G` and the columns `c..c + len` into `out[g][..len]`:
/// `fma(w_t,k−1, h_k−1,i, … fma(w_t0, h_0i, 0))`.
#[inline(always)]
fn r_chunk<const G: usize>(
    f: Factors<'_>,
    n: usize,
    t: usize,
    (c, len): (usize, usize),
    out: &mut [[f64; CHUNK]; G],
) {
    let k = f.k;
    if len == 0 || n == 0 {
        return;
    }
    let w: [&[f64]; G] = std::array::from_fn(|g| &f.w[(t + g) * k..(t + g + 1) * k]);
    // H's k rows, columns c..c + len.
    let rows: Vec<&[f64]> =
        f.h.chunks_exact(n)
            .take(k)
            .map(|row| &row[c..c + len])
            .collect();
    let body = len - len % LANES;
    let mut i = 0;
    while i < body {
        let mut acc = [[0.0f64; LANES]; G];
        for (a, hrow) in rows.iter().enumerate() {
            let hv: &[f64; LANES] = fixed(&hrow[i..]);
            for g in 0..G {
                let wv = w[g][a];
                for s in 0..LANES {
                    acc[g][s] = wv.mul_add(hv[s], acc[g][s]);
                }
            }
        }
        for g in 0..G {
            out[g][i..i + LANES].copy_from_slice(&acc[g]);
        }
        i += LANES;
    }
    for (g, o) in out.iter_mut().enumerate() {
        for (i, ov) in o[body..len].iter_mut().enumerate() {
            let mut acc = 0.0f64;
            for (&wv, hrow) in w[g].iter().zip(&rows) {
                acc = wv.mul_add(hrow[body + i], acc);
            }
            *ov = acc;
        }
    }
}

/// The first `N` entries of `s` as an array reference.
#[inline(always)]
fn fixed<const N: usize>(s: &[f64]) -> &[f64; N] {
    crate::engine::linalg::thin::fixed(s)
}

/// The row `t` of an m×n row-major array, columns `c..c + len`.
#[inline(always)]
fn part_row(a: &[f64], n: usize, t: usize, (c, len): (usize, usize)) -> &[f64] {
    &a[t * n + c..t * n + c + len]
}

/// `q_ji = Σ_t (θ_jt x_ti − R_ti)²` for the columns `c0..c0 + len` (`q` holds r rows of `len`),
/// each entry summed over the features in order (`q += e²`, no fused multiply-add).
pub(super) fn q_columns(
    (xs, n): (&[f64], usize),
    f: Factors<'_>,
    theta: &[f64],
    c0: usize,
    q: &mut [&mut [f64]],
) {
    pulp::Arch::new().dispatch(Pass {
        xs,
        n,
        f,
        theta,
        p2: &[],
        c0,
        q,
        sums: None,
    });
}

/// One pass over the columns `c0..c0 + len` of X and R (`q` holds r rows of `len`, `len` a
/// multiple of `LANES` but in the last part) forming both q of the current Θ, with the bits of
/// [`q_columns`], and this part's share of the Θ step's `(a_jt, c_jt) = (Σ_i p_ij² x_ti²,
/// Σ_i p_ij² x_ti R_ti)` for every feature: component j of feature t into `sums[t·r + j]`.
/// Each share is summed over the part's samples in `LANES` lanes, the lanes then added
/// pairwise; the shares of the parts are added in part order by the caller.
pub(super) fn q_and_sums(
    (xs, n): (&[f64], usize),
    f: Factors<'_>,
    theta: &[f64],
    p2: &[Vec<f64>],
    c0: usize,
    q: &mut [&mut [f64]],
    sums: &mut [(f64, f64)],
) {
    pulp::Arch::new().dispatch(Pass {
        xs,
        n,
        f,
        theta,
        p2,
        c0,
        q,
        sums: Some(sums),
    });
}

struct Pass<'a, 'b> {
    xs: &'a [f64],
    n: usize,
    f: Factors<'a>,
    /// Θ, r×m row-major.
    theta: &'a [f64],
    /// `p_ij²`, r rows of n (only with `sums`).
    p2: &'a [Vec<f64>],
    c0: usize,
    q: &'a mut [&'b mut [f64]],
    sums: Option<&'a mut [(f64, f64)]>,
}

impl pulp::WithSimd for Pass<'_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let m = self.xs.len().checked_div(self.n).unwrap_or(0);
        let mut pass = self;
        let mut t = 0;
        while t < m {
            if t + Q_GROUP <= m {
                pass.group::<Q_GROUP>(t, m);
                t += Q_GROUP;
            } else {
                pass.group::<1>(t, m);
                t += 1;
            }
        }
    }
}

impl Pass<'_, '_> {
    /// The features `t..t + G`, over the part's columns a sub-chunk at a time.
    #[inline(always)]
    fn group<const G: usize>(&mut self, t: usize, m: usize) {
        let Some(len) = self.q.first().map(|r| r.len()) else {
            return;
        };
        let (n, c0, rr) = (self.n, self.c0, self.q.len());
        let mut lanes = vec![([[0.0f64; LANES]; G], [[0.0f64; LANES]; G]); rr];
        let mut r = [[0.0f64; CHUNK]; G];
        let mut sub = 0;
        while sub < len {
            let sl = CHUNK.min(len - sub);
            r_chunk::<G>(self.f, n, t, (c0 + sub, sl), &mut r);
            let x: [&[f64]; G] =
                std::array::from_fn(|g| part_row(self.xs, n, t + g, (c0 + sub, sl)));
            let rs: [&[f64]; G] = std::array::from_fn(|g| &r[g][..sl]);
            for (j, (qj, lanes)) in self.q.iter_mut().zip(lanes.iter_mut()).enumerate() {
                let th: [f64; G] = std::array::from_fn(|g| self.theta[j * m + t + g]);
                let q = &mut qj[sub..sub + sl];
                if self.sums.is_some() {
                    let p = &self.p2[j][c0 + sub..c0 + sub + sl];
                    q_and_sums_group(x, rs, th, p, q, lanes);
                } else {
                    q_group(x, rs, th, q);
                }
            }
            sub += sl;
        }
        if let Some(sums) = self.sums.as_deref_mut() {
            for (j, (la, lc)) in lanes.iter().enumerate() {
                for g in 0..G {
                    sums[(t + g) * rr + j] = (pairwise(&la[g]), pairwise(&lc[g]));
                }
            }
        }
    }
}

/// q gains the G features of one component in order, for the columns of `q`.
#[inline(always)]
fn q_group<const G: usize>(x: [&[f64]; G], r: [&[f64]; G], th: [f64; G], q: &mut [f64]) {
    for (i, qv) in q.iter_mut().enumerate() {
        let mut acc = *qv;
        for g in 0..G {
            let e = th[g] * x[g][i] - r[g][i];
            acc += e * e;
        }
        *qv = acc;
    }
}

/// [`q_group`], and each feature's `(a, c)` lanes gain these samples (`lanes`: a's, c's).
#[inline(always)]
fn q_and_sums_group<const G: usize>(
    x: [&[f64]; G],
    r: [&[f64]; G],
    th: [f64; G],
    p: &[f64],
    q: &mut [f64],
    (la, lc): &mut ([[f64; LANES]; G], [[f64; LANES]; G]),
) {
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
}

/// `((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7))`.
#[inline(always)]
fn pairwise(l: &[f64; LANES]) -> f64 {
    ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]))
}

/// Rows `t0..` of `Y_ti = x_ti Σ_j θ_jt p_ij²` (y holds whole rows of n), the coefficient of
/// each entry summed over the components in order from 0 (a zero θ_jt skipped): in one loop
/// over the columns when at most four θ_jt of the row are nonzero, else through a chunk of
/// coefficients (the same bits either way).
pub(super) fn y_rows(
    xs: &[f64],
    n: usize,
    theta: (&[f64], usize),
    p2: &[Vec<f64>],
    t0: usize,
    y: &mut [f64],
) {
    pulp::Arch::new().dispatch(YRows {
        xs,
        n,
        theta,
        p2,
        t0,
        y,
    });
}

/// `y_i = x_i · (((0 + θ_1 p_1i) + θ_2 p_2i) + …)` over the J components `used[..J]`.
#[inline(always)]
fn y_direct<const J: usize>(used: &[(f64, &[f64]); 4], x: &[f64], y: &mut [f64]) {
    let th: [f64; J] = std::array::from_fn(|j| used[j].0);
    let p: [&[f64]; J] = std::array::from_fn(|j| &used[j].1[..y.len()]);
    let x = &x[..y.len()];
    for (i, yv) in y.iter_mut().enumerate() {
        let mut c = 0.0;
        for j in 0..J {
            c += th[j] * p[j][i];
        }
        *yv = x[i] * c;
    }
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
                let xr = &xs[t * n + c0..t * n + c1];
                let yr = &mut yr[c0..c1];
                // The components with θ_jt ≠ 0, in order: at most four in one loop.
                let mut used = [(0.0, &[][..]); 4];
                let mut count = 0;
                let mut rest = false;
                for (j, pj) in p2.iter().enumerate() {
                    let th = theta[j * m + t];
                    if th != 0.0 {
                        if count == used.len() {
                            rest = true;
                            break;
                        }
                        used[count] = (th, &pj[c0..c1]);
                        count += 1;
                    }
                }
                match (rest, count) {
                    (false, 0) => y_direct::<0>(&used, xr, yr),
                    (false, 1) => y_direct::<1>(&used, xr, yr),
                    (false, 2) => y_direct::<2>(&used, xr, yr),
                    (false, 3) => y_direct::<3>(&used, xr, yr),
                    (false, 4) => y_direct::<4>(&used, xr, yr),
                    _ => {
                        coef.fill(0.0);
                        for (j, pj) in p2.iter().enumerate() {
                            let th = theta[j * m + t];
                            if th != 0.0 {
                                for (c, &pv) in coef.iter_mut().zip(&pj[c0..c1]) {
                                    *c += th * pv;
                                }
                            }
                        }
                        for ((yv, &xv), &cv) in yr.iter_mut().zip(xr).zip(coef.iter()) {
                            *yv = xv * cv;
                        }
                    }
                }
            }
            c0 = c1;
        }
    }
}
