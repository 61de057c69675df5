//! The parallelism a kernel may use, passed explicitly (never a hidden global pool), and
//! the audit that makes any executor safe to fork on.
//!
//! **Why an audit.** Kernels split one output over workers that write disjoint parts of it
//! through shared raw pointers (`DisjointOut`, `SharedRows`, the GEMM provider's panels
//! of C). That is sound only if every index of a fork-join runs at most once.
//! [`CpuDomainExecutor`] is a safe trait that callers implement, so strata does not trust
//! it: every fork-join that reaches an executor claims each index in an atomic bit before
//! running it (a second run of an index, or an index out of range, is not executed) and
//! counts completions; indices that never completed are reported after the executor
//! returns. Violations are recorded in the call's [`ScheduleAudit`], which the caller
//! (the facade, after every op) turns into a typed error naming the executor and the op.

use std::borrow::Cow;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use strata_engine::{CpuDomainExecutor, InlineExecutor};
use strata_provider::{ProviderParallelism, ScheduleError};
use strata_tensor::{Error, Result};

/// Collects the fork-join contract violations of an executor during one operation.
///
/// ```
/// use strata_kernels::ScheduleAudit;
/// let audit = ScheduleAudit::new();
/// assert!(audit.check("add").is_ok());
/// ```
#[derive(Debug, Default)]
pub struct ScheduleAudit {
    violated: AtomicBool,
    first: Mutex<Option<(Cow<'static, str>, String)>>,
}

impl ScheduleAudit {
    /// An audit with nothing recorded.
    pub const fn new() -> Self {
        ScheduleAudit { violated: AtomicBool::new(false), first: Mutex::new(None) }
    }

    fn record(&self, executor: Cow<'static, str>, problem: String) {
        self.violated.store(true, Ordering::Release);
        let mut first = self.first.lock().unwrap_or_else(|p| p.into_inner());
        first.get_or_insert((executor, problem));
    }

    /// Whether no violation was recorded.
    pub fn is_clean(&self) -> bool {
        !self.violated.load(Ordering::Acquire)
    }

    /// `Ok` when no violation was recorded; otherwise a `RuntimeState` error naming `op`,
    /// the executor and the first violation. Outputs written during the op are then not
    /// valid (an `_into` destination holds unspecified values).
    pub fn check(&self, op: &'static str) -> Result<()> {
        if self.is_clean() {
            return Ok(());
        }
        let first = self.first.lock().unwrap_or_else(|p| p.into_inner());
        let (executor, problem) = first.as_ref().map_or(("<unknown>", "a fork-join failed"), |(e, p)| (e, p.as_str()));
        Err(Error::runtime_state(
            op,
            format!(
                "executor {executor} broke the fork-join contract ({problem}); the operation's output is not valid \
                 (an `_into` destination holds unspecified values)"
            ),
        ))
    }
}

/// Claim bits and completion counts of one audited fork-join.
struct Claims {
    inline: [AtomicU64; INLINE_WORDS],
    heap: Vec<AtomicU64>,
    n: usize,
    completed: AtomicUsize,
    duplicates: AtomicUsize,
    out_of_range: AtomicUsize,
}

/// Fork-joins of up to `64 * INLINE_WORDS` indices keep their claim bits on the stack.
const INLINE_WORDS: usize = 4;

impl Claims {
    /// Claim state for `n` indices; `None` only when the bits cannot be allocated.
    fn new(n: usize) -> Option<Claims> {
        let words = n.div_ceil(64);
        let mut heap = Vec::new();
        if words > INLINE_WORDS {
            heap.try_reserve_exact(words).ok()?;
            heap.extend((0..words).map(|_| AtomicU64::new(0)));
        }
        Some(Claims {
            inline: std::array::from_fn(|_| AtomicU64::new(0)),
            heap,
            n,
            completed: AtomicUsize::new(0),
            duplicates: AtomicUsize::new(0),
            out_of_range: AtomicUsize::new(0),
        })
    }

    fn word(&self, w: usize) -> &AtomicU64 {
        if self.heap.is_empty() { &self.inline[w] } else { &self.heap[w] }
    }

    /// Claims index `i`; `false` (and the violation counted) when it is out of range or
    /// already claimed.
    fn claim(&self, i: usize) -> bool {
        if i >= self.n {
            self.out_of_range.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        let bit = 1u64 << (i % 64);
        if self.word(i / 64).fetch_or(bit, Ordering::AcqRel) & bit != 0 {
            self.duplicates.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// What went wrong, if anything, once the executor has returned.
    fn verdict(&self) -> std::result::Result<(), String> {
        let completed = self.completed.load(Ordering::Acquire);
        let duplicates = self.duplicates.load(Ordering::Relaxed);
        let out_of_range = self.out_of_range.load(Ordering::Relaxed);
        if completed == self.n && duplicates == 0 && out_of_range == 0 {
            return Ok(());
        }
        let mut problems = Vec::new();
        if completed < self.n {
            problems.push(format!("{} of {} indices never ran to completion", self.n - completed, self.n));
        }
        if duplicates > 0 {
            problems.push(format!("{duplicates} repeated runs of an index (not executed)"));
        }
        if out_of_range > 0 {
            problems.push(format!("{out_of_range} runs of indices at or beyond {} (not executed)", self.n));
        }
        Err(problems.join(", "))
    }
}

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
    audit: &'a ScheduleAudit,
}

static INLINE: InlineExecutor = InlineExecutor;
/// The audit of sequential parallelism: it never reaches an executor, so nothing is
/// ever recorded here.
static NEVER_AUDITED: ScheduleAudit = ScheduleAudit::new();

impl<'a> Parallelism<'a> {
    /// Everything on the calling thread.
    pub fn sequential() -> Parallelism<'static> {
        Parallelism { executor: &INLINE, budget: 1, audit: &NEVER_AUDITED }
    }

    /// Work may be split over up to `budget` workers of `executor` (clamped to ≥ 1);
    /// violations of the fork-join contract are recorded in `audit`, which the caller
    /// checks ([`ScheduleAudit::check`]) after the kernel returns.
    ///
    /// ```
    /// use strata_engine::InlineExecutor;
    /// use strata_kernels::{Parallelism, ScheduleAudit};
    /// let audit = ScheduleAudit::new();
    /// let par = Parallelism::new(&InlineExecutor, 4, &audit);
    /// let sum = std::sync::atomic::AtomicUsize::new(0);
    /// par.for_each_index(10, &|i| { sum.fetch_add(i, std::sync::atomic::Ordering::Relaxed); });
    /// assert_eq!(sum.into_inner(), 45);
    /// audit.check("example").unwrap();
    /// ```
    pub fn new(executor: &'a dyn CpuDomainExecutor, budget: usize, audit: &'a ScheduleAudit) -> Self {
        Parallelism { executor, budget: budget.max(1), audit }
    }

    /// How many workers a kernel may split one operation over.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// The same executor with at most `threads` workers (at least 1), e.g. to hand a
    /// GEMM provider part of the budget.
    pub fn with_threads(self, threads: usize) -> Self {
        Parallelism { budget: threads.clamp(1, self.budget), ..self }
    }

    /// The executor itself.
    pub fn executor(&self) -> &'a dyn CpuDomainExecutor {
        self.executor
    }

    /// The audit this parallelism records violations in.
    pub fn audit(&self) -> &'a ScheduleAudit {
        self.audit
    }

    /// Calls `body(i)` for `i in 0..n`: inline when `n <= 1` or the budget is 1,
    /// otherwise on the domain's workers, each index at most once whatever the executor
    /// does. A broken schedule is recorded in the audit (see the module docs).
    pub fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) {
        // The violation is in the audit; the caller reports it after the kernel.
        let _ = self.audited_for_each_index(n, body);
    }

    /// [`Parallelism::for_each_index`], also returning the violation, if any.
    fn audited_for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) -> std::result::Result<(), String> {
        if n <= 1 || self.budget == 1 {
            (0..n).for_each(body);
            return Ok(());
        }
        let Some(claims) = Claims::new(n) else {
            // No memory for the claim bits: run the indices here, which needs none.
            (0..n).for_each(body);
            return Ok(());
        };
        self.executor.for_each_index(n, &|i| {
            if claims.claim(i) {
                body(i);
                claims.completed.fetch_add(1, Ordering::AcqRel);
            }
        });
        claims.verdict().inspect_err(|problem| self.audit.record(self.executor.name(), problem.clone()))
    }
}

// SAFETY: every index reaches `body` through `Claims::claim`, which admits each in-range
// index at most once; the executor returns only after its calls returned (its borrow of
// `body` ends with the call), and `Ok` is returned only when all `n` indices completed.
unsafe impl ProviderParallelism for Parallelism<'_> {
    fn threads(&self) -> usize {
        self.budget
    }

    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) -> std::result::Result<(), ScheduleError> {
        self.audited_for_each_index(n, body).map_err(|problem| ScheduleError::new(self.executor.name(), problem))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use strata_engine::ExecutorCapabilities;

    /// An executor that misbehaves in one chosen way, running indices on this thread.
    #[derive(Debug)]
    enum Faulty {
        SkipsLast,
        RunsFirstTwice,
        RunsOutOfRange,
        RunsConcurrentlyTwice,
    }

    impl CpuDomainExecutor for Faulty {
        fn run(&self, job: &mut (dyn FnMut() + Send)) {
            job()
        }
        fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) {
            match self {
                Faulty::SkipsLast => (0..n - 1).for_each(body),
                Faulty::RunsFirstTwice => {
                    (0..n).for_each(body);
                    body(0);
                }
                Faulty::RunsOutOfRange => (0..=n).for_each(body),
                Faulty::RunsConcurrentlyTwice => std::thread::scope(|s| {
                    s.spawn(|| (0..n).for_each(body));
                    s.spawn(|| (0..n).for_each(body));
                }),
            }
        }
        fn capabilities(&self) -> ExecutorCapabilities {
            InlineExecutor.capabilities()
        }
    }

    #[test]
    fn every_fault_is_recorded_and_no_index_runs_twice() {
        for (faulty, expect) in [
            (Faulty::SkipsLast, "never ran"),
            (Faulty::RunsFirstTwice, "repeated"),
            (Faulty::RunsOutOfRange, "beyond"),
            (Faulty::RunsConcurrentlyTwice, "repeated"),
        ] {
            // 300 indices: more than the inline claim words hold.
            for n in [5, 300] {
                let audit = ScheduleAudit::new();
                let par = Parallelism::new(&faulty, 2, &audit);
                let runs = Mutex::new(vec![0usize; n]);
                par.for_each_index(n, &|i| runs.lock().unwrap()[i] += 1);
                assert!(runs.into_inner().unwrap().iter().all(|&r| r <= 1), "{faulty:?}: an index ran twice");
                let err = audit.check("probe").unwrap_err();
                assert_eq!(err.kind(), strata_tensor::ErrorKind::RuntimeState);
                assert_eq!(err.op(), "probe");
                assert!(err.message().contains("Faulty") && err.message().contains(expect), "{faulty:?}: {err}");
                // The provider's view of the same fork-join fails too.
                let audit = ScheduleAudit::new();
                let par = Parallelism::new(&faulty, 2, &audit);
                let e = ProviderParallelism::for_each_index(&par, n, &|_| {}).unwrap_err();
                assert!(e.executor.contains("Faulty"), "{e}");
            }
        }
    }

    #[test]
    fn a_correct_executor_leaves_the_audit_clean_and_runs_every_index_once() {
        let audit = ScheduleAudit::new();
        let par = Parallelism::new(&InlineExecutor, 3, &audit);
        for n in [0, 1, 2, 64, 65, 256, 257, 1000] {
            let runs = Mutex::new(vec![0usize; n]);
            par.for_each_index(n, &|i| runs.lock().unwrap()[i] += 1);
            assert!(runs.into_inner().unwrap().iter().all(|&r| r == 1));
            assert!(ProviderParallelism::for_each_index(&par, n, &|_| {}).is_ok());
        }
        assert!(audit.is_clean());
        assert_eq!(par.with_threads(2).budget(), 2);
        assert_eq!(par.with_threads(9).budget(), 3);
        assert_eq!(par.with_threads(0).budget(), 1);
    }
}
