//! Bundled sample datasets, generated deterministically in code (no outside files needed).
//!
//! STUB: the data loaders task replaces this with the real generators (glyph images, blobs CSV)
//! matching the files in `assets/`.

use super::{DataError, Dataset, LoadOptions};
use ndarray::Array2;

/// A bundled sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sample {
    /// Small synthetic image set: a few glyph classes with noise.
    Glyphs,
    /// Small labelled table with clear clusters.
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
        Self::ALL.iter().copied().find(|x| x.name().eq_ignore_ascii_case(s))
    }
}

/// Build a bundled sample with the given options' preprocessing.
pub fn load_sample(sample: Sample, opts: &LoadOptions) -> Result<Dataset, DataError> {
    let _ = opts;
    // Three well-separated nonnegative clusters in 4-D, 20 samples each.
    let (m, per, c) = (4, 20, 3);
    let mut x = Array2::<f64>::zeros((m, per * c));
    let mut labels = Vec::new();
    for cls in 0..c {
        for s in 0..per {
            let i = cls * per + s;
            for f in 0..m {
                let base = if f % c == cls { 5.0 } else { 1.0 };
                x[[f, i]] = base + 0.1 * (((i * 7 + f * 13) % 10) as f64);
            }
            labels.push(cls);
        }
    }
    Ok(Dataset::from_parts(
        x,
        Some(labels),
        (0..c).map(|k| format!("class {k}")).collect(),
        format!("sample:{}", sample.name()),
    ))
}
