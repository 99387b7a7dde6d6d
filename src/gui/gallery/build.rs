//! The gallery of one snapshot: the bases by the norm of their H row, the samples each one
//! dominates and those using it most, W's columns as textures.
//!
//! These numbers are O(kn) per snapshot (row norms of H, each sample's dominant basis, the
//! samples using each basis most): small next to the O(mnk) iteration that produced the
//! snapshot, so they are computed when a new snapshot is drawn, once.

use crate::engine::jobs::worker::Snapshot;
use eframe::egui;
use ndarray::ArrayView2;

/// Samples shown per basis as "the samples that use it most".
pub const TOP_SAMPLES: usize = 6;

/// The gallery of one snapshot: the order of the bases, each one's samples, its textures.
#[derive(Default)]
pub struct Gallery {
    /// The snapshot it was built from, held so that its allocation cannot be reused by a
    /// later snapshot (which an address alone would mistake for this one).
    pub built_from: Option<std::sync::Arc<Snapshot>>,
    /// Bases by decreasing norm of their H row.
    pub order: Vec<usize>,
    /// ‖H row c‖ per basis c.
    pub norms: Vec<f64>,
    /// Per basis: the samples whose largest H entry is that basis, in index order.
    pub dominant: Vec<Vec<usize>>,
    /// Per basis: the [`TOP_SAMPLES`] samples with the largest H entry on it, largest first.
    pub top: Vec<Vec<usize>>,
    /// Per basis: W's column as an image (image data) or a strip (other data).
    pub textures: Vec<egui::TextureHandle>,
}

impl Gallery {
    /// Rebuild from `snap` unless it was built from it already; `shape` is the data's image
    /// shape. Returns whether it was rebuilt.
    pub fn update(
        &mut self,
        ctx: &egui::Context,
        snap: &std::sync::Arc<Snapshot>,
        shape: Option<(usize, usize)>,
    ) -> bool {
        if self
            .built_from
            .as_ref()
            .is_some_and(|b| std::sync::Arc::ptr_eq(b, snap))
        {
            return false;
        }
        self.built_from = Some(std::sync::Arc::clone(snap));
        let h = snap.h.view();
        let (order, norms) = basis_order(h);
        self.order = order;
        self.norms = norms;
        self.dominant = dominant(h);
        self.top = (0..h.nrows())
            .map(|c| top_samples(h, c, TOP_SAMPLES))
            .collect();
        self.textures = match &snap.w {
            Some(w) if w.ncols() == h.nrows() => {
                let wt = w.t().to_owned();
                let m = w.nrows();
                let image = shape.filter(|&(a, b)| a * b == m);
                crate::gui::textures::component_images(&wt, image)
                    .into_iter()
                    .enumerate()
                    .map(|(c, im)| {
                        ctx.load_texture(format!("basis-{c}"), im, egui::TextureOptions::NEAREST)
                    })
                    .collect()
            }
            _ => Vec::new(),
        };
        true
    }
}

/// The rows of `h` (k×n) by decreasing Euclidean norm (ties: smaller index first), and the
/// norms by row.
pub fn basis_order(h: ArrayView2<'_, f64>) -> (Vec<usize>, Vec<f64>) {
    let norms: Vec<f64> = h
        .rows()
        .into_iter()
        .map(|r| r.iter().map(|v| v * v).sum::<f64>().sqrt())
        .collect();
    let mut order: Vec<usize> = (0..norms.len()).collect();
    order.sort_by(|&a, &b| norms[b].total_cmp(&norms[a]).then(a.cmp(&b)));
    (order, norms)
}

/// Per row c of `h` (k×n): the samples (columns) whose largest entry is in row c (ties: the
/// smaller row); all-zero columns load on no basis.
pub fn dominant(h: ArrayView2<'_, f64>) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); h.nrows()];
    for (i, col) in h.columns().into_iter().enumerate() {
        let mut best: Option<(usize, f64)> = None;
        for (c, &v) in col.iter().enumerate() {
            if v > 0.0 && best.is_none_or(|(_, b)| v > b) {
                best = Some((c, v));
            }
        }
        if let Some((c, _)) = best {
            out[c].push(i);
        }
    }
    out
}

/// The `count` samples with the largest entry in row `c` of `h`, largest first (ties: the
/// smaller index); zero entries are left out.
pub fn top_samples(h: ArrayView2<'_, f64>, c: usize, count: usize) -> Vec<usize> {
    let row = h.row(c);
    let mut idx: Vec<usize> = (0..row.len()).filter(|&i| row[i] > 0.0).collect();
    idx.sort_by(|&a, &b| row[b].total_cmp(&row[a]).then(a.cmp(&b)));
    idx.truncate(count);
    idx
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// Rows by decreasing norm; every sample on its largest row; the top samples of a row by
    /// their entry, zeros left out.
    #[test]
    fn orders_bases_and_finds_their_samples() {
        // Row norms: 1, 5, 0.
        let h = array![
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 3.0, 4.0, 0.0],
            [0.0, 0.0, 0.0, 0.0]
        ];
        let (order, norms) = basis_order(h.view());
        assert_eq!(order, vec![1, 0, 2]);
        assert!((norms[1] - 5.0).abs() < 1e-12);
        assert_eq!(dominant(h.view()), vec![vec![0], vec![1, 2], vec![]]);
        assert_eq!(top_samples(h.view(), 1, 6), vec![2, 1]);
        assert_eq!(top_samples(h.view(), 1, 1), vec![2]);
        assert!(top_samples(h.view(), 2, 6).is_empty());
    }
}
