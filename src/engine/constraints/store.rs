//! The constraint store: triplets and partial labels behind one undo/redo log
//! (DESIGN.md §3 "Constraints").
//!
//! Every change goes through a transaction ([`Store::transaction`]); a transaction is one undo
//! step however many primitive changes it makes (a lasso painting 500 labels, "generate 1200
//! triplets"), and it is all-or-nothing: an error rolls back what it had applied. A new edit
//! drops the redo tail; the log keeps the last [`UNDO_CAP`] steps. Jobs receive an immutable
//! [`Store::snapshot`].

use super::SideInfo;
use super::{ConstraintError, Labels, Triplet, TripletSet};
use crate::engine::data::Fingerprint;
use ndarray::Array2;
use std::collections::VecDeque;
use std::sync::Arc;

/// Undo steps kept by default.
pub const UNDO_CAP: usize = 1000;

/// A primitive, invertible change.
#[derive(Clone, Debug, PartialEq)]
enum Op {
    InsertTriplet {
        at: usize,
        t: Triplet,
    },
    RemoveTriplet {
        at: usize,
        t: Triplet,
    },
    SetLabel {
        i: usize,
        old: Option<usize>,
        new: Option<usize>,
    },
    AddClass {
        name: String,
    },
    PopClass {
        name: String,
    },
}

impl Op {
    fn inverse(&self) -> Op {
        match self {
            Op::InsertTriplet { at, t } => Op::RemoveTriplet { at: *at, t: *t },
            Op::RemoveTriplet { at, t } => Op::InsertTriplet { at: *at, t: *t },
            Op::SetLabel { i, old, new } => Op::SetLabel {
                i: *i,
                old: *new,
                new: *old,
            },
            Op::AddClass { name } => Op::PopClass { name: name.clone() },
            Op::PopClass { name } => Op::AddClass { name: name.clone() },
        }
    }

    /// Apply to the data. Ops recorded by a transaction always re-apply cleanly in undo/redo
    /// order; an error here means a logic error and leaves the data unchanged.
    fn apply(&self, triplets: &mut TripletSet, labels: &mut Labels) -> Result<(), ConstraintError> {
        match self {
            Op::InsertTriplet { at, t } => triplets.insert_at(*at, *t).map(drop),
            Op::RemoveTriplet { t, .. } => triplets.remove(t).map(drop),
            Op::SetLabel { i, new, .. } => labels.set(*i, *new).map(drop),
            Op::AddClass { name } => labels.add_class(name).map(drop),
            Op::PopClass { .. } => {
                labels.pop_class();
                Ok(())
            }
        }
    }
}

/// One undo step: a description for the UI and its primitive changes, in order.
#[derive(Clone, Debug)]
struct Edit {
    what: String,
    ops: Vec<Op>,
    /// State ids before and after (for the dirty flag).
    before: u64,
    after: u64,
}

/// Triplets and labels for one dataset, with undo/redo and a dirty flag.
#[derive(Clone, Debug)]
pub struct Store {
    fingerprint: Fingerprint,
    triplets: TripletSet,
    labels: Labels,
    undo: VecDeque<Edit>,
    redo: Vec<Edit>,
    cap: usize,
    /// Identifies the current content; a new id per edit, restored by undo/redo.
    state: u64,
    next_state: u64,
    saved_state: u64,
}

/// An open transaction: the edits made through it become one undo step.
pub struct Tx<'a> {
    triplets: &'a mut TripletSet,
    labels: &'a mut Labels,
    ops: Vec<Op>,
}

impl Tx<'_> {
    fn run(&mut self, op: Op) -> Result<(), ConstraintError> {
        op.apply(self.triplets, self.labels)?;
        self.ops.push(op);
        Ok(())
    }

    /// Number of samples.
    pub fn n(&self) -> usize {
        self.labels.n()
    }

    /// The triplets as they are inside the transaction.
    pub fn triplets(&self) -> &[Triplet] {
        self.triplets.as_slice()
    }

    /// The labels as they are inside the transaction.
    pub fn labels(&self) -> &Labels {
        self.labels
    }

    /// Append a triplet (validated; duplicates refused).
    pub fn add_triplet(&mut self, t: Triplet) -> Result<(), ConstraintError> {
        let at = self.triplets.len();
        self.triplets.check_new(t)?;
        self.run(Op::InsertTriplet { at, t })
    }

    /// Remove a triplet.
    pub fn remove_triplet(&mut self, t: Triplet) -> Result<(), ConstraintError> {
        let at = self
            .triplets
            .position(&t)
            .ok_or(ConstraintError::NotFound { t })?;
        self.run(Op::RemoveTriplet { at, t })
    }

    /// Set (or clear, with `None`) the label of sample i. Setting the same value records
    /// nothing.
    pub fn set_label(&mut self, i: usize, class: Option<usize>) -> Result<(), ConstraintError> {
        if i >= self.labels.n() {
            return Err(ConstraintError::SampleOutOfRange {
                index: i,
                n: self.labels.n(),
            });
        }
        let old = self.labels.get(i);
        if old == class {
            return Ok(());
        }
        self.run(Op::SetLabel { i, old, new: class })
    }

    /// Add a named class; returns its index.
    pub fn add_class(&mut self, name: &str) -> Result<usize, ConstraintError> {
        let name = name.trim().to_owned();
        self.run(Op::AddClass { name })?;
        Ok(self.labels.n_classes() - 1)
    }

    /// The index of class `name`, adding it if it does not exist yet.
    pub fn class_named(&mut self, name: &str) -> Result<usize, ConstraintError> {
        match self.labels.class_index(name.trim()) {
            Some(c) => Ok(c),
            None => self.add_class(name),
        }
    }

    fn rollback(self) {
        for op in self.ops.iter().rev() {
            let _ = op.inverse().apply(self.triplets, self.labels);
        }
    }
}

impl Store {
    /// An empty store for the dataset with this fingerprint.
    pub fn new(fingerprint: Fingerprint) -> Self {
        Self::with_cap(fingerprint, UNDO_CAP)
    }

    /// An empty store keeping at most `cap` undo steps (≥ 1).
    pub fn with_cap(fingerprint: Fingerprint, cap: usize) -> Self {
        Self {
            fingerprint,
            triplets: TripletSet::new(fingerprint.n),
            labels: Labels::new(fingerprint.n),
            undo: VecDeque::new(),
            redo: Vec::new(),
            cap: cap.max(1),
            state: 0,
            next_state: 1,
            saved_state: 0,
        }
    }

    /// A clean store (nothing to undo, not dirty) holding the given content, checked.
    pub fn from_parts(
        fingerprint: Fingerprint,
        triplets: &[Triplet],
        labels: Labels,
    ) -> Result<Self, ConstraintError> {
        if labels.n() != fingerprint.n {
            return Err(ConstraintError::LabelCount {
                got: labels.n(),
                n: fingerprint.n,
            });
        }
        let mut store = Self::new(fingerprint);
        for &t in triplets {
            store.triplets.push(t)?;
        }
        store.labels = labels;
        Ok(store)
    }

    /// The dataset this store belongs to.
    pub fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
    }

    /// Number of samples.
    pub fn n(&self) -> usize {
        self.fingerprint.n
    }

    /// The triplets, in insertion order.
    pub fn triplets(&self) -> &[Triplet] {
        self.triplets.as_slice()
    }

    /// Whether `t` is in the store.
    pub fn contains(&self, t: &Triplet) -> bool {
        self.triplets.contains(t)
    }

    /// The partial labels.
    pub fn labels(&self) -> &Labels {
        &self.labels
    }

    /// Run `f` as one undo step named `what`. All-or-nothing: on error every change `f` made
    /// is rolled back and the log is untouched. An edit that changes nothing records nothing.
    pub fn transaction<R>(
        &mut self,
        what: &str,
        f: impl FnOnce(&mut Tx<'_>) -> Result<R, ConstraintError>,
    ) -> Result<R, ConstraintError> {
        let mut tx = Tx {
            triplets: &mut self.triplets,
            labels: &mut self.labels,
            ops: Vec::new(),
        };
        match f(&mut tx) {
            Ok(r) => {
                let ops = std::mem::take(&mut tx.ops);
                if !ops.is_empty() {
                    self.record(what, ops);
                }
                Ok(r)
            }
            Err(e) => {
                tx.rollback();
                Err(e)
            }
        }
    }

    fn record(&mut self, what: &str, ops: Vec<Op>) {
        let before = self.state;
        let after = self.next_state;
        self.next_state += 1;
        self.state = after;
        self.redo.clear();
        self.undo.push_back(Edit {
            what: what.to_owned(),
            ops,
            before,
            after,
        });
        while self.undo.len() > self.cap {
            self.undo.pop_front();
        }
    }

    /// Add one triplet (one undo step).
    pub fn add_triplet(&mut self, t: Triplet) -> Result<(), ConstraintError> {
        self.transaction(&format!("add triplet {t}"), |tx| tx.add_triplet(t))
    }

    /// Add many triplets as one undo step; all or none (the first invalid or duplicate one
    /// is named in the error). Returns how many were added.
    pub fn add_triplets(
        &mut self,
        what: &str,
        ts: impl IntoIterator<Item = Triplet>,
    ) -> Result<usize, ConstraintError> {
        self.transaction(what, |tx| {
            let mut k = 0;
            for t in ts {
                tx.add_triplet(t)?;
                k += 1;
            }
            Ok(k)
        })
    }

    /// Remove one triplet (one undo step).
    pub fn remove_triplet(&mut self, t: Triplet) -> Result<(), ConstraintError> {
        self.transaction(&format!("remove triplet {t}"), |tx| tx.remove_triplet(t))
    }

    /// Remove every triplet (one undo step).
    pub fn clear_triplets(&mut self) {
        let all = self.triplets.as_slice().to_vec();
        let _ = self.transaction("clear triplets", |tx| {
            all.into_iter().rev().try_for_each(|t| tx.remove_triplet(t))
        });
    }

    /// Set (or clear) one label (one undo step).
    pub fn set_label(&mut self, i: usize, class: Option<usize>) -> Result<(), ConstraintError> {
        self.transaction(&format!("label sample {i}"), |tx| tx.set_label(i, class))
    }

    /// Give every sample in `samples` the same label (or clear it): one undo step, e.g. one
    /// lasso drag.
    pub fn set_labels(
        &mut self,
        samples: &[usize],
        class: Option<usize>,
    ) -> Result<(), ConstraintError> {
        let what = match class {
            Some(c) => format!("label {} samples as class {c}", samples.len()),
            None => format!("clear the labels of {} samples", samples.len()),
        };
        self.transaction(&what, |tx| {
            samples.iter().try_for_each(|&i| tx.set_label(i, class))
        })
    }

    /// Set `(sample, class)` pairs as one undo step (e.g. "reveal 10% of the labels").
    pub fn set_label_pairs(
        &mut self,
        what: &str,
        pairs: &[(usize, usize)],
    ) -> Result<(), ConstraintError> {
        self.transaction(what, |tx| {
            pairs
                .iter()
                .try_for_each(|&(i, c)| tx.set_label(i, Some(c)))
        })
    }

    /// Add a class; returns its index (one undo step).
    pub fn add_class(&mut self, name: &str) -> Result<usize, ConstraintError> {
        self.transaction(&format!("add class `{}`", name.trim()), |tx| {
            tx.add_class(name)
        })
    }

    /// Label `samples` with the class called `name`, creating the class if needed: one undo
    /// step. Returns the class index.
    pub fn label_as(&mut self, samples: &[usize], name: &str) -> Result<usize, ConstraintError> {
        let what = format!("label {} samples as `{}`", samples.len(), name.trim());
        self.transaction(&what, |tx| {
            let c = tx.class_named(name)?;
            samples.iter().try_for_each(|&i| tx.set_label(i, Some(c)))?;
            Ok(c)
        })
    }

    /// Clear all labels (classes are kept): one undo step.
    pub fn clear_labels(&mut self) {
        let labelled: Vec<usize> = (0..self.n())
            .filter(|&i| self.labels.get(i).is_some())
            .collect();
        let _ = self.set_labels(&labelled, None);
    }

    /// Replace everything with other content (e.g. a loaded file): one undo step.
    pub fn replace_with(
        &mut self,
        what: &str,
        triplets: &[Triplet],
        labels: &Labels,
    ) -> Result<(), ConstraintError> {
        if labels.n() != self.n() {
            return Err(ConstraintError::LabelCount {
                got: labels.n(),
                n: self.n(),
            });
        }
        let old: Vec<Triplet> = self.triplets.as_slice().to_vec();
        let old_classes = self.labels.n_classes();
        self.transaction(what, |tx| {
            for i in 0..tx.n() {
                tx.set_label(i, None)?;
            }
            for _ in 0..old_classes {
                let name = tx.labels.class_names().last().cloned().unwrap_or_default();
                tx.run(Op::PopClass { name })?;
            }
            for t in old.into_iter().rev() {
                tx.remove_triplet(t)?;
            }
            for name in labels.class_names() {
                tx.add_class(name)?;
            }
            for (i, &c) in labels.as_slice().iter().enumerate() {
                tx.set_label(i, c)?;
            }
            triplets.iter().try_for_each(|&t| tx.add_triplet(t))
        })
    }

    /// Undo the last step; returns its description.
    pub fn undo(&mut self) -> Option<String> {
        let edit = self.undo.pop_back()?;
        for op in edit.ops.iter().rev() {
            let _ = op.inverse().apply(&mut self.triplets, &mut self.labels);
        }
        self.state = edit.before;
        let what = edit.what.clone();
        self.redo.push(edit);
        Some(what)
    }

    /// Redo the last undone step; returns its description.
    pub fn redo(&mut self) -> Option<String> {
        let edit = self.redo.pop()?;
        for op in &edit.ops {
            let _ = op.apply(&mut self.triplets, &mut self.labels);
        }
        self.state = edit.after;
        let what = edit.what.clone();
        self.undo.push_back(edit);
        Some(what)
    }

    /// Description of the step [`Self::undo`] would undo.
    pub fn undo_description(&self) -> Option<&str> {
        self.undo.back().map(|e| e.what.as_str())
    }

    /// Description of the step [`Self::redo`] would redo.
    pub fn redo_description(&self) -> Option<&str> {
        self.redo.last().map(|e| e.what.as_str())
    }

    pub fn can_undo(&self) -> bool {
        !self.undo.is_empty()
    }

    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty()
    }

    /// Undo steps available.
    pub fn undo_len(&self) -> usize {
        self.undo.len()
    }

    /// Redo steps available.
    pub fn redo_len(&self) -> usize {
        self.redo.len()
    }

    /// Whether the content differs from the last save (or from the start).
    pub fn is_dirty(&self) -> bool {
        self.state != self.saved_state
    }

    /// Identifies the current content: changes with every edit, restored by undo/redo (the
    /// recovery journal writes when it changes).
    pub fn revision(&self) -> u64 {
        self.state
    }

    /// The same content, revision and saved state without the undo and redo logs: what a
    /// reader of the content alone (the recovery journal's writer thread) needs. A clone
    /// would copy the logs too, up to [`UNDO_CAP`] steps of edits (at 200,000 samples, ten
    /// lassos painting half of them are a million logged ops).
    pub fn content(&self) -> Store {
        Store {
            fingerprint: self.fingerprint,
            triplets: self.triplets.clone(),
            labels: self.labels.clone(),
            undo: VecDeque::new(),
            redo: Vec::new(),
            cap: self.cap,
            state: self.state,
            next_state: self.next_state,
            saved_state: self.saved_state,
        }
    }

    /// Record that the current content was saved.
    pub fn mark_saved(&mut self) {
        self.saved_state = self.state;
    }

    /// An immutable copy for a job. `labels` is empty when no sample is labelled.
    pub fn snapshot(&self) -> Arc<SideInfo> {
        Arc::new(SideInfo::new(
            self.triplets.as_slice().to_vec(),
            self.labels.as_slice().to_vec(),
        ))
    }

    /// Must-link pairs derived from the triplets (see [`super::must_links`]).
    pub fn must_links(&self) -> Vec<(usize, usize)> {
        super::must_links(self.triplets())
    }

    /// Cannot-link pairs derived from the triplets (see [`super::cannot_links`]).
    pub fn cannot_links(&self) -> Vec<(usize, usize)> {
        super::cannot_links(self.triplets())
    }

    /// The n×c one-hot label matrix (zero rows for unlabelled samples).
    pub fn label_matrix(&self) -> Array2<f64> {
        self.labels.label_matrix()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(n: usize) -> Fingerprint {
        Fingerprint { n, m: 3, hash: 7 }
    }

    fn t(i: usize, j: usize, q: usize) -> Triplet {
        Triplet::new(i, j, q)
    }

    #[test]
    fn content_keeps_what_the_journal_reads_and_drops_the_logs() {
        let mut s = Store::new(fp(200_000));
        let half: Vec<usize> = (0..200_000).step_by(2).collect();
        let rest: Vec<usize> = (1..200_000).step_by(2).collect();
        for round in 0..10 {
            let (a, b) = if round % 2 == 0 {
                (&half, &rest)
            } else {
                (&rest, &half)
            };
            s.label_as(a, "a").unwrap();
            s.label_as(b, "b").unwrap();
        }
        s.add_triplet(Triplet::new(0, 1, 2)).unwrap();
        s.undo();
        assert_eq!((s.undo_len(), s.redo_len()), (20, 1));
        let c = s.content();
        assert_eq!(c.labels().as_slice(), s.labels().as_slice());
        assert_eq!(c.triplets(), s.triplets());
        assert_eq!(c.revision(), s.revision());
        assert_eq!(c.is_dirty(), s.is_dirty());
        assert_eq!(c.fingerprint(), s.fingerprint());
        assert_eq!((c.undo_len(), c.redo_len()), (0, 0));
    }

    #[test]
    fn undo_redo_and_dirty() {
        let mut s = Store::new(fp(5));
        assert!(!s.is_dirty());
        s.add_triplet(t(0, 1, 2)).unwrap();
        s.add_triplet(t(1, 2, 3)).unwrap();
        assert!(s.is_dirty());
        s.mark_saved();
        assert!(!s.is_dirty());
        s.remove_triplet(t(0, 1, 2)).unwrap();
        assert_eq!(s.triplets(), &[t(1, 2, 3)]);
        assert!(s.is_dirty());
        assert_eq!(s.undo().as_deref(), Some("remove triplet (0, 1, 2)"));
        assert_eq!(s.triplets(), &[t(0, 1, 2), t(1, 2, 3)], "order restored");
        assert!(!s.is_dirty(), "back at the saved state");
        s.undo();
        assert_eq!(s.triplets(), &[t(0, 1, 2)]);
        assert!(s.is_dirty());
        s.redo();
        assert!(!s.is_dirty());
        // A new edit drops the redo tail.
        s.undo();
        assert!(s.can_redo());
        s.add_triplet(t(4, 3, 2)).unwrap();
        assert!(!s.can_redo());
        assert_eq!(s.triplets(), &[t(0, 1, 2), t(4, 3, 2)]);
        assert!(s.redo().is_none());
    }

    #[test]
    fn refused_edits_leave_no_trace() {
        let mut s = Store::new(fp(4));
        s.add_triplet(t(0, 1, 2)).unwrap();
        let e = s.add_triplet(t(0, 1, 2)).unwrap_err();
        assert!(e.to_string().contains("already in the list"));
        let e = s
            .add_triplets("batch", [t(1, 2, 3), t(2, 3, 9)])
            .unwrap_err();
        assert!(e.to_string().contains("q = 9 is out of range"));
        assert_eq!(s.triplets(), &[t(0, 1, 2)], "batch rolled back");
        assert_eq!(s.undo_len(), 1);
        assert!(s.set_label(0, Some(0)).is_err(), "no class yet");
        assert_eq!(s.undo_len(), 1);
    }

    #[test]
    fn batch_is_one_undo_step() {
        let mut s = Store::new(fp(6));
        let added = s
            .add_triplets("generate", [t(0, 1, 2), t(1, 2, 3), t(2, 3, 4)])
            .unwrap();
        assert_eq!(added, 3);
        let c = s.label_as(&[0, 2, 4, 5], "faces").unwrap();
        assert_eq!(c, 0);
        assert_eq!(s.labels().n_labelled(), 4);
        assert_eq!(s.undo_len(), 2);
        s.undo();
        assert_eq!(s.labels().n_labelled(), 0);
        assert_eq!(
            s.labels().n_classes(),
            0,
            "the new class goes with the lasso"
        );
        s.undo();
        assert!(s.triplets().is_empty());
        s.redo();
        s.redo();
        assert_eq!(s.triplets().len(), 3);
        assert_eq!(s.labels().get(5), Some(0));
        let y = s.label_matrix();
        assert_eq!(y.sum(), 4.0);
        let snap = s.snapshot();
        assert_eq!(snap.triplets.len(), 3);
        assert_eq!(snap.labels.len(), 6);
        assert_eq!(s.must_links(), vec![(0, 1), (1, 2), (2, 3)]);
        assert_eq!(s.cannot_links(), vec![(0, 2), (1, 3), (2, 4)]);
    }

    #[test]
    fn cap_drops_the_oldest_steps() {
        let mut s = Store::with_cap(fp(50), 3);
        for k in 0..5 {
            s.add_triplet(t(k, k + 1, k + 2)).unwrap();
        }
        assert_eq!(s.undo_len(), 3);
        while s.undo().is_some() {}
        assert_eq!(
            s.triplets().len(),
            2,
            "the two oldest edits are beyond the cap"
        );
        assert!(s.is_dirty());
        assert_eq!(Store::new(fp(3)).cap, UNDO_CAP);
    }

    #[test]
    fn replace_with_is_one_step() {
        let mut s = Store::new(fp(4));
        s.add_class("a").unwrap();
        s.set_label(1, Some(0)).unwrap();
        s.add_triplet(t(0, 1, 2)).unwrap();
        let before = (s.triplets().to_vec(), s.labels().clone());
        let new_labels = Labels::from_parts(
            4,
            vec![Some(1), None, None, Some(0)],
            vec!["x".into(), "y".into()],
        )
        .unwrap();
        s.replace_with("load", &[t(3, 2, 1)], &new_labels).unwrap();
        assert_eq!(s.triplets(), &[t(3, 2, 1)]);
        assert_eq!(s.labels(), &new_labels);
        s.undo();
        assert_eq!((s.triplets().to_vec(), s.labels().clone()), before);
    }
}
