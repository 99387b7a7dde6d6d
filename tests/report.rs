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
    assert_eq!(ids, ["scatter", "convergence", "confusion", "basis"]);
    // The plot is 760 wide, its legend beside it.
    assert!(imgs[0].1.width() > 760, "{}", imgs[0].1.width());
    assert_eq!(imgs[0].1.height(), 560);
    assert_eq!((imgs[1].1.width(), imgs[1].1.height()), (760, 480));
    // The confusion matrix of truth × clusters comes from labels.csv, written by `run --out`.
    let labels = std::fs::read_to_string(run.join("labels.csv")).expect("labels.csv");
    assert!(
        labels.starts_with("index,truth,painted,cluster\n"),
        "{labels:.80}"
    );
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
    let ids: Vec<&str> = imgs.iter().map(|(i, _)| i.as_str()).collect();
    assert_eq!(ids, ["scores", "seconds", "k_selection_1"]);
    let k_sel = &imgs[2].1;
    assert_eq!((k_sel.width(), k_sel.height()), (1200, 420));
    // Three cells (k = 2, 3, 4): rows of 34 px plus the frame.
    assert_eq!(imgs[0].1.height(), 260);
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
    let ids: Vec<&str> = imgs.iter().map(|(i, _)| i.as_str()).collect();
    assert_eq!(ids, ["scores", "seconds", "label_budget"]);
    assert_eq!((imgs[2].1.width(), imgs[2].1.height()), (760, 500));
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

/// Pixels of exactly `rgb` grouped into blobs: split where rows, then columns, have a gap of
/// more than 3 px. Each blob as (x min, x max, y min, y max).
fn blobs(img: &image::RgbaImage, rgb: [u8; 3]) -> Vec<(u32, u32, u32, u32)> {
    let pts: Vec<(u32, u32)> = img
        .enumerate_pixels()
        .filter(|(_, _, p)| p.0[..3] == rgb)
        .map(|(x, y, _)| (x, y))
        .collect();
    let split = |mut v: Vec<u32>| -> Vec<(u32, u32)> {
        v.sort_unstable();
        v.dedup();
        let mut out: Vec<(u32, u32)> = Vec::new();
        for x in v {
            match out.last_mut() {
                Some(r) if x <= r.1 + 4 => r.1 = x,
                _ => out.push((x, x)),
            }
        }
        out
    };
    let mut out = Vec::new();
    for (y0, y1) in split(pts.iter().map(|p| p.1).collect()) {
        let band: Vec<u32> = pts
            .iter()
            .filter(|p| (y0..=y1).contains(&p.1))
            .map(|p| p.0)
            .collect();
        for (x0, x1) in split(band) {
            out.push((x0, x1, y0, y1));
        }
    }
    out
}

/// A sweep folder made by hand with known means: the error bars of the score plot are where
/// the numbers put them (bar length / distance between the means = 2·std / Δmean).
#[test]
fn score_plot_puts_dots_and_error_bars_at_the_means() {
    let dir = tempfile::tempdir().expect("tempdir");
    let summary = serde_json::json!({
        "repeats": 3,
        "summary": {
            "protocol": "clustering",
            "cells": [
                {"model": "nmf", "params": "", "runs": 3, "failed": 0, "best": true,
                 "metrics": {"acc": {"mean": 0.2, "std": 0.0},
                             "nmi_max": {"mean": 0.3, "std": 0.0},
                             "seconds": {"mean": 0.5, "std": 0.1}}},
                {"model": "rpnmf", "params": "alpha=0.1", "runs": 3, "failed": 0, "best": true,
                 "metrics": {"acc": {"mean": 0.8, "std": 0.1},
                             "nmi_max": {"mean": 0.7, "std": 0.05},
                             "seconds": {"mean": 2.0, "std": 0.5}}}
            ]
        }
    });
    std::fs::write(dir.path().join("summary.json"), summary.to_string()).expect("write");
    let figs = dir.path().join("figs");
    ok(&[
        "report",
        dir.path().to_str().expect("utf-8"),
        "--figures",
        figs.to_str().expect("utf-8"),
    ]);
    let imgs = images(&dir.path().join("report.html"));
    let ids: Vec<&str> = imgs.iter().map(|(i, _)| i.as_str()).collect();
    assert_eq!(ids, ["scores", "seconds"]);
    let scores = imgs[0].1.to_rgba8();
    // ACC is the first series: Tab10 blue. Its blobs: one per cell, and the legend's marker
    // at the far right.
    let mut acc = blobs(&scores, [31, 119, 180]);
    assert_eq!(acc.len(), 3, "{acc:?}");
    acc.sort_by_key(|b| b.0);
    let (a, b) = (acc[0], acc[1]);
    // NMF's row is above RPNMF's (cells top to bottom in the summary's order).
    assert!(a.2 < b.2, "{a:?} {b:?}");
    let centre = |b: (u32, u32, u32, u32)| f64::from(b.0 + b.1) / 2.0;
    let px_per_unit = (centre(b) - centre(a)) / (0.8 - 0.2);
    assert!(px_per_unit > 300.0, "{px_per_unit}");
    // A std of 0 is the dot alone (11 px); 0.1 is a bar 0.2 units long (with its 2 px caps).
    assert!((a.1 - a.0) <= 12, "{a:?}");
    let bar = f64::from(b.1 - b.0) / px_per_unit;
    assert!((bar - 0.2).abs() < 0.015, "bar {bar} units, expected 0.2");
    // NMI (Tab10 orange) has its own dot in each row.
    assert_eq!(blobs(&scores, [255, 127, 14]).len(), 3);
    assert!(figs.join("scores.png").is_file() && figs.join("scores.svg").is_file());
}

/// A run folder with 40 clusters (ORL's size): the scatter's legend lists all forty, in forty
/// distinct colours (the palette's two greys aside, counted by their own test).
#[test]
fn scatter_legend_lists_forty_classes_in_distinct_colours() {
    let dir = tempfile::tempdir().expect("tempdir");
    let n = 120;
    std::fs::write(dir.path().join("run.json"), "{\"model\":\"nmf\"}").expect("write");
    let h: String = (0..3)
        .map(|r| {
            (0..n)
                .map(|j| format!("{}", ((j * (r + 2)) % 17) as f64 + 0.1 * r as f64))
                .collect::<Vec<_>>()
                .join(",")
                + "\n"
        })
        .collect();
    std::fs::write(dir.path().join("H.csv"), h).expect("write");
    let clusters: String = std::iter::once("cluster\n".to_owned())
        .chain((0..n).map(|j| format!("{}\n", j % 40)))
        .collect();
    std::fs::write(dir.path().join("clusters.csv"), clusters).expect("write");
    ok(&["report", dir.path().to_str().expect("utf-8")]);
    let imgs = images(&dir.path().join("report.html"));
    assert_eq!(imgs[0].0, "scatter");
    let img = imgs[0].1.to_rgba8();
    assert!(
        img.width() > 760 + 100,
        "a legend of two columns: {}",
        img.width()
    );
    let mut counts: std::collections::HashMap<[u8; 3], usize> = Default::default();
    for (x, _, p) in img.enumerate_pixels() {
        let [r, g, b, _] = p.0;
        let grey = r.abs_diff(g) < 8 && g.abs_diff(b) < 8;
        if x >= 760 && !grey {
            *counts.entry([r, g, b]).or_default() += 1;
        }
    }
    // A legend marker is a disc of radius 5 (about 80 px of its exact colour).
    let markers = counts.values().filter(|&&c| c >= 40).count();
    assert_eq!(markers, 38, "{counts:?}");
}

/// `sweep --keep-curves` keeps each run's objective, and `report` overlays them.
#[test]
fn kept_curves_are_overlaid() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("sw");
    let out_s = out.to_str().expect("utf-8");
    ok(&[
        "sweep",
        "--data",
        "sample:blobs",
        "--models",
        "nmf,gnmf",
        "--repeats",
        "2",
        "--max-iter",
        "20",
        "--kmeans-repeats",
        "2",
        "--keep-curves",
        "--out",
        out_s,
    ]);
    let curves = std::fs::read_to_string(out.join("curves.csv")).expect("curves.csv");
    let lines: Vec<&str> = curves.lines().collect();
    assert_eq!(lines[0], "model,params,repeat,objective");
    assert_eq!(lines.len(), 1 + 2 * 2, "{curves}");
    assert!(lines[1..].iter().all(|l| {
        l.split(',')
            .nth(3)
            .is_some_and(|o| o.split(' ').count() >= 2)
    }));
    ok(&["report", out_s]);
    let imgs = images(&out.join("report.html"));
    let ids: Vec<&str> = imgs.iter().map(|(i, _)| i.as_str()).collect();
    assert_eq!(ids, ["scores", "seconds", "curves"]);
}
