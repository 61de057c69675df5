//! An executor around a caller's Rayon pool. strata never rebuilds or shuts it down.

use std::sync::Arc;

use rayon::iter::{IntoParallelIterator, ParallelIterator};

use crate::executor::{AffinityClaim, CpuDomainExecutor, ExecutorCapabilities, ReentrancyBehaviour, ShutdownOwner};

/// Runs domain work on a caller's `Arc<rayon::ThreadPool>`.
///
/// The caller owns the threads ([`ShutdownOwner::Caller`]): dropping this adapter drops
/// only its handle. The affinity claim is what the caller says it is; strata does not pin.
///
/// ```
/// use std::sync::Arc;
/// use strata_engine::{CpuDomainExecutor, RayonCpuDomainExecutor};
/// let pool = Arc::new(rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap());
/// let exec = RayonCpuDomainExecutor::new(Arc::clone(&pool));
/// assert_eq!(exec.capabilities().workers, 2);
/// let hits = std::sync::atomic::AtomicUsize::new(0);
/// exec.for_each_index(5, &|_| { hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed); });
/// assert_eq!(hits.into_inner(), 5);
/// ```
#[derive(Debug, Clone)]
pub struct RayonCpuDomainExecutor {
    pool: Arc<rayon::ThreadPool>,
    affinity: AffinityClaim,
}

impl RayonCpuDomainExecutor {
    /// Adapts `pool`, claiming nothing about where its workers run.
    pub fn new(pool: Arc<rayon::ThreadPool>) -> Self {
        RayonCpuDomainExecutor { pool, affinity: AffinityClaim::Unconstrained }
    }

    /// Adapts `pool` whose workers the caller declares to run on the domain's CPUs
    /// (reported as [`AffinityClaim::Declared`]; not verified).
    pub fn declared(pool: Arc<rayon::ThreadPool>) -> Self {
        RayonCpuDomainExecutor { pool, affinity: AffinityClaim::Declared }
    }

    /// The caller's pool.
    pub fn thread_pool(&self) -> &Arc<rayon::ThreadPool> {
        &self.pool
    }
}

impl CpuDomainExecutor for RayonCpuDomainExecutor {
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
            workers: self.pool.current_num_threads().max(1),
            affinity: self.affinity,
            shutdown: ShutdownOwner::Caller,
            reentrancy: ReentrancyBehaviour::RunsInline,
        }
    }

    fn current_thread_is_worker(&self) -> bool {
        self.pool.current_thread_index().is_some()
    }
}
