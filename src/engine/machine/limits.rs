//! Memory limits checked before large allocations (issue 20 point 5).
//!
//! A load whose X (m·n·8 bytes) or a model whose n×n state would not fit in the memory the
//! process may still use is refused with a message giving the size, instead of aborting in
//! the allocator. "Available" is the smaller of the kernel's `MemAvailable` (`/proc/meminfo`)
//! and the headroom under the process's address-space limit (`RLIMIT_AS`, read from
//! `/proc/self/limits`, minus what is mapped now from `/proc/self/status`). Where neither can
//! be read (not Linux) only [`HARD_CAP_BYTES`] applies.
//!
//! The environment variable [`LIMIT_ENV`] (`NMF_PLAYGROUND_MEMORY_LIMIT`, a number of bytes)
//! lowers the budget further: a user can keep the app well below the machine's memory, and the
//! tests set a small budget on the binary to check that a refusal comes before the allocation
//! (an in-process test passes its budget explicitly instead, e.g. [`check_against`]).

/// Largest single allocation ever attempted, whatever the machine reports: 64 GiB.
pub const HARD_CAP_BYTES: u64 = 64 << 30;

/// A refused allocation: what it was for, its size and the memory available.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooLarge {
    pub what: String,
    pub bytes: u64,
    pub available: u64,
}

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} would need {} but only {} of memory is available",
            self.what,
            human(self.bytes),
            human(self.available)
        )
    }
}

/// `bytes` as B, KiB, MiB, GiB or TiB with one decimal.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Environment variable capping [`available_bytes`] (bytes; unset, empty or unparsable: no cap).
pub const LIMIT_ENV: &str = "NMF_PLAYGROUND_MEMORY_LIMIT";

/// Bytes this process may still allocate (see the module docs), at most [`HARD_CAP_BYTES`]
/// and at most [`LIMIT_ENV`] when it is set.
pub fn available_bytes() -> u64 {
    let mut avail = HARD_CAP_BYTES;
    if let Some(cap) = std::env::var(LIMIT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        avail = avail.min(cap);
    }
    if let Some(m) = meminfo_available() {
        avail = avail.min(m);
    }
    if let Some(h) = address_space_headroom() {
        avail = avail.min(h);
    }
    avail
}

/// Refuse an allocation of `count` items of `item_bytes` each (overflow counts as too large)
/// when it exceeds [`available_bytes`]. `what` names the allocation ("X (784 × 70000 f64)").
pub fn check_alloc(what: &str, count: u128, item_bytes: u128) -> Result<(), TooLarge> {
    check_against(what, count, item_bytes, available_bytes())
}

/// [`check_alloc`] against a given budget (tests).
pub fn check_against(
    what: &str,
    count: u128,
    item_bytes: u128,
    available: u64,
) -> Result<(), TooLarge> {
    let bytes = count.saturating_mul(item_bytes);
    if bytes > u128::from(available) {
        return Err(TooLarge {
            what: what.to_string(),
            bytes: u64::try_from(bytes).unwrap_or(u64::MAX),
            available,
        });
    }
    Ok(())
}

fn meminfo_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    kib_field(&text, "MemAvailable:")
}

/// `RLIMIT_AS` minus the current virtual size, when a limit is set.
fn address_space_headroom() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    let soft = line
        .trim_start_matches("Max address space")
        .split_whitespace()
        .next()?;
    let limit: u64 = soft.parse().ok()?; // "unlimited" does not parse: no limit
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let used = kib_field(&status, "VmSize:").unwrap_or(0);
    Some(limit.saturating_sub(used))
}

/// A `NAME:  123 kB` field of a /proc file, in bytes.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line[name.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_over_the_budget_are_refused_with_the_size() {
        assert!(check_against("x", 10, 8, 80).is_ok());
        let e = check_against(
            "X (1000000 × 1000000 f64)",
            1_000_000 * 1_000_000,
            8,
            1 << 30,
        )
        .expect_err("8 TB is refused");
        assert_eq!(e.bytes, 8_000_000_000_000);
        assert_eq!(
            e.to_string(),
            "X (1000000 × 1000000 f64) would need 7.3 TiB but only 1.0 GiB of memory is available"
        );
        // Overflow saturates instead of wrapping to a small number.
        assert!(check_against("x", u128::MAX, 8, u64::MAX).is_err());
        assert_eq!(human(512), "512 B");
        assert_eq!(human(3 << 20), "3.0 MiB");
    }

    #[test]
    fn the_machine_reports_some_memory() {
        let a = available_bytes();
        assert!(a > 1 << 20 && a <= HARD_CAP_BYTES, "{a}");
        assert!(check_alloc("a petabyte", 1 << 50, 1).is_err());
        assert!(check_alloc("a kilobyte", 1024, 1).is_ok());
    }

    #[test]
    fn proc_fields_parse() {
        let t = "MemTotal:  100 kB\nMemAvailable:   2048 kB\n";
        assert_eq!(kib_field(t, "MemAvailable:"), Some(2048 * 1024));
        assert_eq!(kib_field(t, "Nope:"), None);
    }
}
