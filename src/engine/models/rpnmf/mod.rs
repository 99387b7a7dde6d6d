//! RPNMF — Ranking Preserving NMF (Wang et al., IJCAI 2018; docs/models.md §4).
//!
//! `F(W, H) = ‖X − WH‖²_F + α Σ_{τ∈T} sp(t_τ(H))`, eq. (9), with
//! `t_τ = ‖h_i − h_j‖² − ‖h_i − h_q‖² + δ` for each triplet τ = (i, j, q).
//!
//! One [`Model::step`] (docs/models.md §4.5): the W step `W ← W ⊙ (XHᵀ) ⊘ max(W(HHᵀ), ε)`, then the
//! combined H step `H ← H ⊙ (WᵀX + αH·Mneg) ⊘ max(WᵀW H + αH·Mpos, ε)` (§4.4, Jacobi: σ(t) at
//! the H of the start of the step), then — by default — the safeguard: if F rose, retry with
//! the damped steps `H ⊙ ratio^γ`, γ = 1/2, 1/4, … (see [`MAX_HALVINGS`]), and if F still
//! rose keep H. Off ("paper-literal"), a
//! non-finite iterate is reverted and reported as [`ModelError::Diverged`] (§10.4).
//!
//! Cost per iteration O(mnk + |T|k): the products XHᵀ and WᵀX, k×k Gram matrices, Wᵀ W H and
//! W(HHᵀ); the ranking parts are sparse (nnz ≤ 3|T| each). Nothing n×n dense, nothing m×n.
//! The objective uses the trace identity `‖X‖² − 2⟨WᵀX, H⟩ + ⟨WᵀW, HHᵀ⟩`. What F needs of an
//! H (HHᵀ, the margins, σ, the ranking loss) is computed once, for the candidate, and kept
//! when the candidate is accepted ([`Iterate`]): F at the current H then costs O(k²) beyond
//! ⟨WᵀX, H⟩, which the candidate pass sums on the way, and the accepted candidate's HHᵀ and σ
//! serve the next W and H steps. So a step whose full step is taken costs one triplet pass
//! and one HHᵀ, as the paper-literal rule does; each damped retry costs one more of each,
//! O(nk² + |T|k). W and H are never rescaled (§4.5 step 4, §10.3).
//! Large X is read once per step, not twice: the H step forms WᵀX, the candidate and XH'ᵀ in
//! one blocked pass, and an accepted full step hands XH'ᵀ to the next W step
//! ([`Rpnmf::blocked_full_candidate`]).

mod algorithm;
mod bench;
pub mod params;
pub mod triplets;

pub use algorithm::{HStep, MAX_HALVINGS, Rpnmf, SafeguardStats};
pub use params::{RpnmfParams, paper_spec};

use super::registry::{Build, Descriptor, SideNeed};
use crate::engine::models::{Model, ModelError, ModelKind};

/// RPNMF in the registry.
pub const DESCRIPTOR: Descriptor = Descriptor {
    description: "Ranking Preserving NMF: X ≈ WH where the codes also respect ordinal triplets \
                  (i, j, q), \"i is more like j than like q\". It minimises ‖X − WH‖²_F + \
                  α Σ softplus(‖h_i − h_j‖² − ‖h_i − h_q‖² + δ): the smooth penalty grows when \
                  j is not closer to i than q by a margin δ in the learned space. Needs \
                  triplets: click them on the scatter, or generate them from labels and nearest \
                  neighbours. Plain NMF can break such relations even when they hold in X (the \
                  paper's Proposition 1). A safeguard (on by default) keeps the objective from \
                  rising when triplets contradict each other. J. Wang, F. Tian, W. Liu, X. Wang, \
                  W. Zhang, K. Yamanishi, Ranking Preserving Nonnegative Matrix Factorization, \
                  IJCAI 2018.",
    params: params::TABLE,
    presets: params::PRESETS,
    needs: SideNeed::Triplets,
    has_w: true,
    projects_new_samples: true,
    update_rule: Some("H ← H ⊙ (WᵀX + αHM⁻) ⊘ (WᵀWH + αHM⁺)\nW ← W ⊙ (XHᵀ) ⊘ (WHHᵀ)\n\
                   M± from σ(margin) of every triplet (docs/models.md §4.4)"),
    bench: Some(bench::cases),
    ..Descriptor::new("rpnmf", "RPNMF", "docs/models.md §4", build)
};

/// The handle of RPNMF.
pub const KIND: ModelKind = ModelKind::of(&DESCRIPTOR);

fn build(Build { spec, params, data, side }: Build<'_>) -> Result<Box<dyn Model>, ModelError> {
    let params = RpnmfParams::from_checked(params)?;
    Ok(Box::new(Rpnmf::start(data, spec, params, side)?))
}

