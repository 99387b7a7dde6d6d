//! "Scan k": fit the current model at a range of k on a thread of its own ([`scan`]) and
//! draw the curves vs k as the ranks finish ([`panel`]).

mod panel;
mod scan;

pub use scan::{KScan, ScanCurves, ScanForm};

use crate::engine::jobs::kscan::{ScanSpec, k_range};
use crate::gui::command::Addressed;
use crate::gui::feature::{Event, Feature, Place, Shared};
use eframe::egui;
use std::any::Any;

/// The name its messages are addressed to.
const NAME: &str = "kscan";

/// What the window and the model panel ask of the scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Scan k with the window's range and repeats and the current model (refused while a
    /// run is active).
    Start,
    /// Stop the running scan (the ranks done so far stay drawn).
    Cancel,
    /// Set the model's k (the window's "Use k = …").
    UseK(usize),
    /// Open or close the window (the model panel's "Scan k…").
    Toggle,
}

impl Addressed for Command {
    const FEATURE: &'static str = NAME;
}

impl Feature for KScan {
    fn name(&self) -> &'static str {
        NAME
    }

    fn logic(&mut self, app: &mut Shared<'_>) {
        match self.drain() {
            Some(Ok(msg)) => app.session.set_status(msg),
            Some(Err(e)) => app.session.set_error(format!("Scan of k: {e}")),
            None => {}
        }
    }

    fn on_event(&mut self, event: Event, app: &mut Shared<'_>) {
        if event != Event::DatasetChanged {
            return;
        }
        // A scan of the old data is cancelled and its curves forgotten; the next one is
        // centred on the new data's class count.
        self.reset();
        if let Some(data) = app.session.dataset.as_deref() {
            self.form =
                ScanForm::centred(data.n_classes(), data.m().min(data.n()), self.form.repeats);
        }
    }

    fn on_message(&mut self, msg: Box<dyn Any + Send>, app: &mut Shared<'_>) {
        let Ok(cmd) = msg.downcast::<Command>() else {
            return;
        };
        match *cmd {
            Command::Start => self.start_scan(app),
            Command::Cancel => {
                self.cancel();
                app.session.set_status("Scan of k cancelled");
            }
            Command::UseK(k) => {
                app.settings.k = k;
                app.session.set_status(format!("k = {k} (from the scan)"));
            }
            Command::Toggle => self.show = !self.show,
        }
    }

    fn ui(&mut self, place: Place, ui: &mut egui::Ui, app: &mut Shared<'_>) {
        if place == Place::Windows {
            panel::window(ui.ctx(), app, self);
        }
    }

    crate::feature_any!();
}

impl KScan {
    /// Start a scan of the window's k range with the current model, its parameters, seed
    /// and stopping rule, and the constraints as side information; refused (on the status
    /// line and in the window) while a run is active.
    fn start_scan(&mut self, app: &mut Shared<'_>) {
        if app.run.worker.is_active() {
            let msg = "A run is active: stop it or let it finish before scanning k";
            self.outcome = Some(Err(msg.to_owned()));
            app.session.set_error(msg);
            return;
        }
        let Some((data, spec)) = app.data_and_spec() else {
            return;
        };
        let Some(side) = app.side_for(spec.kind) else {
            return;
        };
        let form = self.form;
        let ks = k_range(form.from, form.to, &data);
        let params = spec.params_string(", ");
        let what = if params.is_empty() {
            format!(
                "{} (default parameters), seed {}",
                spec.kind.label(),
                spec.seed
            )
        } else {
            format!("{} ({params}), seed {}", spec.kind.label(), spec.seed)
        };
        let scan = ScanSpec {
            seed: spec.seed,
            model: spec,
            fit: app.settings.fit_options(),
            side,
            ks,
            repeats: form.repeats.max(1),
            kmeans_restarts: app.settings.kmeans_restarts,
        };
        let status = format!(
            "Scanning k = {} with {what}, {} runs each",
            scan::ks_text(&scan.ks),
            scan.repeats
        );
        match self.start(app.ctx, data, scan, what) {
            Ok(()) => app.session.set_status(status),
            Err(e) => {
                self.outcome = Some(Err(e.clone()));
                app.session.set_error(e);
            }
        }
    }
}
