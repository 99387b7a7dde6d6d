//! New samples in a fitted basis: H ≥ 0 minimising `‖X − WH‖²_F` with W fixed, by NMF's
//! multiplicative H rule (docs/models.md (3.3)) with the fit's stopping rule. This is what
//! scikit-learn's `NMF.transform` does for the MU solver, and the natural out-of-sample
//! extension of the models whose data term is that reconstruction (NMF and the models that
//! add graph, constraint or ranking terms on the fitted samples only: new samples carry none).

use super::rule::mu_update;
use crate::engine::linalg::{Op, gemm_into, gram_of_columns};
use crate::engine::models::stop::converged;
use ndarray::{Array2, ArrayView2, Zip};

/// H of the new samples, the iterations run and `‖X − WH‖²_F` at the end.
#[derive(Clone, Debug)]
pub struct Projection {
    pub h: Array2<f64>,
    pub iterations: usize,
    pub objective: f64,
}

/// Project the columns of `x` (m×n′, preprocessed as the fitted samples were) onto the
/// nonnegative span of `w` (m×k): from every entry at `√(mean(X)/k)` (scikit-learn's start;
/// strictly positive, so the rule can move it), at most `max_iter` MU steps of H, stopping on
/// [`converged`] with `tol`. Deterministic: no random start.
pub fn project(
    w: ArrayView2<'_, f64>,
    x: ArrayView2<'_, f64>,
    max_iter: usize,
    tol: f64,
) -> Projection {
    let (k, n) = (w.ncols(), x.ncols());
    let mut wtx = Array2::zeros((k, n));
    gemm_into(&mut wtx.view_mut(), 1.0, w, Op::T, x, Op::N, false);
    let mut wtw = Array2::zeros((k, k));
    gram_of_columns(&mut wtw.view_mut(), w);
    let mean = x.mean().unwrap_or(0.0).max(0.0);
    let start = (mean / k.max(1) as f64).sqrt();
    let mut h = Array2::from_elem((k, n), if start > 0.0 { start } else { 1.0 });
    let x_norm2: f64 = x.iter().map(|v| v * v).sum();
    let mut wtwh = Array2::zeros((k, n));
    let objective = |h: &Array2<f64>, wtwh: &mut Array2<f64>| {
        gemm_into(
            &mut wtwh.view_mut(),
            1.0,
            wtw.view(),
            Op::N,
            h.view(),
            Op::N,
            false,
        );
        // ‖X‖² − 2⟨WᵀX, H⟩ + ⟨WᵀW·H, H⟩, clamped at 0 against rounding.
        let cross: f64 = Zip::from(&wtx).and(h).fold(0.0, |a, &p, &q| a + p * q);
        let gram: f64 = Zip::from(&*wtwh).and(h).fold(0.0, |a, &p, &q| a + p * q);
        (x_norm2 - 2.0 * cross + gram).max(0.0)
    };
    let f0 = objective(&h, &mut wtwh);
    let (mut prev, mut iterations) = (f0, 0);
    while iterations < max_iter {
        // `wtwh` holds WᵀW·H of the current H (from the objective).
        mu_update(&mut h, &wtx, &wtwh);
        iterations += 1;
        let f = objective(&h, &mut wtwh);
        let done = converged(f0, prev, f, tol) || !f.is_finite();
        prev = f;
        if done {
            break;
        }
    }
    Projection {
        h,
        iterations,
        objective: prev,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_in_the_span_are_recovered_and_the_objective_falls_to_zero() {
        // W: two nonnegative directions in 4 features; X: known nonnegative mixtures.
        let w = ndarray::array![[1.0, 0.0], [0.5, 0.2], [0.0, 1.0], [0.3, 0.3]];
        let h_true = ndarray::array![[1.0, 0.2, 2.0], [0.5, 3.0, 0.1]];
        let x = w.dot(&h_true);
        let p = project(w.view(), x.view(), 5000, 0.0);
        assert_eq!(p.iterations, 5000);
        assert!(p.objective < 1e-12, "objective {}", p.objective);
        for (a, b) in p.h.iter().zip(&h_true) {
            assert!((a - b).abs() < 1e-5, "{a} vs {b}");
        }
        // The tolerance stops it early, with a larger but small objective.
        let early = project(w.view(), x.view(), 5000, 1e-4);
        assert!(
            early.iterations < 5000
                && early.objective < 1e-2 * x.iter().map(|v| v * v).sum::<f64>()
        );
    }

    #[test]
    fn a_sample_outside_the_cone_gets_its_nonnegative_least_squares_fit() {
        // One basis vector e₁; the sample (−1, 2) projects to h = 0 (the NNLS answer), not −1.
        let w = ndarray::array![[1.0], [0.0]];
        let x = ndarray::array![[0.0], [2.0]];
        let p = project(w.view(), x.view(), 200, 0.0);
        assert!(p.h[[0, 0]] < 1e-6);
        assert!((p.objective - 4.0).abs() < 1e-6);
    }
}
