//! Convergence plot: objective (and each term when there are several) vs iteration, live,
//! optionally on a log10 axis, decimated above a few thousand points.

use eframe::egui;

use crate::gui::run_controller::RunController;
use crate::gui::state::{Series, Session, Settings};
use egui::RichText;
use egui_plot::{GridMark, Legend, Line, Plot, PlotPoint, PlotPoints, VLine};

/// Stage and round boundaries of a multi-stage model.
const PHASE_COLOUR: egui::Color32 = egui::Color32::from_gray(140);
/// The current run's total objective.
const CURRENT_TOTAL: egui::Color32 = egui::Color32::from_rgb(31, 119, 180);
/// The current run's terms: colours the overlay and the total never use.
const TERM_COLOURS: [egui::Color32; 5] = [
    egui::Color32::from_rgb(148, 103, 189),
    egui::Color32::from_rgb(227, 119, 194),
    egui::Color32::from_rgb(188, 189, 34),
    egui::Color32::from_rgb(23, 190, 207),
    egui::Color32::from_rgb(140, 86, 75),
];
/// The two ticked runs of the overlay, dashed.
const OVERLAY: [egui::Color32; 2] = [
    egui::Color32::from_rgb(255, 127, 14),
    egui::Color32::from_rgb(44, 160, 44),
];

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

/// Grid marks of the log10 axis over `bounds` (log10 units): decades (every d-th when there
/// are many), with 2× and 5× between them when fewer than three decades show, and round
/// values in value space when less than one does, so that every label is a distinct number.
pub fn log_axis_marks(bounds: (f64, f64)) -> Vec<GridMark> {
    let (lo, hi) = (bounds.0.min(bounds.1), bounds.0.max(bounds.1));
    if !(lo.is_finite() && hi.is_finite()) {
        return Vec::new();
    }
    let span = hi - lo;
    let mut marks = Vec::new();
    if span < 1.0 {
        // Round numbers in value space: a 1-2-5 step giving 3–8 marks.
        let (a, b) = (10f64.powf(lo), 10f64.powf(hi));
        let raw = (b - a) / 5.0;
        let mag = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0]
            .into_iter()
            .map(|f| f * mag)
            .find(|&s| (b - a) / s <= 8.0)
            .unwrap_or(10.0 * mag);
        // Multiples of the step by index (no accumulated rounding).
        let first = (a / step).ceil() as i64;
        for i in first..first + 20 {
            let v = i as f64 * step;
            if v > b {
                break;
            }
            if v > 0.0 {
                marks.push(GridMark {
                    value: v.log10(),
                    step_size: span / 4.0,
                });
            }
        }
        return marks;
    }
    let every = (span / 8.0).ceil().max(1.0) as i64;
    let (first, last) = (lo.floor() as i64, hi.ceil() as i64);
    for d in first..=last {
        if d.rem_euclid(every) == 0 {
            marks.push(GridMark {
                value: d as f64,
                step_size: every as f64,
            });
        }
        if span < 3.0 {
            for f in [2f64, 5.0] {
                marks.push(GridMark {
                    value: d as f64 + f.log10(),
                    step_size: 0.3,
                });
            }
        }
    }
    marks.retain(|m| m.value >= lo - 1e-9 && m.value <= hi + 1e-9);
    marks
}

/// The label of a log10-axis mark at `v`: 10^v with the fewest significant digits (up to
/// four) that spell it, so neighbouring marks never print the same text.
pub fn log_tick_label(v: f64) -> String {
    let x = 10f64.powf(v);
    for digits in 0..4 {
        let s = format!("{x:.digits$e}");
        if s.parse::<f64>()
            .is_ok_and(|y| (y - x).abs() <= 1e-6 * x.abs())
        {
            return s;
        }
    }
    format!("{x:.3e}")
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
            .y_grid_spacer(|input| log_axis_marks(input.bounds))
            .y_axis_formatter(|mark: GridMark, _range| log_tick_label(mark.value))
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
                .color(CURRENT_TOTAL)
                .width(2.0)
                .id("total"),
        );
        if let Some(runs) = session.overlay(selected_runs) {
            for (r, colour) in runs.iter().zip(OVERLAY) {
                plot_ui.line(
                    Line::new(
                        format!("run {} ({}, {})", r.id, r.model, r.dataset),
                        decimated(pick(&r.curve, log)),
                    )
                    .color(colour)
                    .width(1.5)
                    .style(egui_plot::LineStyle::dashed_loose())
                    .id(("overlay", r.id)),
                );
            }
        }
        // Stage and round boundaries of a multi-stage model (2-STGINMF), after the first.
        for &(t, phase) in conv.phases.iter().skip(1) {
            let name = if phase.stage == 1 {
                format!("round {} starts", phase.round)
            } else {
                format!("stage {}", phase.stage)
            };
            plot_ui.vline(
                VLine::new(name, t as f64 - 0.5)
                    .color(PHASE_COLOUR)
                    .style(egui_plot::LineStyle::dotted_dense())
                    .id(("phase", t)),
            );
        }
        if conv.terms.len() > 1 {
            for ((name, series), colour) in conv.terms.iter().zip(TERM_COLOURS.iter().cycle()) {
                plot_ui.line(
                    Line::new(name.as_str(), decimated(pick(series, log)))
                        .color(*colour)
                        .id(("term", name)),
                );
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(bounds: (f64, f64)) -> Vec<String> {
        log_axis_marks(bounds)
            .iter()
            .map(|m| log_tick_label(m.value))
            .collect()
    }

    /// Distinct labels at every zoom: many decades (every d-th), a few decades (with 2× and
    /// 5×), less than one decade (round values), and the labels spell the values.
    #[test]
    fn log_axis_labels_are_distinct_and_readable() {
        assert_eq!(labels((-0.5, 2.5)), vec!["1e0", "1e1", "1e2"]);
        assert_eq!(
            labels((-0.5, 1.9)),
            vec!["5e-1", "1e0", "2e0", "5e0", "1e1", "2e1", "5e1"]
        );
        let many = labels((-300.0, 2.0));
        assert!(many.len() <= 10 && many.len() >= 3, "{many:?}");
        for b in [(-300.0, 2.0), (0.69, 1.35), (0.7, 0.72), (-3.0, 1.0)] {
            let l = labels(b);
            let mut d = l.clone();
            d.dedup();
            assert_eq!(d, l, "{b:?}");
            assert!(!l.is_empty(), "{b:?}");
        }
        // 10^0.69 ≈ 4.9 … 10^1.35 ≈ 22.4: less than one decade, steps of 5 in value space.
        assert_eq!(labels((0.69, 1.35)), vec!["5e0", "1e1", "1.5e1", "2e1"]);
        // 10^0.7 ≈ 5.01 … 10^0.72 ≈ 5.25: round values in value space.
        assert_eq!(
            labels((0.7, 0.72)),
            vec!["5.05e0", "5.1e0", "5.15e0", "5.2e0"]
        );
        assert_eq!(log_tick_label(1.0), "1e1");
        assert_eq!(log_tick_label(2f64.log10()), "2e0");
    }
}
