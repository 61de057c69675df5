//! Node-local memory for node-placed domains: the pool's fresh buffers are first touched
//! by the domain's own (pinned) workers, so Linux's first-touch rule puts their pages on
//! the domain's node.

use std::fmt;
use std::sync::Arc;

use parking_lot::Mutex;
use strata_pool::{AllocationPolicy, AllocationRequest, FreshMemory};

use crate::executor::CpuDomainExecutor;

/// Page granularity of the split: parts handed to workers start on page boundaries
/// (relative to the buffer), so no page is shared by two workers.
const PAGE_BYTES: usize = 4096;

/// Below this size one worker touches the whole buffer: a fork-join costs more than the
/// page faults it would spread.
const SPLIT_THRESHOLD_BYTES: usize = 256 * 1024;

/// An [`AllocationPolicy`] that first-touches fresh pool memory on a domain's workers.
///
/// When the allocating thread already is one of the domain's workers it touches the pages
/// itself (it runs on the node); otherwise the memory is split into page-aligned parts
/// touched in parallel by the workers through the executor.
///
/// ```
/// use std::sync::Arc;
/// use strata_engine::{FirstTouchPolicy, InlineExecutor};
/// use strata_pool::BufferPool;
/// let policy = FirstTouchPolicy::new(Arc::new(InlineExecutor));
/// let pool = BufferPool::on_node(1 << 20, 0, Arc::new(policy));
/// let loan = pool.acquire_zeroed::<f64>(100_000).unwrap();
/// assert!(loan.iter().all(|&x| x == 0.0));
/// ```
pub struct FirstTouchPolicy {
    executor: Arc<dyn CpuDomainExecutor>,
}

impl FirstTouchPolicy {
    /// A policy touching memory on `executor`'s workers.
    pub fn new(executor: Arc<dyn CpuDomainExecutor>) -> Self {
        FirstTouchPolicy { executor }
    }
}

impl fmt::Debug for FirstTouchPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FirstTouchPolicy").field("executor", &self.executor).finish()
    }
}

impl AllocationPolicy for FirstTouchPolicy {
    fn on_fresh_allocation(&self, _request: &AllocationRequest, mut memory: FreshMemory<'_>) {
        if memory.is_empty() {
            return;
        }
        if self.executor.current_thread_is_worker() {
            memory.touch_pages();
            return;
        }
        let workers = self.executor.capabilities().workers.max(1);
        if workers == 1 || memory.len_bytes() < SPLIT_THRESHOLD_BYTES {
            let whole = Mutex::new(Some(memory));
            self.executor.run(&mut || {
                if let Some(mut m) = whole.lock().take() {
                    m.touch_pages();
                }
            });
            return;
        }
        let parts = split_pages(memory, workers);
        let parts: Vec<Mutex<Option<FreshMemory<'_>>>> = parts.into_iter().map(|p| Mutex::new(Some(p))).collect();
        // An executor that repeats or invents indices finds nothing to touch; one that
        // skips some leaves those pages to the first write (placement, not correctness).
        self.executor.for_each_index(parts.len(), &|i| {
            if let Some(mut part) = parts.get(i).and_then(|p| p.lock().take()) {
                part.touch_pages();
            }
        });
    }
}

/// Splits `memory` into at most `parts` page-aligned pieces of nearly equal size.
fn split_pages(memory: FreshMemory<'_>, parts: usize) -> Vec<FreshMemory<'_>> {
    let pages = memory.len_bytes().div_ceil(PAGE_BYTES);
    let per_part = pages.div_ceil(parts.max(1)).max(1) * PAGE_BYTES;
    let mut out = Vec::with_capacity(parts);
    let mut rest = memory;
    while rest.len_bytes() > per_part {
        let (head, tail) = rest.split_at(per_part);
        out.push(head);
        rest = tail;
    }
    out.push(rest);
    out
}
