//! Deferred commands: panels push them while drawing, the app applies them at the end of the
//! frame (so no panel mutates shared state in the middle of a frame).

use crate::engine::constraints::{ProtocolOptions, Triplet};
use crate::engine::data::samples::Sample;
use std::any::Any;
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
    /// Load the current source again with its labels from this choice (a labels file, a CSV
    /// column; the default choice: the file's own labels).
    SetLabels(super::state::LabelChoice),
    /// Prepare the loaded data again for the selected model when its `auto` preprocessing
    /// differs (a run was asked for on data prepared for another kind of model).
    PrepareForModel,
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
    /// Close the window (asks first when constraints are unsaved).
    Quit,
    /// Add a triplet through the store (refusals go to the status line).
    AddTriplet(Triplet),
    /// Paint these samples with the selected class (one undo step).
    PaintLabels(Vec<usize>),
    Undo,
    Redo,
    /// Save the constraints to this path, or to the last one (asking when there is none).
    SaveConstraints(Option<PathBuf>),
    LoadConstraints(PathBuf),
    ImportTripletsCsv(PathBuf),
    ExportTripletsCsv(PathBuf),
    /// Show a native file dialog for a constraint file action (background thread).
    ConstraintsDialog(FileAction),
    /// Generate triplets by the protocol on a background thread; from the ground truth or
    /// from the painted labels.
    GenerateTriplets {
        opts: ProtocolOptions,
        from_truth: bool,
    },
    /// Reveal the true labels of this fraction of samples (seeded), as painted labels.
    RevealLabels {
        fraction: f64,
        seed: u64,
    },
    /// The answer to "unsaved constraints": save, discard or cancel the pending action.
    ResolvePending(Resolution),
    /// Save the session to this path, or to the last session file (asking when there is
    /// none).
    SaveSession(Option<PathBuf>),
    /// Open a session file (asks first about unsaved constraints).
    OpenSession(PathBuf),
    /// Show the native dialog to save (`true`) or open a session.
    SessionDialog(bool),
    /// Ask for the path of a file action in the app's own window (typed, with a suggested
    /// name; works where no native dialog exists).
    AskPath(PathAsk),
}

/// A constraint file action that needs a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileAction {
    Save,
    Load,
    ImportCsv,
    ExportCsv,
}

/// How the user answered the unsaved-constraints question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution {
    Save,
    Discard,
    Cancel,
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

/// The list panels push commands onto during a frame: the app's own, and those addressed to
/// one feature.
#[derive(Debug, Default)]
pub struct Commands {
    app: Vec<UiCommand>,
    routed: Vec<Routed>,
}

impl Commands {
    pub fn push(&mut self, cmd: UiCommand) {
        self.app.push(cmd);
    }

    /// Queue `msg` for the feature it is addressed to.
    pub fn send<M: Addressed>(&mut self, msg: M) {
        self.routed.push(Routed::new(msg));
    }

    /// Take every queued command, in order.
    pub fn take(&mut self) -> Vec<UiCommand> {
        std::mem::take(&mut self.app)
    }

    /// Take every queued feature message, in order.
    pub fn take_routed(&mut self) -> Vec<Routed> {
        std::mem::take(&mut self.routed)
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
