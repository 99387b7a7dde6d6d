//! Pointer gestures on the whole app for the UI tests that click the scatter. Kept out of
//! `common/mod.rs` so the test files that never click do not compile an unused helper;
//! include it with `#[path = "common/pointer.rs"] mod pointer;`.

use eframe::egui;
use egui_kittest::Harness;
use nmf_playground::gui::App;

/// Press and release the primary button at `pos` (a click), one event per frame.
pub fn click_at(h: &mut Harness<'static, App>, pos: egui::Pos2) {
    h.hover_at(pos);
    h.step();
    h.drag_at(pos);
    h.step();
    h.event(egui::Event::PointerButton {
        pos,
        button: egui::PointerButton::Primary,
        pressed: false,
        modifiers: egui::Modifiers::NONE,
    });
    h.step();
}
