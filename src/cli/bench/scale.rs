//! `bench --scale`: every registered model's default fit on a synthetic clustered problem of
//! 784 features at n = 10,000 and 50,000 (docs/performance.md, "Every model at scale").
//!
//! Each (model, n) runs in a child process of this binary (`bench --scale-child MODEL
//! --scale-n N`), so that its peak resident memory (`VmHWM` of `/proc/self/status`) is its own
//! and not the largest of everything before it. The child makes the data in code (seeded:
//! [`super::clustered_matrix`], 10 classes), the side information a model needs as `run`
//! makes it (the protocol's triplets from the labels for t-STE, RPNMF and NMFCC, a
//! stratified 10 % of the labels for 2-STGINMF), builds the model with its defaults and
//! k = 10 (the registry's footprint check may refuse it), fits it with the default options
//! and prints one JSON line. The parent prints the table.

use crate::engine::constraints::SideInfo;
use crate::engine::constraints::generate::{
    ProtocolOptions, generate_triplets, labels_from_truth, reveal_stratified,
};
use crate::engine::data::Dataset;
use crate::engine::jobs::experiment::{FitOptions, fit};
use crate::engine::linalg::{ThreadsGuard, available_threads};
use crate::engine::models::{ModelKind, ModelSpec, SideNeed};
use anyhow::anyhow;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Features of the scale problem (MNIST's 28 × 28).
pub const FEATURES: usize = 784;
/// Classes and rank.
pub const CLASSES: usize = 10;
/// Sample counts measured by default.
pub const SIZES: [usize; 2] = [10_000, 50_000];
/// A child still running after this long is stopped and reported as too slow.
pub const CHILD_TIMEOUT: Duration = Duration::from_secs(600);

/// What one child measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScaleResult {
    pub model: String,
    pub n: usize,
    /// Seconds to make the side information (triplets, revealed labels); not part of the fit.
    pub setup_s: f64,
    /// Seconds of build + fit (everything the model does).
    pub fit_s: f64,
    pub iterations: usize,
    /// Peak resident memory of the child process, bytes.
    pub peak_bytes: u64,
    /// "converged", "max_iter", a refusal or an error.
    pub outcome: String,
    /// The model's notes after the fit.
    #[serde(default)]
    pub notes: Vec<String>,
}

fn vm_hwm() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmHWM:"))?.to_owned();
            line["VmHWM:".len()..]
                .split_whitespace()
                .next()?
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kib| kib * 1024)
}

/// The child: one model at one size; prints a [`ScaleResult`] as one JSON line.
pub fn child(model: &str, n: usize) -> anyhow::Result<()> {
    let kind = ModelKind::from_name(model).ok_or_else(|| anyhow!("unknown model {model}"))?;
    // One fit on every core, as the app and `run` fit (the bits do not depend on it).
    let _threads = ThreadsGuard::new(available_threads());
    let x = crate::engine::models::bench::clustered_matrix(FEATURES, n, CLASSES, 33);
    let truth: Vec<usize> = (0..n).map(|j| j % CLASSES).collect();
    let start = Instant::now();
    let side = match kind.descriptor().needs {
        SideNeed::Triplets | SideNeed::Links => {
            let g = generate_triplets(
                x.view(),
                &labels_from_truth(&truth),
                &ProtocolOptions::default(),
                &[],
            )?;
            SideInfo::with_triplets(g.triplets)
        }
        SideNeed::PartialLabels => SideInfo::new(Vec::new(), reveal_stratified(&truth, 0.1, 0)?),
        SideNeed::None | SideNeed::KnnGraph => SideInfo::default(),
    };
    let setup_s = start.elapsed().as_secs_f64();
    let data = Arc::new(Dataset::from_parts(x, None, vec![], "scale"));
    let start = Instant::now();
    let spec = ModelSpec::new(kind, CLASSES, 0);
    let (iterations, outcome, notes) = match crate::engine::models::build(&spec, data, &side) {
        Err(e) => (0, format!("refused: {e}"), Vec::new()),
        Ok(mut m) => match fit(m.as_mut(), &FitOptions::default(), |_, _, _| {
            std::ops::ControlFlow::Continue(())
        }) {
            Ok(out) => (
                out.record.iterations(),
                format!("{:?}", out.stop).to_lowercase(),
                out.notes,
            ),
            Err(e) => (
                e.record.iterations(),
                format!("error: {}", e.error),
                m.notes(),
            ),
        },
    };
    let r = ScaleResult {
        model: kind.name().to_owned(),
        n,
        setup_s,
        fit_s: start.elapsed().as_secs_f64(),
        iterations,
        peak_bytes: vm_hwm(),
        outcome,
        notes,
    };
    println!("{}", serde_json::to_string(&r)?);
    Ok(())
}

/// Run one child and read its line; a child that fails or times out gives a row saying so.
fn spawn(model: &str, n: usize) -> ScaleResult {
    let failed = |why: String| ScaleResult {
        model: model.to_owned(),
        n,
        setup_s: 0.0,
        fit_s: 0.0,
        iterations: 0,
        peak_bytes: 0,
        outcome: why,
        notes: Vec::new(),
    };
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return failed(format!("error: no executable path ({e})")),
    };
    let mut child = match Command::new(exe)
        .args(["bench", "--scale-child", model, "--scale-n", &n.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return failed(format!("error: could not start the child ({e})")),
    };
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > CHILD_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return failed(format!("stopped after {} s", CHILD_TIMEOUT.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(200)),
            Err(e) => return failed(format!("error: {e}")),
        }
    }
    let mut out = String::new();
    if let Some(mut s) = child.stdout.take() {
        let _ = s.read_to_string(&mut out);
    }
    out.lines()
        .rev()
        .find_map(|l| serde_json::from_str::<ScaleResult>(l).ok())
        .unwrap_or_else(|| failed("error: the child printed no result (crashed?)".into()))
}

/// The parent: every model (or those named) at each size, one child each; prints the table.
pub fn run(models: &[String], sizes: &[usize], json: bool) -> anyhow::Result<Vec<ScaleResult>> {
    let names: Vec<String> = if models.is_empty() {
        ModelKind::all().map(|k| k.name().to_owned()).collect()
    } else {
        models.to_vec()
    };
    let mut rows = Vec::new();
    for &n in sizes {
        for name in &names {
            let r = spawn(name, n);
            if !json {
                crate::say!("{}", row(&r));
            }
            rows.push(r);
        }
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        println!("| model | n | fit s | iterations | peak MB | setup s | outcome |");
        println!("|---|---|---|---|---|---|---|");
        for r in &rows {
            println!("{}", row(r));
        }
        for r in &rows {
            for note in &r.notes {
                println!("note: {} n={}: {note}", r.model, r.n);
            }
        }
    }
    Ok(rows)
}

fn row(r: &ScaleResult) -> String {
    format!(
        "| {} | {} | {:.1} | {} | {:.0} | {:.1} | {} |",
        r.model,
        r.n,
        r.fit_s,
        r.iterations,
        r.peak_bytes as f64 / 1e6,
        r.setup_s,
        r.outcome
    )
}
