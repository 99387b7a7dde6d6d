//! Evaluation of a finished run, off the UI thread: repeated k-means on H (ACC / NMI ± std
//! against the labels), an 80/20 stratified split with a linear SVM (accuracy, macro-F1,
//! confusion matrix) and the share of the run's triplets H keeps (MODELS.md §8). The result
//! comes back as a background task's message, tagged with the run's history id; a stale one (a newer
//! run finished meanwhile) is dropped.

use super::{App, TaskDone};
use crate::engine::constraints::Triplet;
use crate::engine::eval::metrics::best_map;
use crate::engine::eval::{
    KMeansParams, LinearSvmParams, classify_split, repeated_kmeans, summarize_repeated_kmeans,
    triplets_kept,
};
use crate::engine::fsutil::write_atomic;
use crate::gui::state::{Evaluation, HistoryRow, Series};
use ndarray::Array2;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Share of each class used for training in the classification protocol (MODELS.md §8.3).
pub const TRAIN_FRACTION: f64 = 0.8;

/// What the evaluation thread needs (owned, so the thread borrows nothing from the UI).
pub struct EvalInput {
    pub run: u64,
    /// H, k×n (columns are samples).
    pub h: Array2<f64>,
    pub labels: Option<Vec<usize>>,
    pub n_classes: usize,
    pub triplets: Vec<Triplet>,
    pub seed: u64,
    pub restarts: usize,
}

/// Compute every metric that applies; a metric that fails becomes a note, not an error.
pub fn evaluate(input: &EvalInput) -> Evaluation {
    let t0 = Instant::now();
    let n = input.h.ncols();
    let labels = input.labels.as_deref().filter(|l| l.len() == n);
    let c = if labels.is_some() && input.n_classes > 0 {
        input.n_classes
    } else {
        input.h.nrows()
    }
    .clamp(1, n.max(1));
    let mut ev = Evaluation {
        run: input.run,
        n_clusters: c,
        restarts: input.restarts.max(1),
        ..Evaluation::default()
    };
    let params = KMeansParams {
        restarts: ev.restarts,
        seed: input.seed,
        ..KMeansParams::new(c)
    };
    match repeated_kmeans(input.h.view(), &params) {
        Ok(rep) => {
            if let Some(best) = rep.best_run() {
                ev.clusters = best.labels.clone();
            }
            if let Some(truth) = labels {
                match summarize_repeated_kmeans(truth, &rep) {
                    Ok(summary) => ev.clustering = Some(summary),
                    Err(e) => ev.notes.push(format!("clustering scores: {e}")),
                }
                match best_map(truth, &ev.clusters) {
                    Ok(map) => {
                        let to_class: HashMap<usize, usize> = map.pairs.into_iter().collect();
                        ev.misassigned = ev
                            .clusters
                            .iter()
                            .zip(truth)
                            .map(|(g, t)| to_class.get(g) != Some(t))
                            .collect();
                    }
                    Err(e) => ev.notes.push(format!("best map: {e}")),
                }
            }
        }
        Err(e) => ev.notes.push(format!("k-means: {e}")),
    }
    if let Some(truth) = labels {
        let svm = LinearSvmParams {
            seed: input.seed,
            ..LinearSvmParams::default()
        };
        match classify_split(input.h.view(), truth, TRAIN_FRACTION, input.seed, &svm) {
            Ok(out) => ev.classification = Some(out.report),
            Err(e) => ev.notes.push(format!("classification: {e}")),
        }
    }
    if !input.triplets.is_empty() {
        match triplets_kept(input.h.view(), &input.triplets) {
            Ok(kept) => ev.kept = Some(kept),
            Err(e) => ev.notes.push(format!("triplets kept: {e}")),
        }
    }
    ev.seconds = t0.elapsed().as_secs_f64();
    ev
}

/// The history table as CSV (header and one row per run).
pub fn history_csv(rows: &[HistoryRow]) -> String {
    let opt = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    let mut out = String::from("run,model,params,seed,iterations,seconds,acc,nmi_sqrt,kept\n");
    for r in rows {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{}",
            r.id,
            quote(&r.model),
            quote(&r.params),
            r.seed,
            r.iterations,
            r.seconds,
            opt(r.acc),
            opt(r.nmi),
            opt(r.kept)
        );
    }
    out
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

impl App {
    /// Add the finished run to the history and start its evaluation on a background thread.
    pub(super) fn run_finished(&mut self) {
        let s = &mut self.session;
        let Some(result) = &self.run.result else {
            return;
        };
        let id = s.history.last().map_or(1, |r| r.id + 1);
        let mut curve = Series::default();
        for (it, &v) in result.record.objective.iter().enumerate() {
            curve.push(it + 1, v);
        }
        let mut params = format!("k={}", result.spec.k);
        for (name, v) in &result.spec.resolved_params() {
            let _ = write!(params, " {name}={v}");
        }
        s.history.push(HistoryRow {
            id,
            model: result.spec.kind.label().to_owned(),
            params,
            seed: result.spec.seed,
            iterations: result.record.iterations(),
            seconds: result.record.seconds,
            acc: None,
            nmi: None,
            kept: None,
            curve,
        });
        let data = s.dataset.as_ref();
        let input = EvalInput {
            run: id,
            h: result.h.clone(),
            labels: data.and_then(|d| d.labels.clone()),
            n_classes: data.map_or(0, |d| d.n_classes()),
            triplets: self
                .run
                .side
                .as_ref()
                .map(|side| side.triplets.clone())
                .unwrap_or_default(),
            seed: result.spec.seed,
            restarts: self.settings.kmeans_restarts.max(1),
        };
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
            row.kept = ev.kept;
        }
        s.evaluation = Some(Arc::new(ev));
        // The status line keeps the run's "Finished" message; the scores are in the panel.
        self.view.rebuild_scatter(
            s.dataset.as_deref(),
            self.run.snapshot.as_deref(),
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
