//! Nothing acknowledged is lost, and nothing half-written is left (issue 20, points 2 and the
//! `run --out` clause): child processes are killed with SIGKILL at seeded random moments.
//!
//! 1. `journal-edits` makes seeded constraint edits through the store and the recovery journal
//!    (the app's code path) and acknowledges each durable edit on stdout. After every kill the
//!    recovery file must hold the last acknowledged content, or the edit in flight after it
//!    (written but not yet acknowledged); never anything older.
//! 2. `run --out DIR` is killed at random moments; every file under its final name must parse
//!    completely (CSV rows of one width, `.npy` readable, `run.json` valid JSON).
#![expect(clippy::expect_used, reason = "test helpers fail loudly")]

use nmf_playground::cli::journal_child::{digest, fingerprint};
use nmf_playground::engine::files::recovery;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_nmf-playground"))
}

/// A state printed by the child: content digest and whether the store was dirty.
#[derive(Clone, Copy, Debug, PartialEq)]
struct State {
    digest: u64,
    dirty: bool,
}

fn parse_state(words: &[&str]) -> State {
    State {
        digest: words[0].parse().expect("digest"),
        dirty: words[1] == "true",
    }
}

#[test]
fn sigkill_during_constraint_edits_loses_no_acknowledged_edit() {
    const KILLS: u64 = 25;
    let mut rng = ChaCha8Rng::seed_from_u64(20);
    let started = Instant::now();
    let (mut acked_total, mut with_file) = (0usize, 0usize);
    for round in 0..KILLS {
        let dir = tempfile::tempdir().expect("tempdir");
        let seed = 1000 + round;
        let mut child = bin()
            .args(["journal-edits", "--seed", &seed.to_string(), "--dir"])
            .arg(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn journal-edits");
        std::thread::sleep(Duration::from_millis(rng.gen_range(5..120)));
        child.kill().expect("SIGKILL");
        let _ = child.wait();
        let mut text = String::new();
        child
            .stdout
            .take()
            .expect("stdout")
            .read_to_string(&mut text)
            .expect("read stdout");
        // Only whole lines count (the kill may cut the last one).
        let complete = text.rfind('\n').map_or("", |p| &text[..=p]);
        let mut last_ack: Option<State> = None;
        let mut in_flight: Option<State> = None;
        let mut acks = 0;
        for line in complete.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.first() {
                Some(&"pending") => in_flight = Some(parse_state(&words[1..])),
                Some(&"ack") => {
                    last_ack = Some(parse_state(&words[2..]));
                    in_flight = None;
                    acks += 1;
                }
                _ => panic!("unexpected child output line `{line}`"),
            }
        }
        acked_total += acks;
        let fp = fingerprint(seed);
        let found = recovery::find(dir.path(), &fp).expect("the recovery file parses");
        let got = found.as_ref().map(|f| digest(&f.store));
        if found.is_some() {
            with_file += 1;
        }
        let fits = |s: Option<State>| match s {
            // Before the first edit there is nothing to recover.
            None => got.is_none(),
            Some(s) if s.dirty => got == Some(s.digest),
            Some(_) => got.is_none(),
        };
        assert!(
            fits(last_ack) || (in_flight.is_some() && fits(in_flight)),
            "kill {round}: after {acks} acknowledged edits the recovery holds {got:?}, \
             the last acknowledged state is {last_ack:?}, in flight {in_flight:?}"
        );
    }
    eprintln!(
        "{KILLS} kills, {acked_total} acknowledged edits in all, {with_file} recoveries found, \
         0 acknowledged edits lost, {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        acked_total > KILLS as usize,
        "the kills came too early to test anything"
    );
}

/// Every file `run --out` left under its final name parses completely.
fn check_out_dir(dir: &Path) -> usize {
    let mut files = 0;
    for entry in std::fs::read_dir(dir).expect("ls out") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        if name.starts_with('.') {
            continue; // a temporary the kill left: never under a final name
        }
        files += 1;
        let bytes = std::fs::read(&path).expect("read");
        if name.ends_with(".csv") {
            let text = String::from_utf8(bytes).expect("utf-8");
            assert!(
                text.ends_with('\n'),
                "{name}: no final newline (truncated?)"
            );
            let mut r = csv::ReaderBuilder::new()
                .has_headers(false)
                .flexible(false)
                .from_reader(text.as_bytes());
            let mut rows = 0;
            for rec in r.records() {
                rec.unwrap_or_else(|e| panic!("{name}: {e}"));
                rows += 1;
            }
            assert!(rows > 0, "{name} is empty");
        } else if name.ends_with(".npy") {
            use ndarray_npy::ReadNpyExt;
            ndarray::Array2::<f64>::read_npy(bytes.as_slice())
                .unwrap_or_else(|e| panic!("{name} does not read back: {e}"));
        } else if name.ends_with(".json") {
            serde_json::from_slice::<serde_json::Value>(&bytes)
                .unwrap_or_else(|e| panic!("{name} is not complete JSON: {e}"));
        }
    }
    files
}

/// A labelled CSV of `n` samples in 3 blobs of 20 features, so that `run --out` writes
/// sizeable files (H.csv of 10 × n numbers).
fn write_blobs_csv(path: &Path, n: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut text = String::new();
    for i in 0..n {
        let class = i % 3;
        for f in 0..20 {
            let centre = if f % 3 == class { 4.0 } else { 1.0 };
            text.push_str(&format!("{:.4},", centre + rng.r#gen::<f64>()));
        }
        text.push_str(&format!("c{class}\n"));
    }
    std::fs::write(path, text).expect("write the data");
}

/// How a child ended: `true` when the kill came before it exited.
fn killed(status: std::process::ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.signal() == Some(9)
}

#[test]
fn sigkill_during_run_out_never_leaves_a_truncated_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("blobs.csv");
    write_blobs_csv(&data, 6000);
    let args = |out: &Path| {
        let mut c = bin();
        c.args(["run", "--data"])
            .arg(&data)
            .args(["--label-col", "20", "--model", "nmf", "--k", "10"])
            .args(["--max-iter", "5", "--kmeans-repeats", "1", "--out"])
            .arg(out)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        c
    };
    // The out folder does not exist until the writes begin (the writer creates it): poll for
    // it, so each kill is timed from the start of the writes.
    let wait_for_dir = |child: &mut std::process::Child, dir: &Path| -> Option<Instant> {
        loop {
            if dir.exists() {
                return Some(Instant::now());
            }
            if child.try_wait().expect("try_wait").is_some() {
                return None;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    };
    // A full run first: every file it writes, and how long the writes take.
    let reference = tmp.path().join("reference");
    let mut child = args(&reference).spawn().expect("run");
    let began = wait_for_dir(&mut child, &reference).expect("the run wrote its folder");
    let status = child.wait().expect("wait");
    let writes = began.elapsed();
    assert!(status.success(), "the reference run failed");
    let all = check_out_dir(&reference);
    assert!(all >= 7, "a full run wrote only {all} files");
    const KILLS: usize = 20;
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (mut during, mut partial) = (0, 0);
    for round in 0..KILLS {
        let dir = tmp.path().join(format!("kill{round}"));
        let mut child = args(&dir).spawn().expect("spawn run");
        // A random moment within the writes (a little past their measured length).
        let us = writes.as_micros() as u64;
        let at = Duration::from_micros(rng.gen_range(0..us + us / 10 + 1));
        let began = wait_for_dir(&mut child, &dir);
        if began.is_some() {
            std::thread::sleep(at);
        }
        let _ = child.kill();
        let status = child.wait().expect("wait");
        let files = if dir.exists() { check_out_dir(&dir) } else { 0 };
        if began.is_some() && killed(status) {
            during += 1;
        }
        if files < all {
            partial += 1;
        }
    }
    eprintln!(
        "the writes take {writes:?} of a full run's {all} files; {during} of {KILLS} kills \
         landed during them, {partial} left some but not all files (each complete)"
    );
    assert!(
        during >= 10,
        "only {during} of {KILLS} kills landed during the writes ({writes:?})"
    );
}
