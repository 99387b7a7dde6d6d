//! Fits driven the way the GUI drives them: a [`Job`] on the worker, its [`Event`]s read here.
//! `run` shows them as a progress bar on stderr when stderr is a terminal (nothing extra
//! otherwise); `sweep` runs [`fit_blocking`] on its own rayon threads.

use super::CliError;
use crate::engine::jobs::worker::{self, Event, Job, JobHandle, RunResult};
use anyhow::anyhow;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::Arc;
use std::sync::mpsc;

/// What a job ended with, as a CLI error: a model that could not be built is bad input
/// (exit 2); a fit that failed or was cancelled is a failure (exit 1).
fn ended(label: &str, event: Event) -> Result<Box<RunResult>, CliError> {
    match event {
        Event::Finished { result, .. } => Ok(result),
        Event::Failed {
            error,
            at_build: true,
            ..
        } => Err(CliError::BadInput(anyhow!("{error}"))),
        Event::Failed {
            error, iterations, ..
        } => Err(CliError::Failed(anyhow!(
            "{label}: {error} (after {iterations} iterations)"
        ))),
        Event::Cancelled { iterations, .. } => Err(CliError::Failed(anyhow!(
            "{label}: cancelled after {iterations} iterations"
        ))),
        Event::Started { .. } | Event::Progress { .. } | Event::Snapshot { .. } => Err(
            CliError::Failed(anyhow!("{label}: the job ended without a result")),
        ),
    }
}

/// Run `job` on a worker thread and wait for its result, drawing a progress bar (iteration,
/// objective, rate, ETA) on stderr when `progress` is set.
pub fn fit_job(job: Job, progress: bool) -> Result<Box<RunResult>, CliError> {
    let label = job.spec.kind.label();
    let (tx, rx) = mpsc::channel();
    let handle = JobHandle::spawn(job, tx, Arc::new(|| {}))
        .map_err(|e| CliError::Failed(anyhow!("could not start the worker thread: {e}")))?;
    let bar = if progress {
        ProgressBar::new(0)
    } else {
        ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden())
    };
    bar.set_style(
        ProgressStyle::with_template("{prefix} {bar:20} {pos}/{len}  {msg}  ETA {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_prefix(label);
    let result = loop {
        let Ok(event) = rx.recv() else {
            break Err(CliError::Failed(anyhow!(
                "{label}: the worker stopped unexpectedly"
            )));
        };
        match event {
            Event::Started { max_iter, .. } => bar.set_length(max_iter as u64),
            Event::Progress {
                iteration,
                objective,
                ..
            } => {
                bar.set_position(iteration as u64);
                if !bar.is_hidden() {
                    bar.set_message(format!("objective {:.6e}", objective.total));
                }
            }
            Event::Snapshot { .. } => {}
            terminal => break ended(label, terminal),
        }
    };
    bar.finish_and_clear();
    drop(handle);
    result
}

/// Run `job` on the calling thread (no progress display) and return its result.
pub fn fit_blocking(job: Job) -> Result<Box<RunResult>, CliError> {
    let label = job.spec.kind.label();
    let mut last = None;
    worker::run_blocking(job, |e| {
        if e.is_terminal() {
            last = Some(e);
        }
        true
    });
    match last {
        Some(e) => ended(label, e),
        None => Err(CliError::Failed(anyhow!(
            "{label}: the job ended without a result"
        ))),
    }
}
