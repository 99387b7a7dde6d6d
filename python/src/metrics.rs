//! The evaluation protocol's pieces for Python: ACC (Hungarian), NMI, repeated k-means on a
//! representation scored against the truth, the triplet protocol, and the preprocessing, all
//! the engine's own functions.

use crate::convert::{self, value_error};
use nmf_playground::engine::constraints::generate::{
    ProtocolOptions, generate_triplets as protocol_triplets, labels_from_truth,
};
use nmf_playground::engine::data::AutoFor;
use nmf_playground::engine::eval::kmeans::{KMeansParams, repeated_kmeans};
use nmf_playground::engine::eval::metrics::{
    NmiNorm, clustering_accuracy, nmi as engine_nmi, summarize_repeated_kmeans,
};
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Class indices 0, 1, … from a label vector of nonnegative integers.
fn labels(name: &str, y: &PyReadonlyArray1<'_, i64>) -> PyResult<Vec<usize>> {
    y.as_array()
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            usize::try_from(v).map_err(|_| {
                value_error(format!(
                    "{name}[{i}] = {v}: labels are class indices 0, 1, 2, … (map them with \
                     numpy.unique(..., return_inverse=True))"
                ))
            })
        })
        .collect()
}

/// Clustering accuracy: the share of samples whose cluster, mapped to classes by the best
/// one-to-one matching (Hungarian), is their class (docs/models.md §8.1).
#[pyfunction]
pub fn acc(y_true: PyReadonlyArray1<'_, i64>, y_pred: PyReadonlyArray1<'_, i64>) -> PyResult<f64> {
    let (t, p) = (labels("y_true", &y_true)?, labels("y_pred", &y_pred)?);
    clustering_accuracy(&t, &p).map_err(|e| value_error(e.to_string()))
}

/// Normalised mutual information; `norm` is `max` (Cai's, RPNMF's tables), `sqrt`
/// (Strehl–Ghosh, PSMF's tables) or `arithmetic` (scikit-learn's default).
#[pyfunction]
#[pyo3(signature = (y_true, y_pred, norm="max"))]
pub fn nmi(
    y_true: PyReadonlyArray1<'_, i64>,
    y_pred: PyReadonlyArray1<'_, i64>,
    norm: &str,
) -> PyResult<f64> {
    let norm = match norm {
        "max" => NmiNorm::Max,
        "sqrt" | "geometric" => NmiNorm::Sqrt,
        "arithmetic" | "arith" => NmiNorm::Arith,
        other => {
            return Err(value_error(format!(
                "nmi: norm \"{other}\" is not one of max, sqrt, arithmetic"
            )));
        }
    };
    let (t, p) = (labels("y_true", &y_true)?, labels("y_pred", &y_pred)?);
    engine_nmi(&t, &p, norm).map_err(|e| value_error(e.to_string()))
}

/// The clustering protocol (docs/models.md §8.2): k-means with `n_clusters` (default: the
/// number of classes) restarted `restarts` times on the rows of `h` (n×k, a row per sample),
/// each restart scored against `y`: mean and standard deviation of ACC and NMI (three
/// normalisations), and the labels of the lowest-inertia restart.
#[pyfunction]
#[pyo3(signature = (h, y, restarts=50, seed=0, n_clusters=None))]
pub fn kmeans_scores<'py>(
    py: Python<'py>,
    h: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, i64>,
    restarts: usize,
    seed: u64,
    n_clusters: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let truth = labels("y", &y)?;
    let points = h.as_array();
    if points.nrows() != truth.len() {
        return Err(value_error(format!(
            "kmeans_scores: h has {} rows (samples) but y has {} labels",
            points.nrows(),
            truth.len()
        )));
    }
    let classes = truth.iter().max().map_or(0, |&c| c + 1);
    let params = KMeansParams {
        n_clusters: n_clusters.unwrap_or(classes),
        max_iter: 100,
        restarts,
        seed,
    };
    let points = points.t();
    let (runs, summary) = py
        .detach(|| {
            let runs = repeated_kmeans(points, &params)?;
            let summary = summarize_repeated_kmeans(&truth, &runs)?;
            Ok::<_, nmf_playground::engine::eval::EvalError>((runs, summary))
        })
        .map_err(|e| value_error(e.to_string()))?;
    let out = PyDict::new(py);
    out.set_item("acc", summary.acc.mean)?;
    out.set_item("acc_std", summary.acc.std)?;
    out.set_item("nmi_max", summary.nmi_max.mean)?;
    out.set_item("nmi_max_std", summary.nmi_max.std)?;
    out.set_item("nmi_sqrt", summary.nmi_sqrt.mean)?;
    out.set_item("nmi_sqrt_std", summary.nmi_sqrt.std)?;
    out.set_item("nmi_arithmetic", summary.nmi_arith.mean)?;
    out.set_item("nmi_arithmetic_std", summary.nmi_arith.std)?;
    out.set_item("restarts", summary.restarts)?;
    if let Some(best) = runs.best_run() {
        out.set_item("labels", best.labels.clone())?;
    }
    Ok(out)
}

/// Triplets by the RPNMF protocol (docs/models.md §8.4) from the ground truth `y` and X (n×m,
/// preprocessed by `preprocess` as a fit would, since the neighbour half reads X's p-NN): a
/// share `anchors` of the samples are anchors, each with `per_anchor` triplets, half from the
/// labels and half from the 5-NN graph. Returns a (t, 3) int64 array; with the same seed it is
/// the CLI's `--triplets generate`.
#[pyfunction]
#[pyo3(signature = (x, y, anchors=0.1, per_anchor=30, seed=0, preprocess="auto"))]
pub fn generate_triplets<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, i64>,
    anchors: f64,
    per_anchor: usize,
    seed: u64,
    preprocess: &str,
) -> PyResult<Bound<'py, PyArray2<i64>>> {
    let data = convert::dataset(&x, convert::preprocess(preprocess)?, AutoFor::Factorisation)?;
    let truth = labels("y", &y)?;
    if truth.len() != data.n() {
        return Err(value_error(format!(
            "generate_triplets: X has {} rows (samples) but y has {} labels",
            data.n(),
            truth.len()
        )));
    }
    let opts = ProtocolOptions {
        anchor_fraction: anchors,
        per_anchor,
        seed,
        ..ProtocolOptions::default()
    };
    let generated = py
        .detach(|| protocol_triplets(data.x.view(), &labels_from_truth(&truth), &opts, &[]))
        .map_err(|e| value_error(e.to_string()))?;
    let flat: Vec<i64> = generated
        .triplets
        .iter()
        .flat_map(|t| [t.i as i64, t.j as i64, t.q as i64])
        .collect();
    let n = generated.triplets.len();
    ndarray::Array2::from_shape_vec((n, 3), flat)
        .map(|a| a.into_pyarray(py))
        .map_err(|e| value_error(e.to_string()))
}

/// X (n×m) preprocessed as a fit would see it, as an n×m array, with the resolved choice and
/// its reason (for `preprocess="auto"`).
#[pyfunction]
#[pyo3(signature = (x, preprocess="auto"))]
pub fn preprocess<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    preprocess: &str,
) -> PyResult<(Bound<'py, PyArray2<f64>>, String, Option<String>)> {
    let data = convert::dataset(&x, convert::preprocess(preprocess)?, AutoFor::Factorisation)?;
    let rows = data.x.t().as_standard_layout().into_owned();
    Ok((
        rows.into_pyarray(py),
        data.preprocess.name().to_owned(),
        data.preprocess_reason.clone(),
    ))
}
