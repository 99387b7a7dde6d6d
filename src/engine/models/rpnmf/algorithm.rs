//! RPNMF kernels (MODELS.md §4.3–§4.4): triplet margins `t_τ`, the ranking loss
//! `α Σ sp(t_τ)` of eq. (9) and the role matrices `Mneg`/`Mpos`.

use crate::engine::linalg::Csr;
use crate::engine::linalg::special::{sigmoid, softplus};
use crate::engine::models::Triplet;
use ndarray::{Array2, ArrayView2};

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

/// The two sparse n×n matrices of the combined update (MODELS.md §4.4), with a fixed pattern
/// built once from the triplets; only the values change per iteration. For τ = (i, j, q) with
/// `s = σ(t_τ)`: `Mneg[j,i] += s, Mneg[i,j] += s, Mneg[q,q] += s` and
/// `Mpos[q,i] += s, Mpos[j,j] += s, Mpos[i,q] += s`, so that
/// `∇_H [α Σ sp(t_τ)] = 2α (H·Mpos − H·Mneg)`.
#[derive(Clone, Debug)]
pub struct RoleMatrices {
    pub mneg: Csr,
    pub mpos: Csr,
    /// Per triplet, the value positions of its three Mneg and three Mpos entries.
    slots: Vec<[usize; 6]>,
}

impl RoleMatrices {
    /// The pattern for `triplets` over n samples (indices must be < n and distinct).
    pub fn new(n: usize, triplets: &[Triplet]) -> Self {
        let neg: Vec<(usize, usize, f64)> = triplets
            .iter()
            .flat_map(|t| [(t.j, t.i, 0.0), (t.i, t.j, 0.0), (t.q, t.q, 0.0)])
            .collect();
        let pos: Vec<(usize, usize, f64)> = triplets
            .iter()
            .flat_map(|t| [(t.q, t.i, 0.0), (t.j, t.j, 0.0), (t.i, t.q, 0.0)])
            .collect();
        let mneg = Csr::from_entries(n, n, &neg);
        let mpos = Csr::from_entries(n, n, &pos);
        let at = |m: &Csr, r: usize, c: usize| m.position(r, c).unwrap_or(usize::MAX);
        let slots = triplets
            .iter()
            .map(|t| {
                [
                    at(&mneg, t.j, t.i),
                    at(&mneg, t.i, t.j),
                    at(&mneg, t.q, t.q),
                    at(&mpos, t.q, t.i),
                    at(&mpos, t.j, t.j),
                    at(&mpos, t.i, t.q),
                ]
            })
            .collect();
        Self { mneg, mpos, slots }
    }

    /// Set the values from `s_τ = σ(t_τ)` of every triplet's margin. O(|T|).
    pub fn fill(&mut self, margins: &[f64]) {
        self.mneg.values_mut().fill(0.0);
        self.mpos.values_mut().fill(0.0);
        for (slot, &t) in self.slots.iter().zip(margins) {
            let s = sigmoid(t);
            let (neg, pos) = slot.split_at(3);
            let nv = self.mneg.values_mut();
            for &p in neg {
                if let Some(v) = nv.get_mut(p) {
                    *v += s;
                }
            }
            let pv = self.mpos.values_mut();
            for &p in pos {
                if let Some(v) = pv.get_mut(p) {
                    *v += s;
                }
            }
        }
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
    (roles.mpos.left_mul(h) - roles.mneg.left_mul(h)) * (2.0 * alpha)
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
        assert!(
            (roles.mneg.to_dense() - neg)
                .iter()
                .all(|v| v.abs() < 1e-15)
        );
        assert!(
            (roles.mpos.to_dense() - pos)
                .iter()
                .all(|v| v.abs() < 1e-15)
        );
        assert!(roles.mneg.nnz() <= 3 * ts.len());
    }
}
