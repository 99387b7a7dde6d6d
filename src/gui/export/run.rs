//! "Export run…" (results panel): a finished run's H and W, the labels of every sample (the
//! ground truth where known, the painted labels, the run's clusters) and a classifier's
//! predictions, as CSV and `.npy` in a typed folder, in the same formats as `run --out`
//! ([`crate::engine::files::export`]). The files are written atomically on a background thread; the
//! result comes back as a message.

use super::{Command, Exports};
use crate::engine::data::Dataset;
use crate::engine::files::export::{ExportError, Factors, RunWriter, SampleLabels, clusters_csv};
use crate::engine::files::export::{predictions_csv, predictions_matrix};
use crate::engine::models::{Export, LabelOrigin, Predictions};
use crate::gui::command::Addressed;
use crate::gui::shared::Shared;
use ndarray::Array2;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Everything one export writes (owned, so the thread borrows nothing from the UI).
pub struct ExportJob {
    pub run: u64,
    pub dir: PathBuf,
    pub data: Arc<Dataset>,
    pub h: Array2<f64>,
    pub w: Option<Array2<f64>>,
    pub exports: Arc<Vec<Export>>,
    /// The painted labels now, per sample.
    pub painted: Vec<Option<usize>>,
    /// The run's clusters (its evaluation's), when it has been evaluated.
    pub clusters: Option<Vec<usize>>,
    /// A classifier's predictions (they say which labels the run was given).
    pub predictions: Option<Arc<Predictions>>,
}

/// How an export ended: the folder and the files written, or the message.
#[derive(Debug)]
pub struct Exported {
    pub run: u64,
    pub dir: PathBuf,
    pub result: Result<Vec<String>, String>,
}

impl Addressed for Exported {
    const FEATURE: &'static str = <Command as Addressed>::FEATURE;
}

impl ExportJob {
    /// Write every file; the names written, in order.
    pub fn write(&self) -> Result<Vec<String>, ExportError> {
        let mut out = RunWriter::new(&self.dir)?;
        out.factors(&Factors {
            h: &self.h,
            w: self.w.as_ref(),
            exports: &self.exports,
        })?;
        if let Some(c) = &self.clusters {
            out.file("clusters.csv", clusters_csv(c).as_bytes())?;
        }
        let labels = SampleLabels {
            data: &self.data,
            painted: &self.painted,
            clusters: self.clusters.as_deref(),
        };
        out.file("labels.csv", labels.csv().as_bytes())?;
        out.npy("labels", &labels.matrix())?;
        if let Some(p) = &self.predictions {
            let given: Vec<Option<usize>> = p
                .origin
                .iter()
                .zip(&p.labels)
                .map(|(o, &l)| matches!(o, LabelOrigin::Given).then_some(l))
                .collect();
            out.file(
                "predictions.csv",
                predictions_csv(&self.data, &given, p).as_bytes(),
            )?;
            out.npy("predictions", &predictions_matrix(p))?;
        }
        Ok(out.written().to_vec())
    }
}

impl Exports {
    /// Export the run shown in the results panel (else the last one) to `dir`, on a
    /// background thread.
    pub(super) fn export_run(&mut self, dir: &Path, app: &mut Shared<'_>) {
        let s = &mut *app.session;
        if dir.as_os_str().is_empty() {
            s.set_error("Type a folder for the exported run first");
            return;
        }
        if self.exporting.is_some() {
            s.set_error("An export is still being written");
            return;
        }
        let shown = s.evaluation.as_ref().map(|e| e.run);
        let Some(row) = shown
            .and_then(|id| s.history.iter().find(|r| r.id == id))
            .or(s.history.last())
        else {
            s.set_error("No finished run to export yet: run a model first");
            return;
        };
        let Some(data) = s
            .dataset
            .clone()
            .filter(|d| Some(d.fingerprint) == row.data)
        else {
            s.set_error(format!(
                "Run {} was fitted on another dataset than the one loaded: load it to export \
                 the run with its labels",
                row.id
            ));
            return;
        };
        if row.factors.h.ncols() != data.n() {
            s.set_error(format!(
                "Run {}'s factors are not in memory (the session did not keep them)",
                row.id
            ));
            return;
        }
        let job = ExportJob {
            run: row.id,
            dir: dir.to_path_buf(),
            h: row.factors.h.clone(),
            w: row.factors.w.clone(),
            exports: Arc::clone(&row.exports),
            painted: s
                .store
                .as_ref()
                .map(|st| st.labels().as_slice().to_vec())
                .unwrap_or_default(),
            clusters: row.evaluation.as_ref().map(|e| e.clusters.clone()),
            predictions: row.predictions.clone(),
            data,
        };
        let run = job.run;
        let spawned = app.tasks.spawn("export", move || Exported {
            run: job.run,
            dir: job.dir.clone(),
            result: job.write().map_err(|e| e.to_string()),
        });
        match spawned {
            Ok(()) => {
                self.exporting = Some(run);
                s.set_status(format!("Exporting run {run} to {}…", dir.display()));
            }
            Err(e) => s.set_error(e),
        }
    }

    /// An export finished: say what was written, or why not.
    pub(super) fn exported(&mut self, done: Exported, app: &mut Shared<'_>) {
        let s = &mut *app.session;
        self.exporting = None;
        match done.result {
            Ok(files) => s.set_status(format!(
                "Exported run {} to {}: {}",
                done.run,
                done.dir.display(),
                files.join(", ")
            )),
            Err(e) => s.set_error(format!("Could not export run {}: {e}", done.run)),
        }
    }
}
