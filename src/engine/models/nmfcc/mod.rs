//! NMFCC: NMF with must-link and cannot-link constraints (after X. Zhang, L. Zong, X. Liu,
//! J. Luo, TNNLS 2016), **reconstructed** from the paper's abstract (docs/models.md §3.5).
//!
//! Objective, with must-link pairs ML and cannot-link pairs CL (their symmetric 0/1 masks A, B):
//! `F(W, H) = ‖X − WH‖²_F + (α/2)‖A ⊙ (HᵀH − 11ᵀ)‖²_F + (β/2)‖B ⊙ HᵀH‖²_F`
//! `        = ‖X − WH‖²_F + α Σ_ML (1 − h_iᵀh_j)² + β Σ_CL (h_iᵀh_q)²`, W, H ≥ 0.
//!
//! One iteration, H then W, each by the multiplicative rule of the kit ([`super::mu`]):
//! 1. `H ← H ⊙ (WᵀX + αHA) ⊘ max(WᵀW H + αH(A⊙HᵀH) + βH(B⊙HᵀH), ε)`: the gradient of the link
//!    terms, `2[αH(A⊙HᵀH) + βH(B⊙HᵀH) − αHA]`, split into its positive part (denominator) and
//!    negative part (numerator); the link parts are those of the H at the start of the step
//!    (all columns at once);
//! 2. `W ← W ⊙ (XHᵀ) ⊘ max(W HHᵀ, ε)`, NMF's rule (the links do not involve W);
//! 3. the objective: the reconstruction by NMF's trace identity (exactly from the residual
//!    every 50 iterations), the two link terms from the inner products of the linked pairs
//!    at the new H, in the pass that also forms the next step's link parts ([`links`]).
//!
//! The link parts are computed over the pairs only, O(k) each; nothing n×n is formed. No
//! rescaling of W or H, inside the loop or after it: the must-link term fixes the scale of H
//! (§10.3). Start, stopping and everything not about links are NMF's (§3.1), with the same kit
//! calls in the same order, so α = β = 0 gives NMF's iterates bit for bit.

mod algorithm;
pub mod links;
pub mod params;

pub use algorithm::Nmfcc;
pub use params::NmfccParams;

use super::bench::{On, against_nmf};
use super::registry::{Build, Descriptor, ModelKind, SideNeed};
use super::{Model, ModelError};

/// NMFCC in the registry.
pub const DESCRIPTOR: Descriptor = Descriptor {
    description: "NMF with pairwise constraints, RECONSTRUCTED: only the paper's abstract was \
                  available, so this is our formulation in its spirit, not the authors' exact \
                  model. X ≈ WH minimising ‖X − WH‖²_F + α Σ (1 − h_iᵀh_j)² over must-link \
                  pairs + β Σ (h_iᵀh_q)² over cannot-link pairs: the codes of two samples that \
                  belong together are pulled towards an inner product of 1, those of two that \
                  do not towards orthogonal, by multiplicative updates. Needs links: every \
                  triplet (i, j, q) gives the must-link (i, j) and the cannot-link (i, q), and \
                  painted labels give must-links within a class and cannot-links across \
                  classes. α = β = 0 is plain NMF. After X. Zhang, L. Zong, X. Liu, J. Luo, \
                  Constrained Clustering With Nonnegative Matrix Factorization, IEEE TNNLS \
                  27(7), 2016.",
    params: params::TABLE,
    needs: SideNeed::Links,
    has_w: true,
    projects_new_samples: true,
    update_rule: Some("H ← H ⊙ (WᵀX + αHA) ⊘ (WᵀWH + αH(A⊙HᵀH) + βH(B⊙HᵀH))\nW ← W ⊙ (XHᵀ) ⊘ (WHHᵀ)\n\
                   must-links A pull together, cannot-links B push apart (docs/models.md §3.5)"),
    bench: Some(|b| against_nmf(b, KIND, &[(On::Digits, 10), (On::Random, 20)])),
    ..Descriptor::new("nmfcc", "NMFCC", "docs/models.md §3.5", build)
};

/// The handle of NMFCC.
pub const KIND: ModelKind = ModelKind::of(&DESCRIPTOR);

fn build(Build { spec, params, data, side }: Build<'_>) -> Result<Box<dyn Model>, ModelError> {
    let params = NmfccParams::from_checked(params)?;
    Ok(Box::new(Nmfcc::start(data, spec, params, side)?))
}
