//! Files on disk: a finished run's exported arrays ([`export`]), session files ([`session`]),
//! and the crash-recovery journal of unsaved constraint edits ([`recovery`]); each is written
//! through the atomic write of [`crate::engine::machine::fsutil`].

pub mod export;
pub mod recovery;
pub mod session;
