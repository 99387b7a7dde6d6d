//! FNMF: feature-weighted NMF (Mulin Chen, Maoguo Gong, Xuelong Li, arXiv:2103.13491, 2021;
//! docs/models.md §5, reconstructed from the surviving text).
//!
//! Objective (5.1), with r feature weightings θ_j on the simplex (Θ_j = diag(θ_j)) and soft
//! assignments p_i of the samples to them (rows of P, n×r, on the simplex):
//!
//! `F = Σ_i Σ_j p_ij² ‖θ_j ⊙ x_i − W h_i‖² + β Tr(H L Hᵀ) + λ Σ_{j<l} θ_jᵀ θ_l`,
//!
//! W, H ≥ 0, S the symmetrised adaptive-neighbour graph of the samples (docs/models.md §2.2,
//! built once, [`crate::engine::linalg::adaptive_graph`]), D_S = diag(S1), L = D_S − S.
//! Features that are zero in every sample are left out of Θ (their θ is 0; §5.3, §10.2).
//!
//! Start (§5.3): W, H as NMF's seeded draw (or the warm start), θ_j and the rows of P drawn
//! from Dirichlet(1) independently (a second ChaCha8 stream of the same seed), which breaks the
//! symmetry between the components. Then R = WH.
//!
//! One iteration (§5.4), in this order:
//! 1. Θ step, j = 1..r with the freshest θ_l: `a_t = Σ_i p_ij² x_ti²` (floored at
//!    1e-12·max a), `b_t = λ Σ_{l≠j} θ_lt − 2 Σ_i p_ij² x_ti R_ti`, θ_j ← the exact minimiser of
//!    `Σ_t a_t θ_t² + b_t θ_t` on the simplex ([`crate::engine::linalg::weighted_simplex_qp`]);
//! 2. P step: `q_ij = ‖θ_j ⊙ x_i − r_i‖²` (floored at 1e-12·mean q), `p_ij = q_ij⁻¹ / Σ_l q_il⁻¹`;
//! 3. W step: `Y = Σ_j Θ_j X diag(p_:j²)` (m×n), `d = Σ_j p_:j²`,
//!    `W ← W ⊙ (Y Hᵀ) ⊘ max(W (H D Hᵀ), ε)`;
//! 4. H step (new W): `H ← H ⊙ (Wᵀ Y + β H S) ⊘ max(Wᵀ W H D + β H D_S, ε)`, then H·S and
//!    Tr(H L Hᵀ) of the new H in one pass over S (GNMF's [`crate::engine::models::gnmf`] pass);
//! 5. R = WH, the q of the current Θ and R, and F: `weighted_fit = Σ p_ij² q_ij`,
//!    `graph = β Tr(H L Hᵀ)`, `diversity = λ Σ_{j<l} θ_jᵀθ_l`.
//!
//! Θ and P are exact block minimisers and W, H majorisation steps, so F never increases.
//! After the last iteration W's columns are scaled to unit length (H's rows compensate) for
//! k-means (§10.3); the reported objective stays the last iterate's.

mod algorithm;
pub mod params;

pub use algorithm::Fnmf;
pub use params::FnmfParams;

use super::bench::{On, against_nmf};
use super::registry::{Build, Descriptor, ModelKind};
use super::{Model, ModelError};
use crate::engine::models::footprint::{Intermediate, Sizes};

/// FNMF's large intermediates: the adaptive-neighbour graph's p-NN search and its two m×n
/// working arrays (docs/models.md §2.2).
fn memory(s: &Sizes<'_>) -> Vec<Intermediate> {
    vec![
        s.knn(
            "the adaptive-neighbour graph",
            s.m,
            s.count("neighbors", 5) + 1,
        ),
        s.like_x("the m×n working arrays", 2),
    ]
}

/// FNMF in the registry.
pub const DESCRIPTOR: Descriptor = Descriptor {
    description: "Feature-weighted NMF: r weightings θ_1 … θ_r of the features (each on the \
                  simplex) and a soft assignment p_i of every sample to them; W h_i \
                  reconstructs the weighted sample θ_j ⊙ x_i, so each component can ignore \
                  features that do not help. It minimises Σ_i Σ_j p_ij² ‖θ_j ⊙ x_i − W h_i‖² + \
                  β·Tr(H L Hᵀ) + λ·Σ_{j<l} θ_jᵀθ_l, with L the Laplacian of the adaptive-neighbour \
                  graph of the samples. Uses no side information beyond X. Θ (r×m) and P (n×r) \
                  are exported. Reconstructed from the surviving text of M. Chen, M. Gong, X. Li, \
                  Feature Weighted Non-negative Matrix Factorization, arXiv:2103.13491, 2021.",
    params: params::TABLE,
    has_w: true,
    sample_graph: true,
    memory,
    bench: Some(|b| against_nmf(b, KIND, &[(On::Orl, 40), (On::Random1440, 20)])),
    ..Descriptor::new("fnmf", "FNMF", "docs/models.md §5", build)
};

/// The handle of FNMF.
pub const KIND: ModelKind = ModelKind::of(&DESCRIPTOR);

fn build(
    Build {
        spec, params, data, ..
    }: Build<'_>,
) -> Result<Box<dyn Model>, ModelError> {
    let params = FnmfParams::from_checked(params)?;
    Ok(Box::new(Fnmf::start(data, spec, params)?))
}
