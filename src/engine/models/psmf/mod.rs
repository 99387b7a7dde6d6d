//! PSMF — pseudo-supervised matrix factorization in a discriminative subspace (Ma, Zhang,
//! Zhang, Du, Tao, IJCAI 2019; docs/models.md §6).
//!
//! `min ‖Πᵀ X J − F Gᵀ‖_{2,1} + λ1 Tr(Gᵀ L_m G) + λ2 Tr(Πᵀ X L_W Xᵀ Π)` subject to
//! `Πᵀ S_t Π = I_s`, `GᵀG = I_k`, `G ≥ 0` (§6.1, (6.1)). Our H is Gᵀ (k×n), the soft cluster
//! indicator; the learned embedding Πᵀx (s×n) is exported. In the order the code follows:
//!
//! 1. PCA (§6.3) [C]: when m ≥ n, the centred X is replaced by its first
//!    r = min(m, n/2, 100) principal coordinates (a thin SVD), so that S_t is full rank and
//!    AAᵀ ≈ I holds; stated in the run's notes.
//! 2. Whitening (§6.3): `S_t = X J Xᵀ + εI`, ε = 1e-6·Tr(S_t)/m', ×10 per failed Cholesky;
//!    `S_t = RᵀR` (R = Lᵀ, faer's LLᵀ); `A = R^{-T} X J` by one triangular solve. Q = RΠ, so
//!    `Q^TQ = I`. S_t (m'×m') is the only m'×m' matrix, formed once, as the spec requires.
//! 3. Start (§6.3): labels from CAN (`init = can`, the paper's choice, [`crate::engine::models::can`])
//!    or k-means (10 starts), or G from a warm start's H (Proc(Hᵀ)); `G = Y(YᵀY)^{-1/2}`;
//!    Q the top left singular vectors of AŜ (LDA in the whitened space) completed to s columns
//!    by a seeded orthonormal draw; `F = QᵀAG`; E = 0, Z1 = G, Z2 = Q, Λ = 0;
//!    `μ0 = 1/median_i ‖(QᵀA − FGᵀ)_{:,i}‖` unless given.
//! 4. Each iteration (§6.4): the pseudo labels ℓ = argmax G, `L_W = I − ŜŜᵀ` applied implicitly
//!    (`L_W v` subtracts the pseudo-class means, O(ns)) and the binary p-NN graph of QᵀA
//!    (L_m, sparse, rebuilt, O(n²s)); then E (column shrinkage), Z1, Z2 (Procrustes), G
//!    (Procrustes, n×k), Q (Procrustes, m'×s; with the MM term `Q − A(AᵀQ)` when `mm`), F, the
//!    multipliers and `μ ← min(ρμ, μ_max)`. `C Z = A(L_W(AᵀZ))`, never forming C, O(m'ns).
//! 5. Monitoring: the objective (l2,1 + λ1·graph + λ2·lda, under this iteration's Laplacians)
//!    plus the three primal residuals as extra terms (not in the total). PSMF stops as
//!    converged after `iterations` (50, the paper) or when the residuals are all below 1e-9.
//! 6. Output (§6.5): labels `argmax_a (Z1)_ia`, scored directly (no k-means).

mod algorithm;
mod bench;
pub mod params;

pub use algorithm::{Psmf, Whitened, laplacian_apply, lw_apply, scaled_indicator, whiten};
pub use params::{LwVariant, PsmfInit, PsmfParams};

use crate::engine::models::footprint::{Intermediate, Sizes};
use super::registry::{Build, Descriptor, ModelKind, Output};
use super::{Model, ModelError};

/// PSMF's large intermediates: the whitened data, the p-NN graph of the subspace and, when
/// it starts from CAN, CAN's dense n×n state (docs/models.md §6.6).
fn memory(s: &Sizes<'_>) -> Vec<Intermediate> {
    let dims = match s.count("subspace", 0) {
        0 => s.k,
        d => d,
    };
    let mut parts = vec![
        s.like_x("the whitened data", 1),
        s.knn_any("the p-NN graph of the subspace", dims, s.count("neighbors", 5)),
    ];
    if s.params.choice("init", &[("can", true), ("kmeans", false)]).unwrap_or(false) {
        parts.push(s.knn("CAN's p-NN search", s.m, s.count("can_neighbors", 5) + 1));
        parts.push(crate::engine::models::can::lobpcg_blocks(s));
    }
    parts
}

/// PSMF in the registry.
pub const DESCRIPTOR: Descriptor = Descriptor {
    description: "Pseudo-supervised matrix factorization in a discriminative subspace: learns a \
                  projection Π of the data (whitened so that ΠᵀS_tΠ = I) and an orthonormal \
                  nonnegative cluster indicator G together. The projected, centred data is fit \
                  by centroids F Gᵀ under a robust l2,1 loss; an LDA-like term pulls each \
                  projected sample towards the centroid of its current pseudo class (labels \
                  taken from G), and a graph term keeps neighbours in the projected space in \
                  the same cluster. Solved by an augmented Lagrangian with closed-form steps \
                  (shrinkage, Procrustes). Starts from CAN's clustering, as the paper does, and \
                  mostly refines it. Uses nothing but X; outputs its own labels. X. Ma, L. Zhang, \
                  L. Zhang, B. Du, D. Tao, Pseudo Supervised Matrix Factorization in \
                  Discriminative Subspace, IJCAI 2019.",
    params: params::TABLE,
    sample_graph: true,
    output: Output::ClusterLabels,
    memory,
    bench: Some(bench::cases),
    ..Descriptor::new("psmf", "PSMF", "docs/models.md §6", build)
};

/// The handle of PSMF.
pub const KIND: ModelKind = ModelKind::of(&DESCRIPTOR);

fn build(Build { spec, params, data, .. }: Build<'_>) -> Result<Box<dyn Model>, ModelError> {
    let params = PsmfParams::from_checked(params, spec.k)?;
    Ok(Box::new(Psmf::new(data.x.view(), spec, params)?))
}
