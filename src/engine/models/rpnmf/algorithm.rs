//! RPNMF kernels (MODELS.md §4.3–§4.4): triplet margins `t_τ`, the ranking loss
//! `α Σ sp(t_τ)` of eq. (9) and the role matrices `Mneg`/`Mpos`.

use crate::engine::linalg::Csr;
use crate::engine::linalg::special::{sigmoid, sigmoid_and_softplus, softplus};
use crate::engine::models::Triplet;
use ndarray::{Array2, ArrayView2, ArrayViewMut2};

/// `t_τ(H) = ‖h_i − h_j‖² − ‖h_i − h_q‖² + δ` for every triplet (MODELS.md §4.1). O(|T|·k).
pub fn margins(h: ArrayView2<'_, f64>, triplets: &[Triplet], delta: f64, out: &mut Vec<f64>) {
    out.clear();
    out.extend(triplets.iter().map(|t| {
        let mut d = delta;
        for row in h.rows() {
            let (a, b, c) = (row[t.i], row[t.j], row[t.q]);
            d += (a - b) * (a - b) - (a - c) * (a - c);
        }
        d
    }));
}

/// The ranking term `α Σ_τ sp(t_τ)` from precomputed margins.
pub fn ranking_loss(alpha: f64, margins: &[f64]) -> f64 {
    alpha * margins.iter().map(|&t| softplus(t)).sum::<f64>()
}

/// [`margins`] from Hᵀ (n×k, one contiguous row per sample) instead of H. O(|T|·k).
///
/// Same values bit for bit: each margin starts at δ and adds its k coordinates in order. But
/// four triplets are summed side by side, so that four independent chains of additions are in
/// flight instead of one (digits, |T| = 5391, k = 10, in isolation: about 37 µs against 64 µs
/// one triplet at a time, and 55 µs for [`margins`] on the k×n H), and the terms
/// `(p − q)² − (p − z)²` of eight coordinates are formed as one vector before they are added in
/// order (RPNMF with the protocol's triplets on digits: whole runs 7.7 % shorter).
pub fn margins_t(h_t: ArrayView2<'_, f64>, triplets: &[Triplet], delta: f64, out: &mut Vec<f64>) {
    let k = h_t.ncols();
    let h_t = h_t.as_standard_layout();
    let hs = h_t.as_slice().unwrap_or(&[]);
    // In pulp's context (AVX-512 where present): the same operations, no fused multiply-adds.
    faer::traits::pulp::Arch::new().dispatch(Margins {
        hs,
        k,
        triplets,
        delta,
        out,
    });
}

/// [`margins_of`] as a pulp job (a struct with an always-inlined body: a closure would be
/// compiled without the wide instructions).
struct Margins<'a> {
    hs: &'a [f64],
    k: usize,
    triplets: &'a [Triplet],
    delta: f64,
    out: &'a mut Vec<f64>,
}

impl faer::traits::pulp::WithSimd for Margins<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: faer::traits::pulp::Simd>(self, _simd: S) {
        margins_of(self.hs, self.k, self.triplets, self.delta, self.out);
    }
}

#[expect(
    clippy::needless_range_loop,
    reason = "constant indices keep the four interleaved sums in registers"
)]
#[inline(always)]
fn margins_of(hs: &[f64], k: usize, triplets: &[Triplet], delta: f64, out: &mut Vec<f64>) {
    // Indices must be below n, as for [`margins`] (a slice of exactly k: no bounds checks below).
    let row = |p: usize| &hs[p * k..p * k + k];
    let one = |t: &Triplet| {
        let mut d = delta;
        for ((&a, &b), &c) in row(t.i).iter().zip(row(t.j)).zip(row(t.q)) {
            d += (a - b) * (a - b) - (a - c) * (a - c);
        }
        d
    };
    out.clear();
    let mut quads = triplets.chunks_exact(4);
    let full = k / LANES * LANES;
    for quad in &mut quads {
        let rows: [[&[f64]; 3]; 4] =
            std::array::from_fn(|x| [row(quad[x].i), row(quad[x].j), row(quad[x].q)]);
        let mut d = [delta; 4];
        // Eight coordinates at a time: the terms (p − q)² − (p − z)² lane by lane (vectors),
        // then added to each margin in coordinate order (the same chain as one at a time).
        for a0 in (0..full).step_by(LANES) {
            let mut terms = [[0.0f64; LANES]; 4];
            for x in 0..4 {
                let (p, q, z) = (
                    lanes(&rows[x][0][a0..]),
                    lanes(&rows[x][1][a0..]),
                    lanes(&rows[x][2][a0..]),
                );
                for l in 0..LANES {
                    terms[x][l] = (p[l] - q[l]) * (p[l] - q[l]) - (p[l] - z[l]) * (p[l] - z[l]);
                }
            }
            for l in 0..LANES {
                for x in 0..4 {
                    d[x] += terms[x][l];
                }
            }
        }
        for a in full..k {
            // Constant indices x: the four sums stay in registers.
            for x in 0..4 {
                let (p, q, z) = (rows[x][0][a], rows[x][1][a], rows[x][2][a]);
                d[x] += (p - q) * (p - q) - (p - z) * (p - z);
            }
        }
        out.extend_from_slice(&d);
    }
    out.extend(quads.remainder().iter().map(one));
}

/// Coordinates per vector of [`margins_t`].
const LANES: usize = 8;

/// The first [`LANES`] entries of `s` by value (one bounds check).
#[inline(always)]
fn lanes(s: &[f64]) -> [f64; LANES] {
    let mut v = [0.0; LANES];
    v.copy_from_slice(&s[..LANES]);
    v
}

/// `σ(t_τ)` of every margin into `sig`, and the ranking loss `α Σ_τ sp(t_τ)` of eq. (9).
/// O(|T|).
///
/// σ and sp share one `e^{−|t|}` and one `1 + e^{−|t|}` ([`sigmoid_and_softplus`]), and the loss
/// sums in triplet order, so both equal [`sigmoid`] and [`ranking_loss`] bit for bit. Eight
/// margins at a time in pulp's context: the special functions are branch-free, so they run as
/// vectors; only the loss's sum is a sequential chain.
pub fn sigmoids_and_loss(margins: &[f64], alpha: f64, sig: &mut Vec<f64>) -> f64 {
    sig.clear();
    sig.resize(margins.len(), 0.0);
    alpha * faer::traits::pulp::Arch::new().dispatch(SigmoidsAndLoss { margins, sig })
}

/// The vector loop of [`sigmoids_and_loss`], run by pulp with the CPU's widest instructions
/// (a struct with an always-inlined body: a closure would be compiled without them).
struct SigmoidsAndLoss<'a> {
    margins: &'a [f64],
    sig: &'a mut [f64],
}

impl faer::traits::pulp::WithSimd for SigmoidsAndLoss<'_> {
    type Output = f64;

    #[inline(always)]
    fn with_simd<S: faer::traits::pulp::Simd>(self, _simd: S) -> f64 {
        let mut loss = 0.0;
        let mut ds = self.margins.chunks_exact(LANES);
        let mut ss = self.sig.chunks_exact_mut(LANES);
        for (d, s) in (&mut ds).zip(&mut ss) {
            let d = lanes(d);
            let (mut sv, mut sp) = ([0.0f64; LANES], [0.0f64; LANES]);
            for l in 0..LANES {
                (sv[l], sp[l]) = sigmoid_and_softplus(d[l]);
            }
            s.copy_from_slice(&sv);
            for v in sp {
                loss += v;
            }
        }
        for (&d, s) in ds.remainder().iter().zip(ss.into_remainder()) {
            let sp;
            (*s, sp) = sigmoid_and_softplus(d);
            loss += sp;
        }
        loss
    }
}

/// The two sparse n×n matrices of the combined update (MODELS.md §4.4), with a fixed pattern
/// built once from the triplets; only the values change per iteration. For τ = (i, j, q) with
/// `s = σ(t_τ)`: `Mneg[j,i] += s, Mneg[i,j] += s, Mneg[q,q] += s` and
/// `Mpos[q,i] += s, Mpos[j,j] += s, Mpos[i,q] += s`, so that
/// `∇_H [α Σ sp(t_τ)] = 2α (H·Mpos − H·Mneg)`.
///
/// Both are stored transposed (`mneg_t = Mnegᵀ`, row c = column c of Mneg), so that
/// [`Csr::mul_dense_into`] gathers `(H·Mneg)ᵀ = Mnegᵀ·Hᵀ` row by row from Hᵀ
/// ([`Self::products_into`]).
#[derive(Clone, Debug)]
pub struct RoleMatrices {
    pub mneg_t: Csr,
    pub mpos_t: Csr,
    /// Per triplet, the value positions of its three Mneg and three Mpos entries.
    slots: Vec<[usize; 6]>,
}

impl RoleMatrices {
    /// The pattern for `triplets` over n samples (indices must be < n and distinct).
    pub fn new(n: usize, triplets: &[Triplet]) -> Self {
        // (row, column) of Mneg and Mpos, entered transposed.
        let neg: Vec<(usize, usize, f64)> = triplets
            .iter()
            .flat_map(|t| [(t.i, t.j, 0.0), (t.j, t.i, 0.0), (t.q, t.q, 0.0)])
            .collect();
        let pos: Vec<(usize, usize, f64)> = triplets
            .iter()
            .flat_map(|t| [(t.i, t.q, 0.0), (t.j, t.j, 0.0), (t.q, t.i, 0.0)])
            .collect();
        let mneg_t = Csr::from_entries(n, n, &neg);
        let mpos_t = Csr::from_entries(n, n, &pos);
        // Position of Mneg[r, c] / Mpos[r, c], i.e. of (c, r) in the transposes.
        let at = |m: &Csr, r: usize, c: usize| m.position(c, r).unwrap_or(usize::MAX);
        let slots = triplets
            .iter()
            .map(|t| {
                [
                    at(&mneg_t, t.j, t.i),
                    at(&mneg_t, t.i, t.j),
                    at(&mneg_t, t.q, t.q),
                    at(&mpos_t, t.q, t.i),
                    at(&mpos_t, t.j, t.j),
                    at(&mpos_t, t.i, t.q),
                ]
            })
            .collect();
        Self {
            mneg_t,
            mpos_t,
            slots,
        }
    }

    /// Set the values from every triplet's margin, `s_τ = σ(t_τ)`. O(|T|).
    pub fn fill(&mut self, margins: &[f64]) {
        self.fill_sigmoids(margins.iter().map(|&t| sigmoid(t)));
    }

    /// Set the values from `s_τ = σ(t_τ)` given directly (as [`sigmoids_and_loss`] returns
    /// them). Each entry sums its triplets' s in triplet order. O(|T|). Every slot exists:
    /// the pattern was built from the same triplets.
    pub fn fill_sigmoids(&mut self, sigmoids: impl IntoIterator<Item = f64>) {
        self.mneg_t.values_mut().fill(0.0);
        self.mpos_t.values_mut().fill(0.0);
        let (nv, pv) = (self.mneg_t.values_mut(), self.mpos_t.values_mut());
        for (&[n0, n1, n2, p0, p1, p2], s) in self.slots.iter().zip(sigmoids) {
            nv[n0] += s;
            nv[n1] += s;
            nv[n2] += s;
            pv[p0] += s;
            pv[p1] += s;
            pv[p2] += s;
        }
    }

    /// `neg_t ← (H·Mneg)ᵀ` and `pos_t ← (H·Mpos)ᵀ` (n×k each) from Hᵀ (n×k). O(k·nnz).
    pub fn products_into(
        &self,
        h_t: ArrayView2<'_, f64>,
        neg_t: &mut ArrayViewMut2<'_, f64>,
        pos_t: &mut ArrayViewMut2<'_, f64>,
    ) {
        self.mneg_t.mul_dense_into(h_t, neg_t);
        self.mpos_t.mul_dense_into(h_t, pos_t);
    }

    /// Mneg as a dense matrix (tests and small n only).
    pub fn mneg_dense(&self) -> Array2<f64> {
        self.mneg_t.to_dense().reversed_axes()
    }

    /// Mpos as a dense matrix (tests and small n only).
    pub fn mpos_dense(&self) -> Array2<f64> {
        self.mpos_t.to_dense().reversed_axes()
    }
}

/// Gradient of `α Σ sp(t_τ)` with respect to H, `2α(H·Mpos − H·Mneg)` (k×n), for tests and
/// diagnostics.
pub fn ranking_gradient(
    h: ArrayView2<'_, f64>,
    triplets: &[Triplet],
    alpha: f64,
    delta: f64,
) -> Array2<f64> {
    let mut t = Vec::new();
    margins(h, triplets, delta, &mut t);
    let mut roles = RoleMatrices::new(h.ncols(), triplets);
    roles.fill(&t);
    (h.dot(&roles.mpos_dense()) - h.dot(&roles.mneg_dense())) * (2.0 * alpha)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn triplets() -> Vec<Triplet> {
        // Shared roles: 0 is an anchor, a closer and a farther point.
        vec![
            Triplet::new(0, 1, 2),
            Triplet::new(1, 0, 3),
            Triplet::new(2, 3, 0),
            Triplet::new(0, 2, 1),
            Triplet::new(4, 0, 1),
        ]
    }

    fn random(r: usize, c: usize, seed: u64) -> Array2<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        Array2::from_shape_simple_fn((r, c), || 0.1 + rng.r#gen::<f64>())
    }

    /// MODELS.md §4.4: the ranking gradient equals central finite differences of α Σ sp(t).
    #[test]
    fn ranking_gradient_matches_finite_differences() {
        let h = random(3, 6, 1);
        let (alpha, delta) = (0.7, 0.3);
        let ts = triplets();
        let loss = |h: &Array2<f64>| {
            let mut t = Vec::new();
            margins(h.view(), &ts, delta, &mut t);
            ranking_loss(alpha, &t)
        };
        let g = ranking_gradient(h.view(), &ts, alpha, delta);
        let eps = 1e-6;
        let mut fd = Array2::<f64>::zeros(h.dim());
        for idx in ndarray::indices(h.dim()) {
            let (mut hp, mut hm) = (h.clone(), h.clone());
            hp[idx] += eps;
            hm[idx] -= eps;
            fd[idx] = (loss(&hp) - loss(&hm)) / (2.0 * eps);
        }
        let rel = (&g - &fd).mapv(|v| v * v).sum().sqrt() / g.mapv(|v| v * v).sum().sqrt();
        assert!(rel < 1e-6, "relative error {rel}");
    }

    #[test]
    fn role_matrices_match_the_dense_definition() {
        let ts = triplets();
        let h = random(2, 6, 2);
        let mut t = Vec::new();
        margins(h.view(), &ts, 0.5, &mut t);
        let mut roles = RoleMatrices::new(6, &ts);
        roles.fill(&t);
        let (mut neg, mut pos) = (Array2::<f64>::zeros((6, 6)), Array2::<f64>::zeros((6, 6)));
        for (tr, &tt) in ts.iter().zip(&t) {
            let s = sigmoid(tt);
            neg[[tr.j, tr.i]] += s;
            neg[[tr.i, tr.j]] += s;
            neg[[tr.q, tr.q]] += s;
            pos[[tr.q, tr.i]] += s;
            pos[[tr.j, tr.j]] += s;
            pos[[tr.i, tr.q]] += s;
        }
        assert!((roles.mneg_dense() - &neg).iter().all(|v| v.abs() < 1e-15));
        assert!((roles.mpos_dense() - &pos).iter().all(|v| v.abs() < 1e-15));
        assert!(roles.mneg_t.nnz() <= 3 * ts.len());
        // The gathered products are H·Mneg and H·Mpos.
        let h_t = h.t().as_standard_layout().into_owned();
        let (mut hn, mut hp) = (Array2::zeros((6, 2)), Array2::zeros((6, 2)));
        roles.products_into(h_t.view(), &mut hn.view_mut(), &mut hp.view_mut());
        assert!(
            (hn.t().to_owned() - h.dot(&neg))
                .iter()
                .all(|v| v.abs() < 1e-15)
        );
        assert!(
            (hp.t().to_owned() - h.dot(&pos))
                .iter()
                .all(|v| v.abs() < 1e-15)
        );
    }

    /// The margins from Hᵀ, σ and the loss equal [`margins`], [`sigmoid`] and
    /// [`ranking_loss`] bit for bit (9 triplets: two interleaved quads and a remainder).
    #[test]
    fn transposed_margins_and_fused_sigmoids_are_bit_identical() {
        let mut ts = triplets();
        ts.extend([
            Triplet::new(5, 3, 4),
            Triplet::new(3, 5, 1),
            Triplet::new(2, 4, 5),
            Triplet::new(1, 2, 3),
        ]);
        for (seed, delta) in [(3, 0.3), (4, -5.0), (5, 40.0), (6, 0.0)] {
            let h = random(7, 6, seed);
            let mut t = Vec::new();
            margins(h.view(), &ts, delta, &mut t);
            assert!(seed != 4 || t.iter().any(|&v| v < 0.0));
            let h_t = h.t().as_standard_layout().into_owned();
            let mut tt = Vec::new();
            margins_t(h_t.view(), &ts, delta, &mut tt);
            assert_eq!(tt, t);
            let mut sig = Vec::new();
            let loss = sigmoids_and_loss(&t, 0.7, &mut sig);
            assert_eq!(loss, ranking_loss(0.7, &t));
            assert_eq!(sig, t.iter().map(|&v| sigmoid(v)).collect::<Vec<_>>());
        }
    }
}
