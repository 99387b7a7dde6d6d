//! What the teaching controls' commands do: step and reset a run.

use super::App;

impl App {
    /// One iteration of the active run; without one, a new run held at its start.
    pub(super) fn step(&mut self) {
        if self.run.worker.is_active() {
            if let Some(status) = self.run.step() {
                self.session.status = status;
            }
        } else {
            self.reset_run();
        }
    }

    /// The selected model from the same start (seed), held after its first iteration.
    pub(super) fn reset_run(&mut self) {
        self.run.hold_start = true;
        self.start_run(None);
        self.run.hold_start = false;
        if self.run.worker == super::WorkerState::Paused && self.run.job_id.is_some() {
            self.session.set_status(format!(
                "Reset to the start (seed {}): Step for one iteration, Space runs",
                self.settings.seed
            ));
        }
    }
}
