use std::path::PathBuf;

/// Errors from loading or preprocessing data. Every variant names the file and the place.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    #[error("{path}: {why}")]
    Unsupported { path: PathBuf, why: String },
}
