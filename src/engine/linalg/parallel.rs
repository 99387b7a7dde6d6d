//! How many threads one fit's products may use, and the split of a product over them that
//! leaves its bits unchanged.
//!
//! The thread count belongs to the calling thread ([`set_threads`]): the worker sets it for
//! the fit it runs (the app and `run` use every core, `sweep` and `Scan k` one per fit), and a
//! thread of the pool never splits further. A product is split only by *output* entries (the
//! columns of `WᵀX`, the rows of `XHᵀ`), never inside a sum: every entry is still the one
//! fused multiply-add chain of the single-threaded kernel, so a fit gives the same bits with
//! 1, 2 or 16 threads, and how the parts are cut or which thread takes one changes nothing.
//! (A BLAS thread pool splits the inner dimension by the thread count; DESIGN.md §4.)
//!
//! [`for_each_part`] runs the parts on the caller and `threads − 1` threads of a pool kept
//! for that count, each taking the next part as it finishes one, so a thread that the shared
//! machine delays holds up one part, not a fixed share.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

thread_local! {
    /// Threads the products called on this thread may use (1: sequential).
    static THREADS: Cell<usize> = const { Cell::new(1) };
}

/// Let the products called on this thread use `n` threads (at least 1). The worker calls it
/// for each fit ([`crate::engine::jobs::worker::Job::threads`]).
pub fn set_threads(n: usize) {
    THREADS.with(|t| t.set(n.max(1)));
}

/// Threads the products called on this thread may use.
pub fn threads() -> usize {
    THREADS.with(Cell::get)
}

/// The cores this process may run on: the default thread count of one interactive fit.
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// Sets the calling thread's count for its lifetime and restores the one before on drop.
#[derive(Debug)]
pub struct ThreadsGuard {
    before: usize,
}

impl ThreadsGuard {
    pub fn new(n: usize) -> Self {
        let before = threads();
        set_threads(n);
        Self { before }
    }
}

impl Drop for ThreadsGuard {
    fn drop(&mut self) {
        set_threads(self.before);
    }
}

/// The pool that helps a caller using `n` threads: `n − 1` threads, built on first use and
/// kept (a fit's products call it thousands of times). `None` when it cannot be built (the
/// products then run on the caller alone, with the same bits).
fn helpers(n: usize) -> Option<Arc<rayon::ThreadPool>> {
    /// The pools built so far, by thread count.
    type Pools = Mutex<Vec<(usize, Arc<rayon::ThreadPool>)>>;
    static POOLS: OnceLock<Pools> = OnceLock::new();
    let pools = POOLS.get_or_init(|| Mutex::new(Vec::new()));
    let mut pools = pools.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, p)) = pools.iter().find(|(c, _)| *c == n) {
        return Some(Arc::clone(p));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(n - 1)
        .thread_name(|i| format!("nmf-product-{i}"))
        .build()
        .ok()?;
    let pool = Arc::new(pool);
    pools.push((n, Arc::clone(&pool)));
    Some(pool)
}

/// Parts to cut a product into for the calling thread's count: one per thread when
/// sequential, else two per thread (a delayed thread then holds up half a share). Callers may
/// cut differently; the bits do not depend on it.
pub fn parts_for(threads: usize) -> usize {
    if threads <= 1 { 1 } else { 2 * threads }
}

/// Run `f(i, part)` for every part, on the calling thread alone when it uses one thread (or
/// there is one part), else on it and the helpers of [`threads`]. Each part is taken by
/// exactly one thread; a panic in one is raised again on the caller.
pub fn for_each_part<T: Send>(parts: Vec<T>, f: impl Fn(usize, T) + Sync) {
    let n = threads().min(parts.len());
    let pool = if n > 1 { helpers(n) } else { None };
    let Some(pool) = pool else {
        for (i, p) in parts.into_iter().enumerate() {
            f(i, p);
        }
        return;
    };
    let slots: Vec<Mutex<Option<T>>> = parts.into_iter().map(|p| Mutex::new(Some(p))).collect();
    let next = AtomicUsize::new(0);
    let work = || {
        // A part never splits again, on the caller either.
        let _one = ThreadsGuard::new(1);
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(slot) = slots.get(i) else { break };
            let part = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
            if let Some(p) = part {
                f(i, p);
            }
        }
    };
    pool.in_place_scope(|s| {
        for _ in 1..n {
            s.spawn(|_| work());
        }
        work();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_runs_once_whatever_the_thread_count() {
        for t in [1, 2, 3, 5] {
            let _g = ThreadsGuard::new(t);
            let mut out = vec![0usize; 37];
            let parts: Vec<(usize, &mut [usize])> = out.chunks_mut(4).enumerate().collect();
            for_each_part(parts, |i, (j, chunk)| {
                assert_eq!(i, j);
                for v in chunk.iter_mut() {
                    *v += i + 1;
                }
            });
            let want: Vec<usize> = (0..37).map(|x| x / 4 + 1).collect();
            assert_eq!(out, want, "{t} threads");
        }
        assert_eq!(threads(), 1, "the guard restores the count");
    }

    #[test]
    fn parts_run_on_two_threads_at_once_and_never_split_again() {
        let _g = ThreadsGuard::new(2);
        // Each of the two parts waits until both have started: only two threads get past.
        let started = AtomicUsize::new(0);
        for_each_part(vec![(), ()], |_, ()| {
            assert_eq!(threads(), 1, "a part's own products are sequential");
            started.fetch_add(1, Ordering::SeqCst);
            let t0 = std::time::Instant::now();
            while started.load(Ordering::SeqCst) < 2 {
                assert!(
                    t0.elapsed() < std::time::Duration::from_secs(20),
                    "the other part never ran alongside"
                );
                std::thread::yield_now();
            }
        });
        assert_eq!(threads(), 2);
    }
}
