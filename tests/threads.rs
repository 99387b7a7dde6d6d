//! One fit on several threads gives the bits of one thread: every registered model, run
//! through the worker with 1, 2 and 3 threads, ends with the same H, W and objective, byte for
//! byte. Two shapes at k = 10: 500×1000, where the small-X products split (the columns of
//! `WᵀX`, the rows of `XHᵀ`), and 600×1000, above the 4 MiB where the MU models take the
//! blocked single pass over X, whose products split the same way.

#![allow(
    clippy::expect_used,
    reason = "test helpers outside #[test] functions: a failed expectation is a failed test"
)]

use ndarray::Array2;
use nmf_playground::engine::constraints::{SideInfo, Triplet, reveal_stratified};
use nmf_playground::engine::data::Dataset;
use nmf_playground::engine::jobs::experiment::FitOptions;
use nmf_playground::engine::jobs::worker::{Event, Job, JobId, run_blocking};
use nmf_playground::engine::models::{ModelKind, ModelSpec};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// Three noisy nonnegative blobs, m features, n samples, labelled 0, 1, 2.
fn blobs(m: usize, n: usize, seed: u64) -> Arc<Dataset> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let labels: Vec<usize> = (0..n).map(|i| i % 3).collect();
    let x = Array2::from_shape_fn((m, n), |(r, c)| {
        let centre = if r % 3 == labels[c] { 3.0 } else { 1.0 };
        centre + rng.r#gen::<f64>()
    });
    Arc::new(Dataset::from_parts(
        x,
        Some(labels),
        vec!["a".into(), "b".into(), "c".into()],
        format!("blobs {m}×{n}"),
    ))
}

/// Triplets from the labels and 10 % of the labels revealed: side information for every model.
fn side_for(data: &Dataset, seed: u64) -> Arc<SideInfo> {
    let truth = data.labels.clone().expect("labelled");
    let n = truth.len();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut ts = Vec::new();
    while ts.len() < 3 * n {
        let (i, j, q) = (
            rng.gen_range(0..n),
            rng.gen_range(0..n),
            rng.gen_range(0..n),
        );
        if i != j && truth[i] == truth[j] && truth[i] != truth[q] {
            ts.push(Triplet::new(i, j, q));
        }
    }
    ts.sort_unstable_by_key(|t| (t.i, t.j, t.q));
    ts.dedup();
    let known = reveal_stratified(&truth, 0.1, seed).expect("reveal");
    Arc::new(SideInfo::new(ts, known))
}

/// The bits of a finished fit: H, W and the objective's total.
fn fit_bits(
    kind: ModelKind,
    data: &Arc<Dataset>,
    side: &Arc<SideInfo>,
    threads: usize,
) -> Vec<u64> {
    let fit = FitOptions {
        max_iter: 6,
        tol: 0.0,
    };
    let job = Job::new(JobId(1), Arc::clone(data), ModelSpec::new(kind, 10, 3), fit)
        .with_side(Arc::clone(side))
        .with_threads(threads);
    let mut end = None;
    run_blocking(job, |e| {
        if e.is_terminal() {
            end = Some(e);
        }
        true
    });
    match end {
        Some(Event::Finished { result, .. }) => {
            let mut bits: Vec<u64> = result.h.iter().map(|v| v.to_bits()).collect();
            if let Some(w) = &result.w {
                bits.extend(w.iter().map(|v| v.to_bits()));
            }
            bits.extend(result.record.objective.iter().map(|o| o.to_bits()));
            bits
        }
        other => panic!("{}: expected a finished fit, got {other:?}", kind.name()),
    }
}

fn same_bits_on_1_2_3_threads(m: usize, n: usize) {
    let data = blobs(m, n, 11);
    let side = side_for(&data, 11);
    for kind in ModelKind::all() {
        let one = fit_bits(kind, &data, &side, 1);
        assert!(!one.is_empty());
        for t in [2, 3] {
            let more = fit_bits(kind, &data, &side, t);
            let differ = one.iter().zip(&more).filter(|(a, b)| a != b).count();
            assert!(
                one == more,
                "{} on {m}×{n}: {t} threads differ from 1 in {differ} of {} values",
                kind.name(),
                one.len()
            );
        }
    }
}

#[test]
fn every_model_gives_the_same_bits_on_1_2_and_3_threads_small_x() {
    same_bits_on_1_2_3_threads(500, 1000);
}

#[test]
fn every_model_gives_the_same_bits_on_1_2_and_3_threads_blocked_pass() {
    same_bits_on_1_2_3_threads(600, 1000);
}
