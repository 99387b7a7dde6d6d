//! Seeded mutation fuzzing of every parser on stable Rust (issue 20 point 4).
//!
//! Seeds are the bad-input corpus (`tests/corpus/`, see `make_corpus.py`) and the valid files
//! in `tests/corpus/valid/`. A small mutator of our own (bit flips, interesting bytes and
//! 32-bit words, inserted/deleted/duplicated ranges, truncation, splicing two seeds, number
//! tweaks in text) makes each case from a seeded ChaCha8 stream, so a failing case is
//! reproduced by its parser, seed and case number. Each case is written to a temporary file
//! and loaded through the library; it must not panic, an error must name the file, the load
//! must not take more than [`CASE_TIME`], and the peak of live heap bytes during the load
//! (a counting global allocator) must stay under [`PEAK_BOUND`].
//!
//! `cargo test --test fuzz` runs a short pass (about 0.3 s per parser). The long pass:
//! `FUZZ_SECS=600 [FUZZ_PARSER=csv] cargo test --test fuzz -- --ignored --nocapture` (seconds
//! per parser), printing the number of cases per parser.

#![allow(
    clippy::expect_used,
    reason = "test helpers outside #[test] functions: a failed expectation is a failed test"
)]

use nmf_playground::engine::constraints::io::{import_triplets_csv, load_json, read_known_labels};
use nmf_playground::engine::data::{self, Dataset, LoadOptions};
use nmf_playground::engine::files::session::SessionFile;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Live and peak heap bytes of the whole test binary.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: defers every call to the system allocator unchanged; only counts bytes.
#[expect(
    unsafe_code,
    reason = "a counting global allocator needs the unsafe GlobalAlloc impl"
)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let now = LIVE.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size
                    - layout.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Largest heap growth one case may cause: an image at the side limit decoded as 16-bit RGBA
/// (4096² × 8 bytes) plus its X, with room.
const PEAK_BOUND: usize = 640 << 20;
/// Longest one case may take (debug build, shared machine).
const CASE_TIME: Duration = Duration::from_secs(5);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Parser {
    Csv,
    Image,
    Npy,
    Mat,
    ConstraintsJson,
    ConstraintsCsv,
    KnownLabels,
    Session,
}

const PARSERS: [Parser; 8] = [
    Parser::Csv,
    Parser::Image,
    Parser::Npy,
    Parser::Mat,
    Parser::ConstraintsJson,
    Parser::ConstraintsCsv,
    Parser::KnownLabels,
    Parser::Session,
];

impl Parser {
    fn name(self) -> &'static str {
        match self {
            Parser::Csv => "csv",
            Parser::Image => "image",
            Parser::Npy => "npy",
            Parser::Mat => "mat",
            Parser::ConstraintsJson => "constraints-json",
            Parser::ConstraintsCsv => "constraints-csv",
            Parser::KnownLabels => "known-labels",
            Parser::Session => "session",
        }
    }

    /// Whether a corpus file is a seed of this parser.
    fn takes(self, rel: &str) -> bool {
        let ext = Path::new(rel)
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("");
        match self {
            Parser::Csv => {
                (rel.starts_with("csv/") || rel.starts_with("valid/")) && ext == "csv"
                    || rel == "base.csv"
            }
            Parser::Image => ["png", "pgm", "jpg", "gif", "bmp"].contains(&ext),
            Parser::Npy => ext == "npy",
            Parser::Mat => ext == "mat",
            Parser::ConstraintsJson => ext == "json" && !rel.starts_with("sessions/"),
            Parser::ConstraintsCsv => {
                (rel.starts_with("constraints/") || rel == "valid/triplets.csv") && ext == "csv"
            }
            Parser::KnownLabels => rel.starts_with("known/") || rel == "valid/known.txt",
            Parser::Session => rel.starts_with("sessions/"),
        }
    }

    /// Where a case is written in the case folder (images go into a one-image folder).
    fn case_path(self, dir: &Path, seed_rel: &str) -> PathBuf {
        let ext = Path::new(seed_rel)
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("bin");
        match self {
            Parser::Image => dir.join("images").join(format!("case.{ext}")),
            Parser::Csv => dir.join("case.csv"),
            Parser::Npy => dir.join("case.npy"),
            Parser::Mat => dir.join("case.mat"),
            Parser::ConstraintsJson => dir.join("case.json"),
            Parser::ConstraintsCsv => dir.join("case_triplets.csv"),
            Parser::KnownLabels => dir.join("case_known.txt"),
            Parser::Session => dir.join("case_session.json"),
        }
    }

    /// Load `path` with the parser; `Err` holds the message.
    fn load(self, path: &Path, base: &Dataset) -> Result<(), String> {
        let s = |e: &dyn std::fmt::Display| e.to_string();
        match self {
            Parser::Image => {
                let dir = path.parent().expect("case folder");
                data::load(dir, &LoadOptions::default())
                    .map(drop)
                    .map_err(|e| s(&e))
            }
            Parser::Csv | Parser::Npy | Parser::Mat => data::load(path, &LoadOptions::default())
                .map(drop)
                .map_err(|e| s(&e)),
            Parser::ConstraintsJson => load_json(path, &base.fingerprint)
                .map(drop)
                .map_err(|e| s(&e)),
            Parser::ConstraintsCsv => import_triplets_csv(path, base).map(drop).map_err(|e| s(&e)),
            Parser::KnownLabels => read_known_labels(path, base).map(drop).map_err(|e| s(&e)),
            // As `run --session` reads one: the file, then its constraints for the data.
            Parser::Session => SessionFile::read(path)
                .and_then(|f| f.constraints_for(path, &base.fingerprint))
                .map(drop)
                .map_err(|e| s(&e)),
        }
    }
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// Every file under the corpus, as (path relative to the corpus, bytes), sorted.
fn corpus_files() -> Vec<(String, Vec<u8>)> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).expect("corpus folder") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                walk(&p, root, out);
            } else {
                let rel = p
                    .strip_prefix(root)
                    .expect("inside")
                    .to_string_lossy()
                    .into_owned();
                out.push((rel, std::fs::read(&p).expect("readable")));
            }
        }
    }
    let mut out = Vec::new();
    walk(&corpus_dir(), &corpus_dir(), &mut out);
    out.sort();
    out
}

/// One mutation of `data`, drawn from `rng`; `other` is a second seed for splicing.
fn mutate(rng: &mut ChaCha8Rng, data: &mut Vec<u8>, other: &[u8]) {
    const BYTES: [u8; 10] = [0, 1, 0x7f, 0x80, 0xff, b'\n', b',', b'"', b'-', b'9'];
    const WORDS: [u32; 8] = [
        0,
        1,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_ffff,
        0xffff,
        8,
        0x1_0000,
    ];
    const NUMBERS: [&str; 10] = [
        "-1",
        "0",
        "1e999",
        "NaN",
        "-0",
        "99999999999999999999",
        "4294967296",
        "",
        "1.5",
        "inf",
    ];
    let len = data.len();
    let at = |rng: &mut ChaCha8Rng| if len == 0 { 0 } else { rng.gen_range(0..len) };
    match rng.gen_range(0..10) {
        0 if len > 0 => {
            let i = at(rng);
            data[i] ^= 1 << rng.gen_range(0..8);
        }
        1 if len > 0 => {
            let i = at(rng);
            data[i] = BYTES[rng.gen_range(0..BYTES.len())];
        }
        2 if len >= 4 => {
            let i = rng.gen_range(0..=len - 4);
            let w = WORDS[rng.gen_range(0..WORDS.len())];
            let b = if rng.gen_bool(0.5) {
                w.to_le_bytes()
            } else {
                w.to_be_bytes()
            };
            data[i..i + 4].copy_from_slice(&b);
        }
        3 => {
            let i = at(rng).min(len);
            let n = rng.gen_range(1..=16);
            let ins: Vec<u8> = (0..n).map(|_| rng.r#gen()).collect();
            data.splice(i..i, ins);
        }
        4 if len > 0 => {
            let i = at(rng);
            let n = rng.gen_range(1..=(len - i).min(64));
            data.drain(i..i + n);
        }
        5 if len > 0 => {
            let cut = at(rng);
            data.truncate(cut);
        }
        6 if len > 0 => {
            let i = at(rng);
            let n = rng.gen_range(1..=(len - i).min(256));
            let chunk = data[i..i + n].to_vec();
            let j = at(rng);
            data.splice(j..j, chunk);
        }
        7 if !other.is_empty() => {
            let i = at(rng).min(len);
            let j = rng.gen_range(0..other.len());
            data.truncate(i);
            data.extend_from_slice(&other[j..]);
        }
        _ => {
            // Replace a run of ASCII digits (or insert at a random place) by a tricky number.
            let num = NUMBERS[rng.gen_range(0..NUMBERS.len())].as_bytes();
            let digits: Vec<usize> = (0..len).filter(|&i| data[i].is_ascii_digit()).collect();
            if digits.is_empty() {
                let i = at(rng).min(len);
                data.splice(i..i, num.iter().copied());
            } else {
                let s = digits[rng.gen_range(0..digits.len())];
                let mut e = s;
                while e < len && data[e].is_ascii_digit() {
                    e += 1;
                }
                data.splice(s..e, num.iter().copied());
            }
        }
    }
}

/// Run `parser` on mutated seeds for `budget`; returns (cases, problems).
fn fuzz(parser: Parser, budget: Duration, seed: u64) -> (u64, Vec<String>) {
    let files = corpus_files();
    let seeds: Vec<&(String, Vec<u8>)> = files.iter().filter(|(r, _)| parser.takes(r)).collect();
    assert!(!seeds.is_empty(), "{}: no seeds", parser.name());
    let base = data::load(&corpus_dir().join("base.csv"), &LoadOptions::default())
        .expect("base.csv loads");
    let tmp = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(tmp.path().join("images")).expect("images folder");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut problems = Vec::new();
    let start = Instant::now();
    let mut cases = 0u64;
    while start.elapsed() < budget && problems.len() < 20 {
        let (rel, bytes) = seeds[rng.gen_range(0..seeds.len())];
        let other = &seeds[rng.gen_range(0..seeds.len())].1;
        let mut data = bytes.clone();
        for _ in 0..rng.gen_range(1..=4) {
            mutate(&mut rng, &mut data, other);
        }
        let path = parser.case_path(tmp.path(), rel);
        std::fs::write(&path, &data).expect("write case");
        let name = path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let before = LIVE.load(Ordering::Relaxed);
        PEAK.store(before, Ordering::Relaxed);
        let t = Instant::now();
        let out =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parser.load(&path, &base)));
        let took = t.elapsed();
        let grew = PEAK.load(Ordering::Relaxed).saturating_sub(before);
        let mut bad = Vec::new();
        match out {
            Err(_) => bad.push("panicked".to_string()),
            Ok(Err(msg)) => {
                let dir_named = parser == Parser::Image && msg.contains("images");
                if !msg.contains(&name) && !dir_named {
                    bad.push(format!("message does not name the file: {msg}"));
                }
                if msg.chars().count() > 2000 {
                    bad.push(format!("message of {} chars", msg.chars().count()));
                }
            }
            Ok(Ok(())) => {}
        }
        if took > CASE_TIME {
            bad.push(format!("took {took:?}"));
        }
        if grew > PEAK_BOUND {
            bad.push(format!("heap grew by {} MiB", grew >> 20));
        }
        if !bad.is_empty() {
            let keep = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
                "fuzz-{}-{seed}-{cases}.{}",
                parser.name(),
                name
            ));
            let _ = std::fs::write(&keep, &data);
            problems.push(format!(
                "{} case {cases} (seed {seed}, from {rel}, kept as {}): {}",
                parser.name(),
                keep.display(),
                bad.join("; ")
            ));
        }
        cases += 1;
    }
    (cases, problems)
}

fn run_all(budget: Duration, only: Option<&str>) {
    let mut all = Vec::new();
    for p in PARSERS {
        if only.is_some_and(|o| o != p.name()) {
            continue;
        }
        let (cases, problems) = fuzz(p, budget, 1);
        eprintln!(
            "fuzz {}: {cases} cases in {:.1} s, {} problems",
            p.name(),
            budget.as_secs_f64(),
            problems.len()
        );
        assert!(cases > 0, "{}: no case ran", p.name());
        all.extend(problems);
    }
    assert!(
        all.is_empty(),
        "{} problems:\n{}",
        all.len(),
        all.join("\n")
    );
}

#[test]
fn short_fuzz_pass_of_every_parser() {
    run_all(Duration::from_millis(300), None);
}

#[test]
#[ignore = "long pass: FUZZ_SECS seconds per parser (FUZZ_PARSER to pick one)"]
fn long_fuzz_pass() {
    let secs: u64 = std::env::var("FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let only = std::env::var("FUZZ_PARSER").ok();
    run_all(Duration::from_secs(secs), only.as_deref());
}

#[test]
fn mutations_are_repeatable_from_the_seed() {
    let draw = || {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let mut d = b"1,2,3\n4,5,6\n".to_vec();
        for _ in 0..50 {
            mutate(&mut rng, &mut d, b"a,b\n");
        }
        d
    };
    let a = draw();
    assert_eq!(a, draw());
    assert_ne!(a, b"1,2,3\n4,5,6\n".to_vec());
}
