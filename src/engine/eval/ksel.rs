//! Choosing the rank k (docs/models.md §8.6), the pieces `sweep --grid k=…` and the app's
//! "Scan k" share: a run's labelling, its relative reconstruction error, and the summary of
//! one rank's repeats (mean error, cophenetic correlation of the consensus matrix).

use super::{EvalError, MeanStd, argmax_labels, consensus_cophenetic};
use ndarray::ArrayView2;

/// The cluster of each sample for the consensus: the model's own labels when it has them,
/// else the argmax of each column of H (k×n).
pub fn run_labelling(assignments: Option<&[usize]>, h: ArrayView2<'_, f64>) -> Vec<usize> {
    match assignments {
        Some(a) => a.to_vec(),
        None => argmax_labels(h),
    }
}

/// ‖X − WH‖_F / ‖X‖_F (X m×n, W m×k, H k×n); `None` when ‖X‖ is 0 or the error is not
/// finite.
pub fn relative_error(
    x: ArrayView2<'_, f64>,
    w: ArrayView2<'_, f64>,
    h: ArrayView2<'_, f64>,
) -> Option<f64> {
    let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
    let wh = w.dot(&h);
    let diff = (&x - &wh).iter().map(|v| v * v).sum::<f64>().sqrt();
    (norm > 0.0 && diff.is_finite()).then(|| diff / norm)
}

/// The stability part of one rank's summary.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RankStability {
    /// Runs with a labelling.
    pub runs: usize,
    /// Relative reconstruction error, mean ± std over the runs that have one.
    pub recon_error: Option<MeanStd>,
    /// Cophenetic correlation of the consensus matrix of the labellings (≥ 2 runs).
    pub cophenetic: Option<f64>,
}

/// Summarise one rank's repeats from their labellings (in repeat order) and the relative
/// errors of those that have a W.
pub fn rank_stability(labelings: &[Vec<usize>], recon: &[f64]) -> Result<RankStability, EvalError> {
    let cophenetic = if labelings.len() >= 2 {
        Some(consensus_cophenetic(labelings)?)
    } else {
        None
    };
    Ok(RankStability {
        runs: labelings.len(),
        recon_error: (!recon.is_empty()).then(|| MeanStd::of(recon)),
        cophenetic,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn relative_error_is_zero_for_an_exact_factorisation() {
        let w = array![[1.0, 0.0], [0.0, 2.0]];
        let h = array![[1.0, 2.0], [3.0, 0.5]];
        let x = w.dot(&h);
        assert_eq!(relative_error(x.view(), w.view(), h.view()), Some(0.0));
        // W H = 0: the whole of X is error.
        let zero = array![[0.0, 0.0], [0.0, 0.0]];
        let e = relative_error(x.view(), zero.view(), h.view());
        assert_eq!(e, Some(1.0));
        assert_eq!(relative_error(zero.view(), w.view(), h.view()), None);
    }

    #[test]
    fn one_run_has_no_cophenetic_and_two_agreeing_runs_score_one() {
        let one = rank_stability(&[vec![0, 1, 1]], &[]).unwrap();
        assert_eq!((one.runs, one.cophenetic, one.recon_error), (1, None, None));
        let two = rank_stability(&[vec![0, 1, 1, 0], vec![1, 0, 0, 1]], &[0.2, 0.4]).unwrap();
        assert_eq!(two.runs, 2);
        assert!((two.cophenetic.unwrap() - 1.0).abs() < 1e-12);
        let r = two.recon_error.unwrap();
        assert!((r.mean - 0.3).abs() < 1e-12);
        assert_eq!(
            run_labelling(Some(&[2, 0]), array![[1.0, 0.0]].view()),
            [2, 0]
        );
        assert_eq!(
            run_labelling(None, array![[1.0, 0.0], [0.0, 1.0]].view()),
            [0, 1]
        );
    }
}
