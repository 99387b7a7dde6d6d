//! `sweep` through its Rust API (`cli::sweep::run_sweep`): determinism by seed, `--resume`
//! after an interruption, and the argument errors. The API is called directly rather than the
//! binary because the binary in the shared target directory may be rebuilt concurrently.
#![expect(clippy::expect_used, reason = "test helpers fail loudly")]

use clap::Parser;
use nmf_playground::cli::sweep::{COLUMNS, Progress, SweepArgs, SweepSummary, run_sweep};
use nmf_playground::cli::{Cli, CliError, Command};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Sweep arguments as the command line would parse them: the small blobs sweep, with the
/// options in `extra` (`--name value` or a bare `--flag`) replacing or adding to the defaults.
fn args(out: &Path, extra: &[&str]) -> SweepArgs {
    let out = out.to_str().expect("utf-8 temp path");
    let mut opts: Vec<(&str, Option<&str>)> = vec![
        ("--data", Some("sample:blobs")),
        ("--models", Some("nmf,rpnmf")),
        ("--grid", Some("alpha=0.01,0.1")),
        ("--repeats", Some("2")),
        ("--kmeans-repeats", Some("3")),
        ("--max-iter", Some("30")),
        ("--jobs", Some("2")),
        ("--out", Some(out)),
    ];
    let mut i = 0;
    while i < extra.len() {
        let name = extra[i];
        let value = extra.get(i + 1).filter(|v| !v.starts_with("--")).copied();
        i += if value.is_some() { 2 } else { 1 };
        match opts.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => opts.push((name, value)),
        }
    }
    let mut argv = vec!["nmf-playground", "sweep"];
    for (n, v) in opts {
        argv.push(n);
        argv.extend(v);
    }
    match Cli::try_parse_from(argv).expect("arguments parse").command {
        Some(Command::Sweep(a)) => a,
        other => panic!("not a sweep: {other:?}"),
    }
}

fn sweep(a: &SweepArgs) -> (Result<SweepSummary, CliError>, usize) {
    let calls = AtomicUsize::new(0);
    let r = run_sweep(a, &|_: &Progress| {
        calls.fetch_add(1, Ordering::SeqCst);
    });
    (r, calls.into_inner())
}

/// The rows of runs.csv without the timing column, as a set of lines.
fn rows_without_seconds(dir: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(dir.join("runs.csv")).expect("read runs.csv");
    let secs = COLUMNS
        .iter()
        .position(|c| *c == "seconds")
        .expect("seconds column");
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some(COLUMNS.join(",").as_str()),
        "header once"
    );
    lines
        .map(|l| {
            let mut f: Vec<&str> = l.split(',').collect();
            f.remove(secs);
            f.join(",")
        })
        .collect()
}

/// The summary with the timing metric removed (it is the only value that may differ).
fn without_seconds(s: &SweepSummary) -> SweepSummary {
    let mut s = s.clone();
    for c in &mut s.cells {
        c.metrics.remove("seconds");
    }
    s.markdown = String::new();
    s.executed = 0;
    s.skipped = 0;
    s
}

#[test]
fn same_seeds_give_the_same_summary_and_rows() {
    let (d1, d2) = (
        tempfile::tempdir().expect("tmp"),
        tempfile::tempdir().expect("tmp"),
    );
    let (s1, calls) = sweep(&args(d1.path(), &[]));
    let s1 = s1.expect("first sweep");
    let s2 = sweep(&args(d2.path(), &["--jobs", "1"]))
        .0
        .expect("second sweep");
    // nmf: 1 cell, rpnmf: 2 cells (alpha), 2 repeats each.
    assert_eq!(s1.cells.len(), 3);
    assert_eq!(s1.executed, 6);
    assert_eq!(calls, 6);
    assert!(s1.cells.iter().all(|c| c.runs == 2 && c.failed == 0));
    assert_eq!(s1.cells[0].params, "");
    assert_eq!(s1.cells[1].params, "alpha=0.01");
    assert_eq!(s1.cells[2].params, "alpha=0.1");
    assert_eq!(
        s1.cells.iter().filter(|c| c.best).count(),
        2,
        "one best per model"
    );
    assert!(s1.cells.iter().all(|c| c.metrics.contains_key("acc")));
    assert!(s1.cells[1].metrics.contains_key("triplets_kept_h"));
    // NMF gets the same triplets scored (kept-share comparable across models).
    assert!(s1.cells[0].metrics.contains_key("triplets_kept_h"));
    assert_eq!(without_seconds(&s1), without_seconds(&s2));
    assert_eq!(
        rows_without_seconds(d1.path()),
        rows_without_seconds(d2.path())
    );
    for f in ["runs.csv", "sweep.json", "summary.md", "summary.json"] {
        assert!(d1.path().join(f).is_file(), "{f} written");
    }
    let md = std::fs::read_to_string(d1.path().join("summary.md")).expect("summary.md");
    assert!(md.contains("| model | params | runs |") && md.contains('★'));
}

#[test]
fn resume_completes_an_interrupted_sweep() {
    let full = tempfile::tempdir().expect("tmp");
    sweep(&args(full.path(), &[])).0.expect("full sweep");

    let cut = tempfile::tempdir().expect("tmp");
    sweep(&args(cut.path(), &[])).0.expect("sweep to interrupt");
    // Keep the header and two rows, plus half a row as an interrupted write leaves it.
    let csv = cut.path().join("runs.csv");
    let text = std::fs::read_to_string(&csv).expect("read");
    let lines: Vec<&str> = text.lines().collect();
    let kept = format!(
        "{}\n{}\n{}\n{}",
        lines[0],
        lines[1],
        lines[2],
        &lines[3][..10]
    );
    std::fs::write(&csv, kept).expect("truncate");

    let (resumed, calls) = sweep(&args(cut.path(), &["--resume"]));
    let resumed = resumed.expect("resumed sweep");
    assert_eq!(resumed.skipped, 2);
    assert_eq!(resumed.executed, 4, "only the missing runs execute");
    assert_eq!(calls, 4);
    assert_eq!(
        rows_without_seconds(cut.path()),
        rows_without_seconds(full.path())
    );
    let again = sweep(&args(full.path(), &["--resume"]))
        .0
        .expect("nothing left");
    assert_eq!((again.executed, again.skipped), (0, 6));
    assert_eq!(without_seconds(&resumed), without_seconds(&again));
}

#[test]
fn resume_with_different_arguments_is_refused() {
    let d = tempfile::tempdir().expect("tmp");
    sweep(&args(d.path(), &["--repeats", "1"]))
        .0
        .expect("sweep");
    let err = sweep(&args(
        d.path(),
        &["--repeats", "1", "--resume", "--max-iter", "31"],
    ))
    .0
    .expect_err("different max_iter");
    assert!(matches!(err, CliError::BadInput(_)));
    assert!(err.to_string().contains("max_iter"), "{err}");
    let err = sweep(&args(
        d.path(),
        &["--repeats", "1", "--resume", "--preprocess", "max"],
    ))
    .0
    .expect_err("different preprocessing");
    assert!(err.to_string().contains("preprocess"), "{err}");
    // Without --resume an existing sweep is not overwritten.
    let err = sweep(&args(d.path(), &["--repeats", "1"]))
        .0
        .expect_err("existing runs.csv");
    assert!(err.to_string().contains("--resume"), "{err}");
}

#[test]
fn a_grid_parameter_no_model_has_is_an_error() {
    let d = tempfile::tempdir().expect("tmp");
    let err = sweep(&args(d.path(), &["--grid", "beta=1,2"]))
        .0
        .expect_err("unknown parameter");
    assert!(matches!(err, CliError::BadInput(_)));
    assert!(err.to_string().contains("beta"), "{err}");
    assert!(!d.path().join("runs.csv").exists(), "nothing written");
    // An unknown model is refused by the argument parser, naming the registered ones.
    let err = Cli::try_parse_from([
        "nmf-playground",
        "sweep",
        "--data",
        "x",
        "--models",
        "nmf,bogus",
    ])
    .expect_err("unknown model")
    .to_string();
    let available = format!(
        "unknown model `bogus` (available: {})",
        nmf_playground::engine::models::ModelKind::names()
    );
    assert!(err.contains(&available), "{err}");
    for name in [
        "nmf", "gnmf", "rnmf", "nmfcc", "tste", "rmnmf", "fnmf", "psmf", "can", "rpnmf",
    ] {
        assert!(available.contains(name), "{name}: {available}");
    }
}

#[test]
fn classification_protocol_scores_a_held_out_split() {
    let d = tempfile::tempdir().expect("tmp");
    let s = sweep(&args(
        d.path(),
        &["--protocol", "classification", "--repeats", "1"],
    ))
    .0
    .expect("classification sweep");
    for c in &s.cells {
        let acc = c.metrics["accuracy"].mean;
        assert!((0.0..=1.0).contains(&acc), "{acc}");
        assert!(c.metrics.contains_key("macro_f1"));
    }
    assert!(s.markdown.contains("test acc"));
}

/// `--reveal P` hands a stratified share of the true labels to the models that use labels
/// (NMFCC's links), drawn per repeat; a model that uses none gets none; runs.csv says how many.
#[test]
fn reveal_gives_labels_to_the_models_that_use_them() {
    let d = tempfile::tempdir().expect("tmp");
    let a = args(
        d.path(),
        &[
            "--models",
            "nmf,nmfcc",
            "--grid",
            "alpha=1",
            "--reveal",
            "0.2",
        ],
    );
    let (res, _) = sweep(&a);
    res.expect("sweep");
    let text = std::fs::read_to_string(d.path().join("runs.csv")).expect("runs.csv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let (model, known, error) = (col("model"), col("known_labels"), col("error"));
    let mut seen = 0;
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f[error], "", "{line}");
        let want_some = f[model] == "nmfcc";
        let k: usize = f[known].parse().expect("count");
        assert_eq!(k > 0, want_some, "{line}");
        seen += 1;
    }
    assert_eq!(seen, 4);
}

/// With z-scores (`standardize`, for 2-STGINMF) NMF's baseline cannot be fitted: the model and
/// the SVM on X are still scored, the SVM on NMF's H is absent, and each row says why (every
/// run used to fail on the baseline).
#[test]
fn the_semi_protocol_on_z_scores_scores_the_model_without_the_nmf_baseline() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("semi_z");
    let a = args(
        &out,
        &[
            "--models",
            "stginmf",
            "--grid",
            "rounds=0",
            "--preprocess",
            "standardize",
            "--protocol",
            "semi",
            "--reveal",
            "0.2",
        ],
    );
    let summary = sweep(&a).0.expect("semi sweep on z-scores runs");
    assert_eq!(summary.cells.len(), 1);
    let cell = &summary.cells[0];
    assert_eq!(cell.runs, 2, "both repeats scored");
    assert!(
        cell.metrics["class_acc"].mean > 0.95,
        "{:?}",
        cell.metrics["class_acc"]
    );
    assert!(cell.metrics.contains_key("svm_x_acc"));
    assert!(!cell.metrics.contains_key("svm_nmf_h_acc"));
    let runs = std::fs::read_to_string(out.join("runs.csv")).expect("runs.csv");
    assert_eq!(
        runs.matches("no NMF baseline for the SVM on H").count(),
        2,
        "{runs}"
    );
}

#[test]
fn the_semi_protocol_makes_one_cell_per_label_share_scored_next_to_the_svms() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("semi");
    let a = args(&out, &["--protocol", "semi", "--reveal", "0.2,0.5"]);
    let (summary, _) = sweep(&a);
    let summary = summary.expect("semi sweep runs");
    // nmf × 2 shares + rpnmf × 2 alphas × 2 shares.
    assert_eq!(summary.cells.len(), 6);
    for cell in &summary.cells {
        let share = if cell.params.contains("reveal=0.2") {
            0.2
        } else {
            assert!(cell.params.contains("reveal=0.5"), "{}", cell.params);
            0.5
        };
        // 200 samples whose class sizes are multiples of 10: a stratified share P gives 200 · P.
        assert_eq!(
            cell.metrics["known_labels"].mean,
            200.0 * share,
            "{}",
            cell.params
        );
        // The blobs are well separated: every classifier is right on the samples not given.
        for m in ["class_acc", "svm_x_acc", "svm_nmf_h_acc", "class_macro_f1"] {
            assert!(
                cell.metrics[m].mean > 0.95,
                "{} {}: {m} = {}",
                cell.model,
                cell.params,
                cell.metrics[m].mean
            );
        }
    }
    let (refused, _) = sweep(&args(&dir.path().join("none"), &["--protocol", "semi"]));
    let e = refused.expect_err("no training set").to_string();
    assert!(
        e.contains("--reveal") && e.contains("--known-labels"),
        "{e}"
    );
}
