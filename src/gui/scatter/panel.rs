//! Central scatter: PCA-2D of H from the latest snapshot, one `Points` item per label (one
//! image per label from [`IMAGE_FROM`] points on), hover shows the sample (index, name, label,
//! thumbnail).

use eframe::egui;

use super::Scatter;
use super::lasso::LassoTest;
use crate::engine::constraints::Triplet;
use crate::engine::data::Dataset;
use crate::engine::linalg::Csr;
use crate::gui::command::Commands;
use crate::gui::constraints;
use crate::gui::point_image::{IMAGE_FROM, Mark, add_points};
use crate::gui::run_controller::RunController;
use crate::gui::state::{ColorBy, Session, Tool};
use crate::gui::view::ViewState;
use crate::gui::view::scatter_cache::ScatterCache;
use crate::gui::view::scatter_cache::class_colour;
use egui::{Color32, RichText};
use egui_plot::{Line, LineStyle, MarkerShape, Plot, PlotPoint, PlotPoints, Points, Polygon, Text};
use std::borrow::Cow;

/// Hover radius in screen points.
pub const HOVER_PX: f32 = 10.0;

/// Click-to-pick radius in screen points.
pub const PICK_PX: f32 = 8.0;

pub use crate::gui::style::MAX_DRAWN;

/// From this many rings or crosses on (painted labels, a selection, misassigned samples),
/// they are drawn as one image each.
const RINGS_IMAGE_FROM: usize = 2000;

/// At most this many graph edges are drawn.
const MAX_EDGES: usize = 5000;

/// Highlight of the partial and the hovered triplet.
pub const HIGHLIGHT: Color32 = Color32::from_rgb(255, 215, 0);

/// Grid marks at a 1-2-5 step giving about four labelled marks over the visible range (and
/// unlabelled minor marks at a fifth of it): egui_plot's own spacer, on a narrow plot with
/// equal axes, sometimes kept a single labelled mark ("0") on the PC 1 axis.
pub fn nice_marks(input: egui_plot::GridInput) -> Vec<egui_plot::GridMark> {
    let (lo, hi) = (
        input.bounds.0.min(input.bounds.1),
        input.bounds.0.max(input.bounds.1),
    );
    let range = hi - lo;
    if !(range > 0.0 && range.is_finite()) {
        return Vec::new();
    }
    let raw = range / 4.0;
    let mag = 10f64.powf(raw.log10().floor());
    // The 1-2-5 value nearest to a quarter of the range (in ratio).
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|f| f * mag)
        .min_by(|a, b| (a / raw).ln().abs().total_cmp(&(b / raw).ln().abs()))
        .unwrap_or(mag);
    let mut marks = Vec::new();
    for (size, minor) in [(step, false), (step / 5.0, true)] {
        let first = (lo / size).ceil() as i64;
        let last = (hi / size).floor() as i64;
        if last - first > 200 {
            continue;
        }
        for i in first..=last {
            if minor && i % 5 == 0 {
                continue;
            }
            marks.push(egui_plot::GridMark {
                value: i as f64 * size,
                step_size: size,
            });
        }
    }
    marks
}

/// The label of a mark from [`nice_marks`] ([`crate::figures::tick_label`]: as many decimals
/// as its step needs; egui_plot's default rounds −log10(step), which gives "0" and "-0" for a
/// step of 0.5).
pub fn mark_label(mark: egui_plot::GridMark, _range: &std::ops::RangeInclusive<f64>) -> String {
    crate::figures::tick_label(mark.value, mark.step_size)
}

/// The legend always sits beside the plot (the plot's own legend cannot scroll and covers
/// the points); below this plot width it starts collapsed, so that a narrow window keeps its
/// room for the points ("Legend ▸" opens it).
pub const SIDE_LEGEND_MIN_PLOT: f32 = 280.0;

/// Above this many groups the comparison's panes put their legend beside the plot.
pub const SIDE_LEGEND_FROM: usize = 12;

/// Width of the legend beside the plot.
const SIDE_LEGEND_WIDTH: f32 = 100.0;

/// The scrolling legend beside the plot: a swatch and the name of each group; a click
/// highlights the group (a second click, or "all", clears it).
fn side_legend(
    ui: &mut egui::Ui,
    groups: &[crate::gui::view::scatter_cache::ScatterGroup],
    me: &mut Scatter,
) {
    ui.vertical(|ui| {
        ui.set_width(SIDE_LEGEND_WIDTH);
        if ui
            .selectable_label(me.highlight.is_none(), "all")
            .on_hover_text("Draw every group alike")
            .clicked()
        {
            me.highlight = None;
        }
        egui::ScrollArea::vertical()
            .id_salt("side_legend")
            .auto_shrink([false, false])
            .show(ui, |ui| {
                for g in groups {
                    let on = me.highlight.as_deref() == Some(g.name.as_str());
                    ui.horizontal(|ui| {
                        let (rect, _) =
                            ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
                        ui.painter().circle_filled(rect.center(), 4.5, g.color);
                        let text = format!("{} ({})", g.name, g.points.len());
                        if ui
                            .selectable_label(on, text)
                            .on_hover_text("Highlight this group; click again for all")
                            .clicked()
                        {
                            me.highlight = if on { None } else { Some(g.name.clone()) };
                        }
                    });
                }
            });
    });
}

/// Width of the "Colour by" combo (its longer choices are cut with "…"; the list shows them
/// whole).
const COLOR_COMBO_WIDTH: f32 = 72.0;

/// The scatter's toolbar: one row that holds the same controls whatever the model and the
/// tool (tool buttons, "Colour by", the "Show" menu of overlays), then the line saying what a
/// click does, with the Label tool's class picker in front of it.
fn toolbar(
    ui: &mut egui::Ui,
    session: &mut Session,
    run: &RunController,
    me: &mut Scatter,
    view: &mut ViewState,
    data: &Dataset,
) {
    ui.horizontal(|ui| {
        // Fits a 480-px scatter (the 1024-px window): tighter gaps, a narrow colour combo.
        ui.spacing_mut().item_spacing.x = 6.0;
        tool_buttons(ui, me);
        ui.separator();
        colour_by(ui, session, run, view);
        ui.separator();
        show_menu(ui, session, run, me, view);
    });
    ui.horizontal_wrapped(|ui| {
        if me.tool == Tool::Label {
            paint_class(ui, session, view, data);
        }
        ui.label(RichText::new(click_hint(me, view)).strong());
    });
}

/// One button per tool; another tool drops the picks being built.
fn tool_buttons(ui: &mut egui::Ui, me: &mut Scatter) {
    for tool in Tool::ALL {
        if ui
            .selectable_label(me.tool == tool, tool.label())
            .on_hover_text(match tool {
                Tool::Inspect => "Hover to see a sample; drag pans, scroll zooms",
                Tool::Triplet => "Click anchor i, closer j, farther q (Esc cancels)",
                Tool::Label => "Click or drag a lasso to paint the class",
                Tool::Select => {
                    "Drag a lasso to select samples (Shift adds), click one to toggle it"
                }
            })
            .clicked()
            && me.tool != tool
        {
            me.tool = tool;
            me.partial.clear();
            me.lasso.clear();
        }
    }
}

/// "Colour by": classes, clusters, and what the run's model adds (its value per sample, its
/// own labels, its predictions); a change redraws the groups.
fn colour_by(ui: &mut egui::Ui, session: &mut Session, run: &RunController, view: &mut ViewState) {
    let l = ui.label("Colour by");
    let before = view.color_by;
    // The model's value per sample (RNMF's residual weight, ...), when the run has one.
    let value_name = run
        .snapshot
        .as_ref()
        .and_then(|s| s.outputs.values.as_ref())
        .map(|v| v.name);
    let has_labels = run
        .snapshot
        .as_ref()
        .is_some_and(|s| s.outputs.assignments.is_some());
    let has_predictions = run
        .snapshot
        .as_ref()
        .is_some_and(|s| s.outputs.predictions.is_some());
    let label = |c: ColorBy| match (c, value_name) {
        (ColorBy::ModelValue, Some(name)) => name,
        _ => c.label(),
    };
    egui::ComboBox::from_id_salt("color_by")
        .width(COLOR_COMBO_WIDTH)
        .selected_text(label(view.color_by))
        .show_ui(ui, |ui| {
            for c in ColorBy::ALL {
                if c == ColorBy::ModelValue && value_name.is_none() {
                    continue;
                }
                if c == ColorBy::ModelLabels && !has_labels {
                    continue;
                }
                if c == ColorBy::Predicted && !has_predictions {
                    continue;
                }
                ui.selectable_value(&mut view.color_by, c, label(c));
            }
        })
        .response
        .labelled_by(l.id)
        .on_hover_text(
            "k-means cluster: the lowest-inertia restart of the evaluation; crosses mark \
             samples whose cluster (mapped to a class by the best map) is not their class. \
             A model that rates each sample (RNMF's residual weight: low = an outlier it \
             discounts) adds its value, in five bins from dark (low) to light (high). A \
             classifier (2-STGINMF) adds its predicted class: squares are the given \
             labels, diamonds the samples self-training added, the others fade with \
             falling confidence, and crosses mark wrong predictions",
        );
    if view.color_by != before {
        view.rebuild_scatter(
            session.dataset.as_deref(),
            run.snapshot.as_deref(),
            session.x_view.as_deref(),
            session.evaluation.as_deref(),
        );
        if view.color_by == ColorBy::Cluster && session.evaluation.is_none() {
            session.set_status("Colour by cluster: the clusters appear once a run is evaluated");
        }
    }
}

/// The Label tool's class: one of the data's or the painted classes, or a new name.
fn paint_class(ui: &mut egui::Ui, session: &Session, view: &mut ViewState, data: &Dataset) {
    let l = ui.label("Class");
    let mut names: Vec<String> = data.class_names.clone();
    if let Some(st) = &session.store {
        for n in st.labels().class_names() {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    egui::ComboBox::from_id_salt("paint_class")
        .selected_text(if view.paint_class.is_empty() {
            "(type a name)"
        } else {
            view.paint_class.as_str()
        })
        .show_ui(ui, |ui| {
            for n in &names {
                ui.selectable_value(&mut view.paint_class, n.clone(), n);
            }
        })
        .response
        .labelled_by(l.id);
    let l = ui.label("or new");
    ui.add(
        egui::TextEdit::singleline(&mut view.paint_class)
            .desired_width(90.0)
            .hint_text("class name"),
    )
    .labelled_by(l.id);
}

/// The "Show" menu: the overlays (triplets, violations, the model's graph) and the learned
/// subspace, offered for every model (disabled where the run has none) so that the toolbar
/// never changes its row.
fn show_menu(
    ui: &mut egui::Ui,
    session: &Session,
    run: &RunController,
    me: &mut Scatter,
    view: &mut ViewState,
) {
    let config = egui::containers::menu::MenuConfig::new()
        .close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside);
    egui::containers::menu::MenuButton::new("Show…")
        .config(config)
        .ui(ui, |ui| {
            let has_subspace = run
                .snapshot
                .as_ref()
                .is_some_and(|s| s.outputs.subspace.is_some());
            if ui
                .add_enabled(
                    has_subspace,
                    egui::Checkbox::new(&mut view.show_subspace, "Learned subspace"),
                )
                .on_hover_text(
                    "Show the model's learned subspace (PSMF's Πᵀx, docs/models.md §6) instead \
                             of the PCA of H",
                )
                .changed()
            {
                view.rebuild_scatter(
                    session.dataset.as_deref(),
                    run.snapshot.as_deref(),
                    session.x_view.as_deref(),
                    session.evaluation.as_deref(),
                );
            }
            let mut show_triplets = !view.hide_triplets;
            if ui
                .checkbox(&mut show_triplets, "Show triplets")
                .on_hover_text("Draw each triplet: i-j solid, i-q dashed (at most 300)")
                .changed()
            {
                view.hide_triplets = !show_triplets;
            }
            ui.checkbox(&mut me.show_violations, "Show violations")
                .on_hover_text("Draw in red the triplets H does not keep (||hi-hj|| >= ||hi-hq||)");
            let has_graph = run
                .snapshot
                .as_ref()
                .is_some_and(|s| s.outputs.graph.is_some());
            ui.add_enabled(
                has_graph,
                egui::Checkbox::new(&mut me.show_graph, "Show graph"),
            )
            .on_hover_text(format!(
                "Draw the model's sample graph (its p-nearest-neighbour edges) between the \
                         points (at most {MAX_EDGES} edges)"
            ));
        })
        .0
        .on_hover_text("Triplets, violations, the model's graph, its learned subspace");
}

/// What a click on the scatter does with the current tool.
fn click_hint(me: &Scatter, view: &ViewState) -> String {
    match me.tool {
        Tool::Inspect => {
            "Inspect: hover a point to see the sample; drag pans, scroll zooms".to_owned()
        }
        Tool::Triplet => match me.partial.as_slice() {
            [] => "Triplet: click the anchor i".to_owned(),
            [i] => format!("Triplet ({i}, ?, ?): now the closer sample j (Esc cancels)"),
            [i, j, ..] => format!("Triplet ({i}, {j}, ?): now the farther sample q (Esc cancels)"),
        },
        Tool::Select => format!(
            "Select: drag a lasso around samples (Shift adds to the {} selected), click one to \
         toggle it; then Isolate",
            view.explore.selection.len()
        ),
        Tool::Label => {
            if view.paint_class.trim().is_empty() {
                "Label: type or pick a class first".to_owned()
            } else {
                format!(
                    "Label: click a point or drag a lasso to paint `{}` (right click clears)",
                    view.paint_class.trim()
                )
            }
        }
    }
}

pub fn segment(name: &str, a: PlotPoint, b: PlotPoint) -> Line<'static> {
    Line::new(name.to_owned(), vec![[a.x, a.y], [b.x, b.y]])
}

pub fn show(
    ui: &mut egui::Ui,
    session: &mut Session,
    run: &RunController,
    me: &mut Scatter,
    view: &mut ViewState,
    cmds: &mut Commands,
) {
    let Some(data) = session.dataset.clone() else {
        placeholder(ui, RichText::new("Open a dataset or a sample to begin"));
        return;
    };
    if view.scatter.groups.is_empty() {
        me.plot_transform = None;
        // Before the first run the scatter shows the PCA-2D of X, which a background task
        // computes after the load: say so rather than leave the user to wonder.
        let text = if session.x_view.is_none() && run.snapshot.is_none() {
            "Computing the PCA-2D of X to show the samples…\nor press Run (Space) to factorize"
        } else {
            "Press Run (Space) to factorize"
        };
        placeholder(ui, RichText::new(text).size(18.0));
        return;
    }
    toolbar(ui, session, run, me, view, &data);
    crate::gui::search::panel::bar(ui, session, view, cmds);
    let narrow = ui.available_width() - SIDE_LEGEND_WIDTH < SIDE_LEGEND_MIN_PLOT;
    let side = me.legend_shown.unwrap_or(!narrow);
    caption_row(ui, me, view, side);
    if me
        .highlight
        .as_ref()
        .is_some_and(|h| !view.scatter.groups.iter().any(|g| &g.name == h))
    {
        me.highlight = None;
    }
    let plot_rect = legend_beside(ui, me, view, side);
    let overlay = crate::gui::search::panel::Overlay::gather(view, &data);
    let mut plot_area = ui.new_child(egui::UiBuilder::new().max_rect(plot_rect));
    let ui = &mut plot_area;
    let plot = plot_settings(me, view);
    let layers = Layers::gather(session, me, view, &data);
    let response = plot.show(ui, |plot_ui| layers.draw(plot_ui, overlay));
    let transform = response.transform;
    me.plot_transform = Some(transform);
    if me.show_graph
        && let Some(graph) = run.snapshot.as_ref().and_then(|s| s.outputs.graph.as_ref())
    {
        draw_edges(
            ui,
            &response.response.rect,
            &transform,
            graph,
            &view.scatter,
        );
    }
    interact(session, me, view, &response.response, &transform, cmds);
    hover_card(ui, me, view, &data, &response.response, &transform);
}

/// A weak centred line in place of the plot (no data, or no points yet).
fn placeholder(ui: &mut egui::Ui, text: RichText) {
    ui.centered_and_justified(|ui| {
        ui.label(text.weak());
    });
}

/// The legend toggle and what the scatter shows.
fn caption_row(ui: &mut egui::Ui, me: &mut Scatter, view: &ViewState, side: bool) {
    let caption = view.scatter_caption();
    ui.horizontal(|ui| {
        let toggle = if side { "Hide legend" } else { "Legend" };
        if ui
            .small_button(toggle)
            .on_hover_text("Show or hide the legend beside the plot")
            .clicked()
        {
            me.legend_shown = Some(!side);
        }
        ui.add(
            egui::Label::new(
                RichText::new(crate::gui::style::displayable(ui.ctx(), &caption)).weak(),
            )
            .truncate(),
        );
    });
}

/// Draw the legend beside the plot when `side`; the rect left for the plot.
fn legend_beside(ui: &mut egui::Ui, me: &mut Scatter, view: &ViewState, side: bool) -> egui::Rect {
    let mut plot_rect = ui.available_rect_before_wrap();
    if side {
        plot_rect.max.x -= SIDE_LEGEND_WIDTH + ui.spacing().item_spacing.x;
        let legend_rect = egui::Rect::from_min_max(
            egui::pos2(
                plot_rect.max.x + ui.spacing().item_spacing.x,
                plot_rect.min.y,
            ),
            ui.available_rect_before_wrap().max,
        );
        let groups = view.scatter.groups.clone();
        let mut legend_ui = ui.new_child(egui::UiBuilder::new().max_rect(legend_rect));
        side_legend(&mut legend_ui, &groups, me);
    }
    ui.advance_cursor_after_rect(ui.available_rect_before_wrap());
    plot_rect
}

/// The plot's axes, grid and navigation: the tool decides whether dragging pans.
fn plot_settings(me: &Scatter, view: &ViewState) -> Plot<'static> {
    let mut plot = Plot::new("scatter")
        .x_grid_spacer(nice_marks)
        .y_grid_spacer(nice_marks)
        .x_axis_formatter(mark_label)
        .y_axis_formatter(mark_label)
        .show_x(false)
        .show_y(false)
        .label_formatter(|_| None);
    if me.tool != Tool::Inspect {
        plot = plot
            .allow_drag(false)
            .allow_double_click_reset(false)
            .allow_boxed_zoom(false);
    }
    if view.scatter.index_axes {
        plot.x_axis_label("sample index").y_axis_label("h")
    } else {
        plot.data_aspect(1.0)
            .x_axis_label("PC 1")
            .y_axis_label("PC 2")
    }
}

/// The card of the sample under the pointer, within a few pixels.
fn hover_card(
    ui: &mut egui::Ui,
    me: &mut Scatter,
    view: &mut ViewState,
    data: &Dataset,
    response: &egui::Response,
    transform: &egui_plot::PlotTransform,
) {
    let hovered = response
        .hover_pos()
        .and_then(|pos| view.scatter.nearest(transform, pos, HOVER_PX));
    me.hovered = hovered;
    if hovered.is_some() {
        view.points.last_hovered = hovered;
    }
    let Some(i) = hovered else {
        return;
    };
    let texture = view.thumbnails.get(ui.ctx(), data, i);
    let pos = view.scatter.position(i).unwrap_or(PlotPoint::new(0.0, 0.0));
    response
        .clone()
        .on_hover_ui_at_pointer(|ui| sample_card(ui, data, i, pos, texture.as_ref()));
}

/// Everything the plot draws this frame, prepared before it: the groups and the painted
/// rings are borrowed from caches built when their inputs changed.
struct Layers<'a> {
    cache: &'a ScatterCache,
    rings: &'a [crate::gui::view::scatter_cache::Ring],
    triplets: &'a [Triplet],
    satisfied: Option<&'a [bool]>,
    hovered_triplet: Option<Triplet>,
    partial: &'a [usize],
    lasso: &'a [PlotPoint],
    selection: &'a [usize],
    suggested: Option<Triplet>,
    show_violations: bool,
    show_triplets: bool,
    highlight: Option<&'a str>,
    /// Marker radius for the number of samples.
    radius: f32,
    /// Groups as one image each from this many points (large data), else egui shapes.
    image_from: usize,
}

impl<'a> Layers<'a> {
    fn gather(
        session: &'a Session,
        me: &'a Scatter,
        view: &'a mut ViewState,
        data: &Dataset,
    ) -> Self {
        let n = data.n().max(1);
        let view = &*{
            // Rings: from the cache, rebuilt only when the painted labels or the positions
            // changed.
            let store = session.store.as_ref();
            let rev = session.constraints_rev;
            view.rings.get(store, rev, &view.scatter, |name, c| {
                class_colour(data, name, c)
            });
            view
        };
        let triplets: &[Triplet] = session.store.as_ref().map_or(&[], |s| s.triplets());
        Self {
            cache: &view.scatter,
            rings: view.rings.current(),
            triplets,
            satisfied: session.kept.as_ref().map(|k| k.satisfied.as_slice()),
            hovered_triplet: view.hovered_triplet.and_then(|r| triplets.get(r).copied()),
            partial: &me.partial,
            lasso: &me.lasso,
            selection: &view.explore.selection,
            suggested: view.explore.suggestion.map(|s| s.triplet),
            show_violations: me.show_violations,
            show_triplets: !view.hide_triplets,
            highlight: me.highlight.as_deref(),
            radius: if n > 2000 {
                1.5
            } else if n > 500 {
                2.5
            } else {
                3.5
            },
            image_from: if n >= IMAGE_FROM { 0 } else { usize::MAX },
        }
    }

    fn at(&self, i: usize) -> Option<PlotPoint> {
        self.cache.position(i)
    }

    /// Every layer, bottom to top.
    fn draw(
        &self,
        plot_ui: &mut egui_plot::PlotUi<'a>,
        overlay: crate::gui::search::panel::Overlay,
    ) {
        self.draw_groups(plot_ui);
        self.draw_rings(plot_ui);
        self.draw_triplets(plot_ui);
        self.draw_picks(plot_ui);
        crate::gui::search::panel::draw(plot_ui, overlay, self.radius, RINGS_IMAGE_FROM);
        if self.lasso.len() > 1 {
            let pts: Vec<[f64; 2]> = self.lasso.iter().map(|p| [p.x, p.y]).collect();
            plot_ui.polygon(
                Polygon::new("lasso", PlotPoints::from(pts))
                    .fill_color(HIGHLIGHT.gamma_multiply(0.15))
                    .stroke(egui::Stroke::new(1.5, HIGHLIGHT)),
            );
        }
    }

    /// The class groups, the highlighted one last (on top) and the others faded.
    fn draw_groups(&self, plot_ui: &mut egui_plot::PlotUi<'a>) {
        let highlight = self.highlight;
        let groups = &self.cache.groups;
        let order = groups
            .iter()
            .enumerate()
            .filter(|(_, g)| highlight != Some(g.name.as_str()))
            .chain(
                groups
                    .iter()
                    .enumerate()
                    .filter(|(_, g)| highlight == Some(g.name.as_str())),
            );
        for (g, group) in order {
            let faded = highlight.is_some() && highlight != Some(group.name.as_str());
            let mark = Mark {
                color: if faded {
                    group.color.gamma_multiply(0.15)
                } else {
                    group.color
                },
                radius: if faded {
                    self.radius * 0.8
                } else {
                    self.radius
                },
                marker: group.marker,
                filled: true,
            };
            let points = Cow::Borrowed(group.points.as_slice());
            add_points(
                plot_ui,
                &group.name,
                points,
                mark,
                ("cls", g),
                self.image_from,
            );
        }
    }

    /// Misassigned samples as crosses, painted labels as rings (one item per class).
    fn draw_rings(&self, plot_ui: &mut egui_plot::PlotUi<'a>) {
        if !self.cache.misassigned.is_empty() {
            let mark = Mark {
                color: crate::gui::style::ERROR_RED,
                radius: self.radius + 2.0,
                marker: MarkerShape::Cross,
                filled: false,
            };
            let points = Cow::Borrowed(self.cache.misassigned.as_slice());
            add_points(
                plot_ui,
                "misassigned",
                points,
                mark,
                "misassigned",
                RINGS_IMAGE_FROM,
            );
        }
        for (c, (name, color, pts)) in self.rings.iter().enumerate() {
            let mark = Mark {
                color: *color,
                radius: self.radius + 3.0,
                marker: MarkerShape::Circle,
                filled: false,
            };
            let points = Cow::Borrowed(pts.as_slice());
            add_points(
                plot_ui,
                name,
                points,
                mark,
                ("painted", c),
                RINGS_IMAGE_FROM,
            );
        }
    }

    /// The triplets' lines (faded as their number grows), the violated ones in red, the
    /// hovered one highlighted.
    fn draw_triplets(&self, plot_ui: &mut egui_plot::PlotUi<'a>) {
        let line_colour = if self.triplets.len() > 50 {
            Color32::from_gray(150).gamma_multiply(0.3)
        } else {
            Color32::from_gray(150)
        };
        let drawn = if self.show_triplets { MAX_DRAWN } else { 0 };
        for t in self.triplets.iter().take(drawn) {
            self.triplet_lines(plot_ui, "triplet i-j", "triplet i-q", *t, line_colour, 1.0);
        }
        if self.show_violations
            && let Some(sat) = self.satisfied
        {
            let violated = self.triplets.iter().zip(sat).filter(|(_, ok)| !**ok);
            for (t, _) in violated.take(MAX_DRAWN) {
                self.triplet_lines(
                    plot_ui,
                    "violated",
                    "violated",
                    *t,
                    crate::gui::style::ERROR_RED,
                    2.0,
                );
            }
        }
        if let Some(t) = self.hovered_triplet
            && self.triplet_lines(plot_ui, "selected", "selected", t, HIGHLIGHT, 3.0)
        {
            self.name_points(plot_ui, "selected", t, ["i", "j", "q"]);
        }
    }

    /// The i–j (solid) and i–q (dashed) lines of `t`; false when a sample is not drawn.
    fn triplet_lines(
        &self,
        plot_ui: &mut egui_plot::PlotUi<'a>,
        ij: &str,
        iq: &str,
        t: Triplet,
        colour: Color32,
        width: f32,
    ) -> bool {
        let (Some(pi), Some(pj), Some(pq)) = (self.at(t.i), self.at(t.j), self.at(t.q)) else {
            return false;
        };
        plot_ui.line(segment(ij, pi, pj).color(colour).width(width));
        plot_ui.line(
            segment(iq, pi, pq)
                .color(colour)
                .width(width)
                .style(LineStyle::dashed_loose()),
        );
        true
    }

    /// Name the three samples of `t` with `names`.
    fn name_points(
        &self,
        plot_ui: &mut egui_plot::PlotUi<'a>,
        item: &str,
        t: Triplet,
        names: [&str; 3],
    ) {
        for (i, s) in [t.i, t.j, t.q].into_iter().zip(names) {
            if let Some(p) = self.at(i) {
                plot_ui.text(Text::new(item, p, RichText::new(s).strong()).color(HIGHLIGHT));
            }
        }
    }

    /// The selection ringed, the suggested triplet, and the triplet being picked.
    fn draw_picks(&self, plot_ui: &mut egui_plot::PlotUi<'a>) {
        let ringed: Vec<PlotPoint> = self.selection.iter().filter_map(|&i| self.at(i)).collect();
        if !ringed.is_empty() {
            let mark = Mark {
                color: HIGHLIGHT,
                radius: self.radius + 3.0,
                marker: MarkerShape::Circle,
                filled: false,
            };
            let points = Cow::Owned(ringed);
            add_points(
                plot_ui,
                "selected",
                points,
                mark,
                "basis_samples",
                RINGS_IMAGE_FROM,
            );
        }
        if let Some(t) = self.suggested
            && self.triplet_lines(plot_ui, "suggested", "suggested", t, HIGHLIGHT, 2.0)
        {
            self.name_points(plot_ui, "suggested", t, ["i?", "j?", "q?"]);
        }
        let picked: Vec<PlotPoint> = self.partial.iter().filter_map(|&i| self.at(i)).collect();
        if picked.is_empty() {
            return;
        }
        if let [pi, pj] = picked.as_slice() {
            plot_ui.line(segment("partial", *pi, *pj).color(HIGHLIGHT).width(2.5));
        }
        plot_ui.points(
            Points::new("partial", PlotPoints::Owned(picked.clone()))
                .color(HIGHLIGHT)
                .radius(self.radius + 5.0)
                .shape(MarkerShape::Circle)
                .filled(false),
        );
        for (p, s) in picked.iter().zip(["i", "j"]) {
            plot_ui.text(Text::new("partial", *p, RichText::new(s).strong()).color(HIGHLIGHT));
        }
    }
}

/// What hovering sample `i` (drawn at `pos`) shows: its index, name, label, position and
/// thumbnail. Also used by the comparison of two runs.
pub fn sample_card(
    ui: &mut egui::Ui,
    data: &Dataset,
    i: usize,
    pos: PlotPoint,
    texture: Option<&egui::TextureHandle>,
) {
    // One line each, whatever width the tooltip is laid out at (a sample's name such as
    // "row 147078" was seen broken over two lines).
    ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
    ui.label(RichText::new(format!("#{i}")).strong());
    if let Some(name) = data.sample_names.get(i)
        && *name != format!("#{i}")
    {
        ui.label(name);
    }
    if let Some(labels) = &data.labels
        && let Some(&c) = labels.get(i)
    {
        let name = data.class_names.get(c).map_or("?", String::as_str);
        ui.label(format!("label: {name}"));
    }
    ui.label(
        RichText::new(format!("({:.3}, {:.3})", pos.x, pos.y))
            .weak()
            .small(),
    );
    if let Some(tex) = texture {
        ui.add(egui::Image::from_texture(tex).fit_to_exact_size(egui::vec2(96.0, 96.0)));
    }
}

/// The graph's edges (i < j, the first [`MAX_EDGES`]) as faint lines over the plot.
fn draw_edges(
    ui: &egui::Ui,
    rect: &egui::Rect,
    transform: &egui_plot::PlotTransform,
    graph: &Csr,
    cache: &ScatterCache,
) {
    let painter = ui.painter_at(*rect);
    let stroke = egui::Stroke::new(0.8, Color32::from_gray(140).gamma_multiply(0.45));
    let mut drawn = 0;
    'rows: for i in 0..graph.nrows() {
        let (cols, _) = graph.row(i);
        for &j in cols.iter().filter(|&&j| j > i) {
            if drawn == MAX_EDGES {
                break 'rows;
            }
            if let (Some(a), Some(b)) = (cache.position(i), cache.position(j)) {
                painter.line_segment(
                    [
                        transform.position_from_point(&a),
                        transform.position_from_point(&b),
                    ],
                    stroke,
                );
                drawn += 1;
            }
        }
    }
}

/// Clicks and drags on the plot: Inspect pins the clicked sample (a click on nothing
/// unpins), Triplet picks i, j, q, Label paints, Select selects.
fn interact(
    session: &mut Session,
    me: &mut Scatter,
    view: &mut ViewState,
    resp: &egui::Response,
    transform: &egui_plot::PlotTransform,
    cmds: &mut Commands,
) {
    match me.tool {
        Tool::Inspect => {
            if resp.clicked()
                && let Some(pos) = resp.interact_pointer_pos()
            {
                view.points.focus = view.scatter.nearest(transform, pos, PICK_PX);
            }
        }
        Tool::Triplet => {
            if !resp.clicked() {
                return;
            }
            let Some(pos) = resp.interact_pointer_pos() else {
                return;
            };
            let Some(i) = view.scatter.nearest(transform, pos, PICK_PX) else {
                session.set_status("Triplet: no sample within 8 px of the click");
                return;
            };
            if me.partial.contains(&i) {
                session.set_error(format!(
                    "Refused: sample {i} is already in this triplet; pick another one"
                ));
                return;
            }
            me.partial.push(i);
            if let [a, b, c] = me.partial[..] {
                cmds.send(constraints::Command::AddTriplet(Triplet::new(a, b, c)));
                me.partial.clear();
            }
        }
        Tool::Label => {
            let secondary = resp.clicked_by(egui::PointerButton::Secondary);
            if resp.clicked() || secondary {
                if let Some(pos) = resp.interact_pointer_pos()
                    && let Some(i) = view.scatter.nearest(transform, pos, PICK_PX)
                {
                    if secondary {
                        cmds.send(constraints::Command::ClearLabels(vec![i]));
                    } else {
                        cmds.send(constraints::Command::PaintLabels(vec![i]));
                    }
                }
                return;
            }
            match lasso(me, view, resp, transform) {
                Some(ids) if ids.is_empty() => session.set_status("Lasso: no sample inside"),
                Some(ids) => cmds.send(constraints::Command::PaintLabels(ids)),
                None => {}
            }
        }
        Tool::Select => {
            if resp.clicked() {
                if let Some(pos) = resp.interact_pointer_pos()
                    && let Some(i) = view.scatter.nearest(transform, pos, PICK_PX)
                {
                    let sel = &mut view.explore.selection;
                    match sel.iter().position(|&s| s == i) {
                        Some(at) => {
                            sel.remove(at);
                        }
                        None => sel.push(i),
                    }
                    view.explore.basis = None;
                }
                return;
            }
            let Some(ids) = lasso(me, view, resp, transform) else {
                return;
            };
            let add = resp.ctx.input(|i| i.modifiers.shift);
            let n = view.scatter.by_sample.len();
            let sel = &mut view.explore.selection;
            select(sel, ids, add, n);
            view.explore.basis = None;
            let count = sel.len();
            session.set_status(format!(
                "Selected {count} samples: Isolate shows them alone"
            ));
        }
    }
}

/// The selection after a lasso took `ids` (each sample once, all below `n`): those alone, or
/// with `add` (Shift) the old selection and then the new ids it lacks. A mask over the
/// samples, not `contains` per id: 45,000 ids into a selection of as many took 176 ms of
/// the frame that closed the lasso at 200,000 points; this takes under 8 ms at 131,584.
fn select(sel: &mut Vec<usize>, ids: Vec<usize>, add: bool, n: usize) {
    if !add {
        *sel = ids;
        return;
    }
    let mut taken = vec![false; n];
    for &i in sel.iter().filter(|&&i| i < n) {
        taken[i] = true;
    }
    sel.extend(
        ids.into_iter()
            .filter(|&i| i < n && !std::mem::replace(&mut taken[i], true)),
    );
}

/// The lasso of Label and Select modes: grow it while the primary button drags (a point
/// every 2 px), and when the drag stops return the drawn samples inside it (none when the
/// lasso had fewer than three points: `None`).
fn lasso(
    me: &mut Scatter,
    view: &ViewState,
    resp: &egui::Response,
    transform: &egui_plot::PlotTransform,
) -> Option<Vec<usize>> {
    if resp.dragged_by(egui::PointerButton::Primary)
        && let Some(pos) = resp.interact_pointer_pos()
    {
        let p = transform.value_from_position(pos);
        let far = me
            .lasso
            .last()
            .is_none_or(|last| transform.position_from_point(last).distance(pos) > 2.0);
        if far {
            me.lasso.push(p);
        }
    }
    if !resp.drag_stopped() {
        return None;
    }
    let test = LassoTest::new(std::mem::take(&mut me.lasso))?;
    Some(
        view.scatter
            .by_sample
            .iter()
            .enumerate()
            .filter(|(_, p)| test.contains(**p))
            .map(|(i, _)| i)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lasso_replaces_the_selection_or_adds_what_it_lacks() {
        let mut sel = vec![7, 2, 9];
        select(&mut sel, vec![1, 2, 3], false, 10);
        assert_eq!(sel, [1, 2, 3]);
        select(&mut sel, vec![0, 3, 5, 9], true, 10);
        assert_eq!(sel, [1, 2, 3, 0, 5, 9], "kept in order, each sample once");
    }

    /// About four labelled marks at a 1-2-5 step whatever the range, zero among them when
    /// the range contains it.
    #[test]
    fn mark_labels_have_the_decimals_of_their_step() {
        let label = |value: f64, step_size: f64| {
            mark_label(egui_plot::GridMark { value, step_size }, &(0.0..=1.0))
        };
        assert_eq!(label(0.5, 0.5), "0.5");
        assert_eq!(label(-0.5, 0.5), "-0.5");
        assert_eq!(label(0.2, 0.2), "0.2");
        assert_eq!(label(0.1, 0.1), "0.1");
        assert_eq!(label(1e-17, 0.1), "0.0");
        assert_eq!(label(0.0005, 0.0005), "0.0005");
        assert_eq!(label(20.0, 5.0), "20");
        assert_eq!(label(3.0, 1.0), "3");
    }

    #[test]
    fn nice_marks_label_several_round_values() {
        for (lo, hi) in [
            (-0.31, 0.29),
            (-0.0003, 0.00035),
            (3.0, 1234.0),
            (-7.0, -6.2),
        ] {
            let marks = nice_marks(egui_plot::GridInput {
                bounds: (lo, hi),
                base_step_size: 1e-9,
            });
            let step = marks.iter().map(|m| m.step_size).fold(0.0, f64::max);
            let major: Vec<f64> = marks
                .iter()
                .filter(|m| m.step_size == step)
                .map(|m| m.value)
                .collect();
            assert!((3..=6).contains(&major.len()), "({lo}, {hi}): {major:?}");
            if lo < 0.0 && hi > 0.0 {
                assert!(major.contains(&0.0), "{major:?}");
            }
        }
    }
}
