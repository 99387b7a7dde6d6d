//! Files on disk: a finished run's exported arrays ([`export`]), session files ([`session`]),
//! the crash-recovery journal of unsaved constraint edits ([`recovery`]) and the atomic write
//! every one of them goes through ([`fsutil`]).

pub mod export;
pub mod fsutil;
pub mod recovery;
pub mod session;
