//! `nmf-playground sweep`: models × hyperparameter grid × model repeats, in parallel across
//! cores, with results appended row by row to `OUT/runs.csv` and a summary of mean ± std per
//! cell (DESIGN.md §6, issue 4 item 4; protocol docs/models.md §8.2–8.4).
//!
//! * A *cell* is one model with one combination of grid values; a grid parameter applies only
//!   to the models that have it (NMF has none, so it gets a single cell).
//! * Repeat `r` of every cell uses the seed [`derive_seed`]`(--seed, r)`: the same seed for
//!   every model, so all models start from the same initialisation, and the same triplets
//!   (regenerated per repeat with that seed) whenever any model of the sweep needs triplets.
//! * Each run is single-threaded ([`linalg::set_threads`]`(1)`); runs go in parallel on a rayon
//!   pool of `--jobs` threads. A row is written and flushed as soon as its run finishes, so an
//!   interrupted sweep loses nothing; `--resume` skips the (model, params, repeat) rows already
//!   in the file, after checking `OUT/sweep.json` (arguments and dataset fingerprint).
//! * Row order in the CSV depends on scheduling; the values do not. The summary is computed
//!   from the rows sorted by (model, cell, repeat), so it is deterministic.

mod curves;
mod ksel;
mod shard;

pub use ksel::{CLUSTERING_COLUMNS, KSelection};
pub use shard::{MergeArgs, Shard, merge, parse_shard};

use super::CliError;
use super::output::write_atomic;
use super::run::{DataArgs, StopArgs, TripletArgs, load_data, parse_model};
use crate::engine::constraints::Triplet;
use crate::engine::data::{Dataset, Preprocess};
use crate::engine::eval::{MeanStd, SvmScaling, derive_seed};
use crate::engine::jobs::experiment::StopReason;
use crate::engine::jobs::trial::{
    GivenScores, Hand, Outcome, Protocol as TrialProtocol, Side, Trial, TripletPolicy, side,
};
use crate::engine::jobs::worker::JobId;
use crate::engine::machine::fsutil::csv_field;
use crate::engine::models::{ModelKind, ModelSpec, ParamValue, SideNeed, params_string};
use anyhow::{Context, anyhow};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::{BTreeMap, HashSet};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Columns of `runs.csv`, in order.
pub const COLUMNS: &[&str] = &[
    "model",
    "params",
    "repeat",
    "seed",
    "k",
    "iterations",
    "converged",
    "seconds",
    "objective",
    "acc",
    "acc_std",
    "nmi_max",
    "nmi_max_std",
    "nmi_sqrt",
    "nmi_sqrt_std",
    "nmi_arith",
    "nmi_arith_std",
    "triplets",
    "known_labels",
    "triplets_kept_h",
    "accuracy",
    "macro_f1",
    "macro_f1_of_means",
    "class_acc",
    "class_macro_f1",
    "svm_x_acc",
    "svm_x_macro_f1",
    "svm_nmf_h_acc",
    "svm_nmf_h_macro_f1",
    "self_training_rounds",
    "notes",
    "error",
];

/// Numeric metrics summarised per cell (mean ± std over repeats), in display order.
const SUMMARY_METRICS: &[&str] = &[
    "acc",
    "nmi_max",
    "nmi_sqrt",
    "nmi_arith",
    "triplets_kept_h",
    "accuracy",
    "macro_f1",
    "macro_f1_of_means",
    "class_acc",
    "class_macro_f1",
    "svm_x_acc",
    "svm_x_macro_f1",
    "svm_nmf_h_acc",
    "svm_nmf_h_macro_f1",
    "known_labels",
    "self_training_rounds",
    "iterations",
    "objective",
    "seconds",
];

/// Evaluation protocol of a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// k-means on the columns of H, ACC/NMI means over the restarts (docs/models.md §8.2).
    Clustering,
    /// Stratified 80/20 split per repeat, linear SVM on the columns of H (docs/models.md §8.3);
    /// the clustering metrics are computed as well.
    Classification,
    /// Semi-supervised classification (docs/models.md §8.5): the labels revealed by `--reveal`
    /// (or given by `--known-labels`) are the training set, drawn anew per repeat; the other
    /// samples are scored. A classifier (2-STGINMF) is scored on its own predictions; any other
    /// model by a linear SVM on its H trained on the given samples. Beside each, the same split
    /// is scored by a linear SVM on X and on an NMF's H. Each share of `--reveal P1,P2,...` is
    /// a cell, so the summary is a label-budget curve.
    Semi,
}

/// Arguments of `sweep`.
#[derive(Debug, Clone, clap::Args)]
pub struct SweepArgs {
    #[command(flatten)]
    pub input: DataArgs,
    /// Models, comma-separated, by name (see `run --help`).
    #[arg(long, value_delimiter = ',', required = true, value_parser = parse_model)]
    pub models: Vec<ModelKind>,
    /// A grid axis, NAME=v1,v2,... (repeatable); applies to the models that have NAME. A bare
    /// NAME takes the paper's grid of each model's table (every option of a choice, both
    /// states of a flag).
    #[arg(long = "grid", value_name = "NAME[=v1,v2,...]")]
    pub grid: Vec<String>,
    /// Model repeats (new initialisation and triplets each, seed derive_seed(--seed, r)).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub repeats: u64,
    /// k-means restarts on H per run (metrics are means over the restarts).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..))]
    pub kmeans_repeats: u64,
    /// Evaluation protocol.
    #[arg(long, value_enum, default_value_t = Protocol::Clustering)]
    pub protocol: Protocol,
    /// Feature scaling of the linear SVMs: standardized (z-scores from the training samples,
    /// the default for a new sweep) or raw (the RPNMF paper's protocol). `--resume` keeps the
    /// folder's recorded scaling when this is not given (raw for sweeps made before it was
    /// recorded).
    #[arg(long, value_parser = super::run::parse_svm)]
    pub svm: Option<SvmScaling>,
    /// Output folder: runs.csv, sweep.json, summary.md, summary.json.
    #[arg(long, default_value = "sweep-out")]
    pub out: PathBuf,
    /// Continue a sweep in --out: skip the runs already in runs.csv.
    #[arg(long)]
    pub resume: bool,
    /// Rank k; default: the number of classes.
    #[arg(long)]
    pub k: Option<usize>,
    /// Base seed; repeat r uses derive_seed(seed, r).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub stop: StopArgs,
    #[command(flatten)]
    pub triplet_opts: TripletArgs,
    /// Known labels as side information (models that use links or partial labels, and the
    /// training set of `--protocol semi`).
    #[command(flatten)]
    pub labels: SweepLabelArgs,
    /// Parallel runs (default: the number of CPU cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Run only the i-th of N disjoint shares of grid × repeats (`sweep merge` combines the
    /// shard folders).
    #[arg(long, value_name = "i/N", value_parser = parse_shard)]
    pub shard: Option<Shard>,
    /// Also keep each run's objective per iteration in OUT/curves.csv (`report` overlays them).
    #[arg(long)]
    pub keep_curves: bool,
}

/// `--reveal` and `--known-labels` of a sweep.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SweepLabelArgs {
    /// Reveal the true labels of a stratified share P of the samples (0 < P ≤ 1), drawn anew
    /// for each repeat from its seed, as if the user had painted them. A list `P1,P2,...` makes
    /// each share a cell of its own (`reveal=P` in its params): a label-budget curve. Scores
    /// still use every sample's true label.
    #[arg(
        long,
        value_name = "P[,P...]",
        value_delimiter = ',',
        conflicts_with = "known_labels"
    )]
    pub reveal: Vec<f64>,
    /// Known labels for every run: one line per sample with its class, or empty when unknown.
    #[arg(long, value_name = "FILE")]
    pub known_labels: Option<PathBuf>,
}

impl SweepLabelArgs {
    /// The arguments of one run: this share revealed (or the known-labels file).
    fn for_share(&self, share: Option<f64>) -> super::run::KnownLabelArgs {
        super::run::KnownLabelArgs {
            reveal: share,
            known_labels: self.known_labels.clone(),
        }
    }

    /// The shares as cells: none, one (the manifest's, no params entry) or each of a list.
    fn shares(&self) -> Vec<Option<f64>> {
        if self.reveal.is_empty() {
            vec![None]
        } else {
            self.reveal.iter().map(|&p| Some(p)).collect()
        }
    }
}

/// Progress of a sweep, reported after every finished run.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Runs finished in this invocation.
    pub done: usize,
    /// Runs to execute in this invocation (skipped ones excluded).
    pub total: usize,
    pub elapsed: Duration,
}

impl Progress {
    /// Estimated time left, from the mean time per finished run and the parallelism.
    pub fn eta(&self) -> Option<Duration> {
        (self.done > 0).then(|| {
            self.elapsed
                .mul_f64((self.total - self.done) as f64 / self.done as f64)
        })
    }
}

/// One cell of the summary: a model with one combination of grid values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellSummary {
    pub model: String,
    /// Grid values of the cell, `alpha=0.1;delta=10` (empty for a model without grid params).
    pub params: String,
    /// Successful runs summarised.
    pub runs: usize,
    /// Runs that failed (diverged, ...); excluded from the means.
    pub failed: usize,
    /// Mean ± std over the repeats, per metric (absent when no run has the metric).
    pub metrics: BTreeMap<String, MeanStd>,
    /// The best cell of its model (by mean ACC, or mean accuracy for classification).
    pub best: bool,
}

/// The result of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSummary {
    pub protocol: Protocol,
    /// Every cell of the grid, models in the given order, grid values in the given order.
    pub cells: Vec<CellSummary>,
    /// Runs executed by this invocation.
    pub executed: usize,
    /// Runs skipped because `--resume` found them in runs.csv.
    pub skipped: usize,
    /// The markdown table (also written to summary.md).
    pub markdown: String,
    /// Per cell of a `--grid k=...` sweep: reconstruction error, scores and the cophenetic
    /// correlation of the repeats' clusterings (empty without a k axis).
    #[serde(default)]
    pub k_selection: Vec<KSelection>,
}

/// The manifest `OUT/sweep.json`: what must match for `--resume` to continue a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Manifest {
    data: String,
    fingerprint: crate::engine::data::Fingerprint,
    preprocess: String,
    k: usize,
    protocol: Protocol,
    seed: u64,
    max_iter: u64,
    tol: f64,
    kmeans_repeats: u64,
    anchors: f64,
    per_anchor: usize,
    /// `--reveal P` (absent from manifests written before it existed).
    #[serde(default)]
    reveal: Option<f64>,
    /// `--known-labels FILE`.
    #[serde(default)]
    known_labels: Option<PathBuf>,
    /// `--reveal P1,P2,...` when more than one share was given (each a cell).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    reveal_shares: Vec<f64>,
    /// `--shard i/N` (absent for an unsharded or merged sweep).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    shard: Option<String>,
    /// The linear SVMs' feature scaling (sweeps made before it was recorded used raw H).
    #[serde(default = "raw_svm")]
    svm: SvmScaling,
}

/// The SVM scaling of a manifest that does not record one.
fn raw_svm() -> SvmScaling {
    SvmScaling::Raw
}

/// `args` with the choices a sweep folder has already made filled in: on `--resume`, the
/// recorded preprocessing when `--preprocess` is `auto` (so a folder made with `l2` before
/// `auto` existed goes on with `l2`) and the recorded SVM scaling when `--svm` is not given;
/// otherwise the defaults.
fn settled_args(args: &SweepArgs) -> Result<SweepArgs, CliError> {
    let mut out = args.clone();
    let path = args.out.join("sweep.json");
    let old = if args.resume && args.out.join("runs.csv").exists() && path.exists() {
        let text = std::fs::read_to_string(&path)
            .with_context(|| {
                format!(
                    "--resume: cannot read {} (the sweep's manifest)",
                    path.display()
                )
            })
            .map_err(bad)?;
        Some(
            serde_json::from_str::<Manifest>(&text)
                .with_context(|| format!("--resume: {} is not a sweep manifest", path.display()))
                .map_err(bad)?,
        )
    } else {
        None
    };
    if let Some(old) = &old
        && args.input.preprocess == Preprocess::Auto
    {
        out.input.preprocess = Preprocess::parse(&old.preprocess)
            .map_err(|e| bad(anyhow!("--resume: {}: preprocess: {e}", path.display())))?;
    }
    out.svm = Some(args.svm.or(old.as_ref().map(|m| m.svm)).unwrap_or_default());
    Ok(out)
}

impl Manifest {
    /// Human-readable differences from `other` (empty when they match).
    fn differences(&self, other: &Manifest) -> Vec<String> {
        let a = serde_json::to_value(self).unwrap_or_default();
        let b = serde_json::to_value(other).unwrap_or_default();
        let mut out = Vec::new();
        if let (Some(a), Some(b)) = (a.as_object(), b.as_object()) {
            for (key, va) in a {
                // The path as typed may change between invocations; the fingerprint decides.
                if key == "data" {
                    continue;
                }
                let vb = b.get(key).cloned().unwrap_or_default();
                if *va != vb {
                    out.push(format!("{key}: existing {vb}, now {va}"));
                }
            }
        }
        out
    }
}

/// One planned run.
#[derive(Debug, Clone)]
struct Job {
    kind: ModelKind,
    params: BTreeMap<String, ParamValue>,
    params_str: String,
    /// The share of labels revealed to this run (`--reveal`).
    reveal: Option<f64>,
    repeat: u64,
    seed: u64,
    k: usize,
}

/// One cell of the plan.
#[derive(Debug, Clone)]
struct Cell {
    kind: ModelKind,
    params: BTreeMap<String, ParamValue>,
    params_str: String,
    reveal: Option<f64>,
    /// The rank (from `--grid k=...`, else `--k` or the number of classes).
    k: usize,
}

/// Each cell once per share of `--reveal`; with more than one share the cell's params gain
/// `reveal=P`, so the shares are summarised apart.
fn with_shares(cells: Vec<Cell>, labels: &SweepLabelArgs) -> Vec<Cell> {
    let shares = labels.shares();
    let many = shares.len() > 1;
    let mut out = Vec::with_capacity(cells.len() * shares.len());
    for cell in cells {
        for &share in &shares {
            let mut c = cell.clone();
            c.reveal = share;
            if let (true, Some(p)) = (many, share) {
                let entry = format!("reveal={}", f(p));
                c.params_str = if c.params_str.is_empty() {
                    entry
                } else {
                    format!("{};{entry}", c.params_str)
                };
            }
            out.push(c);
        }
    }
    out
}

/// A row of runs.csv, by column name (values as written).
type Row = BTreeMap<String, String>;

fn bad(e: impl Into<anyhow::Error>) -> CliError {
    CliError::BadInput(e.into())
}

fn failed(e: impl Into<anyhow::Error>) -> CliError {
    CliError::Failed(e.into())
}

/// A grid axis as typed: the parameter's name and its values as text (`None`: the paper's
/// grid from each model's table). Values are parsed per model, by its table entry.
pub type GridAxis = (String, Option<Vec<String>>);

/// `NAME=v1,v2,...` (or a bare `NAME`) grid axes, in the given order; duplicate names are
/// refused.
pub fn parse_grid(items: &[String]) -> Result<Vec<GridAxis>, String> {
    let mut out: Vec<GridAxis> = Vec::new();
    for it in items {
        let (name, vals) = match it.split_once('=') {
            Some((n, v)) => (n.trim(), Some(v)),
            None => (it.trim(), None),
        };
        if name.is_empty() {
            return Err(format!("--grid `{it}`: empty parameter name"));
        }
        if out.iter().any(|(n, _)| n == name) {
            return Err(format!("--grid names `{name}` twice"));
        }
        let values = vals.map(|v| {
            let mut vs: Vec<String> = Vec::new();
            for x in v.split(',').map(str::trim) {
                if !vs.iter().any(|y| y == x) {
                    vs.push(x.to_owned());
                }
            }
            vs
        });
        out.push((name.to_owned(), values));
    }
    Ok(out)
}

/// The cells: for each model, the cartesian product of the grid axes it has, each value
/// parsed and checked by the model's table.
fn plan_cells(
    kinds: &[ModelKind],
    grid: &[GridAxis],
    k: usize,
    data: &Dataset,
) -> Result<Vec<Cell>, CliError> {
    let (ks, grid) = ksel::split_k_axis(grid)?;
    let grid = grid.as_slice();
    for (name, _) in grid {
        if !kinds.iter().any(|kind| kind.param(name).is_some()) {
            let known: Vec<String> = kinds
                .iter()
                .map(|kind| format!("{}: {}", kind.name(), kind.param_names()))
                .collect();
            return Err(bad(anyhow!(
                "--grid {name}: no selected model has a parameter `{name}` ({})",
                known.join("; ")
            )));
        }
    }
    let mut cells = Vec::new();
    for &kind in kinds {
        let mut combos: Vec<BTreeMap<String, ParamValue>> = vec![BTreeMap::new()];
        for (name, values) in grid {
            let Some(hp) = kind.param(name) else {
                continue;
            };
            let values: Vec<ParamValue> = match values {
                Some(texts) => texts
                    .iter()
                    .map(|t| hp.parse(kind.label(), t))
                    .collect::<Result<_, _>>()
                    .map_err(|e| bad(anyhow!("--grid {name}: {e}")))?,
                None => hp.grid(),
            };
            combos = combos
                .iter()
                .flat_map(|c| {
                    values.iter().map(move |&v| {
                        let mut c = c.clone();
                        c.insert(name.clone(), v);
                        c
                    })
                })
                .collect();
        }
        for params in combos {
            for &k in ks.as_deref().unwrap_or(&[k]) {
                let spec = ModelSpec {
                    kind,
                    k,
                    seed: 0,
                    params: params.clone(),
                    init: None,
                };
                spec.validate(data.m(), data.n())
                    .map_err(|e| bad(anyhow!("{}: {e}", kind.name())))?;
                let plain = params_string(&params, ";");
                cells.push(Cell {
                    kind,
                    params_str: if ks.is_some() {
                        ksel::params_with_k(&plain, k)
                    } else {
                        plain
                    },
                    params: params.clone(),
                    k,
                    reveal: None,
                });
            }
        }
    }
    Ok(cells)
}

fn f(v: f64) -> String {
    format!("{v:?}")
}

/// Run one planned trial; returns its row.
fn execute(job: &Job, data: &Arc<Dataset>, triplets: &Arc<Vec<Triplet>>, args: &SweepArgs) -> Row {
    let mut row: Row = BTreeMap::new();
    row.insert("model".into(), job.kind.name().into());
    row.insert("params".into(), job.params_str.clone());
    row.insert("repeat".into(), job.repeat.to_string());
    row.insert("seed".into(), job.seed.to_string());
    row.insert("k".into(), job.k.to_string());
    row.insert("triplets".into(), triplets.len().to_string());
    if let Err(e) = run_trial(job, data, triplets, args, &mut row) {
        row.insert("error".into(), e.replace(['\n', '\r'], " "));
    }
    row
}

/// The trial of a planned run: the repeat's triplets (scored for every model, handed to those
/// that use them), the cell's share of labels, the sweep's protocol; one thread.
fn trial_for(
    job: &Job,
    data: &Arc<Dataset>,
    triplets: &Arc<Vec<Triplet>>,
    args: &SweepArgs,
) -> Result<Trial, String> {
    let spec = ModelSpec {
        kind: job.kind,
        k: job.k,
        seed: job.seed,
        params: job.params.clone(),
        init: None,
    };
    // Checked once in `run_sweep`.
    let fit = args.stop.fit_options().map_err(|e| e.to_string())?;
    let labels = (args.labels.for_share(job.reveal))
        .policy(data)
        .map_err(|e| e.to_string())?;
    let mut trial = Trial::new(Arc::clone(data), spec, fit);
    trial.id = JobId(job.repeat);
    trial.side = Side::Policy {
        triplets: TripletPolicy::Given(Arc::clone(triplets)),
        labels,
        hand: Hand::WhatTheModelUses,
    };
    trial.protocol = TrialProtocol {
        kmeans_restarts: usize::try_from(args.kmeans_repeats).unwrap_or(usize::MAX),
        split: args.protocol == Protocol::Classification,
        svm: args.svm.unwrap_or_default(),
        classifier: false,
        kept_in_x: false,
        given: args.protocol == Protocol::Semi,
    };
    Ok(trial)
}

/// Run the trial and fill the row; an error ends the row (what was filled stays).
fn run_trial(
    job: &Job,
    data: &Arc<Dataset>,
    triplets: &Arc<Vec<Triplet>>,
    args: &SweepArgs,
    row: &mut Row,
) -> Result<(), String> {
    let trial = trial_for(job, data, triplets, args)?;
    let side = trial.resolve_side().map_err(|e| e.to_string())?;
    row.insert(
        "known_labels".into(),
        side.known.iter().flatten().count().to_string(),
    );
    let outcome = trial
        .run_resolved(side, &mut |_| true)
        .map_err(|e| e.to_string())?;
    fit_columns(&outcome, data, args.keep_curves, row);
    match &outcome.scores.given {
        Some(given) => given_columns(
            outcome.scores.baseline_note.as_deref(),
            given,
            &outcome,
            row,
        ),
        None => Ok(()),
    }
}

/// The fit's columns and the evaluation's (clustering, triplets kept, the 80/20 split), and
/// for clusterings.csv the labelling and the relative error.
fn fit_columns(outcome: &Outcome, data: &Dataset, keep_curves: bool, row: &mut Row) {
    let fit = outcome.fit();
    let rec = fit.record;
    row.insert("iterations".into(), rec.iterations().to_string());
    row.insert(
        "converged".into(),
        (fit.stop == StopReason::Converged).to_string(),
    );
    row.insert("seconds".into(), f(rec.seconds));
    if keep_curves {
        row.insert(curves::KEY.into(), curves::field(&rec.objective));
    }
    row.insert("objective".into(), f(fit.final_objective()));
    let ev = &outcome.scores.evaluation;
    let mut notes = fit.notes.to_vec();
    notes.extend(ev.notes.iter().map(|n| format!("evaluation: {n}")));
    row.insert("notes".into(), notes.join("; "));
    for (name, v) in ev.clustering_means() {
        row.insert(name.into(), f(v.mean));
        row.insert(format!("{name}_std"), f(v.std));
    }
    if let Some(kept) = ev.kept_h {
        row.insert("triplets_kept_h".into(), f(kept));
    }
    if let Some(r) = &ev.classification {
        row.insert("accuracy".into(), f(r.accuracy));
        row.insert("macro_f1".into(), f(r.macro_f1));
        row.insert("macro_f1_of_means".into(), f(r.macro_f1_of_means));
    }
    // For clusterings.csv (not runs.csv columns): the labelling and the relative error.
    let labels = fit.labelling();
    row.insert(
        "labels".into(),
        labels
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(" "),
    );
    if let Some(e) = fit.recon_error(data.x.view()) {
        row.insert("recon_error".into(), f(e));
    }
}

/// `--protocol semi`: the run's scores on the samples not given, and the linear-SVM baselines
/// (on X, on an NMF's H) on the same split (docs/models.md §8.5). Without an NMF baseline
/// (data NMF refuses, e.g. the z-scores of `standardize`) the model and the SVM on X are
/// still scored, as `run` does, and the row says why.
fn given_columns(
    baseline_note: Option<&str>,
    given: &Result<GivenScores, String>,
    outcome: &Outcome,
    row: &mut Row,
) -> Result<(), String> {
    if let Some(note) = baseline_note {
        push_note(row, &format!("evaluation: {note}"));
    }
    let g = given.as_ref().map_err(String::clone)?;
    for n in &g.notes {
        push_note(row, &format!("evaluation: {n}"));
    }
    if g.classifier {
        let rounds = outcome.fit().self_training_rounds();
        row.insert("self_training_rounds".into(), rounds.to_string());
    }
    row.insert("class_acc".into(), f(g.model.accuracy));
    row.insert("class_macro_f1".into(), f(g.model.macro_f1));
    if let Some(r) = &g.svm_x {
        row.insert("svm_x_acc".into(), f(r.accuracy));
        row.insert("svm_x_macro_f1".into(), f(r.macro_f1));
    }
    if let Some(r) = &g.svm_h {
        row.insert("svm_nmf_h_acc".into(), f(r.accuracy));
        row.insert("svm_nmf_h_macro_f1".into(), f(r.macro_f1));
    }
    Ok(())
}

/// Append `note` to the row's notes ("; "-separated).
fn push_note(row: &mut Row, note: &str) {
    let all = row.entry("notes".into()).or_default();
    if !all.is_empty() {
        all.push_str("; ");
    }
    all.push_str(note);
}

fn row_line(row: &Row) -> String {
    let mut line = COLUMNS
        .iter()
        .map(|c| csv_field(row.get(*c).map(String::as_str).unwrap_or("")))
        .collect::<Vec<_>>()
        .join(",");
    line.push('\n');
    line
}

/// Read runs.csv: its rows; a last line cut short by an interruption is dropped (and the file
/// rewritten without it).
fn read_rows(path: &Path) -> Result<Vec<Row>, CliError> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read {}", path.display()))
        .map_err(bad)?;
    let complete_len = if text.ends_with('\n') {
        text.len()
    } else {
        text.rfind('\n').map_or(0, |i| i + 1)
    };
    let header = COLUMNS.join(",");
    if complete_len == 0 || !text.starts_with(&format!("{header}\n")) {
        return Err(bad(anyhow!(
            "{}: not a runs.csv of this version (the first line must be `{header}`)",
            path.display()
        )));
    }
    if complete_len < text.len() {
        crate::say!(
            "note: {}: dropping an incomplete last line (interrupted write)",
            path.display()
        );
        std::fs::write(path, &text[..complete_len])
            .with_context(|| format!("cannot rewrite {}", path.display()))
            .map_err(failed)?;
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(&text.as_bytes()[..complete_len]);
    let mut rows = Vec::new();
    for (i, rec) in reader.records().enumerate() {
        let rec = rec.map_err(|e| bad(anyhow!("{}: line {}: {e}", path.display(), i + 2)))?;
        if rec.len() != COLUMNS.len() {
            return Err(bad(anyhow!(
                "{}: line {}: {} fields, expected {}",
                path.display(),
                i + 2,
                rec.len(),
                COLUMNS.len()
            )));
        }
        rows.push(
            COLUMNS
                .iter()
                .zip(rec.iter())
                .map(|(c, v)| ((*c).to_owned(), v.to_owned()))
                .collect(),
        );
    }
    Ok(rows)
}

fn row_key(row: &Row) -> (String, String, String) {
    let g = |c: &str| row.get(c).cloned().unwrap_or_default();
    (g("model"), g("params"), g("repeat"))
}

/// Run a sweep (see the module docs). `progress` is called after every finished run.
pub fn run_sweep(
    args: &SweepArgs,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<SweepSummary, CliError> {
    args.stop.fit_options()?;
    if args.jobs == Some(0) {
        return Err(bad(anyhow!("--jobs must be ≥ 1")));
    }
    let kinds = distinct_models(&args.models)?;
    let grid = parse_grid(&args.grid).map_err(|e| bad(anyhow!(e)))?;
    let settled = settled_args(args)?;
    let args = &settled;
    let data = Arc::new(load_data(&args.input)?);
    for w in &data.warnings {
        crate::say!("warning: {w}");
    }
    if let Some(why) = &data.preprocess_reason {
        crate::say!("preprocessing: {why}");
    }
    check_side(args, &data)?;
    let k = args.k.unwrap_or_else(|| data.n_classes());
    let cells = with_shares(plan_cells(&kinds, &grid, k, &data)?, &args.labels);
    let manifest = manifest_for(args, &data, k);
    let existing = open_folder(args, &manifest)?;
    let clusterings_path = args.out.join("clusterings.csv");
    let mut clusterings = ksel::read_clusterings(&clusterings_path)?;
    // Rewritten whole: also creates it for a sweep begun before clusterings.csv existed.
    ksel::write_clusterings(&clusterings_path, &clusterings)?;
    let (jobs, skipped) = plan_jobs(&cells, args, &existing);
    let threads = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(failed)?;
    let triplets = repeat_triplets(&kinds, &jobs, &data, args, &pool)?;
    let total = jobs.len();
    let new_rows = pool.install(|| execute_all(&jobs, &data, &triplets, args, progress))?;
    let mut rows = existing;
    for r in new_rows {
        if r.contains_key("labels") {
            clusterings.insert(row_key(&r), r.clone());
        }
        rows.push(r);
    }
    write_outputs(
        &Outputs {
            manifest: &manifest,
            models: json!(kinds.iter().map(|k| k.name()).collect::<Vec<_>>()),
            grid: json!(
                grid.iter()
                    .map(|(n, v)| json!({"name": n, "values": v}))
                    .collect::<Vec<_>>()
            ),
            args,
            cells: &cells,
            rows: &rows,
            clusterings: &clusterings,
        },
        total,
        skipped,
    )
}

/// `--models` in the given order; a model named twice, or none, is refused.
fn distinct_models(models: &[ModelKind]) -> Result<Vec<ModelKind>, CliError> {
    let mut kinds: Vec<ModelKind> = Vec::new();
    for &kind in models {
        if kinds.contains(&kind) {
            return Err(bad(anyhow!("--models names `{}` twice", kind.name())));
        }
        kinds.push(kind);
    }
    if kinds.is_empty() {
        return Err(bad(anyhow!("--models: no model given")));
    }
    Ok(kinds)
}

/// The side information and truth a sweep needs, checked once up front: a bad --reveal or
/// --known-labels is one error, not one per run; the semi protocol needs a training set; the
/// data must be labelled.
fn check_side(args: &SweepArgs, data: &Dataset) -> Result<(), CliError> {
    for share in args.labels.shares() {
        args.labels.for_share(share).labels_for(data, args.seed)?;
    }
    if args.protocol == Protocol::Semi
        && args.labels.reveal.is_empty()
        && args.labels.known_labels.is_none()
    {
        return Err(bad(anyhow!(
            "--protocol semi needs a training set: --reveal P[,P...] (a stratified share of the \
             true labels per repeat) or --known-labels FILE"
        )));
    }
    if data.labels.is_none() {
        return Err(bad(anyhow!(
            "{}: sweep needs labelled data (the metrics compare with the ground truth)",
            data.source
        )));
    }
    Ok(())
}

/// The manifest of this sweep's folder.
fn manifest_for(args: &SweepArgs, data: &Dataset, k: usize) -> Manifest {
    Manifest {
        data: args.input.data.clone(),
        fingerprint: data.fingerprint,
        preprocess: data.preprocess.name().to_owned(),
        k,
        protocol: args.protocol,
        seed: args.seed,
        max_iter: args.stop.max_iter,
        tol: args.stop.tol,
        kmeans_repeats: args.kmeans_repeats,
        anchors: args.triplet_opts.anchors,
        per_anchor: args.triplet_opts.per_anchor,
        reveal: match args.labels.reveal.as_slice() {
            [p] => Some(*p),
            _ => None,
        },
        known_labels: args.labels.known_labels.clone(),
        reveal_shares: if args.labels.reveal.len() > 1 {
            args.labels.reveal.clone()
        } else {
            Vec::new()
        },
        shard: args.shard.map(|s| s.to_string()),
        svm: args.svm.unwrap_or_default(),
    }
}

/// The rows already in `--out` when resuming (after checking its manifest against this
/// sweep's); otherwise the folder is created with the manifest and an empty runs.csv.
fn open_folder(args: &SweepArgs, manifest: &Manifest) -> Result<Vec<Row>, CliError> {
    let out = &args.out;
    let csv_path = out.join("runs.csv");
    let manifest_path = out.join("sweep.json");
    if args.resume && csv_path.exists() {
        let text = std::fs::read_to_string(&manifest_path)
            .with_context(|| {
                format!(
                    "--resume: cannot read {} (the sweep's manifest)",
                    manifest_path.display()
                )
            })
            .map_err(bad)?;
        let old: Manifest = serde_json::from_str(&text)
            .with_context(|| {
                format!(
                    "--resume: {} is not a sweep manifest",
                    manifest_path.display()
                )
            })
            .map_err(bad)?;
        let diffs = manifest.differences(&old);
        if !diffs.is_empty() {
            return Err(bad(anyhow!(
                "--resume: {} was made with different arguments or data ({}); use another --out \
                 or the original arguments",
                out.display(),
                diffs.join("; ")
            )));
        }
        return read_rows(&csv_path);
    }
    if csv_path.exists() {
        return Err(bad(anyhow!(
            "{} already exists: pass --resume to continue that sweep, or choose another --out",
            csv_path.display()
        )));
    }
    std::fs::create_dir_all(out)
        .with_context(|| format!("cannot create {}", out.display()))
        .map_err(failed)?;
    let text = serde_json::to_string_pretty(manifest).map_err(failed)?;
    write_atomic(&manifest_path, text.as_bytes()).map_err(failed)?;
    write_atomic(&csv_path, format!("{}\n", COLUMNS.join(",")).as_bytes()).map_err(failed)?;
    Ok(Vec::new())
}

/// The runs still to do: every cell × repeat in this shard and not already in runs.csv; and
/// how many were skipped as done.
fn plan_jobs(cells: &[Cell], args: &SweepArgs, existing: &[Row]) -> (Vec<Job>, usize) {
    let done: HashSet<(String, String, String)> = existing.iter().map(row_key).collect();
    let mut jobs = Vec::new();
    let mut skipped = 0;
    let mut t = 0usize;
    for cell in cells {
        for r in 0..args.repeats {
            t += 1;
            if args.shard.is_some_and(|s| !s.owns(t - 1)) {
                continue;
            }
            let key = (
                cell.kind.name().to_owned(),
                cell.params_str.clone(),
                r.to_string(),
            );
            if done.contains(&key) {
                skipped += 1;
                continue;
            }
            jobs.push(Job {
                kind: cell.kind,
                params: cell.params.clone(),
                params_str: cell.params_str.clone(),
                reveal: cell.reveal,
                repeat: r,
                seed: derive_seed(args.seed, r),
                k: cell.k,
            });
        }
    }
    (jobs, skipped)
}

/// Triplets per repeat, drawn once (in parallel) and shared by every model of that repeat;
/// none when no model of the sweep uses triplets.
fn repeat_triplets(
    kinds: &[ModelKind],
    jobs: &[Job],
    data: &Dataset,
    args: &SweepArgs,
    pool: &rayon::ThreadPool,
) -> Result<BTreeMap<u64, Arc<Vec<Triplet>>>, CliError> {
    use rayon::prelude::*;
    let use_triplets = kinds
        .iter()
        .any(|k| matches!(k.needs(), SideNeed::Triplets | SideNeed::Links));
    if !use_triplets {
        return Ok(BTreeMap::new());
    }
    let mut repeats: Vec<u64> = jobs.iter().map(|j| j.repeat).collect();
    repeats.sort_unstable();
    repeats.dedup();
    let (anchors, per_anchor) = (args.triplet_opts.anchors, args.triplet_opts.per_anchor);
    pool.install(|| {
        repeats
            .par_iter()
            .map(|&r| {
                side::generate(data, anchors, per_anchor, derive_seed(args.seed, r))
                    .map(|g| (r, Arc::new(g.triplets)))
                    .map_err(|e| bad(anyhow!("triplets for repeat {r}: {e}")))
            })
            .collect()
    })
}

/// The files a sweep appends to as its runs finish: runs.csv, clusterings.csv, and
/// curves.csv with `--keep-curves`.
struct Appenders {
    out: PathBuf,
    runs: std::fs::File,
    clusterings: std::fs::File,
    curves: Option<std::fs::File>,
}

impl Appenders {
    fn open(out: &Path, keep_curves: bool) -> Result<Self, CliError> {
        let append = |path: &Path| {
            std::fs::OpenOptions::new()
                .append(true)
                .open(path)
                .with_context(|| format!("cannot open {} for appending", path.display()))
                .map_err(failed)
        };
        Ok(Self {
            out: out.to_owned(),
            runs: append(&out.join("runs.csv"))?,
            clusterings: append(&out.join("clusterings.csv"))?,
            curves: if keep_curves {
                Some(curves::open(&out.join(curves::FILE))?)
            } else {
                None
            },
        })
    }

    /// Append a finished run's lines (its curve, its labelling, then its row: a run in
    /// runs.csv always has its clustering), flushed; the curve leaves the row.
    fn append(&mut self, row: &mut Row) -> Result<(), CliError> {
        fn put(
            file: &mut std::fs::File,
            line: &str,
            name: &dyn std::fmt::Display,
        ) -> Result<(), CliError> {
            file.write_all(line.as_bytes())
                .and_then(|()| file.flush())
                .with_context(|| format!("cannot append to {name}"))
                .map_err(failed)
        }
        if let (Some(kh), Some(line)) = (self.curves.as_mut(), curves::line(row)) {
            put(kh, &line, &curves::FILE)?;
        }
        row.remove(curves::KEY);
        if let Some(line) = ksel::clustering_line(row) {
            let path = self.out.join("clusterings.csv");
            put(&mut self.clusterings, &line, &path.display())?;
        }
        let path = self.out.join("runs.csv");
        put(&mut self.runs, &row_line(row), &path.display())
    }
}

/// Run the jobs in parallel (on the caller's rayon pool), appending each row as it finishes
/// and reporting progress.
fn execute_all(
    jobs: &[Job],
    data: &Arc<Dataset>,
    triplets: &BTreeMap<u64, Arc<Vec<Triplet>>>,
    args: &SweepArgs,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<Vec<Row>, CliError> {
    use rayon::prelude::*;
    let files = Mutex::new(Appenders::open(&args.out, args.keep_curves)?);
    let total = jobs.len();
    let finished = AtomicUsize::new(0);
    let start = Instant::now();
    let empty = Arc::new(Vec::new());
    jobs.par_iter()
        .map(|job| {
            let t = triplets.get(&job.repeat).unwrap_or(&empty);
            let mut row = execute(job, data, t, args);
            files
                .lock()
                .map_err(|_| failed(anyhow!("runs.csv writer poisoned")))?
                .append(&mut row)?;
            let done = finished.fetch_add(1, Ordering::SeqCst) + 1;
            progress(&Progress {
                done,
                total,
                elapsed: start.elapsed(),
            });
            Ok(row)
        })
        .collect()
}

/// What the summary files of a sweep (or a merge of its shards) are made from.
struct Outputs<'a> {
    manifest: &'a Manifest,
    models: serde_json::Value,
    grid: serde_json::Value,
    args: &'a SweepArgs,
    cells: &'a [Cell],
    rows: &'a [Row],
    clusterings: &'a ksel::Clusterings,
}

/// Summarise and write summary.md, summary.json and (with a k axis) k_selection.csv.
fn write_outputs(
    o: &Outputs<'_>,
    executed: usize,
    skipped: usize,
) -> Result<SweepSummary, CliError> {
    let out = &o.args.out;
    let mut summary = summarize(o.cells, o.rows, o.args, executed, skipped);
    let has_k_axis = o.grid.as_array().is_some_and(|g| {
        g.iter()
            .any(|a| a.get("name").and_then(|n| n.as_str()) == Some("k"))
    });
    if has_k_axis {
        summary.k_selection =
            ksel::k_selection(&summary.cells, o.rows, o.clusterings, o.args.repeats)?;
        summary
            .markdown
            .push_str(&ksel::k_selection_markdown(&summary.k_selection));
        write_atomic(
            &out.join("k_selection.csv"),
            ksel::k_selection_csv(&summary.k_selection).as_bytes(),
        )
        .map_err(failed)?;
    }
    write_atomic(&out.join("summary.md"), summary.markdown.as_bytes()).map_err(failed)?;
    let text = serde_json::to_string_pretty(&json!({
        "manifest": o.manifest,
        "models": o.models,
        "grid": o.grid,
        "repeats": o.args.repeats,
        "summary": summary,
    }))
    .map_err(failed)?;
    write_atomic(&out.join("summary.json"), text.as_bytes()).map_err(failed)?;
    Ok(summary)
}

/// Mean ± std per cell over the rows of the plan, sorted by (cell, repeat); best cell per model.
fn summarize(
    cells: &[Cell],
    rows: &[Row],
    args: &SweepArgs,
    executed: usize,
    skipped: usize,
) -> SweepSummary {
    let mut out: Vec<CellSummary> = Vec::new();
    for cell in cells {
        let mut mine: Vec<(u64, &Row)> = rows
            .iter()
            .filter(|r| {
                r.get("model").map(String::as_str) == Some(cell.kind.name())
                    && r.get("params") == Some(&cell.params_str)
            })
            .filter_map(|r| {
                let rep: u64 = r.get("repeat")?.parse().ok()?;
                (rep < args.repeats).then_some((rep, r))
            })
            .collect();
        mine.sort_by_key(|(rep, _)| *rep);
        mine.dedup_by_key(|(rep, _)| *rep);
        let ok: Vec<&Row> = mine
            .iter()
            .filter(|(_, r)| r.get("error").is_none_or(|e| e.is_empty()))
            .map(|(_, r)| *r)
            .collect();
        let mut metrics = BTreeMap::new();
        for &m in SUMMARY_METRICS {
            let vals: Vec<f64> = ok
                .iter()
                .filter_map(|r| r.get(m).and_then(|v| v.parse::<f64>().ok()))
                .collect();
            if !vals.is_empty() {
                metrics.insert(m.to_owned(), MeanStd::of(&vals));
            }
        }
        out.push(CellSummary {
            model: cell.kind.name().to_owned(),
            params: cell.params_str.clone(),
            runs: ok.len(),
            failed: mine.len() - ok.len(),
            metrics,
            best: false,
        });
    }
    let key = match args.protocol {
        Protocol::Clustering => "acc",
        Protocol::Classification => "accuracy",
        Protocol::Semi => "class_acc",
    };
    let models: Vec<String> = {
        let mut m: Vec<String> = Vec::new();
        for c in &out {
            if !m.contains(&c.model) {
                m.push(c.model.clone());
            }
        }
        m
    };
    for model in &models {
        let mut best: Option<(usize, f64)> = None;
        for (i, c) in out.iter().enumerate() {
            if &c.model != model {
                continue;
            }
            if let Some(v) = c.metrics.get(key).map(|m| m.mean).filter(|v| v.is_finite())
                && best.is_none_or(|(_, b)| v > b)
            {
                best = Some((i, v));
            }
        }
        if let Some((i, _)) = best {
            out[i].best = true;
        }
    }
    let markdown = markdown_table(&out, args);
    SweepSummary {
        protocol: args.protocol,
        cells: out,
        executed,
        skipped,
        markdown,
        k_selection: Vec::new(),
    }
}

fn markdown_table(cells: &[CellSummary], args: &SweepArgs) -> String {
    let has = |m: &str| cells.iter().any(|c| c.metrics.contains_key(m));
    let mut cols: Vec<(&str, &str, bool)> = if args.protocol == Protocol::Semi {
        vec![
            ("known_labels", "given", false),
            ("class_acc", "acc %", true),
            ("class_macro_f1", "macro-F1 %", true),
            ("svm_x_acc", "SVM(X) acc %", true),
            ("svm_x_macro_f1", "SVM(X) F1 %", true),
            ("svm_nmf_h_acc", "SVM(NMF H) acc %", true),
            ("svm_nmf_h_macro_f1", "SVM(NMF H) F1 %", true),
        ]
    } else {
        vec![
            ("acc", "ACC %", true),
            ("nmi_max", "NMI max %", true),
            ("nmi_sqrt", "NMI sqrt %", true),
            ("nmi_arith", "NMI arith %", true),
        ]
    };
    if has("self_training_rounds") {
        cols.push(("self_training_rounds", "rounds", false));
    }
    if has("triplets_kept_h") {
        cols.push(("triplets_kept_h", "kept(H) %", true));
    }
    if args.protocol == Protocol::Classification {
        cols.push(("accuracy", "test acc %", true));
        cols.push(("macro_f1", "macro-F1 %", true));
    }
    cols.push(("iterations", "iterations", false));
    cols.push(("seconds", "seconds", false));
    let mut s = format!(
        "Sweep: {} protocol, {} repeats × {} k-means restarts; mean ± std over repeats; \
         **best** = highest mean {} per model.\n\n",
        match args.protocol {
            Protocol::Clustering => "clustering",
            Protocol::Classification => "classification",
            Protocol::Semi => "semi-supervised (scored on the samples not given)",
        },
        args.repeats,
        args.kmeans_repeats,
        match args.protocol {
            Protocol::Clustering => "ACC",
            Protocol::Classification => "test accuracy",
            Protocol::Semi => "accuracy",
        }
    );
    s.push_str("| model | params | runs |");
    for (_, title, _) in &cols {
        s.push_str(&format!(" {title} |"));
    }
    s.push_str(" best |\n|---|---|---|");
    for _ in &cols {
        s.push_str("---|");
    }
    s.push_str("---|\n");
    for c in cells {
        let params = if c.params.is_empty() {
            "—".to_owned()
        } else {
            c.params.replace(';', ", ")
        };
        let runs = if c.failed > 0 {
            format!("{} ({} failed)", c.runs, c.failed)
        } else {
            c.runs.to_string()
        };
        let mark = |t: String| {
            if c.best && t != "—" {
                format!("**{t}**")
            } else {
                t
            }
        };
        s.push_str(&format!(
            "| {} | {params} | {runs} |",
            mark(c.model.clone())
        ));
        for (m, _, pct) in &cols {
            let cell = match c.metrics.get(*m) {
                Some(v) if *pct => format!("{:.2} ± {:.2}", 100.0 * v.mean, 100.0 * v.std),
                Some(v) if matches!(*m, "iterations" | "known_labels" | "self_training_rounds") => {
                    format!("{:.0}", v.mean)
                }
                Some(v) => format!("{:.3}", v.mean),
                None => "—".into(),
            };
            s.push_str(&format!(" {} |", if *pct { mark(cell) } else { cell }));
        }
        s.push_str(if c.best { " ★ |\n" } else { " |\n" });
    }
    s
}

/// `sweep`: run with a progress line on stderr and print the markdown summary on stdout.
/// `sweep merge` (`sweep-merge`): merge and print the markdown summary on stdout.
pub fn run_merge(m: &MergeArgs) -> Result<(), CliError> {
    let summary = merge(m)?;
    crate::say!(
        "sweep merge: {} runs from {} folders; wrote {}",
        summary.executed,
        m.dirs.len(),
        m.out.display()
    );
    super::output::print_stdout(&summary.markdown)
}

pub fn run(args: &SweepArgs) -> Result<(), CliError> {
    let tty = std::io::stderr().is_terminal();
    let last = Mutex::new(Instant::now() - Duration::from_secs(60));
    let every = if tty {
        Duration::from_millis(200)
    } else {
        Duration::from_secs(5)
    };
    let report = |p: &Progress| {
        let Ok(mut last) = last.lock() else { return };
        if p.done < p.total && last.elapsed() < every {
            return;
        }
        *last = Instant::now();
        let eta = p
            .eta()
            .map_or_else(|| "?".to_owned(), |d| format!("{:.0} s", d.as_secs_f64()));
        let line = format!(
            "sweep: {}/{} runs, {:.0} s elapsed, ETA {eta}",
            p.done,
            p.total,
            p.elapsed.as_secs_f64()
        );
        if tty {
            crate::say_inline!("\r{line}   ");
            if p.done == p.total {
                crate::say!();
            }
        } else {
            crate::say!("{line}");
        }
    };
    let summary = run_sweep(args, &report)?;
    crate::say!(
        "sweep: {} runs executed, {} skipped (already in {}); wrote {}",
        summary.executed,
        summary.skipped,
        args.out.join("runs.csv").display(),
        args.out.display()
    );
    super::output::print_stdout(&summary.markdown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_parses_and_refuses_duplicates() {
        let g = parse_grid(&["alpha=0.1, 1e-3,0.1".into(), "delta".into()]).unwrap();
        assert_eq!(
            g[0],
            ("alpha".to_owned(), Some(vec!["0.1".into(), "1e-3".into()]))
        );
        assert_eq!(
            g[1],
            ("delta".to_owned(), None),
            "a bare name: the paper's grid"
        );
        assert!(parse_grid(&["alpha=0.1".into(), "alpha=1".into()]).is_err());
        assert!(parse_grid(&["=1".into()]).is_err());
    }

    #[test]
    fn params_string_is_name_ordered_round_trip() {
        let mut p = BTreeMap::new();
        p.insert("delta".to_owned(), ParamValue::Number(10.0));
        p.insert("alpha".to_owned(), ParamValue::Number(1e-4));
        p.insert("safeguard".to_owned(), ParamValue::Flag(true));
        assert_eq!(params_string(&p, ";"), "alpha=0.0001;delta=10;safeguard=1");
        assert_eq!(params_string(&BTreeMap::new(), ";"), "");
    }

    #[test]
    fn cells_are_the_product_of_the_axes_each_model_has() {
        let data = Dataset::from_parts(
            ndarray::Array2::from_elem((4, 6), 1.0),
            None,
            Vec::new(),
            "test",
        );
        let (nmf, rpnmf) = (
            crate::engine::models::nmf::KIND,
            crate::engine::models::rpnmf::KIND,
        );
        let grid = parse_grid(&["alpha=0.1,1".into(), "delta=1,10,100".into()]).unwrap();
        let cells = plan_cells(&[nmf, rpnmf], &grid, 2, &data).unwrap();
        assert_eq!(cells.len(), 1 + 6);
        assert_eq!(cells[0].params_str, "");
        assert_eq!(cells[1].params_str, "alpha=0.1;delta=1");
        assert_eq!(cells[6].params_str, "alpha=1;delta=100");
        let unknown = parse_grid(&["beta=1".into()]).unwrap();
        assert!(plan_cells(&[nmf, rpnmf], &unknown, 2, &data).is_err());
        let out_of_range = parse_grid(&["alpha=-1".into()]).unwrap();
        assert!(plan_cells(&[rpnmf], &out_of_range, 2, &data).is_err());
        // Flags by name, and the paper's grid from the table.
        let g = parse_grid(&["normalize_w=on,off".into(), "alpha".into()]).unwrap();
        let cells = plan_cells(&[rpnmf], &g, 2, &data).unwrap();
        assert_eq!(cells.len(), 2 * 5);
        assert_eq!(cells[0].params_str, "alpha=0.0001;normalize_w=1");
    }

    #[test]
    fn eta_scales_with_the_runs_left() {
        let p = Progress {
            done: 2,
            total: 6,
            elapsed: Duration::from_secs(10),
        };
        assert_eq!(p.eta(), Some(Duration::from_secs(20)));
    }
}
