//! A model's per-component feature weights (FNMF's Θ, docs/models.md §5), live: one heat map
//! per component when the samples are images (which pixels it weighs), bars otherwise (which
//! features). Drawn from the latest snapshot; the textures are rebuilt once per snapshot.

use crate::engine::data::Dataset;
use crate::engine::jobs::worker::Snapshot;
use crate::gui::textures::component_images;
use eframe::egui;
use egui::{RichText, TextureOptions};
use egui_plot::{Bar, BarChart, Plot};

/// Above this many features the bars become a one-row heat strip per component.
const MAX_BARS: usize = 64;

/// The section, when the latest snapshot has feature weights; `textures` are the heat maps
/// of the snapshot iteration they show, rebuilt when another snapshot comes.
pub fn show(
    ui: &mut egui::Ui,
    data: &Dataset,
    snapshot: &Snapshot,
    textures: &mut (Option<usize>, Vec<egui::TextureHandle>),
) {
    let Some((name, w)) = &snapshot.outputs.feature_weights else {
        return;
    };
    let (r, m) = w.dim();
    if m != data.m() || r == 0 {
        return;
    }
    ui.separator();
    ui.label(RichText::new(format!("Feature weights: {name}")).strong())
        .on_hover_text(
            "How much each component weighs each feature (rows of Θ, docs/models.md §5): \
             light = heavily weighted. Updated live.",
        );
    let image_data = data.image_shape.filter(|&(a, b)| a * b == m);
    if image_data.is_none() && m <= MAX_BARS {
        for (j, row) in w.rows().into_iter().enumerate() {
            let bars: Vec<Bar> = row
                .iter()
                .enumerate()
                .map(|(f, &v)| Bar::new(f as f64, v).width(0.8))
                .collect();
            Plot::new(("feature_bars", j))
                .height(70.0)
                .show_axes([false, true])
                .allow_drag(false)
                .allow_zoom(false)
                .allow_scroll(false)
                .show(ui, |p| {
                    p.bar_chart(BarChart::new(format!("component {}", j + 1), bars));
                });
        }
        return;
    }
    if textures.0 != Some(snapshot.iteration) || textures.1.len() != r {
        let images = component_images(w, image_data);
        *textures = (
            Some(snapshot.iteration),
            images
                .into_iter()
                .enumerate()
                .map(|(j, im)| {
                    ui.ctx()
                        .load_texture(format!("theta-{j}"), im, TextureOptions::NEAREST)
                })
                .collect(),
        );
    }
    let side = if image_data.is_some() { 72.0 } else { 0.0 };
    ui.horizontal_wrapped(|ui| {
        for (j, tex) in textures.1.iter().enumerate() {
            let size = if image_data.is_some() {
                let [a, b] = tex.size();
                egui::vec2(side, side * b as f32 / a.max(1) as f32)
            } else {
                egui::vec2(ui.available_width().max(60.0), 12.0)
            };
            ui.vertical(|ui| {
                ui.add(egui::Image::new((tex.id(), size)))
                    .on_hover_text(format!("component {}", j + 1));
                if image_data.is_some() {
                    ui.label(RichText::new(format!("θ{}", j + 1)).small());
                }
            });
        }
    });
}
