//! What the sessions feature draws: its File menu items, the recovery offer and the
//! question about a session whose data changed.

use eframe::egui;

use super::Command;
use crate::gui::command::{Commands, PathAsk, UiCommand};
use crate::gui::format::counted;
use crate::gui::state::{Session, Settings};

/// The File menu's session items.
pub(super) fn file_items(ui: &mut egui::Ui, settings: &mut Settings, cmds: &mut Commands) {
    ui.separator();
    if ui.button("Open session… (Ctrl+O)").clicked() {
        cmds.push(UiCommand::AskPath(PathAsk::OpenSession));
    }
    if ui.button("Save session (Ctrl+Shift+S)").clicked() {
        cmds.send(Command::Save(None));
    }
    if ui.button("Save session as…").clicked() {
        cmds.push(UiCommand::AskPath(PathAsk::SaveSession));
    }
    ui.checkbox(&mut settings.session_factors, "Include H and W in sessions")
        .on_hover_text("Save each run's H and W as .npy files beside the session");
}

/// The recovery offer ("Recover N unsaved edits from <time>") and the question about a
/// session whose data changed; at most one shows at a time.
pub(super) fn modals(ctx: &egui::Context, session: &Session, cmds: &mut Commands) {
    if let Some(found) = &session.recovery_offer {
        // Only the buttons answer: a click beside the modal or Esc must not discard an
        // hour of edits.
        egui::Modal::new(egui::Id::unique("recovery_offer")).show(ctx, |ui| {
            ui.set_max_width(440.0);
            ui.heading("Unsaved edits found");
            ui.label(format!(
                "Recover {} from {}? ({}, {}; the app was closed without saving them.)",
                counted(found.edits as usize, "unsaved edit", "unsaved edits"),
                found.time_text(),
                counted(found.store.triplets().len(), "triplet", "triplets"),
                counted(
                    found.store.labels().n_labelled(),
                    "painted label",
                    "painted labels"
                )
            ));
            ui.horizontal(|ui| {
                if ui.button("Recover").clicked() {
                    cmds.send(Command::Recover(true));
                }
                if ui.button("Discard").clicked() {
                    cmds.send(Command::Recover(false));
                }
            });
        });
        return;
    }
    let Some(open) = &session.opening else {
        return;
    };
    let Some(why) = &open.changed else {
        return;
    };
    let resp = egui::Modal::new(egui::Id::unique("session_data_changed")).show(ctx, |ui| {
        ui.set_max_width(440.0);
        ui.heading("The data changed");
        ui.label(format!(
            "{} was saved on other data: {why}. Its triplets and labels may not mean the same \
             samples any more.",
            open.path.display()
        ));
        ui.horizontal(|ui| {
            if ui.button("Open the constraints anyway").clicked() {
                cmds.send(Command::DataChanged(true));
            }
            if ui.button("Stop: do not open them").clicked() {
                cmds.send(Command::DataChanged(false));
            }
        });
    });
    if resp.should_close() {
        cmds.send(Command::DataChanged(false));
    }
}
