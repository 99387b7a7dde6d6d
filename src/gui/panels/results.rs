//! Results panel (below the model panel): ACC / NMI ± std over the k-means restarts,
//! classification accuracy and macro-F1, triplets kept, the confusion matrix as a heatmap, and
//! the run history table (select two runs to overlay their curves; export as CSV).

use crate::gui::style::right_aligned;
use eframe::egui;

use crate::engine::data::Dataset;
use crate::engine::eval::{ClusterMethod, ConfusionMatrix, MeanStd, SvmScaling};
use crate::gui::command::Commands;
use crate::gui::command::UiCommand;
use crate::gui::scatter_cache::PALETTE;
use crate::gui::state::{Evaluation, HistoryRow, Session, Settings};
use crate::gui::view::ViewState;
use egui::{Color32, DragValue, RichText};
use std::path::PathBuf;

/// Largest number of k-means restarts offered.
pub const MAX_RESTARTS: usize = 500;

/// "0.812 ± 0.034".
pub fn mean_std(m: &MeanStd) -> String {
    format!("{:.3} ± {:.3}", m.mean, m.std)
}

/// The text of each metric line, as the panel shows it (tests look them up by this text).
pub fn metric_lines(ev: &Evaluation) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(c) = &ev.clustering {
        lines.push(format!("ACC: {}", mean_std(&c.acc)));
        lines.push(format!("NMI (max): {}", mean_std(&c.nmi_max)));
        lines.push(format!("NMI (sqrt): {}", mean_std(&c.nmi_sqrt)));
        lines.push(format!("NMI (arith): {}", mean_std(&c.nmi_arith)));
    }
    if let Some(r) = &ev.classification {
        lines.push(format!("Classification ACC: {:.3}", r.accuracy));
        lines.push(format!("Macro-F1: {:.3}", r.macro_f1));
    }
    if let Some(s) = &ev.semi {
        lines.push(format!(
            "Given labels: {} of {} ({:.1} %); scored on the other {}",
            s.given,
            s.given + s.model.n,
            100.0 * s.train_share(),
            s.model.n
        ));
        lines.push(format!(
            "Model: accuracy {:.3}, macro-F1 {:.3}",
            s.model.accuracy, s.model.macro_f1
        ));
        for (what, b) in [("X", &s.svm_x), ("NMF's H", &s.svm_h)] {
            if let Some(b) = b {
                lines.push(format!(
                    "Linear SVM on {what}: accuracy {:.3}, macro-F1 {:.3}",
                    b.accuracy, b.macro_f1
                ));
            }
        }
    }
    if let Some(k) = ev.kept_h {
        lines.push(format!("Triplets kept: {}", crate::gui::format::percent(k)));
    }
    lines
}

pub fn show(ui: &mut egui::Ui, settings: &mut Settings, session: &Session) {
    ui.heading("Results");
    ui.horizontal(|ui| {
        let l = ui.label("k-means restarts");
        ui.add(DragValue::new(&mut settings.kmeans_restarts).range(1..=MAX_RESTARTS))
            .labelled_by(l.id)
            .on_hover_text("Restarts of k-means on H after each run (docs/models.md §8.2 uses 50)");
    });
    ui.horizontal(|ui| {
        let l = ui.label("SVM features");
        egui::ComboBox::from_id_salt("svm_scaling")
            .selected_text(settings.svm.name())
            .show_ui(ui, |ui| {
                for (s, help) in [
                    (
                        SvmScaling::Standardized,
                        "Each feature of H to z-scores by the training samples (StandardScaler + \
                         linear SVM): the score does not depend on H's scale",
                    ),
                    (
                        SvmScaling::Raw,
                        "H as it is: the RPNMF paper's protocol (its Table 2)",
                    ),
                ] {
                    ui.selectable_value(&mut settings.svm, s, s.name())
                        .on_hover_text(help);
                }
            })
            .response
            .labelled_by(l.id);
    });
    if let Some(run) = session.evaluating {
        ui.horizontal(|ui| {
            ui.spinner();
            let done = session.eval_progress.fraction();
            ui.label(format!("Evaluating run {run}… {:.0} %", 100.0 * done));
        });
    }
    match session.evaluation.clone() {
        Some(ev) => evaluation(ui, &ev, session.dataset.as_deref()),
        None if session.evaluating.is_none() => {
            ui.label(RichText::new("Scores appear here when a run finishes.").weak());
        }
        None => {}
    }
}

fn evaluation(ui: &mut egui::Ui, ev: &Evaluation, data: Option<&Dataset>) {
    ui.label(
        RichText::new(format!(
            "Run {}: {} ({:.2} s)",
            ev.run,
            match ev.cluster_method {
                ClusterMethod::Kmeans => {
                    format!("k-means c = {}, {} restarts", ev.n_clusters, ev.restarts)
                }
                ClusterMethod::Model => "the model's own clusters".to_owned(),
            },
            ev.seconds
        ))
        .weak(),
    );
    let lines = metric_lines(ev);
    if lines.is_empty() {
        ui.label(RichText::new("No ground-truth labels and no triplets: nothing to score.").weak());
    }
    for line in lines {
        ui.label(line);
    }
    for note in &ev.notes {
        ui.label(RichText::new(super::displayable(ui.ctx(), note)).color(super::ERROR_RED));
    }
    if let Some(cm) = ev
        .semi
        .as_ref()
        .map(|s| &s.model.confusion)
        .or(ev.classification.as_ref().map(|r| &r.confusion))
    {
        ui.label(RichText::new("Confusion matrix (hover a cell)").weak());
        heatmap(ui, cm, data);
    }
}

/// Colour of a cell holding `v` of at most `max`: from the panel background to blue.
fn cell_colour(bg: Color32, v: usize, max: usize) -> Color32 {
    let t = if max == 0 { 0.0 } else { v as f32 / max as f32 };
    let hi = PALETTE[0];
    let mix = |a: u8, b: u8| (f32::from(a) + t * (f32::from(b) - f32::from(a))).round() as u8;
    Color32::from_rgb(
        mix(bg.r(), hi.r()),
        mix(bg.g(), hi.g()),
        mix(bg.b(), hi.b()),
    )
}

/// Room for the axis titles of the confusion matrix (points).
const AXIS_TITLE: f32 = 16.0;

/// Confusion matrix as painted rectangles under "predicted" and beside a vertical "true";
/// hovering a cell names the classes and the count.
fn heatmap(ui: &mut egui::Ui, cm: &ConfusionMatrix, data: Option<&Dataset>) {
    let c = cm.labels.len();
    if c == 0 {
        return;
    }
    let cell = ((ui.available_width() - AXIS_TITLE) / c as f32).clamp(4.0, 24.0);
    let side = cell * c as f32;
    let (outer, _) = ui.allocate_exact_size(
        egui::vec2(side + AXIS_TITLE, side + AXIS_TITLE),
        egui::Sense::hover(),
    );
    let rect = egui::Rect::from_min_size(
        outer.min + egui::vec2(AXIS_TITLE, AXIS_TITLE),
        egui::vec2(side, side),
    );
    axis_titles(ui, outer, rect);
    let response = ui.interact(
        rect,
        ui.scope_id().with("confusion_cells"),
        egui::Sense::hover(),
    );
    response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Image, true, "Confusion matrix"));
    let max = cm
        .counts
        .iter()
        .flat_map(|r| r.iter().copied())
        .max()
        .unwrap_or(0);
    let bg = ui.visuals().extreme_bg_color;
    let painter = ui.painter_at(rect);
    for (a, row) in cm.counts.iter().enumerate() {
        for (b, &v) in row.iter().enumerate() {
            let min = rect.min + egui::vec2(b as f32 * cell, a as f32 * cell);
            let r = egui::Rect::from_min_size(min, egui::vec2(cell, cell)).shrink(0.5);
            painter.rect_filled(r, 0.0, cell_colour(bg, v, max));
            if a == b {
                painter.rect_stroke(
                    r,
                    0.0,
                    egui::Stroke::new(1.0, ui.visuals().weak_text_color()),
                    egui::StrokeKind::Inside,
                );
            }
        }
    }
    let Some(pos) = response.hover_pos() else {
        return;
    };
    let rel = pos - rect.min;
    let (a, b) = ((rel.y / cell) as usize, (rel.x / cell) as usize);
    let (Some(row), Some(&ta), Some(&pb)) = (cm.counts.get(a), cm.labels.get(a), cm.labels.get(b))
    else {
        return;
    };
    let v = row.get(b).copied().unwrap_or(0);
    let name = |id: usize| {
        data.and_then(|d| d.class_names.get(id).cloned())
            .unwrap_or_else(|| format!("class {id}"))
    };
    response.on_hover_text_at_pointer(format!(
        "true: {}\npredicted: {}\n{v} samples",
        name(ta),
        name(pb)
    ));
}

/// "predicted" over the columns and "true" down the rows, in the weak text colour.
fn axis_titles(ui: &egui::Ui, outer: egui::Rect, cells: egui::Rect) {
    let painter = ui.painter();
    let font = egui::FontId::proportional(11.0);
    let colour = ui.visuals().weak_text_color();
    painter.text(
        egui::pos2(cells.left(), outer.top()),
        egui::Align2::LEFT_TOP,
        "predicted",
        font.clone(),
        colour,
    );
    let galley = painter.layout_no_wrap("true".to_owned(), font, colour);
    // Turned a quarter clockwise: reads downwards along the rows.
    let pos = egui::pos2(outer.left() + galley.size().y, cells.top());
    painter.add(
        egui::epaint::TextShape::new(pos, galley, colour).with_angle(std::f32::consts::FRAC_PI_2),
    );
}

fn fmt_opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |x| format!("{x:.3}"))
}

/// What a click in the history table asked for.
#[derive(Default)]
struct HistoryClicks {
    toggled: Option<u64>,
    shown: Option<u64>,
    continued: Option<u64>,
}

/// One row per finished run: the key columns (tick, #, model, ACC, NMI, show) fit the panel's
/// default width; a click on a row shows that run, and the shown run's other fields sit in a
/// details line below. Two ticked rows overlay their convergence curves. Drawn in its own
/// part at the foot of the right panel, so that it stays in view however long the model and
/// the scores above it are.
pub fn history(ui: &mut egui::Ui, session: &Session, view: &mut ViewState, cmds: &mut Commands) {
    ui.add_space(4.0);
    ui.label(RichText::new("Run history").strong());
    if session.history.is_empty() {
        ui.label(RichText::new("Every finished run of this session is listed here.").weak());
        return;
    }
    ui.label(
        RichText::new("Click a run to show it; tick two to overlay their curves and compare them.")
            .weak()
            .small(),
    );
    // A Grid, not egui_extras' TableBuilder: the table's own ScrollArea would swallow the
    // panel's scroll-into-view requests (egui takes scroll targets at the innermost area), so
    // keyboard and screen-reader navigation could not reach rows below the fold.
    let mut clicks = HistoryClicks::default();
    let here = session.dataset.as_ref().map(|d| d.fingerprint);
    egui::Grid::new("history_table")
        .striped(true)
        .num_columns(5)
        .spacing([6.0, 2.0])
        .show(ui, |ui| {
            for h in ["#", "Model", "ACC", "NMI", ""] {
                ui.strong(h);
            }
            ui.end_row();
            for r in &session.history {
                history_row(ui, session, view, r, here, &mut clicks);
                ui.end_row();
            }
        });
    if let Some(r) = session
        .shown_run
        .and_then(|id| session.history.iter().find(|r| r.id == id))
    {
        run_details(ui, r, here, &mut clicks);
    }
    if let Some(id) = clicks.toggled {
        view.toggle_run(id);
    }
    if let Some(id) = clicks.continued {
        cmds.push(UiCommand::ContinueRun(id));
    }
    if let Some(id) = clicks.shown {
        cmds.push(UiCommand::ShowRun(id));
    }
    ui.horizontal(|ui| {
        let l = ui.label("CSV path");
        right_aligned(ui, |ui| {
            if ui
                .button("Export CSV")
                .on_hover_text("Write the history table to the typed path")
                .clicked()
            {
                cmds.push(UiCommand::ExportHistory(PathBuf::from(
                    view.history_path_input.trim(),
                )));
            }
            ui.add(
                egui::TextEdit::singleline(&mut view.history_path_input)
                    .desired_width(f32::INFINITY)
                    .hint_text("runs.csv"),
            )
            .labelled_by(l.id);
        });
    });
}

/// One history row: the overlay tick with the run's number, then model, ACC and NMI (each a
/// click target that shows the run) and the "show" button.
fn history_row(
    ui: &mut egui::Ui,
    session: &Session,
    view: &ViewState,
    r: &HistoryRow,
    here: Option<crate::engine::data::Fingerprint>,
    clicks: &mut HistoryClicks,
) {
    let mut on = view.selected_runs.contains(&r.id);
    let other = r.data != here;
    let tick = ui
        .checkbox(&mut on, r.id.to_string())
        .on_hover_text("Tick two runs to overlay their convergence curves");
    tick.widget_info(|| {
        egui::WidgetInfo::selected(egui::Role::CheckBox, true, on, format!("run {}", r.id))
    });
    if tick.changed() {
        clicks.toggled = Some(r.id);
    }
    let shown = session.shown_run == Some(r.id);
    let cell = |text: String| {
        let t = RichText::new(text);
        let t = if shown { t.strong() } else { t };
        if other { t.weak().italics() } else { t }
    };
    let hint = if other {
        format!(
            "Run {} was fitted on {}, not on the loaded data",
            r.id, r.dataset
        )
    } else {
        format!("Click to show run {} ({}, {})", r.id, r.model, r.stop)
    };
    let mut row_clicked = false;
    for text in [r.model.clone(), fmt_opt(r.acc), fmt_opt(r.nmi)] {
        let resp = ui
            .add(egui::Label::new(cell(text)).sense(egui::Sense::click()))
            .on_hover_text(&hint);
        row_clicked |= resp.clicked();
    }
    let show = ui
        .add_enabled(!other, egui::Button::new("show").small().selected(shown))
        .on_hover_text(format!(
            "Bring run {}'s scatter, curves and scores back (its last frame)",
            r.id
        ))
        .on_disabled_hover_text(&hint);
    if (row_clicked && !other) || show.clicked() {
        clicks.shown = Some(r.id);
    }
}

/// The shown run's other fields (kept triplets, data, how it ended, parameters, seed,
/// iterations, time) and "continue".
fn run_details(
    ui: &mut egui::Ui,
    r: &HistoryRow,
    here: Option<crate::engine::data::Fingerprint>,
    clicks: &mut HistoryClicks,
) {
    use crate::gui::format::{counted, percent};
    let mut parts = vec![
        format!("Run {}: {}", r.id, r.model),
        r.params.clone(),
        format!("seed {}", r.seed),
        counted(r.iterations, "iteration", "iterations"),
        format!("{:.2} s", r.seconds),
        r.stop.clone(),
    ];
    if let Some(k) = r.kept {
        parts.push(format!("triplets kept {}", percent(k)));
    }
    parts.push(format!("data {}", r.dataset));
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(parts.join(" · ")).small());
        if ui
            .add_enabled(r.data == here, egui::Button::new("continue").small())
            .on_hover_text(format!(
                "Continue from this run: start the selected model from run {}'s W and H \
                 (k = {}), used exactly as they are (docs/models.md §10.6)",
                r.id, r.k
            ))
            .clicked()
        {
            clicks.continued = Some(r.id);
        }
    });
}
