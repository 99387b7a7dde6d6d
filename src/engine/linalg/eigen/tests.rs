//! LOBPCG: path and cycle Laplacians against their closed-form spectra, constraints, the
//! dense path, agreement with faer's dense solver on a random sparse graph, repeatability and
//! a NaN operator.

use super::*;
use crate::engine::linalg::Csr;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::f64::consts::PI;

/// The Laplacian D − A of a graph given as weighted undirected edges.
fn laplacian(n: usize, edges: &[(usize, usize, f64)]) -> Csr {
    let mut e = Vec::new();
    for &(a, b, w) in edges {
        e.push((a, b, -w));
        e.push((b, a, -w));
        e.push((a, a, w));
        e.push((b, b, w));
    }
    Csr::from_entries(n, n, &e)
}

fn apply(l: &Csr) -> impl Fn(ArrayView2<'_, f64>) -> Array2<f64> + '_ {
    move |x| {
        let mut out = Array2::zeros(x.dim());
        l.mul_dense_into(x, &mut out.view_mut());
        out
    }
}

fn random_start(n: usize, b: usize, seed: u64) -> Array2<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Array2::from_shape_fn((n, b), |_| rng.r#gen::<f64>() - 0.5)
}

/// The deflation of the constant vector: subtract each column's mean.
fn dc(n: usize) -> impl Fn(&mut Array2<f64>) {
    move |v: &mut Array2<f64>| {
        debug_assert_eq!(v.nrows(), n);
        for mut col in v.columns_mut() {
            let m = col.sum() / n as f64;
            col -= m;
        }
    }
}

const OPTS: EigOptions = EigOptions {
    tol: 1e-10,
    scale: 4.0,
    max_iter: 3000,
};

/// The path on n vertices has eigenvalues 2 − 2cos(πj/n), j = 0..n−1, the constant vector
/// for j = 0; with it as the constraint LOBPCG finds j = 1..4, and the Fiedler vector is
/// ±cos(π j (i + ½)/n) normalised.
#[test]
fn path_laplacian_has_its_closed_form_spectrum() {
    let n = 150;
    let edges: Vec<_> = (0..n - 1).map(|i| (i, i + 1, 1.0)).collect();
    let l = laplacian(n, &edges);
    let op = apply(&l);
    let e = lobpcg(&op, &dc(n), 1, random_start(n, 8, 1).view(), 4, OPTS).unwrap();
    assert!(
        e.converged && e.iterations > 0,
        "{} iterations, residual {}",
        e.iterations,
        e.residual
    );
    for (j, &v) in e.values.iter().enumerate() {
        let exact = 2.0 - 2.0 * (PI * (j + 1) as f64 / n as f64).cos();
        assert!((v - exact).abs() < 1e-12, "λ_{}: {v} vs {exact}", j + 1);
    }
    let norm = (0..n)
        .map(|i| (PI * (i as f64 + 0.5) / n as f64).cos().powi(2))
        .sum::<f64>()
        .sqrt();
    let dot: f64 = (0..n)
        .map(|i| e.vectors[[i, 0]] * (PI * (i as f64 + 0.5) / n as f64).cos() / norm)
        .sum();
    assert!((dot.abs() - 1.0).abs() < 1e-9, "{dot}");
    // The vectors are orthonormal and orthogonal to the constraint.
    let g = e.vectors.t().dot(&e.vectors);
    for a in 0..4 {
        for b in 0..4 {
            assert!((g[[a, b]] - if a == b { 1.0 } else { 0.0 }).abs() < 1e-12);
        }
        assert!(e.vectors.column(a).sum().abs() < 1e-10);
    }
}

/// The cycle on n vertices: 2 − 2cos(2πj/n), each j ≠ 0 twice; the block holds both copies.
#[test]
fn cycle_laplacian_double_eigenvalues() {
    let n = 120;
    let edges: Vec<_> = (0..n).map(|i| (i, (i + 1) % n, 1.0)).collect();
    let l = laplacian(n, &edges);
    let op = apply(&l);
    let e = lobpcg(&op, &dc(n), 1, random_start(n, 8, 2).view(), 4, OPTS).unwrap();
    assert!(e.converged);
    for (j, &v) in e.values.iter().enumerate() {
        let exact = 2.0 - 2.0 * (2.0 * PI * (1 + j / 2) as f64 / n as f64).cos();
        assert!((v - exact).abs() < 1e-12, "{j}: {v} vs {exact}");
    }
}

/// A random sparse weighted graph of two pieces: with both indicators as constraints, the
/// smallest eigenvalues of the complement equal faer's dense eigenvalues 3, 4, … (0 twice
/// first), and the eigenvectors span the same space. The same call gives the same bits.
#[test]
fn agrees_with_the_dense_solver_and_repeats() {
    let n = 300;
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut edges = Vec::new();
    for i in 0..n {
        for _ in 0..3 {
            let half = if i < 100 { 0..100 } else { 100..n };
            let j = rng.gen_range(half);
            if j != i {
                edges.push((i, j, rng.r#gen::<f64>() + 0.1));
            }
        }
    }
    let l = laplacian(n, &edges);
    let dense = l.to_dense();
    let m = faer::Mat::from_fn(n, n, |i, j| dense[[i, j]]);
    let evd = m.self_adjoint_eigen(faer::Side::Lower).unwrap();
    let mut adjacency = Vec::new();
    for &(a, b, w) in &edges {
        adjacency.push((a, b, w));
        adjacency.push((b, a, w));
    }
    let adjacency = Csr::from_entries(n, n, &adjacency);
    let (count, comp) = crate::engine::linalg::components::components(&adjacency);
    assert_eq!(count, 2);
    let y = Array2::from_shape_fn((n, 2), |(i, a)| {
        if comp[i] == a {
            1.0 / if a == 0 { 100f64 } else { 200f64 }.sqrt()
        } else {
            0.0
        }
    });
    assert!(evd.S()[1].abs() < 1e-10 && evd.S()[2] > 1e-3);
    let op = apply(&l);
    let opts = EigOptions {
        tol: 1e-9,
        scale: 2.0 * 3.0 * 1.1 * 6.0,
        max_iter: 2000,
    };
    let e = lobpcg(
        &op,
        &|v: &mut Array2<f64>| project_out(v, y.view()),
        2,
        random_start(n, 9, 3).view(),
        5,
        opts,
    )
    .unwrap();
    assert!(e.converged);
    for a in 0..5 {
        assert!(
            (e.values[a] - evd.S()[a + 2]).abs() < 1e-10,
            "{a}: {} vs {}",
            e.values[a],
            evd.S()[a + 2]
        );
    }
    // Projection of the dense eigenvectors 2..7 on LOBPCG's: norm 1 each (same subspace).
    let u = evd.U();
    let ud = Array2::from_shape_fn((n, 5), |(i, a)| u[(i, a + 2)]);
    let overlap = ud.t().dot(&e.vectors);
    let s: f64 = overlap.iter().map(|v| v * v).sum();
    assert!((s - 5.0).abs() < 1e-9, "{s}");
    let again = lobpcg(
        &op,
        &|v: &mut Array2<f64>| project_out(v, y.view()),
        2,
        random_start(n, 9, 3).view(),
        5,
        opts,
    )
    .unwrap();
    assert_eq!(again.values, e.values);
    assert_eq!(again.vectors, e.vectors);
}

/// Small complements are solved exactly by the dense path; a NaN from the operator is an
/// error, not an answer; asking for more pairs than the complement holds is refused.
#[test]
fn dense_path_nan_and_too_few() {
    let n = 10;
    let edges: Vec<_> = (0..n - 1).map(|i| (i, i + 1, 1.0)).collect();
    let l = laplacian(n, &edges);
    let op = apply(&l);
    let e = lobpcg(&op, &dc(n), 1, random_start(n, 3, 1).view(), 3, OPTS).unwrap();
    assert_eq!(e.iterations, 0);
    for (j, &v) in e.values.iter().enumerate() {
        let exact = 2.0 - 2.0 * (PI * (j + 1) as f64 / n as f64).cos();
        assert!((v - exact).abs() < 1e-13);
    }
    let nan = |x: ArrayView2<'_, f64>| x.mapv(|_| f64::NAN);
    let big = 200;
    assert_eq!(
        lobpcg(&nan, &dc(big), 1, random_start(big, 4, 1).view(), 2, OPTS).unwrap_err(),
        EigError::NonFinite
    );
    assert!(matches!(
        lobpcg(&op, &dc(n), 1, random_start(n, 3, 1).view(), 10, OPTS),
        Err(EigError::TooFew {
            wanted: 10,
            available: 9
        })
    ));
}
