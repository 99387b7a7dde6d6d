//! Central scatter: PCA-2D of H from the latest snapshot, one `Points` item per label, hover
//! shows the sample (index, name, label, thumbnail).

use eframe::egui;

use crate::gui::state::Session;
use egui::RichText;
use egui_plot::{Legend, MarkerShape, Plot, PlotPoint, PlotPoints, Points};

/// Hover radius in screen points.
const HOVER_PX: f32 = 10.0;

pub fn show(ui: &mut egui::Ui, session: &mut Session) {
    let Some(data) = session.dataset.clone() else {
        ui.centered_and_justified(|ui| {
            ui.label(RichText::new("Open a dataset or a sample to begin").weak());
        });
        return;
    };
    if session.scatter.groups.is_empty() {
        session.plot_transform = None;
        ui.centered_and_justified(|ui| {
            ui.label(
                RichText::new("Press Run (Space) to factorize")
                    .size(18.0)
                    .weak(),
            );
        });
        return;
    }
    let cache = &session.scatter;
    ui.label(
        RichText::new(if cache.index_axes {
            format!("H (k = 1) by sample · iteration {}", cache.iteration)
        } else {
            format!("PCA-2D of H · iteration {}", cache.iteration)
        })
        .weak(),
    );
    let n = data.n().max(1);
    let radius = if n > 2000 {
        1.5
    } else if n > 500 {
        2.5
    } else {
        3.5
    };
    let mut plot = Plot::new("scatter")
        .legend(Legend::default())
        .show_x(false)
        .show_y(false)
        .label_formatter(|_| None);
    plot = if cache.index_axes {
        plot.x_axis_label("sample index").y_axis_label("h")
    } else {
        plot.data_aspect(1.0)
            .x_axis_label("PC 1")
            .y_axis_label("PC 2")
    };
    let response = plot.show(ui, |plot_ui| {
        for (g, group) in cache.groups.iter().enumerate() {
            plot_ui.points(
                Points::new(group.name.as_str(), PlotPoints::Borrowed(&group.points))
                    .color(group.color)
                    .radius(radius)
                    .shape(MarkerShape::Circle)
                    .filled(true)
                    .id(("cls", g)),
            );
        }
    });
    let transform = response.transform;
    session.plot_transform = Some(transform);

    // Nearest sample under the pointer, within a few pixels.
    let hovered = response.response.hover_pos().and_then(|pos| {
        let mut best: Option<(f32, usize)> = None;
        for group in &session.scatter.groups {
            for (p, &i) in group.points.iter().zip(&group.indices) {
                let d = transform.position_from_point(p).distance(pos);
                if d <= HOVER_PX && best.is_none_or(|(bd, _)| d < bd) {
                    best = Some((d, i));
                }
            }
        }
        best.map(|(_, i)| i)
    });
    session.hovered = hovered;
    let Some(i) = hovered else {
        return;
    };
    let texture = session.thumbnails.get(ui.ctx(), &data, i);
    let pos = session
        .scatter
        .position(i)
        .unwrap_or(PlotPoint::new(0.0, 0.0));
    response.response.on_hover_ui_at_pointer(|ui| {
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
        if let Some(tex) = &texture {
            ui.add(egui::Image::from_texture(tex).fit_to_exact_size(egui::vec2(96.0, 96.0)));
        }
    });
}
