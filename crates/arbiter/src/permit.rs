//! The RAII permit.

use std::fmt;
use std::marker::PhantomData;

use strata_topology::{CpuId, CpuSet};

use crate::arbiter::ResourceArbiter;
use crate::owner::{self, OwnerToken};

/// Proof of admission. Dropping it releases the CPUs (also during a panic's unwinding).
///
/// A permit is neither `Send` nor `Sync`: it stays on the thread that acquired it. The
/// thread's re-entrancy record lives in a thread-local, so a permit released from another
/// thread would leave the acquiring thread marked as a holder, and the receiving thread
/// could wait on CPUs it holds itself. Work that must span threads shares an
/// [`OwnerToken`] instead and keeps the permit with the parent.
///
/// Leaking a permit (`std::mem::forget`) keeps its CPUs held for the arbiter's lifetime
/// and leaves the thread (and token) marked as holders.
///
/// The compiler enforces this: a permit cannot be sent to another thread
///
/// ```compile_fail
/// fn assert_send<T: Send>() {}
/// assert_send::<strata_arbiter::ResourcePermit<'static>>();
/// ```
///
/// nor shared between threads:
///
/// ```compile_fail
/// fn assert_sync<T: Sync>() {}
/// assert_sync::<strata_arbiter::ResourcePermit<'static>>();
/// ```
///
/// while the arbiter and the token can:
///
/// ```
/// fn assert_send_sync<T: Send + Sync>() {}
/// assert_send_sync::<strata_arbiter::ResourceArbiter>();
/// assert_send_sync::<strata_arbiter::OwnerToken>();
/// ```
#[must_use = "the CPUs are released as soon as the permit is dropped"]
pub struct ResourcePermit<'a> {
    arbiter: &'a ResourceArbiter,
    held: Held,
    token: Option<&'a OwnerToken>,
    _stay_on_thread: PhantomData<*const ()>,
}

/// What a permit holds. A single CPU is kept by value so that the budget-1 fast path
/// touches no reference count.
#[derive(Debug)]
pub(crate) enum Held {
    Cpu(CpuId),
    Cpus(CpuSet),
    Exclusive,
}

impl<'a> ResourcePermit<'a> {
    pub(crate) fn new(arbiter: &'a ResourceArbiter, held: Held, token: Option<&'a OwnerToken>) -> ResourcePermit<'a> {
        ResourcePermit { arbiter, held, token, _stay_on_thread: PhantomData }
    }

    /// The CPUs held, ascending; empty for an exclusive permit (which holds every CPU).
    pub fn cpu_ids(&self) -> &[CpuId] {
        match &self.held {
            Held::Cpu(cpu) => std::slice::from_ref(cpu),
            Held::Cpus(set) => set.as_slice(),
            Held::Exclusive => &[],
        }
    }

    /// Whether the permit covers `cpu` (always, for an exclusive permit).
    pub fn covers(&self, cpu: CpuId) -> bool {
        match &self.held {
            Held::Cpu(held) => *held == cpu,
            Held::Cpus(set) => set.contains(cpu),
            Held::Exclusive => true,
        }
    }

    /// Whether this is an exclusive permit.
    pub fn is_exclusive(&self) -> bool {
        matches!(self.held, Held::Exclusive)
    }

    /// Releases the permit now (the same as dropping it).
    pub fn release(self) {}
}

impl Drop for ResourcePermit<'_> {
    #[inline]
    fn drop(&mut self) {
        // Forget the owner first: in between, a second request by the same owner waits
        // briefly instead of being refused as re-entrant.
        let id = self.arbiter.id();
        owner::thread_remove(id);
        if let Some(token) = self.token {
            token.unmark(id);
        }
        self.arbiter.release(&self.held);
    }
}

impl fmt::Debug for ResourcePermit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourcePermit")
            .field("held", &self.held)
            .field("token", &self.token.map(OwnerToken::id))
            .finish()
    }
}
