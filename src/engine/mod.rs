//! The numerical engine: data, constraints, models, evaluation, projection and the worker.
//!
//! Nothing here depends on egui/eframe/rfd; `cargo check --no-default-features` proves it.

pub mod constraints;
pub mod data;
pub mod eval;
pub mod experiment;
pub mod export;
pub mod fsutil;
pub mod kscan;
pub mod limits;
pub mod linalg;
pub mod models;
pub mod projection;
pub mod recovery;
pub mod session;
pub mod sys;
pub mod worker;
