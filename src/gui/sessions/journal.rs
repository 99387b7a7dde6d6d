//! The recovery journal: it follows the store every frame (debounced, atomic, fsync'd;
//! `engine::files::recovery`), and a start on a dataset with unsaved edits from a killed
//! session offers them back.

use super::Sessions;
use crate::engine::files::recovery::{self, Journal};
use crate::gui::feature::Shared;
use crate::gui::format::counted;
use std::time::Instant;

impl Sessions {
    /// A dataset was installed with a new store: start its journal and look for unsaved
    /// edits a killed session left for it.
    pub(super) fn start_journal(&mut self, app: &mut Shared<'_>) {
        app.session.recovery_offer = None;
        self.journal = None;
        let (Some(dir), Some(store)) = (self.recovery_dir.clone(), &app.session.store) else {
            return;
        };
        let fp = store.fingerprint();
        match recovery::find(&dir, &fp) {
            Ok(found) => app.session.recovery_offer = found,
            Err(e) => app
                .session
                .set_error(format!("Unsaved edits could not be read: {e}")),
        }
        self.journal = Some(Journal::new(&dir, fp, 0));
    }

    /// Follow the store with the journal (every frame; writes only when an edit is due).
    /// Held while a recovery offer is open, so the offered file is not overwritten.
    pub(super) fn sync_journal(&mut self, app: &mut Shared<'_>) {
        if app.session.recovery_offer.is_some() {
            return;
        }
        let (Some(journal), Some(store)) = (self.journal.as_mut(), &app.session.store) else {
            return;
        };
        if journal.fingerprint() != store.fingerprint() {
            return;
        }
        match journal.sync(store, Instant::now()) {
            Ok(Some(wait)) => app.ctx.request_repaint_after(wait),
            Ok(None) => {}
            Err(e) => {
                if !app.session.status.is_error {
                    app.session.set_error(format!(
                        "Cannot journal unsaved edits to {}: {e}",
                        journal.path().display()
                    ));
                }
            }
        }
    }

    /// The answer to "Recover N unsaved edits": bring them back (one undo step, unsaved) or
    /// discard the file.
    pub(super) fn resolve_recovery(&mut self, recover: bool, app: &mut Shared<'_>) {
        let Some(found) = app.session.recovery_offer.take() else {
            return;
        };
        let fp = found.store.fingerprint();
        if !recover {
            if let Some(dir) = &self.recovery_dir {
                let _ = recovery::discard(dir, &fp);
            }
            app.session.set_status("Discarded the unsaved edits");
            return;
        }
        let Some(store) = app.session.store.as_mut() else {
            return;
        };
        let what = format!("recover {} unsaved edits", found.edits);
        match store.replace_with(&what, found.store.triplets(), found.store.labels()) {
            Ok(()) => {
                app.session.constraints_rev += 1;
                if let Some(dir) = &self.recovery_dir {
                    self.journal = Some(Journal::new(dir, fp, found.edits));
                }
                app.session.set_status(format!(
                    "Recovered {} ({}, {}); save to keep them",
                    counted(found.edits as usize, "unsaved edit", "unsaved edits"),
                    counted(found.store.triplets().len(), "triplet", "triplets"),
                    counted(found.store.labels().n_labelled(), "label", "labels")
                ));
                self.sync_journal(app);
            }
            Err(e) => app.session.set_error(format!("Could not recover: {e}")),
        }
    }
}
