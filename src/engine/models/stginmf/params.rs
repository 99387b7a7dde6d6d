//! 2-STGINMF's hyperparameter table (docs/models.md §7) and its typed parameters, built once
//! from the checked table.

use crate::engine::models::{
    Checked, ChoiceOption, HyperParam, ModelError, ParamValue, Preset,
};
use crate::engine::models::params::typed_params;
use serde::Deserialize;

/// How two samples' base similarity is measured (docs/models.md §7.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SimKind {
    /// `exp(−‖a − b‖ / (20σ))`, the distance not squared.
    Gaussian,
    /// `aᵀb / (‖a‖‖b‖)`, negative values counted as 0.
    Cosine,
}

/// How σ of the Gaussian similarity is read from the training set (docs/models.md §7.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SigmaRule {
    /// The smallest distance between two training samples with different labels.
    Pair,
    /// The smallest distance between two class centroids of the training set.
    Centroids,
}

/// The class priors of class mass normalisation (docs/models.md §7.4, §7.5b).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Priors {
    /// The class fractions of the current training set (given and self-trained samples).
    Training,
    /// The class mix expected among the samples still unlabelled: the given fractions times
    /// n, minus what the training set already holds.
    Residual,
}

/// Named settings: the paper's own (its weights are the defaults but for `a`, which the
/// protocol of docs/models.md §9 chose).
pub const PRESETS: &[Preset] = &[Preset {
    name: "paper",
    help: "a = 0.5, the paper's weight of different-class similarities in S (docs/models.md \
           §7.1, §9); the other weights are the paper's already.",
    values: &[("a", ParamValue::Number(0.5))],
}];

/// The options of `similarity`.
const SIMILARITY: &[ChoiceOption] = &[
    ChoiceOption::new(
        "gaussian",
        "exp(−‖a − b‖ / (20σ)), the distance not squared (docs/models.md §7.1): numeric data.",
    ),
    ChoiceOption::new(
        "cosine",
        "Cosine of the two samples, negative values as 0 (docs/models.md §7.1): text and count \
         data.",
    ),
];

/// The options of `sigma`.
const SIGMA: &[ChoiceOption] = &[
    ChoiceOption::new(
        "pair",
        "σ = the smallest distance between two training samples with different labels \
         (docs/models.md §7.1).",
    ),
    ChoiceOption::new(
        "centroids",
        "σ = the smallest distance between two class centroids of the training set (docs/models.md \
         §7.1).",
    ),
];

/// The options of `priors`.
const PRIORS: &[ChoiceOption] = &[
    ChoiceOption::new(
        "residual",
        "The class mix expected among the samples still unlabelled (given fractions × n minus the \
         training set's counts): self-training does not push mass back into classes it already \
         moved (docs/models.md §7.4, §7.5b).",
    ),
    ChoiceOption::new(
        "training",
        "The class fractions of the current training set, as printed (docs/models.md §7.4).",
    ),
];

/// 2-STGINMF's hyperparameters, in the order the GUI shows them.
pub const TABLE: &[HyperParam] = &[
    HyperParam::number("lambda1", 0.01, 0.0..=10.0)
        .log()
        .with_grid(&[0.0, 0.01, 0.1, 0.5, 1.0])
        .help(
            "λ1, reward for confidence in a training sample's own class in stage 1 (docs/models.md \
             §7.2; the printed rule's weight, twice the objective's). Default 0.01, the paper's.",
        ),
    HyperParam::number("lambda2", 0.5, 0.0..=10.0).log().with_grid(&[0.0, 0.1, 0.5, 1.0]).help(
        "λ2, l1 sparsity of the training confidences V in stage 1 (docs/models.md §7.2). Default \
         0.5, the paper's.",
    ),
    HyperParam::number("lambda3", 0.5, 0.0..=10.0).log().with_grid(&[0.0, 0.1, 0.5, 1.0]).help(
        "λ3, l1 sparsity of the test confidences U in stage 2 (docs/models.md §7.3). Default 0.5, \
         the paper's.",
    ),
    HyperParam::number("a", 0.25, 0.0..=1.0).with_grid(&[0.0, 0.25, 0.5, 1.0]).help(
        "a, weight of the feature similarity between training samples of different classes in S \
         (same class: 1; docs/models.md §7.1 item 1). Default 0.25, chosen by the protocol over \
         the public sets (docs/models.md §9); the paper's 0.5 is the `paper` preset.",
    ),
    HyperParam::count("n_p", 10, 1..=10000, &[5, 10, 30, 150]).help(
        "N_P: each test–train similarity is kept only if it is among the N_P largest of its row \
         and of its column (dual-sparse, docs/models.md §7.1). The paper uses 30 on Iris and \
         Blood, 150 on R8; the default and why are in docs/models.md §7.8. Capped at the row and \
         column lengths.",
    ),
    HyperParam::count("n_k", 0, 0..=10000, &[0, 5, 10, 30, 100]).help(
        "N_K: each test sample keeps its N_K most similar other test samples in K (row-sparse, \
         then symmetrised; docs/models.md §7.1). 0 = auto (the default, chosen by the protocol \
         of docs/models.md §9): 10, or half the smallest class's size as the given labels \
         estimate it when that is less (glass, ORL: 5). The paper uses 30 on Iris and Blood, \
         100 on R8.",
    ),
    HyperParam::choice("similarity", "gaussian", SIMILARITY).help(
        "Base similarity of two samples (docs/models.md §7.1).",
    ),
    HyperParam::choice("sigma", "pair", SIGMA).help(
        "How σ of the Gaussian similarity is read from the training set, every round \
         (docs/models.md §7.1). Ignored by the cosine similarity.",
    ),
    HyperParam::flag("damping", true).help(
        "Average each ALS step with the previous iterate, V ← ½(V_new + V_old) (and the same for \
         U). Without it the printed stage-1 rule flips V's scale between c and 1/c and its stop \
         rule may never fire (docs/models.md §7.2, §7.5b).",
    ),
    HyperParam::choice("priors", "residual", PRIORS).help(
        "Class priors of class mass normalisation (docs/models.md §7.4, §7.5b). Both are the same \
         in the first pass.",
    ),
    HyperParam::count("rounds", 10, 0..=100, &[0, 1, 5, 10]).help(
        "Most self-training rounds after the first pass (docs/models.md §7.5; 0 = one pass, no \
         self-training). Self-training stops earlier when no test sample is confident enough.",
    ),
    HyperParam::number("mu", 0.9, 0.0..=1.0).with_grid(&[0.8, 0.9, 0.95, 0.99]).help(
        "μ: a test sample whose confidence (row-normalised CMN output) for a class exceeds μ joins \
         the training set with that class (docs/models.md §7.5). Default 0.9.",
    ),
    HyperParam::count("stage_iters", 200, 1..=10000, &[50, 200, 1000]).help(
        "Most ALS iterations per stage (docs/models.md §7.2–7.3: 200).",
    ),
    HyperParam::number("stage_tol", 1e-5, 0.0..=1.0).log().with_grid(&[1e-4, 1e-5, 1e-6]).help(
        "A stage ends when ‖V_{t+1} − V_t‖_F / ‖V_t‖_F (U in stage 2) falls below this \
         (docs/models.md §7.2–7.3: 1e-5).",
    ),
];

/// Typed 2-STGINMF parameters ([`Checked::typed`]).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
pub struct StginmfParams {
    pub lambda1: f64,
    pub lambda2: f64,
    pub lambda3: f64,
    pub a: f64,
    pub n_p: usize,
    pub n_k: usize,
    pub similarity: SimKind,
    pub sigma: SigmaRule,
    pub damping: bool,
    pub priors: Priors,
    pub rounds: usize,
    pub mu: f64,
    pub stage_iters: usize,
    pub stage_tol: f64,
}

typed_params!(StginmfParams, super::KIND);
