//! The recovery journal: it follows the store every frame (debounced, atomic, fsync'd;
//! `engine::files::recovery`), and a start on a dataset with unsaved edits from a killed
//! session offers them back.
//!
//! A write serializes the whole store and syncs the file: at 200,000 samples with half of
//! them painted, 16–32 ms, which on the UI thread was the frame after a lasso. So a write
//! runs on a thread of its own with a copy of the store's content ([`Store::content`]: not
//! its undo log, which a clone would copy too) ([`Journalled`]); only removing the file of a
//! clean store stays on the UI thread (it waits for a write in flight first, so the file
//! goes at once).

use super::Sessions;
use crate::engine::constraints::Store;
use crate::engine::files::recovery::{self, Journal};
use crate::gui::feature::Shared;
use crate::gui::format::counted;
use eframe::egui;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

/// What the writer thread hands back: the journal, and how its sync went.
type Written = (Journal, std::io::Result<Option<Duration>>);

/// The journal of the current store, here or lent to the thread writing it. It sees a
/// revision when it is handed one, so edits made while a write is in flight count as one
/// (as edits made within one frame always did).
#[derive(Default)]
pub(super) struct Journalled {
    /// The journal, when not lent out (`None` also when not journalling).
    journal: Option<Journal>,
    /// The write in flight: where the journal comes back, and when it was lent.
    writing: Option<(Receiver<Written>, Instant)>,
    /// The store revision last handed to the journal.
    handed: Option<u64>,
    /// When a debounced write comes due.
    due: Option<Instant>,
}

impl Journalled {
    pub(super) fn new(journal: Journal) -> Self {
        Self {
            journal: Some(journal),
            ..Self::default()
        }
    }

    /// Take the journal back from a finished write (waiting for it when `wait`); a pending
    /// debounced write is scheduled with `ctx`.
    fn take_back(&mut self, wait: bool, ctx: &egui::Context) -> Result<(), String> {
        let Some((rx, lent)) = &self.writing else {
            return Ok(());
        };
        let got = if wait {
            rx.recv().map_err(|_| TryRecvError::Disconnected)
        } else {
            rx.try_recv()
        };
        let (journal, result) = match got {
            Ok(written) => written,
            Err(TryRecvError::Empty) => return Ok(()),
            Err(TryRecvError::Disconnected) => {
                self.writing = None;
                return Err(
                    "The journal of unsaved edits stopped unexpectedly (a bug: please report it)"
                        .to_owned(),
                );
            }
        };
        let lent = *lent;
        self.writing = None;
        self.due = None;
        let path = journal.path().to_path_buf();
        self.journal = Some(journal);
        match result {
            Ok(Some(wait)) => {
                self.due = Some(lent + wait);
                ctx.request_repaint_after(wait);
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(e) => Err(cannot(&path, &e)),
        }
    }

    /// Follow `store`: a clean one removes the file here; a dirty one with a new revision,
    /// or whose debounced write is due, is synced on the writer thread.
    fn sync(&mut self, store: &Store, ctx: &egui::Context) -> Result<(), String> {
        self.take_back(!store.is_dirty(), ctx)?;
        let Some(journal) = self.journal.as_mut() else {
            return Ok(());
        };
        if journal.fingerprint() != store.fingerprint() {
            return Ok(());
        }
        let now = Instant::now();
        if !store.is_dirty() {
            self.handed = Some(store.revision());
            self.due = None;
            return journal
                .sync(store, now)
                .map(drop)
                .map_err(|e| cannot(journal.path(), &e));
        }
        let fresh = self.handed != Some(store.revision());
        if !fresh && self.due.is_none_or(|d| now < d) {
            return Ok(());
        }
        self.lend(store.content(), now, ctx)
    }

    /// Sync the journal with `store` on the writer thread.
    fn lend(&mut self, store: Store, now: Instant, ctx: &egui::Context) -> Result<(), String> {
        let Some(mut journal) = self.journal.take() else {
            return Ok(());
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let ctx = ctx.clone();
        self.handed = Some(store.revision());
        std::thread::Builder::new()
            .name("nmf-journal".into())
            .spawn(move || {
                let result = journal.sync(&store, now);
                let _ = tx.send((journal, result));
                ctx.request_repaint();
            })
            .map_err(|e| format!("Cannot journal unsaved edits (no thread): {e}"))?;
        self.writing = Some((rx, now));
        Ok(())
    }

    /// Write what is not on disk yet, now (the window is closing).
    fn flush(&mut self, store: &Store, ctx: &egui::Context) -> Result<(), String> {
        self.take_back(true, ctx)?;
        match self.journal.as_mut() {
            Some(j) => j.flush(store).map_err(|e| cannot(j.path(), &e)),
            None => Ok(()),
        }
    }
}

/// The status line's words for a journal that could not be written.
fn cannot(path: &std::path::Path, e: &std::io::Error) -> String {
    format!("Cannot journal unsaved edits to {}: {e}", path.display())
}

impl Sessions {
    /// A dataset was installed with a new store: start its journal and look for unsaved
    /// edits a killed session left for it.
    pub(super) fn start_journal(&mut self, app: &mut Shared<'_>) {
        app.session.recovery_offer = None;
        self.journal = Journalled::default();
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
        self.journal = Journalled::new(Journal::new(&dir, fp, 0));
    }

    /// Follow the store with the journal (every frame; writes only when an edit is due, on
    /// the writer thread). Held while a recovery offer is open, so the offered file is not
    /// overwritten.
    pub(super) fn sync_journal(&mut self, app: &mut Shared<'_>) {
        if app.session.recovery_offer.is_some() {
            return;
        }
        if let Some(store) = &app.session.store
            && let Err(e) = self.journal.sync(store, app.ctx)
            && !app.session.status.is_error
        {
            app.session.set_error(e);
        }
    }

    /// Write the journal now, whatever its debounce (the window is closing).
    pub(super) fn flush_journal(&mut self, app: &mut Shared<'_>) {
        if let Some(store) = &app.session.store
            && let Err(e) = self.journal.flush(store, app.ctx)
        {
            app.session.set_error(e);
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
                    self.journal = Journalled::new(Journal::new(dir, fp, found.edits));
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
