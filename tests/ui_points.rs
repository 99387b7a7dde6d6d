//! UI tests of "explore the points" (issue 21 point 4) with egui_kittest, on small hand-made
//! datasets: the search field rings the samples whose name or class matches and Enter goes
//! to them; the Select tool's lasso selects exactly the samples inside it; Isolate shows only
//! the selection (and keeps doing so through a run's snapshots) until Show all; the neighbour
//! window's lists equal brute force in X and in H.

#![cfg(feature = "gui")]
#![expect(clippy::expect_used, reason = "test helpers fail loudly")]

#[expect(
    dead_code,
    reason = "this file builds its own dataset: the shared `loaded` is unused here"
)]
mod common;
#[path = "common/pointer.rs"]
mod pointer;
#[path = "common/scatter.rs"]
mod scatter;

use common::{MAX_STEPS, harness, step_until};
use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use egui_plot::PlotPoint;
use ndarray::Array2;
use nmf_playground::engine::data::Dataset;
use nmf_playground::gui::{App, SnapshotKey, Tool, WorkerState};
use pointer::click_at;

/// Three well-separated groups of `per` samples in 4 features, named `cat_i.png`,
/// `dog_i.png`, `owl_i.png`, labelled `felines`, `canines`, `birds`; a little deterministic
/// jitter so no two samples coincide.
fn animals(per: usize) -> Dataset {
    let n = 3 * per;
    let mut seed = 7u64;
    let mut jitter = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let centres = [
        [8.0, 1.0, 1.0, 1.0],
        [1.0, 8.0, 1.0, 1.0],
        [1.0, 1.0, 8.0, 2.0],
    ];
    let mut x = Array2::zeros((4, n));
    for i in 0..n {
        for f in 0..4 {
            x[[f, i]] = centres[i / per][f] + jitter();
        }
    }
    let labels = (0..n).map(|i| i / per).collect();
    let classes = ["felines", "canines", "birds"].map(str::to_owned).to_vec();
    let mut d = Dataset::from_parts(x, Some(labels), classes, "animals");
    let kinds = ["cat", "dog", "owl"];
    d.sample_names = (0..n)
        .map(|i| format!("{}_{i}.png", kinds[i / per]))
        .collect();
    d
}

/// The app on `data`, its scatter (the PCA of X before a run) drawn.
fn on(data: Dataset) -> Harness<'static, App> {
    let mut h = harness();
    step_until(&mut h, "the sample to load", MAX_STEPS, |a| {
        a.session().dataset.is_some()
    });
    h.state_mut().set_dataset(data);
    step_until(&mut h, "the scatter of X", MAX_STEPS, |a| {
        a.view().scatter.point_count() > 0 && scatter::of(a).plot_transform.is_some()
    });
    h.run_steps(2);
    h
}

/// Screen position of sample `i` on the scatter.
fn screen_of(h: &Harness<'static, App>, i: usize) -> egui::Pos2 {
    let v = h.state().view();
    let t = scatter::of(h.state()).plot_transform.expect("transform");
    t.position_from_point(&v.scatter.by_sample[i])
}

/// Step until the scatter's transform (its frame on screen and its bounds) is the same for
/// three frames in a row, so that positions taken from it are the ones the next frames use.
fn settle(h: &mut Harness<'static, App>) {
    let key = |h: &Harness<'static, App>| {
        scatter::of(h.state())
            .plot_transform
            .map(|t| (t.frame().min, t.frame().max, *t.bounds()))
    };
    let mut same = 0;
    let mut last = key(h);
    for _ in 0..MAX_STEPS {
        h.step();
        let now = key(h);
        same = if now.is_some() && now == last {
            same + 1
        } else {
            0
        };
        if same >= 3 {
            return;
        }
        last = now;
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("the scatter's transform did not settle: {last:?}");
}

/// Drag the primary button along the outline of `r` (in plot coordinates), one pointer
/// event per frame, each point placed on screen through the transform the scatter drew
/// with in the frame before (so a plot that moves under the drag does not bend the lasso).
fn lasso_rect(h: &mut Harness<'static, App>, r: egui_plot::PlotBounds) {
    let (lo, hi) = (r.min(), r.max());
    let corners = [
        [lo[0], hi[1]],
        [hi[0], hi[1]],
        [hi[0], lo[1]],
        [lo[0], lo[1]],
    ];
    let mut path = Vec::new();
    for (a, b) in corners.iter().zip(corners.iter().cycle().skip(1)) {
        for s in 0..24 {
            let t = f64::from(s) / 24.0;
            path.push(PlotPoint::new(
                a[0] + t * (b[0] - a[0]),
                a[1] + t * (b[1] - a[1]),
            ));
        }
    }
    path.push(PlotPoint::new(corners[0][0], corners[0][1]));
    let on_screen = |h: &Harness<'static, App>, p: &PlotPoint| {
        scatter::of(h.state())
            .plot_transform
            .expect("transform")
            .position_from_point(p)
    };
    let first = on_screen(h, &path[0]);
    h.hover_at(first);
    h.step();
    h.drag_at(on_screen(h, &path[0]));
    h.step();
    for p in &path[1..] {
        let at = on_screen(h, p);
        h.hover_at(at);
        h.step();
    }
    h.event(egui::Event::PointerButton {
        pos: on_screen(h, &path[0]),
        button: egui::PointerButton::Primary,
        pressed: false,
        modifiers: egui::Modifiers::NONE,
    });
    h.step();
}

/// The samples the scatter draws, ascending.
fn shown(h: &Harness<'static, App>) -> Vec<usize> {
    let mut s: Vec<usize> = h
        .state()
        .view()
        .scatter
        .groups
        .iter()
        .flat_map(|g| g.indices.iter().copied())
        .collect();
    s.sort_unstable();
    s
}

/// A rectangle around the samples `inside`, in plot coordinates, padded by `pad` × the
/// spread of all samples; panics when another sample lies within twice that pad of it (the
/// test would then depend on the boundary). Plot coordinates come from the projection alone,
/// so the rectangle does not depend on where the plot sits on screen.
fn rect_around(h: &Harness<'static, App>, inside: &[usize], pad: f64) -> egui_plot::PlotBounds {
    let v = h.state().view();
    let all = &v.scatter.by_sample;
    assert_eq!(all.len(), 30, "the scatter shows this test's data");
    let spread = |f: fn(&PlotPoint) -> f64| {
        let vals = all.iter().map(f);
        vals.clone().fold(f64::MIN, f64::max) - vals.fold(f64::MAX, f64::min)
    };
    let margin = pad * spread(|p| p.x).max(spread(|p| p.y));
    let mut r = egui_plot::PlotBounds::NOTHING;
    for &i in inside {
        r.extend_with(&all[i]);
    }
    let mut near = r;
    r.expand_x(margin);
    r.expand_y(margin);
    near.expand_x(2.0 * margin);
    near.expand_y(2.0 * margin);
    for (i, p) in all.iter().enumerate().filter(|(i, _)| !inside.contains(i)) {
        let (lo, hi) = (near.min(), near.max());
        assert!(
            !(lo[0]..=hi[0]).contains(&p.x) || !(lo[1]..=hi[1]).contains(&p.y),
            "sample {i} at {p:?} is near the lasso {near:?}"
        );
    }
    r
}

/// Typing rings the samples whose name or class contains the text, case-insensitively, with
/// their count; Enter pins the first match and centres on it, again the next.
#[test]
fn typing_in_the_search_field_rings_the_matching_samples() {
    let mut h = on(animals(10));
    h.get_by_label("Search samples").focus();
    h.get_by_label("Search samples").type_text("DOG_");
    h.run_steps(2);
    let want: Vec<usize> = (10..20).collect();
    assert_eq!(h.state().view().points.matches, want);
    h.get_by_label("10 matches");
    // Class names match too: "feli" is the felines, the cats.
    h.get_by_label("Search samples").focus();
    for _ in 0..4 {
        h.key_press(egui::Key::Backspace);
    }
    h.get_by_label("Search samples").type_text("feli");
    h.run_steps(2);
    assert_eq!(h.state().view().points.matches, (0..10).collect::<Vec<_>>());
    // "_1": cat_1 and dog_10 … dog_19.
    h.get_by_label("Search samples").focus();
    for _ in 0..4 {
        h.key_press(egui::Key::Backspace);
    }
    h.get_by_label("Search samples").type_text("_1");
    h.run_steps(2);
    let want: Vec<usize> = std::iter::once(1).chain(10..20).collect();
    assert_eq!(h.state().view().points.matches, want);
    h.get_by_label("11 matches");
    h.key_press(egui::Key::Enter);
    h.run_steps(2);
    assert_eq!(
        h.state().view().points.focus,
        Some(1),
        "Enter pins the first"
    );
    h.get_by_label("1/11 matches");
    h.key_press(egui::Key::Enter);
    h.run_steps(2);
    assert_eq!(h.state().view().points.focus, Some(10), "and then the next");
    // Centred on it: the match sits in the middle of the plot.
    let frame = scatter::of(h.state())
        .plot_transform
        .expect("transform")
        .frame()
        .center();
    assert!(
        screen_of(&h, 10).distance(frame) < 2.0,
        "{:?} vs {frame:?}",
        screen_of(&h, 10)
    );
}

/// The Select tool's lasso selects exactly the samples inside it (Shift adds); Isolate shows
/// only them, projected on their own, through a run's snapshots, until Show all.
#[test]
fn a_lasso_selects_the_samples_inside_and_isolate_shows_only_them() {
    let mut h = on(animals(10));
    h.get_by_label("Select").click();
    h.run_steps(2);
    assert_eq!(scatter::of(h.state()).tool, Tool::Select);
    settle(&mut h);
    let owls: Vec<usize> = (20..30).collect();
    let r = rect_around(&h, &owls, 0.05);
    lasso_rect(&mut h, r);
    h.run_steps(2);
    let mut sel = h.state().view().explore.selection.clone();
    sel.sort_unstable();
    assert_eq!(sel, owls, "exactly the owls");
    h.get_by_label("10 selected");

    h.get_by_label("Isolate").click();
    step_until(&mut h, "the isolated projection", MAX_STEPS, |a| {
        a.view()
            .points
            .isolation
            .as_ref()
            .is_some_and(|i| i.coords.is_some())
    });
    h.run_steps(2);
    assert_eq!(shown(&h), owls, "only the selection is drawn");
    assert_eq!(h.state().view().scatter.point_count(), 10);
    assert!(h.state().view().scatter.position(0).is_none());
    h.get_by_label_contains("Isolated: PCA-2D of X of the 10 selected samples");

    // A run: each new snapshot is projected again, still only the selection.
    h.get_by_label("Run").click();
    step_until(&mut h, "the run to finish", MAX_STEPS, |a| {
        matches!(a.run().worker, WorkerState::Finished(_))
    });
    let last = h.state().run().snapshot.clone().expect("snapshot");
    step_until(&mut h, "the last snapshot isolated", MAX_STEPS, |a| {
        a.view().points.isolation.as_ref().is_some_and(|i| {
            i.pending.is_none() && i.done.as_ref() == Some(&SnapshotKey::of(&last))
        })
    });
    h.run_steps(2);
    assert_eq!(shown(&h), owls);
    h.get_by_label_contains("Isolated: PCA-2D of H of the 10 selected samples");

    h.get_by_label("Show all").click();
    h.run_steps(2);
    assert!(h.state().view().points.isolation.is_none());
    assert_eq!(shown(&h), (0..30).collect::<Vec<_>>());

    // Clear selection empties it, and the status line no longer counts the old one.
    h.get_by_label("Clear selection").click();
    h.run_steps(2);
    assert!(h.state().view().explore.selection.is_empty());
    h.get_by_label("Selection cleared");
}

/// Brute force: the `p` nearest columns of `x` to column `i`, ties by index.
fn brute(x: &Array2<f64>, i: usize, p: usize) -> Vec<usize> {
    let mut d: Vec<(f64, usize)> = (0..x.ncols())
        .filter(|&j| j != i)
        .map(|j| {
            let diff = &x.column(i) - &x.column(j);
            (diff.dot(&diff), j)
        })
        .collect();
    d.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    d.into_iter().take(p).map(|(_, j)| j).collect()
}

/// Clicking a sample in Inspect mode pins it; the neighbour window lists its 8 nearest in X
/// and in H as brute force finds them, and says how many are shared.
#[test]
fn neighbours_in_x_and_in_h_equal_brute_force() {
    let mut h = on(animals(12));
    h.get_by_label("Run").click();
    step_until(&mut h, "the run to finish", MAX_STEPS, |a| {
        matches!(a.run().worker, WorkerState::Finished(_))
    });
    h.run_steps(3);
    h.get_by_label("Neighbours").click();
    h.run_steps(2);
    assert!(h.state().view().points.show_neighbours);
    // A sample drawn at least 12 px from any other, so the click picks it.
    let n = 36;
    let pos: Vec<egui::Pos2> = (0..n).map(|i| screen_of(&h, i)).collect();
    let frame = scatter::of(h.state())
        .plot_transform
        .expect("transform")
        .frame()
        .shrink(10.0);
    let s = (0..n)
        .find(|&i| {
            frame.contains(pos[i]) && (0..n).all(|j| j == i || pos[j].distance(pos[i]) > 12.0)
        })
        .expect("an isolated sample");
    click_at(&mut h, pos[s]);
    h.run_steps(2);
    assert_eq!(h.state().view().points.focus, Some(s));
    let snap = h.state().run().snapshot.clone().expect("snapshot");
    let key = SnapshotKey::of(&snap);
    step_until(&mut h, "the neighbours", MAX_STEPS, |a| {
        let c = &a.view().points.neighbours;
        c.in_x(s).is_some() && c.in_h(s, &key).is_some()
    });
    h.run_steps(2);
    let data = h.state().session().dataset.clone().expect("data");
    let c = &h.state().view().points.neighbours;
    let in_x: Vec<usize> = c.in_x(s).expect("x").iter().map(|e| e.0).collect();
    let in_h: Vec<usize> = c.in_h(s, &key).expect("h").iter().map(|e| e.0).collect();
    assert_eq!(in_x, brute(&data.x, s, 8), "in X");
    assert_eq!(in_h, brute(&snap.h, s, 8), "in H");
    let both = in_x.iter().filter(|i| in_h.contains(i)).count();
    h.get_by_label(&format!("{both} of 8 shared (marked *)"));
    h.get_by_label_contains(&format!("#{s} {}", data.sample_names[s]));
}
