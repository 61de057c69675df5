//! The managed executor: a Rayon pool strata starts, whose workers are confined to the
//! domain's whole CPU set and verified at start-up.
//!
//! Workers are pinned to the *whole* set rather than one CPU each, so that threads a BLAS
//! library spawns from a worker inherit the domain's confinement, and the OS may still
//! balance load inside the set.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rayon::iter::{IntoParallelIterator, ParallelIterator};
use strata_tensor::panic_message;
use strata_topology::CpuSet;

use crate::affinity::{SystemThreadAffinity, ThreadAffinity};
use crate::error::EngineError;
use crate::executor::{AffinityClaim, CpuDomainExecutor, ExecutorCapabilities, ReentrancyBehaviour, ShutdownOwner};

/// Default worker stack size: BLAS kernels and deep recursion in faer need more than
/// Rust's 2 MiB default.
pub const DEFAULT_WORKER_STACK_SIZE: usize = 16 * 1024 * 1024;

/// Default time construction waits for every worker to report its pinning.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// Configures and builds a [`ManagedCpuExecutor`].
///
/// ```
/// use strata_engine::{CpuDomainExecutor, ManagedCpuExecutor};
/// let cpus = strata_topology::current_thread_affinity().unwrap();
/// let exec = ManagedCpuExecutor::builder(cpus, 1).thread_name_prefix("doc").build().unwrap();
/// let mut ran = false;
/// exec.run(&mut || ran = true);
/// assert!(ran);
/// ```
#[derive(Debug, Clone)]
pub struct ManagedExecutorBuilder {
    cpus: CpuSet,
    budget: usize,
    name_prefix: String,
    stack_size: usize,
    startup_timeout: Duration,
    affinity: Arc<dyn ThreadAffinity>,
    pinning: bool,
}

impl ManagedExecutorBuilder {
    /// Names workers `{prefix}-{index}` (default `strata-worker`).
    pub fn thread_name_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.name_prefix = prefix.into();
        self
    }

    /// Sets each worker's stack size in bytes (default [`DEFAULT_WORKER_STACK_SIZE`]).
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = bytes;
        self
    }

    /// Sets how long construction waits for the workers' pinning reports
    /// (default [`DEFAULT_STARTUP_TIMEOUT`]).
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    /// Replaces the OS affinity calls (tests use a double).
    pub fn affinity(mut self, affinity: Arc<dyn ThreadAffinity>) -> Self {
        self.affinity = affinity;
        self
    }

    /// Whether to pin and verify workers (default `true`). Unpinned pools are for
    /// platforms without thread affinity; they claim [`AffinityClaim::Unconstrained`].
    pub fn pinning(mut self, pinning: bool) -> Self {
        self.pinning = pinning;
        self
    }

    /// Starts the workers, pins each to the whole CPU set and checks every one's mask.
    ///
    /// Errors: [`EngineError::ZeroBudget`], [`EngineError::BudgetExceedsCpus`],
    /// [`EngineError::ThreadPoolBuild`], and for a worker that cannot be pinned or reads
    /// back another mask [`EngineError::PinFailed`] / [`EngineError::PinVerificationFailed`]
    /// ([`EngineError::WorkerStartTimeout`] if workers do not report in time). A
    /// [`ThreadAffinity`] hook that panics on a worker is reported as that worker's
    /// [`EngineError::PinFailed`], never an abort. On error the started workers are shut
    /// down.
    pub fn build(self) -> Result<ManagedCpuExecutor, EngineError> {
        let cpu_count = self.cpus.len();
        if self.budget == 0 {
            return Err(EngineError::ZeroBudget);
        }
        if self.budget > cpu_count {
            return Err(EngineError::BudgetExceedsCpus { budget: self.budget, cpus: cpu_count });
        }
        let (report_tx, report_rx) = mpsc::channel::<Result<usize, EngineError>>();
        let prefix = self.name_prefix.clone();
        let cpus = self.cpus.clone();
        let affinity = Arc::clone(&self.affinity);
        let pinning = self.pinning;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(self.budget)
            .thread_name(move |i| format!("{prefix}-{i}"))
            .stack_size(self.stack_size)
            .start_handler(move |worker| {
                // A panic escaping a start handler aborts the process (Rayon cannot
                // propagate it): a panicking affinity hook becomes this worker's error.
                let report = if pinning {
                    catch_unwind(AssertUnwindSafe(|| pin_and_verify(affinity.as_ref(), &cpus, worker))).unwrap_or_else(
                        |payload| {
                            Err(EngineError::PinFailed {
                                worker,
                                cpus: cpus.clone(),
                                reason: format!(
                                    "the thread-affinity hook panicked: {}",
                                    panic_message(payload.as_ref())
                                ),
                            })
                        },
                    )
                } else {
                    Ok(worker)
                };
                // The receiver is gone only if construction already failed or timed out;
                // the pool is then being dropped and nobody needs this report.
                let _ = report_tx.send(report);
            })
            .build()
            .map_err(|e| EngineError::ThreadPoolBuild { reason: e.to_string() })?;

        let deadline = Instant::now() + self.startup_timeout;
        let mut reported = 0;
        while reported < self.budget {
            let remaining = deadline.saturating_duration_since(Instant::now());
            match report_rx.recv_timeout(remaining) {
                Ok(Ok(_worker)) => reported += 1,
                Ok(Err(e)) => return Err(e),
                Err(_) => {
                    return Err(EngineError::WorkerStartTimeout {
                        reported,
                        expected: self.budget,
                        timeout: self.startup_timeout,
                    });
                }
            }
        }
        Ok(ManagedCpuExecutor {
            pool: Arc::new(pool),
            cpus: self.cpus,
            budget: self.budget,
            affinity: self.affinity,
            pinned: self.pinning,
        })
    }
}

fn pin_and_verify(affinity: &dyn ThreadAffinity, cpus: &CpuSet, worker: usize) -> Result<usize, EngineError> {
    affinity.pin_current_thread(cpus).map_err(|reason| EngineError::PinFailed {
        worker,
        cpus: cpus.clone(),
        reason,
    })?;
    match affinity.current_thread_affinity() {
        Ok(observed) if &observed == cpus => Ok(worker),
        Ok(observed) => {
            Err(EngineError::PinVerificationFailed { worker, requested: cpus.clone(), observed: observed.to_string() })
        }
        Err(reason) => Err(EngineError::PinVerificationFailed {
            worker,
            requested: cpus.clone(),
            observed: format!("(unreadable: {reason})"),
        }),
    }
}

/// A Rayon pool of `budget` workers, each confined to the domain's CPU set and verified.
///
/// strata owns the threads: they stop when the last clone of this executor drops.
/// A panic in submitted work propagates to the submitter (Rayon semantics); the pool stays
/// usable. Submissions from one of its own workers run inline on that worker.
#[derive(Debug, Clone)]
pub struct ManagedCpuExecutor {
    pool: Arc<rayon::ThreadPool>,
    cpus: CpuSet,
    budget: usize,
    affinity: Arc<dyn ThreadAffinity>,
    pinned: bool,
}

impl ManagedCpuExecutor {
    /// A builder for `budget` workers confined to `cpus`.
    pub fn builder(cpus: CpuSet, budget: usize) -> ManagedExecutorBuilder {
        ManagedExecutorBuilder {
            cpus,
            budget,
            name_prefix: "strata-worker".to_string(),
            stack_size: DEFAULT_WORKER_STACK_SIZE,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            affinity: Arc::new(SystemThreadAffinity),
            pinning: true,
        }
    }

    /// The CPUs every worker is confined to.
    pub fn cpus(&self) -> &CpuSet {
        &self.cpus
    }

    /// The number of workers.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// The underlying pool (for `install`-style use by providers such as faer).
    pub fn thread_pool(&self) -> &Arc<rayon::ThreadPool> {
        &self.pool
    }

    /// Reads every worker's affinity from inside the worker, now, and returns the masks
    /// in worker order. Used to re-check pinning after start-up (a test, a diagnostic).
    pub fn worker_affinities(&self) -> Vec<Result<CpuSet, String>> {
        let affinity = &self.affinity;
        self.pool.broadcast(|_| {
            catch_unwind(AssertUnwindSafe(|| affinity.current_thread_affinity())).unwrap_or_else(|payload| {
                Err(format!("the thread-affinity hook panicked: {}", panic_message(payload.as_ref())))
            })
        })
    }
}

impl CpuDomainExecutor for ManagedCpuExecutor {
    fn run(&self, job: &mut (dyn FnMut() + Send)) {
        self.pool.install(job)
    }

    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) {
        match n {
            0 => {}
            // One index needs no splitting: a plain hop onto a worker.
            1 => self.pool.install(|| body(0)),
            _ => self.pool.install(|| (0..n).into_par_iter().for_each(body)),
        }
    }

    fn capabilities(&self) -> ExecutorCapabilities {
        ExecutorCapabilities {
            workers: self.budget,
            affinity: if self.pinned { AffinityClaim::PinnedVerified } else { AffinityClaim::Unconstrained },
            shutdown: ShutdownOwner::Strata,
            reentrancy: ReentrancyBehaviour::RunsInline,
        }
    }

    fn current_thread_is_worker(&self) -> bool {
        self.pool.current_thread_index().is_some()
    }
}
