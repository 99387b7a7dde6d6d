//! FNMF's hyperparameter table (docs/models.md §5.2) and its typed parameters, built once from
//! the checked table.

use crate::engine::models::params::typed_params;
use crate::engine::models::{Checked, HyperParam, ModelError};
use serde::Deserialize;

/// FNMF's hyperparameters, in the order the GUI shows them.
pub const TABLE: &[HyperParam] = &[
    HyperParam::number("beta", 0.1, 0.0..=1e6)
        .log()
        .with_grid(&[1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0, 1e3])
        .help(
            "β, weight of the graph term β·Tr(H L Hᵀ) over the adaptive-neighbour graph of the \
             samples (docs/models.md (5.1), §2.2): samples close in the data get similar codes. 0 \
             drops the graph. Default 0.1, chosen by the protocol over the seven public sets \
             (docs/models.md §9); the paper searched 1e-3 … 1e3.",
        ),
    HyperParam::number("lambda", 1.0, 0.0..=1e6)
        .log()
        .with_grid(&[1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0, 1e3])
        .help(
            "λ, weight of the diversity term λ·Σ_{j<l} θ_jᵀθ_l (docs/models.md (5.1)): how \
             strongly the components are pushed to weight different features. Default 1 (our \
             choice); the paper searched 1e-3 … 1e3.",
        ),
    HyperParam::count("components", 3, 1..=10, &[2, 3, 5]).help(
        "r, the number of feature-weighting components θ_1 … θ_r, each a weighting of the features \
         on the simplex; every sample is softly assigned to them by its row of P (docs/models.md \
         §5.1). A whole number. Default 3 (not stated in the paper; our choice).",
    ),
    HyperParam::count("neighbors", 5, 1..=100, &[3, 5, 10]).help(
        "p, neighbours per sample of the adaptive-neighbour graph (docs/models.md §2.2), \
         symmetrised as (S + Sᵀ)/2. A whole number; capped at n − 2. Default 5, as in the paper.",
    ),
];

/// Typed FNMF parameters ([`Checked::typed`]).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
pub struct FnmfParams {
    /// β ≥ 0: weight of the graph term.
    pub beta: f64,
    /// λ ≥ 0: weight of the diversity term.
    pub lambda: f64,
    /// r ≥ 1: number of feature-weighting components.
    pub components: usize,
    /// p ≥ 1: neighbours per sample of the adaptive-neighbour graph.
    pub neighbors: usize,
}

typed_params!(FnmfParams, super::KIND);
