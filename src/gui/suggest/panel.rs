//! Suggested triplets in the constraints panel (issue 21 point 5): "Suggest" asks the engine
//! for the triplet the current H is least sure of ([`crate::engine::constraints::suggest`],
//! on a background task); one click answers it ("j closer", "q closer") as an ordinary
//! undoable triplet, or skips it; the next one is then proposed. Below, per run of the
//! history, how the share of triplets kept and the clustering score moved since the previous
//! run, with the number of triplets each was given.

use eframe::egui;

use super::{Command, Suggest};
use crate::engine::constraints::Triplet;
use crate::engine::data::{Dataset, Fingerprint};
use crate::gui::feature::Shared;
use crate::gui::state::HistoryRow;
use egui::RichText;

/// Side of a thumbnail of the suggested triplet.
const THUMB: f32 = 36.0;

pub fn show(ui: &mut egui::Ui, me: &mut Suggest, app: &mut Shared<'_>) {
    let (session, view, cmds) = (&*app.session, &mut *app.view, &mut *app.commands);
    let Some(data) = session.dataset.clone() else {
        return;
    };
    ui.separator();
    ui.horizontal(|ui| {
        ui.label(RichText::new("Suggested triplets").strong());
        let busy = me.suggesting;
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
            cmds.send(Command::Suggest);
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
                    Some(triplet) => {
                        cmds.send(crate::gui::constraints::Command::AddTriplet(triplet))
                    }
                    None => {
                        me.skipped.insert(t);
                    }
                }
                cmds.send(Command::Suggest);
            }
        });
    }
    let here = session.dataset.as_ref().map(|d| d.fingerprint);
    let lines = batch_lines(&session.history, here);
    if !lines.is_empty() {
        ui.label(
            RichText::new("Effect of each batch of answers (run against the run before):").small(),
        );
        for line in lines {
            ui.label(RichText::new(line).small());
        }
    }
}

fn name(data: &Dataset, i: usize) -> String {
    data.sample_names
        .get(i)
        .cloned()
        .unwrap_or_else(|| format!("#{i}"))
}

/// How each run moved the share of triplets kept and the clustering score (NMI) against the
/// run before it on the same data (`here`, the loaded dataset; runs on other data are
/// skipped, their scores are not comparable), newest first, at most five. A run given the
/// same triplets as the one before it answered nothing and is not listed.
pub fn batch_lines(history: &[HistoryRow], here: Option<Fingerprint>) -> Vec<String> {
    let fmt = |d: Option<f64>| d.map_or_else(|| "–".to_owned(), |d| format!("{:+.1} %", 100.0 * d));
    let same: Vec<&HistoryRow> = history
        .iter()
        .filter(|r| here.is_some() && r.data == here)
        .collect();
    same.windows(2)
        .filter(|pair| pair[1].triplets != pair[0].triplets)
        .rev()
        .take(5)
        .map(|pair| {
            let (a, b) = (pair[0], pair[1]);
            let kept = a.kept.zip(b.kept).map(|(x, y)| y - x);
            let nmi = a.nmi.zip(b.nmi).map(|(x, y)| y - x);
            format!(
                "run {} ({} triplets, +{}): kept {}, NMI {}",
                b.id,
                b.triplets,
                b.triplets.saturating_sub(a.triplets),
                fmt(kept),
                fmt(nmi)
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::WarmStart;
    use std::sync::Arc;

    fn row(id: u64, data: u64, triplets: usize, kept: f64, nmi: f64) -> HistoryRow {
        HistoryRow {
            id,
            model: "RPNMF".into(),
            params: String::new(),
            seed: 0,
            iterations: 1,
            seconds: 0.0,
            acc: None,
            nmi: Some(nmi),
            kept: Some(kept),
            triplets,
            curve: Default::default(),
            convergence: Default::default(),
            k: 2,
            factors: Arc::new(WarmStart {
                w: None,
                h: ndarray::Array2::zeros((2, 3)),
                source: String::new(),
            }),
            data: Some(Fingerprint {
                n: 3,
                m: 4,
                hash: data,
            }),
            dataset: String::new(),
            preprocess: None,
            stop: String::new(),
            snapshot: None,
            evaluation: None,
            predictions: None,
            exports: Arc::default(),
        }
    }

    #[test]
    fn batches_compare_runs_on_the_loaded_data_only() {
        // Runs 1 and 3 on dataset A, run 2 on B between them.
        let history = [
            row(1, 7, 0, 0.80, 0.50),
            row(2, 9, 10, 0.10, 0.10),
            row(3, 7, 30, 0.90, 0.55),
            // No new answers: not a batch.
            row(4, 7, 30, 0.91, 0.56),
        ];
        let a = history[0].data;
        assert_eq!(
            batch_lines(&history, a),
            ["run 3 (30 triplets, +30): kept +10.0 %, NMI +5.0 %"]
        );
        // On B alone there is no pair; with nothing loaded, nothing.
        assert!(batch_lines(&history, history[1].data).is_empty());
        assert!(batch_lines(&history, None).is_empty());
    }
}
