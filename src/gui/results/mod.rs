//! The results: the scores of the run on screen in the right panel ([`scores`]) and the run
//! history at its foot ([`history`]). What they draw is prepared when it changes, not per
//! frame: the scores when another evaluation comes on screen, the history's rows when a run
//! is added or scored or another dataset is loaded.

mod history;
mod scores;

pub use scores::metric_lines;

use crate::gui::command::Addressed;
use crate::gui::feature::{Event, Feature, Place, Shared};
use eframe::egui;
use std::any::Any;
use std::path::PathBuf;
use std::sync::Arc;

/// The name its messages are addressed to.
const NAME: &str = "results";

/// What its panel asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Write the run history table as CSV to this path (atomically).
    Export(PathBuf),
}

impl Addressed for Command {
    const FEATURE: &'static str = NAME;
}

/// The results' state: the history's CSV path field and what the panels draw.
#[derive(Default)]
pub struct Results {
    /// Text of the history export path field.
    pub history_path: String,
    /// The scores of the evaluation on screen.
    scores: Option<scores::Scores>,
    /// The history table's rows.
    rows: Vec<history::Row>,
    /// How many times the scores or the rows were prepared (tests check that drawing does
    /// not prepare).
    preparations: usize,
}

impl Results {
    /// How many times the scores or the history rows were prepared so far.
    pub fn preparations(&self) -> usize {
        self.preparations
    }

    /// Prepare the scores again when another evaluation is on screen (a pointer comparison
    /// otherwise).
    fn prepare_scores(&mut self, app: &Shared<'_>) {
        let current = app.session.evaluation.as_ref();
        let same = match (&self.scores, current) {
            (Some(s), Some(ev)) => Arc::ptr_eq(&s.of, ev),
            (None, None) => true,
            _ => false,
        };
        if !same {
            self.scores = current.map(|ev| scores::Scores::of(ev, app.ctx));
            self.preparations += 1;
        }
    }

    fn prepare_rows(&mut self, app: &Shared<'_>) {
        let here = app.session.dataset.as_ref().map(|d| d.fingerprint);
        self.rows = app
            .session
            .history
            .iter()
            .map(|r| history::Row::of(r, here))
            .collect();
        self.preparations += 1;
    }
}

impl Feature for Results {
    fn name(&self) -> &'static str {
        NAME
    }

    fn on_event(&mut self, event: Event, app: &mut Shared<'_>) {
        if matches!(event, Event::HistoryChanged | Event::DatasetChanged) {
            self.prepare_rows(app);
        }
    }

    fn on_message(&mut self, msg: Box<dyn Any + Send>, app: &mut Shared<'_>) {
        if let Ok(cmd) = msg.downcast::<Command>() {
            let Command::Export(path) = *cmd;
            history::export(&path, app);
        }
    }

    fn ui(&mut self, place: Place, ui: &mut egui::Ui, app: &mut Shared<'_>) {
        match place {
            Place::Right => {
                self.prepare_scores(app);
                ui.separator();
                scores::show(ui, app.settings, app.session, self.scores.as_ref());
            }
            Place::History => history::show(
                ui,
                app.session,
                &self.rows,
                &mut self.history_path,
                app.view,
                app.commands,
            ),
            _ => {}
        }
    }

    crate::feature_any!();
}
