//! The parallelism a kernel may use, passed explicitly (never a hidden global pool).

use strata_engine::{CpuDomainExecutor, InlineExecutor};

/// The domain's fork-join and how many workers a kernel may split work over.
///
/// ```
/// use strata_kernels::Parallelism;
/// let par = Parallelism::sequential();
/// assert_eq!(par.budget(), 1);
/// let mut hits = std::sync::Mutex::new(Vec::new());
/// par.for_each_index(3, &|i| hits.lock().unwrap().push(i));
/// assert_eq!(hits.into_inner().unwrap(), vec![0, 1, 2]);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Parallelism<'a> {
    executor: &'a dyn CpuDomainExecutor,
    budget: usize,
}

static INLINE: InlineExecutor = InlineExecutor;

impl<'a> Parallelism<'a> {
    /// Everything on the calling thread.
    pub fn sequential() -> Parallelism<'static> {
        Parallelism { executor: &INLINE, budget: 1 }
    }

    /// Work may be split over up to `budget` workers of `executor` (clamped to ≥ 1).
    pub fn new(executor: &'a dyn CpuDomainExecutor, budget: usize) -> Self {
        Parallelism { executor, budget: budget.max(1) }
    }

    /// How many workers a kernel may split one operation over.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// The executor itself (for providers that need to run inside the domain).
    pub fn executor(&self) -> &'a dyn CpuDomainExecutor {
        self.executor
    }

    /// Calls `body(i)` for `i in 0..n`: inline when `n <= 1` or the budget is 1,
    /// otherwise on the domain's workers.
    pub fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) {
        if n <= 1 || self.budget == 1 { (0..n).for_each(body) } else { self.executor.for_each_index(n, body) }
    }
}
