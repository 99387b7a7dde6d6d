//! RMNMF: robust manifold NMF (Huang, Nie, Huang, Ding, ACM TKDD 2014; docs/models.md §3.4).
//!
//! Objective (3.40), in our layout with H = Gᵀ (G n×k, one row per sample):
//! `F(W, G) = ‖X − W Gᵀ‖_{2,1} + λ Tr(Gᵀ L G)` subject to `G ≥ 0` and `GᵀG = I_k`, W sign-free,
//! L = D − S the Laplacian of the binary 5-NN graph (docs/models.md §2.1, built once per dataset
//! by [`SideInfo::graph`]). The l2,1 norm sums the residual lengths of the samples, so outliers
//! weigh by their length; GᵀG = I with G ≥ 0 makes G close to a scaled cluster indicator.
//!
//! ALM splitting: `E = X − W Gᵀ` (m×n) and `Z = G` (n×k), Z ≥ 0 carrying the sign and G the
//! orthonormality; multipliers Γ (m×n) and Σ (n×k), penalty μ ([`crate::engine::models::alm::Penalty`]). E and Γ are
//! m×n by the method's nature: E is the part of X the model sets aside as outlying.
//!
//! Start: k-means on the samples (seeded by the spec's seed), `G = onehot(labels) + 0.2`, then
//! (3.47) `W = X G (GᵀG)⁻¹`; Γ = 0, Σ = 0, Z = G; or G = Hᵀ of `--init` (W again by (3.47)).
//!
//! One iteration, in this order (the code keeps Xᵀ, Eᵀ, Γᵀ, Bᵀ and Rᵀ as n×m arrays, one row per
//! sample, so the shrinkage works on contiguous rows):
//! 1. (3.41) `E ← Shrink_{1/μ}(R + Γ/μ)` with `R = X − W Gᵀ` of the current iterate (kept from
//!    the end of the previous iteration), [`shrink_columns`];
//! 2. (3.42) `B = X − E + Γ/μ`, `W ← B G` (times `(GᵀG)⁻¹` in the first iteration only: from
//!    then on G comes from Proc and GᵀG = I);
//! 3. (3.43) `Z ← [G + Σ/μ − (λ/μ) L G]_+`, L G of the current G kept from the previous iteration;
//! 4. (3.44) `G ← Proc(Bᵀ W + Z − Σ/μ − (λ/μ) L Z)` ([`procrustes`]); `+ (λ/μ) L Z` with
//!    `legacy_sign`, as the authors' code;
//! 5. (3.45) `R = X − W Gᵀ`; `Γ ← Γ + μ (R − E)`, `Σ ← Σ + μ (G − Z)` (Σ by [`crate::engine::models::alm::ascend`],
//!    which returns ‖G − Z‖_F; Γ's identical ascent is fused with the pass that forms R, the
//!    residual ‖R − E‖_F and the residual lengths ‖r_i‖ of F); (3.46) `μ ← min(ρμ, μ_max)`;
//!    then, from one pass over the graph, L G and `Tr(Gᵀ L G)` of the new G.
//!
//! Steps 1 and 2's B are one pass over the samples (each row of Eᵀ shrunk and used in cache).
//!
//! Cost per iteration: three m×n×k products (R, B G, Bᵀ W), O(mn) element-wise passes, two
//! passes over the graph's nonzeros (L Z, L G: O(nnz·k)) and a thin n×k SVD (O(nk²)):
//! O(mnk + nnz·k + nk²). Nothing n×n dense.
//!
//! Output: the model's own labels, row-wise argmax of Z (3.48) (Z is the nonnegative copy of
//! G and is what carries the sign constraint; at convergence Z = G); H = Zᵀ for the scatter.
//! The objective's total is F (3.40); the primal residuals are reported as the terms
//! `residual_e` and `residual_z` (not part of the total), and the model's own stop rule fires
//! when both, relative to ‖X‖_F and to ‖G‖_F = √k, are below [`RESIDUAL_TOL`].
//!
//! [`shrink_columns`]: crate::engine::linalg::shrink_columns
//! [`procrustes`]: crate::engine::linalg::procrustes

mod algorithm;
mod bench;
pub mod params;

pub use algorithm::{RESIDUAL_TOL, Rmnmf};
pub use params::RmnmfParams;

use crate::engine::models::footprint::{Intermediate, Sizes};
use super::registry::{Build, Descriptor, ModelKind, Output, SideNeed};
use super::{Model, ModelError};
use crate::engine::linalg::GraphWeight;

/// RMNMF's large intermediates: the p-NN graph and its n×m ALM state (the residual E, the
/// multiplier Γ and two working arrays, all transposed, docs/models.md §2.5).
fn memory(s: &Sizes<'_>) -> Vec<Intermediate> {
    vec![
        s.knn("the p-NN graph", s.m, s.count("neighbors", 5)),
        s.like_x("the n×m residual, multiplier and working arrays", 4),
    ]
}

/// RMNMF in the registry.
pub const DESCRIPTOR: Descriptor = Descriptor {
    description: "Robust manifold NMF: X ≈ W Gᵀ where G (one row per sample) is nonnegative \
                  with orthonormal columns, so that each sample's row points at one cluster, \
                  and samples that are near neighbours get similar rows. It minimises \
                  ‖X − W Gᵀ‖_{2,1} + λ·Tr(Gᵀ L G): each sample's error counts by its length, \
                  so outliers pull less, and L is the Laplacian of the binary 5-NN graph. \
                  Solved by an augmented Lagrangian: an outlier part E (shrinkage), the basis W, \
                  a nonnegative copy Z of G, G itself by a Procrustes (SVD) step, then the \
                  multipliers. It outputs its own cluster labels (the largest entry of each \
                  row of Z); the scatter can colour samples by the length of their outlier part. \
                  Uses no side information beyond X. J. Huang, F. Nie, H. Huang, C. Ding, \
                  Robust Manifold Nonnegative Matrix Factorization, ACM TKDD 8(3), 2014.",
    params: params::TABLE,
    needs: SideNeed::KnnGraph,
    // The warm start is H alone (G = Hᵀ, W derived from it by (3.47)); RMNMF's W is
    // sign-free, so the warm-start check's nonnegativity rule for W does not apply to it.
    has_w: false,
    sample_graph: true,
    output: Output::ClusterLabels,
    memory,
    bench: Some(bench::cases),
    ..Descriptor::new("rmnmf", "RMNMF", "docs/models.md §3.4", build)
};

/// The handle of RMNMF.
pub const KIND: ModelKind = ModelKind::of(&DESCRIPTOR);

fn build(Build { spec, params, data, side }: Build<'_>) -> Result<Box<dyn Model>, ModelError> {
    let params = RmnmfParams::from_checked(params)?;
    algorithm::check_x(&data)?;
    let graph = side.graph(&data, params.neighbors, GraphWeight::Binary);
    Ok(Box::new(Rmnmf::start(data, spec, params, graph)?))
}
