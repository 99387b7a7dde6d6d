//! Writing results: atomic files (temp file + rename), CSV and `.npy` matrices.

use anyhow::Context;
use ndarray::Array2;
use std::io::Write;
use std::path::Path;

/// Write `bytes` to `path` atomically: a temp file in the same folder, fsync, then rename, so
/// a crash never leaves a half-written file under the final name.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("output");
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("cannot write {}", path.display()))
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
