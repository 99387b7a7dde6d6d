//! t-STE — t-distributed stochastic triplet embedding (van der Maaten and Weinberger, MLSP
//! 2012; docs/models.md §3.6).
//!
//! Embeds the n samples as points y_i ∈ ℝᵏ from the triplets alone: no features, no basis W.
//! H is the embedding Yᵀ (k×n), which may be negative. With α = `dof` (0 in the table means
//! k − 1) and d_ab = ‖y_a − y_b‖², in the order the code follows:
//!
//! 1. Student-t kernel `K_ab = (1 + d_ab/α)^(−(α+1)/2)` (3.61) and, per triplet τ = (i, j, q),
//!    `p_τ = K_ij / (K_ij + K_iq)` (3.62), the probability that j is the closer one.
//! 2. Cost `C(Y) = Σ_τ −ln p_τ + λ Σ_{i∈A} ‖y_i‖²` (3.63), A the samples that occur in a
//!    triplet. Computed stably (3.64): `a_τ = ((α+1)/2)·ln_1p((d_ij − d_iq)/(α + d_iq))`, so
//!    `−ln p_τ = sp(a_τ)` and `1 − p_τ = σ(a_τ)`, never forming K (which underflows).
//! 3. Gradient (3.65): with `u_ab = α/(α + d_ab)`, `γ = (α+1)/α` and `s = σ(a_τ)`, triplet τ
//!    adds `γ s (u_ij (y_i − y_j) − u_iq (y_i − y_q))` to ∂C/∂y_i, `−γ s u_ij (y_i − y_j)` to
//!    ∂C/∂y_j and `γ s u_iq (y_i − y_q)` to ∂C/∂y_q; then `2λ y_i` for i ∈ A. Cost and gradient
//!    come from one pass over the triplets, O(|T| k) (the reference code builds the n×n
//!    kernel; nothing n×n is formed here).
//! 4. Step (3.67): `Y ← Y − (η n / |T|) ∇C(Y)`, always taken.
//! 5. Schedule (3.68): if the step lowered C by more than 10⁻⁷, `η ← 1.01 η`; otherwise
//!    `η ← η/2` and one more failure in a row (a decrease resets the count). η starts at 2.
//!    Five failures in a row end the fit ([`crate::engine::models::Model::has_converged`]).
//! 6. The best Y seen (lowest C, the start included) is kept and returned by
//!    [`crate::engine::models::Model::finish`].
//!
//! Start (3.66): `y_ia = 10⁻⁴ z`, z standard normal (Box–Muller on a ChaCha8 stream seeded by
//! the run's seed, sample by sample), or the warm start's H transposed, exactly as given.
//! Samples in no triplet get a zero gradient and keep their start; a note says how many.

mod algorithm;
mod bench;
pub mod params;

pub use algorithm::{Cost, Tste};
pub use params::TsteParams;

use super::registry::{Build, Descriptor, ModelKind, SideNeed};
use super::{Model, ModelError};

/// t-STE in the registry.
pub const DESCRIPTOR: Descriptor = Descriptor {
    description: "t-distributed Stochastic Triplet Embedding: places the samples as points in \
                  ℝᵏ from the triplets (i, j, q) alone, \"i is more like j than like q\"; it \
                  never looks at the features. Each triplet holds with probability K_ij / \
                  (K_ij + K_iq) under a heavy-tailed Student-t kernel K, and gradient descent \
                  maximises the log-probability of all of them (plus an optional L2 penalty), \
                  with the reference code's step-size schedule. The embedding (which may be \
                  negative) is H, clustered like any other. Samples in no triplet keep their \
                  random start. Needs triplets: click them on the scatter, or generate them from \
                  labels and nearest neighbours. L. van der Maaten and K. Weinberger, \
                  Stochastic Triplet Embedding, IEEE MLSP 2012.",
    params: params::TABLE,
    needs: SideNeed::Triplets,
    bench: Some(bench::cases),
    ..Descriptor::new("tste", "t-STE", "docs/models.md §3.6", build)
};

/// The handle of t-STE.
pub const KIND: ModelKind = ModelKind::of(&DESCRIPTOR);

fn build(Build { spec, params, data, side }: Build<'_>) -> Result<Box<dyn Model>, ModelError> {
    let params = TsteParams::from_checked(params, spec.k)?;
    Ok(Box::new(Tste::new(data.n(), spec, params, &side.triplets)?))
}
