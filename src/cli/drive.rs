//! Trials as the command line shows them: `run` draws the fit's progress as a bar on stderr
//! when stderr is a terminal (nothing extra otherwise); `sweep` and the others run
//! [`Trial::run`] as it is.

use super::CliError;
use crate::engine::jobs::trial::{Outcome, Stage, Trial, TrialError, TrialEvent};
use crate::engine::jobs::worker::Event;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A trial's error as a CLI error: a model that could not be built or side information that
/// could not be drawn is bad input (exit 2); a fit that failed or was cancelled is a failure
/// (exit 1).
pub fn trial_error(e: TrialError) -> CliError {
    if e.is_bad_input() {
        CliError::BadInput(e.into())
    } else {
        CliError::Failed(e.into())
    }
}

/// Run `trial`, drawing a progress bar (iteration, objective, rate, ETA) on stderr while it
/// fits when `progress` is set.
pub fn run_trial(trial: &Trial, progress: bool) -> Result<Outcome, CliError> {
    let bar = if progress {
        ProgressBar::new(0)
    } else {
        ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden())
    };
    bar.set_style(
        ProgressStyle::with_template("{prefix} {bar:20} {pos}/{len}  {msg}  ETA {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_prefix(trial.spec.kind.label());
    let outcome = trial.run_with(&mut |event| {
        match event {
            TrialEvent::Fit(Event::Started { max_iter, .. }) => bar.set_length(*max_iter as u64),
            TrialEvent::Fit(Event::Progress {
                iteration,
                objective,
                ..
            }) => {
                bar.set_position(*iteration as u64);
                if !bar.is_hidden() {
                    bar.set_message(format!("objective {:.6e}", objective.total));
                }
            }
            TrialEvent::Stage(Stage::Baseline | Stage::Evaluation) => bar.finish_and_clear(),
            _ => {}
        }
        true
    });
    bar.finish_and_clear();
    outcome.map_err(trial_error)
}
