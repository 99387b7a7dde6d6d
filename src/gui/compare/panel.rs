//! The "Compare runs" window: two runs' layouts side by side, B's aligned to A's by
//! Procrustes, and a third view that morphs from one to the other. Hovering a point in any
//! view highlights that sample in all three (with the main scatter's card: name, label,
//! thumbnail); a click selects it in all three. The triplets one run keeps and the other
//! violates are drawn in two colours, with their counts. The views share A's frame, so their
//! axes are linked: zooming one zooms all.

use eframe::egui;

use super::state::{CompareView, Comparison, Pane};
use crate::engine::data::Dataset;
use crate::gui::scatter::{
    self, HIGHLIGHT, HOVER_PX, MAX_DRAWN, PICK_PX, SIDE_LEGEND_FROM, nice_marks, segment,
};
use crate::gui::state::Session;
use crate::gui::style::ERROR_RED;
use crate::gui::textures::ThumbnailCache;
use egui::{Color32, RichText};
use egui_plot::{Legend, LineStyle, MarkerShape, Plot, PlotPoint, PlotPoints, Points};

/// Colour of the triplets kept by run A only, and by run B only.
pub const ONLY: [Color32; 2] = [
    Color32::from_rgb(230, 60, 220),
    Color32::from_rgb(0, 225, 255),
];

/// The window, when open (View ▸ Compare two runs, or the button under the history table).
pub fn window(
    ctx: &egui::Context,
    session: &Session,
    cv: &mut CompareView,
    thumbnails: &mut ThumbnailCache,
) {
    if !cv.open {
        return;
    }
    let content = ctx.content_rect();
    let size = egui::vec2(
        (content.width() - 40.0).clamp(300.0, 1180.0),
        (content.height() - 130.0).clamp(240.0, 600.0),
    );
    let mut open = true;
    egui::Window::new("Compare runs")
        .open(&mut open)
        .default_size(size)
        .default_pos(content.center() - size / 2.0 - egui::vec2(0.0, 20.0))
        .collapsible(false)
        .show(ctx, |ui| body(ui, session, cv, thumbnails));
    if !open {
        cv.open = false;
        cv.playing = false;
        cv.hovered = None;
    }
}

fn body(
    ui: &mut egui::Ui,
    session: &Session,
    cv: &mut CompareView,
    thumbnails: &mut ThumbnailCache,
) {
    if let Some(why) = &cv.refusal {
        ui.label(RichText::new(why).color(ERROR_RED));
        return;
    }
    let Some([a, b]) = cv.pair else {
        ui.label(
            "Select two runs in the history table (Results panel), then press \
             \"Compare side by side\".",
        );
        return;
    };
    let (Some(result), Some(data)) = (cv.result.clone(), session.dataset.as_deref()) else {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(format!("Aligning run {b} to run {a}..."));
        });
        return;
    };
    if data.fingerprint != result.fingerprint {
        ui.label(
            RichText::new("The loaded dataset is not the one these runs were fitted on.")
                .color(ERROR_RED),
        );
        return;
    }
    if cv.playing {
        let dt = f64::from(ui.input(|i| i.stable_dt)).clamp(0.0, 0.1);
        if cv.advance(dt) {
            ui.ctx().request_repaint();
        }
    }
    cv.rebuild_morph(data);
    header(ui, &result, cv);
    views(ui, data, &result, cv, thumbnails);
}

/// The alignment's parameters, the triplet counts (toggles) and the morph controls.
fn header(ui: &mut egui::Ui, c: &Comparison, cv: &mut CompareView) {
    alignment_line(ui, c);
    kept_toggles(ui, c, cv);
    morph_row(ui, c.runs, cv);
}

/// How run B's layout was turned, scaled and reflected onto run A's, and the residual.
fn alignment_line(ui: &mut egui::Ui, c: &Comparison) {
    let [a, b] = c.runs;
    let al = &c.alignment;
    let relative = if c.spread_a > 0.0 {
        format!(
            " ({:.0} % of run {a}'s spread)",
            100.0 * al.rms / c.spread_a
        )
    } else {
        String::new()
    };
    ui.label(
        RichText::new(format!(
            "Run {b}'s layout aligned to run {a}'s by Procrustes (least squares over all {} \
             samples): turned {:.1}°{}, scaled ×{:.3}; residual {:.3} RMS{relative}",
            c.layout_a.nrows(),
            al.degrees(),
            if al.is_reflection() {
                ", reflected"
            } else {
                ""
            },
            al.scale,
            al.rms,
        ))
        .weak(),
    );
}

/// The triplets kept by one run only (a toggle each, in its colour), by both, by neither.
fn kept_toggles(ui: &mut egui::Ui, c: &Comparison, cv: &mut CompareView) {
    let [a, b] = c.runs;
    ui.horizontal_wrapped(|ui| match &c.kept {
        Some(k) => {
            for (side, (run, only)) in [(a, &k.only_a), (b, &k.only_b)].into_iter().enumerate() {
                let mut shown = !cv.hide_only[side];
                let text = RichText::new(format!("kept by run {run} only: {}", only.len()))
                    .color(ONLY[side])
                    .strong();
                if ui
                    .checkbox(&mut shown, text)
                    .on_hover_text(format!(
                        "Mark the triplets run {run}'s H keeps and the other's violates \
                             (i–j solid, i–q dashed; at most {MAX_DRAWN})"
                    ))
                    .changed()
                {
                    cv.hide_only[side] = !shown;
                }
            }
            ui.label(
                RichText::new(format!(
                    "by both: {} · by neither: {} · of {} triplets (kept in H, as the \
                         Kept column)",
                    k.both(),
                    k.neither(),
                    c.triplets.len()
                ))
                .weak(),
            );
        }
        None => {
            ui.label(
                RichText::new(
                    "No triplets: generate or add some to see which ones each run keeps.",
                )
                .weak(),
            );
        }
    });
}

/// The morph slider, Play / Pause, "at run A / B" and "clear selection".
fn morph_row(ui: &mut egui::Ui, [a, b]: [u64; 2], cv: &mut CompareView) {
    ui.horizontal(|ui| {
        let l = ui.label("Morph");
        let slider = ui
            .add(egui::Slider::new(&mut cv.morph, 0.0..=1.0).fixed_decimals(2))
            .labelled_by(l.id)
            .on_hover_text(format!(
                "0: run {a}'s layout, 1: run {b}'s aligned layout; the points move in a \
                 straight line between them"
            ));
        // Only the user's own drag or click stops the play (the slider reports a change
        // while the value moves under it).
        if slider.dragged() || slider.clicked() {
            cv.playing = false;
        }
        let play = if cv.playing { "Pause" } else { "Play" };
        if ui
            .button(play)
            .on_hover_text("Move the morph from run A to run B over two seconds")
            .clicked()
        {
            if cv.playing {
                cv.playing = false;
            } else {
                cv.play();
            }
        }
        for (t, run) in [(0.0, a), (1.0, b)] {
            if ui
                .small_button(format!("at run {run}"))
                .on_hover_text(format!("Set the morph to run {run}'s layout"))
                .clicked()
            {
                cv.morph = t;
                cv.playing = false;
            }
        }
        if cv.selected.is_some()
            && ui
                .small_button("clear selection")
                .on_hover_text("Unselect the sample ringed in the three views")
                .clicked()
        {
            cv.selected = None;
        }
    });
}

/// The three views, side by side; then the hover and the click they saw.
fn views(
    ui: &mut egui::Ui,
    data: &Dataset,
    c: &Comparison,
    cv: &mut CompareView,
    thumbnails: &mut ThumbnailCache,
) {
    let [a, b] = c.runs;
    let gap = ui.spacing().item_spacing.x;
    let width = ((ui.available_width() - 2.0 * gap) / 3.0).max(120.0);
    // Two lines of titles above each plot.
    let height = (ui.available_height() - 44.0).max(150.0);
    let mut hovered = None;
    let mut clicked = None;
    let mut hover_card = None;
    ui.horizontal_top(|ui| {
        for pane in Pane::ALL {
            let (head, sub) = match pane {
                Pane::A => (c.titles[0][0].clone(), c.titles[0][1].clone()),
                Pane::B => (
                    c.titles[1][0].clone(),
                    format!("{} · aligned to run {a}", c.titles[1][1]),
                ),
                Pane::Morph => (
                    format!("Morph: run {a} to run {b} (aligned)"),
                    format!("t = {:.2}", cv.morph),
                ),
            };
            ui.vertical(|ui| {
                ui.set_width(width);
                ui.add(egui::Label::new(RichText::new(&head).strong()).truncate())
                    .on_hover_text(&head);
                ui.add(egui::Label::new(RichText::new(&sub).weak().small()).truncate())
                    .on_hover_text(&sub);
                let seen = pane_plot(ui, pane, data, c, cv, egui::vec2(width, height));
                if let Some((i, pos)) = seen.hovered {
                    hovered = Some(i);
                    hover_card = Some((seen.response.clone(), i, pos));
                }
                if seen.clicked.is_some() {
                    clicked = seen.clicked;
                }
            });
        }
    });
    if cv.hovered != hovered {
        cv.hovered = hovered;
        ui.ctx().request_repaint();
    }
    if let Some(i) = clicked {
        cv.selected = if cv.selected == Some(i) {
            None
        } else {
            Some(i)
        };
    }
    if let Some((response, i, pos)) = hover_card {
        let texture = thumbnails.get(ui.ctx(), data, i);
        response.on_hover_ui_at_pointer(|ui| {
            scatter::sample_card(ui, data, i, pos, texture.as_ref());
        });
    }
}

/// What one view saw this frame.
struct Seen {
    response: egui::Response,
    /// The sample under the pointer and where it is drawn.
    hovered: Option<(usize, PlotPoint)>,
    clicked: Option<usize>,
}

/// A pane's plot: equal axes linked across the three panes, the legend on pane A when the
/// groups are few.
fn plot_settings(pane: Pane, size: egui::Vec2, groups: usize) -> Plot<'static> {
    let mut plot = Plot::new(("compare", pane as usize))
        .width(size.x)
        .height(size.y)
        .data_aspect(1.0)
        .x_grid_spacer(nice_marks)
        .y_grid_spacer(nice_marks)
        .x_axis_formatter(scatter::mark_label)
        .y_axis_formatter(scatter::mark_label)
        .show_x(false)
        .show_y(false)
        .label_formatter(|_| None)
        .link_axis(egui::Id::unique("compare_axes"), [true, true]);
    if pane == Pane::A && groups <= SIDE_LEGEND_FROM {
        plot = plot.legend(Legend::default().follow_insertion_order(true));
    }
    plot
}

/// The triplets one run keeps and the other violates, in that run's colour (i–j solid, i–q
/// dashed; at most [`MAX_DRAWN`] a run), unless hidden.
fn kept_lines(
    plot_ui: &mut egui_plot::PlotUi<'_>,
    c: &Comparison,
    hide_only: [bool; 2],
    at: impl Fn(usize) -> Option<PlotPoint>,
) {
    let Some(k) = &c.kept else {
        return;
    };
    for (side, only) in [&k.only_a, &k.only_b].into_iter().enumerate() {
        if hide_only[side] {
            continue;
        }
        let name = format!("kept by run {} only", c.runs[side]);
        for t in only
            .iter()
            .filter_map(|&t| c.triplets.get(t))
            .take(MAX_DRAWN)
        {
            if let (Some(pi), Some(pj), Some(pq)) = (at(t.i), at(t.j), at(t.q)) {
                plot_ui.line(segment(&name, pi, pj).color(ONLY[side]).width(1.5));
                plot_ui.line(
                    segment(&name, pi, pq)
                        .color(ONLY[side])
                        .width(1.5)
                        .style(LineStyle::dashed_loose()),
                );
            }
        }
    }
}

fn pane_plot(
    ui: &mut egui::Ui,
    pane: Pane,
    data: &Dataset,
    c: &Comparison,
    cv: &mut CompareView,
    size: egui::Vec2,
) -> Seen {
    let p = pane as usize;
    let cache = &cv.caches[p];
    let n = data.n().max(1);
    let radius = if n > 2000 {
        1.5
    } else if n > 500 {
        2.5
    } else {
        3.5
    };
    let plot = plot_settings(pane, size, cache.groups.len());
    let at = |i: usize| cache.by_sample.get(i).copied();
    let (hovered, selected) = (cv.hovered, cv.selected);
    let strong = ui.visuals().strong_text_color();
    let response = plot.show(ui, |plot_ui| {
        for (g, group) in cache.groups.iter().enumerate() {
            plot_ui.points(
                Points::new(group.name.as_str(), PlotPoints::Borrowed(&group.points))
                    .color(group.color)
                    .radius(radius)
                    .shape(group.marker)
                    .filled(true)
                    .id(("cmp", p, g)),
            );
        }
        kept_lines(plot_ui, c, cv.hide_only, at);
        if let Some(pt) = hovered.and_then(at) {
            plot_ui.points(
                Points::new("hovered", PlotPoints::Owned(vec![pt]))
                    .color(strong)
                    .radius(radius + 4.0)
                    .shape(MarkerShape::Circle)
                    .filled(false)
                    .id(("cmp_hover", p)),
            );
        }
        if let Some(pt) = selected.and_then(at) {
            plot_ui.points(
                Points::new("selected", PlotPoints::Owned(vec![pt]))
                    .color(HIGHLIGHT)
                    .radius(radius + 6.0)
                    .shape(MarkerShape::Circle)
                    .filled(false)
                    .id(("cmp_selected", p)),
            );
        }
    });
    cv.drawn_hover[p] = hovered.filter(|&i| at(i).is_some());
    cv.drawn_selection[p] = selected.filter(|&i| at(i).is_some());
    let transform = response.transform;
    cv.transforms[p] = Some(transform);
    let label = match pane {
        Pane::A => format!("Layout of run {}", c.runs[0]),
        Pane::B => format!("Layout of run {} aligned to run {}", c.runs[1], c.runs[0]),
        Pane::Morph => format!("Morph from run {} to run {}", c.runs[0], c.runs[1]),
    };
    let resp = response.response;
    resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Image, true, &label));
    let hovered = resp
        .hover_pos()
        .and_then(|pos| cache.nearest(&transform, pos, HOVER_PX))
        .and_then(|i| at(i).map(|pt| (i, pt)));
    let clicked = if resp.clicked() {
        resp.interact_pointer_pos()
            .and_then(|pos| cache.nearest(&transform, pos, PICK_PX))
    } else {
        None
    };
    Seen {
        response: resp,
        hovered,
        clicked,
    }
}
