//! Suggested triplets in the constraints panel (issue 21 point 5): "Suggest" asks the engine
//! for the triplet the current H is least sure of ([`crate::engine::constraints::suggest`],
//! on a background task); one click answers it ("j closer", "q closer") as an ordinary
//! undoable triplet, or skips it; the next one is then proposed. Below, per run of the
//! history, how the share of triplets kept and the clustering score moved since the previous
//! run, with the number of triplets each was given.

use eframe::egui;

use crate::engine::constraints::Triplet;
use crate::engine::data::Dataset;
use crate::gui::UiCommand;
use crate::gui::command::Commands;
use crate::gui::state::{HistoryRow, Session};
use crate::gui::view::ViewState;
use egui::RichText;

/// Side of a thumbnail of the suggested triplet.
const THUMB: f32 = 36.0;

pub fn show(ui: &mut egui::Ui, session: &Session, view: &mut ViewState, cmds: &mut Commands) {
    let Some(data) = session.dataset.clone() else {
        return;
    };
    ui.separator();
    ui.horizontal(|ui| {
        ui.label(RichText::new("Suggested triplets").strong());
        let busy = view.explore.suggesting;
        if ui
            .add_enabled(
                !busy,
                egui::Button::new(if busy { "Suggesting…" } else { "Suggest" }),
            )
            .on_hover_text(
                "Propose the triplet among the kNN graph's candidates that the current H (the \
                 data before a run) is least sure of: the smallest margin",
            )
            .clicked()
        {
            cmds.push(UiCommand::Suggest);
        }
    });
    if let Some(s) = view.explore.suggestion {
        let t = s.triplet;
        ui.label(format!(
            "Is {} closer to {} (j) or to {} (q)?  margin {:.3e}",
            name(&data, t.i),
            name(&data, t.j),
            name(&data, t.q),
            s.margin
        ));
        ui.horizontal(|ui| {
            for (tag, i) in [("i", t.i), ("j", t.j), ("q", t.q)] {
                if let Some(tex) = view.thumbnails.get(ui.ctx(), &data, i) {
                    ui.vertical(|ui| {
                        ui.add(egui::Image::new((tex.id(), egui::vec2(THUMB, THUMB))));
                        ui.label(RichText::new(tag).small());
                    });
                }
            }
        });
        ui.horizontal(|ui| {
            let mut answer = None;
            if ui.button("j closer").clicked() {
                answer = Some(Some(t));
            }
            if ui.button("q closer").clicked() {
                answer = Some(Some(Triplet::new(t.i, t.q, t.j)));
            }
            if ui.button("skip").clicked() {
                answer = Some(None);
            }
            if let Some(a) = answer {
                view.explore.suggestion = None;
                match a {
                    Some(triplet) => cmds.push(UiCommand::AddTriplet(triplet)),
                    None => {
                        view.explore.skipped.insert(t);
                    }
                }
                cmds.push(UiCommand::Suggest);
            }
        });
    }
    batches(ui, &session.history);
}

fn name(data: &Dataset, i: usize) -> String {
    data.sample_names
        .get(i)
        .cloned()
        .unwrap_or_else(|| format!("#{i}"))
}

/// How each run moved the share of triplets kept and the clustering score (NMI) against the
/// run before it, with the triplets it was given.
fn batches(ui: &mut egui::Ui, history: &[HistoryRow]) {
    if history.len() < 2 {
        return;
    }
    ui.label(
        RichText::new("Effect of each batch of answers (run against the run before):").small(),
    );
    let fmt = |d: Option<f64>| d.map_or_else(|| "–".to_owned(), |d| format!("{:+.1} %", 100.0 * d));
    for pair in history.windows(2).rev().take(5) {
        let [a, b] = pair else { continue };
        let kept = a.kept.zip(b.kept).map(|(x, y)| y - x);
        let nmi = a.nmi.zip(b.nmi).map(|(x, y)| y - x);
        ui.label(
            RichText::new(format!(
                "run {} ({} triplets, +{}): kept {}, NMI {}",
                b.id,
                b.triplets,
                b.triplets.saturating_sub(a.triplets),
                fmt(kept),
                fmt(nmi)
            ))
            .small(),
        );
    }
}
