//! The executor seam: how a CPU domain runs work. Kernels see only this trait, so a
//! managed pinned pool, a caller's Rayon pool and an inline test double are interchangeable.

use std::borrow::Cow;
use std::fmt::Debug;

/// Which CPUs an executor's workers are claimed to run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AffinityClaim {
    /// Every worker was pinned to the domain's CPU set and read back (verified).
    PinnedVerified,
    /// The caller declared the CPUs; strata did not pin or verify them.
    Declared,
    /// No claim: workers may run anywhere.
    Unconstrained,
}

/// Who starts and stops an executor's threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShutdownOwner {
    /// strata started the workers and stops them when the last handle drops.
    Strata,
    /// The caller owns the threads; strata never shuts them down.
    Caller,
    /// No threads: work runs on the calling thread.
    NoThreads,
}

/// What happens when work submitted to an executor submits again from inside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReentrancyBehaviour {
    /// Nested submissions run inline on the current worker (Rayon semantics).
    RunsInline,
    /// Nested submissions are refused by the layer above with a typed error.
    Refused,
}

/// A snapshot of what an executor offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExecutorCapabilities {
    /// Number of workers that may run one fork-join at once (≥ 1).
    pub workers: usize,
    /// Where the workers run.
    pub affinity: AffinityClaim,
    /// Who owns the threads' lifetime.
    pub shutdown: ShutdownOwner,
    /// Behaviour of nested submissions.
    pub reentrancy: ReentrancyBehaviour,
}

/// Runs work for one CPU domain. Object-safe: domains hold `Arc<dyn CpuDomainExecutor>`.
///
/// Contract: both methods return only after all work they started has finished;
/// `for_each_index(n, body)` calls `body(i)` exactly once for every `i < n`. A panic in
/// `job` or `body` is propagated to the caller after the other indices have finished or
/// been abandoned; the executor stays usable.
///
/// The trait is safe to implement: strata checks the fork-join contract rather than
/// trusting it (strata-kernels audits every fork-join: an index run twice or out of
/// range is not executed, a skipped index is reported as a typed error of the op).
///
/// ```
/// use strata_engine::{CpuDomainExecutor, InlineExecutor};
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// let exec = InlineExecutor;
/// let total = AtomicUsize::new(0);
/// exec.for_each_index(10, &|i| { total.fetch_add(i, Ordering::Relaxed); });
/// assert_eq!(total.into_inner(), 45);
/// ```
pub trait CpuDomainExecutor: Send + Sync + Debug {
    /// Runs `job` once inside the domain (on one of its workers, or inline when the
    /// caller already is one), so that nested Rayon calls use the domain's threads.
    fn run(&self, job: &mut (dyn FnMut() + Send));

    /// Calls `body(i)` for every `i` in `0..n`, spread over the domain's workers.
    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync));

    /// What this executor offers.
    fn capabilities(&self) -> ExecutorCapabilities;

    /// A diagnostic name, used in errors (default: the implementing type's name).
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed(std::any::type_name::<Self>())
    }

    /// Whether the calling thread is one of this executor's workers. Domain entry uses
    /// it to refuse re-entry from a task of the domain's own pool. Executors without
    /// threads of their own keep the default (`false`).
    fn current_thread_is_worker(&self) -> bool {
        false
    }
}

/// Runs everything on the calling thread: the executor of budget-1 inline work and the
/// test double of every layer above.
#[derive(Clone, Copy, Debug, Default)]
pub struct InlineExecutor;

impl CpuDomainExecutor for InlineExecutor {
    fn run(&self, job: &mut (dyn FnMut() + Send)) {
        job()
    }

    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) {
        (0..n).for_each(body)
    }

    fn capabilities(&self) -> ExecutorCapabilities {
        ExecutorCapabilities {
            workers: 1,
            affinity: AffinityClaim::Unconstrained,
            shutdown: ShutdownOwner::NoThreads,
            reentrancy: ReentrancyBehaviour::RunsInline,
        }
    }
}
