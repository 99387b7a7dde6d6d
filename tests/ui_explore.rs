//! UI tests of the exploration views (issue 21): the basis gallery, the teaching controls,
//! the suggested triplets, the first-run tour and the shortcuts overlay. Each is driven by
//! clicks on accessible labels, and the app's state is checked after.

#![cfg(feature = "gui")]

mod common;

use common::{MAX_STEPS, harness, loaded, step_until};
use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use nmf_playground::engine::constraints::Triplet;
use nmf_playground::gui::gallery::BasisGallery;
use nmf_playground::gui::suggest::Suggest;
use nmf_playground::gui::tour::Tour;
use nmf_playground::gui::{App, Settings, WorkerState, data};
use std::time::Duration;

/// Settings for a run that lasts long enough to be stepped.
fn make_long(h: &mut Harness<'static, App>) {
    let s = h.state_mut().settings_mut();
    s.max_iter = 1_000_000;
    s.tol = 0.0;
}

/// Open a menu of the bar and click one of its entries.
fn menu(h: &mut Harness<'static, App>, menu: &str, item: &str) {
    h.get_by_label(menu).click();
    h.run_steps(2);
    h.get_by_label(item).click();
    h.run_steps(2);
}

/// The tour's state.
fn tour_of(app: &App) -> &Tour {
    app.feature::<Tour>()
        .unwrap_or_else(|| panic!("the app has the tour"))
}

/// After a run, the gallery shows one image per basis, ordered by the norm of H's rows;
/// clicking a basis rings exactly the samples whose largest H entry is on it, and clicking
/// it again clears them.
#[test]
fn the_basis_gallery_orders_the_bases_and_a_click_selects_their_samples() {
    let mut h = loaded();
    h.get_by_label("Run").click();
    step_until(&mut h, "the run to finish", MAX_STEPS, |a| {
        matches!(a.run().worker, WorkerState::Finished(_))
    });
    h.run_steps(2);
    menu(&mut h, "View", "Basis gallery");
    assert!(h.state().feature::<BasisGallery>().expect("gallery").show);
    h.run_steps(2);
    let snap = h.state().run().snapshot.clone().expect("snapshot");
    let k = snap.h.nrows();
    let g = &h
        .state()
        .feature::<BasisGallery>()
        .expect("gallery")
        .gallery;
    assert_eq!(g.textures.len(), k);
    assert_eq!(g.order.len(), k);
    for pair in g.order.windows(2) {
        assert!(g.norms[pair[0]] >= g.norms[pair[1]], "{:?}", g.norms);
    }
    h.get_by_label("basis 1").click();
    h.run_steps(2);
    let want: Vec<usize> = (0..snap.h.ncols())
        .filter(|&i| {
            let col = snap.h.column(i);
            let best = (0..k).fold(0, |b, c| if col[c] > col[b] { c } else { b });
            best == 0 && col[0] > 0.0
        })
        .collect();
    let v = &h.state().view().explore;
    assert_eq!(v.basis, Some(0));
    assert_eq!(v.selection, want);
    assert!(!want.is_empty(), "some samples load on basis 1");
    h.get_by_label("basis 1").click();
    h.run_steps(2);
    assert!(h.state().view().explore.selection.is_empty());
}

/// For a table, the gallery is a heat map of W with one row per basis and the table's own
/// column names under the columns (the label column is not a feature).
#[test]
fn the_gallery_of_a_table_names_its_features_under_the_heat_map() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("petals.csv");
    let mut text = String::from("petal_len,colour_index,label,stem_mm\n");
    for i in 0..30 {
        let c = i % 3;
        text.push_str(&format!(
            "{},{},{c},{}\n",
            1 + c * 3 + i % 2,
            5 - c + i % 3,
            2 + (i * 7) % 5
        ));
    }
    std::fs::write(&path, text).unwrap();
    let mut h = loaded();
    h.state_mut().send(data::Command::LoadPath(path));
    step_until(&mut h, "the table to load", MAX_STEPS, |a| {
        a.session().dataset.as_ref().is_some_and(|d| d.n() == 30)
    });
    let names = h
        .state()
        .session()
        .dataset
        .as_ref()
        .unwrap()
        .feature_names
        .clone();
    assert_eq!(names, ["petal_len", "colour_index", "stem_mm"]);
    h.state_mut().settings_mut().k = 2;
    h.run_steps(1);
    h.get_by_label("Run").click();
    step_until(&mut h, "the run to finish", MAX_STEPS, |a| {
        matches!(a.run().worker, WorkerState::Finished(_))
    });
    menu(&mut h, "View", "Basis gallery");
    h.run_steps(2);
    assert_eq!(
        h.state()
            .feature::<BasisGallery>()
            .expect("gallery")
            .gallery
            .order
            .len(),
        2
    );
    h.get_by_label("basis 2");
    for name in ["petal_len", "colour_index", "stem_mm"] {
        h.get_by_label(name);
    }
}

/// "Reset to start" starts the model held after its first iteration; each "Step" moves it by
/// one iteration and it holds there; a second reset gives the same start bit for bit (same
/// seed); the update rule and the objective at the current iteration are shown.
#[test]
fn teaching_controls_reset_hold_and_step_one_iteration() {
    let mut h = loaded();
    make_long(&mut h);
    h.get_by_label("Teaching controls").click();
    h.run_steps(2);
    h.get_by_label("Reset to start").click();
    step_until(&mut h, "the held start", MAX_STEPS, |a| {
        a.run().worker == WorkerState::Paused && a.run().snapshot.is_some()
    });
    // Let in-flight events land, then the iteration must stay put.
    for _ in 0..20 {
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    let start_it = h.state().run().progress.iteration;
    let start_h = h
        .state()
        .run()
        .snapshot
        .clone()
        .expect("snapshot")
        .h
        .clone();
    assert_eq!(start_it, 1, "held after the first iteration");
    for _ in 0..20 {
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(h.state().run().progress.iteration, start_it, "held");
    for n in 1..=2 {
        h.get_by_label("Step").click();
        step_until(&mut h, "one iteration", MAX_STEPS, |a| {
            a.run().progress.iteration >= start_it + n
        });
        for _ in 0..20 {
            h.step();
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(h.state().run().progress.iteration, start_it + n);
        assert_eq!(h.state().run().worker, WorkerState::Paused);
        let snap_it = h.state().run().snapshot.as_ref().map(|s| s.iteration);
        assert_eq!(snap_it, Some(start_it + n), "the scatter shows the step");
    }
    h.get_by_label("NMF update");
    h.get_by_label_contains("(docs/models.md §3.1)");
    h.get_by_label_contains(&format!("iteration {}: objective ", start_it + 2));
    h.get_by_label("Reset to start").click();
    step_until(&mut h, "the held start again", MAX_STEPS, |a| {
        a.run().worker == WorkerState::Paused
            && a.run()
                .snapshot
                .as_ref()
                .is_some_and(|s| s.iteration == start_it)
    });
    let again = h
        .state()
        .run()
        .snapshot
        .clone()
        .expect("snapshot")
        .h
        .clone();
    assert_eq!(again, start_h, "same seed, same start");
}

/// "Suggest" proposes a triplet among kNN candidates; "j closer" adds it as an ordinary
/// undoable triplet and the next suggestion is another question; "skip" records it without
/// a triplet; neither comes back.
#[test]
fn suggested_triplets_are_answered_in_one_click_and_never_repeat() {
    let mut h = loaded();
    h.get_by_label("Suggest").click();
    step_until(&mut h, "a suggestion", MAX_STEPS, |a| {
        a.view().explore.suggestion.is_some()
    });
    h.run_steps(2);
    let first = h
        .state()
        .view()
        .explore
        .suggestion
        .expect("suggestion")
        .triplet;
    let n = h.state().session().dataset.as_ref().expect("data").n();
    assert!(first.validate(n).is_ok());
    // The answer row sits at the foot of the left panel, under the two-line tour strip:
    // scroll it into view first.
    h.hover_at(egui::pos2(5.0, 5.0));
    h.get_by_label("j closer").scroll_to_me();
    h.run_steps(20);
    h.get_by_label("j closer").click();
    step_until(&mut h, "the next suggestion", MAX_STEPS, |a| {
        a.view()
            .explore
            .suggestion
            .is_some_and(|s| s.triplet != first)
    });
    h.run_steps(2);
    let store = h.state().session().store.as_ref().expect("store");
    assert_eq!(store.triplets(), &[first]);
    let second = h
        .state()
        .view()
        .explore
        .suggestion
        .expect("suggestion")
        .triplet;
    let same_question = |a: Triplet, b: Triplet| a == b || a == Triplet::new(b.i, b.q, b.j);
    assert!(!same_question(second, first));
    // The answer row sits at the foot of the left panel: scroll it into view first (a
    // tooltip or the panel's edge must not take the click).
    h.hover_at(egui::pos2(5.0, 5.0));
    h.get_by_label("skip").scroll_to_me();
    h.run_steps(20);
    h.get_by_label("skip").click();
    step_until(&mut h, "the third suggestion", MAX_STEPS, |a| {
        a.view()
            .explore
            .suggestion
            .is_some_and(|s| s.triplet != second)
    });
    h.run_steps(2);
    let third = h
        .state()
        .view()
        .explore
        .suggestion
        .expect("suggestion")
        .triplet;
    assert!(!same_question(third, first) && !same_question(third, second));
    assert!(
        h.state()
            .feature::<Suggest>()
            .expect("suggest")
            .skipped
            .contains(&second)
    );
    assert_eq!(
        h.state()
            .session()
            .store
            .as_ref()
            .expect("store")
            .triplets()
            .len(),
        1
    );
    h.get_by_label("q closer").click();
    step_until(&mut h, "the fourth suggestion", MAX_STEPS, |a| {
        a.view()
            .explore
            .suggestion
            .is_some_and(|s| s.triplet != third)
    });
    let reversed = Triplet::new(third.i, third.q, third.j);
    let store = h.state().session().store.as_ref().expect("store");
    assert_eq!(store.triplets(), &[first, reversed]);
    h.get_by_label("Undo").click();
    h.run_steps(2);
    let store = h.state().session().store.as_ref().expect("store");
    assert_eq!(store.triplets(), &[first], "an answer is one undo step");
}

/// The tour opens on the very first start, steps with Next, is dismissed for good (a
/// persisted flag), and reopens from Help; `?` toggles the shortcuts overlay.
#[test]
fn the_first_run_tour_and_the_shortcuts_overlay() {
    let mut h = harness();
    h.run_steps(2);
    assert_eq!(tour_of(h.state()).step, Some(0));
    h.get_by_label("Next").click();
    h.run_steps(2);
    assert_eq!(tour_of(h.state()).step, Some(1));
    h.get_by_label_contains("Tour 2/4");
    h.get_by_label("Dismiss tour").click();
    h.run_steps(2);
    assert_eq!(tour_of(h.state()).step, None);
    assert!(h.state().settings().tour_seen);
    menu(&mut h, "Help", "Tour");
    assert_eq!(tour_of(h.state()).step, Some(0));

    h.event(egui::Event::Text("?".to_owned()));
    h.run_steps(2);
    assert!(tour_of(h.state()).show_shortcuts);
    h.get_by_label("Keyboard shortcuts");
    h.event(egui::Event::Text("?".to_owned()));
    h.run_steps(2);
    assert!(!tour_of(h.state()).show_shortcuts);

    // Settings restored with the tour seen: no tour.
    let seen = Settings {
        tour_seen: true,
        ..Settings::default()
    };
    let mut again = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_eframe(move |cc| App::with_settings(&cc.egui_ctx, seen.clone()));
    again.run_steps(2);
    assert_eq!(tour_of(again.state()).step, None);
}
