//! Model panel: model picker with explanation, k / seed / iterations / tolerance,
//! hyperparameters with tooltips, Run / Pause / Resume / Stop and live progress.

use eframe::egui;

use crate::engine::models::{HyperParam, ModelKind, ParamKind, ParamValue};
use crate::gui::command::Commands;
use crate::gui::run_controller::RunController;
use crate::gui::state::{Session, Settings, WorkerState};
use crate::gui::view::ViewState;
use egui::{Color32, DragValue, RichText};

/// Rail width of a log-scale hyperparameter's slider, so that slider, value, "0" and presets
/// fit the model panel's default width.
const LOG_SLIDER_WIDTH: f32 = 50.0;

/// What a number's row holds beside its slider: the value field, the "0" button and the
/// "grid" menu, with their spacing (points).
const SLIDER_ROW_REST: f32 = 140.0;

/// The log slider's width for the row `ui` is laying out: [`LOG_SLIDER_WIDTH`] where it fits
/// in the visible part of the panel, narrower in a narrow one (down to a thumb's width), so
/// the "grid" menu stays in view. The panel scrolls sideways, so its available width is no
/// bound: what counts is the room left of its visible right edge.
fn slider_width(ui: &egui::Ui) -> f32 {
    let room = ui.clip_rect().max.x - ui.cursor().min.x;
    (room - SLIDER_ROW_REST).clamp(14.0, LOG_SLIDER_WIDTH)
}

/// Largest iteration cap offered (the convergence history keeps every iteration).
pub const MAX_ITER_CAP: usize = 1_000_000;

pub fn show(
    ui: &mut egui::Ui,
    settings: &mut Settings,
    session: &Session,
    run: &RunController,
    view: &mut ViewState,
    cmds: &mut Commands,
) {
    ui.heading("Model");
    let kind = settings.model_kind();
    model_picker(ui, settings, kind, view);
    fit_options(ui, settings, session);

    if let Some(kind) = kind {
        hyperparameters(ui, settings, kind);
    }

    ui.add_space(6.0);
    buttons(ui, session, run, cmds);
    if ui
        .button("Scan k…")
        .on_hover_text(
            "Fit this model at a range of k, several seeds each, and plot the error, the \
             scores and the stability of the clusterings vs k (docs/models.md §8.6)",
        )
        .clicked()
    {
        cmds.send(crate::gui::kscan::Command::Toggle);
    }
    progress(ui, session, run, settings.max_iter);
}

/// The model's combo box (grouped) and its "?" button, which opens the model's explanation.
fn model_picker(
    ui: &mut egui::Ui,
    settings: &mut Settings,
    kind: Option<ModelKind>,
    view: &mut ViewState,
) {
    ui.horizontal(|ui| {
        let label = ui.label("Model");
        let selected = kind.map_or("none", ModelKind::label);
        // Tall enough for every model and the group headings: no scroll hides RPNMF and
        // 2-STGINMF below the fold.
        let combo = egui::ComboBox::from_id_salt("model_kind")
            .selected_text(selected)
            .height(600.0)
            .show_ui(ui, |ui| {
                for group in ModelGroup::ALL {
                    ui.label(RichText::new(group.heading()).weak().small());
                    for k in ModelKind::all().filter(|&k| ModelGroup::of(k) == group) {
                        if ui
                            .selectable_label(Some(k) == kind, k.label())
                            .on_hover_text(k.section())
                            .clicked()
                        {
                            settings.model = k.name().to_owned();
                        }
                    }
                }
            });
        combo.response.labelled_by(label.id);
        if ui
            .button("?")
            .on_hover_text("What this model optimises, its side information, the paper")
            .clicked()
        {
            view.show_model_help = !view.show_model_help;
        }
    });
}

/// k, seed, iteration cap and tolerance; an out-of-range k says why under it.
fn fit_options(ui: &mut egui::Ui, settings: &mut Settings, session: &Session) {
    // The engine's rule, not a clamp: an out-of-range k stays as typed and says why, as the
    // CLI does (a silent clamp ran another k than the one asked for).
    let rank_error = session.dataset.as_ref().and_then(|d| {
        crate::engine::models::check_rank(settings.k, d.m(), d.n())
            .err()
            .map(|e| e.to_string())
    });
    egui::Grid::new("fit_options")
        .num_columns(2)
        .spacing([8.0, 4.0])
        .show(ui, |ui| {
            let l = ui.label("k (rank)");
            ui.add(DragValue::new(&mut settings.k).speed(0.05))
                .labelled_by(l.id)
                .on_hover_text("Number of factors: H is k × n, with 1 ≤ k ≤ min(m, n)");
            ui.end_row();
            if let Some(e) = &rank_error {
                ui.label("");
                ui.add(
                    egui::Label::new(RichText::new(e).color(crate::gui::style::ERROR_RED)).wrap(),
                );
                ui.end_row();
            }
            let l = ui.label("Seed");
            ui.add(DragValue::new(&mut settings.seed).speed(0.2))
                .labelled_by(l.id)
                .on_hover_text("Random initialisation; same seed, same result");
            ui.end_row();
            let l = ui.label("Max iterations");
            ui.add(
                DragValue::new(&mut settings.max_iter)
                    .range(1..=MAX_ITER_CAP)
                    .speed(5.0),
            )
            .labelled_by(l.id)
            .on_hover_text("Iteration cap");
            ui.end_row();
            let l = ui.label("Tolerance");
            ui.add(
                DragValue::new(&mut settings.tol)
                    .range(0.0..=1.0)
                    .speed(1e-6)
                    .custom_formatter(|v, _| {
                        if v == 0.0 {
                            "0 (off)".to_owned()
                        } else {
                            crate::gui::format::short_number(v, 2)
                        }
                    })
                    .custom_parser(|s| s.trim().trim_end_matches("(off)").trim().parse().ok()),
            )
            .labelled_by(l.id)
            .on_hover_text(
                "Stop when the relative change of the objective falls below this; 0 disables it",
            );
            ui.end_row();
        });
}

/// The model picker's groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelGroup {
    /// Plain and graph-regularised factorisations and clustering (no side information).
    Baselines,
    /// Baselines that take triplets, links or labels.
    SideInformation,
    /// The models of the source papers (docs/models.md §4 onwards).
    SourcePapers,
}

impl ModelGroup {
    pub const ALL: [ModelGroup; 3] = [
        ModelGroup::Baselines,
        ModelGroup::SideInformation,
        ModelGroup::SourcePapers,
    ];

    pub fn heading(self) -> &'static str {
        match self {
            ModelGroup::Baselines => "Baselines",
            ModelGroup::SideInformation => "With side information",
            ModelGroup::SourcePapers => "Source papers",
        }
    }

    /// A model's group, from its descriptor: its docs/models.md chapter (§4 onwards: the
    /// source papers) and the side information it takes.
    pub fn of(kind: ModelKind) -> Self {
        use crate::engine::models::SideNeed;
        let chapter = kind
            .section()
            .rsplit('§')
            .next()
            .and_then(|s| s.split('.').next())
            .and_then(|s| s.trim().parse::<u32>().ok())
            .unwrap_or(0);
        if chapter >= 4 {
            ModelGroup::SourcePapers
        } else if matches!(kind.needs(), SideNeed::None | SideNeed::KnnGraph) {
            ModelGroup::Baselines
        } else {
            ModelGroup::SideInformation
        }
    }
}

/// The selected model's hyperparameters, one row each. Only edits are written to the
/// settings; unedited parameters show the table's default.
fn hyperparameters(ui: &mut egui::Ui, settings: &mut Settings, kind: ModelKind) {
    let hps = kind.hyperparameters();
    if hps.is_empty() {
        ui.label(RichText::new(format!("{} has no other hyperparameters.", kind.label())).weak());
        return;
    }
    ui.horizontal(|ui| {
        ui.label(RichText::new("Hyperparameters").strong());
        for preset in kind.presets() {
            let b = ui
                .small_button(preset.name)
                .accessible_name(format!("preset {}", preset.name))
                .on_hover_text(crate::gui::style::displayable(ui.ctx(), preset.help));
            if b.clicked() {
                for &(name, v) in preset.values {
                    settings.set_param(kind.name(), name, v);
                }
            }
        }
        let any_edit = hps
            .iter()
            .any(|hp| settings.edited_param(kind.name(), hp.name).is_some());
        if any_edit
            && ui
                .small_button("defaults")
                .accessible_name("all parameters to their defaults")
                .on_hover_text("Forget every edit: the model's defaults (docs/models.md)")
                .clicked()
        {
            for hp in hps {
                settings.reset_param(kind.name(), hp.name);
            }
        }
    });
    egui::Grid::new(("hyperparameters", kind.name()))
        .num_columns(2)
        .spacing([8.0, 4.0])
        .show(ui, |ui| {
            for hp in hps {
                let edited = settings.edited_param(kind.name(), hp.name);
                match hyperparameter_row(ui, hp, kind.section(), edited) {
                    Some(ParamEdit::Set(v)) => settings.set_param(kind.name(), hp.name, v),
                    Some(ParamEdit::Reset) => settings.reset_param(kind.name(), hp.name),
                    None => {}
                }
                ui.end_row();
            }
        });
}

/// What the user did to one hyperparameter this frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamEdit {
    /// A new value, to be stored as an edit.
    Set(ParamValue),
    /// Back to the table's default: forget the stored edit.
    Reset,
}

/// One grid row (label, widget) for the table entry `hp`, showing `edited` or else the table's
/// default. A flag is a checkbox; a choice a combo box; a log-scale range a logarithmic slider,
/// which reaches exactly 0 at its left end when the range starts at 0 (and a "0" button says
/// so); any other number a drag value. The paper's grid is offered as presets, and an edited
/// value can be reset to the default. Reads nothing but `hp`, so it follows the engine's table.
pub fn hyperparameter_row(
    ui: &mut egui::Ui,
    hp: &HyperParam,
    section: &str,
    edited: Option<ParamValue>,
) -> Option<ParamEdit> {
    let tip = crate::gui::style::displayable(ui.ctx(), &format!("{}\n\n{}", hp.help, section));
    let l = ui.label(hp.name).on_hover_text(&tip);
    let current = edited.unwrap_or(hp.default_value());
    let row = (l.id, tip.as_str());
    ui.horizontal(|ui| match hp.kind {
        ParamKind::Flag { default } => flag(ui, hp, edited, current, default, row),
        ParamKind::Choice { default, options } => {
            choice(ui, hp, edited, current, (default, options), row)
        }
        ParamKind::Number { .. } => number(ui, hp, edited, current, row),
        ParamKind::Count { .. } => count(ui, hp, edited, current, row),
    })
    .inner
}

/// The label's id and the hover text of a hyperparameter's row.
type Row<'a> = (egui::Id, &'a str);

/// A flag's checkbox (and reset when edited).
fn flag(
    ui: &mut egui::Ui,
    hp: &HyperParam,
    edited: Option<ParamValue>,
    current: ParamValue,
    default: bool,
    row: Row<'_>,
) -> Option<ParamEdit> {
    let mut edit = None;
    let mut on = match current {
        ParamValue::Flag(b) => b,
        // Settings of earlier versions stored flags as 0 or 1.
        ParamValue::Number(x) => x == 1.0,
        ParamValue::Choice(_) => default,
    };
    let r = ui.checkbox(&mut on, "");
    if r.labelled_by(row.0).on_hover_text(row.1).changed() {
        edit = Some(ParamEdit::Set(ParamValue::Flag(on)));
    }
    if edited.is_some() && reset_button(ui, hp) {
        edit = Some(ParamEdit::Reset);
    }
    edit
}

/// A choice's combo box (and reset when edited).
fn choice(
    ui: &mut egui::Ui,
    hp: &HyperParam,
    edited: Option<ParamValue>,
    current: ParamValue,
    (default, options): (&'static str, &'static [crate::engine::models::ChoiceOption]),
    row: Row<'_>,
) -> Option<ParamEdit> {
    let mut edit = None;
    let mut choice = match current {
        ParamValue::Choice(c) => c,
        ParamValue::Number(_) | ParamValue::Flag(_) => default,
    };
    let r = egui::ComboBox::from_id_salt(("choice", hp.name))
        .selected_text(choice)
        .show_ui(ui, |ui| {
            for o in options {
                ui.selectable_value(&mut choice, o.name, o.name)
                    .on_hover_text(o.help);
            }
        })
        .response;
    r.labelled_by(row.0).on_hover_text(row.1);
    if ParamValue::Choice(choice) != current {
        edit = Some(ParamEdit::Set(ParamValue::Choice(choice)));
    }
    if edited.is_some() && reset_button(ui, hp) {
        edit = Some(ParamEdit::Reset);
    }
    edit
}

/// A number's slider (log scale) or drag value, its "0" button and its grid menu.
fn number(
    ui: &mut egui::Ui,
    hp: &HyperParam,
    edited: Option<ParamValue>,
    current: ParamValue,
    row: Row<'_>,
) -> Option<ParamEdit> {
    let ParamKind::Number {
        default,
        min,
        max,
        log_scale,
        grid,
    } = hp.kind
    else {
        return None;
    };
    let mut edit = None;
    let mut v = match current {
        ParamValue::Number(x) => x,
        ParamValue::Flag(_) | ParamValue::Choice(_) => default,
    };
    let resp = if log_scale && min >= 0.0 && max > 0.0 {
        ui.spacing_mut().slider_width = slider_width(ui);
        ui.add(
            egui::Slider::new(&mut v, min..=max)
                .logarithmic(true)
                .smallest_positive(smallest_positive(max, grid))
                .custom_formatter(|x, _| crate::gui::format::short_number(x, 3)),
        )
    } else {
        ui.add(
            DragValue::new(&mut v)
                .range(min..=max)
                .speed(((max - min) / 1000.0).clamp(1e-6, 1.0)),
        )
    };
    if resp.labelled_by(row.0).on_hover_text(row.1).changed() {
        edit = Some(ParamEdit::Set(ParamValue::Number(v)));
    }
    if log_scale && min == 0.0 {
        let zero = ui
            .add_enabled(v != 0.0, egui::Button::new("0").small())
            .accessible_name(format!("{} = 0", hp.name))
            .on_hover_text(format!(
                "Set {} to exactly 0 (the slider's left end)",
                hp.name
            ));
        if zero.clicked() {
            edit = Some(ParamEdit::Set(ParamValue::Number(0.0)));
        }
    }
    if let Some(e) = grid_menu(ui, hp, grid, edited.is_some()) {
        edit = Some(e);
    }
    edit
}

/// A count's slider (log scale over orders of magnitude) or drag value, and its grid menu.
fn count(
    ui: &mut egui::Ui,
    hp: &HyperParam,
    edited: Option<ParamValue>,
    current: ParamValue,
    row: Row<'_>,
) -> Option<ParamEdit> {
    let ParamKind::Count {
        default,
        min,
        max,
        grid,
    } = hp.kind
    else {
        return None;
    };
    let mut edit = None;
    let mut v = match current {
        ParamValue::Number(x) if x.is_finite() => x.round().clamp(0.0, f64::from(max)) as u32,
        _ => default,
    };
    // Counts spanning orders of magnitude (N_P up to 10,000) drag on a log scale.
    let resp = if max >= min.max(1).saturating_mul(1000) {
        ui.spacing_mut().slider_width = slider_width(ui);
        ui.add(egui::Slider::new(&mut v, min..=max).logarithmic(true))
    } else {
        ui.add(DragValue::new(&mut v).range(min..=max).speed(0.25))
    };
    if resp.labelled_by(row.0).on_hover_text(row.1).changed() {
        edit = Some(ParamEdit::Set(ParamValue::Number(f64::from(v))));
    }
    let grid: Vec<f64> = grid.iter().map(|&g| f64::from(g)).collect();
    if let Some(e) = grid_menu(ui, hp, &grid, edited.is_some()) {
        edit = Some(e);
    }
    edit
}

/// The "grid" menu of a number: reset (when edited) and the paper's grid as presets. Reset
/// sits in this menu so that the row stays within the panel's default width.
fn grid_menu(ui: &mut egui::Ui, hp: &HyperParam, grid: &[f64], edited: bool) -> Option<ParamEdit> {
    if grid.is_empty() && !edited {
        return None;
    }
    let mut edit = None;
    ui.menu_button("grid", |ui| {
        if edited && reset_button(ui, hp) {
            edit = Some(ParamEdit::Reset);
        }
        if !grid.is_empty() {
            ui.label(RichText::new("the paper's grid").weak());
        }
        for &g in grid {
            if ui.button(format!("{g}")).clicked() {
                edit = Some(ParamEdit::Set(ParamValue::Number(g)));
            }
        }
    })
    .response
    .accessible_name(format!("presets for {}", hp.name))
    .on_hover_text(format!("Presets for {}", hp.name));
    edit
}

/// A "reset" button for `hp` (back to the table's default); whether it was clicked.
fn reset_button(ui: &mut egui::Ui, hp: &HyperParam) -> bool {
    let default = match hp.default_value() {
        ParamValue::Number(x) if matches!(hp.kind, ParamKind::Count { .. }) => format!("{x}"),
        ParamValue::Number(x) => crate::gui::format::format_value(x),
        ParamValue::Flag(b) => (if b { "on" } else { "off" }).to_owned(),
        ParamValue::Choice(c) => c.to_owned(),
    };
    ui.small_button("reset")
        .accessible_name(format!("reset {}", hp.name))
        .on_hover_text(format!(
            "Back to the default, {default} (follows the model's table)"
        ))
        .clicked()
}

/// The left end of a log slider's positive range: the smallest positive value of the paper's
/// grid, or max·1e-6 when that is smaller or there is no grid.
fn smallest_positive(max: f64, grid: &[f64]) -> f64 {
    grid.iter()
        .copied()
        .filter(|&g| g > 0.0)
        .fold(max * 1e-6, f64::min)
}

fn buttons(ui: &mut egui::Ui, session: &Session, run: &RunController, cmds: &mut Commands) {
    let state = run.worker;
    let has_data = session.dataset.is_some();
    ui.horizontal(|ui| {
        let run = ui
            .add_enabled(has_data, egui::Button::new("Run"))
            .on_hover_text("Fit from scratch with these settings (Space); replaces a running fit");
        if run.clicked() {
            cmds.send(super::Command::Run);
        }
        if state == WorkerState::Paused {
            if ui
                .button("Resume")
                .on_hover_text("Continue (Space)")
                .clicked()
            {
                cmds.send(super::Command::Resume);
            }
        } else if ui
            .add_enabled(state == WorkerState::Running, egui::Button::new("Pause"))
            .on_hover_text("Pause the fit (Space)")
            .clicked()
        {
            cmds.send(super::Command::Pause);
        }
        if ui
            .add_enabled(state.is_active(), egui::Button::new("Stop"))
            .on_hover_text("Cancel the fit (Esc)")
            .clicked()
        {
            cmds.send(super::Command::Stop);
        }
    });
}

fn progress(ui: &mut egui::Ui, session: &Session, run: &RunController, planned_max: usize) {
    progress_bar(ui, run, planned_max);
    progress_numbers(ui, session, run);
    if !run.worker.is_active()
        && let Some(result) = &run.result
    {
        for note in &result.notes {
            let text = crate::gui::style::displayable(ui.ctx(), &format!("note: {note}"));
            ui.label(RichText::new(text).color(NOTE_COLOUR));
        }
    }
}

/// The iteration against the cap (a multi-stage model's current stage against its cap).
fn progress_bar(ui: &mut egui::Ui, run: &RunController, planned_max: usize) {
    let p = &run.progress;
    // Before any run, show the cap the next run will use.
    let max_iter = if p.max_iter > 0 {
        p.max_iter
    } else {
        planned_max
    };
    // A multi-stage model (2-STGINMF) caps each stage, not the whole fit: the bar shows
    // the current stage against the cap, the text the total too.
    let (done, text) = match run.convergence.phases.last() {
        Some(&(first, phase)) if p.iteration >= first => {
            let in_phase = p.iteration + 1 - first;
            let round = if phase.round > 0 {
                format!("round {} ", phase.round)
            } else {
                String::new()
            };
            (
                in_phase,
                format!(
                    "{} · {round}stage {}: {in_phase} / {max_iter}",
                    p.iteration, phase.stage
                ),
            )
        }
        _ => (p.iteration, format!("{} / {max_iter}", p.iteration)),
    };
    let frac = if max_iter > 0 {
        done as f32 / max_iter as f32
    } else {
        0.0
    };
    // The panel scrolls sideways, so its available width can run past the window: the bar
    // ends at the panel's visible edge.
    let visible = ui.clip_rect().max.x - ui.cursor().min.x - ui.spacing().item_spacing.x;
    ui.add(
        egui::ProgressBar::new(frac.clamp(0.0, 1.0))
            .desired_width(visible.min(ui.available_width()).max(60.0))
            .text(text)
            .animate(run.worker == WorkerState::Running),
    );
}

/// Objective, speed, ETA, time and triplets kept, a dash while unknown.
fn progress_numbers(ui: &mut egui::Ui, session: &Session, run: &RunController) {
    let p = &run.progress;
    let state = run.worker;
    // Every row always, "–" while unknown: the rows never appear or vanish as a run goes,
    // so the controls below (Step) stay under the pointer.
    let dash = || "–".to_owned();
    let started = p.iteration > 0 || state.is_active();
    egui::Grid::new("progress_numbers")
        .num_columns(2)
        .show(ui, |ui| {
            ui.label("objective");
            ui.label(if started {
                crate::gui::format::format_value(p.objective)
            } else {
                dash()
            });
            ui.end_row();
            ui.label("speed");
            ui.label(p.rate().map_or_else(dash, crate::gui::format::rate));
            ui.end_row();
            ui.label("ETA (at cap)");
            ui.label(
                p.eta()
                    .filter(|_| state.is_active())
                    .map_or_else(dash, format_secs),
            );
            ui.end_row();
            ui.label("time");
            ui.label(if started {
                format_secs(p.elapsed)
            } else {
                dash()
            })
            .on_hover_text("Fitting time; time paused or held by Step is not counted");
            ui.end_row();
            ui.label("triplets kept");
            match session.kept.as_ref().and_then(|k| k.share.map(|s| (k, s))) {
                Some((k, share)) => {
                    ui.label(crate::gui::format::percent(share))
                        .on_hover_text(format!(
                            "Share of the {} triplets with ||hi-hj|| < ||hi-hq|| in H at \
                             iteration {}",
                            k.satisfied.len(),
                            k.iteration
                        ));
                }
                None => {
                    ui.label(dash());
                }
            }
            ui.end_row();
        });
}

/// Amber, as the data panel's warnings: worth reading, not an error.
const NOTE_COLOUR: Color32 = Color32::from_rgb(220, 170, 40);

fn format_secs(s: f64) -> String {
    if s < 60.0 {
        format!("{s:.1} s")
    } else {
        format!("{}:{:02} min", (s / 60.0).floor(), (s % 60.0).floor())
    }
}
