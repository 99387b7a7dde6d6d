//! The "Scan k" controller: runs the engine's [`scan_k`] on a thread of its own and keeps what
//! the window draws (the form, the rows so far, "k = 4, run 3 of 5").
//!
//! Unlike the one-shot tasks of [`crate::gui::background`], a scan streams: every run's end and
//! every k's row come back on a channel as they happen, so the curves grow while it runs. The
//! thread wakes the UI after each message; `logic` drains them without blocking. Cancel (or
//! dropping the scan: a new dataset, a new scan) raises the flag the engine checks between
//! fits and at each fit's progress events; the thread is never joined on the UI thread.
//!
//! A scan refuses to start while a model run is active (it would share the two cores and
//! slow the run being watched); a run started during a scan runs alongside it.

use eframe::egui;

use crate::engine::data::Dataset;
use crate::engine::jobs::kscan::{ScanEvent, ScanRow, ScanSpec, scan_k};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};

/// The window's inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanForm {
    pub from: usize,
    pub to: usize,
    /// Seeds per k.
    pub repeats: usize,
}

impl Default for ScanForm {
    fn default() -> Self {
        Self {
            from: 2,
            to: 6,
            repeats: 5,
        }
    }
}

impl ScanForm {
    /// How far either side of the class count the default range reaches.
    pub const SPAN: usize = 3;

    /// The default range for data with `classes` classes (0: unlabelled) and rank cap `cap`
    /// (min(m, n)): the class count ± [`Self::SPAN`], where clustering experiments look first;
    /// 2..6 without labels.
    pub fn centred(classes: usize, cap: usize, repeats: usize) -> Self {
        let cap = cap.max(1);
        let (from, to) = if classes > 0 {
            (
                classes.saturating_sub(Self::SPAN).max(2),
                classes + Self::SPAN,
            )
        } else {
            (2, 6)
        };
        Self {
            from: from.min(cap),
            to: to.min(cap),
            repeats,
        }
    }
}

/// What the scan thread sends.
enum ScanMsg {
    Event(ScanEvent),
    /// The scan ended: its table, or why not.
    Done(Result<(), String>),
}

/// A scan in flight: its cancel flag and the channel its messages arrive on.
struct ScanJob {
    cancel: Arc<AtomicBool>,
    rx: Receiver<ScanMsg>,
}

impl Drop for ScanJob {
    /// A scan nobody listens to stops at its next check.
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::SeqCst);
    }
}

/// See the module docs.
#[derive(Default)]
pub struct KScan {
    /// The window is open.
    pub show: bool,
    pub form: ScanForm,
    job: Option<ScanJob>,
    /// The rows of the current (or last) scan, in k order as they arrived.
    pub rows: Vec<ScanRow>,
    /// The last run that ended: (k, runs done at that k, repeats).
    pub progress: Option<(usize, usize, usize)>,
    /// Runs ended so far, and in all (ranks × repeats), of the current (or last) scan.
    pub runs: (usize, usize),
    /// The ks of the current (or last) scan.
    pub ks: Vec<usize>,
    /// How the last scan ended (None while running or before any).
    pub outcome: Option<Result<String, String>>,
    /// What the current (or last) scan fits: model label and its parameters.
    pub what: String,
}

impl KScan {
    /// Whether a scan is running.
    pub fn is_running(&self) -> bool {
        self.job.is_some()
    }

    /// Start a scan of `spec` on `data`, replacing (cancelling) any running one; `what`
    /// names the model for the window. The error is a thread that could not start.
    pub fn start(
        &mut self,
        ctx: &egui::Context,
        data: Arc<Dataset>,
        spec: ScanSpec,
        what: String,
    ) -> Result<(), String> {
        self.job = None;
        self.rows.clear();
        self.progress = None;
        self.outcome = None;
        self.ks = spec.ks.clone();
        self.runs = (0, spec.ks.len() * spec.repeats.max(1));
        self.what = what;
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let flag = Arc::clone(&cancel);
        let ctx = ctx.clone();
        std::thread::Builder::new()
            .name("nmf-kscan".to_owned())
            .spawn(move || {
                let send = |m: ScanMsg| {
                    // Fails only once the app dropped the scan: nobody to tell.
                    let _ = tx.send(m);
                    ctx.request_repaint();
                };
                let on_event = |e: ScanEvent| send(ScanMsg::Event(e));
                let result = scan_k(&data, &spec, &flag, &on_event)
                    .map(drop)
                    .map_err(|e| e.to_string());
                send(ScanMsg::Done(result));
            })
            .map_err(|e| format!("could not start the scan thread: {e}"))?;
        self.job = Some(ScanJob { cancel, rx });
        Ok(())
    }

    /// Ask the running scan to stop (it ends at its next check; the rows so far stay).
    pub fn cancel(&mut self) {
        if self.job.take().is_some() {
            self.outcome = Some(Err(format!(
                "Cancelled after {} of {} ranks",
                self.rows.len(),
                self.ks.len()
            )));
        }
    }

    /// Forget the scan (new dataset): cancels a running one and clears the rows.
    pub fn reset(&mut self) {
        self.job = None;
        self.rows.clear();
        self.progress = None;
        self.ks.clear();
        self.outcome = None;
    }

    /// Apply what the scan thread sent since the last frame; never blocks. Returns the
    /// message for the status line when the scan ended.
    pub fn drain(&mut self) -> Option<Result<String, String>> {
        let job = self.job.as_ref()?;
        let msgs: Vec<ScanMsg> = job.rx.try_iter().collect();
        let mut ended = None;
        for m in msgs {
            match m {
                ScanMsg::Event(ScanEvent::RunDone { k, done, of }) => {
                    self.progress = Some((k, done, of));
                    self.runs.0 += 1;
                }
                ScanMsg::Event(ScanEvent::Row(row)) => self.rows.push(row),
                ScanMsg::Done(r) => {
                    ended = Some(r.map(|()| {
                        format!(
                            "Scan of k = {} done: {} ranks",
                            ks_text(&self.ks),
                            self.rows.len()
                        )
                    }));
                }
            }
        }
        if let Some(r) = &ended {
            self.job = None;
            self.outcome = Some(r.clone());
        }
        ended
    }

    /// "13 of 35 runs done (k = 4: 3 of 5)" while running; "0 of 35 runs done" before the
    /// first run ends.
    pub fn progress_text(&self) -> Option<String> {
        if !self.is_running() {
            return None;
        }
        let (done, total) = self.runs;
        let overall = format!("{done} of {total} runs done");
        Some(match self.progress {
            Some((k, d, of)) => format!("{overall} (k = {k}: {d} of {of})"),
            None => overall,
        })
    }
}

/// "2..6" (or the one k).
pub(super) fn ks_text(ks: &[usize]) -> String {
    match (ks.first(), ks.last()) {
        (Some(a), Some(b)) if a != b => format!("{a}..{b}"),
        (Some(a), _) => a.to_string(),
        _ => String::new(),
    }
}

/// The scan's curves, one point (k, value) per finished k that has the value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScanCurves {
    /// Relative reconstruction error ‖X − WH‖/‖X‖ (mean over the runs).
    pub error: Vec<[f64; 2]>,
    /// ACC and NMI (max) of k-means on H (labelled data).
    pub acc: Vec<[f64; 2]>,
    pub nmi: Vec<[f64; 2]>,
    /// Cophenetic correlation of the consensus matrix.
    pub cophenetic: Vec<[f64; 2]>,
}

impl KScan {
    /// The curves of the rows so far (drawn by the window; O(ks) per frame).
    pub fn curves(&self) -> ScanCurves {
        let mut c = ScanCurves::default();
        for r in &self.rows {
            let k = r.k as f64;
            let push = |series: &mut Vec<[f64; 2]>, v: Option<f64>| {
                if let Some(v) = v.filter(|v| v.is_finite()) {
                    series.push([k, v]);
                }
            };
            push(&mut c.error, r.recon_error.map(|m| m.mean));
            push(&mut c.acc, r.acc.map(|m| m.mean));
            push(&mut c.nmi, r.nmi_max.map(|m| m.mean));
            push(&mut c.cophenetic, r.cophenetic);
        }
        c
    }
}
