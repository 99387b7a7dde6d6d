//! The engine's k scan (docs/models.md §8.6): on data with a planted rank the consensus of
//! the seeds is most stable at the true k, the same seeds give the same table, and a raised
//! cancel flag stops the scan.

#![allow(
    clippy::expect_used,
    reason = "test helpers outside #[test] functions: a failed expectation is a failed test"
)]

use ndarray::Array2;
use nmf_playground::engine::constraints::SideInfo;
use nmf_playground::engine::data::Dataset;
use nmf_playground::engine::jobs::experiment::FitOptions;
use nmf_playground::engine::jobs::kscan::{ScanError, ScanEvent, ScanSpec, scan_k};
use nmf_playground::engine::models::{ModelSpec, nmf};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

/// Three well-separated nonnegative blobs (rank 3 planted), `per` samples each, labelled.
fn blobs(per: usize) -> Arc<Dataset> {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (m, n) = (9, 3 * per);
    let labels: Vec<usize> = (0..n).map(|i| i / per).collect();
    let x = Array2::from_shape_fn((m, n), |(r, c)| {
        let centre = if r % 3 == labels[c] { 5.0 } else { 0.2 };
        centre + 0.5 * rng.r#gen::<f64>()
    });
    Arc::new(Dataset::from_parts(
        x,
        Some(labels),
        vec!["a".into(), "b".into(), "c".into()],
        "three blobs",
    ))
}

fn spec(ks: Vec<usize>) -> ScanSpec {
    ScanSpec {
        model: ModelSpec::new(nmf::KIND, 1, 0),
        fit: FitOptions {
            max_iter: 300,
            tol: 1e-6,
        },
        side: Arc::new(SideInfo::default()),
        ks,
        repeats: 6,
        seed: 42,
        kmeans_restarts: 3,
    }
}

#[test]
fn the_planted_rank_is_the_most_stable_and_the_table_repeats() {
    let data = blobs(20);
    let events = Mutex::new(Vec::new());
    let record = |e: ScanEvent| events.lock().expect("lock").push(e);
    let rows = scan_k(
        &data,
        &spec(vec![2, 3, 4]),
        &AtomicBool::new(false),
        &record,
    )
    .expect("scan");
    assert_eq!(rows.iter().map(|r| r.k).collect::<Vec<_>>(), [2, 3, 4]);
    let coph: Vec<f64> = rows
        .iter()
        .map(|r| r.cophenetic.expect("6 runs give a cophenetic correlation"))
        .collect();
    assert!(
        coph[1] >= coph[0] && coph[1] >= coph[2],
        "cophenetic by k (2, 3, 4): {coph:?}"
    );
    assert!(
        (coph[1] - 1.0).abs() < 1e-9,
        "k = 3 splits the blobs alike: {coph:?}"
    );
    let acc3 = rows[1].acc.expect("labelled data are scored").mean;
    assert!(acc3 > 0.99, "ACC at the true k: {acc3}");
    let errs: Vec<f64> = rows
        .iter()
        .map(|r| r.recon_error.expect("NMF has a W").mean)
        .collect();
    assert!(
        errs[0] > errs[1] && errs[1] >= errs[2],
        "error falls with k: {errs:?}"
    );
    for r in &rows {
        assert_eq!((r.runs, r.errors.len()), (6, 0), "k = {}", r.k);
    }
    // Every run's end and then its k's row, k by k.
    let events = events.into_inner().expect("lock");
    assert_eq!(events.len(), 3 * 7);
    for (i, chunk) in events.chunks(7).enumerate() {
        assert_eq!(chunk[6], ScanEvent::Row(rows[i].clone()));
        let done: Vec<usize> = chunk[..6]
            .iter()
            .map(|e| match e {
                ScanEvent::RunDone { k, done, of: 6 } if *k == rows[i].k => *done,
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(done, [1, 2, 3, 4, 5, 6]);
    }
    let again = scan_k(
        &data,
        &spec(vec![2, 3, 4]),
        &AtomicBool::new(false),
        &|_| {},
    )
    .expect("scan");
    assert_eq!(again, rows, "same seeds, same table, bit for bit");
}

#[test]
fn a_raised_cancel_flag_stops_the_scan_and_bad_ranks_are_refused() {
    let data = blobs(5);
    let runs = Mutex::new(0usize);
    let r = scan_k(&data, &spec(vec![2, 3]), &AtomicBool::new(true), &|e| {
        if let ScanEvent::Row(_) = e {
            panic!("no row after cancel");
        }
        *runs.lock().expect("lock") += 1;
    });
    assert!(matches!(r, Err(ScanError::Cancelled)), "{r:?}");
    let r = scan_k(&data, &spec(vec![2, 99]), &AtomicBool::new(false), &|_| {});
    assert!(
        matches!(r, Err(ScanError::Rank { k: 99, .. })),
        "k above min(m, n) is refused before any fit: {r:?}"
    );
    let r = scan_k(&data, &spec(vec![]), &AtomicBool::new(false), &|_| {});
    assert!(matches!(r, Err(ScanError::Empty(_))), "{r:?}");
}
