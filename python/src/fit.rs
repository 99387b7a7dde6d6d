//! One fit, as `run` does it: build the model from the registry, iterate it with the engine's
//! fit loop (cap, tolerance, NaN/Inf stop), and hand back H, W, the objective history and the
//! model's own outputs. The fit runs on a thread of its own without the GIL; the calling
//! thread polls for Ctrl+C every 50 ms and stops the fit at the next iteration.

use crate::convert::{self, value_error};
use nmf_playground::engine::jobs::experiment::{self, FitOptions, FitOutcome, StopReason};
use nmf_playground::engine::linalg;
use nmf_playground::engine::models::{self, Interrupt, Model};
use numpy::{IntoPyArray, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Duration;

/// Fit `model` on X (n×m, a row per sample) with rank `k`, and return a dict: `H` (k×n), `W`
/// (m×k or None), `objective` (one value per iteration, after it), `terms` (name → values),
/// `initial_objective`, `n_iter`, `stop` (`converged`/`max_iter`), `notes`, `preprocess` and
/// its `preprocess_reason`, the model's own `labels` and `predictions`/`confidence` where it
/// has them, and `exports` (name → array: FNMF's Θ, PSMF's G, …).
#[pyfunction]
#[pyo3(signature = (model, x, k, seed, max_iter, tol, params=None, preprocess="auto", triplets=None, labels=None, threads=0))]
#[allow(clippy::too_many_arguments)]
pub fn fit<'py>(
    py: Python<'py>,
    model: &str,
    x: PyReadonlyArray2<'py, f64>,
    k: usize,
    seed: u64,
    max_iter: usize,
    tol: f64,
    params: Option<&Bound<'py, PyDict>>,
    preprocess: &str,
    triplets: Option<PyReadonlyArray2<'py, i64>>,
    labels: Option<PyReadonlyArray1<'py, i64>>,
    threads: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let kind = convert::model_kind(model)?;
    let data = convert::dataset(&x, convert::preprocess(preprocess)?)?;
    let side = convert::side_info(data.n(), triplets, labels)?;
    let spec = convert::spec(kind, k, seed, params)?;
    if tol.is_nan() || tol < 0.0 {
        return Err(value_error(format!("tol must be ≥ 0, not {tol}")));
    }
    let opts = FitOptions {
        max_iter: max_iter.max(1),
        tol,
    };
    let (preprocess_name, reason) = (data.preprocess.name(), data.preprocess_reason.clone());
    let data = Arc::new(data);
    let mut built = models::build(&spec, data, &side).map_err(|e| value_error(e.to_string()))?;
    let threads = if threads == 0 {
        linalg::available_threads()
    } else {
        threads
    };
    let interrupt = Interrupt::new();
    built.set_interrupt(interrupt.clone());
    let stop = interrupt.clone();
    let (built, outcome) = run_interruptible(py, &interrupt, move || {
        linalg::set_threads(threads);
        let mut built = built;
        let outcome = experiment::fit(built.as_mut(), &opts, |_, _, _| {
            if stop.is_raised() {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        (built, outcome)
    })?;
    let outcome = outcome.map_err(|e| {
        PyRuntimeError::new_err(format!(
            "{} stopped after {} iterations: {}",
            kind.label(),
            e.record.iterations(),
            e.error
        ))
    })?;
    let out = results(py, built.as_ref(), &outcome)?;
    out.set_item("preprocess", preprocess_name)?;
    out.set_item("preprocess_reason", reason)?;
    Ok(out)
}

/// Run `work` on a thread of its own with the GIL released, polling for signals meanwhile: on
/// Ctrl+C the fit is asked to stop (it ends at the next iteration), joined, and the
/// `KeyboardInterrupt` is raised. A panic in `work` becomes a `RuntimeError`.
fn run_interruptible<T: Send>(
    py: Python<'_>,
    interrupt: &Interrupt,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    std::thread::scope(|scope| {
        let handle = scope.spawn(work);
        loop {
            py.detach(|| {
                let deadline = std::time::Instant::now() + Duration::from_millis(50);
                while !handle.is_finished() && std::time::Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(2));
                }
            });
            if handle.is_finished() {
                break;
            }
            if let Err(signal) = py.check_signals() {
                interrupt.raise();
                let _ = py.detach(|| handle.join());
                return Err(signal);
            }
        }
        handle
            .join()
            .map_err(|panic| PyRuntimeError::new_err(panic_text(&panic)))
    })
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned());
    format!("internal error in nmf_playground (please report it): {what}")
}

/// The dict `fit` returns, from the fitted model and the fit's record.
fn results<'py>(
    py: Python<'py>,
    model: &dyn Model,
    outcome: &FitOutcome,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("H", model.h().to_owned().into_pyarray(py))?;
    out.set_item("W", model.w().map(|w| w.to_owned().into_pyarray(py)))?;
    let record = &outcome.record;
    out.set_item("initial_objective", record.initial_objective)?;
    out.set_item("objective", record.objective.clone())?;
    let terms = PyDict::new(py);
    for (name, values) in &record.terms {
        terms.set_item(name, values.clone())?;
    }
    out.set_item("terms", terms)?;
    out.set_item("n_iter", record.iterations())?;
    out.set_item(
        "stop",
        match outcome.stop {
            StopReason::Converged => "converged",
            StopReason::MaxIter => "max_iter",
            StopReason::Cancelled => "cancelled",
        },
    )?;
    out.set_item("notes", outcome.notes.clone())?;
    out.set_item("labels", model.assignments())?;
    if let Some(p) = model.predictions() {
        out.set_item("predictions", p.labels)?;
        out.set_item("confidence", p.confidence)?;
    }
    let exports = PyDict::new(py);
    for e in model.exports() {
        exports.set_item(e.name, e.array.into_pyarray(py))?;
    }
    out.set_item("exports", exports)?;
    Ok(out)
}
