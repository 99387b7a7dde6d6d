//! Evaluation of a finished run, off the UI thread: repeated k-means on H (ACC / NMI ± std
//! against the labels), an 80/20 stratified split with a linear SVM (accuracy, macro-F1,
//! confusion matrix) and the share of the run's triplets H keeps (docs/models.md §8), by the
//! scoring stages of the engine's pipeline ([`score`]). The result comes back as a background task's
//! message, tagged with the run's history id; a stale one (a newer
//! run finished meanwhile) is dropped.

use super::{App, TaskDone};
use crate::engine::constraints::Triplet;
use crate::engine::data::Dataset;
use crate::engine::eval::{EvalProgress, SvmScaling};
use crate::engine::jobs::experiment::StopReason;
use crate::engine::jobs::trial::{FitView, Protocol, ScoreInput, score};
use crate::engine::machine::fsutil::{csv_field, write_atomic};
use crate::engine::models::{Predictions, WarmStart, params_string};
use crate::gui::state::{Evaluation, HistoryRow, Series};
use ndarray::Array2;
use std::fmt::Write as _;
use std::path::Path;
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
         nmi_sqrt,nmi_sqrt_std,nmi_arith,nmi_arith_std,kmeans_restarts,class_acc,macro_f1,kept\n",
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
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
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
            opt(r.kept)
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

impl App {
    /// Add the finished run to the history and start its evaluation on a background thread.
    pub(super) fn run_finished(&mut self) {
        let s = &mut self.session;
        let Some(result) = &self.run.result else {
            return;
        };
        let fit = FitView::of(result);
        let id = s.history.last().map_or(1, |r| r.id + 1);
        let mut curve = Series::default();
        for (it, &v) in fit.record.objective.iter().enumerate() {
            curve.push(it + 1, v);
        }
        let mut params = format!("k={}", fit.spec.k);
        let resolved = fit.spec.resolved_params();
        if !resolved.is_empty() {
            let _ = write!(params, " {}", params_string(&resolved, " "));
        }
        let side = self.run.side.as_deref();
        s.history.push(HistoryRow {
            id,
            model: fit.spec.kind.label().to_owned(),
            params,
            seed: fit.spec.seed,
            iterations: fit.record.iterations(),
            seconds: fit.record.seconds,
            acc: None,
            nmi: None,
            kept: None,
            triplets: side.map_or(0, |side| side.triplets.len()),
            curve,
            convergence: Arc::new(self.run.convergence.clone()),
            k: fit.spec.k,
            factors: Arc::new(WarmStart::new(
                fit.w.cloned(),
                fit.h.clone(),
                format!("run {id}"),
            )),
            data: s.dataset.as_ref().map(|d| d.fingerprint),
            dataset: s
                .dataset
                .as_ref()
                .map_or_else(String::new, |d| short_name(&d.source)),
            stop: match fit.stop {
                StopReason::Converged => "converged".to_owned(),
                StopReason::MaxIter => "iteration cap".to_owned(),
                StopReason::Cancelled => {
                    format!("stopped at iteration {}", fit.record.iterations())
                }
            },
            snapshot: self.run.snapshot.clone(),
            evaluation: None,
            predictions: fit.predictions.cloned(),
            exports: Arc::new(fit.exports.to_vec()),
        });
        s.shown_run = Some(id);
        let data = s.dataset.as_ref();
        let input = EvalInput {
            run: id,
            h: fit.h.clone(),
            assignments: fit.assignments.map(<[usize]>::to_vec),
            labels: data.and_then(|d| d.labels.clone()),
            n_classes: data.map_or(0, |d| d.n_classes()),
            triplets: side.map(|side| side.triplets.clone()).unwrap_or_default(),
            seed: fit.spec.seed,
            restarts: self.settings.kmeans_restarts.max(1),
            svm: self.settings.svm,
            predictions: fit.predictions.cloned(),
            known: side.map(|side| side.labels.clone()).unwrap_or_default(),
            data: s.dataset.clone(),
            progress: Arc::new(EvalProgress::default()),
        };
        s.eval_progress = Arc::clone(&input.progress);
        let spawned = self.tasks.spawn("evaluate", move || {
            TaskDone::Evaluated(Box::new(evaluate(&input)))
        });
        match spawned {
            Ok(()) => s.evaluating = Some(id),
            Err(e) => s.set_error(e),
        }
    }

    /// An evaluation arrived: keep it if it belongs to the run being evaluated.
    pub(super) fn evaluated(&mut self, ev: Evaluation) {
        let s = &mut self.session;
        if s.evaluating != Some(ev.run) {
            return; // a newer run replaced it
        }
        s.evaluating = None;
        if let Some(row) = s.history.iter_mut().find(|r| r.id == ev.run) {
            row.acc = ev.clustering.as_ref().map(|c| c.acc.mean);
            row.nmi = ev.clustering.as_ref().map(|c| c.nmi_sqrt.mean);
            row.kept = ev.kept_h;
        }
        let ev = Arc::new(ev);
        if let Some(row) = s.history.iter_mut().find(|r| r.id == ev.run) {
            row.evaluation = Some(Arc::clone(&ev));
        }
        // Another run brought back with "show" meanwhile keeps the screen.
        if s.shown_run.is_some_and(|id| id != ev.run) {
            return;
        }
        s.evaluation = Some(ev);
        // The status line keeps the run's "Finished" message; the scores are in the panel.
        self.view.rebuild_scatter(
            s.dataset.as_deref(),
            self.run.snapshot.as_deref(),
            s.x_view.as_deref(),
            s.evaluation.as_deref(),
        );
    }

    /// Write the history table to `path` (atomically).
    pub(super) fn export_history(&mut self, path: &Path) {
        let s = &mut self.session;
        if path.as_os_str().is_empty() {
            s.set_error("Type a path for the history CSV first");
            return;
        }
        let csv = history_csv(&s.history);
        match write_atomic(path, csv.as_bytes()) {
            Ok(()) => s.set_status(format!(
                "Exported {} runs to {}",
                s.history.len(),
                path.display()
            )),
            Err(e) => s.set_error(format!(
                "{}: could not write the history: {e}",
                path.display()
            )),
        }
    }
}
