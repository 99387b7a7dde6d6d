//! Run a model to completion: the iteration loop shared by the worker and the CLI.
//!
//! The loop owns everything models must not know about: the iteration cap, the relative
//! tolerance, the NaN/Inf check (MODELS.md §10.4) and cancellation (through the observer).

use crate::engine::models::{Model, ModelError, Objective};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::time::Instant;

/// When to stop iterating.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitOptions {
    /// Iteration cap (≥ 1).
    pub max_iter: usize,
    /// Stop when `|f_{t−1} − f_t| / f_{t−1} < tol` (MODELS.md §3.1); 0 disables it.
    pub tol: f64,
}

impl Default for FitOptions {
    fn default() -> Self {
        Self {
            max_iter: 500,
            tol: 1e-5,
        }
    }
}

/// Why a fit ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The relative change fell below the tolerance.
    Converged,
    /// The iteration cap was reached.
    MaxIter,
    /// The observer asked to stop (user cancel).
    Cancelled,
}

/// The history of a fit: objective and terms per iteration (index t = after iteration t+1).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FitRecord {
    /// Objective of the initial iterate (before any update).
    pub initial_objective: f64,
    pub objective: Vec<f64>,
    pub terms: BTreeMap<String, Vec<f64>>,
    /// Fit time alone, in seconds (no loading, no evaluation).
    pub seconds: f64,
}

impl FitRecord {
    /// Iterations run.
    pub fn iterations(&self) -> usize {
        self.objective.len()
    }

    fn push(&mut self, obj: &Objective) {
        self.objective.push(obj.total);
        for t in &obj.terms {
            self.terms.entry(t.name.clone()).or_default().push(t.value);
        }
    }
}

/// What a fit produced when it did not fail.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitOutcome {
    pub record: FitRecord,
    pub stop: StopReason,
    /// The model's [`Model::notes`] after the fit.
    pub notes: Vec<String>,
}

/// A fit that failed, with the history up to the failure (so a GUI can still plot it).
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct FitError {
    pub error: ModelError,
    pub record: Box<FitRecord>,
}

/// Iterate `model` until convergence, the iteration cap, an error, or until `observe` breaks.
///
/// `observe(t, objective, model)` runs after every iteration t (1-based) with the objective
/// after it; returning `ControlFlow::Break(())` cancels. A non-finite objective or H stops with
/// [`ModelError::Diverged`]. `model.finish()` runs at the end of a successful or cancelled fit.
pub fn fit(
    model: &mut dyn Model,
    opts: &FitOptions,
    mut observe: impl FnMut(usize, &Objective, &dyn Model) -> ControlFlow<()>,
) -> Result<FitOutcome, FitError> {
    let start = Instant::now();
    let mut record = FitRecord {
        initial_objective: model.objective().total,
        ..FitRecord::default()
    };
    let mut prev = record.initial_objective;
    let mut stop = StopReason::MaxIter;
    for t in 1..=opts.max_iter.max(1) {
        let obj = match model.step() {
            Ok(o) => o,
            Err(error) => {
                record.seconds = start.elapsed().as_secs_f64();
                return Err(FitError {
                    error,
                    record: Box::new(record),
                });
            }
        };
        if !obj.is_finite() || model.h().iter().any(|v| !v.is_finite()) {
            record.seconds = start.elapsed().as_secs_f64();
            let what = if obj.is_finite() {
                "H has a non-finite entry".to_owned()
            } else {
                format!("objective is {}", obj.total)
            };
            return Err(FitError {
                error: ModelError::Diverged { iteration: t, what },
                record: Box::new(record),
            });
        }
        record.push(&obj);
        let rel = (prev - obj.total).abs() / prev.abs().max(f64::MIN_POSITIVE);
        prev = obj.total;
        if observe(t, &obj, &*model).is_break() {
            stop = StopReason::Cancelled;
            break;
        }
        if opts.tol > 0.0 && rel < opts.tol {
            stop = StopReason::Converged;
            break;
        }
    }
    model.finish();
    record.seconds = start.elapsed().as_secs_f64();
    Ok(FitOutcome {
        record,
        stop,
        notes: model.notes(),
    })
}
