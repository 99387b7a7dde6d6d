//! App state: persisted [`Settings`] (small, explicit, serde-default) apart from the runtime
//! [`Session`] (dataset, constraints, finished runs), which is never persisted; the live run
//! is in [`super::run_controller`] and the view state in [`super::view`].

use crate::engine::constraints::Store;
use crate::engine::data::samples::Sample;
use crate::engine::data::{Dataset, Fingerprint, LoadOptions, Preprocess};
use crate::engine::eval::RunEvaluation;
use crate::engine::files::session::SessionFile;
use crate::engine::jobs::experiment::{FitOptions, StopReason};
use crate::engine::models::{ModelKind, ModelSpec, ParamValue, Phase, WarmStart};
use egui_plot::PlotPoint;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

// The scatter's groups live in their own module; re-exported for the panels' imports.

/// Where a dataset comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataSource {
    Sample(Sample),
    Path(PathBuf),
}

impl DataSource {
    pub fn describe(&self) -> String {
        match self {
            DataSource::Sample(s) => format!("sample {}", s.name()),
            DataSource::Path(p) => p.display().to_string(),
        }
    }
}

/// A session being opened: read, its data loading; its constraints wait for the data.
#[derive(Clone, Debug)]
pub struct OpeningSession {
    pub path: PathBuf,
    pub file: SessionFile,
    /// Set when the loaded data's fingerprint differs: the reason, shown in the question.
    pub changed: Option<String>,
}

/// User preferences kept between sessions (eframe storage, key `eframe::APP_KEY`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// The version of these settings' meaning ([`SETTINGS_VERSION`] when written by this
    /// build). Settings stored without it come from a build whose default preprocessing was
    /// `l2`; [`Settings::migrated`] reads them once.
    #[serde(default)]
    pub version: u32,
    /// The last dataset file or folder opened (prefills the path field).
    pub last_path: Option<PathBuf>,
    pub preprocess: Preprocess,
    /// Resize every image to this size when loading image folders.
    pub resize_images: bool,
    pub resize: (u32, u32),
    /// Model by command-line name (a string, so a removed model does not void the settings).
    pub model: String,
    pub k: usize,
    pub seed: u64,
    pub max_iter: usize,
    pub tol: f64,
    /// Hyperparameters the user edited, per model name, by parameter name. Only edited
    /// values are stored: a parameter missing here is shown and run with the default of the
    /// model's table, so a default changed in a later version reaches existing users.
    pub params: BTreeMap<String, BTreeMap<String, ParamValue>>,
    /// Logarithmic y axis on the convergence plot.
    pub log_y: bool,
    /// The convergence plot shows every curve divided by its first value, so that runs whose
    /// objectives differ by orders of magnitude (FNMF ~1e-5, NMF ~5) compare on one axis.
    pub normalise_curves: bool,
    pub dark: bool,
    /// k-means restarts of the evaluation after each run (docs/models.md §8.2 uses 50).
    pub kmeans_restarts: usize,
    /// Feature scaling of the evaluation's linear SVMs (standardised, or raw as the RPNMF
    /// paper).
    pub svm: crate::engine::eval::SvmScaling,
    /// The data and constraints panel (left) is shown.
    pub show_data_panel: bool,
    /// The model and results panel (right) is shown.
    pub show_model_panel: bool,
    /// Save session writes each run's H and W as `.npy` beside the session file.
    pub session_factors: bool,
    /// The first-run tour was finished or dismissed (it then opens only from Help).
    pub tour_seen: bool,
}

/// The version of [`Settings`] this build writes. 1: the default preprocessing became `auto`.
pub const SETTINGS_VERSION: u32 = 1;

impl Default for Settings {
    fn default() -> Self {
        let fit = FitOptions::default();
        Self {
            version: SETTINGS_VERSION,
            last_path: None,
            preprocess: Preprocess::default(),
            resize_images: false,
            resize: (32, 32),
            model: ModelKind::all()
                .next()
                .map_or_else(|| "nmf".to_owned(), |k| k.name().to_owned()),
            k: 3,
            seed: 0,
            max_iter: fit.max_iter,
            tol: fit.tol,
            show_data_panel: true,
            show_model_panel: true,
            session_factors: false,
            params: BTreeMap::new(),
            log_y: true,
            normalise_curves: false,
            dark: true,
            kmeans_restarts: 50,
            svm: crate::engine::eval::SvmScaling::default(),
            tour_seen: false,
        }
    }
}

impl Settings {
    /// Settings as read from storage, brought to [`SETTINGS_VERSION`]. Before version 1 the
    /// default preprocessing was `l2` and the choice was stored whether or not the user made
    /// it, so a stored `l2` from then is read as the new default `auto`, once; a choice stored
    /// by this version (including `l2`) is kept.
    pub fn migrated(mut self) -> Self {
        if self.version < 1 && self.preprocess == Preprocess::L2 {
            self.preprocess = Preprocess::Auto;
        }
        self.version = SETTINGS_VERSION;
        self
    }

    /// The selected model (the first one when the stored name is unknown).
    pub fn model_kind(&self) -> Option<ModelKind> {
        ModelKind::from_name(&self.model).or_else(|| ModelKind::all().next())
    }

    /// Options for the data loaders; `auto` resolves for the selected model, as `run
    /// --model` does (docs/models.md §1).
    pub fn load_options(&self) -> LoadOptions {
        LoadOptions {
            preprocess: self.preprocess,
            resize: self.resize_images.then_some(self.resize),
            auto_for: self.auto_for(),
            ..LoadOptions::default()
        }
    }

    /// The kind of model `auto` preprocessing resolves for: the selected model's.
    pub fn auto_for(&self) -> crate::engine::data::AutoFor {
        self.model_kind()
            .map_or_else(Default::default, ModelKind::auto_for)
    }

    pub fn fit_options(&self) -> FitOptions {
        FitOptions {
            max_iter: self.max_iter.max(1),
            tol: self.tol.max(0.0),
        }
    }

    /// The value the user set for hyperparameter `name` of `model`, if they edited it.
    pub fn edited_param(&self, model: &str, name: &str) -> Option<ParamValue> {
        self.params.get(model)?.get(name).copied()
    }

    /// Record an edit of hyperparameter `name` of `model`.
    pub fn set_param(&mut self, model: &str, name: &str, value: ParamValue) {
        self.params
            .entry(model.to_owned())
            .or_default()
            .insert(name.to_owned(), value);
    }

    /// Forget the edit of hyperparameter `name` of `model`: it follows the table's default.
    pub fn reset_param(&mut self, model: &str, name: &str) {
        if let Some(values) = self.params.get_mut(model) {
            values.remove(name);
            if values.is_empty() {
                self.params.remove(model);
            }
        }
    }

    /// The model spec of the current settings: the selected model's edited parameters (the
    /// others take the model's defaults).
    pub fn model_spec(&self) -> Option<ModelSpec> {
        let kind = self.model_kind()?;
        let mut spec = ModelSpec::new(kind, self.k, self.seed);
        if let Some(values) = self.params.get(kind.name()) {
            for hp in kind.hyperparameters() {
                if let Some(&v) = values.get(hp.name) {
                    spec.params.insert(hp.name.to_owned(), v);
                }
            }
        }
        Some(spec)
    }
}

/// What the worker is doing, as the UI shows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WorkerState {
    #[default]
    Idle,
    Running,
    Paused,
    Finished(StopReason),
    Failed,
    Cancelled,
}

impl WorkerState {
    pub fn label(self) -> &'static str {
        match self {
            WorkerState::Idle => "idle",
            WorkerState::Running => "running",
            WorkerState::Paused => "paused",
            WorkerState::Finished(StopReason::Converged) => "finished (converged)",
            WorkerState::Finished(StopReason::MaxIter) => "finished (iteration cap)",
            WorkerState::Finished(StopReason::Cancelled) => "finished (stopped)",
            WorkerState::Failed => "failed",
            WorkerState::Cancelled => "cancelled",
        }
    }

    /// Running or paused: a job thread exists.
    pub fn is_active(self) -> bool {
        matches!(self, WorkerState::Running | WorkerState::Paused)
    }
}

/// The last message for the status line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Status {
    pub text: String,
    pub is_error: bool,
}

impl Status {
    /// A normal message.
    pub fn info(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: false,
        }
    }

    /// An error, shown in red.
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: true,
        }
    }
}

/// Live progress of the current run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    pub iteration: usize,
    pub max_iter: usize,
    pub objective: f64,
    /// Seconds of fitting (pauses excluded).
    pub elapsed: f64,
}

impl Progress {
    /// Iterations per second so far.
    pub fn rate(&self) -> Option<f64> {
        (self.elapsed > 0.0 && self.iteration > 0).then(|| self.iteration as f64 / self.elapsed)
    }

    /// Seconds left if the run goes to the iteration cap.
    pub fn eta(&self) -> Option<f64> {
        let rate = self.rate()?;
        Some(self.max_iter.saturating_sub(self.iteration) as f64 / rate)
    }
}

/// One line of the convergence plot: raw and log10 values, appended as progress arrives.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    pub linear: Vec<PlotPoint>,
    /// The positive values only: a zero term (t-STE's `l2` at λ = 0, a graph term at λ = 0)
    /// has no logarithm, and drawing it at log10 of the smallest double stretched the axis
    /// down to 1e-308 and flattened every other curve.
    pub log10: Vec<PlotPoint>,
}

impl Series {
    pub fn push(&mut self, iteration: usize, value: f64) {
        let x = iteration as f64;
        self.linear.push(PlotPoint::new(x, value));
        if value > 0.0 && value.is_finite() {
            self.log10.push(PlotPoint::new(x, value.log10()));
        }
    }

    pub fn len(&self) -> usize {
        self.linear.len()
    }

    pub fn is_empty(&self) -> bool {
        self.linear.is_empty()
    }
}

/// Objective history of the current run: the total and each named term.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Convergence {
    pub total: Series,
    pub terms: BTreeMap<String, Series>,
    /// Where a multi-stage model (2-STGINMF) entered each stage: `(first iteration, phase)`,
    /// in order; drawn as vertical lines.
    pub phases: Vec<(usize, Phase)>,
}

impl Convergence {
    /// Note that `iteration` belongs to `phase`; a boundary is kept when the phase changes.
    pub fn mark_phase(&mut self, iteration: usize, phase: Phase) {
        if self.phases.last().is_none_or(|&(_, p)| p != phase) {
            self.phases.push((iteration, phase));
        }
    }

    /// The exact boundaries from a finished fit's per-iteration phases (the live ones come
    /// from throttled progress events and may sit a few iterations late).
    pub fn set_phases(&mut self, per_iteration: &[Phase]) {
        self.phases.clear();
        for (t, &p) in per_iteration.iter().enumerate() {
            self.mark_phase(t + 1, p);
        }
    }
}

/// What the scatter's colours show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorBy {
    /// The dataset's ground-truth classes.
    #[default]
    Truth,
    /// The clusters of the lowest-inertia k-means restart of the evaluation.
    Cluster,
    /// The model's value per sample (e.g. RNMF's residual weight), binned into a colour ramp;
    /// offered when the run's model exposes one.
    ModelValue,
    /// The model's own labels at the latest snapshot (CAN, PSMF, RMNMF: they cluster as they
    /// go), live; offered when the run's model has them.
    ModelLabels,
    /// A classifier's predicted class per sample, its confidence as opacity, given and
    /// self-trained samples marked (2-STGINMF), live; offered when the run has predictions.
    Predicted,
}

impl ColorBy {
    pub const ALL: [ColorBy; 5] = [
        ColorBy::Truth,
        ColorBy::Cluster,
        ColorBy::ModelValue,
        ColorBy::ModelLabels,
        ColorBy::Predicted,
    ];

    pub fn label(self) -> &'static str {
        match self {
            ColorBy::Truth => "truth",
            ColorBy::Cluster => "k-means cluster",
            ColorBy::ModelValue => "model's value",
            ColorBy::ModelLabels => "model's labels (live)",
            ColorBy::Predicted => "predicted class (live)",
        }
    }
}

/// The evaluation of one finished run (the engine's [`RunEvaluation`], computed on a background
/// thread), tagged with the history id of its run. Derefs to the scores.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluation {
    /// History id of the run it belongs to.
    pub run: u64,
    pub scores: RunEvaluation,
}

impl std::ops::Deref for Evaluation {
    type Target = RunEvaluation;
    fn deref(&self) -> &RunEvaluation {
        &self.scores
    }
}

/// One finished run of the session, as the history table shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct HistoryRow {
    /// Run number in this session (1, 2, ...).
    pub id: u64,
    pub model: String,
    /// Hyperparameters as `name=value` separated by spaces (k first).
    pub params: String,
    pub seed: u64,
    pub iterations: usize,
    pub seconds: f64,
    /// Filled when the evaluation arrives: mean ACC and mean NMI (sqrt normalisation) over
    /// the k-means restarts, and the share of triplets kept.
    pub acc: Option<f64>,
    pub nmi: Option<f64>,
    pub kept: Option<f64>,
    /// The number of triplets the run was given.
    pub triplets: usize,
    /// Objective per iteration (for overlaying two runs).
    pub curve: Series,
    /// The convergence plot as it stood when the run ended (total, terms, stage boundaries),
    /// put back on the plot and into exported figures when the run is shown again.
    pub convergence: Arc<Convergence>,
    /// The run's rank and final factors, for "Continue from this run" (docs/models.md §10.6).
    pub k: usize,
    pub factors: Arc<WarmStart>,
    /// The dataset the run was fitted on (a continuation needs the same data).
    pub data: Option<Fingerprint>,
    /// The dataset's short name (file or folder name, or the sample's), for the table.
    pub dataset: String,
    /// The preprocessing X had for this run, resolved (`auto` depends on the model); `None`
    /// for a run read from a session that did not record it.
    pub preprocess: Option<crate::engine::data::Preprocess>,
    /// How the fit ended: "converged", "iteration cap" or "stopped at iteration t".
    pub stop: String,
    /// The run's last scatter frame, to bring it back from the table ("show").
    pub snapshot: Option<Arc<crate::engine::jobs::worker::Snapshot>>,
    /// Its evaluation, once it arrives (every metric, for the table and the CSV).
    pub evaluation: Option<Arc<Evaluation>>,
    /// A classifier's predictions (2-STGINMF) and the arrays the model exports beyond W and
    /// H (FNMF's Θ, PSMF's G), for "Export run…"; empty for runs read from a session.
    pub predictions: Option<Arc<crate::engine::models::Predictions>>,
    pub exports: Arc<Vec<crate::engine::models::Export>>,
}

/// Domain state of one app session (never persisted): the dataset, its constraints, the
/// finished runs and their scores, and the status line. The live run is in
/// [`super::RunController`]; what the user looks at and types is in [`super::ViewState`].
#[derive(Default)]
pub struct Session {
    /// The loaded dataset, shared with running jobs.
    pub dataset: Option<Arc<Dataset>>,
    /// PCA-2D of the dataset's X (computed on a background task when it loads), what the
    /// scatter shows before the first run so that triplets and labels can be clicked at once.
    pub x_view: Option<Arc<crate::engine::jobs::worker::Snapshot>>,
    /// The last load error (shown in red in the data panel).
    pub load_error: Option<String>,
    /// What is being loaded right now (shown with a spinner).
    pub loading: Option<String>,
    /// Where the current dataset came from, to reload it with other options.
    pub source: Option<DataSource>,
    /// Where the current dataset's labels come from when the user chose (a labels file, a
    /// CSV column); reset when another dataset is opened.
    pub labels: LabelChoice,
    /// The label choice of the load in flight, made [`Self::labels`] when it succeeds.
    pub labels_pending: Option<LabelChoice>,
    pub status: Status,
    /// Constraints (triplets, painted labels) of the loaded dataset, with undo/redo.
    pub store: Option<Store>,
    /// Which triplets H keeps, computed once per snapshot or constraint edit (not per frame).
    pub kept: Option<KeptCache>,
    /// Bumped on every constraint edit (invalidates [`Self::kept`]).
    pub constraints_rev: u64,
    /// Where constraints were last saved or loaded (Ctrl+S saves there).
    pub constraints_path: Option<PathBuf>,
    /// A triplet generation is running on a background thread.
    pub generating: bool,
    /// An action waiting for the user's answer about unsaved constraints.
    pub pending: Option<Pending>,
    /// History id of the run being evaluated on a background thread, if any.
    pub evaluating: Option<u64>,
    /// How far that evaluation has got (its thread counts its steps here).
    pub eval_progress: std::sync::Arc<crate::engine::eval::EvalProgress>,
    /// Evaluation of the last finished run.
    pub evaluation: Option<Arc<Evaluation>>,
    /// Every finished run of this session, oldest first.
    pub history: Vec<HistoryRow>,
    /// The history run whose scatter, scores and curves are on screen (the last finished one,
    /// or the one picked with "show"); `None` while a run is live or before the first.
    pub shown_run: Option<u64>,
    /// Where the session was last saved or opened (Ctrl+Shift+S saves there).
    pub session_path: Option<PathBuf>,
    /// A session being opened: its constraints wait for its data (and, when the data
    /// changed, for the user's answer).
    pub opening: Option<OpeningSession>,
    /// Unsaved edits a killed session left for this dataset, offered back.
    pub recovery_offer: Option<crate::engine::files::recovery::Found>,
}

/// Where a dataset's labels come from, beyond what its file holds (the loader options
/// `labels_file` and `label_column`, as `run --labels` and `--label-col` give them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelChoice {
    /// A `.npy` vector or a text file with one label per line.
    pub file: Option<PathBuf>,
    /// The CSV label column (`None`: automatic, a column named `label` or `class`).
    pub column: Option<crate::engine::data::LabelColumn>,
}

impl LabelChoice {
    /// The choice `opts` make.
    pub fn of(opts: &LoadOptions) -> Self {
        Self {
            file: opts.labels_file.clone(),
            column: (opts.label_column != crate::engine::data::LabelColumn::Auto)
                .then(|| opts.label_column.clone()),
        }
    }

    /// `opts` with this choice.
    pub fn apply(&self, mut opts: LoadOptions) -> LoadOptions {
        opts.labels_file.clone_from(&self.file);
        opts.label_column = self
            .column
            .clone()
            .unwrap_or(crate::engine::data::LabelColumn::Auto);
        opts
    }
}

/// What a click on the scatter does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tool {
    /// Hover shows the sample; drag pans, scroll zooms.
    #[default]
    Inspect,
    /// Three clicks: anchor i, closer j, farther q.
    Triplet,
    /// Click or lasso to paint the selected class.
    Label,
    /// Click or lasso to select samples (to isolate them).
    Select,
}

impl Tool {
    pub const ALL: [Tool; 4] = [Tool::Inspect, Tool::Triplet, Tool::Label, Tool::Select];

    pub fn label(self) -> &'static str {
        match self {
            Tool::Inspect => "Inspect",
            Tool::Triplet => "Triplet",
            Tool::Label => "Label",
            Tool::Select => "Select",
        }
    }
}

/// Which triplets the current snapshot's H keeps (‖hi-hj‖² < ‖hi-hq‖²), for the store's
/// triplets at revision `rev`.
#[derive(Clone, Debug, PartialEq)]
pub struct KeptCache {
    /// Identity of the snapshot (its `Arc` address).
    pub snapshot: usize,
    pub iteration: usize,
    pub rev: u64,
    pub satisfied: Vec<bool>,
    /// Share kept, in [0, 1]; `None` without triplets.
    pub share: Option<f64>,
}

/// An action held back until the user answers "unsaved constraints: save, discard, cancel?".
#[derive(Clone, Debug, PartialEq)]
pub enum Pending {
    Load(DataSource),
    /// Open this session file.
    Session(PathBuf),
    Quit,
}

impl Session {
    /// Constraint edits need a store (one exists once a dataset is loaded).
    pub fn has_unsaved_constraints(&self) -> bool {
        self.store.as_ref().is_some_and(Store::is_dirty)
    }

    pub fn set_status(&mut self, text: impl Into<String>) {
        self.status = Status::info(text);
    }

    pub fn set_error(&mut self, text: impl Into<String>) {
        self.status = Status::error(text);
    }

    /// The two runs among `selected` whose convergence curves are overlaid, if two are
    /// selected.
    pub fn overlay(&self, selected: &[u64]) -> Option<[&HistoryRow; 2]> {
        let [a, b] = selected else {
            return None;
        };
        let find = |id: &u64| self.history.iter().find(|r| r.id == *id);
        Some([find(a)?, find(b)?])
    }
}

#[cfg(test)]
mod tests {
    use super::{Preprocess, Series, Settings};

    /// Settings stored before the version field keep every choice except the old default
    /// `l2`, which becomes `auto` once; `l2` chosen in this version survives a round trip.
    #[test]
    fn old_settings_move_from_l2_to_auto_once_and_new_choices_stay() {
        let mut old = serde_json::to_value(Settings {
            preprocess: Preprocess::L2,
            k: 7,
            ..Settings::default()
        })
        .unwrap();
        old.as_object_mut().unwrap().remove("version");
        let read: Settings = serde_json::from_value(old.clone()).unwrap();
        assert_eq!(read.version, 0);
        let read = read.migrated();
        assert_eq!(
            (read.preprocess, read.k, read.version),
            (Preprocess::Auto, 7, 1)
        );

        old["preprocess"] = serde_json::to_value(Preprocess::MinMax).unwrap();
        let kept: Settings = serde_json::from_value(old).unwrap();
        assert_eq!(kept.migrated().preprocess, Preprocess::MinMax);

        let chosen = Settings {
            preprocess: Preprocess::L2,
            ..Settings::default()
        };
        let back: Settings =
            serde_json::from_str(&serde_json::to_string(&chosen).unwrap()).unwrap();
        assert_eq!(back.migrated().preprocess, Preprocess::L2);
    }

    /// Zero and non-finite values are drawn on the linear axis only: on the log axis they
    /// have no place (and a zero term must not stretch the axis to 1e-308).
    #[test]
    fn the_log_series_keeps_the_positive_values_only() {
        let mut s = Series::default();
        for (t, v) in [(1, 100.0), (2, 0.0), (3, 10.0), (4, f64::NAN)] {
            s.push(t, v);
        }
        assert_eq!(s.len(), 4);
        let log: Vec<(f64, f64)> = s.log10.iter().map(|p| (p.x, p.y)).collect();
        assert_eq!(log, vec![(1.0, 2.0), (3.0, 1.0)]);
    }
}
