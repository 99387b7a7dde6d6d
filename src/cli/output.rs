//! Writing results: atomic files (temp file + rename), CSV and `.npy` matrices (the run's
//! files themselves are [`crate::engine::export`]'s, shared with the app).

use anyhow::Context;
use ndarray::Array2;
use std::path::Path;

/// Write `bytes` to `path` atomically (temp file + rename; see
/// [`crate::engine::fsutil::write_atomic`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    crate::engine::fsutil::write_atomic(path, bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// A matrix as `.npy` bytes (f64, C order; [`crate::engine::export::matrix_npy`]).
pub fn matrix_npy(a: &Array2<f64>) -> anyhow::Result<Vec<u8>> {
    Ok(crate::engine::export::matrix_npy(a, "a matrix")?)
}
