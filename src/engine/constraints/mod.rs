//! Side information: ordinal triplets and partial labels, the undoable store, files and the
//! RPNMF triplet-generation protocol (MODELS.md §8.4).

pub use crate::engine::models::Triplet;
