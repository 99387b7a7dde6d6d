//! The Data panel's labels picker: attach ground-truth labels to data that has none (a `.npy`
//! matrix, a `.mat` without `gnd`) or replace the file's own, from a `.npy` vector or a text
//! file with one label per line, or pick a CSV's label column. The dataset is reloaded with
//! them, through the loader's own checks (the messages of `run --labels` and `--label-col`).
//! Labels are for scoring and the scatter's colours; they never become side information.

use eframe::egui;

use super::{Command, Data};
use crate::engine::data::LabelColumn;
use crate::gui::command::Commands;
use crate::gui::state::{LabelChoice, Session};
use egui::RichText;
use std::path::PathBuf;

/// Draw the picker for the loaded dataset.
pub(super) fn show(ui: &mut egui::Ui, session: &Session, data: &mut Data, cmds: &mut Commands) {
    let Some(source) = &session.source else {
        return;
    };
    let is_csv = matches!(source, crate::gui::state::DataSource::Path(p) if p
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| ["csv", "tsv", "txt", "tab"].contains(&e.to_ascii_lowercase().as_str())));
    let current = &session.labels;
    ui.add_space(4.0);
    let l = ui.label("Labels file").on_hover_text(
        "Ground-truth labels for scoring and colours: a .npy vector or a text file with \
             one label per line, one per sample (as run --labels). A labels.npy or y.npy \
             beside a .npy is read by itself.",
    );
    let attach = path_row(
        ui,
        &mut data.labels_path_input,
        "labels.npy or labels.txt",
        "Attach",
        l.id,
    );
    if attach {
        let typed = data.labels_path_input.trim().to_owned();
        cmds.send(Command::SetLabels(LabelChoice {
            file: (!typed.is_empty()).then(|| PathBuf::from(&typed)),
            column: current.column.clone(),
        }));
    }
    if is_csv {
        let l = ui.label("CSV label column").on_hover_text(
            "The column holding the labels, by header name or 0-based index; \"none\" for \
                 no labels; empty: a column named label or class (as run --label-col)",
        );
        if path_row(ui, &mut data.label_column_input, "label", "Use", l.id) {
            let typed = data.label_column_input.trim().to_owned();
            let column = match typed.as_str() {
                "" => None,
                s if s.eq_ignore_ascii_case("none") => Some(LabelColumn::None),
                s => Some(
                    s.parse::<usize>()
                        .map_or_else(|_| LabelColumn::Name(s.to_owned()), LabelColumn::Index),
                ),
            };
            cmds.send(Command::SetLabels(LabelChoice {
                file: current.file.clone(),
                column,
            }));
        }
    }
    if let Some(f) = &current.file {
        ui.horizontal_wrapped(|ui| {
            ui.label(
                RichText::new(format!("labels from {}", f.display()))
                    .weak()
                    .small(),
            );
            if ui
                .small_button("remove")
                .on_hover_text("Reload with the file's own labels")
                .clicked()
            {
                cmds.send(Command::SetLabels(LabelChoice {
                    file: None,
                    column: current.column.clone(),
                }));
            }
        });
    }
}

/// A text field with its button at the right (the field takes the width left); whether the
/// button was clicked or Enter pressed in the field.
fn path_row(
    ui: &mut egui::Ui,
    text: &mut String,
    hint: &str,
    button: &str,
    label: egui::Id,
) -> bool {
    let mut hit = false;
    crate::gui::style::right_aligned(ui, |ui| {
        let clicked = ui.button(button).clicked();
        let resp = ui
            .add(
                egui::TextEdit::singleline(text)
                    .hint_text(hint)
                    .desired_width(ui.available_width()),
            )
            .labelled_by(label);
        let enter = resp.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        hit = clicked || enter;
    });
    hit
}
