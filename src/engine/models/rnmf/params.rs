//! RNMF's hyperparameter table (docs/models.md §3.3): empty. Rank k, seed and the stopping rule are
//! the spec's, common to every model; RNMF has nothing of its own to choose.

use crate::engine::models::HyperParam;

/// RNMF's hyperparameters: none.
pub const TABLE: &[HyperParam] = &[];
