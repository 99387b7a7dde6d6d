//! Data panel: open a file / folder / sample, typed path, preprocessing, summary, errors;
//! and the menu items that open data.

use eframe::egui;

use super::{Command, Data};
use crate::engine::data::Preprocess;
use crate::engine::data::samples::Sample;
use crate::gui::command::Commands;
use crate::gui::feature::Shared;
use crate::gui::state::{Session, Settings};
use crate::gui::style::ERROR_RED;
use egui::{Color32, RichText};
use std::path::PathBuf;

const PREPROCESS: [(Preprocess, &str, &str); 8] = [
    (
        Preprocess::Auto,
        "auto",
        "Chosen from the data: L2 for images and for tables whose features share one range; \
         min-max, then L2 for tables whose features' ranges differ by more than 10× or that \
         hold negative values; a model that compares samples keeps a compositional table \
         (every sample sums to one total) on its scale with L2, so picking one prepares the \
         data again. The choice and its reason are shown below",
    ),
    (Preprocess::None, "none", "Use X as loaded"),
    (
        Preprocess::L2,
        "L2 (unit samples)",
        "Scale every sample to unit L2 norm (the papers' default)",
    ),
    (
        Preprocess::Max,
        "÷ global max",
        "Divide X by its largest value",
    ),
    (
        Preprocess::Shift,
        "shift rows ≥ 0",
        "Shift every feature by its minimum so it is nonnegative",
    ),
    (
        Preprocess::MinMax,
        "min-max features",
        "Scale every feature to [0, 1] by its minimum and range",
    ),
    (
        Preprocess::MinMaxL2,
        "min-max, then L2",
        "Features to [0, 1], then every sample to unit L2 norm (features on different scales)",
    ),
    (
        Preprocess::Standardize,
        "z-scores (2-STGINMF only)",
        "Every feature to mean 0 and standard deviation 1. X becomes negative, which only \
         2-STGINMF accepts (it works on similarities; docs/models.md §7.5b)",
    ),
];

fn preprocess_label(p: Preprocess) -> &'static str {
    PREPROCESS
        .iter()
        .find(|(q, _, _)| *q == p)
        .map_or("?", |(_, l, _)| l)
}

/// The panel: where the data comes from, how it is read, and what was loaded.
pub(super) fn show(ui: &mut egui::Ui, data: &mut Data, app: &mut Shared<'_>) {
    ui.heading("Data");
    open_buttons(ui, app.commands);
    ui.add_space(4.0);
    path_row(ui, &mut data.path_input, app.commands);
    ui.add_space(4.0);
    options(ui, app.settings, app.session, app.commands);
    ui.separator();
    summary(ui, data, app);
}

/// The File menu's items that open data.
pub(super) fn open_items(ui: &mut egui::Ui, cmds: &mut Commands) {
    if ui.button("Open file…").clicked() {
        cmds.send(Command::OpenFileDialog);
    }
    if ui.button("Open folder…").clicked() {
        cmds.send(Command::OpenFolderDialog);
    }
}

/// One button per bundled sample.
pub(super) fn sample_items(ui: &mut egui::Ui, cmds: &mut Commands) {
    for &s in Sample::ALL {
        if ui.button(s.name()).clicked() {
            cmds.send(Command::LoadSample(s));
        }
    }
}

/// Open file / folder / sample.
fn open_buttons(ui: &mut egui::Ui, cmds: &mut Commands) {
    ui.horizontal_wrapped(|ui| {
        if ui
            .button("Open file…")
            .on_hover_text("A .csv table, a .npy matrix or a MATLAB .mat file (fea, gnd)")
            .clicked()
        {
            cmds.send(Command::OpenFileDialog);
        }
        if ui
            .button("Open folder…")
            .on_hover_text("A folder of images; class subfolders become labels")
            .clicked()
        {
            cmds.send(Command::OpenFolderDialog);
        }
        ui.menu_button("Open sample", |ui| sample_items(ui, cmds))
            .response
            .on_hover_text("Small bundled datasets");
    });
    ui.label(
        RichText::new("…or drop a file or folder onto the window")
            .weak()
            .small(),
    );
}

/// The typed path and its Load button (Enter loads too).
fn path_row(ui: &mut egui::Ui, path_input: &mut String, cmds: &mut Commands) {
    let path_label = ui.label("Path");
    let row = egui::vec2(ui.available_width(), ui.spacing().interact_size.y);
    ui.allocate_ui_with_layout(
        row,
        egui::Layout::right_to_left(egui::Align::Center),
        |ui| {
            // Button first (right to left) so the field takes exactly the width that is left.
            let load = ui
                .button("Load")
                .on_hover_text("Load the typed path (Enter)");
            let edit = egui::TextEdit::singleline(path_input)
                .hint_text("file or folder")
                .desired_width(ui.available_width());
            let resp = ui.add(edit).labelled_by(path_label.id);
            let enter = resp.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if load.clicked() || enter {
                cmds.send(Command::LoadPath(PathBuf::from(path_input.trim())));
            }
        },
    );
}

/// Preprocessing (a change reloads) and resizing of images.
fn options(ui: &mut egui::Ui, settings: &mut Settings, session: &Session, cmds: &mut Commands) {
    egui::Grid::new("data_options")
        .num_columns(2)
        .spacing([8.0, 4.0])
        .show(ui, |ui| {
            let pre_label = ui.label("Preprocess");
            let before = settings.preprocess;
            let combo = egui::ComboBox::from_id_salt("preprocess")
                .selected_text(preprocess_label(settings.preprocess))
                .show_ui(ui, |ui| {
                    for (p, label, help) in PREPROCESS {
                        ui.selectable_value(&mut settings.preprocess, p, label)
                            .on_hover_text(help);
                    }
                });
            combo.response.labelled_by(pre_label.id);
            if settings.preprocess != before {
                cmds.send(Command::Reload);
            }
            ui.end_row();

            ui.checkbox(&mut settings.resize_images, "Resize")
                .on_hover_text(
                    "Resize images to width × height: needed when images differ in size; \
                     applies on the next load (Reload)",
                );
            ui.add_enabled_ui(settings.resize_images, |ui| {
                ui.horizontal(|ui| {
                    ui.spacing_mut().item_spacing.x = 4.0;
                    ui.add(egui::DragValue::new(&mut settings.resize.0).range(2..=512))
                        .accessible_name("Resize width");
                    ui.label("×");
                    ui.add(egui::DragValue::new(&mut settings.resize.1).range(2..=512))
                        .accessible_name("Resize height");
                    if ui
                        .add_enabled(session.source.is_some(), egui::Button::new("Reload"))
                        .clicked()
                    {
                        cmds.send(Command::Reload);
                    }
                });
            });
            ui.end_row();
        });
}

/// The loading spinner, the load error, and the loaded dataset's summary with its labels
/// picker.
fn summary(ui: &mut egui::Ui, data: &mut Data, app: &mut Shared<'_>) {
    let (settings, session) = (&*app.settings, &*app.session);
    if let Some(what) = &session.loading {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(format!("Loading {what}…"));
        });
    }
    if let Some(err) = &session.load_error {
        ui.label(RichText::new(err).color(ERROR_RED));
    }
    let Some(d) = &session.dataset else {
        if session.loading.is_none() {
            ui.label("No dataset loaded.");
        }
        return;
    };
    ui.label(RichText::new(&d.source).strong());
    ui.label(format!("n = {} samples", d.n()));
    ui.label(format!("m = {} features", d.m()));
    if d.n_classes() > 0 {
        let names = d.class_names.join(", ");
        ui.label(format!("{} classes: {names}", d.n_classes()))
            .on_hover_text(names);
    } else {
        ui.label("unlabelled");
    }
    if let Some((w, h)) = d.image_shape {
        ui.label(format!("images {w} × {h} px"));
    }
    super::labels::show(ui, session, data, app.commands);
    let line = match &d.preprocess_reason {
        Some(why) => format!("preprocessing: {why}"),
        None => format!("preprocessing: {}", preprocess_label(d.preprocess)),
    };
    ui.label(line);
    if let (Some(need), None) = (super::needed_for_model(settings, Some(d)), &session.loading) {
        let model = settings
            .model_kind()
            .map_or("the selected model", |k| k.label());
        ui.label(RichText::new(format!(
            "for {model}, {}: X is prepared again before it runs",
            need.reason
        )))
        .on_hover_text(
            "auto preprocessing depends on the model (docs/models.md §1): a model that \
             compares samples keeps a compositional table on its scale",
        );
    }
    for w in &d.warnings {
        ui.label(RichText::new(format!("warning: {w}")).color(Color32::from_rgb(220, 170, 40)));
    }
}
