//! NMF Playground: nonnegative matrix factorization with side information.
//!
//! One engine ([`engine`]) with two front ends: the headless command line ([`cli`]) and the
//! egui desktop app (`gui`, behind the default `gui` feature). The engine never imports a
//! front end; front ends reach a running model only through [`engine::jobs::worker`] commands and
//! events.

/// `eprintln!` that drops the message when stderr is closed instead of panicking
/// ([`engine::machine::stderr`]).
#[macro_export]
macro_rules! say {
    () => {
        $crate::engine::machine::stderr::write(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::engine::machine::stderr::write(format_args!($($arg)*), true)
    };
}

/// `eprint!` that drops the message when stderr is closed ([`say!`]).
#[macro_export]
macro_rules! say_inline {
    ($($arg:tt)*) => {
        $crate::engine::machine::stderr::write(format_args!($($arg)*), false)
    };
}

pub mod cli;
pub mod engine;
pub mod figures;
#[cfg(feature = "gui")]
pub mod gui;
