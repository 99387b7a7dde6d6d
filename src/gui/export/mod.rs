//! Exports of the shown run: "Export run…" writes its factors, labels and predictions
//! ([`run`]); "Save figures" draws the scatter, the curves, the gallery and the confusion
//! matrix as shown ([`figures`]). Both write on a background task; the two rows under the
//! run history are drawn here.

mod figures;
mod run;

pub use figures::{FigureJob, FiguresSaved, GalleryInput, scatter_figure};
pub use run::{ExportJob, Exported};

use crate::figures::Format;
use crate::gui::command::Addressed;
use crate::gui::feature::{Feature, Place, Shared, TaskPanicked};
use crate::gui::style::right_aligned;
use eframe::egui;
use std::any::Any;
use std::path::PathBuf;

/// What the export rows ask for.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Write the shown (or last) run's H, W, labels and predictions as CSV and `.npy` into
    /// this folder.
    ExportRun(PathBuf),
    /// Draw the figures as they are shown into this folder, as PNG or SVG.
    SaveFigures(PathBuf, Format),
}

impl Addressed for Command {
    const FEATURE: &'static str = "export";
}

/// The export rows' state: the typed folder, the figure format, what is being written.
pub struct Exports {
    /// Folder typed for "Export run…" and "Save figures".
    pub dir_input: String,
    /// The format "Save figures" writes.
    pub figure_format: Format,
    /// The run being exported on a background thread, if any.
    pub exporting: Option<u64>,
    /// "Save figures" is drawing on a background thread.
    pub saving_figures: bool,
}

impl Default for Exports {
    fn default() -> Self {
        Self {
            dir_input: String::new(),
            figure_format: Format::Png,
            exporting: None,
            saving_figures: false,
        }
    }
}

impl Feature for Exports {
    fn name(&self) -> &'static str {
        <Command as Addressed>::FEATURE
    }

    fn on_message(&mut self, msg: Box<dyn Any + Send>, app: &mut Shared<'_>) {
        let msg = match msg.downcast::<Command>() {
            Ok(cmd) => {
                return match *cmd {
                    Command::ExportRun(dir) => self.export_run(&dir, app),
                    Command::SaveFigures(dir, format) => self.save_figures(&dir, format, app),
                };
            }
            Err(msg) => msg,
        };
        let msg = match msg.downcast::<Exported>() {
            Ok(done) => return self.exported(*done, app),
            Err(msg) => msg,
        };
        let msg = match msg.downcast::<FiguresSaved>() {
            Ok(done) => return self.figures_saved(*done, app),
            Err(msg) => msg,
        };
        if let Ok(p) = msg.downcast::<TaskPanicked>() {
            self.exporting = None;
            self.saving_figures = false;
            app.session.set_error(format!(
                "The export task stopped unexpectedly (a bug: please report it): {}",
                p.0
            ));
        }
    }

    fn ui(&mut self, place: Place, ui: &mut egui::Ui, app: &mut Shared<'_>) {
        if place == Place::History {
            self.rows(ui, app);
        }
    }

    crate::feature_any!();
}

impl Exports {
    /// "Export folder […] Export run…" and "Figures ○PNG ○SVG Save figures".
    fn rows(&mut self, ui: &mut egui::Ui, app: &mut Shared<'_>) {
        if app.session.history.is_empty() {
            return; // drawn under the history table, which is empty
        }
        ui.horizontal(|ui| {
            let l = ui.label("Export folder");
            right_aligned(ui, |ui| {
                self.export_run_button(ui, app);
                ui.add(
                    egui::TextEdit::singleline(&mut self.dir_input)
                        .desired_width(f32::INFINITY)
                        .hint_text("results/run"),
                )
                .labelled_by(l.id);
            });
        });
        ui.horizontal(|ui| {
            ui.label("Figures");
            for (format, name) in [(Format::Png, "PNG"), (Format::Svg, "SVG")] {
                ui.radio_value(&mut self.figure_format, format, name);
            }
            let ready = app.session.dataset.is_some() && !self.saving_figures;
            if ui
                .add_enabled(ready, egui::Button::new("Save figures"))
                .on_hover_text(
                    "Draw the scatter, the convergence plot, the basis gallery and the confusion \
                     matrix as shown into the export folder (scatter.png, convergence.png, \
                     gallery.png, confusion.png; or .svg)",
                )
                .clicked()
            {
                app.commands.send(Command::SaveFigures(
                    PathBuf::from(self.dir_input.trim()),
                    self.figure_format,
                ));
            }
            if self.saving_figures {
                ui.spinner();
            }
        });
    }

    /// "Export run…" (with a spinner while an export runs): the shown run into the typed
    /// folder.
    fn export_run_button(&self, ui: &mut egui::Ui, app: &mut Shared<'_>) {
        if self.exporting.is_some() {
            ui.spinner();
        }
        let ready = !app.session.history.is_empty() && self.exporting.is_none();
        if ui
            .add_enabled(ready, egui::Button::new("Export run…"))
            .on_hover_text(
                "Write the shown run (else the last) into the typed folder, as run --out does: \
                 H and W (CSV and .npy), clusters.csv, labels.csv/.npy (truth, painted, \
                 cluster per sample) and a classifier's predictions.csv/.npy",
            )
            .clicked()
        {
            app.commands
                .send(Command::ExportRun(PathBuf::from(self.dir_input.trim())));
        }
    }
}
