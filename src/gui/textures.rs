//! Sample-index → texture cache for image thumbnails, loaded lazily (on first hover), and the
//! heat-map images of per-component weights (FNMF's Θ, the basis gallery's W).

use eframe::egui;

use crate::engine::data::{Dataset, Fingerprint};
use crate::gui::style::VALUE_RAMP;
use egui::{Color32, ColorImage, TextureHandle, TextureOptions};
use std::collections::HashMap;

/// Textures of the thumbnails shown so far, for one dataset. Dropping a handle frees its
/// texture, so clearing the cache on a new dataset frees them all.
#[derive(Default)]
pub struct ThumbnailCache {
    dataset: Option<Fingerprint>,
    textures: HashMap<usize, TextureHandle>,
}

impl ThumbnailCache {
    /// The texture of sample `i`'s thumbnail, uploading it on first use; `None` when the
    /// dataset has no thumbnail for `i`.
    pub fn get(&mut self, ctx: &egui::Context, data: &Dataset, i: usize) -> Option<TextureHandle> {
        if self.dataset != Some(data.fingerprint) {
            self.textures.clear();
            self.dataset = Some(data.fingerprint);
        }
        if let Some(t) = self.textures.get(&i) {
            return Some(t.clone());
        }
        let thumb = data.thumbnails.get(i)?;
        if thumb.width == 0 || thumb.height == 0 || thumb.pixels.len() != thumb.width * thumb.height
        {
            return None;
        }
        let image = ColorImage::from_gray([thumb.width, thumb.height], &thumb.pixels);
        let handle = ctx.load_texture(format!("thumb-{i}"), image, TextureOptions::NEAREST);
        self.textures.insert(i, handle.clone());
        Some(handle)
    }

    /// Number of textures held.
    pub fn len(&self) -> usize {
        self.textures.len()
    }
}

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
