//! The session files `show()` hands to the app and reads back: the app opens the arrays (as
//! `X.npy` with its sibling `labels.npy`) with the given triplets and labels, and saves its
//! session when its window closes; the constraints the user clicked come back from that file.

use crate::convert::{self, value_error};
use nmf_playground::engine::data::{self, LoadOptions, Preprocess};
use nmf_playground::engine::files::session::{
    Constraints, DatasetRef, ModelSettings, SessionFile, VERSION,
};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Write the session file `session` for the data file `data` (a `.npy` beside it; its
/// fingerprint is read from the file as the app will), with triplets, partial labels (-1 for
/// unknown) and the rank k the app's model settings start from.
#[pyfunction]
#[pyo3(signature = (session, data, k, triplets=None, labels=None, preprocess="auto"))]
pub fn write_session(
    session: PathBuf,
    data: PathBuf,
    k: usize,
    triplets: Option<PyReadonlyArray2<'_, i64>>,
    labels: Option<PyReadonlyArray1<'_, i64>>,
    preprocess: &str,
) -> PyResult<()> {
    let preprocess: Preprocess = convert::preprocess(preprocess)?;
    let opts = LoadOptions {
        preprocess,
        ..LoadOptions::default()
    };
    let ds = data::load(&data, &opts).map_err(|e| value_error(e.to_string()))?;
    let side = convert::side_info(ds.n(), triplets, labels)?;
    let mut labels = side.labels.clone();
    if !labels.is_empty() {
        labels.resize(ds.n(), None);
    }
    let classes = labels.iter().flatten().max().map_or(0, |&c| c + 1);
    let file_name = data.file_name().map_or_else(
        || data.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    );
    let mut file = SessionFile {
        version: VERSION,
        dataset: DatasetRef {
            path: file_name,
            preprocess,
            label_column: None,
            labels_file: None,
            resize: None,
            fingerprint: ds.fingerprint,
        },
        constraints: Constraints {
            triplets: side.triplets.iter().map(|t| [t.i, t.j, t.q]).collect(),
            labels,
            class_names: (0..classes).map(|c| c.to_string()).collect(),
        },
        model: ModelSettings {
            model: "nmf".into(),
            k,
            seed: 0,
            max_iter: 500,
            tol: 1e-5,
            params: BTreeMap::new(),
        },
        runs: Vec::new(),
    };
    file.save(&session, &[])
        .map_err(|e| value_error(e.to_string()))
}

/// A session's constraints for Python: triplets (t, 3) and labels (n, -1 for unknown).
type ConstraintArrays<'py> = (Bound<'py, PyArray2<i64>>, Bound<'py, PyArray1<i64>>);

/// The triplets ((t, 3) int64) and labels (length n, -1 for unknown) of a session file.
#[pyfunction]
pub fn read_constraints(py: Python<'_>, session: PathBuf) -> PyResult<ConstraintArrays<'_>> {
    let file = SessionFile::read(&session).map_err(|e| value_error(e.to_string()))?;
    let c = &file.constraints;
    let flat: Vec<i64> = c
        .triplets
        .iter()
        .flat_map(|t| t.iter().map(|&v| v as i64))
        .collect();
    let triplets = ndarray::Array2::from_shape_vec((c.triplets.len(), 3), flat)
        .map_err(|e| value_error(e.to_string()))?;
    let mut labels: Vec<i64> = c
        .labels
        .iter()
        .map(|l| l.map_or(-1, |v| v as i64))
        .collect();
    labels.resize(file.dataset.fingerprint.n, -1);
    Ok((triplets.into_pyarray(py), labels.into_pyarray(py)))
}
