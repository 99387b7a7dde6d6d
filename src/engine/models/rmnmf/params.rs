//! RMNMF's hyperparameter table (docs/models.md §3.4) and its typed parameters, built once from
//! the checked table.

use crate::engine::models::{Checked, HyperParam, ModelError};
use crate::engine::models::params::typed_params;
use serde::Deserialize;

/// The grid 1e-5 … 1e5 the PSMF paper searched for RMNMF's λ and initial μ.
const PSMF_GRID: &[f64] = &[
    1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0, 1e3, 1e4, 1e5,
];

/// RMNMF's hyperparameters, in the order the GUI shows them.
pub const TABLE: &[HyperParam] = &[
    HyperParam::number("lambda", 0.1, 0.0..=1e6).log().with_grid(PSMF_GRID).help(
        "λ, weight of the graph term λ·Tr(Gᵀ L G) = (λ/2) Σ S_ij ‖g_i − g_j‖² (docs/models.md \
         §3.4, (3.40)): how strongly samples joined in the 5-NN graph are pulled to the same \
         cluster indicator. 0 drops the graph. Default 0.1, chosen with μ₀ by the defaults \
         protocol over the public sets (docs/models.md §9); the grid 1e-5 … 1e5 is the one the \
         PSMF paper searched.",
    ),
    HyperParam::number("mu0", 0.01, 1e-8..=1e8).log().with_grid(PSMF_GRID).help(
        "μ₀, the initial penalty of the augmented Lagrangian (docs/models.md §3.4, (3.41)); μ \
         grows by ρ every iteration up to 1e10. A small μ₀ makes the shrinkage threshold 1/μ \
         large, so E stays 0 and the constraints X = W Gᵀ + E and G = Z are loose for the first \
         few hundred iterations, while G moves; a large one holds them tightly from the start and \
         all but freezes the k-means labels. Default 0.01, chosen with λ by the defaults protocol \
         over the public sets (docs/models.md §9); the PSMF paper searched 1e-5 … 1e5.",
    ),
    HyperParam::number("rho", 1.05, 1.0..=10.0).with_grid(&[1.01, 1.05, 1.1, 1.5]).help(
        "ρ ≥ 1, growth of the penalty per iteration, μ ← min(ρμ, 1e10) (docs/models.md §3.4, \
         (3.46)). Default 1.05, the authors' code's. 1 keeps μ fixed.",
    ),
    HyperParam::count("neighbors", 5, 1..=100, &[3, 5, 10]).help(
        "p, neighbours per sample in the binary graph (docs/models.md §2.1). A whole number; \
         capped at n − 1. Default 5, the authors' code's.",
    ),
    HyperParam::flag("legacy_sign", false).help(
        "Add (λ/μ) L Z inside the Procrustes step, as the authors' MATLAB code does, instead of \
         subtracting it as the derivation does (docs/models.md §3.4, (3.44)). Off by default.",
    ),
];

/// Typed RMNMF parameters ([`Checked::typed`]).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
pub struct RmnmfParams {
    /// λ ≥ 0: weight of the graph term.
    pub lambda: f64,
    /// μ₀ > 0: the initial penalty.
    pub mu0: f64,
    /// ρ ≥ 1: the penalty's growth per iteration.
    pub rho: f64,
    /// p ≥ 1: neighbours per sample of the binary graph.
    pub neighbors: usize,
    /// `+ (λ/μ) L Z` in the G step (the authors' code) instead of `−`.
    pub legacy_sign: bool,
}

typed_params!(RmnmfParams, super::KIND);
