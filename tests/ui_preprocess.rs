//! The Data panel shows what `auto` preprocessing resolved to and why, and an explicit choice
//! replaces it (egui_kittest, driven by the panel's own widgets).

#![cfg(feature = "gui")]

mod common;

use common::{MAX_STEPS, loaded, step_until};
use eframe::egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use nmf_playground::engine::data::Preprocess;

#[test]
fn the_data_panel_shows_the_resolved_preprocessing_and_an_explicit_choice_replaces_it() {
    let dir = std::env::temp_dir().join(format!("nmfp-ui-auto-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let csv = dir.join("mixed.csv");
    // Two features: one varies by 0.13, the other by 1680; labelled.
    std::fs::write(
        &csv,
        "a,b,label\n0.10,20,x\n0.23,1700,y\n0.20,900,x\n0.15,400,y\n",
    )
    .expect("write csv");

    let mut h = loaded();
    assert_eq!(h.state().settings().preprocess, Preprocess::Auto);
    h.get_by_label("Path").click();
    h.step();
    h.get_by_label("Path").type_text(&csv.display().to_string());
    h.step();
    h.get_by_label("Load").click();
    step_until(&mut h, "the table to load", MAX_STEPS, |a| {
        a.session()
            .dataset
            .as_ref()
            .is_some_and(|d| d.source.ends_with("mixed.csv"))
    });
    h.run_steps(2);
    let d = h.state().session().dataset.clone().expect("dataset");
    assert_eq!(d.preprocess, Preprocess::MinMaxL2);
    h.get_by_label(
        "preprocessing: auto: features range from 0.13 to 1680, each scaled to [0, 1], then \
         samples to unit length",
    );

    // The user picks L2: the table is loaded again with it, and the panel says so.
    h.get_by_role_and_label(Role::ComboBox, "Preprocess")
        .click();
    h.run_steps(2);
    h.get_by_label("L2 (unit samples)").click();
    h.run_steps(2);
    assert_eq!(h.state().settings().preprocess, Preprocess::L2);
    step_until(&mut h, "the reload with L2", MAX_STEPS, |a| {
        a.session()
            .dataset
            .as_ref()
            .is_some_and(|d| d.preprocess == Preprocess::L2)
    });
    h.run_steps(2);
    h.get_by_label("preprocessing: L2 (unit samples)");
    assert_eq!(
        h.query_all_by_label_contains("preprocessing: auto").count(),
        0
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn picking_a_model_that_compares_samples_prepares_a_compositional_table_for_it() {
    use nmf_playground::engine::constraints::Triplet;
    use nmf_playground::gui::{WorkerState, constraints, data, runs};

    let dir = tempfile::tempdir().expect("tempdir");
    let csv = dir.path().join("shares.csv");
    write_compositional(&csv).expect("write csv");
    let mut h = loaded();
    h.state_mut().settings_mut().model = "nmf".into();
    h.state_mut().send(data::Command::LoadPath(csv.clone()));
    step_until(&mut h, "the table to load", MAX_STEPS, |a| {
        a.session()
            .dataset
            .as_ref()
            .is_some_and(|d| d.source.ends_with("shares.csv"))
    });
    h.run_steps(2);
    let d = h.state().session().dataset.clone().expect("dataset");
    assert_eq!(
        d.preprocess,
        Preprocess::MinMaxL2,
        "NMF: scaled per feature"
    );
    let scaled = "each scaled to [0, 1], then samples to unit length";
    assert_eq!(
        h.query_all_by_label_contains(scaled).count(),
        1,
        "the Data panel says why: {:?}",
        d.preprocess_reason
    );
    // The user's triplet and painted labels, which must survive the model switch.
    h.state_mut()
        .send(constraints::Command::AddTriplet(Triplet::new(0, 2, 1)));
    h.state_mut().view_mut().paint_class = "y".into();
    h.state_mut()
        .send(constraints::Command::PaintLabels(vec![1, 3]));
    h.run_steps(2);
    let constraints = |h: &egui_kittest::Harness<'static, nmf_playground::gui::App>| {
        let store = h.state().session().store.as_ref().expect("store");
        (
            store.triplets().to_vec(),
            store.labels().as_slice().to_vec(),
        )
    };
    let before = constraints(&h);
    assert_eq!(before.0.len(), 1);
    assert_eq!(before.1.iter().flatten().count(), 2);

    // PSMF, picked in the model panel: the table is prepared again, kept on its scale.
    h.get_by_role_and_label(Role::ComboBox, "Model").click();
    h.run_steps(2);
    h.get_by_label("PSMF").click();
    h.run_steps(2);
    assert_eq!(h.state().settings().model, "psmf");
    step_until(&mut h, "X prepared for PSMF", MAX_STEPS, |a| {
        a.session()
            .dataset
            .as_ref()
            .is_some_and(|d| d.preprocess == Preprocess::L2)
    });
    h.run_steps(2);
    h.get_by_label(
        "preprocessing: auto: every sample sums to 100–100 (shares of one whole), kept on that \
         scale for a model that compares samples, samples to unit length",
    );
    assert_eq!(constraints(&h), before, "the same samples: nothing dropped");
    let s = h.state().session();
    assert!(s.opening.is_none() && s.pending.is_none() && s.load_error.is_none());
    assert!(
        s.status.text.starts_with("Data prepared for PSMF"),
        "{:?}",
        s.status
    );

    // A run records the preprocessing it had.
    h.state_mut().settings_mut().max_iter = 20;
    h.get_by_label("Run").click();
    step_until(&mut h, "the PSMF run", MAX_STEPS, |a| {
        matches!(a.run().worker, WorkerState::Finished(_))
    });
    h.run_steps(2);
    let row = h.state().session().history.last().expect("a run").clone();
    assert_eq!(row.model, "PSMF");
    assert_eq!(row.preprocess, Some(Preprocess::L2));

    // Back to NMF, and Run at once: refused until X is prepared for NMF (scaled per feature
    // again); an explicit choice is never replaced.
    h.state_mut().settings_mut().model = "nmf".into();
    h.state_mut().send(runs::Command::Run);
    h.step();
    let s = h.state().session();
    assert!(
        s.status.is_error
            && s.status
                .text
                .starts_with("Preparing the data for NMF first"),
        "{:?}",
        s.status
    );
    assert!(!h.state().run().worker.is_active());
    step_until(&mut h, "X prepared for NMF", MAX_STEPS, |a| {
        a.session()
            .dataset
            .as_ref()
            .is_some_and(|d| d.preprocess == Preprocess::MinMaxL2)
    });
    h.state_mut().settings_mut().preprocess = Preprocess::L2;
    h.state_mut().send(data::Command::Reload);
    step_until(&mut h, "the reload with L2", MAX_STEPS, |a| {
        a.session().loading.is_none()
            && a.session()
                .dataset
                .as_ref()
                .is_some_and(|d| d.preprocess == Preprocess::L2)
    });
    h.state_mut().settings_mut().model = "gnmf".into();
    h.run_steps(5);
    h.state_mut().settings_mut().model = "nmf".into();
    h.run_steps(5);
    let s = h.state().session();
    assert!(s.loading.is_none());
    assert_eq!(
        s.dataset.as_ref().map(|d| d.preprocess),
        Some(Preprocess::L2)
    );
    assert_eq!(constraints(&h), before);
}

/// A compositional table with mixed ranges (every sample sums to 100; a trace component
/// varies by 0.8, the main ones by about 20), two labelled classes: `auto` scales it per
/// feature for NMF and keeps it on its scale for PSMF, a model that compares samples.
fn write_compositional(path: &std::path::Path) -> std::io::Result<()> {
    let mut s = String::from("main,rest,trace,label\n");
    for i in 0..40 {
        let class = i % 2;
        let frac = (i / 2) as f64 / 19.0;
        let main = 60.0 + 20.0 * (0.45 * frac + 0.55 * class as f64);
        let trace = 0.1 + 0.8 * ((i * 7) % 10) as f64 / 9.0;
        let rest = 100.0 - main - trace;
        s.push_str(&format!("{main},{rest},{trace},{}\n", ["x", "y"][class]));
    }
    std::fs::write(path, s)
}
