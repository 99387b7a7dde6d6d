//! The numerical engine: data, constraints, models, evaluation, the jobs that run them, and
//! the files they read and write.
//!
//! Nothing here depends on egui/eframe/rfd; `cargo check --no-default-features` proves it.

pub mod constraints;
pub mod data;
pub mod eval;
pub mod files;
pub mod jobs;
pub mod linalg;
pub mod machine;
pub mod models;
