//! `run --session FILE`: the data, constraints and model settings come from a session file; a
//! changed data file is an error (exit 2, naming the session) unless `--allow-changed-data`.
#![expect(clippy::expect_used, reason = "test helpers fail loudly")]

use nmf_playground::engine::data::{self, LoadOptions, Preprocess};
use nmf_playground::engine::files::session::{
    Constraints, DatasetRef, ModelSettings, SessionFile, VERSION,
};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn write_csv(path: &Path, first: f64) {
    let mut s = String::from("a,b,label\n");
    for i in 0..9 {
        let v = if i == 0 { first } else { 1.0 + (i % 3) as f64 };
        s.push_str(&format!(
            "{v},{},{}\n",
            (i % 2) as f64 + 0.5,
            ["x", "y", "z"][i % 3]
        ));
    }
    std::fs::write(path, s).expect("write csv");
}

#[test]
fn run_session_uses_its_settings_and_refuses_changed_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let csv = dir.path().join("d.csv");
    write_csv(&csv, 1.0);
    let data = data::load(&csv, &LoadOptions::default()).expect("load");
    let mut s = SessionFile {
        version: VERSION,
        dataset: DatasetRef {
            path: "d.csv".into(), // relative to the session's folder
            preprocess: Preprocess::L2,
            label_column: None,
            labels_file: None,
            resize: None,
            fingerprint: data.fingerprint,
        },
        constraints: Constraints {
            triplets: vec![[0, 3, 1], [1, 4, 2]],
            labels: Vec::new(),
            class_names: Vec::new(),
        },
        model: ModelSettings {
            model: "rpnmf".into(),
            k: 2,
            seed: 5,
            max_iter: 7,
            tol: 0.0,
            params: BTreeMap::new(),
        },
        runs: Vec::new(),
    };
    let session = dir.path().join("s.json");
    s.save(&session, &[]).expect("save");
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_nmf-playground"))
            .args(["run", "--json", "--kmeans-repeats", "2", "--session"])
            .arg(&session)
            .args(extra)
            .output()
            .expect("run")
    };
    let out = run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["seed"], 5);
    assert_eq!(v["k"], 2);
    assert_eq!(v["iterations"], 7);
    assert!(
        v["model"]
            .as_str()
            .is_some_and(|m| m.to_lowercase().contains("rpnmf")),
        "{v}"
    );

    write_csv(&csv, 1.5);
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("s.json") && err.contains("data changed"),
        "{err}"
    );
    let out = run(&["--allow-changed-data"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    std::fs::write(&session, "{\"version\": 9}").expect("write");
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("s.json") && err.contains("version 9"), "{err}");
}
