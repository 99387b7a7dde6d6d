//! Run a model to completion: the iteration loop shared by the worker and the CLI.
//!
//! The loop owns everything models must not know about: the iteration cap, the relative
//! tolerance, the NaN/Inf check (docs/models.md §10.4) and cancellation (through the observer).

use crate::engine::constraints::SideInfo;
use crate::engine::data::Dataset;
use crate::engine::models::{self, Model, ModelError, ModelSpec, Objective, Phase};
use ndarray::{Array2, ArrayView2};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::time::Instant;

/// When to stop iterating.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitOptions {
    /// Iteration cap (≥ 1); for a model that stops itself ([`Model::stops_itself`]), the cap
    /// of each of its phases ([`Model::phase`]).
    pub max_iter: usize,
    /// Stop when `|f_{t−1} − f_t| / f_{t−1} < tol` (docs/models.md §3.1, §4.5 e) and the last change
    /// is also below `tol` times the progress so far, `|f_0 − f_t|` (see [`converged`]); 0
    /// disables it.
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
    /// The model's [`Phase`] per iteration, for multi-stage models (empty for the others).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<Phase>,
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

/// The stopping rule lives with the models, whose own inner solvers use it too
/// ([`crate::engine::models::mu::project`]).
pub use crate::engine::models::stop::converged;

/// Whether every entry of `a` is finite, in one vectorisable pass: `v · 0` is ±0 for a finite
/// v and NaN for ±∞ or NaN, so eight lane sums of `v · 0` are all zero exactly when every
/// entry is finite (no overflow is possible). This check runs after every iteration; an
/// early-exit `any` over H cannot be vectorised and cost about a tenth of a small NMF
/// iteration (docs/performance.md, "The fit loop's NaN check").
pub fn all_finite(a: ArrayView2<'_, f64>) -> bool {
    let Some(s) = a.as_slice_memory_order() else {
        return a.iter().all(|v| v.is_finite());
    };
    let mut lanes = [0.0f64; 8];
    let chunks = s.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for (l, v) in lanes.iter_mut().zip(c) {
            *l += v * 0.0;
        }
    }
    for (l, v) in lanes.iter_mut().zip(rest) {
        *l += v * 0.0;
    }
    lanes.iter().all(|&l| l == 0.0)
}

/// Environment variable for the failure-path tests: `NMF_PLAYGROUND_FAULT_NAN_AT=t` makes
/// iteration t of every fit report a NaN objective, so that the divergence path (the check
/// below, the `Failed` event, `run`'s exit 1 with "diverged at iteration t") can be driven
/// through the binary for every model, also those no input makes diverge. Read once per fit;
/// unset (the normal case) it changes nothing.
pub const FAULT_ENV: &str = "NMF_PLAYGROUND_FAULT_NAN_AT";

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
    // A model that stops itself bounds its own length (2-STGINMF: stages × rounds, each
    // stage capped): the cap then applies to each phase, so `--max-iter 500` does not cut a
    // self-training fit of several 200-step stages short.
    let per_phase = model.stops_itself();
    // A model whose objective shows a non-finite H needs no scan of H ([`Descriptor`]).
    let sees_h = model.kind().descriptor().objective_sees_h;
    let (mut phase, mut in_phase) = (model.phase(), 0usize);
    let fault: Option<usize> = std::env::var(FAULT_ENV)
        .ok()
        .and_then(|v| v.trim().parse().ok());
    let mut t = 0usize;
    loop {
        t += 1;
        if !per_phase && t > opts.max_iter.max(1) {
            break;
        }
        let obj = match model.step() {
            Ok(o) if fault == Some(t) => Objective {
                total: f64::NAN,
                ..o
            },
            Ok(o) => o,
            // Stopped within the iteration: the iterate is the previous one's.
            Err(ModelError::Interrupted) => {
                stop = StopReason::Cancelled;
                break;
            }
            Err(error) => {
                record.seconds = start.elapsed().as_secs_f64();
                return Err(FitError {
                    error,
                    record: Box::new(record),
                });
            }
        };
        if !obj.is_finite() || (!sees_h && !all_finite(model.h())) {
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
        if let Some(now) = model.phase() {
            record.phases.push(now);
            if phase == Some(now) {
                in_phase += 1;
            } else {
                (phase, in_phase) = (Some(now), 1);
            }
        } else {
            in_phase += 1;
        }
        let capped = per_phase && in_phase >= opts.max_iter.max(1) && !model.has_converged();
        let done = model.has_converged()
            || (!model.stops_itself()
                && converged(record.initial_objective, prev, obj.total, opts.tol));
        prev = obj.total;
        if observe(t, &obj, &*model).is_break() {
            stop = StopReason::Cancelled;
            break;
        }
        if done {
            stop = StopReason::Converged;
            break;
        }
        if capped {
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

/// Iterations of the NMF fit behind a classifier's SVM-on-H baseline ([`nmf_baseline`]).
pub const BASELINE_NMF_ITER: usize = 200;

/// H (k×n) of a plain NMF fit on `data` with rank `k` and `seed` (default parameters,
/// [`BASELINE_NMF_ITER`] iterations, tolerance 1e-5): the representation a classifier's
/// linear-SVM baseline is trained on (docs/models.md §7.8), so "SVM on NMF's H" beside
/// 2-STGINMF is the same everywhere it is shown.
pub fn nmf_baseline(
    data: &std::sync::Arc<Dataset>,
    k: usize,
    seed: u64,
) -> Result<Array2<f64>, FitError> {
    let spec = ModelSpec::new(models::nmf::KIND, k, seed);
    let mut model = models::build(&spec, std::sync::Arc::clone(data), &SideInfo::default())
        .map_err(|error| FitError {
            error,
            record: Box::default(),
        })?;
    let opts = FitOptions {
        max_iter: BASELINE_NMF_ITER,
        tol: 1e-5,
    };
    fit(model.as_mut(), &opts, |_, _, _| ControlFlow::Continue(()))?;
    Ok(model.h().to_owned())
}

/// Fit `m` with no tolerance and a large cap, the front end cancelling after iteration `at`
/// (the models' cancel tests).
#[cfg(test)]
pub(crate) fn fit_cancelled_at(m: &mut dyn Model, at: usize) -> FitOutcome {
    let opts = FitOptions {
        max_iter: 1000,
        tol: 0.0,
    };
    let stop = |t: usize| {
        if t == at {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    fit(m, &opts, |t, _, _| stop(t)).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_change_alone_decides_once_the_objective_has_dropped() {
        // NMF-like: from 100 down to about 4; a change of 1e-6 at f = 4 is below 1e-5 relative.
        assert!(converged(100.0, 4.000_001, 4.0, 1e-5));
        assert!(!converged(100.0, 4.001, 4.0, 1e-5));
        assert!(!converged(100.0, 4.000_001, 4.0, 0.0), "tol 0 never stops");
    }

    #[test]
    fn a_large_offset_does_not_stop_a_fit_that_is_still_moving() {
        // The RPNMF δ = 100 case: F from 12,239.6 to 12,019.79 then 12,019.72 (relative change
        // 6e-6 < 1e-5), but 0.07 is 3e-4 of the 220 gained so far.
        assert!(!converged(12_239.6, 12_019.79, 12_019.72, 1e-5));
        // Once the progress dwarfs the change, it stops.
        assert!(converged(12_239.6, 400.001, 400.0, 1e-5));
    }

    #[test]
    fn all_finite_finds_any_nan_or_infinity_and_nothing_else() {
        let mut a = ndarray::Array2::<f64>::from_elem((3, 7), f64::MAX);
        assert!(
            all_finite(a.view()),
            "huge finite entries do not overflow the check"
        );
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            for idx in [(0, 0), (1, 3), (2, 6)] {
                let mut b = a.clone();
                b[idx] = bad;
                assert!(!all_finite(b.view()), "{bad} at {idx:?}");
                assert!(!all_finite(b.t()), "{bad} at {idx:?}, transposed view");
            }
        }
        a[[1, 1]] = -0.0;
        assert!(all_finite(a.slice(ndarray::s![.., 1..4])));
    }
}
