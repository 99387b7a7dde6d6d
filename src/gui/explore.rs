//! What the exploration views share with the scatter: the basis picked in the gallery and
//! the samples it rings, and the suggested triplet waiting for an answer. Kept apart from the
//! rest of [`super::ViewState`]; each view's own state is in its feature's folder.

use crate::engine::constraints::Suggestion;
use crate::engine::data::Fingerprint;

/// What the exploration views show and hold (see the module docs).
#[derive(Default)]
pub struct ExploreView {
    /// The basis (column of W, row of H) picked in the gallery.
    pub basis: Option<usize>,
    /// Samples ringed in the scatter (those that load most on the picked basis).
    pub selection: Vec<usize>,
    /// The suggested triplet waiting for an answer.
    pub suggestion: Option<Suggestion>,
    /// The dataset `suggestion` and `selection` refer to.
    pub dataset: Option<Fingerprint>,
}

impl ExploreView {
    /// Forget what refers to another dataset's samples.
    pub fn clear_for(&mut self, fingerprint: Option<Fingerprint>) {
        if self.dataset != fingerprint {
            self.dataset = fingerprint;
            self.suggestion = None;
            self.selection.clear();
            self.basis = None;
        }
    }
}
