//! The Procrustes step of docs/models.md §2.3: `Proc(K) = U Vᵀ` for the thin SVD `K = U Σ Vᵀ`
//! of an a×b matrix K (a ≥ b), the matrix with orthonormal columns nearest to K (it maximises
//! `Tr(Gᵀ K)` over `GᵀG = I`). RMNMF's and PSMF's orthonormal factors are updated by it. faer's
//! thin SVD; for a rank-deficient K any SVD output is a maximiser.

use ndarray::{Array2, ArrayView2};

/// Why `Proc(K)` could not be formed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProcrustesError {
    #[error("the matrix of the Procrustes step has a non-finite entry at ({row}, {col})")]
    NonFinite { row: usize, col: usize },
    #[error("the Procrustes step needs at least as many rows as columns, got {rows}×{cols}")]
    Shape { rows: usize, cols: usize },
    #[error("the SVD of the Procrustes step did not converge")]
    Svd,
}

/// `U Vᵀ` (a×b) of the thin SVD of `k` (a×b, a ≥ b ≥ 1). Refuses a NaN or ∞ (the caller stops
/// the run, docs/models.md §10.4).
pub fn procrustes(k: ArrayView2<'_, f64>) -> Result<Array2<f64>, ProcrustesError> {
    let (a, b) = k.dim();
    if a < b || b == 0 {
        return Err(ProcrustesError::Shape { rows: a, cols: b });
    }
    if let Some(((row, col), _)) = k.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(ProcrustesError::NonFinite { row, col });
    }
    let m = faer::Mat::from_fn(a, b, |i, j| k[[i, j]]);
    let svd = m.thin_svd().map_err(|_| ProcrustesError::Svd)?;
    let uvt = svd.U() * svd.V().transpose();
    Ok(Array2::from_shape_fn((a, b), |(i, j)| uvt[(i, j)]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::linalg::{Op, gemm};
    use ndarray::array;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Orthonormal columns; a matrix with orthonormal columns is its own Procrustes factor; a
    /// positive scaling of one changes nothing; and no random orthonormal G gets a larger
    /// `Tr(Gᵀ K)`.
    #[test]
    fn orthonormal_maximiser_of_the_trace() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let k = Array2::from_shape_fn((7, 3), |_| rng.r#gen::<f64>() - 0.5);
        let g = procrustes(k.view()).unwrap();
        let gtg = gemm(g.view(), Op::T, g.view(), Op::N);
        for i in 0..3 {
            for j in 0..3 {
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((gtg[[i, j]] - want).abs() < 1e-12);
            }
        }
        let again = procrustes(g.view()).unwrap();
        assert!((&again - &g).iter().all(|d| d.abs() < 1e-12));
        let scaled = procrustes((&k * 5.0).view()).unwrap();
        assert!((&scaled - &g).iter().all(|d| d.abs() < 1e-12));
        let tr = |q: &Array2<f64>| (q * &k).sum();
        let best = tr(&g);
        for _ in 0..100 {
            let r = Array2::from_shape_fn((7, 3), |_| rng.r#gen::<f64>() - 0.5);
            let q = procrustes(r.view()).unwrap();
            assert!(tr(&q) <= best + 1e-12);
        }
    }

    #[test]
    fn a_diagonal_matrix_by_hand_and_bad_input() {
        // K = diag(3, −2) stacked on a zero row: U Vᵀ = diag(1, −1) on top of a zero row.
        let k = array![[3.0, 0.0], [0.0, -2.0], [0.0, 0.0]];
        let g = procrustes(k.view()).unwrap();
        let want = array![[1.0, 0.0], [0.0, -1.0], [0.0, 0.0]];
        assert!((&g - &want).iter().all(|d| d.abs() < 1e-14), "{g}");
        let mut bad = k.clone();
        bad[[2, 1]] = f64::NAN;
        assert_eq!(
            procrustes(bad.view()),
            Err(ProcrustesError::NonFinite { row: 2, col: 1 })
        );
        assert!(matches!(
            procrustes(k.t()),
            Err(ProcrustesError::Shape { rows: 2, cols: 3 })
        ));
    }
}
