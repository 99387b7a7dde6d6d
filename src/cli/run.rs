//! `nmf-playground run`: fit one model headlessly (DESIGN.md §6).

use super::CliError;
use super::drive::run_trial;
use crate::engine::constraints::Triplet;
use crate::engine::data::{self, Dataset, LabelColumn, LoadOptions, Preprocess};
use crate::engine::eval::SvmScaling;
use crate::engine::files::export::{
    Factors, RunWriter, SampleLabels, clusters_csv, predictions_csv,
};
use crate::engine::files::session::{DataCheck, SessionFile};
use crate::engine::jobs::experiment::{self, FitOptions, StopReason};
use crate::engine::jobs::trial::{
    GeneratedInfo, Hand, LabelPolicy, Outcome, Protocol as TrialProtocol, Side, Trial,
    TripletPolicy, side,
};
use crate::engine::jobs::worker::JobId;
use crate::engine::linalg;
use crate::engine::models::{ModelKind, ModelSpec, ParamValue, WarmStart};
use anyhow::anyhow;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where the data comes from and how it is read (shared by `run`, `triplets`, `sweep`).
#[derive(Debug, Clone, clap::Args)]
pub struct DataArgs {
    /// Dataset: a .csv file, an image folder, a .npy or .mat file, or `sample:NAME`
    /// (bundled: sample:glyphs, sample:blobs). Required (`run --session` takes it from the
    /// session).
    #[arg(long, default_value = "", hide_default_value = true)]
    pub data: String,
    /// Preprocessing: auto (chosen from the data: l2 for images and for tables whose features
    /// share one range, minmax,l2 for tables whose features' ranges differ by more than 10×
    /// or that hold negative values; the choice and its reason are printed and recorded),
    /// none, l2 (unit-norm samples, the papers' default), max, shift, minmax (each feature to
    /// [0, 1]), minmax,l2 (minmax, then unit-norm samples), or standardize (per-feature
    /// z-scores; negative values, for 2-STGINMF only).
    #[arg(long, default_value = "auto", value_parser = parse_preprocess)]
    pub preprocess: Preprocess,
    /// Labels file (one label per line, or a .npy vector): for .npy data, or replacing the
    /// labels of other data (a .mat without gnd, a CSV, images).
    #[arg(long)]
    pub labels: Option<PathBuf>,
    /// CSV label column, by name or 0-based index ("none" for no labels).
    #[arg(long)]
    pub label_col: Option<String>,
    /// Resize every image to WxH (needed when images differ in size).
    #[arg(long, value_parser = parse_resize)]
    pub resize: Option<(u32, u32)>,
}

/// When a fit stops, shared by `run` and `sweep`.
#[derive(Debug, Clone, clap::Args)]
pub struct StopArgs {
    /// Iteration cap per fit.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_iter: u64,
    /// Relative objective change below which a fit stops, once the change is also that small
    /// next to the decrease since the start (0 = never).
    #[arg(long, default_value_t = 1e-5)]
    pub tol: f64,
}

impl StopArgs {
    /// The fit loop's options; a negative or non-finite `--tol` is bad input.
    pub fn fit_options(&self) -> Result<FitOptions, CliError> {
        if !self.tol.is_finite() || self.tol < 0.0 {
            return Err(CliError::BadInput(anyhow!(
                "--tol must be ≥ 0, got {}",
                self.tol
            )));
        }
        Ok(FitOptions {
            max_iter: usize::try_from(self.max_iter).unwrap_or(usize::MAX),
            tol: self.tol,
        })
    }
}

/// Triplet options (docs/models.md §8.4 protocol when generated).
#[derive(Debug, Clone, clap::Args)]
pub struct TripletArgs {
    /// Fraction of samples used as anchors when generating triplets.
    #[arg(long, default_value_t = 0.1)]
    pub anchors: f64,
    /// Triplets per anchor when generating (half from labels, half from the 5-NN graph).
    #[arg(long, default_value_t = 30)]
    pub per_anchor: usize,
}

/// Partial labels handed to the model as side information (ground-truth labels are otherwise
/// used for scoring only).
#[derive(Debug, Clone, clap::Args)]
pub struct KnownLabelArgs {
    /// Reveal the true labels of a stratified, seeded share P of the samples (0 < P ≤ 1) to the
    /// model, as if the user had painted them.
    #[arg(long, value_name = "P", conflicts_with = "known_labels")]
    pub reveal: Option<f64>,
    /// Known labels: one line per sample with its class, or empty when unknown.
    #[arg(long, value_name = "FILE")]
    pub known_labels: Option<PathBuf>,
}

impl KnownLabelArgs {
    /// The partial labels these arguments give for `data` (none when neither is set), drawn
    /// with `seed`.
    pub fn labels_for(&self, data: &Dataset, seed: u64) -> Result<Vec<Option<usize>>, CliError> {
        match self.policy(data)? {
            LabelPolicy::None => Ok(Vec::new()),
            LabelPolicy::Given(known) => Ok(known.to_vec()),
            LabelPolicy::Reveal(p) => {
                side::reveal(data, p, seed).map_err(|e| CliError::BadInput(e.into()))
            }
        }
    }

    /// Where the known labels come from: the file read and checked, the share checked.
    pub fn policy(&self, data: &Dataset) -> Result<LabelPolicy, CliError> {
        use crate::engine::constraints::read_known_labels;
        let bad = |e: anyhow::Error| CliError::BadInput(e);
        if let Some(file) = &self.known_labels {
            let known = read_known_labels(file, data).map_err(|e| bad(e.into()))?;
            return Ok(LabelPolicy::Given(Arc::new(known)));
        }
        let Some(p) = self.reveal else {
            return Ok(LabelPolicy::None);
        };
        if !(p > 0.0 && p <= 1.0) {
            return Err(bad(anyhow!("--reveal {p}: the share must be in (0, 1]")));
        }
        if data.labels.is_none() {
            return Err(bad(anyhow!(
                "{}: --reveal needs labelled data (it reveals the true labels)",
                data.source
            )));
        }
        Ok(LabelPolicy::Reveal(p))
    }
}

/// `--model` by registered name.
pub fn parse_model(s: &str) -> Result<ModelKind, String> {
    ModelKind::from_name(s)
        .ok_or_else(|| format!("unknown model `{s}` (available: {})", ModelKind::names()))
}

/// The help of `--model`: every registered model with its parameters.
pub fn model_help() -> String {
    let mut out = String::from("Model, by name:");
    for k in ModelKind::all() {
        out.push_str(&format!("\n  {} ({})", k.name(), k.label()));
        if !k.hyperparameters().is_empty() {
            out.push_str(&format!(": --param {}", k.param_names()));
        }
    }
    out
}

/// Arguments of `run`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub input: DataArgs,
    /// Model, by name.
    #[arg(long, default_value = "nmf", value_parser = parse_model, help = model_help())]
    pub model: ModelKind,
    /// Rank k; default: the number of classes when the data is labelled.
    #[arg(long)]
    pub k: Option<usize>,
    /// Seed of every random choice (initialisation, triplets, k-means).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub stop: StopArgs,
    /// A hyperparameter, NAME=VALUE (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Triplets: a constraints file (.json from the app, or .csv `i,j,q`), or `generate`
    /// (the RPNMF protocol from the ground-truth labels, seeded by --seed).
    #[arg(long, value_name = "FILE|generate")]
    pub triplets: Option<String>,
    #[command(flatten)]
    pub triplet_opts: TripletArgs,
    #[command(flatten)]
    pub labels: KnownLabelArgs,
    /// Start from W.npy (m×k) and H.npy (k×n) in this folder instead of the seeded draw
    /// (a previous --out folder works as it is; H.npy alone for models without W). The
    /// factors are used exactly as given (docs/models.md §10.6).
    #[arg(long, value_name = "DIR")]
    pub init: Option<PathBuf>,
    /// Write H.csv, W.csv, clusters.csv, convergence.csv, run.json (and .npy twins) here, and
    /// the model's own arrays (e.g. FNMF's Theta.npy) as .npy.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print one JSON object with the results on stdout.
    #[arg(long)]
    pub json: bool,
    /// k-means restarts on H for ACC/NMI (means over restarts; 50 as in the RPNMF protocol,
    /// docs/models.md §8.2).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..))]
    pub kmeans_repeats: u64,
    /// Feature scaling of the linear SVMs (the 80/20 split on H, and the baselines of a
    /// classifier on X and NMF's H): standardized (each feature to z-scores by the training
    /// samples' mean and deviation, as StandardScaler + LinearSVC) or raw (the RPNMF paper's
    /// protocol, for its Table 2).
    #[arg(long, default_value = "standardized", value_parser = parse_svm)]
    pub svm: SvmScaling,
    /// Threads the fit's products may use (default: every core). The result is the same bits
    /// for any count.
    #[arg(long)]
    pub threads: Option<usize>,
    /// A session file saved by the app: its data (path, loader options, preprocessing), its
    /// constraints (triplets and painted labels) and its model settings (model, k, seed,
    /// hyperparameters, iteration cap, tolerance) replace --data, --model, --k, --seed,
    /// --param, --max-iter and --tol.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["data", "triplets", "reveal", "known_labels"])]
    pub session: Option<PathBuf>,
    /// With --session: open the constraints even when the data file changed since the
    /// session was saved (same number of samples, other content).
    #[arg(long, requires = "session")]
    pub allow_changed_data: bool,
}

/// The arguments a session stands for, and its constraints for the loaded data.
fn session_args(args: &RunArgs, path: &Path) -> Result<(RunArgs, SessionFile), CliError> {
    let bad = |e: anyhow::Error| CliError::BadInput(e);
    let s = SessionFile::read(path).map_err(|e| bad(e.into()))?;
    let mut out = args.clone();
    out.session = None;
    out.input = DataArgs {
        data: match s.dataset.resolved_path(path) {
            Some(p) => p.display().to_string(),
            None => s.dataset.path.clone(),
        },
        preprocess: s.dataset.preprocess,
        labels: s.dataset.labels_file.clone(),
        label_col: s.dataset.label_column.clone(),
        resize: s.dataset.resize,
    };
    out.model = ModelKind::from_name(&s.model.model).ok_or_else(|| {
        bad(anyhow!(
            "{}: model.model: unknown model `{}` (available: {})",
            path.display(),
            s.model.model,
            ModelKind::names()
        ))
    })?;
    out.k = Some(s.model.k);
    out.seed = s.model.seed;
    out.params = s
        .model
        .params
        .iter()
        .map(|(name, v)| format!("{name}={v}"))
        .collect();
    out.stop.max_iter = u64::try_from(s.model.max_iter.max(1)).unwrap_or(u64::MAX);
    out.stop.tol = s.model.tol;
    Ok((out, s))
}

/// The session's triplets and known labels for `data`; a changed data file is refused unless
/// `allow` (another number of samples always is).
fn session_side(
    s: &SessionFile,
    path: &Path,
    data: &Dataset,
    allow: bool,
) -> Result<(Vec<Triplet>, Vec<Option<usize>>), CliError> {
    let (store, check) = s
        .constraints_for(path, &data.fingerprint)
        .map_err(|e| CliError::BadInput(e.into()))?;
    if let DataCheck::Changed(why) = check
        && !allow
    {
        return Err(CliError::BadInput(anyhow!(
            "{}: the data changed since the session was saved ({}): {why}; \
             --allow-changed-data opens its constraints anyway",
            path.display(),
            s.dataset.path
        )));
    }
    let known = if store.labels().n_labelled() == 0 {
        Vec::new()
    } else {
        store.labels().as_slice().to_vec()
    };
    Ok((store.triplets().to_vec(), known))
}

fn parse_preprocess(s: &str) -> Result<Preprocess, String> {
    Preprocess::parse(s)
}

/// `--svm standardized|raw`.
pub fn parse_svm(s: &str) -> Result<SvmScaling, String> {
    SvmScaling::parse(s)
}

fn parse_resize(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("`{s}` is not WxH (e.g. 32x32)"))?;
    let w: u32 = w
        .trim()
        .parse()
        .map_err(|_| format!("`{s}`: width is not a number"))?;
    let h: u32 = h
        .trim()
        .parse()
        .map_err(|_| format!("`{s}`: height is not a number"))?;
    if w == 0 || h == 0 || w > 4096 || h > 4096 {
        return Err(format!("`{s}`: sizes must be between 1 and 4096"));
    }
    Ok((w, h))
}

/// Parse `NAME=VALUE` pairs for `kind`, each value by its table entry (numbers, on/off
/// flags, named choices).
pub fn parse_params(
    kind: ModelKind,
    items: &[String],
) -> Result<BTreeMap<String, ParamValue>, String> {
    let mut out = BTreeMap::new();
    for it in items {
        let (name, v) = it
            .split_once('=')
            .ok_or_else(|| format!("--param `{it}` is not NAME=VALUE"))?;
        let name = name.trim();
        let hp = kind.param(name).ok_or_else(|| {
            format!(
                "--param {name}: {} has no parameter `{name}` (known: {})",
                kind.label(),
                kind.param_names()
            )
        })?;
        let value = hp
            .parse(kind.label(), v)
            .map_err(|e| format!("--param {it}: {e}"))?;
        out.insert(name.to_owned(), value);
    }
    Ok(out)
}

/// Load `--data` with its options (bundled samples by `sample:NAME`); `auto` resolves as for
/// a factorisation (one dataset for several models).
pub fn load_data(args: &DataArgs) -> Result<Dataset, CliError> {
    load_data_for(args, data::AutoFor::Factorisation)
}

/// [`load_data`] for one kind of model (`auto` preprocessing depends on it, docs/models.md §1).
pub fn load_data_for(args: &DataArgs, auto_for: data::AutoFor) -> Result<Dataset, CliError> {
    if args.data.trim().is_empty() {
        return Err(CliError::BadInput(anyhow!(
            "--data is required: a .csv file, an image folder, a .npy or .mat file, or sample:NAME"
        )));
    }
    let label_column = match args.label_col.as_deref() {
        None => LabelColumn::Auto,
        Some(s) if s.eq_ignore_ascii_case("none") => LabelColumn::None,
        Some(s) => match s.parse::<usize>() {
            Ok(i) => LabelColumn::Index(i),
            Err(_) => LabelColumn::Name(s.to_owned()),
        },
    };
    let opts = LoadOptions {
        preprocess: args.preprocess,
        label_column,
        labels_file: args.labels.clone(),
        resize: args.resize,
        auto_for,
    };
    if let Some(name) = args.data.strip_prefix("sample:") {
        let sample = data::samples::Sample::from_name(name).ok_or_else(|| {
            let known: Vec<_> = data::samples::Sample::ALL
                .iter()
                .map(|s| s.name())
                .collect();
            CliError::BadInput(anyhow!(
                "unknown bundled sample `{name}` (known: {})",
                known.join(", ")
            ))
        })?;
        return data::samples::load_sample(sample, &opts).map_err(|e| CliError::BadInput(e.into()));
    }
    data::load(Path::new(&args.data), &opts).map_err(|e| CliError::BadInput(e.into()))
}

/// Build the spec from the arguments and the data (k defaults to the number of classes).
pub fn model_spec(args: &RunArgs, data: &Dataset) -> Result<ModelSpec, CliError> {
    let kind = args.model;
    let k = match args.k {
        Some(k) => k,
        None if data.n_classes() > 0 => data.n_classes(),
        None => {
            return Err(CliError::BadInput(anyhow!(
                "{}: the data has no labels, so --k is required",
                data.source
            )));
        }
    };
    crate::engine::models::check_rank(k, data.m(), data.n())
        .map_err(|e| CliError::BadInput(e.into()))?;
    let params = parse_params(kind, &args.params).map_err(|e| CliError::BadInput(anyhow!(e)))?;
    let init = match &args.init {
        Some(dir) => Some(Arc::new(
            WarmStart::load(dir).map_err(|e| CliError::BadInput(e.into()))?,
        )),
        None => None,
    };
    let spec = ModelSpec {
        kind,
        k,
        seed: args.seed,
        params,
        init,
    };
    spec.validate(data.m(), data.n())
        .map_err(|e| CliError::BadInput(e.into()))?;
    Ok(spec)
}

/// `run`: load, run the trial with progress on stderr, print/write the results.
pub fn run(args: &RunArgs) -> Result<(), CliError> {
    let from_session = match &args.session {
        Some(path) => Some((session_args(args, path)?, path.as_path())),
        None => None,
    };
    let args = from_session.as_ref().map_or(args, |((a, _), _)| a);
    let fit = args.stop.fit_options()?;
    let threads = args.threads.unwrap_or_else(linalg::available_threads);
    if threads == 0 {
        return Err(CliError::BadInput(anyhow!("--threads must be ≥ 1")));
    }
    let data = Arc::new(load_data_for(&args.input, args.model.auto_for())?);
    for w in &data.warnings {
        crate::say!("warning: {w}");
    }
    if let Some(why) = &data.preprocess_reason {
        crate::say!("preprocessing: {why}");
    }
    let spec = model_spec(args, &data)?;
    let session = from_session.as_ref().map(|((_, s), path)| (s, *path));
    let (side, origin) = side_policy(args, session, &data)?;
    let mut trial = Trial::new(Arc::clone(&data), spec, fit);
    trial.side = side;
    trial.threads = threads;
    trial.id = JobId(1);
    trial.protocol = TrialProtocol {
        kmeans_restarts: usize::try_from(args.kmeans_repeats).unwrap_or(usize::MAX),
        svm: args.svm,
        ..TrialProtocol::default()
    };
    let outcome = run_trial(&trial, std::io::stderr().is_terminal())?;
    print_outcome(&trial, &outcome);
    let report = run_report(&trial, &outcome, &origin);
    if let Some(dir) = &args.out {
        write_run(dir, &data, &outcome, &report).map_err(CliError::Failed)?;
        crate::say!("wrote results to {}", dir.display());
    }
    if args.json {
        let text = serde_json::to_string(&report).map_err(|e| CliError::Failed(e.into()))?;
        super::output::print_stdout(&format!("{text}\n"))?;
    }
    Ok(())
}

/// Where a run's triplets came from, for `run.json`.
enum TripletOrigin {
    None,
    Session(String),
    File(String),
    Generated {
        anchor_fraction: f64,
        per_anchor: usize,
    },
}

/// The run's side-information policy: the session's constraints, or `--triplets` and the known
/// labels (`--reveal`, `--known-labels`); the model is handed all of it.
fn side_policy(
    args: &RunArgs,
    session: Option<(&SessionFile, &Path)>,
    data: &Dataset,
) -> Result<(Side, TripletOrigin), CliError> {
    let (triplets, labels, origin) = match session {
        Some((s, path)) => {
            let (t, known) = session_side(s, path, data, args.allow_changed_data)?;
            let origin = TripletOrigin::Session(path.display().to_string());
            (
                TripletPolicy::Given(Arc::new(t)),
                LabelPolicy::Given(Arc::new(known)),
                origin,
            )
        }
        None => {
            let (policy, origin) =
                triplet_policy(args.triplets.as_deref(), &args.triplet_opts, data)?;
            (policy, args.labels.policy(data)?, origin)
        }
    };
    let side = Side::Policy {
        triplets,
        labels,
        hand: Hand::Everything,
    };
    Ok((side, origin))
}

/// The fit's summary line and the notes of the fit and of its evaluation, on stderr.
fn print_outcome(trial: &Trial, outcome: &Outcome) {
    let fit = outcome.fit();
    let rec = fit.record;
    crate::say!(
        "{} on {}: {} iterations in {:.3} s ({}), objective {:.6e}",
        trial.spec.kind.label(),
        trial.data.source,
        rec.iterations(),
        rec.seconds,
        match fit.stop {
            StopReason::Converged => "converged",
            StopReason::MaxIter => "iteration cap",
            StopReason::Cancelled => "cancelled",
        },
        fit.final_objective(),
    );
    for note in fit.notes {
        crate::say!("note: {note}");
    }
    let scores = &outcome.scores;
    for note in scores.baseline_note.iter().chain(&scores.evaluation.notes) {
        crate::say!("note: evaluation: {note}");
    }
}

/// `run.json` and `run --json`: the spec, the data, the fit, the side information and the
/// metrics.
fn run_report(trial: &Trial, outcome: &Outcome, origin: &TripletOrigin) -> Value {
    let (spec, data) = (&trial.spec, &trial.data);
    let fit = outcome.fit();
    let rec = fit.record;
    let mut metrics = outcome.scores.evaluation.metrics_json();
    if let Some(moved) = fit.self_trained() {
        metrics.insert(
            "self_training_rounds".into(),
            json!(fit.self_training_rounds()),
        );
        metrics.insert("self_trained".into(), json!(moved));
    }
    let source = match origin {
        TripletOrigin::None => Value::Null,
        TripletOrigin::Session(path) => json!({"session": path}),
        TripletOrigin::File(file) => json!({"file": file}),
        TripletOrigin::Generated {
            anchor_fraction,
            per_anchor,
        } => {
            let g: GeneratedInfo = outcome.side.generated.unwrap_or_default();
            json!({
                "generated": true, "anchors": g.anchors, "label_based": g.label_based,
                "neighbour_based": g.neighbour_based, "shortfall": g.shortfall,
                "anchor_fraction": anchor_fraction, "per_anchor": per_anchor, "seed": spec.seed,
            })
        }
    };
    let side = &outcome.side.handed;
    json!({
        "model": spec.kind.name(),
        "params": spec.resolved_params(),
        "seed": spec.seed,
        "init": spec.init.as_ref().map(|i| i.source.clone()),
        "dataset": {
            "path": data.source,
            "n": data.n(),
            "m": data.m(),
            "classes": data.n_classes(),
            "preprocess": data.preprocess.name().to_owned(),
            "preprocess_reason": data.preprocess_reason,
        },
        "k": spec.k,
        "max_iter": trial.fit.max_iter,
        "tol": trial.fit.tol,
        "iterations": rec.iterations(),
        "converged": fit.stop == StopReason::Converged,
        "stop": fit.stop,
        "seconds": rec.seconds,
        "initial_objective": rec.initial_objective,
        "objective": rec.objective,
        "terms": rec.terms,
        "notes": fit.notes,
        "triplets": {"count": side.triplets.len(), "source": source},
        "known_labels": side.n_known_labels(),
        "metrics": Value::Object(metrics),
    })
}

/// The files of `--out` for this outcome.
fn write_run(dir: &Path, data: &Dataset, outcome: &Outcome, report: &Value) -> anyhow::Result<()> {
    let fit = outcome.fit();
    let side = &outcome.side.handed;
    let clusters = &outcome.scores.evaluation.clusters;
    let factors = Factors {
        h: fit.h,
        w: fit.w,
        exports: fit.exports,
    };
    let predicted = fit
        .predictions
        .map(|p| predictions_csv(data, &side.labels, p));
    // Truth, given labels and clusters per sample, as the app exports them (`report`
    // draws the confusion matrix from it).
    let labels = SampleLabels {
        data,
        painted: &side.labels,
        clusters: Some(clusters),
    };
    let files = RunFiles {
        predictions: predicted.as_deref(),
        labels: &labels.csv(),
    };
    write_outputs(dir, report, &factors, clusters, fit.record, &files)
}

/// Per-sample files of `--out`, already formatted.
struct RunFiles<'a> {
    /// A classifier's predictions.csv.
    predictions: Option<&'a str>,
    /// labels.csv: truth, given labels and clusters.
    labels: &'a str,
}

/// The files of `--out`: the run's (clusters, labels, factors and exports, a classifier's
/// predictions, [`crate::engine::files::export`]) and the command line's own (convergence.csv,
/// run.json last).
fn write_outputs(
    dir: &Path,
    report: &Value,
    factors: &Factors<'_>,
    clusters: &[usize],
    rec: &experiment::FitRecord,
    files: &RunFiles<'_>,
) -> anyhow::Result<()> {
    let mut out = RunWriter::new(dir)?;
    out.file("clusters.csv", clusters_csv(clusters).as_bytes())?;
    out.file("labels.csv", files.labels.as_bytes())?;
    out.factors(factors)?;
    if let Some(p) = files.predictions {
        out.file("predictions.csv", p.as_bytes())?;
    }
    let names: Vec<&String> = rec.terms.keys().collect();
    // Multi-stage models say which round and stage each iteration belongs to.
    let phased = rec.phases.len() == rec.objective.len() && !rec.phases.is_empty();
    let mut conv = String::from("iteration,objective");
    if phased {
        conv.push_str(",round,stage");
    }
    for n in &names {
        conv.push(',');
        conv.push_str(n);
    }
    conv.push('\n');
    for (t, obj) in rec.objective.iter().enumerate() {
        conv.push_str(&format!("{},{obj:?}", t + 1));
        if phased {
            conv.push_str(&format!(",{},{}", rec.phases[t].round, rec.phases[t].stage));
        }
        for n in &names {
            let v = rec
                .terms
                .get(*n)
                .and_then(|v| v.get(t))
                .copied()
                .unwrap_or(f64::NAN);
            conv.push_str(&format!(",{v:?}"));
        }
        conv.push('\n');
    }
    out.file("convergence.csv", conv.as_bytes())?;
    let text = serde_json::to_string_pretty(report)?;
    out.file("run.json", text.as_bytes())?;
    Ok(())
}

/// Where `--triplets` says a run's triplets come from: none, a file (.json constraints file
/// checked against the dataset's fingerprint, or .csv `i,j,q`), or generated by the protocol
/// from the ground-truth labels.
fn triplet_policy(
    spec: Option<&str>,
    opts: &TripletArgs,
    data: &Dataset,
) -> Result<(TripletPolicy, TripletOrigin), CliError> {
    use crate::engine::constraints::io::{import_triplets_csv, load_json};
    let bad = |e: anyhow::Error| CliError::BadInput(e);
    match spec {
        None => Ok((TripletPolicy::None, TripletOrigin::None)),
        Some("generate") => {
            if data.labels.is_none() {
                return Err(bad(anyhow!(
                    "{}: --triplets generate needs labelled data (the protocol draws from the labels)",
                    data.source
                )));
            }
            let policy = TripletPolicy::Generate {
                anchor_fraction: opts.anchors,
                per_anchor: opts.per_anchor,
            };
            let origin = TripletOrigin::Generated {
                anchor_fraction: opts.anchors,
                per_anchor: opts.per_anchor,
            };
            Ok((policy, origin))
        }
        Some(file) => {
            let p = Path::new(file);
            let is_csv = p
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("csv") || e.eq_ignore_ascii_case("txt"));
            let t = if is_csv {
                import_triplets_csv(p, data).map_err(|e| bad(e.into()))?
            } else {
                load_json(p, &data.fingerprint)
                    .map_err(|e| bad(e.into()))?
                    .snapshot()
                    .triplets
                    .clone()
            };
            let origin = TripletOrigin::File(file.to_owned());
            Ok((TripletPolicy::Given(Arc::new(t)), origin))
        }
    }
}

/// The protocol's triplets for `data` drawn with `seed` (`triplets`).
pub fn generated_triplets(
    opts: &TripletArgs,
    data: &Dataset,
    seed: u64,
) -> Result<Vec<Triplet>, CliError> {
    triplet_policy(Some("generate"), opts, data)?;
    side::generate(data, opts.anchors, opts.per_anchor, seed)
        .map(|g| g.triplets)
        .map_err(|e| CliError::BadInput(e.into()))
}
