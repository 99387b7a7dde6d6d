//! The machine under the engine: the memory budget checked before large allocations
//! ([`limits`]) and the crate's only `unsafe` calls to the CPU and the OS ([`sys`]).

pub mod limits;
pub mod sys;
