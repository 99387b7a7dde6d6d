//! Evaluation of a finished run, off the UI thread: repeated k-means on H (ACC / NMI ± std
//! against the labels), an 80/20 stratified split with a linear SVM (accuracy, macro-F1,
//! confusion matrix) and the share of the run's triplets H keeps (docs/models.md §8), by the
//! scoring stages of the engine's pipeline ([`score`]). The result comes back as a background task's
//! message, tagged with the run's history id; a stale one (a newer
//! run finished meanwhile) is dropped.

use crate::engine::constraints::Triplet;
use crate::engine::data::Dataset;
use crate::engine::eval::{EvalProgress, SvmScaling};
use crate::engine::jobs::trial::{Protocol, ScoreInput, score};
use crate::engine::machine::fsutil::csv_field;
use crate::engine::models::Predictions;
use crate::gui::state::{Evaluation, HistoryRow};
use ndarray::Array2;
use std::fmt::Write as _;
use std::sync::Arc;

/// What the evaluation thread needs (owned, so the thread borrows nothing from the UI).
pub struct EvalInput {
    pub run: u64,
    /// H, k×n (columns are samples).
    pub h: Array2<f64>,
    /// The model's own labels, when it outputs them.
    pub assignments: Option<Vec<usize>>,
    pub labels: Option<Vec<usize>>,
    pub n_classes: usize,
    pub triplets: Vec<Triplet>,
    pub seed: u64,
    pub restarts: usize,
    /// Feature scaling of the linear SVMs (Results panel).
    pub svm: SvmScaling,
    /// A classifier's predictions (2-STGINMF), scored on the samples not given.
    pub predictions: Option<Arc<Predictions>>,
    /// The labels the run was given (its training set), per sample.
    pub known: Vec<Option<usize>>,
    /// The data, for a classifier's SVM baselines (on X, and on an NMF's H fitted here).
    pub data: Option<Arc<Dataset>>,
    /// Where the evaluation counts its steps, for the Results panel.
    pub progress: Arc<EvalProgress>,
}

/// The scoring stages of the engine's pipeline ([`score`]: the NMF baseline a classifier is
/// read next to, then the evaluation), tagged with the run's id.
pub fn evaluate(input: &EvalInput) -> Evaluation {
    let protocol = Protocol {
        kmeans_restarts: input.restarts.max(1),
        svm: input.svm,
        kept_in_x: false,
        ..Protocol::default()
    };
    let h = input.h.view();
    let scores = score(
        &ScoreInput {
            h,
            k: h.nrows(),
            assignments: input.assignments.as_deref(),
            predictions: input.predictions.as_deref(),
            truth: input.labels.as_deref(),
            n_classes: input.n_classes,
            data: input.data.as_ref(),
            triplets: &input.triplets,
            known: &input.known,
            seed: input.seed,
        },
        &protocol,
        &input.progress,
    );
    let mut scores_with_notes = scores.evaluation;
    scores_with_notes.notes.extend(scores.baseline_note);
    Evaluation {
        run: input.run,
        scores: scores_with_notes,
    }
}

/// The history table as CSV (header and one row per run).
pub fn history_csv(rows: &[HistoryRow]) -> String {
    let opt = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    let mut out = String::from(
        "run,model,dataset,params,seed,stop,iterations,seconds,acc,acc_std,nmi_max,nmi_max_std,\
         nmi_sqrt,nmi_sqrt_std,nmi_arith,nmi_arith_std,kmeans_restarts,class_acc,macro_f1,kept,\
         preprocess\n",
    );
    for r in rows {
        let ev = r.evaluation.as_deref();
        let c = ev.and_then(|e| e.clustering.as_ref());
        let ms =
            |f: fn(&crate::engine::eval::ClusteringSummary) -> crate::engine::eval::MeanStd| {
                c.map(f)
                    .map_or_else(|| ",".to_owned(), |m| format!("{},{}", m.mean, m.std))
            };
        // A classifier's own scores on the samples not given, else the SVM on H's.
        let cls = ev.and_then(|e| {
            e.semi
                .as_ref()
                .map(|s| &s.model)
                .or(e.classification.as_ref())
        });
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.id,
            csv_field(&r.model),
            csv_field(&r.dataset),
            csv_field(&r.params),
            r.seed,
            csv_field(&r.stop),
            r.iterations,
            r.seconds,
            ms(|c| c.acc),
            ms(|c| c.nmi_max),
            ms(|c| c.nmi_sqrt),
            ms(|c| c.nmi_arith),
            ev.map(|e| e.restarts.to_string()).unwrap_or_default(),
            opt(cls.map(|c| c.accuracy)),
            opt(cls.map(|c| c.macro_f1)),
            opt(r.kept),
            r.preprocess
                .map(|p| csv_field(p.name()))
                .unwrap_or_default()
        );
    }
    out
}

/// The last component of a dataset's source (`../data/orl_32x32` → `orl_32x32`), or the
/// sample's name.
pub fn short_name(source: &str) -> String {
    let s = source.trim_end_matches(['/', '\\']);
    s.rsplit(['/', '\\']).next().unwrap_or(s).to_owned()
}
