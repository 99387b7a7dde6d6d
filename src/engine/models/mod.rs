//! Models: the [`Model`] trait every factorization implements, the [`registry`] of model
//! descriptors with their hyperparameter tables ([`params`]), the multiplicative-update kit
//! ([`mu`]) the MU models share, warm starts ([`warm`]), and [`build`].
//!
//! Models know nothing of threads, time or channels: they are driven one [`Model::step`] at a
//! time by [`crate::engine::jobs::experiment`] (the loop with max iterations, tolerance, NaN checks and
//! cancellation) and by [`crate::engine::jobs::worker`] (the same loop on a thread).

pub mod alm;
pub mod bench;
pub mod footprint;
pub mod mu;
pub mod params;
pub mod registry;
pub mod stop;
#[cfg(test)]
pub(crate) mod testkit;
pub mod warm;

/// Declares each model folder and lists its descriptor in [`MODELS`], in menu order. Adding a
/// model is its folder (with a `DESCRIPTOR`) and one name here; the CLI, the GUI and `sweep`
/// read the list.
macro_rules! models {
    ($($model:ident),* $(,)?) => {
        $(pub mod $model;)*
        /// Every model, in menu order.
        pub static MODELS: &[&Descriptor] = &[$(&$model::DESCRIPTOR),*];
    };
}

models! {
    nmf,
    gnmf,
    rnmf,
    nmfcc,
    tste,
    rmnmf,
    fnmf,
    psmf,
    can,
    rpnmf,
    stginmf,
}

pub use params::{Checked, ChoiceOption, HyperParam, ParamKind, ParamValue, Preset};
pub use registry::{Build, Descriptor, ModelKind, Output, SideNeed};
pub use warm::WarmStart;

use crate::engine::constraints::SideInfo;
use crate::engine::data::Dataset;
use crate::engine::linalg::Csr;
use ndarray::ArrayView2;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Denominator guard of the multiplicative rules (docs/models.md §1, §10.1).
pub const EPS_DIV: f64 = 1e-12;

/// One named part of an objective (reconstruction, ranking, graph, ...).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Term {
    pub name: String,
    pub value: f64,
}

/// An objective value with its named terms; `total` is what the stopping rule watches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Objective {
    pub total: f64,
    pub terms: Vec<Term>,
}

impl Objective {
    /// An objective with a single term named `name`.
    pub fn single(name: &str, value: f64) -> Self {
        Self {
            total: value,
            terms: vec![Term {
                name: name.to_owned(),
                value,
            }],
        }
    }

    /// Whether the total and every term are finite.
    pub fn is_finite(&self) -> bool {
        self.total.is_finite() && self.terms.iter().all(|t| t.value.is_finite())
    }
}

/// Errors from building or stepping a model.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{model}: parameter `{name}` {why}")]
    InvalidParam {
        model: &'static str,
        name: String,
        why: String,
    },
    #[error("{model}: unknown parameter `{name}` (known: {known})")]
    UnknownParam {
        model: &'static str,
        name: String,
        known: String,
    },
    #[error("k = {k} is invalid for {n} samples and {m} features: need 1 ≤ k ≤ min(m, n)")]
    InvalidRank { k: usize, m: usize, n: usize },
    #[error("unusable data: {why}")]
    BadData { why: String },
    #[error("{model} needs {what}")]
    MissingSideInfo { model: &'static str, what: String },
    /// The user stopped the fit during an iteration ([`Interrupt`]); the iterate is that of the
    /// last whole iteration.
    #[error("stopped by the user during an iteration")]
    Interrupted,
    #[error("diverged at iteration {iteration}: {what} (try a smaller step or other parameters)")]
    Diverged { iteration: usize, what: String },
    #[error("{file}: {what} is {found}, expected {expected} ({why})")]
    InitShape {
        file: String,
        what: &'static str,
        found: String,
        expected: String,
        why: String,
    },
}

/// A value per sample that a model exposes for the scatter to colour by (e.g. RNMF's residual
/// weights, the samples it discounts as outliers).
#[derive(Clone, Debug, PartialEq)]
pub struct SampleValues {
    /// What the values are, for the legend ("residual weight").
    pub name: &'static str,
    /// One value per sample (length n).
    pub values: Vec<f64>,
}

/// An array a model exports beyond W and H (FNMF's feature weights Θ, PSMF's G), which
/// `run --out` writes as `<name>.npy`.
#[derive(Clone, Debug, PartialEq)]
pub struct Export {
    /// The file stem (`Theta` gives `Theta.npy`); letters, digits and `_` only.
    pub name: &'static str,
    /// The array, in the orientation the model's section of docs/models.md gives.
    pub array: ndarray::Array2<f64>,
}

/// A request to stop a running fit, raised by the front end from another thread (the worker's
/// `JobHandle` raises it with every Cancel) and polled by models whose single iteration can
/// take long (PSMF's p-NN rebuild at n = 10,000 is about a second), so that a cancel takes
/// effect within the iteration. A model that sees it returns [`ModelError::Interrupted`]
/// before changing its iterate, and the fit ends as cancelled with the last whole iteration.
#[derive(Clone, Debug, Default)]
pub struct Interrupt(Arc<std::sync::atomic::AtomicBool>);

impl Interrupt {
    /// A flag that is not raised.
    pub fn new() -> Self {
        Self::default()
    }
    /// Ask the fit to stop.
    pub fn raise(&self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    /// Whether a stop was asked for.
    pub fn is_raised(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Where a classifier's label for a sample came from ([`Predictions::origin`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelOrigin {
    /// Given by the user (painted, revealed, or read from `--known-labels`): side information.
    Given,
    /// Moved into the training set by self-training in this round (1-based).
    SelfTrained { round: usize },
    /// Predicted for a sample that was never in the training set.
    Predicted,
}

/// A classifier's output per sample (models whose descriptor's output is
/// [`Output::ClassPredictions`], e.g. 2-STGINMF): what the app colours by while it runs and
/// what the evaluation scores on the samples that were not given.
#[derive(Clone, Debug, PartialEq)]
pub struct Predictions {
    /// Predicted class per sample (the given class for [`LabelOrigin::Given`]); length n.
    pub labels: Vec<usize>,
    /// Confidence of that class in [0, 1] (1 for given labels); length n.
    pub confidence: Vec<f64>,
    /// Where each label came from; length n.
    pub origin: Vec<LabelOrigin>,
}

/// Where a multi-stage model is (2-STGINMF: self-training round and stage), so the convergence
/// plot can mark the boundaries and `convergence.csv` can say which iteration belongs where.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Phase {
    /// Self-training round, 0 for the first pass.
    pub round: usize,
    /// Stage within the round, 1-based.
    pub stage: usize,
}

/// Everything a model can show besides H, W and its objective, each part optional: what the
/// scatter colours by, the model's own labels, its sample graph, per-component feature
/// weights, a learned subspace and a classifier's predictions. A model fills the parts it has
/// from [`Model::outputs`]; a snapshot and a run's result carry one. A new kind of output is
/// one field here (and the model that fills it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outputs {
    /// A value per sample the scatter can colour by ([`SampleValues`]).
    pub values: Option<SampleValues>,
    /// The model's own labelling of the samples, for models whose descriptor's output is
    /// [`Output::ClusterLabels`] or [`Output::ClassPredictions`]; `None` for the others, whose
    /// H is clustered by k-means.
    pub assignments: Option<Vec<usize>>,
    /// The sample graph the model uses (n×n, symmetric), for drawing its edges on the scatter
    /// (the same `Arc` every time: no copy per frame).
    pub graph: Option<Arc<Csr>>,
    /// Per-component weights of the features, r×m, for the app to draw as images or bars while
    /// the model runs: `(name, array)`, row j the weights of component j (FNMF's Θ).
    pub feature_weights: Option<(&'static str, ndarray::Array2<f64>)>,
    /// A learned embedding of the samples other than H (s×n; PSMF's subspace Πᵀx), which the
    /// app can show on the scatter instead of H: `(name, array)`. In a snapshot or a run's
    /// result it is projected to 2-D like H (n×2, aligned frame to frame).
    pub subspace: Option<(&'static str, ndarray::Array2<f64>)>,
    /// A classifier's labels, confidences and their origin per sample ([`Predictions`]).
    pub predictions: Option<Arc<Predictions>>,
}

/// A factorization driven step by step. `Send` so the worker can own it on its thread.
pub trait Model: Send {
    /// Which model this is.
    fn kind(&self) -> ModelKind;
    /// One iteration of the updates; returns the objective **after** the iteration.
    fn step(&mut self) -> Result<Objective, ModelError>;
    /// The representation H (k×n; column i is the code of sample i).
    fn h(&self) -> ArrayView2<'_, f64>;
    /// The basis W (m×k), when the model has one.
    fn w(&self) -> Option<ArrayView2<'_, f64>>;
    /// The objective of the current iterate.
    fn objective(&self) -> Objective;
    /// Post-processing after the last iteration (e.g. unit-norm W columns, docs/models.md §10.3).
    fn finish(&mut self) {}
    /// Things the user should know about the finished fit that are not errors (e.g. RPNMF's
    /// safeguard rejecting H steps); shown by the CLI and the GUI. Empty by default.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// Whether the model's own stopping rule has fired (e.g. t-STE's five failed steps in a
    /// row, an ALM's primal residuals): the fit loop then stops as converged whatever its
    /// tolerance. `false` by default (the loop's relative-change rule alone decides).
    fn has_converged(&self) -> bool {
        false
    }
    /// What the model can show besides H and W ([`Outputs`]), at the current iterate; nothing
    /// by default.
    fn outputs(&self) -> Outputs {
        Outputs::default()
    }
    /// Arrays beyond W and H for `run --out` ([`Export`]), after the fit; none by default.
    fn exports(&self) -> Vec<Export> {
        Vec::new()
    }
    /// Hand the model the flag a front end raises to stop it ([`Interrupt`]); models whose
    /// iterations are long keep it and poll it. Ignored by default.
    fn set_interrupt(&mut self, _interrupt: Interrupt) {}
    /// The stage the **last** iteration belonged to ([`Phase`]), for multi-stage models;
    /// `None` by default.
    fn phase(&self) -> Option<Phase> {
        None
    }
    /// Whether the model's own stopping rules alone decide when it is done (2-STGINMF's stages
    /// each stop on their own rule, and the objective jumps between them), so the fit loop
    /// ignores its relative-change tolerance and stops on [`Model::has_converged`] or the
    /// iteration cap. `false` by default.
    fn stops_itself(&self) -> bool {
        false
    }
}

/// What to fit: the model, its rank, seed and hyperparameters (by name).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelSpec {
    pub kind: ModelKind,
    pub k: usize,
    pub seed: u64,
    /// Hyperparameters by name; missing ones take the model's defaults.
    #[serde(default)]
    pub params: BTreeMap<String, ParamValue>,
    /// Factors to start from instead of the seeded draw (`run --init DIR`, the app's "Continue
    /// from this run"); checked against the rank and the data by [`ModelSpec::validate`].
    #[serde(skip)]
    pub init: Option<Arc<WarmStart>>,
}

impl ModelSpec {
    /// A spec with default hyperparameters.
    pub fn new(kind: ModelKind, k: usize, seed: u64) -> Self {
        Self {
            kind,
            k,
            seed,
            params: BTreeMap::new(),
            init: None,
        }
    }

    /// Start from `init` instead of the seeded draw (builder style).
    pub fn with_init(mut self, init: Arc<WarmStart>) -> Self {
        self.init = Some(init);
        self
    }

    /// Set one hyperparameter (builder style, for tests and presets).
    pub fn with(mut self, name: &str, value: ParamValue) -> Self {
        self.params.insert(name.to_owned(), value);
        self
    }

    /// Every hyperparameter checked against the model's table, defaults filled in.
    pub fn checked(&self) -> Result<Checked, ModelError> {
        Checked::new(self.kind.label(), self.kind.hyperparameters(), &self.params)
    }

    /// Every hyperparameter of the model with the value this spec uses (given or default).
    pub fn resolved_params(&self) -> BTreeMap<String, ParamValue> {
        self.kind
            .hyperparameters()
            .iter()
            .map(|hp| {
                let v = self
                    .params
                    .get(hp.name)
                    .copied()
                    .unwrap_or(hp.default_value());
                (hp.name.to_owned(), v)
            })
            .collect()
    }

    /// `alpha=0.1 delta=10`: the given (non-default) parameters in name order, the one way a
    /// run's parameters are written in the GUI's history, `sweep`'s files and reports.
    pub fn params_string(&self, sep: &str) -> String {
        params_string(&self.params, sep)
    }

    /// Check the rank and every given parameter (name known, value within its rule); the
    /// checked table is what the model builds its typed parameters from.
    pub fn validate(&self, m: usize, n: usize) -> Result<Checked, ModelError> {
        check_rank(self.k, m, n)?;
        if let Some(init) = &self.init {
            init.check(m, n, self.k, self.kind.descriptor().has_w)?;
        }
        self.checked()
    }
}

/// The one rule for the rank, shared by the CLI and the app (which shows the message next to
/// its k field instead of clamping): `1 ≤ k ≤ min(m, n)` for `m` features and `n` samples.
pub fn check_rank(k: usize, m: usize, n: usize) -> Result<(), ModelError> {
    if k == 0 || k > m.min(n) {
        return Err(ModelError::InvalidRank { k, m, n });
    }
    Ok(())
}

/// `name=value` pairs in name order joined by `sep` (values by [`ParamValue`]'s `Display`).
pub fn params_string(params: &BTreeMap<String, ParamValue>, sep: &str) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(sep)
}

/// Build a model ready to step from a spec, a dataset and the side information: the rank,
/// the parameters and the side information the model needs are checked here, once.
pub fn build(
    spec: &ModelSpec,
    data: Arc<Dataset>,
    side: &SideInfo,
) -> Result<Box<dyn Model>, ModelError> {
    let params = spec.validate(data.m(), data.n())?;
    spec.kind.check_side(side)?;
    check_values(spec, &data)?;
    let (m, n) = data.x.dim();
    // Problems with the data name the dataset they are about (its file or sample).
    let source = data.source.clone();
    let named = |e: ModelError| match e {
        ModelError::BadData { why } if !why.starts_with(&source) => ModelError::BadData {
            why: format!("{source}: {why}"),
        },
        e => e,
    };
    // The model's large intermediates, before any of them is allocated.
    let sizes = footprint::Sizes {
        m,
        n,
        k: spec.k,
        labelled: side.n_known_labels(),
        params: &params,
    };
    footprint::check(
        spec.kind,
        &sizes,
        crate::engine::machine::limits::available_bytes,
    )
    .map_err(&named)?;
    let build = registry::Build {
        spec,
        params: &params,
        data,
        side,
    };
    (spec.kind.descriptor().build)(build).map_err(named)
}

/// Refuse an X that no model can fit, naming the first bad entry: a non-finite value, an entry
/// so large that ‖X‖² overflows f64, or (for the models with a nonnegative basis) a negative
/// value. Clean data, the usual case, costs one vectorisable pass; the passes that find and
/// name the entry run only when that pass fails.
fn check_values(spec: &ModelSpec, data: &Dataset) -> Result<(), ModelError> {
    let (m, n) = data.x.dim();
    let limit = (f64::MAX / (m.max(1) * n.max(1)) as f64).sqrt();
    let has_w = spec.kind.descriptor().has_w;
    // NaN fails `<=`, so this one test covers all three refusals.
    let clean = |v: f64| v.abs() <= limit && (!has_w || v >= 0.0);
    let all_clean = match data.x.as_slice() {
        Some(values) => values.iter().all(|&v| clean(v)),
        None => data.x.iter().all(|&v| clean(v)),
    };
    if all_clean {
        return Ok(());
    }
    // The loaders refuse non-finite values; data built in code may not have been through
    // them, and a NaN would reach the graph builders (kNN) before any model looks at X.
    if let Some(((r, c), v)) = data.x.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(ModelError::BadData {
            why: format!(
                "{}: X has a non-finite value {v} at feature {}, sample {}: nothing can be \
                 fitted",
                data.source,
                r + 1,
                c + 1
            ),
        });
    }
    // Entries so large that ‖X‖² overflows f64 make every objective infinite (and distances
    // NaN): refused here, for every model, with what to do.
    if let Some(((r, c), v)) = data.x.indexed_iter().find(|(_, v)| v.abs() > limit) {
        return Err(ModelError::BadData {
            why: format!(
                "{}: X has an entry of {v:e} at feature {}, sample {}: at this scale ‖X‖² \
                 overflows f64 (entries must stay below {limit:.1e} for {m}×{n} data); scale \
                 the data first (--preprocess max, or l2)",
                data.source,
                r + 1,
                c + 1
            ),
        });
    }
    // The models with a nonnegative basis W (the NMF family) need X ≥ 0: their
    // multiplicative rules lose nonnegativity otherwise. Negative data reach them only
    // through `--preprocess standardize` (z-scores, meant for 2-STGINMF) or data built in
    // code; say which.
    if has_w && let Some(((r, c), v)) = data.x.indexed_iter().find(|(_, v)| **v < 0.0) {
        let why = if data.preprocess == crate::engine::data::Preprocess::Standardize {
            "the standardize preprocessing makes z-scores, which are negative; it is meant \
             for 2-STGINMF: use l2, minmax or minmax,l2 for this model"
        } else {
            "shift the data first (--preprocess shift or minmax)"
        };
        return Err(ModelError::BadData {
            why: format!(
                "{}: X has a negative value {v} at feature {}, sample {}: {} needs \
                 nonnegative data ({why})",
                data.source,
                r + 1,
                c + 1,
                spec.kind.label()
            ),
        });
    }
    Ok(())
}
