//! `nmf-playground bench`: timings of the hot paths, in one process, medians and spread.
//!
//! Each case runs a warm-up, then `reps` timed repetitions; we report the per-unit median,
//! min and max, and GFLOP/s where a flop count applies. The models' cases come from the
//! registry, in one loop: each descriptor names its own cases
//! ([`crate::engine::models::Descriptor::bench`]; NMF's iteration next to its two big GEMMs
//! alone, the models timed against NMF's iteration, RPNMF with the protocol's triplets, …),
//! and [`Run`] hands them the problems and times what they give it. Cases that are compared
//! take turns rep by rep, and each ratio is the median of the reps' ratios, which a drift of a
//! shared box's speed moves far less than a ratio of two medians taken a minute apart
//! (docs/performance.md, "What `bench` measures"). The k-NN graph, the PCA-2D projection and
//! the loaders follow.

mod scale;
mod threads;

use super::CliError;
use super::output::{matrix_npy, write_atomic};
use crate::engine::data::{Dataset, LoadOptions};
use crate::engine::linalg::knn::knn;
use crate::engine::linalg::projection::Projector;
pub use crate::engine::models::bench::random_matrix;
use crate::engine::models::bench::{Bench, Problem};
use crate::engine::models::nmf::{self, Nmf};
use crate::engine::models::{Model, ModelKind, ModelSpec};
use anyhow::anyhow;
use ndarray::Array2;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Arguments of `bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    /// Smaller problems and fewer repetitions (a smoke run, ~seconds).
    #[arg(long)]
    pub quick: bool,
    /// Print the results as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Also write the benchmark problems (X and the initial W, H) as .npy into this folder,
    /// for the peer script `benches/peers/sklearn_nmf.py`.
    #[arg(long)]
    pub export: Option<PathBuf>,
    /// Only the NMF/RPNMF iteration cases (no kNN, PCA or loaders): for profiling and A/B runs.
    #[arg(long)]
    pub models_only: bool,
    /// Which iteration problems to run: `digits`, `random` (4096×10000, or 1024×2500 with
    /// --quick) or `both`.
    #[arg(long, default_value = "both", value_parser = ["digits", "random", "both"])]
    pub problem: String,
    /// Use the full-size random problem (4096×10000) even with --quick.
    #[arg(long)]
    pub full_random: bool,
    /// Instead of the cases above: every model's default fit on a clustered 784-feature
    /// problem at n = 10,000 and 50,000, each in a child process (seconds and peak memory).
    #[arg(long)]
    pub scale: bool,
    /// With --scale: only these models (comma-separated registry names).
    #[arg(long, value_delimiter = ',')]
    pub scale_models: Vec<String>,
    /// With --scale: these sample counts (comma-separated) instead of 10000,50000.
    #[arg(long, value_delimiter = ',')]
    pub scale_sizes: Vec<usize>,
    /// Internal: the child process of --scale for one model.
    #[arg(long, hide = true, requires = "scale_n")]
    pub scale_child: Option<String>,
    /// Internal: the sample count of --scale-child.
    #[arg(long, hide = true)]
    pub scale_n: Option<usize>,
    /// Only the NMF iteration on 1 thread and on every core, side by side, and a
    /// streaming-read probe of the memory bandwidth on as many (nothing else).
    #[arg(long)]
    pub threads_scaling: bool,
}

/// Everything `bench` measured: the cases and the ratios the targets of issue 5 need.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    pub cases: Vec<CaseResult>,
    /// `(what, value)`: iteration / its two GEMMs, RPNMF / NMF iteration, per problem.
    pub ratios: Vec<(String, f64)>,
    /// Cases skipped (missing data) and other remarks.
    pub notes: Vec<String>,
}

/// One timed case.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    pub name: String,
    /// What one unit is (one iteration, one call).
    pub unit: String,
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub reps: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gflops: Option<f64>,
}

fn time_case(
    name: &str,
    unit: &str,
    reps: usize,
    per_rep_units: usize,
    flops_per_unit: Option<f64>,
    mut f: impl FnMut(),
) -> CaseResult {
    f(); // warm-up
    let times: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3 / per_rep_units as f64
        })
        .collect();
    case_of(name, unit, &times, flops_per_unit)
}

/// `cases` cases timed in turn, rep by rep (0, 1, …, 0, 1, …), after one warm-up call of
/// each: `run(c)` runs case c once, `per_rep_units` units. Returns each case's times in ms
/// per unit, in rep order (rep r of every case ran in the same stretch of time).
fn time_interleaved(
    cases: usize,
    reps: usize,
    per_rep_units: usize,
    mut run: impl FnMut(usize),
) -> Vec<Vec<f64>> {
    (0..cases).for_each(&mut run);
    let mut times = vec![Vec::with_capacity(reps); cases];
    for _ in 0..reps {
        for (c, t) in times.iter_mut().enumerate() {
            let start = Instant::now();
            run(c);
            t.push(start.elapsed().as_secs_f64() * 1e3 / per_rep_units as f64);
        }
    }
    times
}

/// A [`CaseResult`] from per-rep times (ms per unit).
fn case_of(name: &str, unit: &str, times: &[f64], flops_per_unit: Option<f64>) -> CaseResult {
    let mut sorted = times.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = median_of(&sorted);
    CaseResult {
        name: name.to_owned(),
        unit: unit.to_owned(),
        median_ms: median,
        min_ms: sorted.first().copied().unwrap_or(f64::NAN),
        max_ms: sorted.last().copied().unwrap_or(f64::NAN),
        reps: times.len(),
        gflops: flops_per_unit.map(|fl| fl / (median * 1e-3) / 1e9),
    }
}

/// The median of sorted values (the upper one of an even count).
fn median_of(sorted: &[f64]) -> f64 {
    sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The median over reps of `a[r] / b[r]`: a ratio of two cases timed side by side.
fn paired_ratio(a: &[f64], b: &[f64]) -> f64 {
    let mut r: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
    r.sort_by(f64::total_cmp);
    median_of(&r)
}

/// The digits problem: `../shared/data/digits_sklearn` (64×1797) and its labels when present,
/// else a seeded random matrix of the same shape and no labels.
fn digits_matrix() -> (Array2<f64>, Vec<usize>, &'static str) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data/digits_sklearn/digits_sklearn.csv");
    if let Ok(text) = std::fs::read_to_string(&p) {
        let mut labels = Vec::new();
        let rows: Vec<Vec<f64>> = text
            .lines()
            .skip(1)
            .filter_map(|l| {
                let v: Result<Vec<f64>, _> = l.split(',').map(str::parse::<f64>).collect();
                v.ok().and_then(|mut v| {
                    // The label column: a small nonnegative integer.
                    let y = v.pop()?;
                    labels.push(y as usize);
                    Some(v)
                })
            })
            .collect();
        if let Some(m) = rows.first().map(Vec::len) {
            let n = rows.len();
            let x = Array2::from_shape_fn((m, n), |(f, i)| rows[i][f]);
            return (x, labels, "digits_sklearn 64×1797");
        }
    }
    (
        random_matrix(64, 1797, 11),
        Vec::new(),
        "random 64×1797 (digits absent)",
    )
}

/// The run as the models' bench cases see it ([`Bench`]): the problems, the repetitions, and
/// the report their figures go to.
struct Run<'a> {
    rep: &'a mut BenchReport,
    reps: usize,
    iters_big: usize,
    digits: Option<Problem>,
    /// The random problem's shape and iterations a rep, when asked for.
    random: Option<(usize, usize, usize)>,
}

impl Bench for Run<'_> {
    fn reps(&self) -> usize {
        self.reps
    }
    fn time_fit(
        &mut self,
        name: &str,
        reps: usize,
        make: &mut dyn FnMut() -> Option<Box<dyn crate::engine::models::Model>>,
    ) -> Option<(usize, Option<crate::engine::models::Phase>)> {
        use crate::engine::jobs::experiment::{FitOptions, fit};
        let mut last = None;
        self.time(name, "fit", reps, 1, &mut || {
            if let Some(mut model) = make()
                && let Ok(out) = fit(model.as_mut(), &FitOptions::default(), |_, _, _| {
                    std::ops::ControlFlow::Continue(())
                })
            {
                last = Some((out.record.iterations(), out.record.phases.last().copied()));
            }
        });
        last
    }
    fn iters_big(&self) -> usize {
        self.iters_big
    }
    fn digits(&self) -> Option<Problem> {
        self.digits.clone()
    }
    fn random_asked(&self) -> bool {
        self.random.is_some()
    }
    fn random(&self) -> Option<Problem> {
        self.random.map(|(m, n, iters)| Problem {
            x: random_matrix(m, n, 12),
            labels: Vec::new(),
            label: format!("random {m}×{n}"),
            iters,
        })
    }
    fn time(&mut self, name: &str, unit: &str, reps: usize, units: usize, run: &mut dyn FnMut()) {
        let case = time_case(name, unit, reps, units, None, run);
        self.rep.cases.push(case);
    }
    fn interleaved(
        &mut self,
        cases: usize,
        units: usize,
        run: &mut dyn FnMut(usize),
    ) -> Vec<Vec<f64>> {
        time_interleaved(cases, self.reps, units, run)
    }
    fn case(&mut self, name: &str, unit: &str, times: &[f64], flops: Option<f64>) {
        self.rep.cases.push(case_of(name, unit, times, flops));
    }
    fn ratio(&mut self, what: &str, a: &[f64], b: &[f64]) {
        self.rep.ratios.push((what.to_owned(), paired_ratio(a, b)));
    }
    fn note(&mut self, text: String) {
        self.rep.notes.push(text);
    }
}

/// Write a problem's X and NMF's seeded start (W0, H0) at rank k as `<tag>_*.npy` into `dir`,
/// for the peer script `benches/peers/sklearn_nmf.py`.
fn export_problem(dir: &Path, tag: &str, p: &Problem, k: usize) -> anyhow::Result<()> {
    let data = Arc::new(Dataset::from_parts(p.x.clone(), None, vec![], &p.label));
    let model = Nmf::new(Arc::clone(&data), &ModelSpec::new(nmf::KIND, k, 0))?;
    std::fs::create_dir_all(dir)?;
    write_atomic(&dir.join(format!("{tag}_X.npy")), &matrix_npy(&data.x)?)?;
    if let Some(w) = model.w() {
        write_atomic(
            &dir.join(format!("{tag}_W0.npy")),
            &matrix_npy(&w.to_owned())?,
        )?;
    }
    write_atomic(
        &dir.join(format!("{tag}_H0.npy")),
        &matrix_npy(&model.h().to_owned())?,
    )?;
    Ok(())
}

/// The iteration problems `args` asks for: the digits (`it_small` iterations a rep) and the
/// large random X's shape (`it_big`).
fn problems(
    args: &BenchArgs,
    (it_small, it_big): (usize, usize),
) -> (Option<Problem>, Option<(usize, usize, usize)>) {
    let digits = (args.problem != "random").then(|| {
        let (x, labels, label) = digits_matrix();
        Problem {
            x,
            labels,
            label: label.to_owned(),
            iters: it_small,
        }
    });
    let random = (args.problem != "digits").then(|| {
        let (bm, bn) = if args.quick && !args.full_random {
            (1024, 2500)
        } else {
            (4096, 10000)
        };
        (bm, bn, it_big)
    });
    (digits, random)
}

/// Every registered model's own cases ([`crate::engine::models::Descriptor::bench`]), in the
/// registry's order.
fn bench_models(
    rep: &mut BenchReport,
    args: &BenchArgs,
    reps: usize,
    iters: (usize, usize),
) -> anyhow::Result<()> {
    let (digits, random) = problems(args, iters);
    let mut run = Run {
        rep,
        reps,
        iters_big: iters.1,
        digits,
        random,
    };
    if let Some(dir) = args.export.as_deref() {
        for (tag, p, k) in [("digits", run.digits(), 10), ("random", run.random(), 20)] {
            if let Some(p) = p {
                export_problem(dir, tag, &p, k)?;
            }
        }
    }
    for kind in ModelKind::all() {
        if let Some(cases) = kind.descriptor().bench {
            cases(&mut run).map_err(|e| anyhow!("bench {}: {e}", kind.name()))?;
        }
    }
    Ok(())
}

/// Time loading a dataset file or folder (skipped with a note when absent).
fn bench_load(rep: &mut BenchReport, rel: &str, reps: usize) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let p = if p.exists() {
        p
    } else {
        // Also accept the path relative to the working directory.
        PathBuf::from(rel)
    };
    if !p.exists() {
        rep.notes.push(format!("load {rel}: skipped (not found)"));
        return;
    }
    let opts = LoadOptions::default();
    match crate::engine::data::load(&p, &opts) {
        Ok(d) => {
            let name = format!("load {rel} [{}×{}]", d.m(), d.n());
            rep.cases.push(time_case(&name, "load", reps, 1, None, || {
                let _ = crate::engine::data::load(&p, &opts);
            }));
        }
        Err(e) => rep.notes.push(format!("load {rel}: skipped ({e})")),
    }
}

/// Run the benchmark cases.
pub fn run(args: &BenchArgs) -> Result<(), CliError> {
    if let (Some(model), Some(n)) = (&args.scale_child, args.scale_n) {
        return scale::child(model, n).map_err(CliError::Failed);
    }
    if args.scale {
        let sizes = if args.scale_sizes.is_empty() {
            scale::SIZES.to_vec()
        } else {
            args.scale_sizes.clone()
        };
        return scale::run(&args.scale_models, &sizes, args.json)
            .map(|_| ())
            .map_err(CliError::Failed);
    }
    let report = measure(args).map_err(CliError::Failed)?;
    let text = if args.json {
        let json = serde_json::to_string_pretty(&report).map_err(|e| CliError::Failed(e.into()))?;
        format!("{json}\n")
    } else {
        let mut t = format!(
            "{:<58} {:>11} {:>11} {:>11} {:>8}\n",
            "case", "median ms", "min ms", "max ms", "GFLOP/s"
        );
        for r in &report.cases {
            t.push_str(&format!(
                "{:<58} {:>11.4} {:>11.4} {:>11.4} {:>8}\n",
                format!("{} (per {})", r.name, r.unit),
                r.median_ms,
                r.min_ms,
                r.max_ms,
                r.gflops.map(|g| format!("{g:.1}")).unwrap_or_default()
            ));
        }
        for (what, v) in &report.ratios {
            t.push_str(&format!("{what}: {v:.3}\n"));
        }
        for n in &report.notes {
            t.push_str(&format!("note: {n}\n"));
        }
        t
    };
    super::output::print_stdout(&text)
}

/// All cases, in one process.
pub fn measure(args: &BenchArgs) -> anyhow::Result<BenchReport> {
    let mut rep = BenchReport {
        cases: Vec::new(),
        ratios: Vec::new(),
        notes: Vec::new(),
    };
    if args.threads_scaling {
        threads::measure(&mut rep, args.quick)?;
        return Ok(rep);
    }
    let (reps, it_small, it_big) = if args.quick { (3, 20, 2) } else { (7, 200, 10) };
    bench_models(&mut rep, args, reps, (it_small, it_big))?;
    if args.models_only {
        return Ok(rep);
    }

    // 5-NN graph (f32 GEMM screen + exact re-rank, rayon across blocks).
    let (km, kn) = if args.quick {
        (256, 2000)
    } else {
        (1024, 10_000)
    };
    let kx = random_matrix(km, kn, 14);
    rep.cases.push(time_case(
        &format!("knn p=5 [n={kn}, m={km}]"),
        "graph",
        reps.min(3),
        1,
        None,
        || {
            let _ = knn(kx.view(), 5);
        },
    ));
    drop(kx);

    // PCA-2D of H, n = 10,000, k = 20.
    let h = random_matrix(20, 10_000, 13);
    let mut proj = Projector::new();
    rep.cases.push(time_case(
        "pca2d [n=10000, k=20]",
        "call",
        reps,
        1,
        None,
        || {
            let _ = proj.project(h.view());
        },
    ));

    // Loaders (real files from ../shared/data; skipped when absent).
    bench_load(
        &mut rep,
        "../shared/data/optdigits/optdigits.csv",
        reps.min(5),
    );
    if args.quick {
        rep.notes.push("load orl_faces: skipped in --quick".into());
    } else {
        bench_load(&mut rep, "../shared/data/orl_faces", 3);
    }
    Ok(rep)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cases take turns rep by rep, after one warm-up call each, and every rep of every case
    /// is recorded.
    #[test]
    fn interleaved_cases_take_turns() {
        let mut order = Vec::new();
        let times = time_interleaved(3, 2, 4, |c| order.push(c));
        assert_eq!(order, [0, 1, 2, 0, 1, 2, 0, 1, 2]);
        assert_eq!(times.len(), 3);
        assert!(
            times
                .iter()
                .all(|t| t.len() == 2 && t.iter().all(|&v| v >= 0.0))
        );
    }

    /// A paired ratio is the median of the reps' ratios, not the ratio of the medians: here
    /// the reps' ratios are 1, 2 and 0.5 (median 1), the medians 3 and 5 (ratio 0.6).
    #[test]
    fn paired_ratio_is_the_median_of_the_reps_ratios() {
        let (a, b) = ([1.0, 10.0, 3.0], [1.0, 5.0, 6.0]);
        assert_eq!(paired_ratio(&a, &b), 1.0);
        let case = case_of("a", "unit", &a, Some(3e9));
        assert_eq!((case.median_ms, case.min_ms, case.max_ms), (3.0, 1.0, 10.0));
        assert_eq!(case.reps, 3);
        // 3e9 flops in 3 ms: 1000 GFLOP/s.
        assert!((case.gflops.unwrap_or(0.0) - 1000.0).abs() < 1e-9);
    }
}
