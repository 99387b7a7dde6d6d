//! NMF's hyperparameter table (docs/models.md §3.1): empty. Rank k, seed and the stopping rule are
//! the spec's, common to every model; NMF has nothing of its own to choose.

use crate::engine::models::HyperParam;

/// NMF's hyperparameters: none.
pub const TABLE: &[HyperParam] = &[];
