//! The "Scan k" window (docs/models.md §8.6): k from / to, repeats, the current model, Start
//! or Cancel, progress, and the curves vs k as the ranks finish: relative reconstruction
//! error, ACC and NMI (labelled data), and the cophenetic correlation of the consensus
//! matrix. "Use k = …" sets the model's k. The scan itself runs on its own thread
//! ([`super::scan`]); this only draws.

use eframe::egui;
use egui::{DragValue, RichText};
use egui_plot::{Legend, Line, Plot, PlotPoints, Points};

use super::{Command, KScan};
use crate::gui::command::Commands;
use crate::gui::run_controller::RunController;
use crate::gui::shared::Shared;
use crate::gui::state::{Session, Settings};
use crate::gui::style::ERROR_RED;

/// Height of each of the three plots.
const PLOT_HEIGHT: f32 = 110.0;

pub fn window(ctx: &egui::Context, app: &mut Shared<'_>, scan: &mut KScan) {
    let mut open = scan.show;
    let (settings, session, run, cmds) =
        (&*app.settings, &*app.session, &*app.run, &mut *app.commands);
    egui::Window::new("Scan k")
        .open(&mut open)
        .default_width(380.0)
        .default_pos(ctx.content_rect().right_top() + egui::vec2(-760.0, 40.0))
        .collapsible(false)
        .show(ctx, |ui| body(ui, settings, session, run, scan, cmds));
    scan.show = open;
}

fn body(
    ui: &mut egui::Ui,
    settings: &Settings,
    session: &Session,
    run: &RunController,
    scan: &mut KScan,
    cmds: &mut Commands,
) {
    model_line(ui, settings);
    let cap = session
        .dataset
        .as_ref()
        .map_or(100, |d| d.m().min(d.n()).max(1));
    let running = scan.is_running();
    ui.add_enabled_ui(!running, |ui| range_form(ui, scan, cap));
    start_row(ui, session, run, scan, cmds);
    match &scan.outcome {
        Some(Ok(msg)) => {
            ui.label(RichText::new(msg).weak());
        }
        Some(Err(e)) => {
            ui.label(RichText::new(e).color(ERROR_RED));
        }
        None => {}
    }
    if !scan.what.is_empty() && (running || !scan.rows.is_empty()) {
        ui.label(
            RichText::new(format!("Scanned: {}", scan.what))
                .weak()
                .small(),
        );
    }
    if scan.rows.is_empty() {
        return;
    }
    plots(ui, scan);
    use_buttons(ui, scan, cmds);
    for r in &scan.rows {
        for e in &r.errors {
            ui.label(
                RichText::new(format!("k = {}: {e}", r.k))
                    .color(ERROR_RED)
                    .small(),
            );
        }
    }
}

/// The model the scan fits: the model panel's, with its parameters, seed and cap.
fn model_line(ui: &mut egui::Ui, settings: &Settings) {
    let model = settings.model_spec().map_or_else(
        || "no model".to_owned(),
        |spec| {
            let params = spec.params_string(", ");
            format!(
                "{} ({}), seed {}, at most {} iterations",
                spec.kind.label(),
                if params.is_empty() {
                    "default parameters"
                } else {
                    params.as_str()
                },
                spec.seed,
                settings.max_iter
            )
        },
    );
    ui.label(format!("Model: {model}"))
        .on_hover_text("The model panel's model, parameters, seed and stopping rule");
}

/// k from, to, and repeats (k at most `cap`).
fn range_form(ui: &mut egui::Ui, scan: &mut KScan, cap: usize) {
    ui.horizontal(|ui| {
        let l = ui.label("k from");
        ui.add(
            DragValue::new(&mut scan.form.from)
                .range(1..=cap)
                .speed(0.05),
        )
        .labelled_by(l.id);
        let l = ui.label("to");
        ui.add(DragValue::new(&mut scan.form.to).range(1..=cap).speed(0.05))
            .labelled_by(l.id);
        let l = ui.label("repeats");
        ui.add(
            DragValue::new(&mut scan.form.repeats)
                .range(1..=100)
                .speed(0.05),
        )
        .labelled_by(l.id)
        .on_hover_text(
            "Seeds per k; the cophenetic correlation compares their clusterings (at least 2)",
        );
    });
}

/// Start (or Cancel while running) and the scan's progress.
fn start_row(
    ui: &mut egui::Ui,
    session: &Session,
    run: &RunController,
    scan: &KScan,
    cmds: &mut Commands,
) {
    let running = scan.is_running();
    ui.horizontal(|ui| {
        if running {
            if ui.button("Cancel scan").clicked() {
                cmds.send(Command::Cancel);
            }
        } else {
            let busy = run.worker.is_active();
            let start = ui
                .add_enabled(
                    !busy && session.dataset.is_some(),
                    egui::Button::new("Start scan"),
                )
                .on_hover_text("Fit the model at every k, `repeats` seeds each, off the UI thread")
                .on_disabled_hover_text("A run is active: stop it or let it finish first");
            if start.clicked() {
                cmds.send(Command::Start);
            }
        }
        if let Some(p) = scan.progress_text() {
            ui.spinner();
            ui.label(p);
        }
    });
}

/// "Use: k = 2 … k = 10": set the model's k to a scanned one.
fn use_buttons(ui: &mut egui::Ui, scan: &KScan, cmds: &mut Commands) {
    ui.horizontal_wrapped(|ui| {
        ui.label("Use:");
        for r in &scan.rows {
            let b = ui
                .button(format!("k = {}", r.k))
                .accessible_name(format!("Use k = {}", r.k))
                .on_hover_text(format!(
                    "Set the model's k to {} ({} runs{})",
                    r.k,
                    r.runs,
                    r.cophenetic
                        .map_or_else(String::new, |c| format!(", cophenetic {c:.3}"))
                ));
            if b.clicked() {
                cmds.send(Command::UseK(r.k));
            }
        }
    });
}

/// Three small plots sharing the k axis: error, ACC/NMI (when labelled), cophenetic.
fn plots(ui: &mut egui::Ui, scan: &KScan) {
    let c = scan.curves();
    let (lo, hi) = (
        scan.ks.first().copied().unwrap_or(1) as f64,
        scan.ks.last().copied().unwrap_or(1) as f64,
    );
    let small = |id: &str, y: &str| {
        Plot::new(("kscan", id.to_owned()))
            .height(PLOT_HEIGHT)
            .x_axis_label("k")
            .y_axis_label(y.to_owned())
            .include_x(lo - 0.2)
            .include_x(hi + 0.2)
            .allow_drag(false)
            .allow_zoom(false)
            .allow_scroll(false)
            .allow_double_click_reset(false)
    };
    let series = |p: &mut egui_plot::PlotUi<'_>, name: &str, pts: &[[f64; 2]], color| {
        p.line(Line::new(name.to_owned(), PlotPoints::from(pts.to_vec())).color(color));
        p.points(
            Points::new(name.to_owned(), PlotPoints::from(pts.to_vec()))
                .color(color)
                .radius(3.0),
        );
    };
    let blue = egui::Color32::from_rgb(70, 130, 220);
    let orange = egui::Color32::from_rgb(230, 140, 40);
    let green = egui::Color32::from_rgb(70, 170, 90);
    if !c.error.is_empty() {
        small("error", "relative error").show(ui, |p| series(p, "relative error", &c.error, blue));
    }
    if !c.acc.is_empty() || !c.nmi.is_empty() {
        // The axis follows the scores (0.62–0.71 on a 0–1 axis is a flat line).
        small("scores", "score")
            .legend(Legend::default())
            .show(ui, |p| {
                series(p, "ACC", &c.acc, orange);
                series(p, "NMI", &c.nmi, green);
            });
    }
    small("cophenetic", "cophenetic")
        .include_y(1.0)
        .show(ui, |p| series(p, "cophenetic", &c.cophenetic, blue));
}
