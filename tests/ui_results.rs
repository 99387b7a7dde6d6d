//! UI tests of the results panel (issue 4 item 3) with egui_kittest: a finished run is
//! evaluated off the UI thread (repeated k-means ACC / NMI, classification, triplets kept),
//! the scores are shown, every run lands in the history table, two selected runs overlay
//! their convergence curves, the scatter colours by k-means cluster with misassigned samples
//! marked, and the table exports to CSV.

#![cfg(feature = "gui")]

mod common;
#[path = "common/scatter.rs"]
mod scatter;

use common::{MAX_STEPS, step_until};
use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use nmf_playground::engine::constraints::ProtocolOptions;
use nmf_playground::gui::export::Exports;
use nmf_playground::gui::results::{Results, metric_lines};
use nmf_playground::gui::{App, ColorBy, EvalInput, WorkerState, constraints, data, evaluate};

fn loaded() -> Harness<'static, App> {
    let mut h = common::loaded();
    // Few restarts keep the test quick; the protocol's 50 are a setting.
    h.state_mut().settings_mut().kmeans_restarts = 5;
    h
}

/// Click Run, wait for the run to finish and for its evaluation (run number `run`).
fn run_and_evaluate(h: &mut Harness<'static, App>, run: u64) {
    h.get_by_label("Run").click();
    step_until(h, "the run to finish", MAX_STEPS, |a| {
        matches!(a.run().worker, WorkerState::Finished(_))
            && a.session().history.len() as u64 == run
    });
    step_until(h, "the evaluation", MAX_STEPS, |a| {
        a.session().evaluating.is_none()
            && a.session()
                .evaluation
                .as_ref()
                .is_some_and(|e| e.run == run)
    });
    h.run_steps(2);
}

/// Scroll the widget labelled `label` into view (the right panel scrolls), then click it.
fn click_visible(h: &mut Harness<'static, App>, label: &str) {
    // Away from the last widget first, so its tooltip does not cover the next one.
    h.hover_at(egui::pos2(5.0, 5.0));
    h.run_steps(2);
    h.get_by_label(label).scroll_to_me();
    // Scrolling animates over a few frames.
    h.run_steps(20);
    h.get_by_label(label).click();
    h.run_steps(2);
}

fn in_unit(x: f64) -> bool {
    (0.0..=1.0).contains(&x)
}

/// The export rows' state.
fn exports_of(app: &App) -> &Exports {
    app.feature::<Exports>()
        .unwrap_or_else(|| panic!("the app has the exports"))
}

#[test]
fn evaluation_history_overlay_colour_and_export() {
    let mut h = loaded();
    run_and_evaluate(&mut h, 1);
    {
        let s = h.state().session();
        let ev = s.evaluation.clone().expect("evaluation");
        let c = ev
            .clustering
            .as_ref()
            .expect("labelled sample: clustering scores");
        for m in [c.acc, c.nmi_max, c.nmi_sqrt, c.nmi_arith] {
            assert!(in_unit(m.mean) && m.std >= 0.0, "{m:?}");
        }
        assert_eq!(c.restarts, 5);
        let r = ev.classification.as_ref().expect("classification");
        assert!(in_unit(r.accuracy) && in_unit(r.macro_f1), "{r:?}");
        assert!(!r.confusion.counts.is_empty());
        assert!(ev.kept_h.is_none(), "no triplets in the first run");
        let n = s.dataset.as_ref().expect("dataset").n();
        assert_eq!(ev.clusters.len(), n);
        assert_eq!(ev.misassigned.len(), n);
        // Every score is shown in the panel.
        let lines = metric_lines(&ev);
        assert!(lines.len() >= 6, "{lines:?}");
        for line in &lines {
            h.get_by_label(line);
        }
        h.get_by_label("Confusion matrix");
        assert_eq!(s.history.len(), 1);
        let row = &s.history[0];
        assert_eq!(row.acc, Some(c.acc.mean));
        assert_eq!(
            row.iterations,
            h.state()
                .run()
                .result
                .as_ref()
                .expect("result")
                .record
                .iterations()
        );
    }
    h.get_by_label("run 1");
    // Hovering the heatmap's first cell names the classes and the count (scrolled into view
    // first: the run history holds the foot of the right panel).
    h.get_by_label("Confusion matrix").scroll_to_me();
    h.run_steps(20);
    let cell = h.get_by_label("Confusion matrix").rect().min + egui::vec2(3.0, 3.0);
    h.hover_at(cell);
    h.run_steps(30);
    assert!(
        h.query_all_by_label_contains("predicted: ").count() >= 1,
        "no heatmap tooltip"
    );

    // A second run, with triplets this time: two rows, triplets kept reported.
    h.state_mut().send(constraints::Command::Generate {
        opts: ProtocolOptions {
            anchor_fraction: 0.05,
            per_anchor: 4,
            ..ProtocolOptions::default()
        },
        from_truth: true,
    });
    step_until(&mut h, "generated triplets", MAX_STEPS, |a| {
        a.session()
            .store
            .as_ref()
            .is_some_and(|s| !s.triplets().is_empty())
    });
    h.state_mut().settings_mut().seed = 7;
    h.state_mut().settings_mut().kmeans_restarts = 50;
    h.get_by_label("Run").scroll_to_me();
    h.run_steps(20);
    h.get_by_label("Run").click();
    // From the click on, run 1's evaluation is never shown again (a late one is dropped).
    step_until(&mut h, "run 2's evaluation", MAX_STEPS, |a| {
        let s = a.session();
        assert_ne!(
            s.evaluation.as_ref().map(|e| e.run),
            Some(1),
            "stale evaluation"
        );
        s.evaluating.is_none() && s.evaluation.as_ref().is_some_and(|e| e.run == 2)
    });
    h.run_steps(2);
    {
        let s = h.state().session();
        assert_eq!(s.history.len(), 2);
        assert_eq!(s.history[1].seed, 7);
        let kept = s.evaluation.as_ref().and_then(|e| e.kept_h).expect("kept");
        assert!(in_unit(kept));
        assert_eq!(s.history[1].kept, Some(kept));
        assert!(s.overlay(&h.state().view().selected_runs).is_none());
    }

    // Select both rows: their curves are overlaid.
    click_visible(&mut h, "run 1");
    click_visible(&mut h, "run 2");
    {
        let s = h.state().session();
        let [a, b] = s
            .overlay(&h.state().view().selected_runs)
            .expect("overlay of two runs");
        assert_eq!((a.id, b.id), (1, 2));
        assert!(!a.curve.is_empty() && !b.curve.is_empty());
    }
    h.get_by_label("overlay: run 1 and run 2");

    // Colour by k-means cluster: groups are clusters, misassigned samples are crossed.
    h.get_by_label("Colour by").click();
    h.run_steps(2);
    h.get_by_label("k-means cluster").click();
    h.run_steps(2);
    {
        let s = h.state().session();
        assert_eq!(h.state().view().color_by, ColorBy::Cluster);
        assert!(
            h.state()
                .view()
                .scatter
                .groups
                .iter()
                .all(|g| g.name.starts_with("cluster ")),
            "{:?}",
            h.state()
                .view()
                .scatter
                .groups
                .iter()
                .map(|g| &g.name)
                .collect::<Vec<_>>()
        );
        let ev = s.evaluation.as_ref().expect("evaluation");
        let wrong = ev.misassigned.iter().filter(|&&w| w).count();
        assert_eq!(h.state().view().scatter.misassigned.len(), wrong);
        let n: usize = h.state().view().scatter.point_count();
        assert_eq!(n, ev.clusters.len());
    }

    // Export the history table.
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("runs.csv");
    click_visible(&mut h, "CSV path");
    h.get_by_label("CSV path")
        .type_text(&path.display().to_string());
    h.step();
    click_visible(&mut h, "Export CSV");
    let s = h.state().session();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "exported CSV: {e}; path field {:?}, status {:?}",
            h.state()
                .feature::<Results>()
                .expect("results")
                .history_path,
            s.status
        )
    });
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].starts_with("run,model,dataset,params,seed,stop,iterations,seconds,acc,acc_std,"),
        "{text}"
    );
    for col in ["nmi_max_std", "nmi_arith", "class_acc", "macro_f1", "kept"] {
        assert!(lines[0].contains(col), "{col}: {text}");
    }
    // Every field is filled for an evaluated run on labelled data (kept: no triplets).
    let fields: Vec<&str> = lines[1].split(',').collect();
    assert!(fields[8..19].iter().all(|f| !f.is_empty()), "{}", lines[1]);
    assert!(
        lines[1].starts_with("1,") && lines[2].starts_with("2,"),
        "{text}"
    );
    assert!(!h.state().session().status.is_error);
    h.check_accessibility();
}

#[test]
fn evaluate_scores_two_separated_groups_perfectly() {
    // Two well-separated groups in H (k = 2, n = 8): k-means recovers them exactly.
    let mut h = ndarray::Array2::<f64>::zeros((2, 8));
    let labels: Vec<usize> = (0..8).map(|i| i / 4).collect();
    for (i, &l) in labels.iter().enumerate() {
        h[[l, i]] = 1.0 + 0.01 * i as f64;
    }
    let progress = std::sync::Arc::new(nmf_playground::engine::eval::EvalProgress::default());
    let ev = evaluate(&EvalInput {
        run: 3,
        h,
        assignments: None,
        labels: Some(labels),
        n_classes: 2,
        triplets: Vec::new(),
        seed: 0,
        restarts: 4,
        svm: nmf_playground::engine::eval::SvmScaling::default(),
        predictions: None,
        known: Vec::new(),
        data: None,
        progress: std::sync::Arc::clone(&progress),
    });
    assert_eq!(ev.run, 3);
    // Four restarts and one binary SVM counted: all done.
    assert_eq!(progress.fraction(), 1.0);
    let c = ev.clustering.as_ref().expect("clustering");
    assert!((c.acc.mean - 1.0).abs() < 1e-12, "{c:?}");
    assert!((c.nmi_sqrt.mean - 1.0).abs() < 1e-12, "{c:?}");
    assert!(ev.misassigned.iter().all(|w| !w));
    assert!(
        ev.notes.is_empty() || ev.classification.is_none(),
        "{:?}",
        ev.notes
    );
}

#[test]
fn continue_from_a_run_starts_the_next_run_from_its_factors() {
    let mut h = loaded();
    let k = h.state().settings().k;
    run_and_evaluate(&mut h, 1);
    // Another rank in the model panel: the continuation takes the run's own rank.
    h.state_mut().settings_mut().k = k + 1;
    h.hover_at(egui::pos2(5.0, 5.0));
    h.run_steps(2);
    let buttons = h.get_all_by_label("continue").count();
    assert_eq!(buttons, 1, "one button per history row");
    h.get_by_label("continue").scroll_to_me();
    h.run_steps(20);
    h.get_by_label("continue").click();
    h.run_steps(2);
    step_until(&mut h, "the continued run to finish", MAX_STEPS, |a| {
        matches!(a.run().worker, WorkerState::Finished(_)) && a.session().history.len() == 2
    });
    let app = h.state();
    let result = app.run().result.as_ref().expect("result");
    assert_eq!(result.spec.k, k);
    let init = result.spec.init.as_ref().expect("started from run 1");
    assert_eq!(init.source, "run 1");
    let first = &app.session().history[0];
    assert_eq!(init.h, first.factors.h);
    // It resumes run 1's fit: its first objective is at most run 1's last.
    let last = first.curve.linear.last().expect("curve").y;
    let next = app.session().history[1].curve.linear[0].y;
    assert!(next <= last * (1.0 + 1e-12), "{next} after {last}");
}

/// Each baseline of docs/models.md §3 is in the model menu, runs from it on the same data
/// and triplets, and lands in the history with its label and scores.
#[test]
fn each_baseline_is_picked_from_the_menu_runs_and_lands_in_the_history() {
    use egui::accesskit::Role;
    let mut h = loaded();
    h.state_mut().send(constraints::Command::Generate {
        opts: ProtocolOptions::default(),
        from_truth: true,
    });
    step_until(&mut h, "generated triplets", MAX_STEPS, |a| {
        a.session()
            .store
            .as_ref()
            .is_some_and(|s| !s.triplets().is_empty())
    });
    for (run, (name, label)) in [
        ("gnmf", "GNMF"),
        ("rnmf", "RNMF"),
        ("nmfcc", "NMFCC"),
        ("tste", "t-STE"),
    ]
    .into_iter()
    .enumerate()
    {
        h.get_by_role_and_label(Role::ComboBox, "Model").click();
        h.run_steps(2);
        h.get_by_label(label).click();
        h.run_steps(2);
        assert_eq!(h.state().settings().model, name);
        run_and_evaluate(&mut h, run as u64 + 1);
        let s = h.state().session();
        let row = s.history.last().expect("a history row");
        assert!(row.model.contains(label), "{} for {label}", row.model);
        let acc = row.acc.expect("clustering accuracy");
        assert!(in_unit(acc), "{label}: ACC {acc}");
        assert!(!s.status.is_error, "{label}: {:?}", s.status);
    }
}

/// ORL's 40 people (`../shared/data/orl_32x32`; skipped when absent): after a run the scatter
/// has a group per person, each with its own colour; the legend sits beside the plot and
/// scrolls, and clicking a person highlights that group, a second click clears it.
#[test]
fn forty_classes_get_forty_colours_and_a_legend_that_highlights() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/orl_32x32");
    if !path.exists() {
        eprintln!(
            "skipping: {} is absent (shared datasets not available)",
            path.display()
        );
        return;
    }
    let mut h = loaded();
    h.state_mut().send(data::Command::LoadPath(path));
    step_until(&mut h, "ORL to load", MAX_STEPS, |a| {
        a.session().dataset.as_ref().is_some_and(|d| d.n() == 400)
    });
    h.state_mut().settings_mut().max_iter = 20;
    run_and_evaluate(&mut h, 1);
    assert_eq!(h.state().view().color_by, ColorBy::Truth);
    h.run_steps(3);
    let groups = &h.state().view().scatter.groups;
    let named: Vec<_> = groups.iter().filter(|g| g.name.starts_with('s')).collect();
    assert_eq!(named.len(), 40);
    let mut colours: Vec<_> = named.iter().map(|g| g.color.to_array()).collect();
    colours.sort_unstable();
    colours.dedup();
    assert_eq!(colours.len(), 40, "a colour repeats among the 40 classes");
    h.get_by_label("s6 (10)").click();
    h.run_steps(2);
    assert_eq!(scatter::of(h.state()).highlight.as_deref(), Some("s6"));
    h.get_by_label("s6 (10)").click();
    h.run_steps(2);
    assert_eq!(scatter::of(h.state()).highlight, None);
}

/// A run stopped by the user stays in the history as "stopped at iteration t" and is scored;
/// "show" on an earlier row brings its scatter and scores back.
#[test]
fn a_stopped_run_is_kept_and_scored_and_show_brings_a_run_back() {
    let mut h = loaded();
    run_and_evaluate(&mut h, 1);
    let first_frame = h.state().view().scatter.by_sample.clone();
    h.state_mut().settings_mut().max_iter = 10_000_000;
    h.state_mut().settings_mut().tol = 0.0;
    h.get_by_label("Run").click();
    step_until(&mut h, "the second run to go", MAX_STEPS, |a| {
        a.run().progress.iteration > 20
    });
    h.get_by_label("Stop").click();
    step_until(&mut h, "the stopped run's evaluation", MAX_STEPS, |a| {
        a.session().history.len() == 2
            && a.session().evaluating.is_none()
            && a.session().history[1].acc.is_some()
    });
    h.run_steps(2);
    let row = h.state().session().history[1].clone();
    assert!(
        row.stop.starts_with("stopped at iteration "),
        "{}",
        row.stop
    );
    assert_eq!(row.stop, format!("stopped at iteration {}", row.iterations));
    assert_eq!(h.state().session().history[0].stop, "converged");
    assert!(row.dataset.starts_with("sample:") || !row.dataset.is_empty());
    // Away from the Stop button, so its tooltip does not cover the table.
    h.hover_at(egui::pos2(5.0, 5.0));
    h.run_steps(2);
    h.get_all_by_label("show")
        .next()
        .expect("a show button")
        .scroll_to_me();
    h.run_steps(20);
    h.get_all_by_label("show")
        .next()
        .expect("a show button")
        .click();
    h.run_steps(3);
    let s = h.state().session();
    assert_eq!(
        s.evaluation.as_ref().map(|e| e.run),
        Some(1),
        "{:?}",
        s.status
    );
    assert_eq!(h.state().view().scatter.by_sample, first_frame);
}

/// "Export run…" writes the finished run's H and W, the labels of every sample (truth,
/// painted, cluster) and the clusters, as CSV and `.npy`, into the typed folder from a
/// background thread; each file reads back to what the app holds.
#[test]
fn export_run_writes_the_factors_and_labels_which_read_back() {
    use ndarray_npy::ReadNpyExt;
    let mut h = loaded();
    // Painted labels: a fifth of the true labels revealed.
    h.state_mut().send(constraints::Command::Reveal {
        fraction: 0.2,
        seed: 3,
    });
    h.run_steps(2);
    run_and_evaluate(&mut h, 1);
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("exported/run1");
    click_visible(&mut h, "Export folder");
    h.get_by_label("Export folder")
        .type_text(&dir.display().to_string());
    h.step();
    click_visible(&mut h, "Export run…");
    step_until(&mut h, "the export", MAX_STEPS, |a| {
        exports_of(a).exporting.is_none() && a.session().status.text.contains("Exported run 1")
    });
    let s = h.state().session();
    assert!(!s.status.is_error, "{:?}", s.status);
    let data = s.dataset.clone().expect("dataset");
    let row = &s.history[0];
    let ev = row.evaluation.clone().expect("evaluated");
    let n = data.n();
    let read = |name: &str| {
        let bytes = std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        ndarray::Array2::<f64>::read_npy(bytes.as_slice()).unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let bits = |a: &ndarray::Array2<f64>| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&read("H.npy")), bits(&row.factors.h));
    let w = row.factors.w.as_ref().expect("NMF has W");
    assert_eq!(bits(&read("W.npy")), bits(w));
    // H.csv holds the same numbers at full precision.
    let csv_h: Vec<Vec<f64>> = std::fs::read_to_string(dir.join("H.csv"))
        .expect("H.csv")
        .lines()
        .map(|l| l.split(',').map(|v| v.parse().expect("number")).collect())
        .collect();
    assert_eq!(csv_h.len(), row.factors.h.nrows());
    for (r, line) in csv_h.iter().enumerate() {
        assert_eq!(line.len(), n);
        for (c, v) in line.iter().enumerate() {
            assert_eq!(
                v.to_bits(),
                row.factors.h[[r, c]].to_bits(),
                "H.csv [{r}, {c}]"
            );
        }
    }
    // labels.csv: one row per sample; truth by name, painted only where revealed (and then
    // the truth), the cluster of the evaluation.
    let text = std::fs::read_to_string(dir.join("labels.csv")).expect("labels.csv");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "index,truth,painted,cluster");
    assert_eq!(lines.len(), n + 1);
    let truth = data.labels.as_ref().expect("the sample is labelled");
    let mut painted = 0;
    for (i, line) in lines[1..].iter().enumerate() {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f[0], i.to_string());
        assert_eq!(f[1], data.class_names[truth[i]], "{line}");
        if !f[2].is_empty() {
            assert_eq!(f[2], f[1], "a revealed label is the truth: {line}");
            painted += 1;
        }
        assert_eq!(f[3], ev.clusters[i].to_string(), "{line}");
    }
    let labelled = s.store.as_ref().expect("store").labels().n_labelled();
    assert!(
        painted > 0 && painted == labelled,
        "{painted} vs {labelled}"
    );
    let m = read("labels.npy");
    assert_eq!(m.dim(), (n, 3));
    for i in 0..n {
        assert_eq!(m[[i, 0]], truth[i] as f64);
        assert_eq!(m[[i, 2]], ev.clusters[i] as f64);
    }
    let clusters = std::fs::read_to_string(dir.join("clusters.csv")).expect("clusters.csv");
    assert_eq!(clusters.lines().count(), n + 1);
    // NMF is not a classifier: no predictions file.
    assert!(!dir.join("predictions.csv").exists());
    // No temporary file is left beside them.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .expect("ls")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");
}

/// "Save figures" draws the scatter (in the app's colours), the convergence plot, the basis
/// gallery and the confusion matrix of the shown run into the export folder, as PNG files
/// that decode, then as SVG once the format is switched.
#[test]
fn save_figures_writes_pngs_that_decode_and_svgs() {
    let mut h = loaded();
    run_and_evaluate(&mut h, 1);
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("figures");
    click_visible(&mut h, "Export folder");
    h.get_by_label("Export folder")
        .type_text(&dir.display().to_string());
    h.step();
    click_visible(&mut h, "Save figures");
    step_until(&mut h, "the figures", MAX_STEPS, |a| {
        !exports_of(a).saving_figures && a.session().status.text.contains("Saved figures")
    });
    let s = h.state().session();
    assert!(!s.status.is_error, "{:?}", s.status);
    let decode = |name: &str| {
        let bytes = std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        image::load_from_memory(&bytes)
            .unwrap_or_else(|e| panic!("{name} does not decode: {e}"))
            .to_rgb8()
    };
    let non_white = |img: &image::RgbImage| img.pixels().filter(|p| p.0 != [255; 3]).count();
    let scatter = decode("scatter.png");
    // The plot is 760 px wide; the legend of every class sits beside it.
    assert_eq!(scatter.height(), 560);
    assert!(scatter.width() > 760, "{:?}", scatter.dimensions());
    // Every class the scatter shows is drawn in the app's colour of that class.
    let groups = &h.state().view().scatter.groups;
    assert!(groups.len() >= 2, "{} groups", groups.len());
    for g in groups.iter().filter(|g| !g.points.is_empty()) {
        let c = [g.color.r(), g.color.g(), g.color.b()];
        assert!(
            scatter.pixels().any(|p| p.0 == c),
            "no pixel of {}'s colour {c:?} in scatter.png",
            g.name
        );
    }
    for name in ["convergence.png", "gallery.png", "confusion.png"] {
        let img = decode(name);
        assert!(non_white(&img) > 1000, "{name} is nearly blank");
    }
    let status = s.status.text.clone();
    for name in [
        "scatter.png",
        "convergence.png",
        "gallery.png",
        "confusion.png",
    ] {
        assert!(status.contains(name), "{status}");
    }

    click_visible(&mut h, "SVG");
    assert_eq!(
        exports_of(h.state()).figure_format,
        nmf_playground::figures::Format::Svg
    );
    click_visible(&mut h, "Save figures");
    step_until(&mut h, "the SVG figures", MAX_STEPS, |a| {
        !exports_of(a).saving_figures && a.session().status.text.contains("scatter.svg")
    });
    for name in [
        "scatter.svg",
        "convergence.svg",
        "gallery.svg",
        "confusion.svg",
    ] {
        let text =
            std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            text.starts_with("<svg") && text.trim_end().ends_with("</svg>"),
            "{name}"
        );
    }
    let svg = std::fs::read_to_string(dir.join("scatter.svg")).expect("scatter.svg");
    let n = h.state().session().dataset.as_ref().expect("data").n();
    assert!(svg.matches("<circle").count() >= n, "one circle per sample");
    // Atomic writes leave no temporary file.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .expect("ls")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 8, "{names:?}");
}

/// The scores and the history rows are prepared when a run finishes or is evaluated, not
/// per frame: frames drawn with nothing new leave the preparation count alone, the next run's
/// end and evaluation raise it, and the panel shows what was prepared.
#[test]
fn scores_and_history_are_prepared_when_a_run_ends_not_per_frame() {
    let mut h = loaded();
    let preparations = |h: &Harness<'static, App>| {
        h.state()
            .feature::<Results>()
            .expect("results")
            .preparations()
    };
    run_and_evaluate(&mut h, 1);
    let after_first = preparations(&h);
    // A run added, a run scored, its scores on screen: at least three preparations.
    assert!(after_first >= 3, "{after_first}");
    h.run_steps(30);
    assert_eq!(
        preparations(&h),
        after_first,
        "frames with nothing new prepared again"
    );
    let ev = h.state().session().evaluation.clone().expect("evaluation");
    for line in metric_lines(&ev) {
        h.get_by_label(&line);
    }
    h.get_by_label("run 1");
    run_and_evaluate(&mut h, 2);
    let after_second = preparations(&h);
    assert!(after_second > after_first, "{after_first} → {after_second}");
    h.get_by_label("run 2");
    h.run_steps(30);
    assert_eq!(preparations(&h), after_second);
}
