//! Shared test doubles and bounded waits.
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use strata_engine::{
    AffinityClaim, CpuDomainExecutor, ExecutorCapabilities, ReentrancyBehaviour, ShutdownOwner, ThreadAffinity,
};
use strata_topology::CpuSet;

/// Every wait in these tests gives up after this long.
pub const WAIT: Duration = Duration::from_secs(20);

/// The process affinity mask as the test thread sees it.
pub fn process_mask() -> CpuSet {
    strata_topology::current_thread_affinity().expect("read the test thread's affinity")
}

/// Spins (yielding) until `cond` holds; false if `WAIT` passes first.
pub fn wait_until(cond: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    cond()
}

/// An affinity double: pinning records the request; read-back answers `reads_back`
/// (or the pinned set when `None`), or fails when `pin_error` is set.
#[derive(Debug, Default)]
pub struct FakeAffinity {
    pub pin_error: Option<String>,
    pub reads_back: Option<CpuSet>,
    pub pinned: Mutex<Vec<CpuSet>>,
    pub pin_delay: Option<Duration>,
}

impl ThreadAffinity for FakeAffinity {
    fn pin_current_thread(&self, cpus: &CpuSet) -> Result<(), String> {
        if let Some(delay) = self.pin_delay {
            std::thread::sleep(delay);
        }
        if let Some(e) = &self.pin_error {
            return Err(e.clone());
        }
        self.pinned.lock().push(cpus.clone());
        Ok(())
    }

    fn current_thread_affinity(&self) -> Result<CpuSet, String> {
        match &self.reads_back {
            Some(set) => Ok(set.clone()),
            None => self.pinned.lock().last().cloned().ok_or_else(|| "never pinned".to_string()),
        }
    }
}

/// An executor double running on the calling thread that counts its calls and claims
/// `workers` workers.
#[derive(Debug)]
pub struct CountingExecutor {
    pub workers: usize,
    pub runs: AtomicUsize,
    pub fork_joins: AtomicUsize,
    pub indices: AtomicUsize,
}

impl CountingExecutor {
    pub fn new(workers: usize) -> Arc<Self> {
        Arc::new(CountingExecutor {
            workers,
            runs: AtomicUsize::new(0),
            fork_joins: AtomicUsize::new(0),
            indices: AtomicUsize::new(0),
        })
    }
}

impl CpuDomainExecutor for CountingExecutor {
    fn run(&self, job: &mut (dyn FnMut() + Send)) {
        self.runs.fetch_add(1, Ordering::SeqCst);
        job()
    }

    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) {
        self.fork_joins.fetch_add(1, Ordering::SeqCst);
        self.indices.fetch_add(n, Ordering::SeqCst);
        (0..n).for_each(body)
    }

    fn capabilities(&self) -> ExecutorCapabilities {
        ExecutorCapabilities {
            workers: self.workers,
            affinity: AffinityClaim::Declared,
            shutdown: ShutdownOwner::Caller,
            reentrancy: ReentrancyBehaviour::RunsInline,
        }
    }
}
