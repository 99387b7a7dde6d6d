//! Running jobs: the iteration loop every fit goes through ([`experiment`]), the background
//! worker that streams a fit's events to a front end ([`worker`]), and the scan over the rank k
//! ([`kscan`]).

pub mod experiment;
pub mod kscan;
pub mod worker;
