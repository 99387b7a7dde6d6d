//! Side information: ordinal triplets and partial labels, the undoable store, files and the
//! RPNMF triplet-generation protocol (docs/models.md §8.4; DESIGN.md §3 "Constraints").
//!
//! * [`triplet`]: validation, the ordered duplicate-free [`TripletSet`], must-link /
//!   cannot-link views (docs/models.md §3.5, §8.4).
//! * [`labels`]: partial labels per sample with named classes, and the label matrix.
//! * [`store`]: [`Store`], every edit through one undo/redo log, `dirty` flag, snapshots.
//! * [`io`]: versioned JSON with the dataset fingerprint, CSV of triplets, atomic writes.
//! * [`SideInfo`]: what a model is handed: a snapshot of triplets and partial labels with
//!   the derived views computed once per job (must/cannot links, the p-NN graph).
//! * [`generate`]: the RPNMF protocol (anchors, label- and kNN-based triplets) and label reveal.
//! * [`suggest`]: the next triplet to ask about (the least sure among kNN candidates).

mod error;
pub mod generate;
pub mod io;
pub mod labels;
mod side_info;
pub mod store;
pub mod suggest;
pub mod triplet;

pub use error::ConstraintError;
pub use generate::{
    AnchorPool, GenerateError, Generated, ProtocolOptions, generate_into, generate_triplets,
    generate_with_neighbours, labels_from_truth, reveal_labels, reveal_stratified,
};
pub use io::{ConstraintIoError, read_known_labels};
pub use labels::Labels;
pub use side_info::{Links, SideInfo};
pub use store::{Store, Tx, UNDO_CAP};
pub use suggest::{Suggestion, suggest};
pub use triplet::{Triplet, TripletSet, cannot_links, must_links};
