//! CAN's hyperparameter table (docs/models.md §2.7) and its typed parameters, built once from the
//! checked table.

use crate::engine::models::{Checked, HyperParam, ModelError};
use crate::engine::models::params::typed_params;
use serde::Deserialize;

/// CAN's hyperparameters, in the order the GUI shows them.
pub const TABLE: &[HyperParam] = &[
    HyperParam::count("neighbors", 15, 1..=100, &[5, 10, 15, 20]).help(
        "k, neighbours per sample of the adaptive graph: each sample may only link to its k \
         nearest others, and the initial weights use the (k + 1)-th distance (docs/models.md §2.7 \
         step 1, §2.2). A whole number, capped at n − 2. Default 15, as in the authors' public \
         code.",
    ),
    HyperParam::count("rounds", 30, 1..=1000, &[10, 30, 100]).help(
        "Most graph updates before CAN stops (docs/models.md §2.7 step 3: 30 in the authors' \
         code). It stops earlier once the graph has exactly c connected components.",
    ),
];

/// Typed CAN parameters ([`Checked::typed`]).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
pub struct CanParams {
    /// k ≥ 1: neighbours per sample.
    pub neighbors: usize,
    /// Most graph updates.
    pub rounds: usize,
}

typed_params!(CanParams, super::KIND);
