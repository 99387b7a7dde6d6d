//! The basis gallery (issue 21 point 1): W's columns as images for image data (a heat strip
//! per basis otherwise), live, sorted by the norm of their H row; clicking a basis rings the
//! samples that load most on it in the scatter and lists those that use it most.

use eframe::egui;

use super::{BasisGallery, Gallery};
use crate::engine::data::Dataset;
use crate::engine::jobs::worker::Snapshot;
use crate::gui::run_controller::RunController;
use crate::gui::view::ViewState;
use egui::RichText;

/// Side of a basis image, in points.
const TILE: f32 = 64.0;
/// Side of a sample thumbnail under the picked basis.
const THUMB: f32 = 40.0;
/// Up to this many features, the heat map names each under its column.
const MAX_NAMED_COLUMNS: usize = 12;

/// The "Basis gallery" window, when open.
pub fn window(
    ctx: &egui::Context,
    data: Option<&Dataset>,
    run: &RunController,
    me: &mut BasisGallery,
    view: &mut ViewState,
) {
    let mut open = me.show;
    egui::Window::new("Basis gallery")
        .open(&mut open)
        .default_width(420.0)
        // Over the data panel, not over the scatter whose rings it draws.
        .default_pos(ctx.content_rect().left_top() + egui::vec2(8.0, 70.0))
        .vscroll(true)
        .show(ctx, |ui| body(ui, data, run, me, view));
    me.show = open;
}

fn body(
    ui: &mut egui::Ui,
    data: Option<&Dataset>,
    run: &RunController,
    me: &mut BasisGallery,
    view: &mut ViewState,
) {
    let Some(data) = data else {
        ui.label(RichText::new("Load a dataset first.").weak());
        return;
    };
    let Some(snap) = run.snapshot.as_ref().filter(|s| s.h.ncols() == data.n()) else {
        ui.label(RichText::new("Run a model: its bases appear here, live.").weak());
        return;
    };
    let image = data.image_shape.filter(|&(a, b)| a * b == data.m());
    me.gallery.update(ui.ctx(), snap, image);
    let g = &me.gallery;
    if g.textures.is_empty() {
        ui.label(
            RichText::new("This model has no W: the gallery shows the bases of models with one.")
                .weak(),
        );
        return;
    }
    ui.label(format!(
        "W's {} columns at iteration {}, by the norm of their H row (largest first). Click one \
         to ring the samples that load most on it.",
        g.order.len(),
        snap.iteration
    ));
    let selected = view.explore.basis;
    let clicked = if image.is_some() {
        image_tiles(ui, g, selected)
    } else {
        heat_map(ui, data, snap, g, selected)
    };
    if let Some(c) = clicked {
        me.toggle_basis(c, &mut view.explore);
    }
    if let Some(c) = view.explore.basis {
        ui.separator();
        basis_users(ui, data, snap, &me.gallery, c, view);
    }
}

/// The bases as image tiles, largest H row first; the one clicked.
fn image_tiles(ui: &mut egui::Ui, g: &Gallery, selected: Option<usize>) -> Option<usize> {
    let mut clicked = None;
    ui.horizontal_wrapped(|ui| {
        for &c in &g.order {
            let Some(tex) = g.textures.get(c) else {
                continue;
            };
            let [w, h] = tex.size();
            let size = egui::vec2(TILE, TILE * h as f32 / w.max(1) as f32);
            let button = egui::Button::image_and_text(
                egui::Image::new((tex.id(), size)),
                format!("basis {}", c + 1),
            )
            .selected(selected == Some(c));
            let r = ui.add(button).on_hover_text(format!(
                "norm of its H row {:.3}; {} samples load most on it",
                g.norms.get(c).copied().unwrap_or(0.0),
                g.dominant.get(c).map_or(0, Vec::len)
            ));
            if r.clicked() {
                clicked = Some(c);
            }
        }
    });
    clicked
}

/// The bases as a heat map of W; the one clicked.
fn heat_map(
    ui: &mut egui::Ui,
    data: &Dataset,
    snap: &Snapshot,
    g: &Gallery,
    selected: Option<usize>,
) -> Option<usize> {
    let mut clicked = None;
    {
        // A heat map of W: one row per basis (a strip over the features), features named.
        // Names are made where they are drawn (a hovered column, ≤ 12 labels, the first and
        // last), not for every feature each frame.
        let m = data.m();
        let mut strip: Option<egui::Rect> = None;
        for &c in &g.order {
            let Some(tex) = g.textures.get(c) else {
                continue;
            };
            ui.horizontal(|ui| {
                let r = ui
                    .add(
                        egui::Button::new(format!("basis {}", c + 1)).selected(selected == Some(c)),
                    )
                    .on_hover_text(format!(
                        "norm of its H row {:.3}",
                        g.norms.get(c).copied().unwrap_or(0.0)
                    ));
                if r.clicked() {
                    clicked = Some(c);
                }
                let width = ui.available_width().max(80.0);
                let img = ui.add(
                    egui::Image::new((tex.id(), egui::vec2(width, 14.0)))
                        .sense(egui::Sense::hover()),
                );
                strip = Some(img.rect);
                if let Some(pos) = img.hover_pos() {
                    let f = (((pos.x - img.rect.left()) / img.rect.width()) * data.m() as f32)
                        .floor()
                        .clamp(0.0, data.m().saturating_sub(1) as f32)
                        as usize;
                    let v = snap
                        .w
                        .as_ref()
                        .and_then(|w| w.get((f, c)).copied())
                        .unwrap_or(0.0);
                    img.on_hover_text(format!("{}: W = {v:.4}", data.feature_name(f)));
                }
            });
        }
        // Few features: each named under its column (truncated to the column, whole on hover).
        if let Some(strip) = strip.filter(|_| m <= MAX_NAMED_COLUMNS) {
            let (row, _) = ui.allocate_exact_size(
                egui::vec2(
                    ui.available_width(),
                    ui.text_style_height(&egui::TextStyle::Small),
                ),
                egui::Sense::hover(),
            );
            let column = strip.width() / m as f32;
            for f in 0..m {
                let left = strip.left() + column * f as f32;
                let rect = egui::Rect::from_min_size(
                    egui::pos2(left, row.top()),
                    egui::vec2(column, row.height()),
                );
                ui.put(
                    rect,
                    egui::Label::new(RichText::new(data.feature_name(f)).small())
                        .truncate()
                        .halign(egui::Align::Center),
                );
            }
        }
        ui.label(
            RichText::new(format!(
                "Features left to right: {} … {} (light = heavy weight, each basis to its maximum)",
                data.feature_name(0),
                data.feature_name(m.saturating_sub(1))
            ))
            .weak()
            .small(),
        );
    }
    clicked
}

/// The samples that load most on basis `c` (ringed in the scatter), with thumbnails.
fn basis_users(
    ui: &mut egui::Ui,
    data: &Dataset,
    snap: &Snapshot,
    g: &Gallery,
    c: usize,
    view: &mut ViewState,
) {
    let top = g.top.get(c).cloned().unwrap_or_default();
    ui.label(
        RichText::new(format!(
            "basis {}: {} samples load most on it (ringed in the scatter); used most by:",
            c + 1,
            view.explore.selection.len()
        ))
        .strong(),
    );
    ui.horizontal_wrapped(|ui| {
        for i in top {
            let name = data
                .sample_names
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("sample {i}"));
            let tip = format!(
                "{name}: h = {:.3}",
                snap.h.get((c, i)).copied().unwrap_or(0.0)
            );
            match view.thumbnails.get(ui.ctx(), data, i) {
                Some(tex) => {
                    ui.add(egui::Image::new((tex.id(), egui::vec2(THUMB, THUMB))))
                        .on_hover_text(tip);
                }
                None => {
                    ui.label(name).on_hover_text(tip);
                }
            }
        }
    });
}
