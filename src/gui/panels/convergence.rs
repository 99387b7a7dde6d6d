//! Convergence plot: objective (and each term when there are several) vs iteration, live,
//! optionally on a log10 axis, decimated above a few thousand points.

use eframe::egui;

use crate::gui::run_controller::RunController;
use crate::gui::state::{Series, Session, Settings};
use egui::RichText;
use egui_plot::{GridMark, Legend, Line, Plot, PlotPoint, PlotPoints};

/// Above this many points a line is drawn from every k-th point (plus the last).
pub const MAX_POINTS: usize = 5000;

/// The points to draw: borrowed when short, decimated otherwise.
pub fn decimated(points: &[PlotPoint]) -> PlotPoints<'_> {
    if points.len() <= MAX_POINTS {
        return PlotPoints::Borrowed(points);
    }
    let step = points.len().div_ceil(MAX_POINTS);
    let mut out: Vec<PlotPoint> = points.iter().step_by(step).copied().collect();
    if let Some(&last) = points.last()
        && out.last() != Some(&last)
    {
        out.push(last);
    }
    PlotPoints::Owned(out)
}

fn pick(s: &Series, log: bool) -> &[PlotPoint] {
    if log { &s.log10 } else { &s.linear }
}

pub fn show(
    ui: &mut egui::Ui,
    settings: &mut Settings,
    session: &Session,
    run: &RunController,
    selected_runs: &[u64],
) {
    let conv = &run.convergence;
    ui.horizontal(|ui| {
        ui.label(RichText::new("Convergence").strong());
        ui.checkbox(&mut settings.log_y, "log y");
        if !conv.total.is_empty() {
            ui.label(RichText::new(format!("{} iterations", conv.total.len())).weak());
        }
        if let Some([a, b]) = session.overlay(selected_runs) {
            ui.label(RichText::new(format!("overlay: run {} and run {}", a.id, b.id)).weak());
        }
    });
    if conv.total.is_empty() && session.overlay(selected_runs).is_none() {
        ui.label(
            RichText::new("The objective per iteration appears here while a model runs.").weak(),
        );
        // Keep the panel's size while empty.
        ui.allocate_space(ui.available_size());
        return;
    }
    let log = settings.log_y;
    let mut plot = Plot::new("convergence")
        .legend(Legend::default())
        .x_axis_label("iteration")
        .y_axis_label(if log { "objective (log)" } else { "objective" })
        .allow_scroll(false);
    if log {
        plot = plot
            .y_axis_formatter(|mark: GridMark, _range| format!("{:.0e}", 10f64.powf(mark.value)))
            .label_formatter(|pos| match pos {
                egui_plot::HoverPosition::NearDataPoint {
                    plot_name,
                    position,
                    ..
                } => Some(format!(
                    "{plot_name}\niteration {:.0}\n{}",
                    position.x,
                    crate::gui::format::format_value(10f64.powf(position.y))
                )),
                egui_plot::HoverPosition::Elsewhere { .. } => None,
            });
    }
    plot.show(ui, |plot_ui| {
        plot_ui.line(
            Line::new("total", decimated(pick(&conv.total, log)))
                .width(2.0)
                .id("total"),
        );
        if let Some(runs) = session.overlay(selected_runs) {
            for (r, colour) in runs.iter().zip([
                egui::Color32::from_rgb(255, 127, 14),
                egui::Color32::from_rgb(44, 160, 44),
            ]) {
                plot_ui.line(
                    Line::new(
                        format!("run {} ({})", r.id, r.model),
                        decimated(pick(&r.curve, log)),
                    )
                    .color(colour)
                    .width(1.5)
                    .id(("overlay", r.id)),
                );
            }
        }
        if conv.terms.len() > 1 {
            for (name, series) in &conv.terms {
                plot_ui.line(
                    Line::new(name.as_str(), decimated(pick(series, log))).id(("term", name)),
                );
            }
        }
    });
}
