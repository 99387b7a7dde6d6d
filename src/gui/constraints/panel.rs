//! Constraints panel: triplet list (thumbnails, hover highlights on the plot, delete), painted
//! label summary, generate / reveal / undo / redo / files; the "Generate triplets" window and
//! the unsaved-constraints question.

use eframe::egui;

use super::{Command, Resolution};
use crate::engine::constraints::AnchorPool;
use crate::gui::command::{Commands, FileAction, PathAsk, UiCommand};
use crate::gui::state::{Pending, Session};
use crate::gui::view::ViewState;
use egui::{DragValue, RichText};
use std::path::PathBuf;

/// Height of one triplet row (with thumbnails).
const ROW_H: f32 = 28.0;

/// What the panel shows that is counted from the store: prepared when the constraints
/// change, not every frame.
#[derive(Debug, Default)]
pub(super) struct Summary {
    /// The store revision and dataset it was counted for.
    key: Option<(u64, crate::engine::data::Fingerprint)>,
    undo_tip: String,
    redo_tip: String,
    /// Painted labels per class (name, count), in class order.
    class_counts: Vec<(String, usize)>,
    n_labelled: usize,
}

impl Summary {
    /// Count again when the constraints or the dataset changed.
    pub(super) fn prepare(&mut self, session: &Session) {
        let (Some(data), Some(store)) = (&session.dataset, &session.store) else {
            return;
        };
        let key = Some((session.constraints_rev, data.fingerprint));
        if self.key == key {
            return;
        }
        self.key = key;
        self.undo_tip = store.undo_description().map_or_else(
            || "Nothing to undo".to_owned(),
            |w| format!("Undo: {w} (Ctrl+Z)"),
        );
        self.redo_tip = store.redo_description().map_or_else(
            || "Nothing to redo".to_owned(),
            |w| format!("Redo: {w} (Ctrl+Shift+Z, Ctrl+Y)"),
        );
        let labels = store.labels();
        let mut counts = vec![0usize; labels.n_classes()];
        for c in labels.as_slice().iter().flatten() {
            if let Some(x) = counts.get_mut(*c) {
                *x += 1;
            }
        }
        self.class_counts = labels.class_names().iter().cloned().zip(counts).collect();
        self.n_labelled = labels.n_labelled();
    }
}

/// The panel: edit buttons, files, painted labels and the triplet list.
pub(super) fn show(
    ui: &mut egui::Ui,
    session: &Session,
    view: &mut ViewState,
    cmds: &mut Commands,
    summary: &Summary,
) {
    ui.heading("Constraints");
    let Some(data) = session.dataset.clone() else {
        ui.label(RichText::new("Load a dataset to add constraints.").weak());
        return;
    };
    let Some(store) = &session.store else {
        return;
    };
    let (can_undo, can_redo) = (store.can_undo(), store.can_redo());
    let (undo_tip, redo_tip) = (&summary.undo_tip, &summary.redo_tip);
    edit_buttons(
        ui,
        session,
        view,
        cmds,
        (can_undo, can_redo),
        (undo_tip, redo_tip),
    );
    reveal_row(ui, data.labels.is_some(), view, cmds);
    file_buttons(ui, view, cmds);
    if store.is_dirty() {
        ui.label(RichText::new("unsaved changes").weak().small());
    }
    ui.add_space(4.0);
    ui.label(RichText::new(format!("Painted labels: {}", summary.n_labelled)).strong());
    for (c, (name, count)) in summary.class_counts.iter().enumerate() {
        if *count > 0 {
            let color = crate::gui::view::scatter_cache::class_colour(&data, name, c);
            ui.label(RichText::new(format!("{name}: {count}")).color(color));
        }
    }
    ui.add_space(4.0);
    triplet_list(ui, session, &data, store.triplets(), view, cmds);
}

/// Undo, Redo and "Generate triplets…".
fn edit_buttons(
    ui: &mut egui::Ui,
    session: &Session,
    view: &mut ViewState,
    cmds: &mut Commands,
    (can_undo, can_redo): (bool, bool),
    (undo_tip, redo_tip): (&str, &str),
) {
    ui.horizontal_wrapped(|ui| {
        if ui
            .add_enabled(can_undo, egui::Button::new("Undo"))
            .on_hover_text(undo_tip)
            .clicked()
        {
            cmds.send(Command::Undo);
        }
        if ui
            .add_enabled(can_redo, egui::Button::new("Redo"))
            .on_hover_text(redo_tip)
            .clicked()
        {
            cmds.send(Command::Redo);
        }
        let gen_text = if session.generating {
            "Generating…"
        } else {
            "Generate triplets…"
        };
        if ui
            .add_enabled(!session.generating, egui::Button::new(gen_text))
            .on_hover_text(
                "The RPNMF protocol (docs/models.md §8.4): anchors, label- and kNN-based triplets",
            )
            .clicked()
        {
            view.show_generate = true;
        }
    });
}

/// "Reveal labels" with its share and seed.
fn reveal_row(ui: &mut egui::Ui, has_truth: bool, view: &mut ViewState, cmds: &mut Commands) {
    ui.horizontal(|ui| {
        if ui
            .add_enabled(has_truth, egui::Button::new("Reveal labels"))
            .on_hover_text("Paint the true labels of this share of every class, chosen at random (seeded; as `run --reveal`)")
            .clicked()
        {
            cmds.send(Command::Reveal {
                fraction: view.reveal_percent / 100.0,
                seed: view.reveal_seed,
            });
        }
        ui.add(
            DragValue::new(&mut view.reveal_percent)
                .range(0.0..=100.0)
                .speed(0.5)
                .suffix(" %"),
        )
        .accessible_name("Reveal percent");
        ui.label("seed");
        ui.add(DragValue::new(&mut view.reveal_seed).speed(0.2))
            .accessible_name("Reveal seed");
    });
}

/// The constraints file: a typed path and Save / Load / Import / Export; an empty path
/// asks for one.
fn file_buttons(ui: &mut egui::Ui, view: &mut ViewState, cmds: &mut Commands) {
    let file_label = ui.label("Constraints file");
    let edit = egui::TextEdit::singleline(&mut view.constraints_path_input)
        .hint_text("constraints.json or triplets.csv (empty: asks)")
        .desired_width(crate::gui::style::visible_width(ui));
    ui.add(edit).labelled_by(file_label.id);
    let typed = view.constraints_path_input.trim().to_owned();
    let path = (!typed.is_empty()).then(|| PathBuf::from(&typed));
    // At the typed path, or in the path window when the field is empty.
    let mut at = |action: FileAction, cmd: fn(PathBuf) -> Command| match &path {
        Some(p) => cmds.send(cmd(p.clone())),
        None => cmds.push(UiCommand::AskPath(PathAsk::Constraints(action))),
    };
    ui.horizontal_wrapped(|ui| {
        let file_button =
            |ui: &mut egui::Ui, text: &str, tip: &str| ui.button(text).on_hover_text(tip).clicked();
        if file_button(ui, "Save…", "Save triplets and labels as JSON (Ctrl+S)") {
            at(FileAction::Save, |p| Command::Save(Some(p)));
        }
        if file_button(ui, "Load…", "Load a constraints JSON made for this dataset") {
            at(FileAction::Load, Command::Load);
        }
        if file_button(
            ui,
            "Import CSV…",
            "Add triplets from a CSV of i,j,q (0-based or names)",
        ) {
            at(FileAction::ImportCsv, Command::ImportCsv);
        }
        if file_button(ui, "Export CSV…", "Write the triplets as i,j,q") {
            at(FileAction::ExportCsv, Command::ExportCsv);
        }
    });
}

/// "Triplets: N" and the list (thumbnails, violated in red, delete; hovering a row
/// highlights the triplet on the plot).
fn triplet_list(
    ui: &mut egui::Ui,
    session: &Session,
    data: &crate::engine::data::Dataset,
    triplets: &[crate::engine::constraints::Triplet],
    view: &mut ViewState,
    cmds: &mut Commands,
) {
    let kept = session
        .kept
        .as_ref()
        .and_then(|k| k.share)
        .map(|s| format!(" · kept in H: {:.1} %", s * 100.0))
        .unwrap_or_default();
    ui.label(RichText::new(format!("Triplets: {}{kept}", triplets.len())).strong());
    if triplets.is_empty() {
        ui.label(
            RichText::new("None yet: use Triplet mode above the plot, or Generate.")
                .weak()
                .small(),
        );
        view.hovered_triplet = None;
        return;
    }
    let images = data.image_shape.is_some() && !data.thumbnails.is_empty();
    let satisfied = session.kept.as_ref().map(|k| &k.satisfied);
    let mut hovered = None;
    egui::ScrollArea::vertical()
        .id_salt("triplet_list")
        .max_height(260.0)
        .auto_shrink([false, true])
        .show_rows(ui, ROW_H, triplets.len(), |ui, range| {
            for r in range {
                let t = triplets[r];
                let row = ui.horizontal(|ui| {
                    ui.set_min_height(ROW_H - 4.0);
                    let violated = satisfied
                        .as_ref()
                        .and_then(|s| s.get(r))
                        .is_some_and(|ok| !ok);
                    let text = RichText::new(format!("{}: ({}, {}, {})", r + 1, t.i, t.j, t.q));
                    ui.label(if violated {
                        text.color(crate::gui::style::ERROR_RED)
                    } else {
                        text
                    })
                    .on_hover_text("anchor i, closer j, farther q (red: violated in H)");
                    if images {
                        for s in [t.i, t.j, t.q] {
                            if let Some(tex) = view.thumbnails.get(ui.ctx(), data, s) {
                                ui.add(
                                    egui::Image::from_texture(&tex)
                                        .fit_to_exact_size(egui::vec2(22.0, 22.0)),
                                );
                            }
                        }
                    }
                    if ui
                        .small_button("x")
                        .on_hover_text(format!("Delete triplet {}", r + 1))
                        .clicked()
                    {
                        cmds.send(super::Command::RemoveTriplet(t));
                    }
                });
                if row.response.contains_pointer() {
                    hovered = Some(r);
                }
            }
        });
    view.hovered_triplet = hovered;
}

/// The "Generate triplets" window: protocol options and the source of labels.
pub(super) fn generate_window(
    ctx: &egui::Context,
    session: &Session,
    view: &mut ViewState,
    cmds: &mut Commands,
) {
    let has_truth = session.dataset.as_ref().is_some_and(|d| d.labels.is_some());
    let mut open = view.show_generate;
    let mut go = false;
    egui::Window::new("Generate triplets")
        .open(&mut open)
        .collapsible(false)
        .resizable(false)
        .show(ctx, |ui| {
            ui.label(
                RichText::new(
                    "docs/models.md §8.4: per anchor, half of the triplets from labels (j same class, \
                     q other class) and half from the 5-nearest-neighbour graph of X.",
                )
                .weak(),
            );
            let o = &mut view.generate;
            egui::Grid::new("generate_grid")
                .num_columns(2)
                .show(ui, |ui| {
                    let l = ui.label("Anchor fraction");
                    ui.add(
                        DragValue::new(&mut o.anchor_fraction)
                            .range(0.0..=1.0)
                            .speed(0.005),
                    )
                    .labelled_by(l.id);
                    ui.end_row();
                    let l = ui.label("Triplets per anchor");
                    ui.add(DragValue::new(&mut o.per_anchor).range(1..=1000))
                        .labelled_by(l.id);
                    ui.end_row();
                    let l = ui.label("Generator seed");
                    ui.add(DragValue::new(&mut o.seed).speed(0.2))
                        .labelled_by(l.id);
                    ui.end_row();
                });
            let mut from_truth = view.generate_from_truth && has_truth;
            ui.add_enabled_ui(has_truth, |ui| {
                ui.radio_value(&mut from_truth, true, "From ground truth");
            });
            ui.radio_value(&mut from_truth, false, "From painted labels");
            if has_truth {
                view.generate_from_truth = from_truth;
            }
            let mut labelled_only = o_pool_labelled(view);
            if !from_truth {
                ui.checkbox(&mut labelled_only, "Anchors among labelled samples only");
            }
            view.generate.anchor_pool = if labelled_only && !from_truth {
                AnchorPool::Labelled
            } else {
                AnchorPool::All
            };
            ui.add_space(4.0);
            if ui
                .add_enabled(!session.generating, egui::Button::new("Generate"))
                .clicked()
            {
                go = true;
            }
        });
    if go {
        cmds.send(Command::Generate {
            opts: view.generate,
            // Without ground truth the painted labels are the only source.
            from_truth: view.generate_from_truth && has_truth,
        });
        open = false;
    }
    view.show_generate = open;
}

fn o_pool_labelled(view: &ViewState) -> bool {
    view.generate.anchor_pool == AnchorPool::Labelled
}

/// Ask before loading another dataset or quitting with unsaved constraints.
pub(super) fn unsaved_modal(
    ctx: &egui::Context,
    session: &Session,
    view: &mut ViewState,
    cmds: &mut Commands,
) {
    let Some(pending) = &session.pending else {
        return;
    };
    // "Save" asked for a path: the path window answers first (a modal would block it).
    if view.file_prompt.is_some() {
        return;
    }
    let what = match pending {
        Pending::Load(s) => format!("Loading {} replaces them.", s.describe()),
        Pending::Session(p) => format!("Opening the session {} replaces them.", p.display()),
        Pending::Quit => "Quitting loses them.".to_owned(),
    };
    let n = session.store.as_ref().map_or(0, |s| s.triplets().len());
    let resp = egui::Modal::new(egui::Id::unique("unsaved_constraints")).show(ctx, |ui| {
        ui.set_max_width(420.0);
        ui.heading("Unsaved constraints");
        ui.label(format!(
            "The constraints ({n} triplets and the painted labels) have unsaved changes. {what}"
        ));
        let target = session
            .constraints_path
            .as_ref()
            .map(|p| p.display().to_string());
        match target {
            Some(p) => {
                ui.label(RichText::new(format!("Save writes {p}")).weak());
            }
            None => {
                let l = ui.label("Save to");
                ui.add(
                    egui::TextEdit::singleline(&mut view.constraints_path_input)
                        .hint_text("constraints.json (empty: dialog)"),
                )
                .labelled_by(l.id);
            }
        }
        ui.horizontal(|ui| {
            if ui.button("Save").clicked() {
                cmds.send(Command::Resolve(Resolution::Save));
            }
            if ui.button("Discard").clicked() {
                cmds.send(Command::Resolve(Resolution::Discard));
            }
            if ui.button("Cancel").clicked() {
                cmds.send(Command::Resolve(Resolution::Cancel));
            }
        });
    });
    if resp.should_close() {
        cmds.send(Command::Resolve(Resolution::Cancel));
    }
}
