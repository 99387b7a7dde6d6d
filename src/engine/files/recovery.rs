//! The recovery journal: unsaved constraint edits survive a crash or a kill.
//!
//! While a store has unsaved edits, its whole content (the constraint file's JSON plus when and
//! how many edits) is rewritten atomically to one recovery file per dataset (temporary file,
//! fsync, rename: [`crate::engine::machine::fsutil::write_atomic`]), at most once per debounce interval
//! so a lasso drag or a burst of clicks is one write. A clean save (the store is no longer
//! dirty) or a clean quit removes the file. On the next start on the same dataset the front end
//! finds it with [`find`] and offers "Recover N unsaved edits from <time>".
//!
//! The file lives in the platform's data directory: `$NMF_PLAYGROUND_RECOVERY_DIR` when set
//! (tests), else `$XDG_DATA_HOME/nmf-playground/recovery`, else
//! `~/.local/share/nmf-playground/recovery`; it is named by the dataset's fingerprint, so two
//! datasets never share one and the same raw data finds its edits under any preprocessing.

use crate::engine::constraints::{Store, io as cio};
use crate::engine::data::Fingerprint;
use crate::engine::machine::fsutil::write_atomic;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Environment variable that overrides the recovery directory.
pub const DIR_ENV: &str = "NMF_PLAYGROUND_RECOVERY_DIR";

/// Default time between two journal writes.
pub const DEBOUNCE: Duration = Duration::from_millis(300);

/// The recovery directory (see the module docs); `None` when no home directory is known.
pub fn default_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os(DIR_ENV).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|d| !d.is_empty())
                .map(|h| PathBuf::from(h).join(".local").join("share"))
        })?;
    Some(data.join("nmf-playground").join("recovery"))
}

/// The recovery file of the dataset `fp` in `dir`.
pub fn file_for(dir: &Path, fp: &Fingerprint) -> PathBuf {
    dir.join(format!("{:016x}-{}x{}.json", fp.hash, fp.n, fp.m))
}

/// A recovery file as read. `constraints` stays a JSON value, so that the constraint
/// reader checks its version and fingerprint as it checks a constraint file.
#[derive(Deserialize)]
struct JournalFile {
    /// Unix seconds of the write.
    saved_at: u64,
    /// Edits made since the last clean save.
    edits: u64,
    /// The constraint file's JSON (version, fingerprint, triplets, labels).
    constraints: serde_json::Value,
}

/// A recovery file as written: the same fields, the constraints serialized once, straight
/// from the store.
#[derive(Serialize)]
struct JournalOut {
    saved_at: u64,
    edits: u64,
    constraints: cio::FileV1,
}

/// A recovery file found for a dataset.
#[derive(Clone, Debug)]
pub struct Found {
    pub path: PathBuf,
    /// Unsaved edits it holds.
    pub edits: u64,
    /// When it was written (Unix seconds).
    pub saved_at: u64,
    /// The constraints it holds, as a clean store (recovering replaces the current content
    /// with these as one undo step).
    pub store: Store,
}

impl Found {
    /// "14:05:33 UTC" (today) style time of the write, for the offer.
    pub fn time_text(&self) -> String {
        let s = self.saved_at % 86_400;
        let days = self.saved_at / 86_400;
        let (y, mo, d) = civil_from_days(days as i64);
        format!(
            "{y:04}-{mo:02}-{d:02} {:02}:{:02}:{:02} UTC",
            s / 3600,
            (s / 60) % 60,
            s % 60
        )
    }
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (H. Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Look for unsaved edits of the dataset `fp` in `dir`. A file that cannot be read or parsed
/// is reported as an error naming it (the caller shows it and may [`discard`] it).
pub fn find(dir: &Path, fp: &Fingerprint) -> Result<Option<Found>, String> {
    let path = file_for(dir, fp);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let file: JournalFile =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let store =
        cio::from_json(&file.constraints.to_string(), &path, fp).map_err(|e| e.to_string())?;
    Ok(Some(Found {
        path,
        edits: file.edits,
        saved_at: file.saved_at,
        store,
    }))
}

/// Remove the recovery file of `fp` (answered "Discard", or saved cleanly).
pub fn discard(dir: &Path, fp: &Fingerprint) -> std::io::Result<()> {
    match std::fs::remove_file(file_for(dir, fp)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// The journal of one store: call [`Journal::sync`] after edits (the app: every frame; it is
/// cheap when nothing changed) and [`Journal::flush`] when an edit must be durable now.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    fingerprint: Fingerprint,
    debounce: Duration,
    /// The store revision last seen, and the one on disk (`None`: no file).
    seen: Option<u64>,
    written: Option<u64>,
    last_write: Option<Instant>,
    /// Edits since the last clean state.
    edits: u64,
}

impl Journal {
    /// A journal for the dataset `fp` in `dir` (nothing is written until the store is dirty).
    /// Starting from `edits` already made (recovered edits count on).
    pub fn new(dir: &Path, fp: Fingerprint, edits: u64) -> Self {
        Self {
            path: file_for(dir, &fp),
            fingerprint: fp,
            debounce: DEBOUNCE,
            seen: None,
            written: None,
            last_write: None,
            edits,
        }
    }

    /// Change the debounce interval (zero: every sync writes).
    pub fn with_debounce(mut self, d: Duration) -> Self {
        self.debounce = d;
        self
    }

    /// The file this journal writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The dataset it belongs to.
    pub fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
    }

    /// Edits counted since the last clean state.
    pub fn edits(&self) -> u64 {
        self.edits
    }

    /// Follow the store: count a new revision as an edit, write when dirty and due, remove the
    /// file when the store is clean. Returns how long until a pending write is due (the caller
    /// wakes up then), `None` when nothing is pending.
    pub fn sync(&mut self, store: &Store, now: Instant) -> std::io::Result<Option<Duration>> {
        let rev = store.revision();
        if self.seen != Some(rev) {
            if self.seen.is_some() {
                self.edits += 1;
            }
            self.seen = Some(rev);
        }
        if !store.is_dirty() {
            self.edits = 0;
            if self.written.is_some() || self.path.exists() {
                self.clear()?;
            }
            return Ok(None);
        }
        if self.written == Some(rev) {
            return Ok(None);
        }
        if let Some(last) = self.last_write {
            let due = last + self.debounce;
            if now < due {
                return Ok(Some(due - now));
            }
        }
        self.write(store, now)?;
        Ok(None)
    }

    /// Write now if the store has edits not yet on disk (ignores the debounce).
    pub fn flush(&mut self, store: &Store) -> std::io::Result<()> {
        self.last_write = None;
        self.sync(store, Instant::now()).map(drop)
    }

    fn write(&mut self, store: &Store, now: Instant) -> std::io::Result<()> {
        let file = JournalOut {
            saved_at: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            edits: self.edits.max(1),
            constraints: cio::file_of(store),
        };
        let text =
            serde_json::to_string(&file).map_err(|e| std::io::Error::other(e.to_string()))?;
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        write_atomic(&self.path, text.as_bytes())?;
        self.written = Some(store.revision());
        self.last_write = Some(now);
        Ok(())
    }

    /// Remove the file (a clean save or quit).
    pub fn clear(&mut self) -> std::io::Result<()> {
        self.written = None;
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::constraints::Triplet;

    fn fp() -> Fingerprint {
        Fingerprint {
            n: 6,
            m: 2,
            hash: 0xabc,
        }
    }

    #[test]
    fn journal_writes_when_dirty_and_clears_when_saved() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::new(fp());
        let mut j = Journal::new(dir.path(), fp(), 0).with_debounce(Duration::from_secs(3600));
        let t0 = Instant::now();
        assert_eq!(j.sync(&store, t0).expect("sync"), None);
        assert!(!j.path().exists(), "nothing to recover while clean");
        store.add_triplet(Triplet::new(0, 1, 2)).expect("add");
        j.sync(&store, t0).expect("sync");
        let found = find(dir.path(), &fp()).expect("read").expect("found");
        assert_eq!(found.edits, 1);
        assert_eq!(found.store.triplets(), store.triplets());
        // Within the debounce interval the second edit waits, and says how long.
        store.set_label(3, None).expect("no-op");
        store.add_triplet(Triplet::new(3, 4, 5)).expect("add");
        let wait = j.sync(&store, t0 + Duration::from_secs(1)).expect("sync");
        assert!(
            wait.is_some_and(|w| w > Duration::from_secs(3000)),
            "{wait:?}"
        );
        let found = find(dir.path(), &fp()).expect("read").expect("found");
        assert_eq!(found.store.triplets().len(), 1, "debounced");
        j.flush(&store).expect("flush");
        let found = find(dir.path(), &fp()).expect("read").expect("found");
        assert_eq!(found.edits, 2);
        assert_eq!(found.store.triplets(), store.triplets());
        store.mark_saved();
        j.sync(&store, t0).expect("sync");
        assert!(
            find(dir.path(), &fp()).expect("read").is_none(),
            "cleared by the save"
        );
        let other = Fingerprint { hash: 1, ..fp() };
        assert_ne!(file_for(dir.path(), &other), file_for(dir.path(), &fp()));
    }

    #[test]
    fn a_damaged_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(file_for(dir.path(), &fp()), "{trunc").expect("write");
        let e = find(dir.path(), &fp()).expect_err("damaged");
        assert!(e.contains("0000000000000abc-6x2.json"), "{e}");
        discard(dir.path(), &fp()).expect("discard");
        assert!(find(dir.path(), &fp()).expect("read").is_none());
    }

    #[test]
    fn time_text_is_a_utc_date() {
        let f = Found {
            path: PathBuf::new(),
            edits: 1,
            saved_at: 1_700_000_000,
            store: Store::new(fp()),
        };
        assert_eq!(f.time_text(), "2023-11-14 22:13:20 UTC");
    }
}
