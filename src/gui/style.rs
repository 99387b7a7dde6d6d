//! Colours and small layout helpers shared by the panels and the features.

use eframe::egui::{self, Color32};

/// Red for errors, readable on both themes.
pub const ERROR_RED: Color32 = Color32::from_rgb(230, 70, 60);

/// Sequential ramp (viridis at five stops, dark to light) for colouring by a model's value.
pub const VALUE_RAMP: [Color32; 5] = [
    Color32::from_rgb(68, 1, 84),
    Color32::from_rgb(59, 82, 139),
    Color32::from_rgb(33, 145, 140),
    Color32::from_rgb(94, 201, 98),
    Color32::from_rgb(253, 231, 37),
];

/// Lays `add` out from the right edge of the panel's visible area, so that a button added first
/// always shows and a field with infinite desired width takes what is left. The right panel
/// scrolls both ways (the history table is wider than it), so `available_width` is unbounded
/// there and a plain right-to-left layout would put the button out of sight.
pub fn right_aligned(ui: &mut egui::Ui, add: impl FnOnce(&mut egui::Ui)) {
    let width = (ui.clip_rect().right() - ui.cursor().left() - ui.spacing().item_spacing.x)
        .max(ui.spacing().interact_size.x * 3.0);
    let size = egui::vec2(width, ui.spacing().interact_size.y);
    ui.allocate_ui_with_layout(size, egui::Layout::right_to_left(egui::Align::Center), add);
}

/// The width from the cursor to the visible right edge of the panel (see [`right_aligned`]):
/// what a field may take without running under the panel's edge.
pub fn visible_width(ui: &egui::Ui) -> f32 {
    (ui.clip_rect().right() - ui.cursor().left() - ui.spacing().item_spacing.x)
        .min(ui.available_width())
        .max(ui.spacing().interact_size.x)
}

/// Dark or light visuals.
pub fn set_theme(ctx: &egui::Context, dark: bool) {
    ctx.set_theme(if dark {
        egui::Theme::Dark
    } else {
        egui::Theme::Light
    });
}

/// At most this many triplets are drawn (keeps frames fast): the scatter, the comparison
/// and the exported figures.
pub const MAX_DRAWN: usize = 300;

/// `text` with every character the loaded fonts cannot draw replaced by a close ASCII
/// stand-in (engine texts are written for Markdown, with math symbols such as ‖).
pub fn displayable(ctx: &egui::Context, text: &str) -> String {
    let font = egui::FontId::proportional(14.0);
    ctx.fonts_mut(|f| {
        text.chars()
            .map(|c| {
                if c.is_control() || f.has_glyph(&font, c) {
                    c.to_string()
                } else {
                    match c {
                        '‖' => "||".to_owned(),
                        '→' => "->".to_owned(),
                        '←' => "<-".to_owned(),
                        '⊘' => "/".to_owned(),
                        'ᵀ' => "^T".to_owned(),
                        '⊙' => "*".to_owned(),
                        '√' => "sqrt".to_owned(),
                        _ => "?".to_owned(),
                    }
                }
            })
            .collect()
    })
}
