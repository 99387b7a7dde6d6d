//! NMFCC's hyperparameter table (docs/models.md §3.5) and its typed parameters, built once
//! from the checked table.

use crate::engine::models::{Checked, HyperParam, ModelError};
use crate::engine::models::params::typed_params;
use serde::Deserialize;

/// The grid both weights are searched on (docs/models.md §3.5).
const GRID: &[f64] = &[1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0, 1e3];

/// NMFCC's hyperparameters, in the order the GUI shows them.
pub const TABLE: &[HyperParam] = &[
    HyperParam::number("alpha", 0.1, 0.0..=1e3).log().with_grid(GRID).help(
        "α, weight of the must-link term α Σ (1 − h_iᵀh_j)² over the must-link pairs \
         (docs/models.md §3.5): it pulls the codes of two linked samples towards an inner product \
         of 1. 0 switches it off. Default 0.1, the best cell of the grid on ORL with the \
         protocol's triplets (docs/models.md §3.5, Defaults).",
    ),
    HyperParam::number("beta", 0.1, 0.0..=1e3).log().with_grid(GRID).help(
        "β, weight of the cannot-link term β Σ (h_iᵀh_q)² over the cannot-link pairs \
         (docs/models.md §3.5): it pushes the codes of two separated samples towards orthogonal. 0 \
         switches it off; α = β = 0 is plain NMF. Default 0.1, chosen by the protocol over the \
         seven public sets (docs/models.md §9); 0.001 was the best cell on ORL alone (§3.5, \
         Defaults).",
    ),
];

/// Typed NMFCC parameters ([`Checked::typed`]).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
pub struct NmfccParams {
    /// α: weight of the must-link term, ≥ 0.
    pub alpha: f64,
    /// β: weight of the cannot-link term, ≥ 0.
    pub beta: f64,
}

typed_params!(NmfccParams, super::KIND);
