//! PCA-2D of the columns of H for the live scatter, aligned frame to frame.
//!
//! PCA axes have arbitrary signs (and near-equal variances swap axes), so consecutive frames of
//! a running fit would flip. Each frame is therefore rotated/reflected onto the previous one by
//! the 2-D orthogonal Procrustes solution (closed form, no SVD needed), which keeps the points
//! moving smoothly. With k = 1 there is nothing to project: the frame is (sample index, h).
//!
//! The same closed form, with a uniform scale and a translation added, aligns one run's
//! layout to another's ([`align_similarity`], the side-by-side comparison of two runs).

use crate::engine::linalg::{Op, gemm};
use ndarray::{Array2, ArrayView2, Axis};

/// Errors from projecting H.
#[derive(Debug, thiserror::Error)]
pub enum ProjectionError {
    #[error("nothing to project: H has no samples")]
    Empty,
    #[error("PCA of H failed: {0}")]
    Pca(String),
    /// Two layouts to align that are not both n×2 with the same n.
    #[error("cannot align a {moving:?} layout to a {target:?} one: both must be n×2, same n")]
    Shape {
        moving: (usize, usize),
        target: (usize, usize),
    },
    /// A NaN or ∞ in a layout to align.
    #[error("the {which} layout has a non-finite coordinate at sample {sample}")]
    NonFinite { which: &'static str, sample: usize },
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
            let r = procrustes2(p.view(), prev.view());
            p = p.dot(&r);
        }
        self.prev = Some(p.clone());
        Ok(p)
    }
}

/// PCA of the columns of H onto the top two principal axes: the exact eigendecomposition of
/// the k×k covariance (faer's symmetric eigensolver), O(nk² + k³).
///
/// linfa-reduction 0.8's `Pca` was tried first: without BLAS it uses a seeded LOBPCG truncated
/// SVD, whose components for a 0.1 % rescaled H differed by O(1) (see the test
/// `consecutive_frames_do_not_flip`), which makes a live animation jump. H has few rows
/// (k ≤ a few hundred), so the exact route is also the cheap one.
fn pca2(h: ArrayView2<'_, f64>) -> Result<Array2<f64>, ProjectionError> {
    let (k, n) = h.dim();
    if n < 2 {
        // One sample: put it at the origin.
        return Ok(Array2::zeros((n, 2)));
    }
    let mean = h.mean_axis(Axis(1)).ok_or(ProjectionError::Empty)?;
    let hc = &h - &mean.insert_axis(Axis(1));
    let cov = gemm(hc.view(), Op::N, hc.view(), Op::T);
    if cov.iter().any(|v| !v.is_finite()) {
        return Err(ProjectionError::Pca("H has non-finite entries".into()));
    }
    let c = faer::Mat::from_fn(k, k, |i, j| cov[[i, j]]);
    let evd = c
        .self_adjoint_eigen(faer::Side::Lower)
        .map_err(|e| ProjectionError::Pca(format!("{e:?}")))?;
    let u = evd.U();
    // Eigenvalues come in nondecreasing order: the last two columns are the top axes. Each
    // axis gets a deterministic sign (largest-magnitude entry positive).
    let mut axes = Array2::<f64>::zeros((k, 2));
    for (slot, col) in [(0, k - 1), (1, k.saturating_sub(2))] {
        let mut best = 0.0f64;
        for i in 0..k {
            if u[(i, col)].abs() > best.abs() {
                best = u[(i, col)];
            }
        }
        let sign = if best < 0.0 { -1.0 } else { 1.0 };
        for i in 0..k {
            axes[[i, slot]] = sign * u[(i, col)];
        }
    }
    Ok(gemm(hc.view(), Op::T, axes.view(), Op::N))
}

/// The orthogonal 2×2 R (rotation or reflection) maximising tr(Rᵀ PᵀQ), i.e. minimising
/// ‖P R − Q‖_F over centred P, Q (both n×2).
fn procrustes2(p: ArrayView2<'_, f64>, q: ArrayView2<'_, f64>) -> Array2<f64> {
    procrustes2_centred(centred(p).view(), centred(q).view()).0
}

/// `p` minus its column means (n×2).
fn centred(p: ArrayView2<'_, f64>) -> Array2<f64> {
    &p - &p
        .mean_axis(Axis(0))
        .unwrap_or_else(|| ndarray::arr1(&[0.0, 0.0]))
}

/// [`procrustes2`] of already centred P, Q, with the trace tr(Rᵀ PᵀQ) it reaches (the sum
/// of the singular values of PᵀQ, reflection allowed).
fn procrustes2_centred(pc: ArrayView2<'_, f64>, qc: ArrayView2<'_, f64>) -> (Array2<f64>, f64) {
    let m = pc.t().dot(&qc);
    let (a, b, c, d) = (m[[0, 0]], m[[0, 1]], m[[1, 0]], m[[1, 1]]);
    // Rotation [[cos, −sin], [sin, cos]]: tr = cos(a + d) + sin(c − b).
    let rot = (a + d).hypot(c - b);
    // Reflection [[cos, sin], [sin, −cos]]: tr = cos(a − d) + sin(c + b).
    let refl = (a - d).hypot(c + b);
    let r = if rot >= refl {
        let th = (c - b).atan2(a + d);
        ndarray::arr2(&[[th.cos(), -th.sin()], [th.sin(), th.cos()]])
    } else {
        let th = (c + b).atan2(a - d);
        ndarray::arr2(&[[th.cos(), th.sin()], [th.sin(), -th.cos()]])
    };
    (r, rot.max(refl))
}

/// A similarity transform of the plane acting on row vectors: `x ↦ scale · x R + translation`,
/// with R orthogonal (a rotation, or a reflection when its determinant is −1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Similarity {
    pub rotation: [[f64; 2]; 2],
    pub scale: f64,
    pub translation: [f64; 2],
    /// Root mean square distance, over the samples, between the transformed layout and the
    /// target it was aligned to.
    pub rms: f64,
}

impl Similarity {
    /// The transform applied to every row of `points` (n×2).
    pub fn apply(&self, points: ArrayView2<'_, f64>) -> Array2<f64> {
        let [[r00, r01], [r10, r11]] = self.rotation;
        let mut out = Array2::<f64>::zeros((points.nrows(), 2));
        for (mut o, p) in out.rows_mut().into_iter().zip(points.rows()) {
            o[0] = self.scale * (p[0] * r00 + p[1] * r10) + self.translation[0];
            o[1] = self.scale * (p[0] * r01 + p[1] * r11) + self.translation[1];
        }
        out
    }

    /// The angle in degrees, in (−180, 180], by which the first axis turns counterclockwise
    /// (the image of (1, 0) is the first row of R; for a reflection the second axis also flips).
    pub fn degrees(&self) -> f64 {
        self.rotation[0][1].atan2(self.rotation[0][0]).to_degrees()
    }

    /// The transform flips the plane (det R = −1).
    pub fn is_reflection(&self) -> bool {
        let [[a, b], [c, d]] = self.rotation;
        a * d - b * c < 0.0
    }
}

/// The similarity (rotation or reflection, uniform scale, translation) that maps `moving`
/// onto `target` (both n×2, row i the same sample) in least squares over all samples: the
/// orthogonal Procrustes R of the centred layouts (closed form, as between live frames),
/// scale = tr(Rᵀ M_cᵀ T_c) / ‖M_c‖², translation = mean(T) − scale · mean(M) R. A layout with
/// every sample at one point has no orientation: identity and unit scale, translated onto
/// the target's mean.
pub fn align_similarity(
    moving: ArrayView2<'_, f64>,
    target: ArrayView2<'_, f64>,
) -> Result<Similarity, ProjectionError> {
    if moving.dim() != target.dim() || moving.ncols() != 2 {
        return Err(ProjectionError::Shape {
            moving: moving.dim(),
            target: target.dim(),
        });
    }
    if moving.nrows() == 0 {
        return Err(ProjectionError::Empty);
    }
    for (which, layout) in [("moving", moving.view()), ("target", target.view())] {
        if let Some(sample) = layout
            .rows()
            .into_iter()
            .position(|r| r.iter().any(|v| !v.is_finite()))
        {
            return Err(ProjectionError::NonFinite { which, sample });
        }
    }
    let mean = |p: ArrayView2<'_, f64>| {
        p.mean_axis(Axis(0))
            .unwrap_or_else(|| ndarray::arr1(&[0.0, 0.0]))
    };
    let (mm, tm) = (mean(moving), mean(target));
    let (mc, tc) = (centred(moving), centred(target));
    let spread = mc.iter().map(|v| v * v).sum::<f64>();
    let (r, scale) = if spread > 0.0 {
        let (r, trace) = procrustes2_centred(mc.view(), tc.view());
        (r, trace / spread)
    } else {
        (ndarray::arr2(&[[1.0, 0.0], [0.0, 1.0]]), 1.0)
    };
    let shifted = mm.dot(&r) * scale;
    let mut sim = Similarity {
        rotation: [[r[[0, 0]], r[[0, 1]]], [r[[1, 0]], r[[1, 1]]]],
        scale,
        translation: [tm[0] - shifted[0], tm[1] - shifted[1]],
        rms: 0.0,
    };
    let aligned = sim.apply(moving);
    let sq = (&aligned - &target).iter().map(|v| v * v).sum::<f64>();
    sim.rms = (sq / moving.nrows() as f64).sqrt();
    Ok(sim)
}

/// Block size of [`pca2_of_samples`]'s subspace iteration (two wanted, two to converge them).
const PCA_X_BLOCK: usize = 4;
/// Iterations of [`pca2_of_samples`]: the top two directions of a block of four converge at
/// the rate (λ₅/λ₂)^t, ample for a picture.
const PCA_X_ITERATIONS: usize = 40;

/// PCA-2D of the samples of X (m×n, columns are samples), for the scatter before any run: n×2
/// scores on the top two principal axes (each axis with a deterministic sign). By subspace iteration on the centred X (a block of four directions, 40 rounds
/// of `V ← orth(X_c (X_cᵀ V))`, then Rayleigh–Ritz on the block), O(mn) per round and no m×m
/// or n×n matrix, so a 4096×10000 X takes about a second on the worker. Deterministic: the
/// start block is a fixed pattern, not a random draw.
pub fn pca2_of_samples(x: ArrayView2<'_, f64>) -> Result<Array2<f64>, ProjectionError> {
    let (m, n) = x.dim();
    if n == 0 || m == 0 {
        return Err(ProjectionError::Empty);
    }
    if x.iter().any(|v| !v.is_finite()) {
        return Err(ProjectionError::Pca("X has non-finite entries".into()));
    }
    let mean = x.mean_axis(Axis(1)).ok_or(ProjectionError::Empty)?;
    let xc = &x - &mean.view().insert_axis(Axis(1));
    if m == 1 || n < 3 {
        // One feature, or too few samples for two axes: the first coordinate and zeros.
        let mut p = Array2::<f64>::zeros((n, 2));
        for i in 0..n {
            p[[i, 0]] = xc[[0, i]];
        }
        return Ok(p);
    }
    let b = PCA_X_BLOCK.min(m).min(n);
    // A fixed, full-rank start: V_ij = cos(golden-ratio walk), then orthonormalised.
    let mut v = Array2::from_shape_fn((m, b), |(i, j)| {
        ((i as f64 + 1.0) * (j as f64 + 1.0) * 0.618_033_988_749_895).cos()
    });
    orthonormalize_columns(&mut v);
    for _ in 0..PCA_X_ITERATIONS {
        let t = gemm(xc.view(), Op::T, v.view(), Op::N); // n×b
        v = gemm(xc.view(), Op::N, t.view(), Op::N); // m×b
        orthonormalize_columns(&mut v);
    }
    // Rayleigh–Ritz: the b×b covariance of the block's scores, its top two eigenvectors.
    let scores = gemm(v.view(), Op::T, xc.view(), Op::N); // b×n
    let pca = pca2(scores.view())?; // n×2 in the block's coordinates, signs fixed there
    Ok(pca)
}

/// Modified Gram–Schmidt on the columns of `v` (m×b, b small); a column that vanishes is
/// replaced by zeros.
fn orthonormalize_columns(v: &mut Array2<f64>) {
    let b = v.ncols();
    for j in 0..b {
        for i in 0..j {
            let d = v.column(i).dot(&v.column(j));
            let ci = v.column(i).to_owned();
            v.column_mut(j).scaled_add(-d, &ci);
        }
        let norm = v.column(j).dot(&v.column(j)).sqrt();
        if norm > 0.0 {
            v.column_mut(j).mapv_inplace(|e| e / norm);
        }
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
            array![[0.6, -0.8], [0.8, 0.6]], // rotation
            array![[1.0, 0.0], [0.0, -1.0]], // reflection (sign flip)
            array![[0.0, 1.0], [1.0, 0.0]],  // axis swap
        ] {
            let p = q.dot(&r.t());
            let back = p.dot(&procrustes2(p.view(), q.view()));
            for (x, y) in back.iter().zip(q.iter()) {
                assert!((x - y).abs() < 1e-12, "{back} vs {q}");
            }
        }
    }

    /// A copy of a layout turned by a known angle (or reflected), scaled and shifted, is
    /// mapped back onto it to 1e-9, with the transform's parameters recovered; on a noisy copy
    /// no nearby rotation, scale or shift does better (least squares); bad input is refused.
    #[test]
    fn similarity_alignment_undoes_a_known_rotation_scale_and_shift() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(21);
        let a = Array2::from_shape_fn((40, 2), |_| rng.r#gen::<f64>() * 4.0 - 2.0);
        for (deg, flip, scale, shift) in [
            (37.0f64, false, 2.5, [3.0, -1.0]),
            (-120.0, true, 0.3, [-7.5, 0.25]),
            (180.0, false, 1.0, [0.0, 0.0]),
        ] {
            let th = deg.to_radians();
            // Row vectors: x ↦ s · x R + t with R turning (1, 0) by θ counterclockwise.
            let mut r = array![[th.cos(), th.sin()], [-th.sin(), th.cos()]];
            if flip {
                r.column_mut(1).mapv_inplace(|v| -v);
            }
            let b = a.dot(&r) * scale + &ndarray::arr1(&shift);
            let sim = align_similarity(b.view(), a.view()).unwrap();
            let back = sim.apply(b.view());
            let err = (&back - &a).iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(err < 1e-9, "{deg}°: error {err}");
            assert!(sim.rms < 1e-9);
            assert!((sim.scale - 1.0 / scale).abs() < 1e-12, "{}", sim.scale);
            assert_eq!(sim.is_reflection(), flip);
            if !flip {
                // Undoing a turn by θ is a turn by −θ.
                let want = -deg;
                let diff = (sim.degrees() - want).rem_euclid(360.0);
                assert!(diff < 1e-9 || (360.0 - diff) < 1e-9, "{}", sim.degrees());
            }
        }
        // Noise: every small change of the optimum's parameters increases the residual.
        let noisy = a.mapv(|v| v * 0.8 + rng.r#gen::<f64>() * 0.3);
        let sim = align_similarity(noisy.view(), a.view()).unwrap();
        let cost = |s: &Similarity| {
            (&s.apply(noisy.view()) - &a)
                .iter()
                .map(|v| v * v)
                .sum::<f64>()
        };
        let best = cost(&sim);
        assert!(((best / 40.0).sqrt() - sim.rms).abs() < 1e-12);
        for k in 0..5 {
            let d = 1e-3 * if k % 2 == 0 { 1.0 } else { -1.0 };
            let mut tweaked = sim;
            match k {
                0 | 1 => tweaked.scale += d,
                2 | 3 => tweaked.translation[k - 2] += d,
                _ => {
                    let (c, s) = (d.cos(), d.sin());
                    let r = sim.rotation;
                    tweaked.rotation = [
                        [r[0][0] * c - r[0][1] * s, r[0][0] * s + r[0][1] * c],
                        [r[1][0] * c - r[1][1] * s, r[1][0] * s + r[1][1] * c],
                    ];
                }
            }
            assert!(cost(&tweaked) > best, "tweak {k} did better");
        }
        // One point repeated: a pure translation onto the target's mean.
        let same = Array2::from_elem((3, 2), 5.0);
        let target = array![[0.0, 0.0], [2.0, 0.0], [1.0, 3.0]];
        let sim = align_similarity(same.view(), target.view()).unwrap();
        assert_eq!(sim.apply(same.view()).row(0).to_vec(), vec![1.0, 1.0]);
        assert!(matches!(
            align_similarity(same.view(), a.view()),
            Err(ProjectionError::Shape { .. })
        ));
        let mut bad = target.clone();
        bad[[2, 1]] = f64::NAN;
        assert!(matches!(
            align_similarity(bad.view(), target.view()),
            Err(ProjectionError::NonFinite {
                which: "moving",
                sample: 2
            })
        ));
    }

    #[test]
    fn consecutive_frames_do_not_flip() {
        let h1 = array![
            [1.0, 2.0, 3.0, 0.5, 2.5],
            [0.2, 0.1, 0.9, 1.5, 0.3],
            [0.0, 1.0, 0.5, 0.5, 2.0]
        ];
        let mut proj = Projector::new();
        let a = proj.project(h1.view()).expect("pca");
        // A tiny change of H must give a nearby frame, not a sign-flipped one.
        let h2 = &h1 * 1.001;
        let b = proj.project(h2.view()).expect("pca");
        let diff = (&a - &b).mapv(f64::abs).sum();
        assert!(diff < 0.05, "frames jumped by {diff}: {a} vs {b}");
    }

    #[test]
    fn pca_of_two_dimensional_codes_is_a_rigid_motion() {
        // With k = 2 the top-2 PCA is a rotation/reflection of the centred points, so all
        // pairwise distances must be preserved exactly.
        let h = array![
            [0.1, 2.0, 3.5, 0.7, 1.9, 4.2],
            [1.0, 0.3, 2.2, 3.1, 0.4, 1.7]
        ];
        let p = pca2(h.view()).expect("pca");
        for a in 0..6 {
            for b in 0..6 {
                let dh = (h[[0, a]] - h[[0, b]]).hypot(h[[1, a]] - h[[1, b]]);
                let dp = (p[[a, 0]] - p[[b, 0]]).hypot(p[[a, 1]] - p[[b, 1]]);
                assert!((dh - dp).abs() < 1e-12, "{dh} vs {dp}");
            }
        }
        // And the first axis carries at least as much variance as the second.
        let var = |c: usize| p.column(c).iter().map(|v| v * v).sum::<f64>();
        assert!(var(0) >= var(1));
    }

    #[test]
    fn rank_one_is_shown_against_sample_index() {
        let h = array![[0.5, 1.5, 2.5]];
        let p = Projector::new().project(h.view()).expect("k=1");
        assert_eq!(p, array![[0.0, 0.5], [1.0, 1.5], [2.0, 2.5]]);
    }

    /// The subspace iteration gives the exact PCA scores (up to each axis's sign) of a small
    /// X whose exact PCA is [`pca2`] of X itself, including when m > n.
    #[test]
    fn pca_of_samples_matches_the_exact_pca() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for (m, n) in [(6, 50), (40, 12)] {
            // Two strong directions and noise.
            let x = Array2::from_shape_fn((m, n), |(i, j)| {
                let a = if j % 2 == 0 { 3.0 } else { -3.0 } * (i as f64 / m as f64);
                let b = if j % 3 == 0 { 1.5 } else { 0.0 } * ((i % 2) as f64);
                a + b + 0.1 * rng.r#gen::<f64>()
            });
            let fast = pca2_of_samples(x.view()).unwrap();
            let exact = pca2(x.view()).unwrap();
            for c in 0..2 {
                let (f, e) = (fast.column(c), exact.column(c));
                let cos = f.dot(&e) / (f.dot(&f).sqrt() * e.dot(&e).sqrt());
                assert!(
                    (cos.abs() - 1.0).abs() < 1e-8,
                    "({m}, {n}) axis {c}: cos {cos}"
                );
                assert!((f.dot(&f) - e.dot(&e)).abs() < 1e-8 * e.dot(&e));
            }
        }
        let mut bad = Array2::<f64>::ones((3, 4));
        bad[[1, 2]] = f64::NAN;
        assert!(pca2_of_samples(bad.view()).is_err());
    }
}
