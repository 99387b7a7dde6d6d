//! Scores of a semi-supervised classification run (docs/models.md §7, §8.5): the samples whose
//! labels the user gave (painted, revealed, `--known-labels`) are the training set; every other
//! sample is scored against the ground truth. Beside the model's own predictions, the same split
//! is scored by the project's linear SVM trained on the given samples, on X and on an NMF's H, so
//! a classifier is always read next to the baseline it has to beat.

use super::EvalError;
use super::classify::{LinearSvm, LinearSvmParams, SvmScaling};
use super::metrics::{ClassificationReport, classification_report};
use ndarray::{ArrayView2, Axis};

/// A classifier's output as the evaluation needs it.
#[derive(Clone, Copy, Debug)]
pub struct ClassifierOutput<'a> {
    /// Predicted class per sample (length n).
    pub predicted: &'a [usize],
    /// The labels the user gave, per sample (length n): the training set. Samples with
    /// `Some` are not scored.
    pub known: &'a [Option<usize>],
}

/// Accuracy, macro-F1 and the confusion matrix on the samples that were not given, for the
/// model and for the linear-SVM baselines on the same split.
#[derive(Clone, Debug, PartialEq)]
pub struct SemiReport {
    /// Samples with a given label (the training set).
    pub given: usize,
    /// The model's predictions on the other samples.
    pub model: ClassificationReport,
    /// A linear SVM trained on the given samples' columns of X, when X was passed.
    pub svm_x: Option<ClassificationReport>,
    /// The same SVM on the columns of an NMF's H, when one was passed.
    pub svm_h: Option<ClassificationReport>,
}

impl SemiReport {
    /// The share of samples given (the label budget).
    pub fn train_share(&self) -> f64 {
        let n = self.given + self.model.n;
        if n == 0 {
            0.0
        } else {
            self.given as f64 / n as f64
        }
    }
}

/// The samples not given, in increasing order.
fn unknown(known: &[Option<usize>]) -> Vec<usize> {
    (0..known.len()).filter(|&i| known[i].is_none()).collect()
}

/// A linear SVM trained on the given columns of `points` (d×n) with their given labels, scored
/// on the other columns against `truth`; the features scaled by `scaling` (standardised on the
/// given samples only).
pub fn svm_on_given(
    points: ArrayView2<'_, f64>,
    known: &[Option<usize>],
    truth: &[usize],
    seed: u64,
    scaling: SvmScaling,
) -> Result<ClassificationReport, EvalError> {
    super::check_same_len("known labels", known.len(), "samples", points.ncols())?;
    super::check_same_len("truth", truth.len(), "samples", points.ncols())?;
    let (train, train_labels): (Vec<usize>, Vec<usize>) = known
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.map(|c| (i, c)))
        .unzip();
    let test = unknown(known);
    if test.is_empty() {
        return Err(EvalError::Empty);
    }
    let params = LinearSvmParams {
        seed,
        scaling,
        ..LinearSvmParams::default()
    };
    let svm = LinearSvm::fit(
        points.select(Axis(1), &train).view(),
        &train_labels,
        &params,
    )?;
    let predicted = svm.predict(points.select(Axis(1), &test).view())?;
    let t: Vec<usize> = test.iter().map(|&i| truth[i]).collect();
    classification_report(&t, &predicted)
}

/// Score `out` against `truth` on the samples not given, with the SVM baselines on `x` (m×n)
/// and `baseline_h` (k×n) where given. A baseline that cannot be computed becomes a note.
pub fn score_semi(
    out: &ClassifierOutput<'_>,
    truth: &[usize],
    x: Option<ArrayView2<'_, f64>>,
    baseline_h: Option<ArrayView2<'_, f64>>,
    seed: u64,
    scaling: SvmScaling,
) -> Result<(SemiReport, Vec<String>), EvalError> {
    let n = truth.len();
    super::check_same_len("predictions", out.predicted.len(), "truth", n)?;
    super::check_same_len("known labels", out.known.len(), "truth", n)?;
    let test = unknown(out.known);
    if test.is_empty() {
        return Err(EvalError::Empty);
    }
    let t: Vec<usize> = test.iter().map(|&i| truth[i]).collect();
    let p: Vec<usize> = test.iter().map(|&i| out.predicted[i]).collect();
    let model = classification_report(&t, &p)?;
    let mut notes = Vec::new();
    let mut baseline = |what: &str, points: Option<ArrayView2<'_, f64>>| {
        points.and_then(
            |pts| match svm_on_given(pts, out.known, truth, seed, scaling) {
                Ok(r) => Some(r),
                Err(e) => {
                    notes.push(format!("linear SVM on {what}: {e}"));
                    None
                }
            },
        )
    };
    let svm_x = baseline("X", x);
    let svm_h = baseline("NMF's H", baseline_h);
    Ok((
        SemiReport {
            given: n - test.len(),
            model,
            svm_x,
            svm_h,
        },
        notes,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn only_the_samples_not_given_are_scored() {
        // Six samples; 0 and 3 given. The model gets 3 of the 4 others right; the one wrong
        // (sample 5, truth 1, predicted 0) is scored, the given ones are not.
        let truth = [0, 0, 0, 1, 1, 1];
        let known = [Some(0), None, None, Some(1), None, None];
        let predicted = [1, 0, 0, 1, 1, 0]; // sample 0's prediction is ignored: it was given
        let out = ClassifierOutput {
            predicted: &predicted,
            known: &known,
        };
        let (r, notes) = score_semi(&out, &truth, None, None, 0, SvmScaling::default()).unwrap();
        assert!(notes.is_empty());
        assert_eq!(r.given, 2);
        assert_eq!(r.model.n, 4);
        assert!((r.model.accuracy - 0.75).abs() < 1e-15);
        // Class 0: TP 2, FP 1, FN 0 → P 2/3, R 1, F1 0.8; class 1: TP 1, FP 0, FN 1 → F1 2/3.
        assert!((r.model.macro_f1 - (0.8 + 2.0 / 3.0) / 2.0).abs() < 1e-15);
        assert!((r.train_share() - 1.0 / 3.0).abs() < 1e-15);
        assert_eq!(r.model.confusion.counts, vec![vec![2, 0], vec![1, 1]]);
    }

    #[test]
    fn the_svm_baseline_trains_on_the_given_samples_only() {
        // Two separated groups on a line; one given sample each: the SVM classifies the rest.
        let x = array![[0.0, 0.1, 0.2, 5.0, 5.1, 5.2]];
        let truth = [0, 0, 0, 1, 1, 1];
        let known = [Some(0), None, None, None, None, Some(1)];
        let r = svm_on_given(x.view(), &known, &truth, 0, SvmScaling::default()).unwrap();
        assert_eq!(r.n, 4);
        assert_eq!(r.accuracy, 1.0);
        // A given label that disagrees with the truth is what the SVM learns from.
        let wrong = [Some(1), None, None, None, None, Some(0)];
        let r = svm_on_given(x.view(), &wrong, &truth, 0, SvmScaling::default()).unwrap();
        assert_eq!(r.accuracy, 0.0);
    }

    #[test]
    fn a_baseline_that_cannot_train_is_a_note_and_the_model_is_still_scored() {
        let x = array![[0.0, 1.0, 2.0]];
        let truth = [0, 1, 1];
        let known = [Some(0), None, None]; // one class given: no SVM
        let predicted = [0, 1, 0];
        let out = ClassifierOutput {
            predicted: &predicted,
            known: &known,
        };
        let (r, notes) =
            score_semi(&out, &truth, Some(x.view()), None, 0, SvmScaling::default()).unwrap();
        assert_eq!(r.model.accuracy, 0.5);
        assert!(r.svm_x.is_none());
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("linear SVM on X") && notes[0].contains("2 classes"));
    }

    #[test]
    fn everything_given_leaves_nothing_to_score() {
        let out = ClassifierOutput {
            predicted: &[0, 1],
            known: &[Some(0), Some(1)],
        };
        assert!(matches!(
            score_semi(&out, &[0, 1], None, None, 0, SvmScaling::default()),
            Err(EvalError::Empty)
        ));
    }
}
