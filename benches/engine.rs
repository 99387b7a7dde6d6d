//! Criterion benches of the hot paths (issue 5): an NMF iteration (digits shape), its two big
//! GEMMs alone, an RPNMF iteration with |T| = 3n, the 5-NN graph (smaller n than `bench`) and
//! PCA-2D of H. `cargo bench --bench engine`; `nmf-playground bench` is the one-sitting report.

use criterion::{Criterion, criterion_group, criterion_main};
use ndarray::Array2;
use nmf_playground::cli::bench::random_matrix;
use nmf_playground::engine::constraints::SideInfo;
use nmf_playground::engine::constraints::generate::random_triplets;
use nmf_playground::engine::data::Dataset;
use nmf_playground::engine::linalg::projection::Projector;
use nmf_playground::engine::linalg::{Op, gemm_into, knn};
use nmf_playground::engine::models::mu::{mu_rule, mu_update};
use nmf_playground::engine::models::nmf::Nmf;
use nmf_playground::engine::models::rpnmf::Rpnmf;
use nmf_playground::engine::models::{Model, ModelSpec, nmf, rpnmf};
use std::hint::black_box;
use std::sync::Arc;

/// Digits shape: 64×1797, k = 10 (values 0..16 like the real data).
fn digits() -> Arc<Dataset> {
    let x = random_matrix(64, 1797, 11).mapv(|v| (v * 16.0).floor());
    Arc::new(Dataset::from_parts(x, None, vec![], "digits-shape"))
}

fn nmf_iteration(c: &mut Criterion) {
    let data = digits();
    let Ok(mut model) = Nmf::new(Arc::clone(&data), &ModelSpec::new(nmf::KIND, 10, 0)) else {
        return;
    };
    c.bench_function("nmf_iteration 64x1797 k=10", |b| {
        b.iter(|| black_box(model.step().is_ok()))
    });
    // The two big GEMMs alone on the same shapes.
    let (m, n, k) = (data.m(), data.n(), 10);
    let w = random_matrix(m, k, 1);
    let h = random_matrix(k, n, 2);
    let mut wtx = Array2::<f64>::zeros((k, n));
    let mut xht = Array2::<f64>::zeros((m, k));
    c.bench_function("gemm WtX+XHt 64x1797 k=10", |b| {
        b.iter(|| {
            gemm_into(
                &mut wtx.view_mut(),
                1.0,
                w.view(),
                Op::T,
                data.x.view(),
                Op::N,
                false,
            );
            gemm_into(
                &mut xht.view_mut(),
                1.0,
                data.x.view(),
                Op::N,
                h.view(),
                Op::T,
                false,
            );
            black_box(wtx[[0, 0]] + xht[[0, 0]])
        })
    });
    // The multiplicative rule over H (k×n): in pulp's dispatch (what the iteration runs), and
    // the same rule element by element in the baseline build (what it replaced).
    let (num, den) = (random_matrix(k, n, 3), random_matrix(k, n, 4));
    let mut z = random_matrix(k, n, 5);
    c.bench_function("mu rule dispatched 10x1797", |b| {
        b.iter(|| {
            mu_update(&mut z, &num, &den);
            black_box(z[[0, 0]])
        })
    });
    c.bench_function("mu rule element-wise 10x1797", |b| {
        b.iter(|| {
            ndarray::Zip::from(&mut z)
                .and(&num)
                .and(&den)
                .for_each(|z, &a, &b| *z = mu_rule(*z, a, b));
            black_box(z[[0, 0]])
        })
    });
    // The same two products by the kernels the iteration uses (thin WᵀX, lane-sum XHᵀ here).
    c.bench_function("nmf big products 64x1797 k=10", |b| {
        b.iter(|| {
            model.big_products();
            black_box(model.h()[[0, 0]])
        })
    });
}

fn rpnmf_iteration(c: &mut Criterion) {
    let data = digits();
    let side = SideInfo::with_triplets(random_triplets(data.n(), 3 * data.n(), 17));
    let spec = rpnmf::paper_spec(10, 0);
    let Ok(mut model) = Rpnmf::new(data, &spec, &side) else {
        return;
    };
    c.bench_function("rpnmf_iteration 64x1797 k=10 |T|=3n", |b| {
        b.iter(|| black_box(model.step().is_ok()))
    });
}

fn knn_graph(c: &mut Criterion) {
    let x = random_matrix(256, 2000, 14);
    let mut g = c.benchmark_group("knn");
    g.sample_size(10);
    g.bench_function("knn p=5 n=2000 m=256", |b| {
        b.iter(|| black_box(knn(x.view(), 5).n()))
    });
    g.finish();
}

fn pca2d(c: &mut Criterion) {
    let h = random_matrix(20, 10_000, 13);
    let mut proj = Projector::new();
    c.bench_function("pca2d n=10000 k=20", |b| {
        b.iter(|| black_box(proj.project(h.view()).is_ok()))
    });
}

criterion_group!(benches, nmf_iteration, rpnmf_iteration, knn_graph, pca2d);
criterion_main!(benches);
