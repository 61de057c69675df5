//! The fork-join a provider call may use, handed in by the caller.
//!
//! A provider never picks threads of its own: strata's kernels pass the domain's executor
//! (through their audited `Parallelism`), so a parallel GEMM runs on exactly the workers
//! the operation was placed on — a managed pinned pool, a caller's Rayon pool or a
//! caller's own executor alike — and never on Rayon's global pool.

use std::sync::atomic::{AtomicUsize, Ordering};

/// A fork-join that did not run every index exactly once.
///
/// ```
/// use strata_provider::ScheduleError;
/// let e = ScheduleError::new("my-executor", "index 3 never ran");
/// assert!(e.to_string().contains("my-executor"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("executor {executor} broke the fork-join contract: {problem}")]
pub struct ScheduleError {
    /// Diagnostic name of the executor.
    pub executor: String,
    /// What went wrong (indices skipped, run twice, out of range).
    pub problem: String,
}

impl ScheduleError {
    /// A violation by `executor`.
    pub fn new(executor: impl Into<String>, problem: impl Into<String>) -> Self {
        ScheduleError { executor: executor.into(), problem: problem.into() }
    }
}

/// The parallelism one provider call may use: how many workers, and a fork-join on them.
/// Object-safe; providers receive `&dyn ProviderParallelism`.
///
/// # Safety
///
/// Providers write disjoint parts of `C` from different indices through raw pointers, so
/// an implementation must guarantee, for every call of
/// [`for_each_index(n, body)`](ProviderParallelism::for_each_index):
/// * `body(i)` runs at most once for each `i`, and never with `i >= n`;
/// * every call of `body` it made has returned before it returns;
/// * it returns `Ok(())` only when `body(i)` ran to completion for every `i < n`.
///
/// strata-kernels' `Parallelism` upholds this for any executor by auditing the schedule;
/// [`SequentialParallelism`] and [`ScopedThreadParallelism`] by construction.
pub unsafe trait ProviderParallelism: Sync {
    /// Workers this call may use (at least 1).
    fn threads(&self) -> usize;

    /// Calls `body(i)` for every `i` in `0..n`, possibly on several threads at once.
    ///
    /// Errors: a [`ScheduleError`] when some index did not run (the indices that did
    /// ran once each).
    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) -> Result<(), ScheduleError>;
}

/// Everything on the calling thread: one worker, a plain loop.
///
/// ```
/// use strata_provider::{ProviderParallelism, SequentialParallelism};
/// let seen = std::sync::Mutex::new(Vec::new());
/// SequentialParallelism.for_each_index(3, &|i| seen.lock().unwrap().push(i)).unwrap();
/// assert_eq!(seen.into_inner().unwrap(), [0, 1, 2]);
/// assert_eq!(SequentialParallelism.threads(), 1);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct SequentialParallelism;

// SAFETY: a plain loop calls each index once, in range, and returns after the last call.
unsafe impl ProviderParallelism for SequentialParallelism {
    fn threads(&self) -> usize {
        1
    }

    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) -> Result<(), ScheduleError> {
        (0..n).for_each(body);
        Ok(())
    }
}

/// A fork-join on `threads` scoped OS threads started for each call (the calling thread
/// is one of them): for using a provider on its own, outside any strata domain. strata's
/// kernels never use it — they fork on the domain's executor.
///
/// ```
/// use strata_provider::{ProviderParallelism, ScopedThreadParallelism};
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// let par = ScopedThreadParallelism::new(3);
/// let sum = AtomicUsize::new(0);
/// par.for_each_index(100, &|i| { sum.fetch_add(i, Ordering::Relaxed); }).unwrap();
/// assert_eq!((par.threads(), sum.into_inner()), (3, 4950));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ScopedThreadParallelism {
    threads: usize,
}

impl ScopedThreadParallelism {
    /// Up to `threads` threads per call (clamped to at least 1).
    pub fn new(threads: usize) -> Self {
        ScopedThreadParallelism { threads: threads.max(1) }
    }
}

// SAFETY: indices are handed out by one atomic counter (each at most once, all below `n`);
// `std::thread::scope` joins every thread before returning; a panicking index propagates
// out of the scope, so `Ok` means every index completed.
unsafe impl ProviderParallelism for ScopedThreadParallelism {
    fn threads(&self) -> usize {
        self.threads
    }

    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) -> Result<(), ScheduleError> {
        let next = AtomicUsize::new(0);
        let work = || {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                body(i);
            }
        };
        let helpers = self.threads.min(n).saturating_sub(1);
        std::thread::scope(|s| {
            for _ in 0..helpers {
                // A thread the OS refuses only means fewer helpers: the counter still
                // hands every index to someone.
                if std::thread::Builder::new().spawn_scoped(s, work).is_err() {
                    break;
                }
            }
            work();
        });
        Ok(())
    }
}
