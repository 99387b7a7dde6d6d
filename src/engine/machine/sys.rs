//! The crate's only `unsafe` code: three calls to the CPU and the OS that have no safe wrapper,
//! each behind a safe function with its precondition checked here.
//!
//! - [`clear_upper_state`]: `vzeroupper` after faer's hand-written AVX-512 kernels.
//! - [`huge_page_buffer`]: `madvise(MADV_HUGEPAGE)` on the buffer of a large X.
//! - [`prefetch`]: `prefetcht0`, a hint to load a cache line of X ahead of its use.
//! - [`thread_cpu_time`]: `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`, the calling thread's CPU
//!   time (the app's frame time without the waits of a busy machine).
//!
//! The rest of the crate is `#![deny(unsafe_code)]` (Cargo.toml `[lints]`).

/// Clear the upper halves of the vector registers (`vzeroupper`) after a faer kernel.
///
/// faer's AVX-512 micro-kernels return with the upper register state dirty. On the Intel Xeon
/// of the development box, every legacy-SSE instruction that follows then pays a transition
/// penalty, which slowed all scalar f64 code of the crate (the MU passes, the trace objective,
/// margins) and libm's `exp`/`log1p` many times over (docs/performance.md, "`vzeroupper` after
/// faer (`engine/machine/sys.rs`, `clear_upper_state`)"). Call this after every faer kernel call; it
/// costs one instruction and leaves all results bit-identical. (Code compiled by rustc, such as
/// `linalg::thin`, gets its `vzeroupper` from the compiler.)
#[inline]
pub(crate) fn clear_upper_state() {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx") {
            zeroupper::run();
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[expect(
    unsafe_code,
    reason = "audited: vzeroupper needs AVX, detected at run time"
)]
mod zeroupper {
    #[target_feature(enable = "avx")]
    fn zeroupper_avx() {
        std::arch::x86_64::_mm256_zeroupper();
    }

    /// Only call after `is_x86_feature_detected!("avx")` returned true.
    #[inline]
    pub(super) fn run() {
        // SAFETY: the caller checked at run time that the CPU supports AVX, the only
        // requirement of `zeroupper_avx`; vzeroupper touches no memory.
        unsafe { zeroupper_avx() }
    }
}

/// Ask the CPU to bring the cache line holding `s[at]` into L1 (`prefetcht0`). Only a hint:
/// nothing is read into the program, and results never depend on it. A no-op when `at` is out
/// of range or off x86_64.
///
/// `linalg::thin`'s `WᵀX` reads 16 rows of a large X side by side, 128 bytes of each per
/// step; the hardware prefetchers do not run far enough ahead on that pattern, so a prefetch a
/// few steps ahead in each row pays (`thin::PREFETCH_COLUMNS`; docs/performance.md, "Thin `WᵀX`
/// (`linalg/thin.rs`, `wt_x_columns`)").
#[inline(always)]
pub(crate) fn prefetch(s: &[f64], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(v) = s.get(at) {
        hint::prefetch_t0(v);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (s, at);
}

#[cfg(target_arch = "x86_64")]
#[expect(
    unsafe_code,
    reason = "audited: prefetcht0 of a reference we hold; SSE is part of the x86_64 baseline"
)]
mod hint {
    #[inline(always)]
    pub(super) fn prefetch_t0(v: &f64) {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: `_mm_prefetch` needs SSE, which every x86_64 CPU has; it never faults and
        // writes nothing, and the pointer comes from a live reference anyway.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(v).cast()) }
    }
}

/// Buffers at least this large (bytes) ask for 2 MiB pages.
pub const HUGE_PAGE_MIN_BYTES: usize = 32 << 20;

/// A zeroed `Vec<f64>` of `len` values; when it is at least [`HUGE_PAGE_MIN_BYTES`], its pages
/// are advised as transparent huge pages before the first touch (Linux; a no-op elsewhere or
/// when the kernel refuses). Like `vec![0.0; len]` the memory comes zeroed from the OS and
/// becomes resident only where it is written.
///
/// The NMF products walk X in column blocks, i.e. thousands of rows far apart: with 4 KiB pages
/// every row is a TLB miss, which 2 MiB pages make rare (docs/performance.md, "2 MiB pages
/// (`engine/machine/sys.rs`, `huge_page_buffer`)"). NumPy does the same for its large arrays
/// (`madvise(MADV_HUGEPAGE)` above 4 MiB), so the scikit-learn peer of the benchmark already
/// had it. Transparent huge pages set to `never` make the advice a no-op; `always` makes it
/// unnecessary.
pub fn huge_page_buffer(len: usize) -> Vec<f64> {
    // A large zeroed allocation is a fresh anonymous mapping: no page is touched yet, so the
    // advice applies to every page of it.
    let mut v = vec![0.0; len];
    if len * size_of::<f64>() >= HUGE_PAGE_MIN_BYTES {
        advise_huge(v.as_mut_ptr().cast(), len * size_of::<f64>());
    }
    v
}

/// Advise the 2 MiB-aligned part of `[ptr, ptr + bytes)` as transparent huge pages.
#[cfg(target_os = "linux")]
#[expect(
    unsafe_code,
    reason = "audited: madvise on the aligned interior of a live allocation we own"
)]
fn advise_huge(ptr: *mut u8, bytes: usize) {
    const HUGE: usize = 2 << 20;
    let start = (ptr as usize).next_multiple_of(HUGE);
    let end = (ptr as usize + bytes) & !(HUGE - 1);
    if end > start {
        // SAFETY: [start, end) lies inside the allocation of `bytes` bytes at `ptr` (the caller's
        // Vec capacity), so it is mapped memory of this process; MADV_HUGEPAGE only changes how
        // the kernel backs those pages and never their contents or validity. A failure (e.g.
        // THP compiled out) leaves the memory as it was, so the result is ignored.
        let _ =
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_ptr: *mut u8, _bytes: usize) {}

/// CPU time the calling thread has used, or `None` where the clock is missing. A frame's wall
/// time on a loaded machine includes the time the thread waited for a core; its CPU time is
/// what the frame itself cost.
#[cfg(target_os = "linux")]
#[expect(
    unsafe_code,
    reason = "audited: clock_gettime writes one timespec we own"
)]
pub fn thread_cpu_time() -> Option<std::time::Duration> {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec for the duration of the call, and
    // CLOCK_THREAD_CPUTIME_ID is a clock Linux always provides; on failure `t` is not used.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &raw mut t) };
    let secs = u64::try_from(t.tv_sec).ok()?;
    let nanos = u32::try_from(t.tv_nsec).ok()?;
    (rc == 0).then(|| std::time::Duration::new(secs, nanos))
}

#[cfg(not(target_os = "linux"))]
pub fn thread_cpu_time() -> Option<std::time::Duration> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_page_buffers_are_zeroed_and_sized() {
        for len in [0, 1, 1000, HUGE_PAGE_MIN_BYTES / 8 + 3] {
            let v = huge_page_buffer(len);
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|&x| x == 0.0));
        }
    }
}
