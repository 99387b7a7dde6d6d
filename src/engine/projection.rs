//! PCA-2D of the columns of H for the live scatter, aligned frame to frame.
//!
//! PCA axes have arbitrary signs (and near-equal variances swap axes), so consecutive frames of
//! a running fit would flip. Each frame is therefore rotated/reflected onto the previous one by
//! the 2-D orthogonal Procrustes solution (closed form, no SVD needed), which keeps the points
//! moving smoothly. With k = 1 there is nothing to project: the frame is (sample index, h).

use linfa::DatasetBase;
use linfa::traits::{Fit, Predict};
use linfa_reduction::Pca;
use ndarray::{Array2, ArrayView2, Axis};

/// Errors from projecting H.
#[derive(Debug, thiserror::Error)]
pub enum ProjectionError {
    #[error("nothing to project: H has no samples")]
    Empty,
    #[error("PCA of H failed: {0}")]
    Pca(String),
}

/// Projects successive H's to 2-D, each aligned to the previous frame.
#[derive(Clone, Debug, Default)]
pub struct Projector {
    prev: Option<Array2<f64>>,
}

impl Projector {
    pub fn new() -> Self {
        Self::default()
    }

    /// Forget the previous frame (a new run starts).
    pub fn reset(&mut self) {
        self.prev = None;
    }

    /// n×2 coordinates of the columns of `h` (k×n).
    pub fn project(&mut self, h: ArrayView2<'_, f64>) -> Result<Array2<f64>, ProjectionError> {
        let (k, n) = h.dim();
        if n == 0 {
            return Err(ProjectionError::Empty);
        }
        let mut p = if k == 1 {
            let mut p = Array2::<f64>::zeros((n, 2));
            for i in 0..n {
                p[[i, 0]] = i as f64;
                p[[i, 1]] = h[[0, i]];
            }
            // Index against value needs no alignment.
            self.prev = None;
            return Ok(p);
        } else {
            pca2(h)?
        };
        if let Some(prev) = &self.prev
            && prev.dim() == p.dim()
        {
            let r = procrustes2(&p, prev);
            p = p.dot(&r);
        }
        self.prev = Some(p.clone());
        Ok(p)
    }
}

/// PCA of the columns of H (samples as rows of Hᵀ) onto the top two components.
fn pca2(h: ArrayView2<'_, f64>) -> Result<Array2<f64>, ProjectionError> {
    let ht = h.t().as_standard_layout().into_owned();
    if ht.nrows() < 2 {
        // One sample: put it at the origin.
        return Ok(Array2::zeros((ht.nrows(), 2)));
    }
    let ds = DatasetBase::from(ht);
    let pca = Pca::params(2)
        .fit(&ds)
        .map_err(|e| ProjectionError::Pca(e.to_string()))?;
    let out: Array2<f64> = pca.predict(&ds.records);
    if out.iter().any(|v| !v.is_finite()) {
        return Err(ProjectionError::Pca("non-finite coordinates".into()));
    }
    Ok(out)
}

/// The orthogonal 2×2 R (rotation or reflection) maximising tr(Rᵀ PᵀQ), i.e. minimising
/// ‖P R − Q‖_F over centred P, Q (both n×2).
fn procrustes2(p: &Array2<f64>, q: &Array2<f64>) -> Array2<f64> {
    let pc = p - &p.mean_axis(Axis(0)).unwrap_or_else(|| ndarray::arr1(&[0.0, 0.0]));
    let qc = q - &q.mean_axis(Axis(0)).unwrap_or_else(|| ndarray::arr1(&[0.0, 0.0]));
    let m = pc.t().dot(&qc);
    let (a, b, c, d) = (m[[0, 0]], m[[0, 1]], m[[1, 0]], m[[1, 1]]);
    // Rotation [[cos, −sin], [sin, cos]]: tr = cos(a + d) + sin(c − b).
    let rot = (a + d).hypot(c - b);
    // Reflection [[cos, sin], [sin, −cos]]: tr = cos(a − d) + sin(c + b).
    let refl = (a - d).hypot(c + b);
    if rot >= refl {
        let th = (c - b).atan2(a + d);
        ndarray::arr2(&[[th.cos(), -th.sin()], [th.sin(), th.cos()]])
    } else {
        let th = (c + b).atan2(a - d);
        ndarray::arr2(&[[th.cos(), th.sin()], [th.sin(), -th.cos()]])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn procrustes_undoes_a_rotation_and_a_reflection() {
        let q = array![[1.0, 0.0], [0.0, 2.0], [-1.0, -0.5], [0.3, -1.5]];
        for r in [
            array![[0.6, -0.8], [0.8, 0.6]],   // rotation
            array![[1.0, 0.0], [0.0, -1.0]],   // reflection (sign flip)
            array![[0.0, 1.0], [1.0, 0.0]],    // axis swap
        ] {
            let p = q.dot(&r.t());
            let back = p.dot(&procrustes2(&p, &q));
            for (x, y) in back.iter().zip(q.iter()) {
                assert!((x - y).abs() < 1e-12, "{back} vs {q}");
            }
        }
    }

    #[test]
    fn consecutive_frames_do_not_flip() {
        let h1 = array![[1.0, 2.0, 3.0, 0.5, 2.5], [0.2, 0.1, 0.9, 1.5, 0.3], [0.0, 1.0, 0.5, 0.5, 2.0]];
        let mut proj = Projector::new();
        let a = proj.project(h1.view()).expect("pca");
        // A tiny change of H must give a nearby frame, not a sign-flipped one.
        let h2 = &h1 * 1.001;
        let b = proj.project(h2.view()).expect("pca");
        let diff = (&a - &b).mapv(f64::abs).sum();
        assert!(diff < 0.05, "frames jumped by {diff}");
    }

    #[test]
    fn rank_one_is_shown_against_sample_index() {
        let h = array![[0.5, 1.5, 2.5]];
        let p = Projector::new().project(h.view()).expect("k=1");
        assert_eq!(p, array![[0.0, 0.5], [1.0, 1.5], [2.0, 2.5]]);
    }
}
