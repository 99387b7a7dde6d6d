//! The bad-input corpus (issue 20 point 3): every file under `tests/corpus/` listed in
//! `tests/corpus/manifest.tsv` (written, with the files, by `tests/corpus/make_corpus.py`) is
//! run through its library loader and through the binary, and must be refused:
//!
//! * the library returns an error whose message names the file and holds the table's fragment
//!   (the line/row/column or entry, where there is one) and echoes no more than a short excerpt
//!   of the input;
//! * the binary (under `prlimit --as`, a memory bound) exits with code 2 within a time bound,
//!   prints the same kind of message on stderr, nothing on stdout (`--json` stays parseable),
//!   and never panics.

#![allow(
    clippy::expect_used,
    reason = "test helpers outside #[test] functions: a failed expectation is a failed test"
)]

use nmf_playground::engine::constraints::io::{import_triplets_csv, load_json, read_known_labels};
use nmf_playground::engine::data::{self, Dataset, LoadOptions, Preprocess};
use nmf_playground::engine::files::session::{DataCheck, SessionFile};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Address-space bound for the binary: the debug build with its threads maps a few hundred MiB.
const MEMORY_BOUND: u64 = 1 << 30;
/// Time bound per entry for the binary (debug build, shared machine).
const TIME_BOUND: Duration = Duration::from_secs(10);
/// Longest message accepted: echoed input must be truncated.
const MAX_MESSAGE: usize = 1500;

struct Entry {
    path: PathBuf,
    kind: String,
    fragment: String,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

fn entries() -> Vec<Entry> {
    let dir = corpus_dir();
    let text = std::fs::read_to_string(dir.join("manifest.tsv")).expect("manifest.tsv");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 3, "manifest line {l:?}");
            Entry {
                path: dir.join(f[0]),
                kind: f[1].to_string(),
                fragment: f[2].to_string(),
            }
        })
        .collect()
}

fn base() -> Dataset {
    data::load(&corpus_dir().join("base.csv"), &LoadOptions::default()).expect("base.csv loads")
}

/// Data entries load with an explicit `l2`: negative values are bad input for the
/// nonnegative preprocessings, while `auto` (the default) scales such a table to [0, 1]
/// first (data::preprocess's tests cover that rule).
fn data_options() -> LoadOptions {
    LoadOptions {
        preprocess: Preprocess::L2,
        ..LoadOptions::default()
    }
}

/// The library's message for an entry, or `None` when it was accepted.
fn library_error(e: &Entry, base: &Dataset) -> Option<String> {
    match e.kind.as_str() {
        "data" => data::load(&e.path, &data_options())
            .err()
            .map(|e| e.to_string()),
        "triplets" if e.path.extension().is_some_and(|x| x == "csv") => {
            import_triplets_csv(&e.path, base)
                .err()
                .map(|e| e.to_string())
        }
        "triplets" => load_json(&e.path, &base.fingerprint)
            .err()
            .map(|e| e.to_string()),
        "known" => read_known_labels(&e.path, base)
            .err()
            .map(|e| e.to_string()),
        // As `run --session` reads one: the file, then its constraints against the data it
        // names (every corpus session names base.csv).
        "session" => match SessionFile::read(&e.path) {
            Err(err) => Some(err.to_string()),
            Ok(s) => match s.constraints_for(&e.path, &base.fingerprint) {
                Err(err) => Some(err.to_string()),
                Ok((_, DataCheck::Changed(why))) => Some(format!(
                    "{}: the data changed since the session was saved: {why}",
                    e.path.display()
                )),
                Ok((_, DataCheck::Same)) => None,
            },
        },
        other => panic!("unknown corpus kind {other:?}"),
    }
}

fn binary_args(e: &Entry) -> Vec<String> {
    let base = corpus_dir().join("base.csv").display().to_string();
    let p = e.path.display().to_string();
    let mut a: Vec<String> = vec![
        "run".into(),
        "--json".into(),
        "--max-iter".into(),
        "3".into(),
    ];
    a.extend(["--kmeans-repeats".into(), "1".into()]);
    match e.kind.as_str() {
        "data" => a.extend(["--data".into(), p, "--preprocess".into(), "l2".into()]),
        "triplets" => a.extend(["--data".into(), base, "--triplets".into(), p]),
        "session" => a.extend(["--session".into(), p]),
        _ => a.extend(["--data".into(), base, "--known-labels".into(), p]),
    }
    a
}

/// Checks shared by both front ends; returns the problems found.
fn check_message(e: &Entry, msg: &str, who: &str) -> Vec<String> {
    let mut bad = Vec::new();
    let name = e
        .path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !msg.contains(&name) {
        bad.push(format!("{who}: message does not name {name}: {msg}"));
    }
    if !msg.contains(&e.fragment) {
        bad.push(format!("{who}: message lacks {:?}: {msg}", e.fragment));
    }
    if msg.chars().count() > MAX_MESSAGE {
        bad.push(format!(
            "{who}: message of {} chars (input echoed whole?)",
            msg.chars().count()
        ));
    }
    if msg.contains("panicked") {
        bad.push(format!("{who}: panicked: {msg}"));
    }
    bad
}

fn run_binary(e: &Entry) -> Vec<String> {
    let who = "binary";
    let start = Instant::now();
    let out = Command::new("prlimit")
        .arg(format!("--as={MEMORY_BOUND}"))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_nmf-playground"))
        .args(binary_args(e))
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .expect("prlimit runs");
    let took = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let mut bad = check_message(e, stderr.trim(), who);
    if out.status.code() != Some(2) {
        bad.push(format!("{who}: exit {:?}, not 2: {stderr}", out.status));
    }
    if !out.stdout.is_empty() {
        bad.push(format!(
            "{who}: wrote to stdout: {}",
            String::from_utf8_lossy(&out.stdout)
        ));
    }
    if took > TIME_BOUND {
        bad.push(format!("{who}: took {took:?}"));
    }
    bad
}

#[test]
fn every_corpus_file_is_refused_with_a_message_naming_it() {
    if Command::new("prlimit").arg("--version").output().is_err() {
        eprintln!("skipping: prlimit (util-linux) is not installed");
        return;
    }
    let entries = entries();
    assert!(entries.len() >= 60, "corpus has {} entries", entries.len());
    let base = base();
    let start = Instant::now();
    // Two workers: the binary runs dominate and the machine has two cores.
    let problems: Vec<String> = std::thread::scope(|s| {
        let chunks: Vec<&[Entry]> = entries.chunks(entries.len().div_ceil(2)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                let base = &base;
                s.spawn(move || {
                    let mut out = Vec::new();
                    for e in chunk {
                        let rel = e.path.strip_prefix(corpus_dir()).unwrap_or(&e.path);
                        let mut bad = match library_error(e, base) {
                            Some(msg) => check_message(e, &msg, "library"),
                            None => vec!["library: accepted".to_string()],
                        };
                        bad.extend(run_binary(e));
                        out.extend(bad.into_iter().map(|b| format!("{}: {b}", rel.display())));
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("worker"))
            .collect()
    });
    eprintln!(
        "{} corpus entries in {:.1} s",
        entries.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// A `.npy` whose data are really there (a sparse file of 320 GB) but whose X would not fit in
/// memory is refused before anything is allocated, with the size.
#[test]
fn a_npy_larger_than_memory_is_refused_with_its_size() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let path = tmp.path().join("big.npy");
    let mut header =
        b"{'descr': '<f8', 'fortran_order': False, 'shape': (200000, 200000), }".to_vec();
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(&header);
    std::fs::write(&path, &bytes).expect("write header");
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("open");
    if file
        .set_len(bytes.len() as u64 + 200_000 * 200_000 * 8)
        .is_err()
    {
        eprintln!("skipping: the temporary file system cannot hold a 320 GB sparse file");
        return;
    }
    let e = data::load(&path, &LoadOptions::default()).expect_err("refused");
    let msg = e.to_string();
    assert!(msg.contains("big.npy"), "{msg}");
    assert!(msg.contains("200000×200000"), "{msg}");
    assert!(msg.contains("would need 298.0 GiB"), "{msg}");
}

/// 2-STGINMF's dense train–train similarity for 100,000 given labels (n_L² entries: tens of
/// GB) is refused at build, before any allocation, with the size, how many samples fit and
/// what to do.
#[test]
fn a_model_with_n_by_n_state_refuses_too_many_samples() {
    use nmf_playground::engine::constraints::SideInfo;
    use nmf_playground::engine::models::{ModelKind, ModelSpec, build};
    let n = 100_000;
    let x = ndarray::Array2::from_shape_fn((2, n), |(r, c)| 1.0 + ((r + c) % 7) as f64);
    let data = std::sync::Arc::new(Dataset::from_parts(x, None, vec![], "test"));
    let kind = ModelKind::from_name("stginmf").expect("2-STGINMF is registered");
    let labels = (0..n).map(|i| Some(i % 2)).collect();
    let err = build(
        &ModelSpec::new(kind, 2, 0),
        data,
        &SideInfo::new(vec![], labels),
    )
    .err()
    .expect("refused");
    let msg = err.to_string();
    assert!(
        msg.contains("2-STGINMF on 100000 samples × 2 features (")
            && msg.contains("the dense train–train similarity"),
        "{msg}"
    );
    assert!(msg.contains("samples fit: use fewer samples"), "{msg}");
}

/// Ten 4096×4096 images (headers only: decoding never starts) would make X 1.25 GiB; under a
/// 1 GiB address-space limit the binary refuses before decoding, naming the folder and the size.
#[test]
fn an_image_folder_larger_than_memory_is_refused_before_decoding() {
    if Command::new("prlimit").arg("--version").output().is_err() {
        eprintln!("skipping: prlimit (util-linux) is not installed");
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("big_images");
    std::fs::create_dir(&dir).expect("folder");
    let png = std::fs::read(corpus_dir().join("img/many_pixels/a.png")).expect("corpus PNG");
    for i in 0..10 {
        std::fs::write(dir.join(format!("{i}.png")), &png).expect("write");
    }
    let out = Command::new("prlimit")
        .arg(format!("--as={MEMORY_BOUND}"))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_nmf-playground"))
        .args(["run", "--json", "--data"])
        .arg(&dir)
        .output()
        .expect("prlimit runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("big_images"), "{stderr}");
    assert!(
        stderr.contains("10 images of 4096×4096 pixels as f64 would need 1.2 GiB"),
        "{stderr}"
    );
    assert!(stderr.contains("--resize"), "{stderr}");
}

/// The binary under a memory budget of `limit` bytes (`NMF_PLAYGROUND_MEMORY_LIMIT`).
fn run_with_limit(limit: u64, args: &[&str], data: &Path) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nmf-playground"))
        .env(
            nmf_playground::engine::machine::limits::LIMIT_ENV,
            limit.to_string(),
        )
        .args(["run", "--json", "--max-iter", "3", "--kmeans-repeats", "1"])
        .arg("--data")
        .arg(data)
        .args(args)
        .output()
        .expect("run the binary");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A CSV whose X would not fit is refused before its cells are allocated, with the size and
/// what to do; under a budget it fits, the same file loads.
#[test]
fn a_csv_larger_than_the_memory_budget_is_refused_before_allocating() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let path = tmp.path().join("wide.csv");
    // 2000 rows × 10 features: 312.5 KiB while loading (two f64 copies).
    let mut text = String::new();
    for i in 0..2000 {
        let row: Vec<String> = (0..10).map(|j| format!("{}", 1 + (i + j) % 7)).collect();
        text.push_str(&row.join(","));
        text.push('\n');
    }
    std::fs::write(&path, text).expect("write");
    let (code, stderr) = run_with_limit(100_000, &["--model", "nmf"], &path);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("wide.csv")
            && stderr.contains("X of about 2000 samples (estimated from the file size) × 10")
            && stderr.contains("would need 312.5 KiB")
            && stderr.contains("use fewer samples or features"),
        "{stderr}"
    );
    let (code, stderr) = run_with_limit(100 << 20, &["--model", "nmf", "--k", "2"], &path);
    assert_eq!(code, Some(0), "{stderr}");
}

/// Models whose intermediates (dense n×n state, the p-NN search) exceed the budget are
/// refused at build, exit 2, naming the data, the model and the size; NMF, which has none,
/// runs under the same budget.
#[test]
fn models_whose_intermediates_exceed_the_budget_are_refused_at_build() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let path = tmp.path().join("four_hundred.csv");
    let mut text = String::from("a,b,c,label\n");
    for i in 0..400 {
        text.push_str(&format!(
            "{},{},{},{}\n",
            1 + i % 5,
            2 + i % 3,
            1 + i % 7,
            i % 2
        ));
    }
    std::fs::write(&path, text).expect("write");
    // 2 MB: X (9.6 kB) loads; CAN's and GNMF's p-NN search blocks (~6 MiB) do not fit.
    let limit = 2_000_000;
    for (model, part) in [
        ("can", "CAN on 400 samples × 3 features (the p-NN search"),
        ("gnmf", "GNMF on 400 samples × 3 features (the p-NN graph"),
    ] {
        let (code, stderr) = run_with_limit(limit, &["--model", model, "--k", "2"], &path);
        assert_eq!(code, Some(2), "{model}: {stderr}");
        assert!(
            stderr.contains("four_hundred.csv")
                && stderr.contains(part)
                && stderr.contains(
                    "use fewer samples, or a model without a graph or n×n state such as NMF"
                ),
            "{model}: {stderr}"
        );
    }
    let (code, stderr) = run_with_limit(limit, &["--model", "nmf", "--k", "2"], &path);
    assert_eq!(code, Some(0), "nmf: {stderr}");
}
