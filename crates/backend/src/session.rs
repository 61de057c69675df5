//! Running work: the per-op entry, `install`, and sessions.

use std::fmt;

use strata_engine::{CpuDomainId, CpuPlacement, DomainEntry, EngineError};
use strata_kernels::{KernelContext, Parallelism, ScheduleAudit};
use strata_tensor::{Error, Result};

use crate::backend::{CpuBackend, Inner};
use crate::error::CpuBackendError;

/// Below this many elements touched (contractions: plus their multiply-adds) an `Auto`
/// op runs inline on the calling thread: entering the domain wakes its workers, which
/// costs tens of microseconds on a virtual machine (measured at 2 threads: a 64 Ki f64
/// sum at 18.6 GB/s through the domain against 76 inline; a 1 Mi sum at 80 through the
/// domain against 62 inline).
pub(crate) const INLINE_WORK: usize = 1 << 20;

fn entry_error(op: &'static str, e: EngineError) -> Error {
    Error::from(e).in_op(op)
}

/// Runs one kernel in an entry: inside the executor when the entry runs operations on
/// the domain's workers (so every part of the op, sequential ones included, runs on the
/// domain's threads), else on this thread; then checks the fork-join audit.
#[inline]
fn run_in_entry<R: Send>(
    entry: &DomainEntry<'_>,
    op: &'static str,
    ctx: &KernelContext<'_>,
    audit: &ScheduleAudit,
    inner: &Inner,
    kernel: impl FnOnce(&KernelContext<'_>, &Inner) -> Result<R> + Send,
) -> Result<R> {
    let out = if entry.runs_operations_on_workers() {
        entry.install(|| kernel(ctx, inner)).map_err(|e| entry_error(op, e)).and_then(|r| r)
    } else {
        kernel(ctx, inner)
    };
    // A broken fork-join schedule invalidates the output whatever the kernel returned,
    // and is the root cause of any failure the kernel saw after it.
    audit.check(op)?;
    // Errors name the op the user called, not a helper the kernel reached it through
    // (`to_contiguous` inside `transpose`, `dot_general` inside `dot_general_into`).
    out.map_err(|e| e.in_op(op))
}

impl CpuBackend {
    /// Runs one op: enters the domain (inline for small `Auto` work or a budget of 1,
    /// else with the domain's admission and executor), builds the kernel context (the
    /// entry's executor and budget, outputs from the allocation domain's pool), runs
    /// `kernel` (inside the executor unless inline), records the profile if on.
    #[inline]
    pub(crate) fn run<R: Send>(
        &self,
        op: &'static str,
        work: usize,
        kernel: impl FnOnce(&KernelContext<'_>, &Inner) -> Result<R> + Send,
    ) -> Result<R> {
        let inner = &*self.inner;
        let domain = &*inner.domain;
        let started = inner.shared.profiler.start();
        let entry = if inner.inline_ok && (domain.budget() == 1 || work < INLINE_WORK) {
            domain.enter_inline(&CpuPlacement::Auto)
        } else {
            domain.enter()
        }
        .map_err(|e| entry_error(op, e))?;
        let pool = inner.allocation.resources().buffer_pool();
        let audit = ScheduleAudit::new();
        let ctx = KernelContext::new(Parallelism::new(entry.executor(), entry.budget(), &audit)).with_pool(pool);
        let out = run_in_entry(&entry, op, &ctx, &audit, inner, kernel);
        drop(entry);
        if let Some(t) = started {
            inner.shared.profiler.record(op, t);
        }
        out
    }

    /// Runs `f` inside this handle's domain, on one of its workers (or the calling thread
    /// for an inline executor): Rayon calls inside `f` use the domain's threads.
    ///
    /// Ops of this backend called from inside `f` are refused with a `RuntimeState`
    /// error (re-entry would wait on the admission `f` holds); use a session to run many
    /// ops under one admission. A panic in `f` propagates to the caller after the
    /// domain's permit is released; the backend stays usable.
    ///
    /// Errors: [`CpuBackendError::Placement`] when called from inside a domain execution
    /// (an op, a session or another `install`) or when the executor breaks its contract.
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> Result<R, CpuBackendError> {
        let started = self.inner.shared.profiler.start();
        let entry = self.inner.domain.enter()?;
        let out = entry.install(f)?;
        drop(entry);
        if let Some(t) = started {
            self.inner.shared.profiler.record("install", t);
        }
        Ok(out)
    }

    /// Runs `f` with a [`CpuSession`]: admission, executor and caches are taken once and
    /// held until `f` returns, so each op in it costs only its dispatch. The session
    /// offers the same op traits as the backend. For `Auto` placement on a budget-1
    /// domain the session runs inline without a permit; otherwise it holds the domain's
    /// permit (overlapping work elsewhere waits until the session ends).
    ///
    /// A panic in `f` releases the admission and propagates; the backend stays usable.
    ///
    /// Errors: [`CpuBackendError::Placement`] when called from inside a domain execution.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::with_threads(1)?;
    /// let x = TypedTensor::from_vec(vec![3.0f32, 4.0], &[2])?;
    /// let n = backend.with_session(|s| s.norm_squared(&x))??;
    /// assert_eq!(n.as_typed::<f32>()?.data(), &[25.0]);
    /// // Re-entry from inside a session is a typed error, not a deadlock.
    /// let nested = backend.with_session(|_| backend.norm_squared(&x))?;
    /// assert_eq!(nested.unwrap_err().kind(), ErrorKind::RuntimeState);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_session<R>(&self, f: impl FnOnce(&CpuSession<'_>) -> R) -> Result<R, CpuBackendError> {
        let inner = &*self.inner;
        let domain = &*inner.domain;
        let entry = if inner.inline_ok && domain.budget() == 1 {
            domain.enter_inline(&CpuPlacement::Auto)?
        } else {
            domain.enter()?
        };
        let session = CpuSession { inner, entry };
        Ok(f(&session))
    }

    /// [`CpuBackend::with_session`] for a closure that returns a `Result`: one `Result`
    /// comes back, holding the closure's error or the admission error (converted with
    /// `From`, as `?` would), so ops inside use `?` and the call ends in one `?`.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![3.0f32, 4.0], &[2])?;
    /// let n = backend.session(|s| {
    ///     let doubled = s.add(&x, &x)?;
    ///     s.norm_squared(&doubled)
    /// })?;
    /// assert_eq!(n.to_scalar::<f32>()?, 100.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn session<R, E>(&self, f: impl FnOnce(&CpuSession<'_>) -> Result<R, E>) -> Result<R, E>
    where
        E: From<CpuBackendError>,
    {
        self.with_session(f).map_err(E::from)?
    }
}

/// A held admission onto one domain: run many ops with the same op traits as
/// [`CpuBackend`], each paying only its dispatch. Created by [`CpuBackend::with_session`];
/// tied to the entering thread (neither `Send` nor `Sync`).
pub struct CpuSession<'b> {
    inner: &'b Inner,
    entry: DomainEntry<'b>,
}

impl fmt::Debug for CpuSession<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CpuSession")
            .field("domain", self.inner.domain.id())
            .field("inline", &self.entry.runs_inline())
            .field("budget", &self.entry.budget())
            .finish()
    }
}

impl CpuSession<'_> {
    #[inline]
    pub(crate) fn run<R: Send>(
        &self,
        op: &'static str,
        work: usize,
        kernel: impl FnOnce(&KernelContext<'_>, &Inner) -> Result<R> + Send,
    ) -> Result<R> {
        let started = self.inner.shared.profiler.start();
        let pool = self.inner.allocation.resources().buffer_pool();
        let audit = ScheduleAudit::new();
        // The plain call's inline rule, per op: small `Auto` work runs on the calling
        // thread with a budget of 1 (never forking), as it would outside the session; a
        // hop to a worker and back costs tens of microseconds when the workers sleep
        // (measured: 31.6 us per 4-element add at 2 threads, 0.16 us inline).
        let out = if self.inner.inline_ok && work < INLINE_WORK {
            let ctx = KernelContext::new(Parallelism::new(self.entry.executor(), 1, &audit)).with_pool(pool);
            let out = kernel(&ctx, self.inner);
            audit.check(op).and_then(|()| out.map_err(|e| e.in_op(op)))
        } else {
            let ctx = KernelContext::new(Parallelism::new(self.entry.executor(), self.entry.budget(), &audit))
                .with_pool(pool);
            run_in_entry(&self.entry, op, &ctx, &audit, self.inner, kernel)
        };
        if let Some(t) = started {
            self.inner.shared.profiler.record(op, t);
        }
        out
    }

    pub(crate) fn inner_ref(&self) -> &Inner {
        self.inner
    }

    /// The domain executing the session's ops (and so producing its outputs).
    pub fn producing_domain(&self) -> &CpuDomainId {
        self.inner.domain.id()
    }

    /// The thread budget available to each op of the session (1 when inline).
    pub fn num_threads(&self) -> usize {
        self.entry.budget()
    }

    /// Whether the session's ops run on the calling thread.
    pub fn runs_inline(&self) -> bool {
        self.entry.runs_inline()
    }
}
