//! Running jobs: the iteration loop every fit goes through ([`experiment`]), the background
//! worker that streams a fit's events to a front end ([`worker`]), the pipeline from a spec to its
//! scores that every front end runs ([`trial`]), and the scan over the rank k ([`kscan`]).

pub mod experiment;
pub mod kscan;
pub mod trial;
pub mod worker;
