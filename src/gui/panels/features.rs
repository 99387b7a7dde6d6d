//! A model's per-component feature weights (FNMF's Θ, docs/models.md §5), live: one heat map
//! per component when the samples are images (which pixels it weighs), bars otherwise (which
//! features). Drawn from the latest snapshot; the textures are rebuilt once per snapshot.

use crate::engine::data::Dataset;
use crate::engine::worker::Snapshot;
use crate::gui::scatter_cache::VALUE_RAMP;
use crate::gui::view::ViewState;
use eframe::egui;
use egui::{Color32, ColorImage, RichText, TextureOptions};
use egui_plot::{Bar, BarChart, Plot};

/// Above this many features the bars become a one-row heat strip per component.
const MAX_BARS: usize = 64;

/// The colour of `v` in `[0, hi]` on the value ramp (dark = 0, light = the component's max).
fn ramp(v: f64, hi: f64) -> Color32 {
    let t = if hi > 0.0 && v.is_finite() {
        (v / hi).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * (VALUE_RAMP.len() - 1) as f64;
    let i = (x.floor() as usize).min(VALUE_RAMP.len() - 2);
    let f = (x - i as f64) as f32;
    let (a, b) = (VALUE_RAMP[i], VALUE_RAMP[i + 1]);
    let mix = |p: u8, q: u8| (p as f32 + f * (q as f32 - p as f32)).round() as u8;
    Color32::from_rgb(mix(a.r(), b.r()), mix(a.g(), b.g()), mix(a.b(), b.b()))
}

/// The r component images of `w` (r×m): `(width, height)` pixels each for image data, else a
/// 1×m strip.
pub fn component_images(
    w: &ndarray::Array2<f64>,
    shape: Option<(usize, usize)>,
) -> Vec<ColorImage> {
    let m = w.ncols();
    let (iw, ih) = match shape {
        Some((a, b)) if a * b == m => (a, b),
        _ => (m, 1),
    };
    w.rows()
        .into_iter()
        .map(|row| {
            let hi = row
                .iter()
                .copied()
                .filter(|v| v.is_finite())
                .fold(0.0, f64::max);
            let pixels: Vec<Color32> = row.iter().map(|&v| ramp(v, hi)).collect();
            ColorImage::new([iw, ih], pixels)
        })
        .collect()
}

/// The section, when the latest snapshot has feature weights.
pub fn show(ui: &mut egui::Ui, data: &Dataset, snapshot: &Snapshot, view: &mut ViewState) {
    let Some((name, w)) = &snapshot.feature_weights else {
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
    if view.feature_textures.0 != Some(snapshot.iteration) || view.feature_textures.1.len() != r {
        let images = component_images(w, image_data);
        view.feature_textures = (
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
        for (j, tex) in view.feature_textures.1.iter().enumerate() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// Each component is scaled to its own maximum: 0 is the ramp's dark end, the maximum its
    /// light end; image data give width×height pictures, other data a strip.
    #[test]
    fn component_images_scale_each_row_to_its_maximum() {
        let w = array![[0.0, 0.5, 1.0, 0.25], [2.0, 0.0, 0.0, 0.0]];
        let imgs = component_images(&w, Some((2, 2)));
        assert_eq!(imgs.len(), 2);
        assert_eq!(imgs[0].size, [2, 2]);
        assert_eq!(imgs[0].pixels[0], VALUE_RAMP[0]);
        assert_eq!(imgs[0].pixels[2], VALUE_RAMP[4]);
        assert_eq!(imgs[1].pixels[0], VALUE_RAMP[4]);
        let strip = component_images(&w, None);
        assert_eq!(strip[0].size, [4, 1]);
    }
}
