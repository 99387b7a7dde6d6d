//! Models: the [`Model`] trait every factorization implements, the catalogue of models
//! ([`ModelKind`]) with their hyperparameters, and [`build`].
//!
//! Models know nothing of threads, time or channels: they are driven one [`Model::step`] at a
//! time by [`crate::engine::experiment`] (the loop with max iterations, tolerance, NaN checks and
//! cancellation) and by [`crate::engine::worker`] (the same loop on a thread).

mod catalogue;
pub mod nmf;
pub mod rpnmf;

pub use catalogue::{HyperParam, ModelKind};

use crate::engine::data::Dataset;
use ndarray::ArrayView2;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Denominator guard of the multiplicative rules (MODELS.md §1, §10.1).
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
    #[error("diverged at iteration {iteration}: {what} (try a smaller step or other parameters)")]
    Diverged { iteration: usize, what: String },
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
    /// Post-processing after the last iteration (e.g. unit-norm W columns, MODELS.md §10.3).
    fn finish(&mut self) {}
    /// Things the user should know about the finished fit that are not errors (e.g. RPNMF's
    /// safeguard rejecting H steps); shown by the CLI and the GUI. Empty by default.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Triplet `(i, j, q)`: sample i is more related to j than to q (MODELS.md §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Triplet {
    pub i: usize,
    pub j: usize,
    pub q: usize,
}

/// Side information handed to a model: a snapshot of the constraint store.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SideInfo {
    pub triplets: Vec<Triplet>,
    /// Partial labels (class index) per sample; empty when none were given.
    pub labels: Vec<Option<usize>>,
}

/// What to fit: the model, its rank, seed and hyperparameters (by name).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelSpec {
    pub kind: ModelKind,
    pub k: usize,
    pub seed: u64,
    /// Hyperparameters by name; missing ones take the model's defaults.
    #[serde(default)]
    pub params: BTreeMap<String, f64>,
}

impl ModelSpec {
    /// A spec with default hyperparameters.
    pub fn new(kind: ModelKind, k: usize, seed: u64) -> Self {
        Self {
            kind,
            k,
            seed,
            params: BTreeMap::new(),
        }
    }

    /// Every hyperparameter of the model with the value this spec uses (given or default).
    pub fn resolved_params(&self) -> BTreeMap<String, f64> {
        self.kind
            .hyperparameters()
            .iter()
            .map(|hp| {
                let v = self.params.get(hp.name).copied().unwrap_or(hp.default);
                (hp.name.to_owned(), v)
            })
            .collect()
    }

    /// Check the rank and that every given parameter is known and within its range.
    pub fn validate(&self, m: usize, n: usize) -> Result<(), ModelError> {
        if self.k == 0 || self.k > m.min(n) {
            return Err(ModelError::InvalidRank { k: self.k, m, n });
        }
        let hps = self.kind.hyperparameters();
        for (name, &value) in &self.params {
            let Some(hp) = hps.iter().find(|h| h.name == name) else {
                return Err(ModelError::UnknownParam {
                    model: self.kind.label(),
                    name: name.clone(),
                    known: if hps.is_empty() {
                        "none".into()
                    } else {
                        hps.iter().map(|h| h.name).collect::<Vec<_>>().join(", ")
                    },
                });
            };
            if !value.is_finite() || value < hp.min || value > hp.max {
                return Err(ModelError::InvalidParam {
                    model: self.kind.label(),
                    name: name.clone(),
                    why: format!("= {value} is outside [{}, {}]", hp.min, hp.max),
                });
            }
        }
        Ok(())
    }
}

/// Build a model ready to step from a spec, a dataset and the side information.
pub fn build(
    spec: &ModelSpec,
    data: Arc<Dataset>,
    side: &SideInfo,
) -> Result<Box<dyn Model>, ModelError> {
    spec.validate(data.m(), data.n())?;
    match spec.kind {
        ModelKind::Nmf => Ok(Box::new(nmf::Nmf::new(data, spec)?)),
        ModelKind::Rpnmf => Ok(Box::new(rpnmf::Rpnmf::new(data, spec, side)?)),
    }
}
