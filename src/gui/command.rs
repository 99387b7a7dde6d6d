//! Deferred commands: panels push them while drawing, the app applies them at the end of the
//! frame (so no panel mutates shared state in the middle of a frame).

use crate::engine::data::samples::Sample;
use std::path::PathBuf;

/// Something the user asked for; applied by [`super::App`] after all panels have drawn.
#[must_use]
#[derive(Clone, Debug, PartialEq)]
pub enum UiCommand {
    /// Load a dataset from a file or folder (background thread).
    LoadPath(PathBuf),
    /// Load a bundled sample.
    LoadSample(Sample),
    /// Load the current source again (new preprocessing or resize).
    Reload,
    /// Show the native "open file" dialog (background thread).
    OpenFileDialog,
    /// Show the native "open folder" dialog (background thread).
    OpenFolderDialog,
    /// Start a run with the current settings, replacing any running one.
    Run,
    Pause,
    Resume,
    Stop,
    /// Switch between dark and light theme.
    SetDark(bool),
    /// Close the window.
    Quit,
}

/// The list panels push commands onto during a frame.
#[derive(Debug, Default)]
pub struct Commands(Vec<UiCommand>);

impl Commands {
    pub fn push(&mut self, cmd: UiCommand) {
        self.0.push(cmd);
    }

    /// Take every queued command, in order.
    pub fn take(&mut self) -> Vec<UiCommand> {
        std::mem::take(&mut self.0)
    }
}
