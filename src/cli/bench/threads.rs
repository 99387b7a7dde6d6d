//! `bench --threads-scaling`: one NMF fit's iteration on 1 thread and on more, and the
//! machine's streaming-read bandwidth on as many, in one sitting.
//!
//! Two fits from the same start take turns rep by rep, one on each thread count, so each
//! speed-up printed is the median of ratios measured side by side; after the last rep the
//! fits, having taken the same steps, must hold the same bits (a note says so). The probe sums
//! X (the same 2 MiB pages the products read) on 1 and on N threads: the iteration reads X
//! twice (`WᵀX`, then `XHᵀ`), so `2·8·m·n` bytes over its time, against the probe's rate, is
//! the share of the memory bandwidth the iteration reaches (docs/performance.md, "One fit on
//! all cores").

use super::{BenchReport, case_of, digits_matrix, paired_ratio, random_matrix, time_interleaved};
use crate::engine::data::Dataset;
use crate::engine::linalg::{ThreadsGuard, available_threads, for_each_part};
use crate::engine::models::nmf::Nmf;
use crate::engine::models::{Model, ModelSpec};
use anyhow::anyhow;
use ndarray::Array2;
use std::sync::Arc;
use std::time::Instant;

/// Thread counts compared: 1 and every count up to the cores (at least 2).
fn counts() -> Vec<usize> {
    (1..=available_threads().max(2)).collect()
}

/// NMF's iteration at each thread count on one problem, interleaved; returns the iteration's
/// median ms per count.
fn nmf_scaling(
    rep: &mut BenchReport,
    label: &str,
    x: Array2<f64>,
    k: usize,
    reps: usize,
    iters: usize,
) -> anyhow::Result<Vec<f64>> {
    let data = Arc::new(Dataset::from_parts(x, None, vec![], label));
    let spec = ModelSpec::new(crate::engine::models::nmf::KIND, k, 0);
    let counts = counts();
    let mut fits = counts
        .iter()
        .map(|_| Nmf::new(Arc::clone(&data), &spec).map_err(|e| anyhow!(e)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let times = time_interleaved(counts.len(), reps, iters, |c| {
        let _threads = ThreadsGuard::new(counts[c]);
        for _ in 0..iters {
            let _ = fits[c].step();
        }
    });
    let mut medians = Vec::new();
    for (c, t) in counts.iter().zip(&times) {
        let case = case_of(
            &format!("nmf_iteration {t} thread(s) [{label}, k={k}]", t = c),
            "iteration",
            t,
            Some(4.0 * data.x.len() as f64 * k as f64),
        );
        medians.push(case.median_ms);
        rep.cases.push(case);
    }
    for (c, t) in counts.iter().zip(&times).skip(1) {
        rep.ratios.push((
            format!("{label}: nmf iteration speed-up, {c} threads over 1 (paired)"),
            paired_ratio(&times[0], t),
        ));
    }
    let bits = |m: &Nmf| m.h().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let same = fits.iter().all(|f| bits(f) == bits(&fits[0]));
    rep.notes.push(format!(
        "{label}: H after {} iterations on {counts:?} threads: {}",
        iters * (reps + 1),
        if same {
            "the same bits"
        } else {
            "DIFFERENT bits"
        }
    ));
    Ok(medians)
}

/// Sum of `x` in eight lanes (the compiler keeps them in vector registers).
fn lane_sum(x: &[f64]) -> f64 {
    let mut acc = [0.0f64; 8];
    let chunks = x.chunks_exact(8);
    let tail: f64 = chunks.remainder().iter().sum();
    for c in chunks {
        for l in 0..8 {
            acc[l] += c[l];
        }
    }
    acc.iter().sum::<f64>() + tail
}

/// Streaming-read bandwidth (GB/s) of summing `x` on `threads` threads, median of `reps`.
fn read_bandwidth(x: &[f64], threads: usize, reps: usize) -> f64 {
    let _threads = ThreadsGuard::new(threads);
    let parts = 8 * threads;
    let len = x.len().div_ceil(parts);
    let mut rates: Vec<f64> = (0..=reps)
        .map(|_| {
            let t = Instant::now();
            let sums = std::sync::Mutex::new(0.0);
            for_each_part(x.chunks(len).collect(), |_, c| {
                let s = lane_sum(c);
                if let Ok(mut t) = sums.lock() {
                    *t += s;
                }
            });
            std::hint::black_box(sums);
            std::mem::size_of_val(x) as f64 / t.elapsed().as_secs_f64() / 1e9
        })
        .skip(1)
        .collect();
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}

/// The thread-scaling report: NMF on digits and on random 4096×10000 (1024×2500 with
/// `quick`), and the read probe on the random X.
pub fn measure(rep: &mut BenchReport, quick: bool) -> anyhow::Result<()> {
    let (reps, it_small, it_big) = if quick { (3, 20, 2) } else { (7, 200, 10) };
    let (digits, _, label) = digits_matrix();
    nmf_scaling(rep, label, digits, 10, reps, it_small)?;
    let (m, n) = if quick { (1024, 2500) } else { (4096, 10000) };
    let x = random_matrix(m, n, 12);
    let bytes = (x.len() * size_of::<f64>()) as f64;
    let probe: Vec<(usize, f64)> = match x.as_slice() {
        Some(s) => counts()
            .into_iter()
            .map(|t| (t, read_bandwidth(s, t, reps)))
            .collect(),
        None => Vec::new(),
    };
    let label = format!("random {m}×{n}");
    let medians = nmf_scaling(rep, &label, x, 20, reps, it_big)?;
    for ((t, gbs), ms) in probe.iter().zip(&medians) {
        let reached = 2.0 * bytes / (ms * 1e-3) / 1e9;
        rep.notes.push(format!(
            "{label}: streaming read on {t} thread(s) {gbs:.1} GB/s; the iteration reads X \
             twice, {reached:.1} GB/s, {:.0} % of it",
            100.0 * reached / gbs
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lane_sum_adds_every_value() {
        let x: Vec<f64> = (1..=21).map(f64::from).collect();
        assert_eq!(lane_sum(&x), 231.0);
        assert_eq!(lane_sum(&[]), 0.0);
    }
}
