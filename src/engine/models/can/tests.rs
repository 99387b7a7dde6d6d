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
    let labels = can.outputs().assignments.unwrap();
    assert_eq!(clustering_accuracy(&y, &labels).unwrap(), 1.0);
    let (count, comp) = components(can.affinity());
    assert_eq!((count, comp), (4, labels));
    let sum: f64 = can.eigenvalues().iter().take(4).sum();
    assert!(sum <= EIGEN_ZERO, "{sum}");
    assert_eq!(can.eigenvalues().len(), 4);
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
        (bits, m.outputs().assignments.unwrap())
    };
    assert_eq!(run(), run());
}

/// Iris (`../shared/data/iris`, unit-L2 samples): CAN clusters it at ≥ 90 % ACC.
#[test]
fn iris_is_clustered_well() {
    let Some(data) = crate::engine::models::testkit::public_set("iris/iris.csv", &LoadOptions::default()) else {
        return;
    };
    let truth = data.labels.clone().unwrap();
    let (labels, comps) = Can::cluster(data.x.view(), 3, 0, CanParams::defaults().unwrap()).unwrap();
    let acc = clustering_accuracy(&truth, &labels).unwrap();
    assert!(acc >= 0.9, "ACC {acc} ({comps} components)");
}

/// The plain reference of step 2 from faer's dense symmetric eigendecomposition of L_A (n×n).
/// With `authors`, as the authors' code: F the first c eigenvectors and c + 1 eigenvalues;
/// else as the model: the components by union-find, F their indicators and the dense
/// eigenvectors q..c when q < c (the indicators of the c largest when q ≥ c).
pub(crate) fn dense_spectrum(
    graph: &Csr,
    c: usize,
    iteration: usize,
    authors: bool,
) -> Result<super::Spectrum, ModelError> {
    let n = graph.nrows();
    let (count, labels) = components(graph);
    if !authors && count >= c {
        return super::spectrum(graph, c, None, 0, iteration);
    }
    let degree = graph.row_sums();
    let mut l = faer::Mat::<f64>::zeros(n, n);
    for (i, &di) in degree.iter().enumerate() {
        let (cols, vals) = graph.row(i);
        for (&j, &v) in cols.iter().zip(vals) {
            l[(i, j)] -= v;
        }
        l[(i, i)] += di;
    }
    let evd = l.self_adjoint_eigen(faer::Side::Lower).map_err(|e| ModelError::Diverged {
        iteration,
        what: format!("dense eigendecomposition failed ({e:?})"),
    })?;
    let (u, s) = (evd.U(), evd.S());
    if authors {
        return Ok(super::Spectrum {
            f: Array2::from_shape_fn((n, c), |(i, a)| u[(i, a)]),
            values: (0..(c + 1).min(n)).map(|a| s[a]).collect(),
            count,
            labels,
            iterations: 0,
            converged: true,
        });
    }
    let mut sizes = vec![0.0f64; count];
    for &a in &labels {
        sizes[a] += 1.0;
    }
    let f = Array2::from_shape_fn((n, c), |(i, a)| {
        if a < count {
            if labels[i] == a { 1.0 / sizes[a].sqrt() } else { 0.0 }
        } else {
            u[(i, a)]
        }
    });
    let values = (0..c).map(|a| if a < count { 0.0 } else { s[a] }).collect();
    Ok(super::Spectrum {
        f,
        values,
        count,
        labels,
        iterations: 0,
        converged: true,
    })
}

/// Run CAN (sparse or the dense reference) to its stop; the final labels and components.
fn run_to_stop(mut can: Can) -> (Vec<usize>, usize, Array2<f64>) {
    while !can.has_converged() {
        can.step().unwrap();
    }
    can.finish();
    (can.outputs().assignments.unwrap(), can.n_components(), can.f.clone())
}

/// The sparse path (components by union-find, LOBPCG) against the dense reference on blobs
/// that need several rounds: the same labels, the same λ path, and F spanning the same space
/// on the first round (compared through the projector FFᵀ, which is basis-free).
#[test]
fn sparse_spectrum_agrees_with_the_dense_reference() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let (c, per) = (4, 40);
    let x = Array2::from_shape_fn((5, c * per), |(a, i)| {
        let class = i % c;
        (if a == class { 1.0 } else { 0.0 }) + 0.35 * (rng.r#gen::<f64>() - 0.5)
    });
    let sparse = Can::new(x.view(), c, 3, params(8)).unwrap();
    let dense = Can::new_dense(x.view(), c, 3, params(8), false).unwrap();
    let proj = |f: &Array2<f64>| f.dot(&f.t());
    let diff = (&proj(&sparse.f) - &proj(&dense.f)).mapv(f64::abs).fold(0.0f64, |a, &b| a.max(b));
    assert!(diff < 1e-7, "projectors differ by {diff}");
    for (a, b) in sparse.eigenvalues().iter().zip(dense.eigenvalues()) {
        assert!((a - b).abs() < 1e-10, "{a} vs {b}");
    }
    let (ls, cs, _) = run_to_stop(sparse);
    let (ld, cd, _) = run_to_stop(dense);
    assert_eq!((ls, cs), (ld, cd));
}

/// The spectrum when A has c or more pieces: F is the normalised indicators (the exact null
/// space) and the eigenvalues are exactly 0; with fewer, the indicators and LOBPCG's vectors
/// give the dense reference's eigenvalues.
#[test]
fn components_give_the_null_space_exactly() {
    // Two triangles and a path of three: three components.
    let mut e = Vec::new();
    for &(a, b, w) in &[(0, 1, 1.0), (1, 2, 0.5), (0, 2, 2.0), (3, 4, 1.0), (4, 5, 1.0), (5, 3, 1.0), (6, 7, 1.0), (7, 8, 3.0)] {
        e.push((a, b, w));
        e.push((b, a, w));
    }
    let g = Csr::from_entries(9, 9, &e);
    let sp = super::spectrum(&g, 3, None, 0, 0).unwrap();
    assert_eq!((sp.count, &sp.values[..]), (3, &[0.0, 0.0, 0.0][..]));
    let p = sp.f.dot(&sp.f.t());
    assert!((p[[0, 2]] - 1.0 / 3.0).abs() < 1e-15 && p[[0, 3]] == 0.0);
    // c = 2 on three pieces: the two largest (the triangles), eigenvalues 0, 0.
    let sp = super::spectrum(&g, 2, None, 0, 0).unwrap();
    assert_eq!(sp.values, vec![0.0; 2]);
    assert!(sp.f.column(0).iter().take(3).all(|&v| v > 0.0) && sp.f[[6, 0]] == 0.0);
    // c = 5: the three indicators and two eigenpairs of the complement, as dense.
    let sp = super::spectrum(&g, 5, None, 0, 0).unwrap();
    let dense = dense_spectrum(&g, 5, 0, false).unwrap();
    for (a, b) in sp.values.iter().zip(&dense.values) {
        assert!((a - b).abs() < 1e-12, "{:?} vs {:?}", sp.values, dense.values);
    }
}

/// Agreement with the dense reference on the public sets (`../shared/data`): labels of the
/// sparse path score within one point of ACC of the dense path's on iris and glass (and the
/// labels are usually identical). Skips when the data are absent.
#[test]
fn public_sets_agree_with_the_dense_reference() {
    for (name, file, c) in [("iris", "iris/iris.csv", 3), ("glass", "glass/glass.csv", 6)] {
        let Some(data) = crate::engine::models::testkit::public_set(file, &LoadOptions::default()) else {
            continue;
        };
        let truth = data.labels.clone().unwrap();
        let p = CanParams::defaults().unwrap();
        let (ls, _, _) = run_to_stop(Can::new(data.x.view(), c, 0, p).unwrap());
        let (ld, _, _) = run_to_stop(Can::new_dense(data.x.view(), c, 0, p, false).unwrap());
        let (a, b) = (clustering_accuracy(&truth, &ls).unwrap(), clustering_accuracy(&truth, &ld).unwrap());
        assert!((a - b).abs() <= 0.01, "{name}: sparse ACC {a} vs dense {b}");
    }
}

/// The table of docs/performance.md: sparse against dense CAN on every public set with n ≤
/// 2,000 (the dense path is O(n³) a round), ACC, identical labels and seconds.
/// `cargo test --release --lib can_dense_table -- --ignored --nocapture`
#[test]
#[ignore = "minutes: the dense reference on the larger public sets"]
fn can_dense_table() {
    let sets = [
        ("iris", "iris/iris.csv", 3),
        ("glass", "glass/glass.csv", 6),
        ("dermatology", "dermatology/dermatology.csv", 6),
        ("orl_32x32", "orl_32x32", 40),
        ("semeion", "semeion/semeion.csv", 10),
        ("digits_sklearn", "digits_sklearn/digits_sklearn.csv", 10),
    ];
    println!(
        "| set | n | c | ACC sparse | ACC dense | labels equal | ACC authors' rule | s sparse | s dense |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let only = std::env::var("CAN_TABLE_SETS").unwrap_or_default();
    for (name, file, c) in sets {
        if !only.is_empty() && !only.split(',').any(|s| s == name) {
            continue;
        }
        let Some(data) = crate::engine::models::testkit::public_set(file, &LoadOptions::default()) else {
            continue;
        };
        let truth = data.labels.clone().unwrap();
        let p = CanParams::defaults().unwrap();
        let t0 = std::time::Instant::now();
        let (ls, _, _) = run_to_stop(Can::new(data.x.view(), c, 0, p).unwrap());
        let ts = t0.elapsed().as_secs_f64();
        let t0 = std::time::Instant::now();
        let (ld, _, _) = run_to_stop(Can::new_dense(data.x.view(), c, 0, p, false).unwrap());
        let td = t0.elapsed().as_secs_f64();
        let (lo, _, _) = run_to_stop(Can::new_dense(data.x.view(), c, 0, p, true).unwrap());
        let acc = |l: &[usize]| clustering_accuracy(&truth, l).unwrap();
        let same = ls.iter().zip(&ld).filter(|(u, v)| u == v).count();
        println!(
            "| {name} | {} | {c} | {:.4} | {:.4} | {} | {:.4} | {ts:.2} | {td:.2} |",
            truth.len(),
            acc(&ls),
            acc(&ld),
            if same == ls.len() { "yes".to_string() } else { format!("{same}/{}", ls.len()) },
            acc(&lo)
        );
    }
}

/// The typed parameters read the table: its defaults and a given value.
#[test]
fn typed_parameters_read_the_table() {
    use crate::engine::models::can::{CanParams, KIND};
    let p = CanParams::defaults().unwrap();
    assert_eq!((p.neighbors, p.rounds), (15, 30));
    let spec = crate::engine::models::ModelSpec::new(KIND, 2, 0).with("rounds", crate::engine::models::ParamValue::Number(4.0));
    assert_eq!(CanParams::from_checked(&spec.checked().unwrap()).unwrap().rounds, 4);
}
