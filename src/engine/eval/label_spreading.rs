//! Label spreading (Zhou, Bousquet, Lal, Weston, Schölkopf, *Learning with Local and Global
//! Consistency*, NIPS 2004): the graph baseline a semi-supervised classifier is read against
//! beside the linear SVM (docs/models.md §7.8, §8.5).
//!
//! With W the binary symmetrised p-NN graph of the samples (docs/models.md §2.1), D its degrees
//! and S = D^{−1/2} W D^{−1/2}, the class scores iterate
//!
//!     F ← α S F + (1 − α) Y,   F₀ = Y,
//!
//! Y the one-hot rows of the given labels (zero rows for the others), until the largest change
//! of an entry is below `tol` or `max_iter` passes; each sample's prediction is the argmax of
//! its row (ties to the lower class). The fixed point is (1 − α)(I − αS)⁻¹Y. Everything is
//! sparse: O(p·n·c) per pass, nothing n×n.

use super::EvalError;
use super::metrics::{ClassificationReport, classification_report};
use crate::engine::linalg::knn_graph;
use ndarray::{Array2, ArrayView2};

/// Settings of [`label_spreading`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LabelSpreadingParams {
    /// Neighbours per sample of the graph (scikit-learn's `n_neighbors` default: 7).
    pub neighbors: usize,
    /// α in (0, 1): how much a sample takes from its neighbours against its own label (Zhou
    /// et al. use 0.99).
    pub alpha: f64,
    /// Passes at most.
    pub max_iter: usize,
    /// Stop when no score changes by more than this.
    pub tol: f64,
}

impl Default for LabelSpreadingParams {
    fn default() -> Self {
        Self {
            neighbors: 7,
            alpha: 0.99,
            max_iter: 3000,
            tol: 1e-9,
        }
    }
}

/// Predicted class of every column of `x` (m×n) from the given labels `known` (length n, `Some`
/// for a given sample), over `n_classes` classes.
pub fn label_spreading(
    x: ArrayView2<'_, f64>,
    known: &[Option<usize>],
    n_classes: usize,
    params: &LabelSpreadingParams,
) -> Result<Vec<usize>, EvalError> {
    let n = x.ncols();
    super::check_same_len("known labels", known.len(), "samples", n)?;
    if !(params.alpha > 0.0 && params.alpha < 1.0) {
        return Err(EvalError::InvalidParam {
            name: "alpha",
            why: format!("must lie strictly between 0 and 1, got {}", params.alpha),
        });
    }
    if n < 2 || params.neighbors == 0 {
        return Err(EvalError::Empty);
    }
    let c = n_classes.max(1);
    let mut y = Array2::<f64>::zeros((n, c));
    for (i, l) in known.iter().enumerate() {
        if let Some(l) = *l {
            if l >= c {
                return Err(EvalError::InvalidParam {
                    name: "known",
                    why: format!("sample {i} has class {l}, but there are {c} classes"),
                });
            }
            y[[i, l]] = 1.0;
        }
    }
    let w = knn_graph(x, params.neighbors.min(n - 1));
    let inv_sqrt_deg: Vec<f64> = (0..n)
        .map(|i| {
            let d: f64 = w.row(i).1.iter().sum();
            if d > 0.0 { 1.0 / d.sqrt() } else { 0.0 }
        })
        .collect();
    let mut f = y.clone();
    let mut next = Array2::<f64>::zeros((n, c));
    for _ in 0..params.max_iter {
        let mut change = 0.0f64;
        for (i, &di) in inv_sqrt_deg.iter().enumerate() {
            let (cols, vals) = w.row(i);
            for a in 0..c {
                let mut s = 0.0;
                for (&j, &v) in cols.iter().zip(vals) {
                    s += v * inv_sqrt_deg[j] * f[[j, a]];
                }
                let v = params.alpha * di * s + (1.0 - params.alpha) * y[[i, a]];
                change = change.max((v - f[[i, a]]).abs());
                next[[i, a]] = v;
            }
        }
        std::mem::swap(&mut f, &mut next);
        if change < params.tol {
            break;
        }
    }
    Ok(crate::engine::linalg::argmax_rows(f.view()))
}

/// [`label_spreading`] with the default settings, scored on the samples not given against
/// `truth`.
pub fn label_spreading_on_given(
    x: ArrayView2<'_, f64>,
    known: &[Option<usize>],
    truth: &[usize],
) -> Result<ClassificationReport, EvalError> {
    super::check_same_len("truth", truth.len(), "samples", x.ncols())?;
    let c = truth.iter().copied().max().map_or(1, |m| m + 1);
    let pred = label_spreading(x, known, c, &LabelSpreadingParams::default())?;
    let test: Vec<usize> = (0..known.len()).filter(|&i| known[i].is_none()).collect();
    if test.is_empty() {
        return Err(EvalError::Empty);
    }
    let t: Vec<usize> = test.iter().map(|&i| truth[i]).collect();
    let p: Vec<usize> = test.iter().map(|&i| pred[i]).collect();
    classification_report(&t, &p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// Two chains of four points far apart, one label given at the end of each: every point
    /// takes its chain's label.
    #[test]
    fn labels_spread_along_each_chain() {
        let x = array![[0.0, 1.0, 2.0, 3.0, 100.0, 101.0, 102.0, 103.0]];
        let known = [Some(0), None, None, None, None, None, None, Some(1)];
        let p = LabelSpreadingParams {
            neighbors: 1,
            ..LabelSpreadingParams::default()
        };
        let pred = label_spreading(x.view(), &known, 2, &p).unwrap();
        assert_eq!(pred, vec![0, 0, 0, 0, 1, 1, 1, 1]);
        // With the default 7 neighbours: two chains of ten, each point's neighbours in its own.
        let x = ndarray::Array2::from_shape_fn((1, 20), |(_, j)| {
            if j < 10 { j as f64 } else { 90.0 + j as f64 }
        });
        let truth: Vec<usize> = (0..20).map(|j| usize::from(j >= 10)).collect();
        let mut known = vec![None; 20];
        known[0] = Some(0);
        known[19] = Some(1);
        let r = label_spreading_on_given(x.view(), &known, &truth).unwrap();
        assert_eq!((r.n, r.accuracy), (18, 1.0));
    }

    /// The iteration reaches the closed form (1 − α)(I − αS)⁻¹Y, computed densely on a
    /// 5-sample path graph (p = 1 joins each point to its nearest neighbour).
    #[test]
    fn iteration_reaches_the_closed_form() {
        let x = array![[0.0, 1.0, 2.5, 4.5, 7.0]];
        let known = [Some(0), None, None, Some(1), None];
        let p = LabelSpreadingParams {
            neighbors: 1,
            alpha: 0.9,
            ..LabelSpreadingParams::default()
        };
        // 1-NN, symmetrised: 0–1, 1–2 (2's nearest is 1), 3–2, 4–3.
        let edges = [(0, 1), (1, 2), (2, 3), (3, 4)];
        let n = 5;
        let mut w = Array2::<f64>::zeros((n, n));
        for (a, b) in edges {
            w[[a, b]] = 1.0;
            w[[b, a]] = 1.0;
        }
        let d: Vec<f64> = w.rows().into_iter().map(|r| r.sum()).collect();
        // Solve (I − αS) F = (1 − α) Y by Gauss–Seidel to convergence (dense, test size).
        let mut f = Array2::<f64>::zeros((n, 2));
        for _ in 0..20_000 {
            for (i, (&given, &di)) in known.iter().zip(&d).enumerate() {
                for a in 0..2 {
                    let y = f64::from(given == Some(a));
                    let mut s = 0.0;
                    for (j, &dj) in d.iter().enumerate() {
                        s += w[[i, j]] / (di * dj).sqrt() * f[[j, a]];
                    }
                    f[[i, a]] = p.alpha * s + (1.0 - p.alpha) * y;
                }
            }
        }
        let want: Vec<usize> = f
            .rows()
            .into_iter()
            .map(|r| usize::from(r[1] > r[0]))
            .collect();
        let got = label_spreading(x.view(), &known, 2, &p).unwrap();
        assert_eq!(got, want);
        assert_eq!(got, vec![0, 0, 1, 1, 1]);
    }
}
