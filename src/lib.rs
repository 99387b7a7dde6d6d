//! NMF Playground: nonnegative matrix factorization with side information.
//!
//! One engine ([`engine`]) with two front ends: the headless command line ([`cli`]) and the
//! egui desktop app (`gui`, behind the default `gui` feature). The engine never imports a
//! front end; front ends reach a running model only through [`engine::jobs::worker`] commands and
//! events.

pub mod cli;
pub mod engine;
pub mod figures;
#[cfg(feature = "gui")]
pub mod gui;
