//! Colours shared by the panels and the features.

use eframe::egui::Color32;

/// Red for errors, readable on both themes.
pub const ERROR_RED: Color32 = Color32::from_rgb(230, 70, 60);
