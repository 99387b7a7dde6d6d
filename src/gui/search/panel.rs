//! Explore the points (issue 21 point 4), drawn around the scatter: the bar above it (search,
//! selection, isolate, neighbours), the marks it adds to the plot (matches ringed, the pinned
//! sample, its neighbours in X), and the window of the nearest neighbours in X and in H.

use eframe::egui;

use crate::engine::data::Dataset;
use crate::gui::command::Commands;
use crate::gui::run_controller::RunController;
use crate::gui::state::Session;
use crate::gui::view::ViewState;
use crate::gui::view::points::{NEIGHBOURS, NeighbourList, SnapshotKey, shared};
use egui::{Color32, RichText};
use egui_plot::{MarkerShape, PlotPoint, PlotPoints, PlotUi, Points, Text};

/// Ring colour of the search matches (apart from the gold of selections and triplets).
pub const MATCH: Color32 = Color32::from_rgb(0, 200, 255);

/// Colour of the pinned sample and of its neighbours in X.
pub const PINNED: Color32 = Color32::from_rgb(255, 80, 200);

/// Side of a neighbour's thumbnail, in points.
const THUMB: f32 = 36.0;

/// The bar above the scatter: the search field, its count and Next / Previous; the selection's
/// size with Isolate, Show all and Clear; the neighbour window's toggle.
pub fn bar(ui: &mut egui::Ui, session: &Session, view: &mut ViewState, cmds: &mut Commands) {
    let Some(data) = session.dataset.as_deref() else {
        return;
    };
    ui.horizontal_wrapped(|ui| {
        let l = ui.label("Search samples");
        let resp = ui
            .add(
                egui::TextEdit::singleline(&mut view.points.query)
                    .desired_width(80.0)
                    .hint_text("name or class"),
            )
            .labelled_by(l.id)
            .on_hover_text(
                "Case-insensitive part of a sample's name or class (painted classes too); \
                 matches are ringed. Enter goes to the next match, Shift+Enter the previous",
            );
        let painted = session.store.as_ref().map(|s| s.labels());
        view.points
            .update_search(data, painted, session.constraints_rev);
        let (enter, shift) = ui.input(|i| (i.key_pressed(egui::Key::Enter), i.modifiers.shift));
        let mut step = (resp.lost_focus() && enter).then_some(shift);
        if resp.lost_focus() && enter {
            resp.request_focus();
        }
        let n_matches = view.points.matches.len();
        if !view.points.query.trim().is_empty()
            && let Some(back) = match_controls(ui, view, n_matches)
        {
            step = Some(back);
        }
        if let Some(back) = step {
            let scatter = &view.scatter;
            if view
                .points
                .step_match(back, |i| scatter.position(i).is_some())
                .is_none()
                && n_matches > 0
            {
                view.points.current = None;
            }
        }
        selection_controls(ui, view, cmds);
        ui.separator();
        ui.checkbox(&mut view.points.show_neighbours, "Neighbours")
            .on_hover_text(format!(
                "The {NEIGHBOURS} nearest samples of the hovered (or clicked) sample in X and in H, \
                 side by side"
            ));
    });
}

/// "3/12 matches", previous and next, and "Select matches"; the step asked for (`true`:
/// back).
fn match_controls(ui: &mut egui::Ui, view: &mut ViewState, n_matches: usize) -> Option<bool> {
    let mut step = None;
    let shown = match view.points.current {
        Some(c) => format!("{}/{n_matches} matches", c + 1),
        None => format!("{n_matches} matches"),
    };
    ui.label(shown);
    ui.add_enabled_ui(n_matches > 0, |ui| {
        if ui
            .small_button("<")
            .on_hover_text("Previous match")
            .clicked()
        {
            step = Some(true);
        }
        if ui
            .small_button("Next")
            .on_hover_text("Next match")
            .clicked()
        {
            step = Some(false);
        }
        if ui
            .small_button("Select matches")
            .on_hover_text("Make the matches the selection (to isolate them)")
            .clicked()
        {
            view.explore.selection = view.points.matches.clone();
            view.explore.basis = None;
        }
    });
    step
}

/// The selection's count, Isolate, Show all and Clear, only while there is a selection (or an
/// isolation to undo): on a narrow window every row this bar wraps to is taken from the plot.
fn selection_controls(ui: &mut egui::Ui, view: &mut ViewState, cmds: &mut Commands) {
    let selected = view.explore.selection.len();
    if selected > 0 || view.points.isolation.is_some() {
        ui.separator();
        ui.label(format!("{selected} selected"))
            .on_hover_text("Select tool: drag a lasso (Shift adds) or click samples");
        if ui
            .add_enabled(selected >= 2, egui::Button::new("Isolate"))
            .on_hover_text("Show only the selected samples, projected on their own (PCA-2D of their columns of H)")
            .clicked()
        {
            cmds.send(super::Command::Isolate);
        }
        if view.points.isolation.is_some()
            && ui
                .button("Show all")
                .on_hover_text("Back to every sample")
                .clicked()
        {
            cmds.send(super::Command::ShowAll);
        }
        if selected > 0
            && ui
                .small_button("Clear selection")
                .on_hover_text("Unselect every sample")
                .clicked()
        {
            cmds.send(super::Command::ClearSelection);
        }
    }
}

/// What [`draw`] adds to the plot this frame, gathered before the plot borrows the view.
#[derive(Default)]
pub struct Overlay {
    matches: Vec<PlotPoint>,
    current: Option<(PlotPoint, String)>,
    pinned: Option<PlotPoint>,
    x_neighbours: Vec<PlotPoint>,
    /// Centre the plot here.
    pan: Option<PlotPoint>,
    /// Fit the plot to its points.
    refit: bool,
}

impl Overlay {
    /// The marks of this frame (O(matches)); takes the pending pan and refit.
    pub fn gather(view: &mut ViewState, data: &Dataset) -> Self {
        let cache = &view.scatter;
        let p = &mut view.points;
        let current = p
            .current
            .and_then(|c| p.matches.get(c))
            .and_then(|&i| Some((cache.position(i)?, sample_name(data, i))));
        let x_neighbours = match p.subject() {
            Some(s) if p.show_neighbours => p
                .neighbours
                .in_x(s)
                .map(|l| l.iter().filter_map(|&(j, _)| cache.position(j)).collect())
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        Self {
            matches: p
                .matches
                .iter()
                .filter_map(|&i| cache.position(i))
                .collect(),
            current,
            pinned: p.focus.and_then(|i| cache.position(i)),
            x_neighbours,
            pan: p.pan_to.take().and_then(|i| cache.position(i)),
            refit: std::mem::take(&mut p.refit),
        }
    }
}

/// Draw the overlay inside the scatter (`radius`: the points' radius).
/// `rings_from`: from this many rings on, they are drawn as one image
/// ([`crate::gui::point_image::add_points`]).
pub fn draw(plot_ui: &mut PlotUi<'_>, overlay: Overlay, radius: f32, rings_from: usize) {
    if overlay.refit {
        plot_ui.set_auto_bounds(true);
    } else if let Some(c) = overlay.pan {
        let b = plot_ui.plot_bounds();
        let (w, h) = (b.width(), b.height());
        plot_ui.set_plot_bounds_x(c.x - w / 2.0..=c.x + w / 2.0);
        plot_ui.set_plot_bounds_y(c.y - h / 2.0..=c.y + h / 2.0);
    }
    if !overlay.matches.is_empty() {
        let mark = crate::gui::point_image::Mark {
            color: MATCH,
            radius: radius + 3.5,
            marker: MarkerShape::Circle,
            filled: false,
        };
        let matches = std::borrow::Cow::Owned(overlay.matches);
        crate::gui::point_image::add_points(
            plot_ui,
            "search matches",
            matches,
            mark,
            "search_matches",
            rings_from,
        );
    }
    if !overlay.x_neighbours.is_empty() {
        plot_ui.points(
            Points::new("neighbours in X", PlotPoints::Owned(overlay.x_neighbours))
                .color(PINNED)
                .radius(radius + 3.0)
                .shape(MarkerShape::Square)
                .filled(false)
                .id("x_neighbours"),
        );
    }
    if let Some((p, name)) = overlay.current {
        plot_ui.points(
            Points::new("current match", PlotPoints::Owned(vec![p]))
                .color(MATCH)
                .radius(radius + 7.0)
                .shape(MarkerShape::Circle)
                .filled(false),
        );
        plot_ui.text(
            Text::new("current match", p, RichText::new(name).strong())
                .color(MATCH)
                .anchor(egui::Align2::LEFT_BOTTOM),
        );
    }
    if let Some(p) = overlay.pinned {
        plot_ui.points(
            Points::new("pinned", PlotPoints::Owned(vec![p]))
                .color(PINNED)
                .radius(radius + 5.0)
                .shape(MarkerShape::Circle)
                .filled(false),
        );
    }
}

/// The sample's name, or `#i` when it has none.
fn sample_name(data: &Dataset, i: usize) -> String {
    data.sample_names
        .get(i)
        .cloned()
        .unwrap_or_else(|| format!("#{i}"))
}

/// The sample's class name (ground truth), if labelled.
fn class_name(data: &Dataset, i: usize) -> Option<&str> {
    let c = *data.labels.as_ref()?.get(i)?;
    data.class_names.get(c).map(String::as_str)
}

/// The "Neighbours" window: the subject sample, then its nearest neighbours in X and in H
/// side by side (thumbnails for image data, names and labels otherwise), those in both lists
/// marked, and how many are shared.
pub fn window(
    ctx: &egui::Context,
    data: Option<&Dataset>,
    run: &RunController,
    view: &mut ViewState,
) {
    let mut open = view.points.show_neighbours;
    egui::Window::new("Neighbours in X and in H")
        .open(&mut open)
        .default_width(380.0)
        .default_pos(ctx.content_rect().right_top() + egui::vec2(-400.0, 300.0))
        .vscroll(true)
        .show(ctx, |ui| match data {
            Some(data) => body(ui, data, run, view),
            None => {
                ui.label(RichText::new("Load a dataset first.").weak());
            }
        });
    view.points.show_neighbours = open;
}

fn body(ui: &mut egui::Ui, data: &Dataset, run: &RunController, view: &mut ViewState) {
    let Some(s) = view.points.subject().filter(|&s| s < data.n()) else {
        ui.label(
            RichText::new(
                "Hover a sample in the scatter (or click it to pin it) to see its nearest \
                 neighbours in X and in H.",
            )
            .weak(),
        );
        return;
    };
    ui.horizontal(|ui| {
        if let Some(tex) = view.thumbnails.get(ui.ctx(), data, s) {
            ui.add(egui::Image::new((tex.id(), egui::vec2(48.0, 48.0))));
        }
        ui.vertical(|ui| {
            let mut head = format!("#{s} {}", sample_name(data, s));
            if let Some(c) = class_name(data, s) {
                head.push_str(&format!(" · {c}"));
            }
            ui.label(RichText::new(head).strong());
            if view.points.focus == Some(s) {
                ui.horizontal(|ui| {
                    ui.label(RichText::new("pinned").color(PINNED));
                    if ui
                        .small_button("Unpin")
                        .on_hover_text("Follow the hovered sample again")
                        .clicked()
                    {
                        view.points.focus = None;
                    }
                });
            } else {
                ui.label(RichText::new("hovered · click a sample to pin it").weak());
            }
        });
    });
    let snap = run.snapshot.as_ref().filter(|s| s.h.ncols() == data.n());
    let in_x = view.points.neighbours.in_x(s).cloned();
    // The current snapshot's list, else (while it is computed) the newest one of the sample.
    let in_h = snap.and_then(|snap| {
        let c = &view.points.neighbours;
        c.in_h(s, &SnapshotKey::of(snap))
            .or_else(|| c.latest_h(s))
            .cloned()
    });
    match (&in_x, &in_h) {
        (Some(x), Some(h)) => {
            ui.label(
                RichText::new(format!("{} of {} shared (marked *)", shared(x, h), x.len()))
                    .strong(),
            );
        }
        _ if view.points.neighbours.in_flight.is_some() => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("computing…");
            });
        }
        _ => {}
    }
    ui.separator();
    let thumbs = !data.thumbnails.is_empty();
    ui.columns(2, |cols| {
        column(
            &mut cols[0],
            "in X (the data)",
            data,
            in_x.as_ref(),
            in_h.as_ref(),
            thumbs,
            view,
        );
        let iteration = snap.map_or(String::new(), |s| format!(", iteration {}", s.iteration));
        if snap.is_none() {
            cols[1].label(RichText::new("in H").strong());
            cols[1].label(RichText::new("Run a model to see the neighbours in H.").weak());
        } else {
            column(
                &mut cols[1],
                &format!("in H{iteration}"),
                data,
                in_h.as_ref(),
                in_x.as_ref(),
                thumbs,
                view,
            );
        }
    });
}

/// One neighbour list under its title; entries also in `other` are marked.
fn column(
    ui: &mut egui::Ui,
    title: &str,
    data: &Dataset,
    list: Option<&NeighbourList>,
    other: Option<&NeighbourList>,
    thumbs: bool,
    view: &mut ViewState,
) {
    ui.label(RichText::new(title).strong());
    let Some(list) = list else {
        ui.label(RichText::new("…").weak());
        return;
    };
    for &(j, d2) in list.iter() {
        let both = other.is_some_and(|o| o.iter().any(|&(k, _)| k == j));
        ui.horizontal(|ui| {
            ui.label(if both { "*" } else { " " });
            if thumbs && let Some(tex) = view.thumbnails.get(ui.ctx(), data, j) {
                ui.add(egui::Image::new((tex.id(), egui::vec2(THUMB, THUMB))));
            }
            let mut text = sample_name(data, j);
            if let Some(c) = class_name(data, j) {
                text.push_str(&format!(" · {c}"));
            }
            let label = if both {
                RichText::new(text).strong()
            } else {
                RichText::new(text)
            };
            ui.vertical(|ui| {
                ui.label(label);
                ui.label(
                    RichText::new(format!("d = {:.3}", d2.sqrt()))
                        .weak()
                        .small(),
                );
            });
        })
        .response
        .on_hover_text(format!("#{j}: Euclidean distance {:.4}", d2.sqrt()));
    }
}
