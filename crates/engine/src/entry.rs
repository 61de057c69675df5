//! Entering a domain: admission (an arbiter permit or the caller-managed guard), the
//! re-entrancy marker, and the executor view that keeps the marker set on workers.
//!
//! Re-entrancy rule: while a [`DomainEntry`] is alive on a thread, and while any task it
//! submitted runs on a worker, that thread is "inside a domain execution". Entering any
//! domain from there is refused with [`EngineError::Reentrant`]: nesting could wait on
//! the permit the outer entry holds and deadlock. Work that needs parallelism inside an
//! execution uses the entry's executor instead, which runs nested submissions inline.

use std::cell::Cell;
use std::marker::PhantomData;
use std::time::Duration;

use parking_lot::Mutex;
use strata_arbiter::{AdmissionRequest, Owner, ResourcePermit, WaitPolicy};

use crate::domain::{CpuDomain, CpuDomainId};
use crate::error::EngineError;
use crate::executor::{CpuDomainExecutor, ExecutorCapabilities, InlineExecutor};
use crate::placement::CpuPlacement;
use crate::resources::DomainResources;

thread_local! {
    /// Serial of the domain whose execution this thread is part of (0: none).
    static ACTIVE: Cell<u64> = const { Cell::new(0) };
}

/// Names of live domains by serial, read only to word a re-entrancy error.
static NAMES: Mutex<Vec<(u64, CpuDomainId)>> = Mutex::new(Vec::new());

pub(crate) fn register_name(serial: u64, id: &CpuDomainId) {
    NAMES.lock().push((serial, id.clone()));
}

pub(crate) fn unregister_name(serial: u64) {
    NAMES.lock().retain(|(s, _)| *s != serial);
}

fn name_of(serial: u64) -> CpuDomainId {
    NAMES
        .lock()
        .iter()
        .find(|(s, _)| *s == serial)
        .map_or_else(|| CpuDomainId::new(format!("<dropped domain #{serial}>")), |(_, id)| id.clone())
}

/// Marks the current thread as inside `serial`'s execution until dropped, then restores
/// the previous mark (so panics and nesting leave the thread as they found it).
struct ActiveMark {
    previous: u64,
    _not_send: PhantomData<*const ()>,
}

impl ActiveMark {
    fn set(serial: u64) -> ActiveMark {
        ActiveMark { previous: ACTIVE.replace(serial), _not_send: PhantomData }
    }
}

impl Drop for ActiveMark {
    fn drop(&mut self) {
        ACTIVE.set(self.previous);
    }
}

/// Whether the calling thread is inside some domain's execution.
pub fn inside_domain_execution() -> bool {
    ACTIVE.get() != 0
}

/// How an entry is admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EntryKind {
    /// The domain's admission (a permit for its CPU set, or none when caller-managed).
    Domain,
    /// An exclusive permit, for a provider whose own threads we cannot bound.
    Exclusive,
}

impl CpuDomain {
    fn refuse_nested_entry(&self) -> Result<(), EngineError> {
        let active = ACTIVE.get();
        if active != 0 {
            let active = if active == self.serial { self.parts.id.clone() } else { name_of(active) };
            return Err(EngineError::Reentrant { entered: self.parts.id.clone(), active });
        }
        // A worker of this domain's pool running work that bypassed the entry's executor.
        if self.parts.executor.current_thread_is_worker() {
            return Err(EngineError::Reentrant { entered: self.parts.id.clone(), active: self.parts.id.clone() });
        }
        Ok(())
    }

    fn admit(&self, kind: EntryKind, wait: WaitPolicy) -> Result<Option<ResourcePermit<'_>>, EngineError> {
        let exclusive = AdmissionRequest::Exclusive;
        let request = match (kind, &self.cpu_request) {
            (EntryKind::Exclusive, _) => &exclusive,
            (EntryKind::Domain, Some(request)) => request,
            (EntryKind::Domain, None) => return Ok(None),
        };
        self.parts
            .arbiter
            .get()
            .admit(request, Owner::CurrentThread, wait)
            .map(Some)
            .map_err(|source| EngineError::Admission { domain: self.parts.id.clone(), source })
    }

    fn enter_as(&self, kind: EntryKind, wait: WaitPolicy) -> Result<DomainEntry<'_>, EngineError> {
        self.refuse_nested_entry()?;
        let permit = self.admit(kind, wait)?;
        Ok(DomainEntry::new(self, permit, false))
    }

    /// Enters the domain: refuses nested entry, takes the arbiter permit for the domain's
    /// CPU set (cooperative admission; waits while overlapping work runs) or only the
    /// re-entrancy guard (caller-managed), and returns the RAII entry. Dropping the entry
    /// releases the permit.
    ///
    /// Errors: [`EngineError::Reentrant`] when called from inside a domain execution;
    /// [`EngineError::Admission`] when the arbiter refuses (for instance because this
    /// thread already holds one of its permits).
    pub fn enter(&self) -> Result<DomainEntry<'_>, EngineError> {
        self.enter_as(EntryKind::Domain, WaitPolicy::Indefinitely)
    }

    /// As [`CpuDomain::enter`], but refuses with [`EngineError::Admission`] instead of
    /// waiting when overlapping work holds the CPUs.
    pub fn try_enter(&self) -> Result<DomainEntry<'_>, EngineError> {
        self.enter_as(EntryKind::Domain, WaitPolicy::NoWait)
    }

    /// As [`CpuDomain::enter`], waiting at most `timeout`.
    pub fn enter_timeout(&self, timeout: Duration) -> Result<DomainEntry<'_>, EngineError> {
        self.enter_as(EntryKind::Domain, WaitPolicy::Timeout(timeout))
    }

    /// Enters under an exclusive permit (conflicts with every other permit of the
    /// arbiter): for an operation whose parallelism a provider owns with threads strata
    /// cannot bound, such as OpenBLAS's process-wide team.
    pub fn enter_exclusive(&self) -> Result<DomainEntry<'_>, EngineError> {
        self.enter_as(EntryKind::Exclusive, WaitPolicy::Indefinitely)
    }

    /// Whether work requested with `requested` may run inline on the calling thread.
    ///
    /// The rule: only `Auto` carries no placement contract, so only `Auto` work may skip
    /// the domain's workers. The backend uses [`CpuDomain::enter_inline`] for `Auto` work
    /// when the domain's budget is 1 (a pool hop buys nothing) or the operation is too
    /// small to be worth splitting. Explicit placements always run on the domain's workers.
    pub fn allows_inline(&self, requested: &CpuPlacement) -> bool {
        matches!(requested, CpuPlacement::Auto)
    }

    /// Enters the domain to run on the calling thread: no arbiter permit (single-thread
    /// work must not pass through shared admission), budget 1, an inline executor, and the
    /// domain's resources. Nested entry is refused as for [`CpuDomain::enter`].
    ///
    /// Errors: [`EngineError::InlineNotAllowed`] unless `requested` is `Auto`;
    /// [`EngineError::Reentrant`].
    pub fn enter_inline(&self, requested: &CpuPlacement) -> Result<DomainEntry<'_>, EngineError> {
        if !self.allows_inline(requested) {
            return Err(EngineError::InlineNotAllowed { domain: self.parts.id.clone() });
        }
        self.refuse_nested_entry()?;
        Ok(DomainEntry::new(self, None, true))
    }
}

/// The executor a [`DomainEntry`] hands out: the domain's executor, with every task
/// marked as part of this domain's execution so that entering from a worker is detected.
#[derive(Debug)]
struct EntryExecutor<'d> {
    domain: &'d CpuDomain,
    inline: bool,
}

impl CpuDomainExecutor for EntryExecutor<'_> {
    fn run(&self, job: &mut (dyn FnMut() + Send)) {
        if self.inline {
            return job();
        }
        let serial = self.domain.serial;
        self.domain.parts.executor.run(&mut || {
            let _mark = ActiveMark::set(serial);
            job()
        })
    }

    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) {
        if self.inline {
            return (0..n).for_each(body);
        }
        let serial = self.domain.serial;
        self.domain.parts.executor.for_each_index(n, &|i| {
            let _mark = ActiveMark::set(serial);
            body(i)
        })
    }

    fn capabilities(&self) -> ExecutorCapabilities {
        if self.inline { InlineExecutor.capabilities() } else { self.domain.parts.executor.capabilities() }
    }

    fn name(&self) -> std::borrow::Cow<'static, str> {
        if self.inline { InlineExecutor.name() } else { self.domain.parts.executor.name() }
    }

    fn current_thread_is_worker(&self) -> bool {
        !self.inline && self.domain.parts.executor.current_thread_is_worker()
    }
}

/// An admitted entry into a domain (RAII): gives the executor, the budget and the
/// resources; releases the permit and the re-entrancy mark when dropped. Not `Send`: the
/// mark and the permit belong to the entering thread.
#[derive(Debug)]
pub struct DomainEntry<'d> {
    executor: EntryExecutor<'d>,
    _mark: ActiveMark,
    // Dropped after `_mark` (fields drop in declaration order): the permit outlives the
    // execution it admits.
    permit: Option<ResourcePermit<'d>>,
}

impl std::fmt::Debug for ActiveMark {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ActiveMark")
    }
}

impl<'d> DomainEntry<'d> {
    fn new(domain: &'d CpuDomain, permit: Option<ResourcePermit<'d>>, inline: bool) -> DomainEntry<'d> {
        let mark = ActiveMark::set(domain.serial);
        DomainEntry { executor: EntryExecutor { domain, inline }, _mark: mark, permit }
    }

    /// The executor to run the domain's work on (inline when entered inline).
    pub fn executor(&self) -> &dyn CpuDomainExecutor {
        &self.executor
    }

    /// How many workers one operation may use (1 when entered inline).
    pub fn budget(&self) -> usize {
        if self.executor.inline { 1 } else { self.executor.domain.parts.budget }
    }

    /// The domain's resources (buffer pool, cache slots).
    pub fn resources(&self) -> &'d DomainResources {
        &self.executor.domain.parts.resources
    }

    /// The domain entered.
    pub fn domain(&self) -> &'d CpuDomain {
        self.executor.domain
    }

    /// Whether work runs inline on the entering thread.
    pub fn runs_inline(&self) -> bool {
        self.executor.inline
    }

    /// The arbiter permit held, if any (cooperative admission or exclusive entry).
    pub fn permit(&self) -> Option<&ResourcePermit<'d>> {
        self.permit.as_ref()
    }

    /// Runs `f` inside the domain (on one of its workers, or inline) and returns its
    /// result; nested Rayon calls inside `f` use the domain's threads.
    ///
    /// Errors: [`EngineError::ExecutorContract`] if the executor returned without
    /// running the job.
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> Result<R, EngineError> {
        let mut f = Some(f);
        let mut out = None;
        self.executor.run(&mut || {
            if let Some(f) = f.take() {
                out = Some(f());
            }
        });
        out.ok_or_else(|| EngineError::ExecutorContract {
            executor: format!("{:?}", self.executor.domain.parts.executor),
            reason: "run() returned without running the job".to_string(),
        })
    }
}
