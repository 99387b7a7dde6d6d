//! The machine under the engine: the memory budget checked before large allocations
//! ([`limits`]), the crate's only `unsafe` calls to the CPU and the OS ([`sys`]), and the
//! file system's atomic write that every saved file goes through ([`fsutil`]), and messages
//! to stderr that a closed stderr cannot turn into a panic ([`stderr`]).

pub mod fsutil;
pub mod limits;
pub mod stderr;
pub mod sys;
