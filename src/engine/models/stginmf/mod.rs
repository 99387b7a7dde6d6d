//! 2-STGINMF — supervised two-stage iterative NMF for classification (docs/models.md §7).
//!
//! A classifier, not a factorisation of X: from the samples whose labels were given (the
//! training set L, n_L samples; Y_L their one-hot labels, n_L×k) it learns class confidences
//! V for the training samples, then U for the others (the test set T, n_T samples), by
//! factorising similarity matrices. In the order the code follows, per round:
//!
//! 1. Similarities ([`similarity`], docs/models.md §7.1). Base similarity
//!    `Sim(a, b) = exp(−‖a − b‖ / (20σ))` (the distance not squared), σ the smallest distance
//!    between training samples of different classes (option: between class centroids), or
//!    the cosine for text and count data. `S_ij = 1` for training samples of one class, else
//!    `a·Sim` (dense, n_L×n_L). P (n_T×n_L): Sim, relative by row (`Sim_ij / max_l Sim_il`),
//!    dual-sparse (kept when ≥ the N_P-th largest of its row and of its column). K (n_T×n_T):
//!    Sim without the diagonal, relative by row, row-sparse (≥ the N_K-th largest of its row),
//!    then `max(K, Kᵀ)`. P and K are sparse; no other n×n matrix is formed.
//! 2. Stage 1 (§7.2): `min_V ‖S − VVᵀ‖² − λ1 Tr(Y_Lᵀ V) + λ2 Σ|V|`. V starts random
//!    nonnegative with each row's maximum swapped into its own class and is scaled so that
//!    ‖VVᵀ‖_F = ‖S‖_F [C]. One step is the printed two-copy ALS rule
//!    `V ← [(SV + λ1 Y_L − λ2 E_L)(VᵀV + ε_r I)⁻¹]_+`, ε_r = 1e-10·Tr(VᵀV)/k, then (damping,
//!    on by default, §7.5b) `V ← ½(V_new + V_old)`. It stops when
//!    `‖V_{t+1} − V_t‖_F / ‖V_t‖_F < 1e-5` or after 200 steps.
//! 3. Stage 2 (§7.3): `min_U ‖P − UVᵀ‖² + ‖K − UUᵀ‖² + λ3 Σ|U|` with V fixed. U starts random
//!    nonnegative, scaled so that ‖UVᵀ‖_F = ‖P‖_F [C]; one step is
//!    `U ← [(PV + KU − λ3 E_T)(VᵀV + UᵀU + ε_r I)⁻¹]_+`, damped the same way, stopped the same
//!    way.
//! 4. CMN (§7.4): column a of U scaled to sum to the prior c_a (the training set's class
//!    fractions, or, by default, the residual mix still expected among the unlabelled
//!    samples, §7.5b); confidence = the row-normalised result; the prediction is its argmax
//!    (an all-zero row takes the label of its most similar training sample).
//! 5. Self-training (§7.5): test samples whose confidence exceeds μ = 0.9 join the training
//!    set with their predicted label, and the next round rebuilds everything from step 1; at
//!    most 10 rounds, ending early when none passes or the test set is empty.
//!
//! One [`crate::engine::models::Model::step`] is one ALS step of the current stage; the
//! objective is that stage's ([`algorithm::TERM_NAMES`]: stage 1's three terms, stage 2's
//! three, all reported every step), `phase()` says which round and stage the step belonged to,
//! and the model stops itself. H (k×n) holds each sample's class confidences (a training
//! sample's V row, a test sample's CMN row, both normalised to sum to 1).

mod algorithm;
mod bench;
pub mod params;
pub mod similarity;

pub use algorithm::{Stginmf, TERM_NAMES, cmn, ridge_inverse};
pub use params::{Priors, SigmaRule, SimKind, StginmfParams};

use crate::engine::models::footprint::{Intermediate, Sizes};
use super::registry::{Build, Descriptor, ModelKind, Output, SideNeed};
use super::{Model, ModelError};

/// 2-STGINMF's large intermediates: the dense train–train similarity and distances
/// (n_L×n_L, n_L the labelled samples) and the blocks of similarities of every sample
/// (docs/models.md §7.1).
fn memory(s: &Sizes<'_>) -> Vec<Intermediate> {
    let nl = s.labelled as u128;
    vec![
        Intermediate {
            what: "the dense train–train similarity and distances",
            bytes: 2 * nl * nl * 8,
        },
        Intermediate {
            what: "the similarity blocks",
            bytes: 2 * 256 * s.n as u128 * 8,
        },
    ]
}

/// 2-STGINMF in the registry.
pub const DESCRIPTOR: Descriptor = Descriptor {
    description: "Supervised two-stage iterative NMF, a classifier: the labels you give (paint, \
                  reveal, or a file) are its training set, and it predicts the class of every \
                  other sample with a confidence. Stage 1 factorises the label-augmented \
                  similarity S of the training samples as VVᵀ (V: their class confidences); \
                  stage 2 factorises the sparse test–train similarity P as UVᵀ and the sparse \
                  test–test similarity K as UUᵀ (U: the test samples' confidences), each by \
                  alternating least squares clipped at 0. Class mass normalisation turns U \
                  into predictions; self-training moves the test samples predicted with \
                  confidence above μ into the training set and repeats. The two stages and \
                  the rounds show as phases on the convergence plot. From the Chinese-language \
                  paper on two-stage iterative NMF classification (2-STGINMF).",
    params: params::TABLE,
    presets: params::PRESETS,
    needs: SideNeed::PartialLabels,
    sample_graph: true,
    output: Output::ClassPredictions,
    memory,
    bench: Some(bench::cases),
    ..Descriptor::new("stginmf", "2-STGINMF", "docs/models.md §7", build)
};

/// The handle of 2-STGINMF.
pub const KIND: ModelKind = ModelKind::of(&DESCRIPTOR);

fn build(Build { spec, params, data, side }: Build<'_>) -> Result<Box<dyn Model>, ModelError> {
    if spec.init.is_some() {
        return Err(ModelError::BadData {
            why: "2-STGINMF does not continue from a warm start: it starts from the given \
                  labels (docs/models.md §7)"
                .into(),
        });
    }
    let params = StginmfParams::from_checked(params)?;
    Ok(Box::new(Stginmf::new(
        data,
        &side.labels,
        spec.k,
        spec.seed,
        params,
    )?))
}
