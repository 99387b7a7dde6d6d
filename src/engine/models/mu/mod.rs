//! The multiplicative-update kit: what every MU model (NMF, RPNMF and the graph and constraint
//! models built on them) shares, so that a model folder holds only its own math.
//!
//! * [`rule`]: the multiplicative rule with its floor (docs/models.md §1; §10.1)
//!   and the unit-norm W columns of §10.3.
//! * [`init`]: the seeded strictly positive W, H of docs/models.md §3.1, or the spec's warm
//!   start ([`start_wh`]).
//! * [`products`]: `WᵀX`, `XHᵀ`, `G·H` on the whole X, and the blocked single pass over a
//!   large X ([`blocked_pass_over_x`]).
//! * [`fused`]: `WᵀW·H`, the MU update of H and `HHᵀ` in one sweep (the blocked pass's H step),
//!   optionally with a model's own terms added to the rule ([`Addends`]).
//! * [`objective`]: the reconstruction term by the trace identity and exactly from the residual.
//! * [`project`]: new samples in a fitted basis (W fixed, H by the MU rule).
//! * `fd` (tests only): central finite differences, to check a model's gradient.
//!
//! The Gram products `WᵀW` and `HHᵀ` are [`crate::engine::linalg::gram_of_columns`] and
//! [`crate::engine::linalg::gram_of_rows`].

#[cfg(test)]
pub(crate) mod fd;
pub mod fused;
pub mod init;
pub mod objective;
pub mod products;
pub mod project;
pub mod rule;

pub mod state;
pub use fused::{Addends, HPassWork, update_h_columns, update_h_columns_plus};
pub use init::{random_wh, start_wh};
pub use objective::{EXACT_EVERY, ExactResidual, trace_reconstruction};
pub(crate) use products::blocked_pass_over_x;
pub use products::{FUSED_MIN_BYTES, gram_times, wt_x_whole, x_block_columns, xh_t_whole};
pub use rule::{FLOOR, mu_rule, mu_update, normalize_w_columns, w_step};
pub use state::{Block, HRule, MuState, MuWork, PlainRule, checked_start};
