//! `sweep --shard i/N` + `sweep merge` against the unsharded sweep, and `--grid k=...`'s
//! k selection (clusterings.csv, k_selection.csv, the cophenetic correlation per rank).
#![expect(clippy::expect_used, reason = "test helpers fail loudly")]

use clap::Parser;
use nmf_playground::cli::sweep::{MergeArgs, Progress, SweepArgs, merge, run_sweep};
use nmf_playground::cli::{Cli, Command, normalize_args};
use std::path::Path;

fn parse(argv: &[&str]) -> SweepArgs {
    let mut full = vec!["nmf-playground", "sweep"];
    full.extend_from_slice(argv);
    match Cli::try_parse_from(full).expect("arguments parse").command {
        Some(Command::Sweep(a)) => a,
        other => panic!("not a sweep: {other:?}"),
    }
}

/// `sweep merge DIRS... --out OUT` as the binary parses it.
fn parse_merge(dirs: &[std::path::PathBuf], out: &Path) -> MergeArgs {
    let mut argv: Vec<String> = vec!["nmf-playground".into(), "sweep".into(), "merge".into()];
    argv.extend(dirs.iter().map(|d| d.display().to_string()));
    argv.extend(["--out".to_owned(), out.display().to_string()]);
    match Cli::try_parse_from(normalize_args(argv))
        .expect("merge parses")
        .command
    {
        Some(Command::SweepMerge(m)) => m,
        other => panic!("not a merge: {other:?}"),
    }
}

/// A small blobs sweep with two ranks into `out`, plus `extra` options.
fn args(out: &Path, extra: &[&str]) -> SweepArgs {
    let out = out.to_str().expect("utf-8 temp path");
    let mut argv = vec![
        "--data",
        "sample:blobs",
        "--models",
        "nmf,rpnmf",
        "--grid",
        "alpha=0.01,0.1",
        "--grid",
        "k=2,3",
        "--repeats",
        "3",
        "--kmeans-repeats",
        "2",
        "--max-iter",
        "20",
        "--jobs",
        "2",
        "--out",
        out,
    ];
    // `extra` replaces a default option of the same name or adds to them.
    for pair in extra.chunks(2) {
        match argv
            .iter()
            .position(|a| *a == pair[0] && pair[0] != "--grid")
        {
            Some(i) => argv[i + 1] = pair[1],
            None => argv.extend_from_slice(pair),
        }
    }
    parse(&argv)
}

/// summary.json without its wall-clock values (each cell's `seconds` metric and the markdown
/// table, which shows it).
fn summary_without_timing(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("summary.json")).expect("summary.json");
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("json");
    let s = v.get_mut("summary").expect("summary");
    s.as_object_mut().expect("object").remove("markdown");
    for c in s
        .get_mut("cells")
        .and_then(|c| c.as_array_mut())
        .expect("cells")
    {
        c.get_mut("metrics")
            .and_then(|m| m.as_object_mut())
            .expect("metrics")
            .remove("seconds");
    }
    v
}

#[test]
fn three_shards_merged_equal_the_unsharded_sweep() {
    let root = tempfile::tempdir().expect("tmp");
    let full = root.path().join("full");
    let no_progress = |_: &Progress| {};
    let whole = run_sweep(&args(&full, &[]), &no_progress).expect("unsharded sweep");
    // nmf: 2 ranks; rpnmf: 2 alphas × 2 ranks; 3 repeats each.
    assert_eq!(whole.cells.len(), 6);
    assert_eq!(whole.executed, 18);
    let mut dirs = Vec::new();
    let mut executed = 0;
    for i in 1..=3 {
        let dir = root.path().join(format!("shard{i}"));
        let shard = format!("{i}/3");
        let s = run_sweep(&args(&dir, &["--shard", &shard]), &no_progress).expect("shard");
        executed += s.executed;
        assert_eq!(s.executed, 6, "shard {shard} runs a third of the plan");
        dirs.push(dir);
    }
    assert_eq!(executed, 18, "the shards cover the plan without overlap");
    let merged_dir = root.path().join("merged");
    let merged = merge(&parse_merge(&dirs, &merged_dir)).expect("merge");
    assert_eq!(merged.executed, 18);
    assert_eq!(
        summary_without_timing(&merged_dir),
        summary_without_timing(&full)
    );
    assert_eq!(merged.k_selection, whole.k_selection);
    assert_eq!(
        std::fs::read_to_string(merged_dir.join("k_selection.csv")).expect("merged csv"),
        std::fs::read_to_string(full.join("k_selection.csv")).expect("full csv"),
    );
    // A missing shard is refused.
    let err =
        merge(&parse_merge(&dirs[..2], &root.path().join("bad"))).expect_err("two of three shards");
    assert!(format!("{err}").contains("3/3 missing"), "{err}");
}

#[test]
fn k_grid_reports_error_scores_and_cophenetic_per_rank() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = dir.path().to_str().expect("utf-8");
    let a = parse(&[
        "--data",
        "sample:blobs",
        "--models",
        "nmf",
        "--grid",
        "k=2,3",
        "--repeats",
        "4",
        "--kmeans-repeats",
        "2",
        "--max-iter",
        "20",
        "--out",
        out,
    ]);
    let s = run_sweep(&a, &|_: &Progress| {}).expect("sweep");
    assert_eq!(s.k_selection.len(), 2);
    assert_eq!(
        s.k_selection.iter().map(|r| r.k).collect::<Vec<_>>(),
        vec![2, 3]
    );
    for r in &s.k_selection {
        assert_eq!(r.runs, 4);
        assert_eq!(r.params, "");
        let c = r.cophenetic.expect("cophenetic with 4 repeats");
        assert!((-1.0..=1.0).contains(&c), "{c}");
        let e = r.recon_error.expect("NMF has a W").mean;
        assert!(e > 0.0 && e < 1.0, "relative error {e}");
        assert!(r.acc.is_some());
    }
    // A larger rank fits at least as well on average (nested models, same seeds).
    let (e2, e3) = (
        s.k_selection[0].recon_error.expect("k=2").mean,
        s.k_selection[1].recon_error.expect("k=3").mean,
    );
    assert!(e3 <= e2 + 1e-9, "k=3 error {e3} > k=2 error {e2}");
    let runs = std::fs::read_to_string(dir.path().join("clusterings.csv")).expect("csv");
    let lines: Vec<&str> = runs.lines().collect();
    assert_eq!(lines[0], "model,params,repeat,seed,k,recon_error,labels");
    assert_eq!(lines.len(), 1 + 8, "one labelling per run");
    let ksel = std::fs::read_to_string(dir.path().join("k_selection.csv")).expect("k csv");
    assert_eq!(ksel.lines().count(), 3);
    assert!(s.markdown.contains("cophenetic"));
    // The cells' params name the rank.
    assert_eq!(s.cells[0].params, "k=2");
}
