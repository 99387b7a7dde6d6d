//! One fit through the engine's pipeline ([`Trial`]), as `run` does it: the model built from
//! the registry, iterated by the engine's fit loop (cap, tolerance, NaN/Inf stop), and handed
//! back as H, W, the objective history and the model's own outputs. No truth is given and the
//! estimators score with their own calls when asked, so the trial ends after the fit. The trial
//! runs on a thread of its own without the GIL; the calling thread polls for Ctrl+C every
//! 50 ms and the fit stops at the next iteration.

use crate::convert::{self, value_error};
use nmf_playground::engine::jobs::experiment::{FitOptions, StopReason};
use nmf_playground::engine::jobs::trial::{FitView, Protocol, Side, Trial, TrialError};
use nmf_playground::engine::linalg;
use nmf_playground::engine::models::Interrupt;
use numpy::{IntoPyArray, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
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
    // `auto` resolves for the model, as `run --model` resolves it.
    let data = convert::dataset(&x, convert::preprocess(preprocess)?, kind.auto_for())?;
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
    let steps = data.preprocess_steps.clone();
    let mut trial = Trial::new(Arc::new(data), spec, opts);
    trial.side = Side::Shared(Arc::new(side));
    trial.protocol = Protocol::FIT_ONLY;
    trial.threads = if threads == 0 {
        linalg::available_threads()
    } else {
        threads
    };
    let interrupt = Interrupt::new();
    let stop = interrupt.clone();
    let outcome = run_interruptible(py, &interrupt, move || {
        trial.run_with(&mut |_| !stop.is_raised())
    })?
    .map_err(|e| match e {
        TrialError::Build(_) | TrialError::Side(_) => value_error(e.to_string()),
        e => PyRuntimeError::new_err(e.to_string()),
    })?;
    let out = results(py, &FitView::of(&outcome.result))?;
    out.set_item("preprocess", preprocess_name)?;
    out.set_item("preprocess_reason", reason)?;
    out.set_item("preprocess_steps", crate::project::steps_to_py(py, &steps)?)?;
    Ok(out)
}

/// Run `work` on a thread of its own with the GIL released, waking every 50 ms to poll for
/// signals: on Ctrl+C the fit is asked to stop (it ends at the next iteration), joined, and
/// the `KeyboardInterrupt` is raised. The result comes back through a channel, so a fit that
/// ends between two polls returns at once. A panic in `work` becomes a `RuntimeError`.
fn run_interruptible<T: Send>(
    py: Python<'_>,
    interrupt: &Interrupt,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    std::thread::scope(|scope| {
        let (done, mut result) = mpsc::sync_channel(1);
        let handle = scope.spawn(move || {
            // The receiver outlives the scope's threads, so the send cannot fail.
            let _ = done.send(work());
        });
        loop {
            // The receiver is moved into the GIL-free closure and back (it is Send, not Sync).
            let (back, received) = py.detach(move || {
                let received = result.recv_timeout(Duration::from_millis(50));
                (result, received)
            });
            result = back;
            match received {
                Ok(value) => {
                    let _ = handle.join();
                    return Ok(value);
                }
                Err(RecvTimeoutError::Disconnected) => {
                    // The work panicked before it sent its value.
                    return match handle.join() {
                        Err(panic) => Err(PyRuntimeError::new_err(panic_text(&panic))),
                        Ok(()) => Err(PyRuntimeError::new_err(
                            "internal error in nmf_playground: the fit ended without a result",
                        )),
                    };
                }
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(signal) = py.check_signals() {
                        interrupt.raise();
                        let _ = py.detach(|| handle.join());
                        return Err(signal);
                    }
                }
            }
        }
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

/// The dict `fit` returns, from the fit as the pipeline hands it.
fn results<'py>(py: Python<'py>, fit: &FitView<'_>) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("H", fit.h.clone().into_pyarray(py))?;
    out.set_item("W", fit.w.map(|w| w.clone().into_pyarray(py)))?;
    let record = fit.record;
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
        match fit.stop {
            StopReason::Converged => "converged",
            StopReason::MaxIter => "max_iter",
            StopReason::Cancelled => "cancelled",
        },
    )?;
    out.set_item("notes", fit.notes.to_vec())?;
    out.set_item("labels", fit.assignments.map(<[usize]>::to_vec))?;
    if let Some(p) = fit.predictions {
        out.set_item("predictions", p.labels.clone())?;
        out.set_item("confidence", p.confidence.clone())?;
    }
    let exports = PyDict::new(py);
    for e in fit.exports {
        exports.set_item(e.name, e.array.clone().into_pyarray(py))?;
    }
    out.set_item("exports", exports)?;
    Ok(out)
}
