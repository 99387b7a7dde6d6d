//! CAN: the initial graph and r by hand, one round's rows by the two-point simplex formula,
//! the components of well-separated blobs, the stop rule, NaN data, seeds, the registry and
//! Iris when `../shared/data` is present.

use super::*;
use crate::engine::constraints::SideInfo;
use crate::engine::data::{Dataset, LoadOptions};
use crate::engine::eval::metrics::clustering_accuracy;
use crate::engine::models::can::KIND;
use crate::engine::models::{self, ModelSpec, WarmStart};
use ndarray::array;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;

fn params(neighbors: usize) -> CanParams {
    CanParams {
        neighbors,
        rounds: 30,
    }
}

/// c well-separated Gaussian blobs in 3 dimensions, `per` points each (σ = 0.05, centres 5
/// apart), with their labels.
pub(crate) fn blobs(c: usize, per: usize, seed: u64) -> (Array2<f64>, Vec<usize>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = c * per;
    let mut x = Array2::zeros((3, n));
    let mut y = Vec::with_capacity(n);
    for i in 0..n {
        let class = i % c;
        y.push(class);
        for a in 0..3 {
            let centre = if a == class % 3 { 5.0 * (1 + class / 3) as f64 } else { 0.0 };
            x[[a, i]] = centre + 0.05 * (rng.r#gen::<f64>() - 0.5);
        }
    }
    (x, y)
}

/// On the line 0, 1, 3, 6, 10 with k = 2: r is the mean of ½(k d_{i,3} − d_i1 − d_i2) =
/// (31 + 22.5 + 2.5 + 12.5 + 48.5)/5 = 23.4 (docs/models.md §2.7 step 1), λ starts at r, and
/// row 0 is the closed form of §2.2 (35/62, 27/62). After one round each row of two weights is
/// the simplex projection of v = −(d + λ‖f_i − f_j‖²)/(2r), which for two entries is
/// `clamp((1 + v_1 − v_2)/2, 0, 1)`.
#[test]
fn the_start_and_one_round_by_hand() {
    let x = array![[0.0, 1.0, 3.0, 6.0, 10.0]];
    let mut can = Can::new(x.view(), 2, 0, params(2)).unwrap();
    assert!((can.r() - 23.4).abs() < 1e-12, "{}", can.r());
    assert_eq!(can.lambda(), can.r());
    let (a, idx, k) = can.rows();
    assert_eq!(k, 2);
    assert_eq!(&idx[..2], &[1, 2]);
    assert!((a[0] - 35.0 / 62.0).abs() < 1e-15 && (a[1] - 27.0 / 62.0).abs() < 1e-15);
    let f = can.f.clone();
    let lambda = can.lambda();
    let r = can.r();
    let d = can.d.clone();
    let idx = idx.to_vec();
    can.step().unwrap();
    let (a, _, _) = can.rows();
    for i in 0..5 {
        let v: Vec<f64> = (0..2)
            .map(|h| {
                let j = idx[i * 2 + h];
                let df: f64 = (0..2).map(|c| (f[[i, c]] - f[[j, c]]).powi(2)).sum();
                -(d[i * 2 + h] + lambda * df) / (2.0 * r)
            })
            .collect();
        let w0 = ((1.0 + v[0] - v[1]) / 2.0).clamp(0.0, 1.0);
        assert!((a[i * 2] - w0).abs() < 1e-12, "row {i}: {} vs {w0}", a[i * 2]);
        assert!((a[i * 2 + 1] - (1.0 - w0)).abs() < 1e-12);
    }
}

/// Four tight blobs far apart: CAN stops with exactly four components, and they are the
/// classes; the objective's rank penalty is then (numerically) zero.
#[test]
fn components_equal_the_classes_on_well_separated_blobs() {
    let (x, y) = blobs(4, 20, 3);
    let mut can = Can::new(x.view(), 4, 0, params(10)).unwrap();
    let mut rounds = 0;
    while !can.has_converged() {
        can.step().unwrap();
        rounds += 1;
        assert!(rounds <= 30);
    }
    can.finish();
    assert_eq!(can.n_components(), 4);
    let labels = can.assignments().unwrap();
    assert_eq!(clustering_accuracy(&y, &labels).unwrap(), 1.0);
    let (count, comp) = components(can.affinity());
    assert_eq!((count, comp), (4, labels));
    let sum: f64 = can.eigenvalues().iter().take(4).sum();
    assert!(sum <= EIGEN_ZERO, "{sum}");
    assert!(can.eigenvalues()[4] > 1e-6);
}

/// Too many components at the start (two blobs asked as one cluster) halve λ; too few (one
/// blob asked as three) double it; both keep the rows on the simplex.
#[test]
fn lambda_doubles_and_halves_by_the_eigenvalue_rule() {
    let (x, _) = blobs(2, 15, 1);
    let mut can = Can::new(x.view(), 1, 0, params(5)).unwrap();
    let l0 = can.lambda();
    can.step().unwrap();
    assert_eq!(can.lambda(), l0 / 2.0, "two components for c = 1 halve λ");
    let (x, _) = blobs(1, 30, 2);
    let mut can = Can::new(x.view(), 3, 0, params(5)).unwrap();
    let l0 = can.lambda();
    can.step().unwrap();
    assert_eq!(can.lambda(), 2.0 * l0, "one component for c = 3 doubles λ");
    let (a, _, k) = can.rows();
    for row in a.chunks(k) {
        assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(row.iter().all(|&v| v >= 0.0));
    }
}

/// A NaN or ∞ in X is refused with a message; warm starts are refused by the registry.
#[test]
fn bad_data_and_warm_starts_are_refused_with_a_message() {
    for bad in [f64::NAN, f64::INFINITY] {
        let (mut x, _) = blobs(2, 10, 1);
        x[[1, 3]] = bad;
        let e = Can::new(x.view(), 2, 0, params(5)).err().unwrap().to_string();
        assert!(e.contains("NaN or infinite"), "{e}");
    }
    let (x, _) = blobs(2, 10, 1);
    let data = Arc::new(Dataset::from_parts(x, None, vec![], "test"));
    let h = Array2::from_elem((2, 20), 0.5);
    let spec = ModelSpec::new(KIND, 2, 0).with_init(Arc::new(WarmStart::new(None, h, "test")));
    let e = models::build(&spec, data, &SideInfo::default()).err().unwrap().to_string();
    assert!(e.contains("warm start"), "{e}");
}

/// The same seed gives the same bits (also through the k-means fallback, c = 3 on two blobs).
#[test]
fn the_same_seed_repeats_bit_for_bit() {
    let (x, _) = blobs(2, 30, 4);
    let run = || {
        let data = Arc::new(Dataset::from_parts(x.clone(), None, vec![], "test"));
        let mut m = models::build(&ModelSpec::new(KIND, 3, 7), data, &SideInfo::default()).unwrap();
        for _ in 0..3 {
            m.step().unwrap();
        }
        m.finish();
        let bits: Vec<u64> = m.h().iter().map(|v| v.to_bits()).collect();
        (bits, m.assignments().unwrap())
    };
    assert_eq!(run(), run());
}

/// Iris (`../shared/data/iris`, unit-L2 samples): CAN clusters it at ≥ 90 % ACC.
#[test]
fn iris_is_clustered_well() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/iris/iris.csv");
    if !path.exists() {
        eprintln!("skipped: {} is absent", path.display());
        return;
    }
    let data = crate::engine::data::load(&path, &LoadOptions::default()).unwrap();
    let truth = data.labels.clone().unwrap();
    let (labels, comps) = Can::cluster(data.x.view(), 3, 0, CanParams::defaults().unwrap()).unwrap();
    let acc = clustering_accuracy(&truth, &labels).unwrap();
    assert!(acc >= 0.9, "ACC {acc} ({comps} components)");
}
