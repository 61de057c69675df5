//! strata as the suite measures it: one handle that runs an operation the way the facade
//! does (enter the CPU domain, hand the kernel its context, run it), so every case calls
//! strata through one door.
//!
//! Until `strata-backend`'s `CpuBackend` exposes an operation, this drives the layers under
//! it directly: a [`ManagedDomainRegistry`] domain (arbiter permit + pinned workers), a
//! [`KernelContext`] over the entry's executor and budget, and the provider bundle for
//! GEMM. Small operations take the inline entry (no permit, budget 1), as the facade's
//! inline rule prescribes.

use std::sync::Arc;

use strata_engine::{CpuDomain, CpuPlacement, DomainEntry, ManagedDomainRegistry};
use strata_kernels::{KernelContext, Parallelism};
use strata_provider::{BatchedGemm, CpuProviderBundle, GemmMatrix, GemmMatrixMut, GemmScalar, ProviderKind};

/// Elements below which an operation runs inline on the calling thread (splitting it
/// would cost more than it saves).
pub const INLINE_BELOW: usize = 1 << 15;

/// A strata CPU handle with a fixed thread budget.
pub struct Strata {
    // Keeps the domain's workers alive.
    _registry: ManagedDomainRegistry,
    domain: Arc<CpuDomain>,
    bundle: CpuProviderBundle,
    budget: usize,
}

impl Strata {
    /// strata's default thread budget on this machine (affinity ∩ quota, `RAYON_NUM_THREADS`).
    pub fn default_threads() -> Result<usize, String> {
        let topology = Arc::new(strata_topology::discover().map_err(|e| format!("topology: {e}"))?);
        let registry = ManagedDomainRegistry::builder(topology).build().map_err(|e| format!("registry: {e}"))?;
        Ok(registry.thread_budget())
    }

    /// A handle whose operations may use `threads` workers.
    pub fn with_threads(threads: usize) -> Result<Self, String> {
        let topology = Arc::new(strata_topology::discover().map_err(|e| format!("topology: {e}"))?);
        let registry = ManagedDomainRegistry::builder(topology)
            .thread_budget(threads)
            .build()
            .map_err(|e| format!("registry with {threads} threads: {e}"))?;
        let domain = registry.domain(&CpuPlacement::Auto).map_err(|e| format!("domain: {e}"))?;
        let bundle = CpuProviderBundle::new(ProviderKind::Faer).map_err(|e| format!("provider bundle: {e}"))?;
        let budget = registry.thread_budget();
        Ok(Strata { _registry: registry, domain, bundle, budget })
    }

    /// The thread budget operations may use.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Runs a kernel over `elements` elements the way the facade does: inline below
    /// [`INLINE_BELOW`] or when the budget is 1, otherwise under the domain's permit on
    /// its workers.
    pub fn run<R>(&self, elements: usize, kernel: impl FnOnce(&KernelContext<'_>) -> R) -> Result<R, String> {
        let entry = self.enter(elements)?;
        let ctx = KernelContext::new(Parallelism::new(entry.executor(), entry.budget()));
        Ok(kernel(&ctx))
    }

    /// Holds one entry of the domain across everything `body` does (what a facade session
    /// does: admission and resources taken once, each op then costs only its dispatch).
    pub fn session<R>(&self, elements: usize, body: impl FnOnce(&Session<'_>) -> R) -> Result<R, String> {
        let entry = self.enter(elements)?;
        Ok(body(&Session { entry }))
    }

    fn enter(&self, elements: usize) -> Result<DomainEntry<'_>, String> {
        if self.budget == 1 || elements < INLINE_BELOW {
            self.domain.enter_inline(&CpuPlacement::Auto)
        } else {
            self.domain.enter()
        }
        .map_err(|e| format!("entering the domain: {e}"))
    }

    /// Row-major `c = a · b` for square `n × n` matrices through the provider bundle,
    /// inside the domain so that the provider's threads are the domain's workers.
    pub fn gemm<T: GemmScalar>(&self, n: usize, a: &[T], b: &[T], c: &mut [T]) -> Result<(), String> {
        let mut job = BatchedGemm {
            batch: 1,
            m: n,
            n,
            k: n,
            alpha: T::one(),
            a: GemmMatrix::row_major(a, n, n),
            conj_a: false,
            b: GemmMatrix::row_major(b, n, n),
            conj_b: false,
            beta: T::zero(),
            c: GemmMatrixMut::row_major(c, n, n),
        };
        let entry = self.enter(n * n * n)?;
        let threads = entry.budget();
        let bundle = &self.bundle;
        entry
            .install(|| bundle.gemm(&mut job, threads))
            .map_err(|e| format!("gemm: {e}"))?
            .map_err(|e| format!("gemm: {e}"))
    }
}

/// An entry held across many operations.
pub struct Session<'s> {
    entry: DomainEntry<'s>,
}

impl Session<'_> {
    /// Runs one kernel under the held entry.
    pub fn run<R>(&self, kernel: impl FnOnce(&KernelContext<'_>) -> R) -> R {
        let ctx = KernelContext::new(Parallelism::new(self.entry.executor(), self.entry.budget()));
        kernel(&ctx)
    }
}
