//! From Python values to the engine's types (and the registry out), with the engine's checks
//! and messages: a bad value raises `ValueError` with the text the CLI would print.

use nmf_playground::engine::constraints::{SideInfo, Triplet, TripletSet};
use nmf_playground::engine::data::{AutoFor, Dataset, Preprocess};
use nmf_playground::engine::models::{
    HyperParam, ModelKind, ModelSpec, Output, ParamKind, ParamValue, SideNeed,
};
use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};

/// A `ValueError` with `message`.
pub fn value_error(message: impl Into<String>) -> PyErr {
    PyValueError::new_err(message.into())
}

/// Every registered model: name, label, docs section, description, what it needs and gives,
/// and its hyperparameters (name, kind, default, range or options, help). The Python package
/// makes one estimator class per entry.
#[pyfunction]
pub fn registry(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for kind in ModelKind::all() {
        let d = PyDict::new(py);
        d.set_item("name", kind.name())?;
        d.set_item("label", kind.label())?;
        d.set_item("section", kind.section())?;
        d.set_item("description", kind.description())?;
        d.set_item("has_w", kind.descriptor().has_w)?;
        d.set_item(
            "projects_new_samples",
            kind.descriptor().projects_new_samples,
        )?;
        d.set_item("output", output_name(kind.output()))?;
        d.set_item("needs", need_name(kind.needs()))?;
        let params = PyList::empty(py);
        for hp in kind.hyperparameters() {
            params.append(param_dict(py, hp)?)?;
        }
        d.set_item("params", params)?;
        list.append(d)?;
    }
    Ok(list)
}

fn output_name(o: Output) -> &'static str {
    match o {
        Output::Representation => "representation",
        Output::ClusterLabels => "cluster_labels",
        Output::ClassPredictions => "class_predictions",
    }
}

fn need_name(n: SideNeed) -> &'static str {
    match n {
        SideNeed::None => "none",
        SideNeed::Triplets => "triplets",
        SideNeed::Links => "links",
        SideNeed::PartialLabels => "labels",
        SideNeed::KnnGraph => "knn_graph",
    }
}

fn param_dict<'py>(py: Python<'py>, hp: &HyperParam) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", hp.name)?;
    d.set_item("help", hp.help)?;
    d.set_item("domain", hp.domain())?;
    match hp.kind {
        ParamKind::Number {
            default, min, max, ..
        } => {
            d.set_item("kind", "number")?;
            d.set_item("default", default)?;
            d.set_item("min", min)?;
            d.set_item("max", max)?;
        }
        ParamKind::Count {
            default, min, max, ..
        } => {
            d.set_item("kind", "count")?;
            d.set_item("default", default)?;
            d.set_item("min", min)?;
            d.set_item("max", max)?;
        }
        ParamKind::Flag { default } => {
            d.set_item("kind", "flag")?;
            d.set_item("default", default)?;
        }
        ParamKind::Choice { default, options } => {
            d.set_item("kind", "choice")?;
            d.set_item("default", default)?;
            let names: Vec<&str> = options.iter().map(|o| o.name).collect();
            d.set_item("options", names)?;
        }
    }
    Ok(d)
}

/// The model named `name`, or a `ValueError` listing the names.
pub fn model_kind(name: &str) -> PyResult<ModelKind> {
    ModelKind::from_name(name).ok_or_else(|| {
        value_error(format!(
            "unknown model \"{name}\"; known: {}",
            ModelKind::names()
        ))
    })
}

/// The preprocessing named `name` (`auto`, `l2`, `minmax,l2`, …).
pub fn preprocess(name: &str) -> PyResult<Preprocess> {
    Preprocess::parse(name).map_err(value_error)
}

/// X (n×m, a row per sample) as the engine's dataset, checked and preprocessed as a `.npy`
/// file of the same values is.
pub fn dataset(
    x: &PyReadonlyArray2<'_, f64>,
    preprocess: Preprocess,
    auto_for: AutoFor,
) -> PyResult<Dataset> {
    Dataset::from_samples(x.as_array(), "X", (preprocess, auto_for))
        .map_err(|e| value_error(e.to_string()))
}

/// A spec from the rank, seed and a dict of hyperparameters, each value parsed by the
/// model's table as `--param NAME=VALUE` is (same rules, same messages).
pub fn spec(
    kind: ModelKind,
    k: usize,
    seed: u64,
    params: Option<&Bound<'_, PyDict>>,
) -> PyResult<ModelSpec> {
    let mut spec = ModelSpec::new(kind, k, seed);
    let Some(params) = params else {
        return Ok(spec);
    };
    for (key, value) in params.iter() {
        let name: String = key.extract()?;
        let hp = kind.param(&name).ok_or_else(|| {
            value_error(format!(
                "{} has no parameter \"{name}\"; its parameters: {}",
                kind.label(),
                kind.param_names()
            ))
        })?;
        let text = value_text(&value).ok_or_else(|| {
            value_error(format!(
                "{}: parameter {name} takes {}, not {}",
                kind.label(),
                hp.domain(),
                value
                    .repr()
                    .map_or_else(|_| "this value".into(), |r| r.to_string())
            ))
        })?;
        let v: ParamValue = hp
            .parse(kind.label(), &text)
            .map_err(|e| value_error(e.to_string()))?;
        spec.params.insert(name, v);
    }
    Ok(spec)
}

/// A Python bool, number or string as the text `--param` would take (`repr` of a float is
/// its shortest round-trip form, so the value parses back exactly).
fn value_text(value: &Bound<'_, PyAny>) -> Option<String> {
    if value.is_instance_of::<PyBool>() {
        return value.extract::<bool>().ok().map(|b| b.to_string());
    }
    if value.is_instance_of::<PyInt>() || value.is_instance_of::<PyFloat>() {
        return value.repr().ok().map(|r| r.to_string());
    }
    if value.is_instance_of::<PyString>() {
        return value.extract::<String>().ok();
    }
    // NumPy scalars and other numbers: through float.
    value.extract::<f64>().ok().map(|v| format!("{v:?}"))
}

/// The side information: triplets ((t, 3) integers, each row i, j, q) and partial labels
/// (length n, -1 for unknown). Indices are checked against n, the three of a triplet must
/// differ, and a repeated triplet is refused: the constraint store's own checks
/// ([`TripletSet::push`]), as for the app's and the CLI's files.
pub fn side_info(
    n: usize,
    triplets: Option<PyReadonlyArray2<'_, i64>>,
    labels: Option<PyReadonlyArray1<'_, i64>>,
) -> PyResult<SideInfo> {
    let mut list = Vec::new();
    if let Some(t) = triplets {
        let t = t.as_array();
        if t.ncols() != 3 {
            return Err(value_error(format!(
                "triplets: expected an array of shape (t, 3), one row i, j, q per triplet; got \
                 shape ({}, {})",
                t.nrows(),
                t.ncols()
            )));
        }
        let mut set = TripletSet::new(n);
        for (r, row) in t.rows().into_iter().enumerate() {
            let index = |c: usize| {
                usize::try_from(row[c]).map_err(|_| {
                    value_error(format!(
                        "triplets row {r}: index {} is negative (indices run from 0 to {})",
                        row[c],
                        n.saturating_sub(1)
                    ))
                })
            };
            set.push(Triplet::new(index(0)?, index(1)?, index(2)?))
                .map_err(|e| value_error(format!("triplets row {r}: {e}")))?;
        }
        list = set.as_slice().to_vec();
    }
    let mut known = Vec::new();
    if let Some(l) = labels {
        let l = l.as_array();
        if l.len() != n {
            return Err(value_error(format!(
                "labels: {} values for {n} samples; give one per row of X (-1 for unknown)",
                l.len()
            )));
        }
        for (i, &v) in l.iter().enumerate() {
            known.push(match v {
                -1 => None,
                v if v >= 0 => Some(v as usize),
                v => {
                    return Err(value_error(format!(
                        "labels[{i}] = {v}: a class is 0, 1, 2, …, or -1 for unknown"
                    )));
                }
            });
        }
    }
    Ok(SideInfo::new(list, known))
}
