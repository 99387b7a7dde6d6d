//! Sample-index → texture cache for image thumbnails, loaded lazily (on first hover).

use eframe::egui;

use crate::engine::data::{Dataset, Fingerprint};
use egui::{ColorImage, TextureHandle, TextureOptions};
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
