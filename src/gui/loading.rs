//! Opening datasets: the loader and the file dialogs run as background tasks; a loaded dataset
//! is installed (ending any run, keeping the constraints when the raw content is the same).
//! A newer load replaces an older one by ticket, so a slow load never overwrites a later one.

use super::{App, DataSource, TaskDone};
use crate::engine::constraints::Store;
use crate::engine::data::samples;
use crate::engine::data::{self, Dataset};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

impl App {
    /// Load `source` on a background thread; its result arrives as [`TaskDone::Loaded`].
    pub(super) fn start_load(&mut self, source: DataSource) {
        let opts = self.load_options_for(&source);
        self.start_load_with(source, opts);
    }

    /// The loader options for `source`: the settings', with the label choice made for the
    /// current dataset when `source` is it again.
    pub(super) fn load_options_for(&self, source: &DataSource) -> data::LoadOptions {
        let opts = self.settings.load_options();
        if self.session.source.as_ref() == Some(source) {
            self.session.labels.apply(opts)
        } else {
            opts
        }
    }

    /// Reload the current dataset with its labels from `choice`; a refusal (a count that
    /// does not match, a missing file) keeps the dataset and the previous choice.
    pub(super) fn set_labels(&mut self, choice: super::LabelChoice) {
        let Some(source) = self.session.source.clone() else {
            self.session
                .set_error("Load a dataset first, then attach its labels");
            return;
        };
        let opts = choice.apply(self.settings.load_options());
        self.start_load_with(source, opts);
    }

    /// [`Self::start_load`] with these loader options (a session's).
    pub(super) fn start_load_with(&mut self, source: DataSource, opts: data::LoadOptions) {
        self.load_ticket += 1;
        let ticket = self.load_ticket;
        let what = source.describe();
        self.session.labels_pending = Some(super::LabelChoice::of(&opts));
        if let DataSource::Path(p) = &source {
            // The Path field shows what is loaded, however it was chosen (typed, picked,
            // dropped, a session's or the command line's).
            self.view.path_input = p.display().to_string();
        }
        let spawned = self.tasks.spawn("loader", move || {
            let t0 = Instant::now();
            let result = match &source {
                DataSource::Sample(s) => {
                    samples::load_sample(*s, &opts).map_err(|e| format!("sample {}: {e}", s.name()))
                }
                DataSource::Path(p) => load_path(p, &opts),
            }
            .map(Box::new);
            TaskDone::Loaded {
                ticket,
                source,
                result,
                seconds: t0.elapsed().as_secs_f64(),
            }
        });
        match spawned {
            Ok(()) => {
                self.session.loading = Some(what.clone());
                self.session.set_status(format!("Loading {what}…"));
            }
            Err(e) => {
                self.session.loading = None;
                let msg = format!("{what}: {e}");
                self.session.load_error = Some(msg.clone());
                self.session.set_error(msg);
            }
        }
    }

    /// A load finished: install it, unless a newer load replaced it.
    pub(super) fn loaded(
        &mut self,
        ticket: u64,
        source: DataSource,
        result: Result<Box<Dataset>, String>,
        seconds: f64,
    ) {
        if ticket != self.load_ticket {
            return;
        }
        self.session.loading = None;
        let labels = self.session.labels_pending.take();
        match result {
            Ok(data) => {
                self.session.labels = labels.unwrap_or_default();
                self.install_dataset(*data, Some(source));
                let s = format!("{} in {seconds:.2} s", self.session.status.text);
                self.session.set_status(s);
                self.session_data_loaded();
            }
            Err(e) => {
                if let Some(open) = self.session.opening.take() {
                    let e = format!("session {}: {e}", open.path.display());
                    self.session.load_error = Some(e.clone());
                    self.session.set_error(e);
                    return;
                }
                self.session.load_error = Some(e.clone());
                self.session.set_error(e);
            }
        }
    }

    /// Make `data` the current dataset: ends any run and forgets its results.
    pub(super) fn install_dataset(&mut self, data: Dataset, source: Option<DataSource>) {
        // A run on the old data is cancelled (its thread winds down; its late events are
        // stale and dropped).
        let was_running = self.run.worker.is_active();
        self.run.retire();
        self.clear_run();
        self.run.worker = if was_running {
            super::WorkerState::Cancelled
        } else {
            super::WorkerState::Idle
        };
        self.session.load_error = None;
        let msg = format!(
            "Loaded {}: {} samples × {} features{}",
            data.source,
            data.n(),
            data.m(),
            if data.n_classes() > 0 {
                format!(", {} classes", data.n_classes())
            } else {
                String::new()
            }
        );
        if let Some(DataSource::Path(p)) = &source {
            self.settings.last_path = Some(p.clone());
        }
        // Same raw content (e.g. reloaded with other preprocessing): keep the constraints.
        let keep = self
            .session
            .store
            .as_ref()
            .is_some_and(|st| st.fingerprint() == data.fingerprint);
        if !keep {
            // A new dataset: k = c, as in every clustering experiment of the papers
            // (docs/models.md §1); the user can change it afterwards.
            if data.n_classes() > 0 {
                self.settings.k = data.n_classes().min(data.m()).min(data.n());
            }
            self.session.store = Some(Store::new(data.fingerprint));
            self.session.constraints_path = None;
            self.session.constraints_rev += 1;
            self.view.paint_class = data.class_names.first().cloned().unwrap_or_default();
            self.start_journal();
        }
        self.view.clear_picks();
        let cleared = self.untick_other_data(data.fingerprint);
        self.session.kept = None;
        self.session.source = source;
        let data = Arc::new(data);
        self.session.dataset = Some(Arc::clone(&data));
        self.session.x_view = None;
        self.session.set_status(if cleared > 0 {
            format!(
                "{msg} (the overlay of {} from other data was cleared)",
                super::format::counted(cleared, "run", "runs")
            )
        } else {
            msg
        });
        self.start_data_projection(data);
        let (features, mut app) = self.parts();
        features.event(super::feature::Event::DatasetChanged, &mut app);
    }

    /// Untick the history runs fitted on other data than `fingerprint` (their curves would
    /// otherwise stay overlaid on the new dataset's); how many were unticked.
    fn untick_other_data(&mut self, fingerprint: crate::engine::data::Fingerprint) -> usize {
        let history = &self.session.history;
        let before = self.view.selected_runs.len();
        self.view.selected_runs.retain(|id| {
            history
                .iter()
                .any(|r| r.id == *id && r.data == Some(fingerprint))
        });
        before - self.view.selected_runs.len()
    }

    /// Compute the PCA-2D of X on a background task ([`TaskDone::DataProjected`]).
    fn start_data_projection(&mut self, data: Arc<Dataset>) {
        let fingerprint = data.fingerprint;
        let spawned = self.tasks.spawn("pca-x", move || TaskDone::DataProjected {
            fingerprint,
            result: crate::engine::linalg::projection::pca2_of_samples(data.x.view())
                .map_err(|e| e.to_string()),
        });
        if let Err(e) = spawned {
            self.session.set_status(format!("PCA of X: {e}"));
        }
    }

    /// Load a typed path (an empty one is refused with a hint).
    pub(super) fn load_typed_path(&mut self, path: PathBuf) {
        if path.as_os_str().is_empty() {
            let msg = "Type a file or folder path first".to_owned();
            self.session.load_error = Some(msg.clone());
            self.session.set_error(msg);
        } else {
            self.view.path_input = path.display().to_string();
            self.request_load(DataSource::Path(path));
        }
    }

    /// Load the current source again (new preprocessing or resize).
    pub(super) fn reload(&mut self) {
        if let Some(source) = self.session.source.clone() {
            self.start_load(source);
        }
    }

    /// Show the native open dialog for a dataset file or folder, off the UI thread (rfd
    /// blocks its caller); the choice arrives as [`TaskDone::Picked`].
    pub(super) fn open_dialog(&mut self, folder: bool) {
        if self.dialog_open {
            return;
        }
        let spawned = self.tasks.spawn("file-dialog", move || {
            let dialog = rfd::FileDialog::new().set_title(if folder {
                "Open a folder of images"
            } else {
                "Open a dataset"
            });
            TaskDone::Picked(if folder {
                dialog.pick_folder()
            } else {
                dialog
                    .add_filter("Datasets", &["csv", "npy", "mat"])
                    .add_filter("All files", &["*"])
                    .pick_file()
            })
        });
        match spawned {
            Ok(()) => self.dialog_open = true,
            Err(e) => self.session.set_error(e),
        }
    }

    /// The dataset dialog closed, with a path or cancelled.
    pub(super) fn picked(&mut self, path: Option<PathBuf>) {
        self.dialog_open = false;
        match path {
            Some(p) => {
                self.view.path_input = p.display().to_string();
                self.request_load(DataSource::Path(p));
            }
            None => self
                .session
                .set_status("No file chosen (or no system file dialog): type the path in the Data panel's Path field"),
        }
    }
}

/// Load a dataset file or folder; errors name the path.
fn load_path(path: &Path, opts: &data::LoadOptions) -> Result<Dataset, String> {
    if !path.exists() {
        return Err(format!("{}: no such file or folder", path.display()));
    }
    data::load(path, opts).map_err(|e| {
        let msg = e.to_string();
        let shown = path.display().to_string();
        if msg.contains(&shown) {
            msg
        } else {
            format!("{shown}: {msg}")
        }
    })
}
