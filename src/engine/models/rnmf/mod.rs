//! RNMF: l2,1-norm robust NMF (Kong, Ding, Huang, CIKM 2011; docs/models.md §3.3).
//!
//! Objective: `F(W, H) = ‖X − WH‖_{2,1} = Σ_i ‖x_i − W h_i‖₂` subject to `W, H ≥ 0`: the
//! error of each sample counts by its length, not its square, so a sample the basis cannot
//! fit (an outlier) pulls on W with a force that does not grow with its error.
//!
//! One iteration, in this order (docs/models.md §3.3):
//! 1. the weights `d_i = 1 / max(r_i, ε_r)` of the current iterate, `r_i = ‖x_i − W h_i‖`,
//!    `ε_r = 1e-8·‖X‖_F/√n` (kept from the end of the previous iteration, where the objective
//!    needed the same residuals);
//! 2. `W ← W ⊙ (X D Hᵀ) ⊘ max(W (H D Hᵀ), ε)`, D = diag(d);
//! 3. `H ← H ⊙ (WᵀX D) ⊘ max(WᵀW H D, ε)`, with the new W and the same D;
//! 4. the residuals of the new iterate from the Gram identity
//!    `r_i² = ‖x_i‖² − 2 h_iᵀ(WᵀX)_i + h_iᵀ(WᵀW)h_i` (clamped at 0): WᵀX and WᵀW are the
//!    H update's, so no m×n residual is formed; then F = Σ r_i, the next weights, `H D` and
//!    the next W update's `X D Hᵀ` and `H D Hᵀ`.
//!
//! `X D Hᵀ` is NMF's `XHᵀ` with H's columns scaled by d, and `WᵀX D` is `WᵀX` with its columns
//! scaled, so an iteration has NMF's two big products. After the last iteration W's columns
//! are scaled to unit length and H's rows to compensate (§10.3); F does not change. Large X
//! takes the kit's blocked single pass (`WᵀX`, the H update and the residuals of a block,
//! then `X_B (H D)_Bᵀ`, while the block is in cache); small X one product per pass, the
//! reference the tests compare the fast path with.

mod algorithm;
pub mod params;

pub use algorithm::Rnmf;

use super::bench::{On, against_nmf};
use super::registry::{Build, Descriptor, ModelKind};
use super::{Model, ModelError};

/// RNMF in the registry.
pub const DESCRIPTOR: Descriptor = Descriptor {
    description: "Robust NMF X ≈ WH minimising the l2,1 norm Σ_i ‖x_i − W h_i‖: each \
                  sample's error counts by its length, not its square, so samples the basis \
                  cannot fit (occlusions, corrupted images, outliers) pull far less on W than \
                  in NMF. Solved by reweighted multiplicative updates: each iteration weighs \
                  sample i by 1/‖x_i − W h_i‖, then updates W, then H. The scatter can colour \
                  the samples by that weight (small = discounted as an outlier). Uses no side \
                  information. D. Kong, C. Ding, H. Huang, Robust Nonnegative Matrix \
                  Factorization using L21-norm, CIKM 2011.",
    has_w: true,
    update_rule: Some("W ← W ⊙ (XDHᵀ) ⊘ (WHDHᵀ)\nH ← H ⊙ (WᵀXD) ⊘ (WᵀWHD), D = diag(1/‖x_i − Wh_i‖)\n\
                   minimising Σ_i ‖x_i − Wh_i‖ (docs/models.md §3.3)"),
    bench: Some(|b| against_nmf(b, KIND, &[(On::Random, 20)])),
    ..Descriptor::new("rnmf", "RNMF", "docs/models.md §3.3", build)
};

/// The handle of RNMF.
pub const KIND: ModelKind = ModelKind::of(&DESCRIPTOR);

fn build(Build { spec, data, .. }: Build<'_>) -> Result<Box<dyn Model>, ModelError> {
    Ok(Box::new(Rnmf::new(data, spec)?))
}
