//! Bundled sample datasets, generated deterministically in code (no outside files needed).
//!
//! The same data are shipped as files under `assets/` (`assets/glyphs/<class>/<nn>.png`,
//! `assets/blobs.csv`), written by [`write_files`]; a test checks that loading those files
//! gives exactly the generated data, so the files and the generators cannot drift apart.
//! Glyph pixels are multiples of 1/255 and blob values have three decimals, so both survive
//! the 8-bit PNG and text round trips bit for bit.

use super::image_folder::thumbnail;
use super::{DataError, Dataset, LoadOptions, finish};
use image::GrayImage;
use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};

/// A bundled sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sample {
    /// Small synthetic image set: five glyph classes (16×16) with shifts and noise.
    Glyphs,
    /// Small labelled table with clear clusters (4 features, 4 classes).
    Blobs,
}

impl Sample {
    pub const ALL: &'static [Sample] = &[Sample::Glyphs, Sample::Blobs];

    /// Short name (`--data sample:NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Sample::Glyphs => "glyphs",
            Sample::Blobs => "blobs",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|x| x.name().eq_ignore_ascii_case(s))
    }

    /// One-line description for menus and `--help`.
    pub fn description(self) -> &'static str {
        match self {
            Sample::Glyphs => {
                "150 synthetic 16×16 images: bar, cross, ring, square, triangle (30 each), shifted and noisy"
            }
            Sample::Blobs => "200 points in 4-D, 4 well-separated nonnegative clusters of 50",
        }
    }
}

/// Build a bundled sample with the given options' preprocessing.
pub fn load_sample(sample: Sample, opts: &LoadOptions) -> Result<Dataset, DataError> {
    let raw = match sample {
        Sample::Glyphs => glyphs_raw(),
        Sample::Blobs => blobs_raw(),
    };
    Ok(finish(raw, opts))
}

/// Glyph classes, in natural (alphabetical) order so that the folder loader agrees.
pub const GLYPH_CLASSES: [&str; 5] = ["bar", "cross", "ring", "square", "triangle"];
/// Glyph images per class.
pub const GLYPHS_PER_CLASS: usize = 30;
/// Glyph side in pixels.
pub const GLYPH_SIDE: usize = 16;
const GLYPH_SEED: u64 = 0x6c79_7068_7321; // "glyphs"
const BLOBS_SEED: u64 = 0x0062_6c6f_6273; // "blobs"

/// Ink of glyph `class` at pixel centre offset (dx, dy) from the glyph centre.
fn glyph_ink(class: usize, dx: f64, dy: f64) -> bool {
    let (ax, ay) = (dx.abs(), dy.abs());
    match class {
        0 => ay <= 1.5 && ax <= 5.5,                                // bar
        1 => (ax <= 1.0 && ay <= 5.5) || (ay <= 1.0 && ax <= 5.5),  // cross
        2 => (3.0..=5.5).contains(&(dx * dx + dy * dy).sqrt()),     // ring
        3 => (4.0..=5.5).contains(&ax.max(ay)),                     // square outline
        _ => (-5.5..=4.5).contains(&dy) && ax <= 0.55 * (dy + 5.5), // triangle, apex up
    }
}

/// One glyph image as 8-bit pixels (row-major).
fn glyph_pixels(class: usize, rng: &mut ChaCha8Rng) -> Vec<u8> {
    let s = GLYPH_SIDE;
    let sx: f64 = f64::from(rng.gen_range(-2i32..=2));
    let sy: f64 = f64::from(rng.gen_range(-2i32..=2));
    let ink: f64 = rng.gen_range(0.7..1.0);
    let c = (s as f64 - 1.0) / 2.0;
    let mut px = Vec::with_capacity(s * s);
    for row in 0..s {
        for col in 0..s {
            let dx = col as f64 - c - sx;
            let dy = row as f64 - c - sy;
            let base = if glyph_ink(class, dx, dy) { ink } else { 0.0 };
            let noise: f64 = rng.gen_range(0.0..0.15);
            let v = (base + noise - 0.05).clamp(0.0, 1.0);
            px.push((v * 255.0).round() as u8);
        }
    }
    px
}

/// All glyph images: (class index, file number 1.., pixels).
fn glyph_images() -> Vec<(usize, usize, Vec<u8>)> {
    let mut rng = ChaCha8Rng::seed_from_u64(GLYPH_SEED);
    let mut out = Vec::new();
    for class in 0..GLYPH_CLASSES.len() {
        for k in 1..=GLYPHS_PER_CLASS {
            out.push((class, k, glyph_pixels(class, &mut rng)));
        }
    }
    out
}

fn glyph_file_name(k: usize) -> String {
    format!("{k:02}.png")
}

fn glyphs_raw() -> Dataset {
    let imgs = glyph_images();
    let m = GLYPH_SIDE * GLYPH_SIDE;
    let mut x = Array2::<f64>::zeros((m, imgs.len()));
    let mut names = Vec::new();
    let mut labels = Vec::new();
    let mut thumbs = Vec::new();
    for (i, (class, k, px)) in imgs.iter().enumerate() {
        for (dst, &v) in x.column_mut(i).iter_mut().zip(px) {
            *dst = f64::from(v) / 255.0;
        }
        names.push(format!("{}/{}", GLYPH_CLASSES[*class], glyph_file_name(*k)));
        labels.push(*class);
        let side = GLYPH_SIDE as u32;
        if let Some(img) = GrayImage::from_raw(side, side, px.clone()) {
            thumbs.push(thumbnail(&img));
        }
    }
    let mut ds = Dataset::raw(x, "sample:glyphs");
    ds.labels = Some(labels);
    ds.class_names = GLYPH_CLASSES.iter().map(|s| s.to_string()).collect();
    ds.sample_names = names;
    ds.image_shape = Some((GLYPH_SIDE, GLYPH_SIDE));
    ds.thumbnails = thumbs;
    ds
}

/// Blob table: features × samples, labels 0..4, values with three decimals.
const BLOB_CLASSES: usize = 4;
const BLOBS_PER_CLASS: usize = 50;
const BLOB_FEATURES: usize = 4;

fn blob_values() -> (Vec<[f64; BLOB_FEATURES]>, Vec<usize>) {
    let mut rng = ChaCha8Rng::seed_from_u64(BLOBS_SEED);
    let mut rows = Vec::new();
    let mut labels = Vec::new();
    for class in 0..BLOB_CLASSES {
        for _ in 0..BLOBS_PER_CLASS {
            let mut row = [0.0; BLOB_FEATURES];
            for (f, v) in row.iter_mut().enumerate() {
                let centre = if f == class { 6.0 } else { 1.5 };
                // Sum of four uniforms: roughly normal, sd ≈ 0.58 · 0.6.
                let z: f64 = (0..4).map(|_| rng.gen_range(-1.0..1.0)).sum::<f64>() * 0.6;
                let q = ((centre + z).max(0.0) * 1000.0).round();
                *v = q / 1000.0;
            }
            rows.push(row);
            labels.push(class);
        }
    }
    (rows, labels)
}

fn blobs_raw() -> Dataset {
    let (rows, labels) = blob_values();
    let n = rows.len();
    let x = Array2::from_shape_fn((BLOB_FEATURES, n), |(f, i)| rows[i][f]);
    let mut ds = Dataset::raw(x, "sample:blobs");
    ds.labels = Some(labels);
    ds.class_names = (0..BLOB_CLASSES).map(|c| c.to_string()).collect();
    // Same names as the CSV loader gives `assets/blobs.csv`: the file line (header = line 1).
    ds.sample_names = (0..n).map(|i| format!("row {}", i + 2)).collect();
    ds
}

/// Write a sample's files under `dir` (`glyphs/<class>/<nn>.png` or `blobs.csv`) and return
/// the path to load them from. Used to regenerate `assets/`.
pub fn write_files(sample: Sample, dir: &Path) -> Result<PathBuf, DataError> {
    let werr = |p: &Path, e: &dyn std::fmt::Display| DataError::Write {
        path: p.to_path_buf(),
        why: e.to_string(),
    };
    match sample {
        Sample::Glyphs => {
            let root = dir.join("glyphs");
            let side = GLYPH_SIDE as u32;
            for (class, k, px) in glyph_images() {
                let folder = root.join(GLYPH_CLASSES[class]);
                std::fs::create_dir_all(&folder).map_err(|e| werr(&folder, &e))?;
                let p = folder.join(glyph_file_name(k));
                let img = GrayImage::from_raw(side, side, px)
                    .ok_or_else(|| werr(&p, &"pixel buffer of the wrong size"))?;
                img.save(&p).map_err(|e| werr(&p, &e))?;
            }
            Ok(root)
        }
        Sample::Blobs => {
            std::fs::create_dir_all(dir).map_err(|e| werr(dir, &e))?;
            let p = dir.join("blobs.csv");
            let (rows, labels) = blob_values();
            let mut text = String::new();
            let header: Vec<String> = (1..=BLOB_FEATURES).map(|f| format!("f{f}")).collect();
            text.push_str(&header.join(","));
            text.push_str(",label\n");
            for (row, l) in rows.iter().zip(&labels) {
                let cells: Vec<String> = row.iter().map(|v| format!("{v}")).collect();
                text.push_str(&cells.join(","));
                text.push_str(&format!(",{l}\n"));
            }
            std::fs::write(&p, text).map_err(|e| werr(&p, &e))?;
            Ok(p)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::data::Preprocess;

    fn raw_opts() -> LoadOptions {
        LoadOptions {
            preprocess: Preprocess::None,
            ..LoadOptions::default()
        }
    }

    #[test]
    fn samples_are_deterministic_and_well_formed() -> Result<(), DataError> {
        for &s in Sample::ALL {
            let a = load_sample(s, &raw_opts())?;
            let b = load_sample(s, &raw_opts())?;
            assert_eq!(a.x, b.x);
            assert_eq!(a.fingerprint, b.fingerprint);
            assert_eq!(a.sample_names.len(), a.n());
            assert!(a.x.iter().all(|&v| v >= 0.0 && v.is_finite()));
            assert!(a.labels.is_some());
            let labels = a.labels.as_deref().unwrap_or_default();
            assert_eq!(labels.len(), a.n());
            assert!(labels.iter().all(|&l| l < a.class_names.len()));
            assert_eq!(Sample::from_name(s.name()), Some(s));
        }
        let g = load_sample(Sample::Glyphs, &raw_opts())?;
        assert_eq!((g.m(), g.n(), g.n_classes()), (256, 150, 5));
        assert_eq!(g.thumbnails.len(), 150);
        assert_eq!(g.image_shape, Some((16, 16)));
        // Every pixel is a multiple of 1/255 (8-bit PNG round trip is exact).
        assert!(g.x.iter().all(|&v| ((v * 255.0).round() / 255.0) == v));
        let b = load_sample(Sample::Blobs, &raw_opts())?;
        assert_eq!((b.m(), b.n(), b.n_classes()), (4, 200, 4));
        Ok(())
    }

    #[test]
    fn blobs_are_clustered() -> Result<(), DataError> {
        // Each sample's largest feature is its class: the clusters are clearly separated.
        let b = load_sample(Sample::Blobs, &raw_opts())?;
        let labels = b.labels.unwrap_or_default();
        assert_eq!(labels.len(), b.x.ncols());
        for (i, col) in b.x.columns().into_iter().enumerate() {
            let argmax = (0..4).max_by(|&p, &q| col[p].total_cmp(&col[q]));
            assert_eq!(argmax, Some(labels[i]), "sample {i}: {col}");
        }
        Ok(())
    }

    #[test]
    fn glyph_classes_differ() -> Result<(), DataError> {
        // Mean images of the classes are far apart relative to their norms.
        let g = load_sample(Sample::Glyphs, &raw_opts())?;
        let labels = g.labels.unwrap_or_default();
        let mut means = Array2::<f64>::zeros((256, 5));
        for (i, &l) in labels.iter().enumerate() {
            let mut c = means.column_mut(l);
            c += &g.x.column(i);
        }
        for a in 0..5 {
            for b in (a + 1)..5 {
                let d = (&means.column(a) - &means.column(b))
                    .mapv(|v| v * v)
                    .sum()
                    .sqrt();
                assert!(d > 10.0, "classes {a} and {b} too close: {d}");
            }
        }
        Ok(())
    }
}
