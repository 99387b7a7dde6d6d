//! The scoring stages of a trial: the baseline a protocol needs (an NMF's H for the linear SVM
//! a classifier is read next to), then the one evaluation of the run
//! ([`crate::engine::eval::evaluate_run_with`]), and, in the semi-supervised protocol, every
//! model's scores on the samples whose labels were not given (docs/models.md §8.5).

use crate::engine::constraints::Triplet;
use crate::engine::data::Dataset;
use crate::engine::eval::{
    self, ClassificationReport, ClassifierOutput, EvalProgress, RunEvaluation, RunInput,
    SvmScaling, score_semi, svm_on_given,
};
use crate::engine::jobs::experiment::nmf_baseline;
use crate::engine::models::Predictions;
use ndarray::{Array2, ArrayView2};
use std::sync::Arc;

/// How a trial is scored (docs/models.md §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Protocol {
    /// k-means restarts on H behind ACC and NMI (§8.2).
    pub kmeans_restarts: usize,
    /// The 80/20 stratified split with a linear SVM on H (§8.3).
    pub split: bool,
    /// Feature scaling of every linear SVM.
    pub svm: SvmScaling,
    /// A classifier's predictions are scored on the samples not given, beside linear SVMs on
    /// X and on an NMF's H trained on the given ones (`run`, the app).
    pub classifier: bool,
    /// The share of triplets kept is also measured in X (`run`).
    pub kept_in_x: bool,
    /// Every model is scored on the samples not given (`sweep --protocol semi`): a classifier
    /// by its predictions, any other by a linear SVM on its H; the SVMs on X and on an NMF's H
    /// on the same split beside it.
    pub given: bool,
}

impl Default for Protocol {
    /// The app's and `run`'s protocol.
    fn default() -> Self {
        Self {
            kmeans_restarts: 50,
            split: true,
            svm: SvmScaling::Standardized,
            classifier: true,
            kept_in_x: true,
            given: false,
        }
    }
}

impl Protocol {
    /// No score at all: the trial ends after the fit (the Python estimators, which score
    /// with their own calls when asked).
    pub const FIT_ONLY: Protocol = Protocol {
        kmeans_restarts: 0,
        split: false,
        svm: SvmScaling::Standardized,
        classifier: false,
        kept_in_x: false,
        given: false,
    };

    /// Whether the protocol asks for any score (k-means restarts, the split, a classifier's
    /// or the given samples' scores, the triplets kept in X).
    pub fn scores_anything(&self) -> bool {
        self.kmeans_restarts > 0 || self.split || self.classifier || self.kept_in_x || self.given
    }
}

/// A finished fit and its data, as the scoring stages read them.
#[derive(Clone, Copy, Debug)]
pub struct ScoreInput<'a> {
    /// H, k×n.
    pub h: ArrayView2<'a, f64>,
    /// The rank the model was fitted with (the NMF baseline's).
    pub k: usize,
    pub assignments: Option<&'a [usize]>,
    pub predictions: Option<&'a Predictions>,
    /// Ground truth, for scoring only.
    pub truth: Option<&'a [usize]>,
    pub n_classes: usize,
    /// The data: X for the triplets kept in X and the SVM baselines, and for the NMF baseline.
    pub data: Option<&'a Arc<Dataset>>,
    /// The triplets scored (kept in H, in X).
    pub triplets: &'a [Triplet],
    /// The known labels per sample (a classifier's training set).
    pub known: &'a [Option<usize>],
    /// Seed of k-means, of the splits and of the NMF baseline.
    pub seed: u64,
}

/// Every model's scores on the samples not given (`Protocol::given`).
#[derive(Clone, Debug, PartialEq)]
pub struct GivenScores {
    /// The model: a classifier's predictions, or a linear SVM on its H.
    pub model: ClassificationReport,
    /// A linear SVM on X.
    pub svm_x: Option<ClassificationReport>,
    /// A linear SVM on an NMF's H.
    pub svm_h: Option<ClassificationReport>,
    /// A baseline that could not be computed.
    pub notes: Vec<String>,
    /// The model is a classifier (its predictions were scored).
    pub classifier: bool,
}

/// The scores of a trial.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scores {
    pub evaluation: RunEvaluation,
    /// Why the NMF baseline is missing, when the protocol needed one.
    pub baseline_note: Option<String>,
    /// `Protocol::given`: the scores on the samples not given, or why there are none.
    pub given: Option<Result<GivenScores, String>>,
}

/// The NMF baseline of the linear SVM on H, and why it is missing.
pub type Baseline = (Option<Array2<f64>>, Option<String>);

/// The baseline stage, then the evaluation stage (see the module docs).
pub fn score(input: &ScoreInput<'_>, protocol: &Protocol, progress: &EvalProgress) -> Scores {
    let baseline = baseline(input, protocol);
    evaluate(input, protocol, baseline, progress)
}

/// A classifier is read next to a linear SVM on NMF's H, trained on the same given labels.
fn scores_classifier(input: &ScoreInput<'_>, protocol: &Protocol) -> bool {
    protocol.classifier && input.predictions.is_some()
}

/// The baseline stage: an NMF fit on the data with the trial's rank and seed, when the
/// protocol reads a linear SVM on its H (a classifier on labelled data, or the semi protocol).
pub fn baseline(input: &ScoreInput<'_>, protocol: &Protocol) -> Baseline {
    let classifier = scores_classifier(input, protocol);
    let labelled = input.truth.is_some();
    let Some(data) = input
        .data
        .filter(|d| (classifier && d.labels.is_some()) || (protocol.given && labelled))
    else {
        return (None, None);
    };
    match nmf_baseline(data, input.k, input.seed) {
        Ok(h) => (Some(h), None),
        Err(e) => (None, Some(format!("no NMF baseline for the SVM on H: {e}"))),
    }
}

/// The evaluation stage: [`eval::evaluate_run_with`] by the protocol, then the protocol's
/// scores on the samples not given.
pub fn evaluate(
    input: &ScoreInput<'_>,
    protocol: &Protocol,
    (baseline, baseline_note): Baseline,
    progress: &EvalProgress,
) -> Scores {
    let classifier = scores_classifier(input, protocol);
    let x = input
        .data
        .filter(|d| protocol.kept_in_x || (classifier && d.labels.is_some()))
        .map(|d| d.x.view());
    let evaluation = eval::evaluate_run_with(
        &RunInput {
            classifier: input
                .predictions
                .filter(|_| classifier)
                .map(|p| ClassifierOutput {
                    predicted: &p.labels,
                    known: input.known,
                }),
            baseline_h: baseline.as_ref().map(Array2::view),
            h: input.h.view(),
            x,
            assignments: input.assignments,
            truth: input.truth,
            n_classes: input.n_classes,
            triplets: input.triplets,
            seed: input.seed,
        },
        &eval::Protocol {
            kmeans_restarts: protocol.kmeans_restarts.max(1),
            classify: protocol.split,
            svm: protocol.svm,
        },
        progress,
    );
    let given = match (protocol.given, input.truth, input.data) {
        (true, Some(truth), Some(data)) => Some(
            given_scores(input, data, truth, baseline.as_ref(), protocol.svm)
                .map_err(|e| e.to_string()),
        ),
        _ => None,
    };
    Scores {
        evaluation,
        baseline_note,
        given,
    }
}

/// `Protocol::given`: the model's scores on the samples not given, and the linear-SVM
/// baselines (on X, on an NMF's H) on the same split.
fn given_scores(
    input: &ScoreInput<'_>,
    data: &Dataset,
    truth: &[usize],
    baseline: Option<&Array2<f64>>,
    scaling: SvmScaling,
) -> Result<GivenScores, eval::EvalError> {
    let (known, seed) = (input.known, input.seed);
    match input.predictions {
        Some(p) => {
            let out = ClassifierOutput {
                predicted: &p.labels,
                known,
            };
            let (r, notes) = score_semi(
                &out,
                truth,
                Some(data.x.view()),
                baseline.map(Array2::view),
                seed,
                scaling,
            )?;
            Ok(GivenScores {
                model: r.model,
                svm_x: r.svm_x,
                svm_h: r.svm_h,
                notes,
                classifier: true,
            })
        }
        // Not a classifier: a linear SVM on its H, trained on the given samples.
        None => Ok(GivenScores {
            model: svm_on_given(input.h, known, truth, seed, scaling)?,
            svm_x: Some(svm_on_given(data.x.view(), known, truth, seed, scaling)?),
            svm_h: baseline
                .map(|b| svm_on_given(b.view(), known, truth, seed, scaling))
                .transpose()?,
            notes: Vec::new(),
            classifier: false,
        }),
    }
}
