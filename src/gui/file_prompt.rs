//! Typed paths for every file action that used to need a native dialog (sessions, and the
//! constraint files when their field is empty): a small window with the path field prefilled
//! with a suggested name, the action's button, and "Browse…" for the native dialog where one
//! exists. Saving creates missing folders ([`crate::engine::machine::fsutil::write_atomic`]).

use super::command::{FileAction, PathAsk};
use super::state::Session;

/// The open path window: what it is for and the text typed so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilePrompt {
    pub ask: PathAsk,
    pub path: String,
    /// Focus the field on the first frame.
    pub fresh: bool,
}

impl FilePrompt {
    /// The path window for `ask`, prefilled with the last path of its kind or a name made
    /// from the dataset's (`orl_32x32-session.json`, `iris-triplets.csv`).
    pub fn for_ask(ask: PathAsk, s: &Session) -> Self {
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
        FilePrompt {
            ask,
            path,
            fresh: true,
        }
    }
}
