//! New samples in a fitted basis (`transform` of an estimator on samples it was not fitted
//! on): preprocessed by the fitted samples' statistics, then H by the engine's projection
//! (W fixed, the MU rule of H; `models::mu::project`).

use crate::convert::{self, value_error};
use nmf_playground::engine::data::Dataset;
use nmf_playground::engine::data::preprocess::FittedStep;
use nmf_playground::engine::models::mu::project::project;
use numpy::{IntoPyArray, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// The fitted preprocessing steps as Python values: `"l2"`, or a dict of per-feature
/// `offset` and `scale` arrays (NaN: the feature had no range and maps to 0).
pub fn steps_to_py<'py>(py: Python<'py>, steps: &[FittedStep]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for step in steps {
        match step {
            FittedStep::L2 => list.append("l2")?,
            FittedStep::Features { offset, scale } => {
                let d = PyDict::new(py);
                d.set_item("offset", offset.clone().into_pyarray(py))?;
                let scale: Vec<f64> = scale.iter().map(|s| s.unwrap_or(f64::NAN)).collect();
                d.set_item("scale", scale.into_pyarray(py))?;
                list.append(d)?;
            }
        }
    }
    Ok(list)
}

fn steps_from_py(steps: &Bound<'_, PyList>) -> PyResult<Vec<FittedStep>> {
    steps
        .iter()
        .map(|step| {
            if let Ok(name) = step.extract::<String>() {
                return match name.as_str() {
                    "l2" => Ok(FittedStep::L2),
                    other => Err(value_error(format!("unknown preprocessing step {other:?}"))),
                };
            }
            let d = step.cast::<PyDict>()?;
            let get = |key: &str| -> PyResult<Vec<f64>> {
                let v = d
                    .get_item(key)?
                    .ok_or_else(|| value_error(format!("preprocessing step without {key}")))?;
                Ok(v.extract::<PyReadonlyArray1<'_, f64>>()?
                    .as_array()
                    .to_vec())
            };
            let scale = get("scale")?
                .into_iter()
                .map(|s| (!s.is_nan()).then_some(s));
            Ok(FittedStep::Features {
                offset: get("offset")?,
                scale: scale.collect(),
            })
        })
        .collect()
}

/// Express the rows of `x` (n′×m) in the basis `w` (m×k): `x` preprocessed as the fitted
/// samples were (`preprocess`, resolved, and its fitted `steps`), negative entries after
/// that set to 0, then H (k×n′) by the MU rule with W fixed for at most `max_iter` steps.
/// Returns a dict: `H`, `n_iter`, `objective` (‖X′ − WH‖²_F at the end) and `clipped`.
#[pyfunction]
#[pyo3(signature = (w, x, preprocess, steps, max_iter, tol))]
pub fn transform<'py>(
    py: Python<'py>,
    w: PyReadonlyArray2<'py, f64>,
    x: PyReadonlyArray2<'py, f64>,
    preprocess: &str,
    steps: &Bound<'py, PyList>,
    max_iter: usize,
    tol: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let preprocess = convert::preprocess(preprocess)?;
    let steps = steps_from_py(steps)?;
    let (w, x) = (w.as_array(), x.as_array());
    if w.nrows() != x.ncols() {
        return Err(value_error(format!(
            "X has {} features per sample, but the basis has {}",
            x.ncols(),
            w.nrows()
        )));
    }
    let (xn, clipped) = Dataset::preprocess_new_samples(x, (preprocess, &steps), true, "X")
        .map_err(|e| value_error(e.to_string()))?;
    let p = py.detach(|| project(w, xn.view(), max_iter.max(1), tol));
    let out = PyDict::new(py);
    out.set_item("H", p.h.into_pyarray(py))?;
    out.set_item("n_iter", p.iterations)?;
    out.set_item("objective", p.objective)?;
    out.set_item("clipped", clipped)?;
    Ok(out)
}
