//! Writing results: stdout (a reader that went away ends the output quietly), atomic files
//! (temp file + rename), CSV and `.npy` matrices (the run's files themselves are
//! [`crate::engine::files::export`]'s, shared with the app).

use super::CliError;
use anyhow::Context;
use ndarray::Array2;
use std::io::Write;
use std::path::Path;

/// Print `text` on stdout through one locked handle, flushed. `print!` panics when the
/// reader of a pipe has gone (`run --json | head -c 100`); here that is
/// [`CliError::StdoutClosed`], which ends the command quietly, as Unix tools do.
pub fn print_stdout(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}

/// An error writing to stdout: a closed pipe is [`CliError::StdoutClosed`], anything else a
/// failure naming stdout.
pub fn stdout_error(e: std::io::Error) -> CliError {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        CliError::StdoutClosed
    } else {
        CliError::Failed(anyhow::Error::new(e).context("cannot write to stdout"))
    }
}

/// Write `bytes` to `path` atomically (temp file + rename; see
/// [`crate::engine::machine::fsutil::write_atomic`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    crate::engine::machine::fsutil::write_atomic(path, bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// A matrix as `.npy` bytes (f64, C order; [`crate::engine::files::export::matrix_npy`]).
pub fn matrix_npy(a: &Array2<f64>) -> anyhow::Result<Vec<u8>> {
    Ok(crate::engine::files::export::matrix_npy(a, "a matrix")?)
}
