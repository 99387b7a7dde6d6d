//! What a model's own `bench` cases need ([`super::Descriptor::bench`]). The CLI's `bench`
//! runs every registered model's cases in one loop over the registry: it hands them a
//! [`Bench`], which holds the problems and times what a case gives it, and keeps the cases,
//! ratios and notes. A model says what to time and on what; the timing and the report are the
//! front end's.

use super::{Model, ModelKind, ModelSpec, Phase, SideNeed, build};
use crate::engine::constraints::SideInfo;
use crate::engine::constraints::generate::random_triplets;
use crate::engine::data::Dataset;
use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Why a bench case could not run.
pub type BenchError = Box<dyn std::error::Error + Send + Sync>;

/// A model's bench cases (registered in its descriptor).
pub type BenchFn = fn(&mut dyn Bench) -> Result<(), BenchError>;

/// A problem the cases run on: X, its labels (empty when unknown), its name in the case
/// names, and the iterations one rep of an iteration case runs.
#[derive(Clone, Debug)]
pub struct Problem {
    pub x: Array2<f64>,
    pub labels: Vec<usize>,
    pub label: String,
    pub iters: usize,
}

/// The bench run as the cases see it.
pub trait Bench {
    /// Repetitions of a timed case.
    fn reps(&self) -> usize;
    /// Iterations a rep on the large problems (ORL, the 1024×1440 ones).
    fn iters_big(&self) -> usize;
    /// The digits problem (64×1797, with its labels when `../shared/data` has them), unless
    /// only the random problem was asked for.
    fn digits(&self) -> Option<Problem>;
    /// Whether the large random problem was asked for (not only the digits).
    fn random_asked(&self) -> bool;
    /// The large random problem (4096×10000, 1024×2500 with `--quick`), drawn afresh for each
    /// case (in 2 MiB pages, as the `.npy` loader gives X), unless only the digits were asked
    /// for.
    fn random(&self) -> Option<Problem>;
    /// Time `run` (`units` units a call, one warm-up call first) as case `name`, `reps` times.
    fn time(&mut self, name: &str, unit: &str, reps: usize, units: usize, run: &mut dyn FnMut());
    /// `cases` cases timed in turn, rep by rep, after one warm-up call each (`run(c)` runs
    /// case c once, `units` units); each case's times in ms per unit.
    fn interleaved(
        &mut self,
        cases: usize,
        units: usize,
        run: &mut dyn FnMut(usize),
    ) -> Vec<Vec<f64>>;
    /// A case from per-rep times (ms per unit); `flops` a unit gives GFLOP/s.
    fn case(&mut self, name: &str, unit: &str, times: &[f64], flops: Option<f64>);
    /// The ratio of two cases timed side by side (the median of their reps' ratios).
    fn ratio(&mut self, what: &str, a: &[f64], b: &[f64]);
    /// A remark next to the figures (a skipped case, what a case did).
    fn note(&mut self, text: String);
    /// Time `reps` fits to their own stop with the default fit options, each of a model from
    /// `make` (built inside the timing, as `run` builds it), through the front end's fit loop
    /// (the models do not import the jobs that run them): the last fit's iterations and last
    /// phase; `None` when no fit ended.
    fn time_fit(
        &mut self,
        name: &str,
        reps: usize,
        make: &mut dyn FnMut() -> Option<Box<dyn Model>>,
    ) -> Option<(usize, Option<Phase>)>;
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

/// A clustered problem of COIL20's shape (m×n, c classes): unit-L2 columns around c random
/// centres in [0, 1]^m, noise 0.35, seeded.
pub fn clustered_matrix(m: usize, n: usize, c: usize, seed: u64) -> Array2<f64> {
    let centres = random_matrix(m, c, seed);
    let noise = random_matrix(m, n, seed + 1);
    let mut x = Array2::from_shape_fn((m, n), |(i, j)| {
        (centres[[i, j % c]] + 0.35 * noise[[i, j]]).max(0.0)
    });
    crate::engine::data::preprocess::apply(&mut x, crate::engine::data::Preprocess::L2);
    x
}

/// A problem a model is timed on against NMF ([`against_nmf`]).
#[derive(Clone, Copy, Debug)]
pub enum On {
    /// The digits problem of [`Bench::digits`].
    Digits,
    /// The large random problem of [`Bench::random`].
    Random,
    /// The ORL faces (`orl_32x32`, 1024×400), when `../shared/data` has them and the digits
    /// are asked for.
    Orl,
    /// A random 1024×1440 X, when the random problem is asked for.
    Random1440,
}

/// The ORL faces as a problem, or a note that they are absent.
pub fn orl(b: &mut dyn Bench, who: &str) -> Option<Problem> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/orl_32x32");
    match crate::engine::data::load(&dir, &Default::default()) {
        Ok(d) => Some(Problem {
            x: d.x,
            labels: Vec::new(),
            label: "orl_32x32 1024×400".into(),
            iters: b.iters_big(),
        }),
        Err(_) => {
            b.note(format!(
                "{who} [orl_32x32]: skipped (../shared/data/orl_32x32 absent)"
            ));
            None
        }
    }
}

/// A random 1024×1440 problem (seeded), `iters_big` iterations a rep.
pub fn random_1440(b: &dyn Bench, seed: u64) -> Problem {
    Problem {
        x: random_matrix(1024, 1440, seed),
        labels: Vec::new(),
        label: "random 1024×1440".into(),
        iters: b.iters_big(),
    }
}

/// `kind` against NMF ([`against_nmf_on`]) on each of `problems` (with its rank) that the run
/// asks for: what the descriptors of the models timed against NMF declare.
pub fn against_nmf(
    b: &mut dyn Bench,
    kind: ModelKind,
    problems: &[(On, usize)],
) -> Result<(), BenchError> {
    for &(on, k) in problems {
        let p = match on {
            On::Digits => b.digits(),
            On::Random => b.random(),
            On::Orl if b.digits().is_some() => orl(b, kind.name()),
            On::Random1440 if b.random_asked() => Some(random_1440(b, 18)),
            On::Orl | On::Random1440 => None,
        };
        if let Some(p) = p {
            against_nmf_on(b, kind, p, k)?;
        }
    }
    Ok(())
}

/// `kind`'s iteration against NMF's on `p` at rank k (same seed), taking turns rep by rep,
/// each built by the registry with its defaults (3n seeded random triplets when the model needs
/// side information): a case, the ratio to NMF, and a note on the model's start (its build
/// time, graph, links). GFLOP/s counts NMF's two big products (4mnk per iteration).
pub fn against_nmf_on(
    b: &mut dyn Bench,
    kind: ModelKind,
    p: Problem,
    k: usize,
) -> Result<(), BenchError> {
    let (m, n) = p.x.dim();
    let (name, label, iters) = (kind.name(), &p.label, p.iters);
    let data = Arc::new(Dataset::from_parts(p.x, None, vec![], label));
    let side = match kind.needs() {
        SideNeed::Triplets | SideNeed::Links => {
            SideInfo::with_triplets(random_triplets(n, 3 * n, 17))
        }
        _ => SideInfo::default(),
    };
    let start = Instant::now();
    let mut model = build(&ModelSpec::new(kind, k, 0), Arc::clone(&data), &side)?;
    let build_s = start.elapsed().as_secs_f64();
    // NMF through the registry, as any model: this module is below the model folders.
    let nmf_kind = ModelKind::from_name("nmf").ok_or("NMF is not registered")?;
    let mut nmf = build(&ModelSpec::new(nmf_kind, k, 0), data, &SideInfo::default())?;
    let times = b.interleaved(2, iters, &mut |case| {
        for _ in 0..iters {
            let _ = if case == 0 { model.step() } else { nmf.step() };
        }
    });
    b.ratio(
        &format!("{name} iteration / nmf iteration [{label}]"),
        &times[0],
        &times[1],
    );
    let flops = Some(4.0 * (m * n * k) as f64);
    b.case(
        &format!("{name}_iteration defaults [{label}, k={k}]"),
        "iteration",
        &times[0],
        flops,
    );
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
    b.note(note);
    Ok(())
}
