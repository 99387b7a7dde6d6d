//! Writing results: atomic files (temp file + rename), CSV and `.npy` matrices.

use anyhow::Context;
use ndarray::Array2;
use std::path::Path;

/// Write `bytes` to `path` atomically (temp file + rename; see
/// [`crate::engine::fsutil::write_atomic`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    crate::engine::fsutil::write_atomic(path, bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// A matrix as CSV text, one row per line, full precision (`{:?}` round-trips f64).
pub fn matrix_csv(a: &Array2<f64>) -> String {
    let mut s = String::with_capacity(a.len() * 20);
    for row in a.rows() {
        let line: Vec<String> = row.iter().map(|v| format!("{v:?}")).collect();
        s.push_str(&line.join(","));
        s.push('\n');
    }
    s
}

/// A matrix as `.npy` bytes (f64, C order).
pub fn matrix_npy(a: &Array2<f64>) -> anyhow::Result<Vec<u8>> {
    use ndarray_npy::WriteNpyExt;
    let mut buf = Vec::new();
    a.as_standard_layout()
        .write_npy(&mut buf)
        .context("cannot encode .npy")?;
    Ok(buf)
}
