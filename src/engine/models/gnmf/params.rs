//! GNMF's hyperparameter table (docs/models.md §3.2) and its typed parameters, built once from
//! the checked table.

use crate::engine::linalg::GraphWeight;
use crate::engine::models::{
    Checked, ChoiceOption, HyperParam, ModelError, ParamValue, Preset,
};
use crate::engine::models::params::typed_params;
use serde::Deserialize;

/// The options of `weight`.
const WEIGHT: &[ChoiceOption] = &[
    ChoiceOption::new("binary", "Every edge weighs 1 (docs/models.md (2.3))."),
    ChoiceOption::new(
        "heat",
        "exp(−‖x_i − x_j‖² / (2t²)), t the mean distance between samples (docs/models.md (2.3a), t \
         by (2.3b)).",
    ),
    ChoiceOption::new("cosine", "The cosine of the two samples (docs/models.md (2.3c))."),
];

/// GNMF's hyperparameters, in the order the GUI shows them.
pub const TABLE: &[HyperParam] = &[
    HyperParam::number("lambda", 10.0, 0.0..=1e6)
        .log()
        .with_grid(&[1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0, 1e3, 1e4, 1e5])
        .help(
            "λ, weight of the graph term λ·Tr(H L Hᵀ) = (λ/2) Σ S_ij ‖h_i − h_j‖²: how strongly \
             samples joined in the p-NN graph are pulled to similar codes (docs/models.md §3.2, \
             (3.8)). 0 gives plain NMF, iterate for iterate. Default 10, chosen by the defaults \
             protocol over the public sets (docs/models.md §9); D. Cai's reference code uses 100 \
             (the preset `cai`). W and H start on Cai's scale, so λ means what it means there. The \
             grid 1e-5 … 1e5 is the one the PSMF paper searched.",
        ),
    HyperParam::count("neighbors", 5, 1..=100, &[3, 5, 10]).help(
        "p, neighbours per sample in the graph: each sample is joined to its p nearest others in \
         Euclidean distance, and the graph keeps an edge when either end chose it (docs/models.md \
         §2.1). A whole number; capped at n − 1. Default 5.",
    ),
    HyperParam::choice("weight", "binary", WEIGHT).help(
        "How the graph's edges are weighted (docs/models.md §2.1): binary (default), heat kernel, \
         or cosine.",
    ),
];

/// Named settings: D. Cai's reference code's λ (the default is the project's, docs/models.md §9).
pub const PRESETS: &[Preset] = &[Preset {
    name: "cai",
    help: "λ = 100, as in D. Cai's GNMF code (docs/models.md §3.2).",
    values: &[("lambda", ParamValue::Number(100.0))],
}];

/// Typed GNMF parameters ([`Checked::typed`]).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
pub struct GnmfParams {
    /// λ ≥ 0: weight of the graph term (0 is NMF).
    pub lambda: f64,
    /// p ≥ 1: neighbours per sample of the graph (docs/models.md §2.1).
    pub neighbors: usize,
    /// Edge weights of the graph.
    pub weight: GraphWeight,
}

typed_params!(GnmfParams, super::KIND);
