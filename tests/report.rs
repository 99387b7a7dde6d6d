//! `report DIR` on folders made by the binary itself (the bundled blobs sample, small sweeps):
//! the page exists, every embedded PNG decodes to its figure's size, and the plots that apply
//! are there (k selection for `--grid k=...`, the label budget for a semi sweep).
#![expect(clippy::expect_used, reason = "test helpers fail loudly")]

use base64::Engine as _;
use std::path::Path;
use std::process::Command;

fn bin(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_nmf-playground"))
        .args(args)
        .output()
        .expect("run the binary")
}

fn ok(args: &[&str]) {
    let out = bin(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The figure ids of the page and each embedded PNG decoded.
fn images(html: &Path) -> Vec<(String, image::DynamicImage)> {
    let text = std::fs::read_to_string(html).expect("report.html");
    assert!(text.starts_with("<!DOCTYPE html>"));
    assert!(
        !text.contains("<script"),
        "a self-contained page has no scripts"
    );
    let mut out = Vec::new();
    for part in text.split("<figure id=\"").skip(1) {
        let id = part.split('"').next().expect("id").to_owned();
        let b64 = part
            .split("data:image/png;base64,")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .expect("a data URI");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .expect("base64");
        out.push((id, image::load_from_memory(&bytes).expect("PNG decodes")));
    }
    out
}

#[test]
fn run_folder_gets_scatter_convergence_and_basis() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = dir.path().join("run");
    let run_s = run.to_str().expect("utf-8");
    ok(&[
        "run",
        "--data",
        "sample:blobs",
        "--max-iter",
        "30",
        "--out",
        run_s,
    ]);
    ok(&["report", run_s]);
    let imgs = images(&run.join("report.html"));
    let ids: Vec<&str> = imgs.iter().map(|(i, _)| i.as_str()).collect();
    assert_eq!(ids, ["scatter", "convergence", "basis"]);
    assert_eq!(imgs[0].1.width(), 760);
    assert_eq!(imgs[0].1.height(), 560);
    assert_eq!((imgs[1].1.width(), imgs[1].1.height()), (760, 480));
}

#[test]
fn sweeps_get_k_selection_and_label_budget() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ks = dir.path().join("ks");
    let ks_s = ks.to_str().expect("utf-8");
    ok(&[
        "sweep",
        "--data",
        "sample:blobs",
        "--models",
        "nmf",
        "--grid",
        "k=2,3,4",
        "--repeats",
        "2",
        "--max-iter",
        "30",
        "--out",
        ks_s,
    ]);
    let page = dir.path().join("ks.html");
    let figs = dir.path().join("figs");
    ok(&[
        "report",
        ks_s,
        "--out",
        page.to_str().expect("utf-8"),
        "--figures",
        figs.to_str().expect("utf-8"),
    ]);
    let imgs = images(&page);
    assert_eq!(imgs.len(), 1);
    assert_eq!(imgs[0].0, "k_selection_1");
    assert_eq!((imgs[0].1.width(), imgs[0].1.height()), (1200, 420));
    assert!(figs.join("k_selection_1.png").is_file());
    let svg = std::fs::read_to_string(figs.join("k_selection_1.svg")).expect("svg");
    assert!(svg.starts_with("<svg"));

    let semi = dir.path().join("semi");
    let semi_s = semi.to_str().expect("utf-8");
    ok(&[
        "sweep",
        "--data",
        "sample:blobs",
        "--models",
        "stginmf",
        "--protocol",
        "semi",
        "--reveal",
        "0.2,0.5",
        "--repeats",
        "2",
        "--out",
        semi_s,
    ]);
    ok(&["report", semi_s]);
    let imgs = images(&semi.join("report.html"));
    assert_eq!(imgs.len(), 1);
    assert_eq!(imgs[0].0, "label_budget");
    assert_eq!((imgs[0].1.width(), imgs[0].1.height()), (760, 500));
}

#[test]
fn a_folder_without_results_exits_2_naming_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = bin(&["report", dir.path().to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("run.json") && err.contains("summary.json"),
        "{err}"
    );
    let out = bin(&["report", "/nonexistent/folder"]);
    assert_eq!(out.status.code(), Some(2));
    // A run folder whose H.csv is broken: the message names H.csv and the line.
    std::fs::write(dir.path().join("run.json"), "{\"model\":\"nmf\"}").expect("write");
    std::fs::write(dir.path().join("H.csv"), "1,2\n3,x\n").expect("write");
    let out = bin(&["report", dir.path().to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("H.csv: line 2"), "{err}");
}
