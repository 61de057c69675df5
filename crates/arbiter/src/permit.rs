//! The RAII permit.

use std::fmt;
use std::marker::PhantomData;

use strata_topology::CpuSet;

use crate::arbiter::ResourceArbiter;
use crate::owner::{self, OwnerToken};
use crate::request::AdmissionRequest;

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
    request: AdmissionRequest,
    token: Option<&'a OwnerToken>,
    _stay_on_thread: PhantomData<*const ()>,
}

impl<'a> ResourcePermit<'a> {
    pub(crate) fn new(
        arbiter: &'a ResourceArbiter,
        request: AdmissionRequest,
        token: Option<&'a OwnerToken>,
    ) -> ResourcePermit<'a> {
        ResourcePermit {
            arbiter,
            request,
            token,
            _stay_on_thread: PhantomData,
        }
    }

    /// What this permit admits.
    pub fn request(&self) -> &AdmissionRequest {
        &self.request
    }

    /// The CPUs held, or `None` for an exclusive permit (which holds every CPU).
    pub fn cpus(&self) -> Option<&CpuSet> {
        self.request.cpus()
    }

    /// Whether this is an exclusive permit.
    pub fn is_exclusive(&self) -> bool {
        matches!(self.request, AdmissionRequest::Exclusive)
    }

    /// Releases the permit now (the same as dropping it).
    pub fn release(self) {}
}

impl Drop for ResourcePermit<'_> {
    fn drop(&mut self) {
        // Forget the owner first: in between, a second request by the same owner waits
        // briefly instead of being refused as re-entrant.
        let id = self.arbiter.id();
        owner::thread_remove(id);
        if let Some(token) = self.token {
            token.unmark(id);
        }
        self.arbiter.release(&self.request);
    }
}

impl fmt::Debug for ResourcePermit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourcePermit")
            .field("request", &self.request)
            .field("token", &self.token.map(OwnerToken::id))
            .finish()
    }
}
