//! The egui desktop app (feature `gui`). Draws only; all math runs in the engine's worker.

use std::path::PathBuf;

/// Open the app (STUB until the GUI lands).
pub fn run(_path: Option<PathBuf>) -> anyhow::Result<()> {
    anyhow::bail!("the GUI is not built yet; use `nmf-playground run --help`")
}
