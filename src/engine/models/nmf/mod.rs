//! Lee–Seung Euclidean NMF with multiplicative updates (MODELS.md §3.1).

pub(crate) mod algorithm;
mod fused;
pub(crate) mod init;

pub use algorithm::Nmf;
