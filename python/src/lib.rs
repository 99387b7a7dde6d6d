//! `nmf_playground._core`: the engine's models, metrics and triplet protocol for Python.
//!
//! This layer converts and checks; every number comes from the engine crate, so a fit here is
//! the same bits as the CLI's and the app's for the same data, model, parameters and seed.
//! The estimators' scikit-learn conventions live in the Python package (`nmf_playground`),
//! generated from [`registry`].

mod convert;
mod fingerprint;
mod fit;
mod metrics;
mod project;
mod session;

use pyo3::prelude::*;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(convert::registry, m)?)?;
    m.add_function(wrap_pyfunction!(fit::fit, m)?)?;
    m.add_function(wrap_pyfunction!(fingerprint::fingerprint, m)?)?;
    m.add_function(wrap_pyfunction!(project::transform, m)?)?;
    m.add_function(wrap_pyfunction!(metrics::acc, m)?)?;
    m.add_function(wrap_pyfunction!(metrics::nmi, m)?)?;
    m.add_function(wrap_pyfunction!(metrics::kmeans_scores, m)?)?;
    m.add_function(wrap_pyfunction!(metrics::generate_triplets, m)?)?;
    m.add_function(wrap_pyfunction!(metrics::preprocess, m)?)?;
    m.add_function(wrap_pyfunction!(session::write_session, m)?)?;
    m.add_function(wrap_pyfunction!(session::read_constraints, m)?)?;
    Ok(())
}
