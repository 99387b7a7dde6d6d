//! The run history table at the foot of the right panel: one row per finished run (a click
//! shows it; two ticked rows overlay their convergence curves), the shown run's details, and
//! the CSV export. Each row's text is prepared when the history changes ([`Row::of`]).

use eframe::egui;

use crate::engine::data::Fingerprint;
use crate::engine::machine::fsutil::write_atomic;
use crate::gui::command::Commands;
use crate::gui::evaluation::history_csv;
use crate::gui::format::{counted, percent};
use crate::gui::shared::Shared;
use crate::gui::state::{HistoryRow, Session};
use crate::gui::style::right_aligned;
use crate::gui::view::ViewState;
use egui::RichText;
use std::path::{Path, PathBuf};

/// One history row as the table draws it.
pub struct Row {
    id: u64,
    /// Fitted on other data than the loaded one (drawn faded; cannot be shown or continued).
    other: bool,
    /// Model, ACC and NMI.
    cells: [String; 3],
    /// The hover text of the cells.
    hint: String,
    /// The details line under the table while the run is shown.
    details: String,
    /// The "continue" button's hover text.
    continue_hint: String,
}

impl Row {
    /// The text of `r`, with the loaded dataset `here`.
    pub fn of(r: &HistoryRow, here: Option<Fingerprint>) -> Self {
        let other = r.data != here;
        let hint = if other {
            format!(
                "Run {} was fitted on {}, not on the loaded data",
                r.id, r.dataset
            )
        } else {
            format!("Click to show run {} ({}, {})", r.id, r.model, r.stop)
        };
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
        Self {
            id: r.id,
            other,
            cells: [r.model.clone(), fmt_opt(r.acc), fmt_opt(r.nmi)],
            hint,
            details: parts.join(" · "),
            continue_hint: format!(
                "Continue from this run: start the selected model from run {}'s W and H \
                 (k = {}), used exactly as they are (docs/models.md §10.6)",
                r.id, r.k
            ),
        }
    }
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
pub fn show(
    ui: &mut egui::Ui,
    session: &Session,
    rows: &[Row],
    path: &mut String,
    view: &mut ViewState,
    cmds: &mut Commands,
) {
    ui.add_space(4.0);
    ui.label(RichText::new("Run history").strong());
    if rows.is_empty() {
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
    egui::Grid::new("history_table")
        .striped(true)
        .num_columns(5)
        .spacing([6.0, 2.0])
        .show(ui, |ui| {
            for h in ["#", "Model", "ACC", "NMI", ""] {
                ui.strong(h);
            }
            ui.end_row();
            for r in rows {
                let shown = session.shown_run == Some(r.id);
                history_row(
                    ui,
                    r,
                    view.selected_runs.contains(&r.id),
                    shown,
                    &mut clicks,
                );
                ui.end_row();
            }
        });
    if let Some(r) = session
        .shown_run
        .and_then(|id| rows.iter().find(|r| r.id == id))
    {
        run_details(ui, r, &mut clicks);
    }
    if let Some(id) = clicks.toggled {
        view.toggle_run(id);
    }
    if let Some(id) = clicks.continued {
        cmds.send(crate::gui::runs::Command::Continue(id));
    }
    if let Some(id) = clicks.shown {
        cmds.send(crate::gui::runs::Command::Show(id));
    }
    export_row(ui, path, cmds);
}

/// The CSV path field and its "Export CSV" button.
fn export_row(ui: &mut egui::Ui, path: &mut String, cmds: &mut Commands) {
    ui.horizontal(|ui| {
        let l = ui.label("CSV path");
        right_aligned(ui, |ui| {
            if ui
                .button("Export CSV")
                .on_hover_text("Write the history table to the typed path")
                .clicked()
            {
                cmds.send(super::Command::Export(PathBuf::from(path.trim())));
            }
            ui.add(
                egui::TextEdit::singleline(path)
                    .desired_width(f32::INFINITY)
                    .hint_text("runs.csv"),
            )
            .labelled_by(l.id);
        });
    });
}

/// One history row: the overlay tick with the run's number, then model, ACC and NMI (each a
/// click target that shows the run) and the "show" button.
fn history_row(ui: &mut egui::Ui, r: &Row, ticked: bool, shown: bool, clicks: &mut HistoryClicks) {
    let mut on = ticked;
    let tick = ui
        .checkbox(&mut on, r.id.to_string())
        .on_hover_text("Tick two runs to overlay their convergence curves");
    tick.widget_info(|| {
        egui::WidgetInfo::selected(egui::Role::CheckBox, true, on, format!("run {}", r.id))
    });
    if tick.changed() {
        clicks.toggled = Some(r.id);
    }
    let cell = |text: &str| {
        let t = RichText::new(text);
        let t = if shown { t.strong() } else { t };
        if r.other { t.weak().italics() } else { t }
    };
    let mut row_clicked = false;
    for text in &r.cells {
        let resp = ui
            .add(egui::Label::new(cell(text)).sense(egui::Sense::click()))
            .on_hover_text(&r.hint);
        row_clicked |= resp.clicked();
    }
    let show = ui
        .add_enabled(!r.other, egui::Button::new("show").small().selected(shown))
        .on_hover_text(format!(
            "Bring run {}'s scatter, curves and scores back (its last frame)",
            r.id
        ))
        .on_disabled_hover_text(&r.hint);
    if (row_clicked && !r.other) || show.clicked() {
        clicks.shown = Some(r.id);
    }
}

/// The shown run's other fields (kept triplets, data, how it ended, parameters, seed,
/// iterations, time) and "continue".
fn run_details(ui: &mut egui::Ui, r: &Row, clicks: &mut HistoryClicks) {
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(&r.details).small());
        if ui
            .add_enabled(!r.other, egui::Button::new("continue").small())
            .on_hover_text(&r.continue_hint)
            .clicked()
        {
            clicks.continued = Some(r.id);
        }
    });
}

/// Write the history table as CSV to `path` (atomically); the outcome goes to the status line.
pub fn export(path: &Path, app: &mut Shared<'_>) {
    let s = &mut app.session;
    if path.as_os_str().is_empty() {
        s.set_error("Type a path for the history CSV first");
        return;
    }
    let csv = history_csv(&s.history);
    match write_atomic(path, csv.as_bytes()) {
        Ok(()) => s.set_status(format!(
            "Exported {} runs to {}",
            s.history.len(),
            path.display()
        )),
        Err(e) => s.set_error(format!(
            "{}: could not write the history: {e}",
            path.display()
        )),
    }
}
