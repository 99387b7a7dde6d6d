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
