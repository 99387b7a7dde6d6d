//! The scores (below the model panel): ACC / NMI ± std over the k-means restarts,
//! classification accuracy and macro-F1, triplets kept, the confusion matrix as a heatmap.
//! Their text is prepared once per evaluation ([`Scores::of`]); drawing only lays it out.

use eframe::egui;

use crate::engine::data::Dataset;
use crate::engine::eval::{ClusterMethod, ConfusionMatrix, MeanStd, SvmScaling};
use crate::gui::state::{Evaluation, Session, Settings};
use crate::gui::style::{ERROR_RED, displayable};
use crate::gui::view::scatter_cache::PALETTE;
use egui::{Color32, DragValue, RichText};
use std::sync::Arc;

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

/// The scores of one evaluation, as the panel shows them.
pub struct Scores {
    /// The evaluation they were prepared from (held, so that a later one at the same address
    /// cannot be mistaken for it).
    pub of: Arc<Evaluation>,
    /// "Run 3: k-means c = 10, 50 restarts (0.21 s)".
    title: String,
    lines: Vec<String>,
    /// The evaluation's notes, with the characters the font lacks replaced.
    notes: Vec<String>,
}

impl Scores {
    /// Prepare the text of `ev` (`ctx` tells which characters the font has).
    pub fn of(ev: &Arc<Evaluation>, ctx: &egui::Context) -> Self {
        let method = match ev.cluster_method {
            ClusterMethod::Kmeans => {
                format!("k-means c = {}, {} restarts", ev.n_clusters, ev.restarts)
            }
            ClusterMethod::Model => "the model's own clusters".to_owned(),
        };
        Self {
            of: Arc::clone(ev),
            title: format!("Run {}: {method} ({:.2} s)", ev.run, ev.seconds),
            lines: metric_lines(ev),
            notes: ev.notes.iter().map(|n| displayable(ctx, n)).collect(),
        }
    }
}

/// The panel: the scoring settings, the evaluation under way, and the prepared `scores` of
/// the evaluation on screen.
pub fn show(
    ui: &mut egui::Ui,
    settings: &mut Settings,
    session: &Session,
    scores: Option<&Scores>,
) {
    ui.heading("Results");
    ui.horizontal(|ui| {
        let l = ui.label("k-means restarts");
        ui.add(DragValue::new(&mut settings.kmeans_restarts).range(1..=MAX_RESTARTS))
            .labelled_by(l.id)
            .on_hover_text("Restarts of k-means on H after each run (docs/models.md §8.2 uses 50)");
    });
    svm_scaling(ui, settings);
    if let Some(run) = session.evaluating {
        ui.horizontal(|ui| {
            ui.spinner();
            let done = session.eval_progress.fraction();
            ui.label(format!("Evaluating run {run}… {:.0} %", 100.0 * done));
        });
    }
    match scores {
        Some(s) => evaluation(ui, s, session.dataset.as_deref()),
        None if session.evaluating.is_none() => {
            ui.label(RichText::new("Scores appear here when a run finishes.").weak());
        }
        None => {}
    }
}

/// The "SVM features" choice.
fn svm_scaling(ui: &mut egui::Ui, settings: &mut Settings) {
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
}

fn evaluation(ui: &mut egui::Ui, s: &Scores, data: Option<&Dataset>) {
    ui.label(RichText::new(&s.title).weak());
    if s.lines.is_empty() {
        ui.label(RichText::new("No ground-truth labels and no triplets: nothing to score.").weak());
    }
    for line in &s.lines {
        ui.label(line);
    }
    for note in &s.notes {
        ui.label(RichText::new(note).color(ERROR_RED));
    }
    let ev = &s.of;
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
