//! Evaluation: k-means on H, clustering and classification metrics, triplets kept
//! (docs/models.md §2.6 and §8).
//!
//! * [`consensus`]: the consensus matrix of repeated runs' labellings and its cophenetic
//!   correlation, the stability score for choosing k (§8.6).
//! * [`ksel`]: a run's labelling and relative error, and one rank's summary over its
//!   repeats, for choosing k (`sweep --grid k=…` and the app's scan, §8.6).
//! * [`kmeans`]: Lloyd's k-means on the columns of a matrix, single and repeated (§2.6, §8.2).
//! * [`metrics`]: ACC by the Hungarian best map, NMI in three normalisations, macro-F1,
//!   confusion matrices, and the mean ± std summary of repeated k-means (§8.1, §8.5).
//! * [`classify`]: the stratified split and a LIBLINEAR-style linear SVM (§8.3, §8.5).
//! * [`triplets`]: the share of triplets a representation keeps.
//! * [`semi`]: a classifier's scores on the samples whose labels were not given, beside a
//!   linear SVM trained on the given ones (§7, §8.5).
//! * [`run`]: the one evaluation of a finished run ([`evaluate_run`]), the evaluation stage of
//!   the pipeline every front end runs ([`crate::engine::jobs::trial`]).
//!
//! Every random choice is seeded (§10.7): the same seed gives the same numbers, whatever the
//! number of rayon threads.

pub mod classify;
pub mod consensus;
pub mod kmeans;
pub mod ksel;
pub mod label_spreading;
pub mod metrics;
pub mod run;
pub mod semi;
pub mod triplets;

pub use classify::{
    ClassificationOutcome, ClassificationSummary, FeatureScaler, LinearSvm, LinearSvmParams, Split,
    SvmScaling, classify_repeated, classify_split, stratified_split,
};
pub use consensus::{
    argmax_labels, consensus_cophenetic, consensus_matrix, cophenetic_correlation,
};
pub use kmeans::{KMeansParams, KMeansResult, KMeansRun, RepeatedKMeans, kmeans, repeated_kmeans};
pub use ksel::{RankStability, rank_stability, relative_error, run_labelling};
pub use label_spreading::{LabelSpreadingParams, label_spreading, label_spreading_on_given};
pub use metrics::{
    ClassScore, ClassificationReport, ClusteringScores, ClusteringSummary, ConfusionMatrix,
    MeanStd, NmiNorm, accuracy, classification_report, clustering_accuracy, clustering_scores,
    macro_f1, nmi, summarize_repeated_kmeans,
};
pub use run::{
    ClusterMethod, EvalProgress, Protocol, RunEvaluation, RunInput, TRAIN_FRACTION, evaluate_run,
    evaluate_run_with,
};
pub use semi::{ClassifierOutput, SemiReport, score_semi, svm_on_given};
pub use triplets::{KeptByOne, kept_by_one, triplets_kept, triplets_satisfied};

/// docs/models.md §8.2 in one call: repeated k-means on the columns of `points` (d×n) and the
/// mean ± std of ACC and NMI over the restarts against `truth`.
pub fn cluster_and_score(
    points: ndarray::ArrayView2<'_, f64>,
    truth: &[usize],
    params: &KMeansParams,
) -> Result<(RepeatedKMeans, ClusteringSummary), EvalError> {
    check_same_len("truth", truth.len(), "samples", points.ncols())?;
    let rep = repeated_kmeans(points, params)?;
    let summary = summarize_repeated_kmeans(truth, &rep)?;
    Ok((rep, summary))
}

/// Errors of the evaluation stack. All of them are caused by the inputs (sizes, labels,
/// parameters); none is an internal failure.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalError {
    /// Two label vectors (or labels and samples) that should pair up have different lengths.
    #[error("length mismatch: {what_a} has {len_a} entries but {what_b} has {len_b}")]
    LengthMismatch {
        what_a: &'static str,
        len_a: usize,
        what_b: &'static str,
        len_b: usize,
    },
    /// Nothing to evaluate.
    #[error("no samples to evaluate")]
    Empty,
    /// k-means asked for more clusters than there are samples, or for none.
    #[error("k-means: cannot make {clusters} clusters from {samples} samples (need 1 ≤ c ≤ n)")]
    InvalidClusterCount { clusters: usize, samples: usize },
    /// A parameter outside its valid range.
    #[error("parameter `{name}` {why}")]
    InvalidParam { name: &'static str, why: String },
    /// A NaN or infinite value in the points.
    #[error("non-finite value in the points (sample {sample}, coordinate {coordinate})")]
    NonFinite { sample: usize, coordinate: usize },
    /// A triplet refers to a sample that does not exist.
    #[error("triplet #{position} ({i}, {j}, {q}) refers to a sample ≥ n = {n}")]
    TripletOutOfRange {
        position: usize,
        i: usize,
        j: usize,
        q: usize,
        n: usize,
    },
    /// No triplets to score.
    #[error("no triplets to score")]
    NoTriplets,
    /// A classifier needs at least two classes in its training set.
    #[error("classification needs at least 2 classes in the training set, found {found}")]
    TooFewClasses { found: usize },
}

/// Check that two slices that must pair up have equal lengths.
pub(crate) fn check_same_len(
    what_a: &'static str,
    len_a: usize,
    what_b: &'static str,
    len_b: usize,
) -> Result<(), EvalError> {
    if len_a == len_b {
        Ok(())
    } else {
        Err(EvalError::LengthMismatch {
            what_a,
            len_a,
            what_b,
            len_b,
        })
    }
}

/// SplitMix64 finaliser: decorrelates the per-restart / per-class seeds derived from one seed.
pub(crate) fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of sub-task `index` (a k-means restart, a class) derived from a user seed.
pub fn derive_seed(seed: u64, index: u64) -> u64 {
    seed ^ splitmix64(index)
}
