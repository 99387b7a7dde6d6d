//! What the comparison of two runs does: check that the pair can be compared, then align B's
//! layout to A's and flag the triplets each run's H keeps on a background task (O(n + |T|k),
//! once per pair and constraint revision), and keep the result when it arrives.

use super::state::{CompareView, Comparison};
use crate::engine::constraints::Triplet;
use crate::engine::data::Fingerprint;
use crate::engine::eval::kept_by_one;
use crate::engine::linalg::projection::{Projector, align_similarity};
use crate::gui::command::Addressed;
use crate::gui::shared::Shared;
use crate::gui::state::HistoryRow;
use ndarray::{Array2, Axis};
use std::sync::Arc;

/// What the task needs of one run: its final H and its last frame's layout, if any.
struct RunInput {
    h: Arc<crate::engine::models::WarmStart>,
    layout: Option<Array2<f64>>,
}

/// A run's title in the comparison: "Run 2 · RPNMF · ACC 0.812 · NMI 0.700 · kept 85.0 %",
/// and its parameters apart ("k=3 alpha=0.5 …", the second line).
pub fn run_title(row: &HistoryRow) -> [String; 2] {
    let mut title = format!("Run {} · {}", row.id, row.model);
    if let Some(acc) = row.acc {
        title.push_str(&format!(" · ACC {acc:.3}"));
    }
    if let Some(nmi) = row.nmi {
        title.push_str(&format!(" · NMI {nmi:.3}"));
    }
    if let Some(kept) = row.kept {
        title.push_str(&format!(" · kept {:.1} %", 100.0 * kept));
    }
    [title, row.params.clone()]
}

/// Why runs `a` and `b` cannot be compared on the loaded data `here`, if they cannot.
pub fn refusal(a: &HistoryRow, b: &HistoryRow, here: Option<Fingerprint>) -> Option<String> {
    if a.id == b.id {
        return Some(format!("Run {} twice: pick two different runs", a.id));
    }
    if a.data != b.data {
        return Some(format!(
            "Runs {} and {} cannot be compared: they were fitted on different datasets \
             ({} and {}), so their samples do not pair up",
            a.id, b.id, a.dataset, b.dataset
        ));
    }
    if a.data != here {
        return Some(format!(
            "Runs {} and {} were fitted on {}, not on the loaded data: load it to compare them",
            a.id, b.id, a.dataset
        ));
    }
    if let Some(r) = [a, b].into_iter().find(|r| r.k < 2) {
        return Some(format!(
            "Run {} has k = {}: its picture is sample index against h, which has no layout \
             to align",
            r.id, r.k
        ));
    }
    None
}

/// The comparison computed on the background task, for the pair and constraint revision
/// asked for.
pub struct Compared {
    pair: [u64; 2],
    rev: u64,
    result: Result<Box<Comparison>, String>,
}

impl Addressed for Compared {
    const FEATURE: &'static str = super::NAME;
}

impl CompareView {
    /// Open the comparison of history runs `pair` (A, B) and start computing it, unless it
    /// cannot be compared (the window then says why).
    pub(super) fn compare_runs(&mut self, pair: [u64; 2], app: &mut Shared<'_>) {
        let view = self;
        view.begin(pair);
        let find = |id: u64| app.session.history.iter().find(|r| r.id == id);
        let (Some(a), Some(b)) = (find(pair[0]), find(pair[1])) else {
            view.refuse(format!(
                "Run {} or run {} is not in the history",
                pair[0], pair[1]
            ));
            return;
        };
        let here = app.session.dataset.as_ref().map(|d| d.fingerprint);
        if let Some(why) = refusal(a, b, here) {
            view.refuse(why);
            return;
        }
        let (Some(data), Some(fingerprint)) = (app.session.dataset.clone(), here) else {
            return;
        };
        let rev = app.session.constraints_rev;
        if view.computing == Some((pair, rev)) {
            return;
        }
        let input = |r: &HistoryRow| RunInput {
            h: Arc::clone(&r.factors),
            layout: r
                .snapshot
                .as_ref()
                .map(|s| s.projection.clone())
                .filter(|p| p.nrows() == data.n() && p.ncols() == 2),
        };
        let (ia, ib) = (input(a), input(b));
        let titles = [run_title(a), run_title(b)];
        let triplets = app
            .session
            .store
            .as_ref()
            .map(|s| s.triplets().to_vec())
            .unwrap_or_default();
        let job = Job {
            runs: [ia, ib],
            triplets,
            pair,
            fingerprint,
            rev,
            titles,
        };
        let spawned = app.tasks.spawn("compare", move || Compared {
            pair,
            rev,
            result: job.run().map(Box::new),
        });
        match spawned {
            Ok(()) => view.computing = Some((pair, rev)),
            Err(e) => view.refuse(e),
        }
    }

    /// A comparison arrived: keep it if it is the pair and constraint revision asked for last.
    pub(super) fn compared(&mut self, done: Compared, app: &Shared<'_>) {
        let Compared { pair, rev, result } = done;
        let view = self;
        if view.computing != Some((pair, rev)) {
            return; // another pair or revision was asked for meanwhile
        }
        view.computing = None;
        if view.pair != Some(pair) {
            return;
        }
        match result {
            Ok(c) => match app.session.dataset.as_deref() {
                Some(data) if data.fingerprint == c.fingerprint => view.install(data, *c),
                _ => view.refuse("The dataset changed while the runs were being compared".into()),
            },
            Err(e) => view.refuse(format!(
                "Could not compare runs {} and {}: {e}",
                pair[0], pair[1]
            )),
        }
    }

    /// Keep the open comparison current: computed again when the triplets change (the flags
    /// depend on them), refused when the loaded dataset is not the runs' any more.
    pub(super) fn update_compare(&mut self, app: &mut Shared<'_>) {
        let view = &*self;
        let (true, Some(pair), None) = (view.open, view.pair, view.computing) else {
            return;
        };
        let here = app.session.dataset.as_ref().map(|d| d.fingerprint);
        let rev = app.session.constraints_rev;
        let stale = view
            .result
            .as_ref()
            .is_some_and(|r| here != Some(r.fingerprint) || r.rev != rev);
        if stale {
            self.compare_runs(pair, app);
        }
    }
}

/// One comparison to compute on the background task.
struct Job {
    runs: [RunInput; 2],
    triplets: Vec<Triplet>,
    pair: [u64; 2],
    fingerprint: Fingerprint,
    rev: u64,
    titles: [[String; 2]; 2],
}

impl Job {
    /// Both layouts (the last frame's, or the PCA of the final H when a run has none), B's
    /// aligned to A's, and the triplet flags of the two final H's.
    fn run(self) -> Result<Comparison, String> {
        let layout = |r: &RunInput| match &r.layout {
            Some(l) => Ok(l.clone()),
            None => Projector::new()
                .project(r.h.h.view())
                .map_err(|e| e.to_string()),
        };
        let [a, b] = &self.runs;
        let (layout_a, lb) = (layout(a)?, layout(b)?);
        let alignment = align_similarity(lb.view(), layout_a.view()).map_err(|e| e.to_string())?;
        let kept = if self.triplets.is_empty() {
            None
        } else {
            Some(
                kept_by_one(a.h.h.view(), b.h.h.view(), &self.triplets)
                    .map_err(|e| e.to_string())?,
            )
        };
        Ok(Comparison {
            runs: self.pair,
            fingerprint: self.fingerprint,
            rev: self.rev,
            spread_a: spread(&layout_a),
            layout_b: alignment.apply(lb.view()),
            layout_a,
            alignment,
            triplets: self.triplets,
            kept,
            titles: self.titles,
        })
    }
}

/// Root mean square distance of the rows of `layout` (n×2) to their mean.
fn spread(layout: &Array2<f64>) -> f64 {
    let Some(mean) = layout.mean_axis(Axis(0)) else {
        return 0.0;
    };
    let sq = (layout - &mean).iter().map(|v| v * v).sum::<f64>();
    (sq / layout.nrows().max(1) as f64).sqrt()
}
