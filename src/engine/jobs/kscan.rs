//! Scan the rank k (docs/models.md §8.6): fit one model at each k of a list, several seeds
//! each, and summarise every k as `sweep --grid k=…` does (relative reconstruction error,
//! ACC and NMI against the truth, cophenetic correlation of the consensus matrix). The app's
//! "Scan k" window runs this on a thread of its own; each fit is a [`Trial`] (the pipeline
//! `run` and `sweep` go through). `sweep` writes its runs row by row (to resume and shard), so
//! it shares the per-run and per-k pieces of [`crate::engine::eval::ksel`] rather than this
//! driver.
//!
//! The k are done in order, the repeats of one k in parallel on the rayon pool (each fit
//! single-threaded, as in sweeps); each k's row is reported as soon as its repeats are done.
//! Repeat r of every k starts from seed [`derive_seed`]`(seed, r)`, the seeds `sweep` uses,
//! so two scans with the same seed give the same table.

use crate::engine::constraints::SideInfo;
use crate::engine::data::Dataset;
use crate::engine::eval::{EvalError, MeanStd, SvmScaling, derive_seed, rank_stability};
use crate::engine::jobs::experiment::FitOptions;
use crate::engine::jobs::trial::{Protocol, Side, Trial};
use crate::engine::jobs::worker::JobId;
use crate::engine::models::{ModelError, ModelSpec};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// What to scan.
#[derive(Clone, Debug)]
pub struct ScanSpec {
    /// The model and its hyperparameters; its `k` and `seed` are replaced per run.
    pub model: ModelSpec,
    pub fit: FitOptions,
    pub side: Arc<SideInfo>,
    /// The ranks, in the order they are run and reported.
    pub ks: Vec<usize>,
    /// Seeds per k (≥ 1; the cophenetic correlation needs 2).
    pub repeats: usize,
    /// Base seed of the repeats.
    pub seed: u64,
    /// k-means restarts on H behind ACC and NMI (labelled data).
    pub kmeans_restarts: usize,
}

/// One k of a scan.
#[derive(Clone, Debug, PartialEq)]
pub struct ScanRow {
    pub k: usize,
    /// Runs that finished (the others failed; see `errors`).
    pub runs: usize,
    /// ‖X − WH‖_F / ‖X‖_F, mean ± std (models with a W).
    pub recon_error: Option<MeanStd>,
    /// The model's final objective, mean ± std.
    pub objective: Option<MeanStd>,
    /// ACC and NMI (max) of k-means on H, mean ± std over the runs (labelled data).
    pub acc: Option<MeanStd>,
    pub nmi_max: Option<MeanStd>,
    /// Cophenetic correlation of the consensus matrix of the runs' labellings (≥ 2 runs).
    pub cophenetic: Option<f64>,
    /// Why runs failed, one line each.
    pub errors: Vec<String>,
}

/// What a scan reports while it runs.
#[derive(Clone, Debug, PartialEq)]
pub enum ScanEvent {
    /// Run `done` of `of` at rank `k` has ended (runs of one k end in any order).
    RunDone { k: usize, done: usize, of: usize },
    /// Every repeat of `row.k` is done.
    Row(ScanRow),
}

/// Why a scan stopped without its table.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error("the scan was cancelled")]
    Cancelled,
    #[error("nothing to scan: {0}")]
    Empty(&'static str),
    #[error("k = {k}: {error}")]
    Rank { k: usize, error: ModelError },
    #[error("k = {k}: {error}")]
    Summary { k: usize, error: EvalError },
}

/// One finished fit, as the summary needs it.
struct RunOutcome {
    labels: Vec<usize>,
    recon: Option<f64>,
    objective: f64,
    acc: Option<f64>,
    nmi_max: Option<f64>,
}

/// Run the scan; `cancel` is checked between fits and at each fit's progress events,
/// `on_event` hears every run's end and every k's row (from the rayon threads). Returns one
/// row per k, in `scan.ks` order.
pub fn scan_k(
    data: &Arc<Dataset>,
    scan: &ScanSpec,
    cancel: &AtomicBool,
    on_event: &(dyn Fn(ScanEvent) + Sync),
) -> Result<Vec<ScanRow>, ScanError> {
    use rayon::prelude::*;
    if scan.ks.is_empty() {
        return Err(ScanError::Empty("no k given"));
    }
    if scan.repeats == 0 {
        return Err(ScanError::Empty("repeats must be at least 1"));
    }
    for &k in &scan.ks {
        let mut spec = scan.model.clone();
        spec.k = k;
        spec.init = None;
        spec.validate(data.m(), data.n())
            .map_err(|error| ScanError::Rank { k, error })?;
    }
    let mut rows = Vec::with_capacity(scan.ks.len());
    for &k in &scan.ks {
        let done = AtomicUsize::new(0);
        let outcomes: Vec<Result<RunOutcome, String>> = (0..scan.repeats)
            .into_par_iter()
            .map(|r| {
                let out = fit_one(data, scan, k, r as u64, cancel);
                let d = done.fetch_add(1, Ordering::SeqCst) + 1;
                on_event(ScanEvent::RunDone {
                    k,
                    done: d,
                    of: scan.repeats,
                });
                out
            })
            .collect();
        if cancel.load(Ordering::SeqCst) {
            return Err(ScanError::Cancelled);
        }
        let row = summarize(k, outcomes).map_err(|error| ScanError::Summary { k, error })?;
        on_event(ScanEvent::Row(row.clone()));
        rows.push(row);
    }
    Ok(rows)
}

/// The trial of repeat `r` at rank `k`: the scan's side information as it is (its graphs
/// shared by every fit), clustering scores only.
fn trial(data: &Arc<Dataset>, scan: &ScanSpec, k: usize, r: u64) -> Trial {
    let mut spec = scan.model.clone();
    spec.k = k;
    spec.seed = derive_seed(scan.seed, r);
    spec.init = None;
    let mut trial = Trial::new(Arc::clone(data), spec, scan.fit);
    trial.id = JobId(r);
    trial.side = Side::Shared(Arc::clone(&scan.side));
    trial.protocol = Protocol {
        kmeans_restarts: scan.kmeans_restarts.max(1),
        split: false,
        svm: SvmScaling::default(),
        classifier: false,
        kept_in_x: false,
        given: false,
    };
    trial
}

/// Fit repeat `r` at rank `k` and score it.
fn fit_one(
    data: &Arc<Dataset>,
    scan: &ScanSpec,
    k: usize,
    r: u64,
    cancel: &AtomicBool,
) -> Result<RunOutcome, String> {
    if cancel.load(Ordering::SeqCst) {
        return Err("cancelled".to_owned());
    }
    let trial = trial(data, scan, k, r);
    let outcome = trial
        .run_with(&mut |_| !cancel.load(Ordering::SeqCst))
        .map_err(|e| match e.model_error() {
            Some(error) => format!("seed {}: {error}", trial.spec.seed),
            None => "cancelled".to_owned(),
        })?;
    let fit = outcome.fit();
    let clustering = outcome.scores.evaluation.clustering.as_ref();
    Ok(RunOutcome {
        labels: fit.labelling(),
        recon: fit.recon_error(data.x.view()),
        objective: fit.final_objective(),
        acc: clustering.map(|c| c.acc.mean),
        nmi_max: clustering.map(|c| c.nmi_max.mean),
    })
}

/// One k's row from its runs (in repeat order).
fn summarize(k: usize, outcomes: Vec<Result<RunOutcome, String>>) -> Result<ScanRow, EvalError> {
    let mut ok = Vec::new();
    let mut errors = Vec::new();
    for o in outcomes {
        match o {
            Ok(o) => ok.push(o),
            Err(e) => errors.push(e),
        }
    }
    let labelings: Vec<Vec<usize>> = ok.iter().map(|o| o.labels.clone()).collect();
    let recon: Vec<f64> = ok.iter().filter_map(|o| o.recon).collect();
    let stability = rank_stability(&labelings, &recon)?;
    let mean_of = |get: &dyn Fn(&RunOutcome) -> Option<f64>| {
        let v: Vec<f64> = ok.iter().filter_map(get).collect();
        (!v.is_empty()).then(|| MeanStd::of(&v))
    };
    Ok(ScanRow {
        k,
        runs: stability.runs,
        recon_error: stability.recon_error,
        objective: mean_of(&|o| Some(o.objective)),
        acc: mean_of(&|o| o.acc),
        nmi_max: mean_of(&|o| o.nmi_max),
        cophenetic: stability.cophenetic,
        errors,
    })
}

/// The ranks `from..=to` (either order), capped at what the data allow (min(m, n)).
pub fn k_range(from: usize, to: usize, data: &Dataset) -> Vec<usize> {
    let cap = data.m().min(data.n());
    let (lo, hi) = (from.min(to).max(1), from.max(to).min(cap));
    (lo..=hi).collect()
}
