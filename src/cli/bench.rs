//! `nmf-playground bench`: timings of the hot paths, in one process, medians and spread.
//!
//! Each case runs a warm-up, then `reps` timed repetitions; we report the per-unit median,
//! min and max, and GFLOP/s where a flop count applies. The NMF iteration is timed next to its
//! two big GEMMs alone (WᵀX and XHᵀ) on the same matrices, so the report states the
//! iteration's overhead over pure GEMM time. Those cases (and the RPNMF iteration) take turns
//! rep by rep, and each ratio is the median of the reps' ratios, which a drift of a shared
//! box's speed moves far less than a ratio of two medians taken a minute apart
//! (docs/performance.md, "What `bench` measures").
//!
//! RPNMF is timed twice on digits: with random triplets (|T| = 3n, the full step is always
//! taken) and with the protocol's triplets on unit-norm columns, as `run --triplets generate`
//! fits it, where the safeguard damps most steps and each damped level costs one more
//! evaluation of the objective.

mod scale;
mod threads;

use super::CliError;
use super::output::{matrix_npy, write_atomic};
use crate::engine::constraints::SideInfo;
use crate::engine::constraints::generate::{
    ProtocolOptions, generate_triplets, labels_from_truth, random_triplets, reveal_stratified,
};
use crate::engine::data::{Dataset, LoadOptions};
use crate::engine::linalg::projection::Projector;
use crate::engine::linalg::{GraphWeight, Op, gemm_into, knn::knn};
use crate::engine::models::nmf::Nmf;
use crate::engine::models::rpnmf::Rpnmf;
use crate::engine::models::{Model, ModelKind, ModelSpec, SideNeed, build};
use anyhow::anyhow;
use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
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

/// A seeded uniform random nonnegative m×n matrix (in 2 MiB pages when large, as the `.npy`
/// loader gives it).
#[expect(
    clippy::expect_used,
    reason = "cannot fail: the buffer holds exactly m·n values"
)]
pub fn random_matrix(m: usize, n: usize, seed: u64) -> Array2<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut v = crate::engine::machine::sys::huge_page_buffer(m * n);
    v.iter_mut().for_each(|x| *x = rng.r#gen::<f64>());
    Array2::from_shape_vec((m, n), v).expect("m·n values")
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

/// RPNMF as `run --triplets generate` and the app fit it: unit-L2 digits, the protocol's
/// triplets from labels and the 5-NN graph (docs/models.md §8.4), k = 10. Unlike the random
/// triplets of [`bench_nmf`], these make the safeguard damp most steps, and each damped level
/// is one more evaluation of F; the note says how many evaluations an iteration took.
fn bench_rpnmf_protocol(
    rep: &mut BenchReport,
    x: &Array2<f64>,
    labels: &[usize],
    reps: usize,
    iters: usize,
) -> anyhow::Result<()> {
    let mut x = x.clone();
    crate::engine::data::preprocess::apply(&mut x, crate::engine::data::Preprocess::L2);
    let opts = ProtocolOptions::default();
    let triplets = generate_triplets(x.view(), &labels_from_truth(labels), &opts, &[])?.triplets;
    let n_triplets = triplets.len();
    let data = Arc::new(Dataset::from_parts(x, None, vec![], "digits l2"));
    let side = SideInfo::with_triplets(triplets);
    let spec = crate::engine::models::rpnmf::paper_spec(10, 0);
    let mut rp = Rpnmf::new(data, &spec, &side).map_err(|e| anyhow!(e))?;
    // Past the first fast descent, where the damping settles in.
    for _ in 0..200 {
        let _ = rp.step();
    }
    let before = rp.safeguard_stats().evaluations;
    let start = rp.iteration();
    let case = time_case(
        &format!("rpnmf_iteration protocol triplets |T|={n_triplets} [digits l2, k=10]"),
        "iteration",
        reps,
        iters,
        None,
        || {
            for _ in 0..iters {
                let _ = rp.step();
            }
        },
    );
    let st = rp.safeguard_stats();
    rep.notes.push(format!(
        "rpnmf protocol triplets [digits l2]: iterations {}..{}: {:.2} evaluations of F per \
         iteration; {} of {} steps damped in all (deepest γ = 2^-{}), {} rejected",
        start,
        rp.iteration(),
        (st.evaluations - before) as f64 / (rp.iteration() - start).max(1) as f64,
        st.damped,
        rp.iteration(),
        st.deepest,
        st.rejected
    ));
    rep.cases.push(case);
    Ok(())
}

/// t-STE on the digits with the protocol's triplets (docs/models.md §8.4; |T| = 5,400 with the
/// defaults), k = 10, as `run --model tste --triplets generate` fits it: one iteration is the
/// gradient step and one pass over the triplets for the cost and the gradient (§3.6).
fn bench_tste(
    rep: &mut BenchReport,
    x: &Array2<f64>,
    labels: &[usize],
    reps: usize,
    iters: usize,
) -> anyhow::Result<()> {
    use crate::engine::models::tste::{KIND, Tste, TsteParams};
    let mut x = x.clone();
    crate::engine::data::preprocess::apply(&mut x, crate::engine::data::Preprocess::L2);
    let opts = ProtocolOptions::default();
    let triplets = generate_triplets(x.view(), &labels_from_truth(labels), &opts, &[])?.triplets;
    let spec = ModelSpec::new(KIND, 10, 0);
    let params = TsteParams::from_checked(&spec.checked()?, spec.k)?;
    let mut model = Tste::new(x.ncols(), &spec, params, &triplets).map_err(|e| anyhow!(e))?;
    // Past the first phase, where the embedding grows from its 1e-4 start.
    for _ in 0..100 {
        let _ = model.step();
    }
    rep.cases.push(time_case(
        &format!(
            "tste_iteration protocol triplets |T|={} [digits l2, k=10]",
            triplets.len()
        ),
        "iteration",
        reps,
        iters,
        None,
        || {
            for _ in 0..iters {
                let _ = model.step();
            }
        },
    ));
    Ok(())
}

/// A clustered problem of COIL20's shape (m×n, c classes): unit-L2 columns around c random
/// centres in [0, 1]^m, noise 0.35, seeded.
fn clustered_matrix(m: usize, n: usize, c: usize, seed: u64) -> Array2<f64> {
    let centres = random_matrix(m, c, seed);
    let noise = random_matrix(m, n, seed + 1);
    let mut x = Array2::from_shape_fn((m, n), |(i, j)| {
        (centres[[i, j % c]] + 0.35 * noise[[i, j]]).max(0.0)
    });
    crate::engine::data::preprocess::apply(&mut x, crate::engine::data::Preprocess::L2);
    x
}

/// CAN (docs/models.md §2.7) to its stop, and PSMF (§6): the start (whitening, CAN, Q) and
/// its 50 paper iterations, on a clustered 1024×1440 problem with k = 20 (COIL20's shape).
fn bench_can_psmf(rep: &mut BenchReport, reps: usize) -> anyhow::Result<()> {
    use crate::engine::models::can::{self, Can, CanParams};
    use crate::engine::models::psmf::{self, Psmf, PsmfParams};
    let (m, n, k) = (1024, 1440, 20);
    let x = clustered_matrix(m, n, k, 21);
    let label = format!("clustered {m}×{n}, k={k}");
    let cp = CanParams::defaults().map_err(|e| anyhow!(e))?;
    let mut rounds = 0;
    rep.cases.push(time_case(
        &format!("can_fit [{label}]"),
        "fit",
        reps.min(3),
        1,
        None,
        || {
            let spec = ModelSpec::new(can::KIND, k, 0);
            if let Ok(mut c) = Can::new(x.view(), spec.k, spec.seed, cp) {
                rounds = 0;
                while !c.has_converged() {
                    let _ = c.step();
                    rounds += 1;
                }
                c.finish();
            }
        },
    ));
    rep.notes
        .push(format!("can [{label}]: {rounds} round(s) per fit"));
    let spec = ModelSpec::new(psmf::KIND, k, 0);
    let pp = PsmfParams::from_checked(&spec.checked()?, k)?;
    let start = Instant::now();
    let mut model = Psmf::new(x.view(), &spec, pp).map_err(|e| anyhow!(e))?;
    let start_s = start.elapsed().as_secs_f64();
    rep.cases.push(time_case(
        &format!("psmf_fit 50 iterations from the CAN start [{label}]"),
        "fit",
        reps.min(3),
        1,
        None,
        || {
            for _ in 0..50 {
                let _ = model.step();
            }
        },
    ));
    rep.notes.push(format!(
        "psmf [{label}]: start (whitening, CAN, Q) {start_s:.2} s"
    ));
    Ok(())
}

/// 2-STGINMF (docs/models.md §7) as `run --model stginmf --reveal 0.1` fits it on the digits:
/// a stratified, seeded 10 % of the labels given, the default parameters, both stages and
/// every self-training round to the model's own stop (issue 19's target: ≤ 3 s on one thread).
fn bench_stginmf(
    rep: &mut BenchReport,
    x: &Array2<f64>,
    labels: &[usize],
    reps: usize,
) -> anyhow::Result<()> {
    use crate::engine::jobs::experiment::{FitOptions, fit};
    use crate::engine::models::stginmf;
    let classes = labels.iter().copied().max().map_or(0, |c| c + 1);
    let given = reveal_stratified(labels, 0.1, 0)?;
    let n_given = given.iter().flatten().count();
    let data = Arc::new(Dataset::from_parts(x.clone(), None, vec![], "digits"));
    let side = SideInfo::new(Vec::new(), given);
    let spec = ModelSpec::new(stginmf::KIND, classes, 0);
    let mut rounds = 0;
    let mut steps = 0;
    rep.cases.push(time_case(
        &format!("stginmf_fit 10 % labels ({n_given} given), self-training [digits, k={classes}]"),
        "fit",
        reps.min(3),
        1,
        None,
        || {
            if let Ok(mut model) = crate::engine::models::build(&spec, data.clone(), &side)
                && let Ok(out) = fit(model.as_mut(), &FitOptions::default(), |_, _, _| {
                    std::ops::ControlFlow::Continue(())
                })
            {
                steps = out.record.iterations();
                rounds = out.record.phases.last().map_or(0, |p| p.round + 1);
            }
        },
    ));
    rep.notes.push(format!(
        "stginmf [digits, 10 % labels]: {steps} ALS steps in {rounds} round(s) per fit"
    ));
    Ok(())
}

fn bench_nmf(
    rep: &mut BenchReport,
    label: &str,
    x: Array2<f64>,
    k: usize,
    reps: usize,
    iters: usize,
    export: Option<&Path>,
) -> anyhow::Result<()> {
    let (m, n) = x.dim();
    let data = Arc::new(Dataset::from_parts(x, None, vec![], label));
    let spec = ModelSpec::new(crate::engine::models::nmf::KIND, k, 0);
    let mut model = Nmf::new(Arc::clone(&data), &spec).map_err(|e| anyhow!(e))?;
    if let Some(dir) = export {
        std::fs::create_dir_all(dir)?;
        let tag = if m == 64 { "digits" } else { "random" };
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
    }
    let gemm_flops = 2.0 * 2.0 * (m * n * k) as f64;
    let mut rp = {
        let spec = crate::engine::models::rpnmf::paper_spec(k, 0);
        let side = SideInfo::with_triplets(random_triplets(n, 3 * n, 17));
        Rpnmf::new(Arc::clone(&data), &spec, &side).map_err(|e| anyhow!(e))?
    };
    // The two big GEMMs alone, on the same shapes, from the factors after one warm-up block.
    for _ in 0..iters {
        let _ = model.step();
    }
    let w = model
        .w()
        .map(|w| w.to_owned())
        .unwrap_or_else(|| Array2::zeros((m, k)));
    let h = model.h().to_owned();
    let mut wtx = Array2::<f64>::zeros((k, n));
    let mut xht = Array2::<f64>::zeros((m, k));
    // Four cases in turn, rep by rep, each rep `iters` units: a drift of the machine's speed
    // during the run then moves all four alike, and each ratio is the median of its reps'
    // ratios (pairs measured side by side), not a ratio of medians taken minutes apart.
    let times = time_interleaved(4, reps, iters, |case| match case {
        0 => {
            for _ in 0..iters {
                let _ = model.step();
            }
        }
        1 => {
            for _ in 0..iters {
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
            }
        }
        // The same two products by the kernels and column blocks the iteration uses (thin
        // kernels in blocks on large X; thin WᵀX and the lane-sum XHᵀ on small X).
        2 => {
            for _ in 0..iters {
                model.big_products();
            }
        }
        _ => {
            for _ in 0..iters {
                let _ = rp.step();
            }
        }
    });
    let (nmf, gemm, products, rpnmf) = (&times[0], &times[1], &times[2], &times[3]);
    rep.ratios.extend([
        (
            format!("nmf iteration / its two GEMMs (faer) [{label}]"),
            paired_ratio(nmf, gemm),
        ),
        (
            format!("nmf iteration / its two products as it computes them [{label}]"),
            paired_ratio(nmf, products),
        ),
        (
            format!("rpnmf iteration / nmf iteration [{label}]"),
            paired_ratio(rpnmf, nmf),
        ),
    ]);
    let names = [
        (format!("nmf_iteration [{label}, k={k}]"), "iteration"),
        (format!("gemm WtX+XHt [{label}, k={k}]"), "pair"),
        (
            format!("nmf big products WtX+XHt as the iteration computes them [{label}, k={k}]"),
            "pair",
        ),
        (
            format!("rpnmf_iteration |T|=3n [{label}, k={k}]"),
            "iteration",
        ),
    ];
    rep.cases.extend(
        names
            .iter()
            .zip(&times)
            .map(|((name, unit), t)| case_of(name, unit, t, Some(gemm_flops))),
    );
    // The safeguard's work depends on how often it damps or rejects: say so next to the timing.
    let st = rp.safeguard_stats();
    rep.notes.push(format!(
        "rpnmf safeguard [{label}] after {} iterations: {} damped (deepest γ = 2^-{}), {} rejected",
        rp.iteration(),
        st.damped,
        st.deepest,
        st.rejected
    ));
    Ok(())
}

/// RMNMF (docs/models.md §3.4) on `orl_32x32` (1024×400, k = 40, when present) and on a random
/// 1024×1440 matrix (k = 20): its iteration timed in turn with the three m×n×k products it
/// makes (X − G Wᵀ, Bᵀ G and B W) alone on arrays of the same shapes, so the report states the
/// iteration against its O(mnk) part; the rest is O(mn) passes, O(nnz·k) graph passes and the
/// O(nk²) thin SVD of the Procrustes step.
fn bench_rmnmf(rep: &mut BenchReport, reps: usize, iters: usize) -> anyhow::Result<()> {
    use crate::engine::models::rmnmf::{self, Rmnmf, RmnmfParams};
    let mut problems = Vec::new();
    let orl = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/orl_32x32");
    if orl.is_dir() {
        let data = crate::engine::data::load(&orl, &LoadOptions::default())?;
        problems.push((data.x.clone(), 40, "orl_32x32 1024×400".to_owned()));
    } else {
        rep.notes
            .push("rmnmf orl_32x32: skipped (../shared/data/orl_32x32 absent)".into());
    }
    problems.push((
        random_matrix(1024, 1440, 15),
        20,
        "random 1024×1440".to_owned(),
    ));
    for (x, k, label) in problems {
        let (m, n) = x.dim();
        let data = Arc::new(Dataset::from_parts(x, None, vec![], &label));
        let params = RmnmfParams::defaults().map_err(|e| anyhow!(e))?;
        let graph = SideInfo::default().graph(&data, params.neighbors, GraphWeight::Binary);
        let nnz = graph.nnz();
        let spec = ModelSpec::new(rmnmf::KIND, k, 0);
        let mut model = Rmnmf::start(Arc::clone(&data), &spec, params, graph)?;
        let xt = data.x.t().as_standard_layout().into_owned();
        let g = random_matrix(n, k, 16);
        let w = random_matrix(m, k, 17);
        let mut r = Array2::<f64>::zeros((n, m));
        let mut wk = Array2::<f64>::zeros((m, k));
        let mut nk = Array2::<f64>::zeros((n, k));
        let times = time_interleaved(2, reps, iters, |case| {
            for _ in 0..iters {
                if case == 0 {
                    let _ = model.step();
                } else {
                    r.assign(&xt);
                    gemm_into(
                        &mut r.view_mut(),
                        -1.0,
                        g.view(),
                        Op::N,
                        w.view(),
                        Op::T,
                        true,
                    );
                    gemm_into(
                        &mut wk.view_mut(),
                        1.0,
                        xt.view(),
                        Op::T,
                        g.view(),
                        Op::N,
                        false,
                    );
                    gemm_into(
                        &mut nk.view_mut(),
                        1.0,
                        xt.view(),
                        Op::N,
                        w.view(),
                        Op::N,
                        false,
                    );
                }
            }
        });
        let flops = 6.0 * (m * n * k) as f64;
        rep.ratios.push((
            format!("rmnmf iteration / its three m×n×k products [{label}, k={k}]"),
            paired_ratio(&times[0], &times[1]),
        ));
        rep.cases.push(case_of(
            &format!("rmnmf_iteration lambda=1 mu0=1e-5 5-NN [{label}, k={k}]"),
            "iteration",
            &times[0],
            Some(flops),
        ));
        rep.cases.push(case_of(
            &format!("rmnmf three m×n×k products [{label}, k={k}]"),
            "iteration",
            &times[1],
            Some(flops),
        ));
        rep.notes.push(format!(
            "rmnmf [{label}]: 5-NN binary graph with {nnz} nonzeros; per iteration \
             O(mnk) = 3 products of {:.0} MFLOP, O(nnz·k) = {}, O(nk²) = {}",
            2.0 * (m * n * k) as f64 / 1e6,
            nnz * k,
            n * k * k
        ));
    }
    Ok(())
}

/// A problem a model is timed on against NMF ([`PAIRED`]): the rank, and the X.
#[derive(Clone, Copy, Debug)]
enum Paired {
    /// `digits_sklearn` (64×1797, as `run` loads it), `it_small` iterations a rep.
    Digits(usize),
    /// The large random X of the run (4096×10000, 1024×2500 with --quick).
    Random(usize),
    /// The ORL faces (`orl_32x32`, 1024×400), when `../shared/data` has them.
    Orl(usize),
    /// A random 1024×1440 X.
    Random1440(usize),
}

/// The registered models timed against NMF's iteration, and on which problems. Each is built
/// by the registry with its defaults (the same rank and seed as NMF; triplets, when it needs
/// side information, 3n seeded random ones), and the two iterations take turns rep by rep:
/// the ratio is the model's speed target against NMF (docs/performance.md, "The baselines'
/// own passes"). GFLOP/s counts NMF's two big products (4mnk per iteration).
const PAIRED: &[(&str, &[Paired])] = &[
    ("gnmf", &[Paired::Random(20)]),
    ("rnmf", &[Paired::Random(20)]),
    ("nmfcc", &[Paired::Digits(10), Paired::Random(20)]),
    ("fnmf", &[Paired::Orl(40), Paired::Random1440(20)]),
];

/// Every model of [`PAIRED`], in the registry's order, on its problems that `args` selects.
fn bench_paired(
    rep: &mut BenchReport,
    args: &BenchArgs,
    reps: usize,
    (it_small, it_big): (usize, usize),
) -> anyhow::Result<()> {
    for kind in ModelKind::all() {
        let Some((_, problems)) = PAIRED.iter().find(|(name, _)| *name == kind.name()) else {
            continue;
        };
        for &problem in *problems {
            let (x, label, k, iters) = match problem {
                Paired::Digits(k) if args.problem != "random" => {
                    let (x, _, label) = digits_matrix();
                    (x, label.to_owned(), k, it_small)
                }
                Paired::Random(k) if args.problem != "digits" => {
                    let (bm, bn) = if args.quick && !args.full_random {
                        (1024, 2500)
                    } else {
                        (4096, 10000)
                    };
                    (
                        random_matrix(bm, bn, 12),
                        format!("random {bm}×{bn}"),
                        k,
                        it_big,
                    )
                }
                Paired::Orl(k) if args.problem != "random" => {
                    let dir =
                        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/orl_32x32");
                    match crate::engine::data::load(&dir, &LoadOptions::default()) {
                        Ok(d) => (d.x, "orl_32x32 1024×400".to_owned(), k, it_big),
                        Err(_) => {
                            rep.notes.push(format!(
                                "{} [orl_32x32]: skipped (../shared/data/orl_32x32 absent)",
                                kind.name()
                            ));
                            continue;
                        }
                    }
                }
                Paired::Random1440(k) if args.problem != "digits" => (
                    random_matrix(1024, 1440, 18),
                    "random 1024×1440".to_owned(),
                    k,
                    it_big,
                ),
                _ => continue,
            };
            bench_against_nmf(rep, kind, &label, x, k, reps, iters)?;
        }
    }
    Ok(())
}

/// `kind`'s iteration against NMF's on X (same rank and seed), taking turns rep by rep: a
/// case, the ratio to NMF, and a note on the model's start (its build time, graph, links).
fn bench_against_nmf(
    rep: &mut BenchReport,
    kind: ModelKind,
    label: &str,
    x: Array2<f64>,
    k: usize,
    reps: usize,
    iters: usize,
) -> anyhow::Result<()> {
    let (m, n) = x.dim();
    let name = kind.name();
    let data = Arc::new(Dataset::from_parts(x, None, vec![], label));
    let side = match kind.needs() {
        SideNeed::Triplets | SideNeed::Links => {
            SideInfo::with_triplets(random_triplets(n, 3 * n, 17))
        }
        _ => SideInfo::default(),
    };
    let start = Instant::now();
    let mut model = build(&ModelSpec::new(kind, k, 0), Arc::clone(&data), &side)?;
    let build_s = start.elapsed().as_secs_f64();
    let mut nmf = Nmf::new(
        data,
        &ModelSpec::new(crate::engine::models::nmf::KIND, k, 0),
    )?;
    let times = time_interleaved(2, reps, iters, |case| {
        for _ in 0..iters {
            let _ = if case == 0 { model.step() } else { nmf.step() };
        }
    });
    rep.ratios.push((
        format!("{name} iteration / nmf iteration [{label}]"),
        paired_ratio(&times[0], &times[1]),
    ));
    let flops = Some(4.0 * (m * n * k) as f64);
    rep.cases.push(case_of(
        &format!("{name}_iteration defaults [{label}, k={k}]"),
        "iteration",
        &times[0],
        flops,
    ));
    let mut note = format!("{name} [{label}]: built in {build_s:.2} s");
    if let Some(g) = model.outputs().graph {
        note.push_str(&format!(", sample graph with {} nonzeros", g.nnz()));
    }
    if !side.triplets.is_empty() {
        let links = side.links();
        note.push_str(&format!(
            ", {} triplets ({} must-links, {} cannot-links)",
            side.triplets.len(),
            links.must.len(),
            links.cannot.len()
        ));
    }
    rep.notes.push(note);
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
    let export = args.export.as_deref();
    if args.problem != "random" {
        let (digits, labels, label) = digits_matrix();
        if labels.is_empty() {
            rep.notes
                .push("rpnmf protocol triplets: skipped (digits labels absent)".into());
        } else {
            bench_rpnmf_protocol(&mut rep, &digits, &labels, reps, it_small)?;
            bench_tste(&mut rep, &digits, &labels, reps, it_small)?;
            bench_stginmf(&mut rep, &digits, &labels, reps)?;
        }
        bench_nmf(&mut rep, label, digits, 10, reps, it_small, export)?;
    }
    if args.problem != "digits" {
        let (bm, bn) = if args.quick && !args.full_random {
            (1024, 2500)
        } else {
            (4096, 10000)
        };
        let big = random_matrix(bm, bn, 12);
        let big_label = format!("random {bm}×{bn}");
        bench_nmf(&mut rep, &big_label, big, 20, reps, it_big, export)?;
    }
    bench_paired(&mut rep, args, reps, (it_small, it_big))?;
    bench_rmnmf(&mut rep, reps, it_big.max(3))?;
    bench_can_psmf(&mut rep, reps)?;
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
