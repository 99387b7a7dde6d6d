//! Deferred commands: panels push them while drawing, the app applies them at the end of the
//! frame (so no panel mutates shared state in the middle of a frame).

use std::any::Any;
use std::path::PathBuf;

/// What several features, or the window itself, are asked for; applied by [`super::App`]
/// after all panels have drawn. What one feature alone carries out is that feature's own
/// command type, sent with [`Commands::send`].
#[must_use]
#[derive(Clone, Debug, PartialEq)]
pub enum UiCommand {
    /// Prepare the loaded data again for the selected model when its `auto` preprocessing
    /// differs (whichever feature starts a fit asks, on data prepared for another kind of
    /// model).
    PrepareForModel,
    /// Switch between dark and light theme.
    SetDark(bool),
    /// Close the window (asks first when constraints are unsaved).
    Quit,
    /// Ask for the path of a file action in the app's own window (typed, with a suggested
    /// name; works where no native dialog exists).
    AskPath(PathAsk),
    /// The path window's answer to `ask`, for the feature whose action it is.
    PathGiven(PathAsk, PathAnswer),
}

/// A constraint file action that needs a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileAction {
    Save,
    Load,
    ImportCsv,
    ExportCsv,
}

/// How the path window was answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathAnswer {
    /// Carry the action out at this path.
    Typed(PathBuf),
    /// Show the system's file dialog for the same action instead.
    Browse,
}

/// A message for one feature (its command, or the result of its background task), by the
/// feature's name; the app routes it to the feature of that name, which downcasts it.
pub struct Routed {
    pub to: &'static str,
    pub msg: Box<dyn Any + Send>,
}

impl std::fmt::Debug for Routed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Routed(to {})", self.to)
    }
}

/// A message type of one feature: the name of the feature it goes to.
pub trait Addressed: Any + Send {
    const FEATURE: &'static str;
}

impl Routed {
    pub fn new<M: Addressed>(msg: M) -> Self {
        Self {
            to: M::FEATURE,
            msg: Box::new(msg),
        }
    }
}

/// What a feature's background task sends when it panicked (a bug): the panic's text, and
/// the task's name (to clear the right busy flag when a feature runs several).
#[derive(Debug)]
pub struct TaskPanicked(pub String, pub String);

/// One entry of the frame's list: a shared command, or a message for one feature.
#[derive(Debug)]
pub enum Queued {
    Shared(UiCommand),
    Routed(Routed),
}

/// The list panels push commands onto during a frame, the shared ones and those addressed
/// to one feature, carried out in the order they were asked for.
#[derive(Debug, Default)]
pub struct Commands(Vec<Queued>);

impl Commands {
    pub fn push(&mut self, cmd: UiCommand) {
        self.0.push(Queued::Shared(cmd));
    }

    /// Queue `msg` for the feature it is addressed to.
    pub fn send<M: Addressed>(&mut self, msg: M) {
        self.0.push(Queued::Routed(Routed::new(msg)));
    }

    /// Take everything queued, in order.
    pub fn take(&mut self) -> Vec<Queued> {
        std::mem::take(&mut self.0)
    }
}

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
}
