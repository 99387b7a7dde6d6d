//! Convergence plot: objective (and each term when there are several) vs iteration, live,
//! optionally on a log10 axis, decimated above a few thousand points.

use eframe::egui;

use crate::gui::run_controller::RunController;
use crate::gui::state::{Series, Session, Settings};
use egui::RichText;
use egui_plot::{GridMark, Line, Plot, PlotPoint, PlotPoints, VLine};

/// Stage and round boundaries of a multi-stage model.
const PHASE_COLOUR: egui::Color32 = egui::Color32::from_gray(140);
/// The current run's total objective.
const CURRENT_TOTAL: egui::Color32 = egui::Color32::from_rgb(31, 119, 180);
/// The current run's terms: colours the overlay and the total never use, and far apart from
/// each other (a model's reconstruction and ranking terms come first and second by name in
/// most models, so the first two are red and yellow-green, never two near purples).
const TERM_COLOURS: [egui::Color32; 5] = [
    egui::Color32::from_rgb(214, 39, 40),
    egui::Color32::from_rgb(188, 189, 34),
    egui::Color32::from_rgb(148, 103, 189),
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
/// four) that spell it, so neighbouring marks never print the same text; plain between 0.001
/// and 100 000 ("1", "20", "0.5"), scientific outside ("1e-5").
pub fn log_tick_label(v: f64) -> String {
    use crate::gui::format::short_number;
    let x = 10f64.powf(v);
    for digits in 1..=4 {
        let s = short_number(x, digits);
        if s.parse::<f64>()
            .is_ok_and(|y| (y - x).abs() <= 1e-6 * x.abs())
        {
            return s;
        }
    }
    short_number(x, 4)
}

fn pick(s: &Series, log: bool) -> &[PlotPoint] {
    if log { &s.log10 } else { &s.linear }
}

/// The points of `s` to draw: decimated, and with `normalise` divided by the first value
/// (on the log axis: shifted by its logarithm). A series whose first value is zero or not
/// finite is drawn as it is.
pub fn prepared(s: &Series, log: bool, normalise: bool) -> PlotPoints<'_> {
    let points = decimated(pick(s, log));
    if !normalise {
        return points;
    }
    let first = pick(s, log).first().map(|p| p.y);
    let rescale: Option<Box<dyn Fn(f64) -> f64>> = match first {
        Some(f) if log && f.is_finite() => Some(Box::new(move |y| y - f)),
        Some(f) if !log && f.is_finite() && f != 0.0 => Some(Box::new(move |y| y / f)),
        _ => None,
    };
    let Some(rescale) = rescale else {
        return points;
    };
    PlotPoints::Owned(
        points
            .points()
            .iter()
            .map(|p| PlotPoint::new(p.x, rescale(p.y)))
            .collect(),
    )
}

/// One drawn curve and its legend entry.
struct Curve<'a> {
    name: String,
    colour: egui::Color32,
    dashed: bool,
    width: f32,
    series: &'a Series,
    /// The line's id in the plot (stable across frames).
    id: String,
}

/// The curves on the plot: the shown run's total and terms, then the two ticked runs.
fn curves<'a>(
    conv: &'a crate::gui::state::Convergence,
    overlay: Option<[&'a crate::gui::state::HistoryRow; 2]>,
) -> Vec<Curve<'a>> {
    let mut out = Vec::new();
    if !conv.total.is_empty() {
        out.push(Curve {
            name: "total".to_owned(),
            colour: CURRENT_TOTAL,
            dashed: false,
            width: 2.0,
            series: &conv.total,
            id: "total".to_owned(),
        });
    }
    if conv.terms.len() > 1 {
        for ((name, series), colour) in conv.terms.iter().zip(TERM_COLOURS.iter().cycle()) {
            out.push(Curve {
                name: name.clone(),
                colour: *colour,
                dashed: false,
                width: 1.5,
                series,
                id: format!("term {name}"),
            });
        }
    }
    for (r, colour) in overlay.into_iter().flatten().zip(OVERLAY) {
        out.push(Curve {
            name: format!("run {} ({}, {})", r.id, r.model, r.dataset),
            colour,
            dashed: true,
            width: 1.5,
            series: &r.curve,
            id: format!("overlay {}", r.id),
        });
    }
    out
}

/// The legend, above the plot so that it never covers a curve: a short line in each curve's
/// colour and style, then its name.
fn legend(ui: &mut egui::Ui, curves: &[Curve<'_>]) {
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 4.0;
        for c in curves {
            let (rect, _) = ui.allocate_exact_size(egui::vec2(18.0, 10.0), egui::Sense::hover());
            let stroke = egui::Stroke::new(c.width.max(2.0), c.colour);
            let (l, r, y) = (rect.left(), rect.right(), rect.center().y);
            if c.dashed {
                let painter = ui.painter();
                painter.line_segment([egui::pos2(l, y), egui::pos2(l + 6.0, y)], stroke);
                painter.line_segment([egui::pos2(r - 6.0, y), egui::pos2(r, y)], stroke);
            } else {
                ui.painter()
                    .line_segment([egui::pos2(l, y), egui::pos2(r, y)], stroke);
            }
            ui.label(RichText::new(&c.name).small());
            ui.add_space(6.0);
        }
    });
}

pub fn show(
    ui: &mut egui::Ui,
    settings: &mut Settings,
    session: &Session,
    run: &RunController,
    selected_runs: &[u64],
) {
    let conv = &run.convergence;
    let overlay = session.overlay(selected_runs);
    ui.horizontal(|ui| {
        ui.label(RichText::new("Convergence").strong());
        ui.checkbox(&mut settings.log_y, "log y");
        ui.checkbox(&mut settings.normalise_curves, "÷ first value")
            .on_hover_text(
                "Divide every curve by its first value, so that objectives of very different \
                 scales (FNMF ~1e-5, NMF ~5) compare on one axis",
            );
        if !conv.total.is_empty() {
            let iterations =
                crate::gui::format::counted(conv.total.len(), "iteration", "iterations");
            let of = session
                .shown_run
                .map_or_else(String::new, |id| format!("run {id}: "));
            ui.label(RichText::new(format!("{of}{iterations}")).weak());
        }
        if let Some([a, b]) = overlay {
            ui.label(RichText::new(format!("overlay: run {} and run {}", a.id, b.id)).weak());
        }
    });
    let curves = curves(conv, overlay);
    if curves.is_empty() {
        ui.label(
            RichText::new("The objective per iteration appears here while a model runs.").weak(),
        );
        // Keep the panel's size while empty.
        ui.allocate_space(ui.available_size());
        return;
    }
    legend(ui, &curves);
    let (log, normalise) = (settings.log_y, settings.normalise_curves);
    let y_label = match (log, normalise) {
        (true, true) => "objective ÷ first (log)",
        (true, false) => "objective (log)",
        (false, true) => "objective ÷ first",
        (false, false) => "objective",
    };
    let mut plot = Plot::new("convergence")
        .x_axis_label("iteration")
        .y_axis_label(y_label)
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
        for c in &curves {
            let mut line = Line::new(c.name.as_str(), prepared(c.series, log, normalise))
                .color(c.colour)
                .width(c.width)
                .id(c.id.as_str());
            if c.dashed {
                line = line.style(egui_plot::LineStyle::dashed_loose());
            }
            plot_ui.line(line);
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
        assert_eq!(labels((-0.5, 2.5)), vec!["1", "10", "100"]);
        assert_eq!(
            labels((-0.5, 1.9)),
            vec!["0.5", "1", "2", "5", "10", "20", "50"]
        );
        assert_eq!(labels((-8.5, -4.5)), vec!["1e-8", "1e-7", "1e-6", "1e-5"]);
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
        assert_eq!(labels((0.69, 1.35)), vec!["5", "10", "15", "20"]);
        // 10^0.7 ≈ 5.01 … 10^0.72 ≈ 5.25: round values in value space.
        assert_eq!(labels((0.7, 0.72)), vec!["5.05", "5.1", "5.15", "5.2"]);
        assert_eq!(log_tick_label(1.0), "10");
        assert_eq!(log_tick_label(2f64.log10()), "2");
    }
}
