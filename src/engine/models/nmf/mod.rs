//! NMF: Lee–Seung Euclidean nonnegative matrix factorization (docs/models.md §3.1).
//!
//! Objective: `F(W, H) = ‖X − WH‖²_F` subject to `W, H ≥ 0`.
//!
//! One iteration, H then W, each by the multiplicative rule of the kit ([`super::mu`]):
//! 1. `H ← H ⊙ (WᵀX) ⊘ max(WᵀW H, ε)`;
//! 2. `W ← W ⊙ (XHᵀ) ⊘ max(W HHᵀ, ε)`;
//! 3. the objective by the trace identity `‖X‖² − 2⟨W, XHᵀ⟩ + ⟨WᵀW, HHᵀ⟩` from the products
//!    the updates formed, recomputed exactly from the residual every 50 iterations (§10.5).
//!
//! After the last iteration W's columns are scaled to unit length and H's rows to compensate
//! (§10.3), as is usual before k-means on H. Large X takes the blocked single pass of the kit
//! (`WᵀX`, the H update and `XHᵀ` while each block of X is in cache); small X one product per
//! pass, which is also the plain reference the tests compare the fast path with.

mod algorithm;
mod bench;
pub mod params;

pub use algorithm::Nmf;

use super::registry::{Build, Descriptor, ModelKind};
use super::{Model, ModelError};

/// NMF in the registry.
pub const DESCRIPTOR: Descriptor = Descriptor {
    description: "Nonnegative matrix factorization X ≈ WH minimising the squared Frobenius \
                  error ‖X − WH‖²_F with Lee–Seung multiplicative updates (H first, then W). \
                  Uses no side information: the unsupervised baseline every other model is \
                  compared with. D. Lee and H. S. Seung, Algorithms for Non-negative Matrix \
                  Factorization, NIPS 2001.",
    has_w: true,
    projects_new_samples: true,
    update_rule: Some("H ← H ⊙ (WᵀX) ⊘ (WᵀWH)\nW ← W ⊙ (XHᵀ) ⊘ (WHHᵀ)\n\
                   minimising ‖X − WH‖²_F (docs/models.md §3.1)"),
    bench: Some(bench::cases),
    objective_sees_h: true,
    ..Descriptor::new("nmf", "NMF", "docs/models.md §3.1", build)
};

/// The handle of NMF.
pub const KIND: ModelKind = ModelKind::of(&DESCRIPTOR);

fn build(Build { spec, data, .. }: Build<'_>) -> Result<Box<dyn Model>, ModelError> {
    Ok(Box::new(Nmf::new(data, spec)?))
}
