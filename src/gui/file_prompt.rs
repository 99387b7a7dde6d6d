//! Typed paths for every file action that used to need a native dialog (sessions, and the
//! constraint files when their field is empty): a small window with the path field prefilled
//! with a suggested name, the action's button, and "Browse…" for the native dialog where one
//! exists. Saving creates missing folders ([`crate::engine::machine::fsutil::write_atomic`]).

use super::command::FileAction;
use super::{App, UiCommand};
use std::path::PathBuf;

/// A file action waiting for its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathAsk {
    SaveSession,
    OpenSession,
    Constraints(FileAction),
}

impl PathAsk {
    /// The window's title.
    pub fn title(self) -> &'static str {
        match self {
            PathAsk::SaveSession => "Save session",
            PathAsk::OpenSession => "Open session",
            PathAsk::Constraints(FileAction::Save) => "Save constraints",
            PathAsk::Constraints(FileAction::Load) => "Load constraints",
            PathAsk::Constraints(FileAction::ImportCsv) => "Import triplets (CSV)",
            PathAsk::Constraints(FileAction::ExportCsv) => "Export triplets (CSV)",
        }
    }

    /// The confirming button's text.
    pub fn verb(self) -> &'static str {
        match self {
            PathAsk::SaveSession | PathAsk::Constraints(FileAction::Save) => "Save",
            PathAsk::OpenSession => "Open",
            PathAsk::Constraints(FileAction::Load) => "Load",
            PathAsk::Constraints(FileAction::ImportCsv) => "Import",
            PathAsk::Constraints(FileAction::ExportCsv) => "Export",
        }
    }

    /// The command that carries the action out at `path`.
    pub fn command(self, path: PathBuf) -> UiCommand {
        match self {
            PathAsk::SaveSession => UiCommand::SaveSession(Some(path)),
            PathAsk::OpenSession => UiCommand::OpenSession(path),
            PathAsk::Constraints(FileAction::Save) => UiCommand::SaveConstraints(Some(path)),
            PathAsk::Constraints(FileAction::Load) => UiCommand::LoadConstraints(path),
            PathAsk::Constraints(FileAction::ImportCsv) => UiCommand::ImportTripletsCsv(path),
            PathAsk::Constraints(FileAction::ExportCsv) => UiCommand::ExportTripletsCsv(path),
        }
    }

    /// The command that shows the native dialog for the same action instead.
    pub fn native(self) -> UiCommand {
        match self {
            PathAsk::SaveSession => UiCommand::SessionDialog(true),
            PathAsk::OpenSession => UiCommand::SessionDialog(false),
            PathAsk::Constraints(a) => UiCommand::ConstraintsDialog(a),
        }
    }
}

/// The open path window: what it is for and the text typed so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilePrompt {
    pub ask: PathAsk,
    pub path: String,
    /// Focus the field on the first frame.
    pub fresh: bool,
}

impl App {
    /// Open the path window for `ask`, prefilled with the last path of its kind or a name
    /// made from the dataset's (`orl_32x32-session.json`, `iris-triplets.csv`).
    pub(super) fn ask_path(&mut self, ask: PathAsk) {
        let s = &self.session;
        let stem = s.dataset.as_ref().map_or_else(
            || "nmf".to_owned(),
            |d| super::evaluation::short_name(&d.source),
        );
        let last = match ask {
            PathAsk::SaveSession | PathAsk::OpenSession => s.session_path.clone(),
            PathAsk::Constraints(FileAction::Save | FileAction::Load) => s.constraints_path.clone(),
            PathAsk::Constraints(_) => None,
        };
        let suggested = match ask {
            PathAsk::SaveSession | PathAsk::OpenSession => format!("{stem}-session.json"),
            PathAsk::Constraints(FileAction::Save | FileAction::Load) => {
                format!("{stem}-constraints.json")
            }
            PathAsk::Constraints(_) => format!("{stem}-triplets.csv"),
        };
        let path = last.map_or(suggested, |p| p.display().to_string());
        self.view.file_prompt = Some(FilePrompt {
            ask,
            path,
            fresh: true,
        });
    }
}
