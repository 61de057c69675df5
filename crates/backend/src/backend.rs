//! `CpuBackend`: the handle, its construction and placement.

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use strata_arbiter::ResourceArbiter;
use strata_engine::{
    CpuDomain, CpuDomainId, CpuPlacement, CpuPlacementGuarantee, DEFAULT_DOMAIN_POOL_CAP_BYTES, ExternalCpuDomain,
    ExternalDomainRegistry, ManagedDomainRegistry, RayonCpuDomainExecutor, ResolvedCpuPlacement, ThreadAffinity,
    platform_supports_pinning,
};
use strata_kernels::contraction::ContractionAnalysisCache;
use strata_kernels::indexing::IndexedPlanCache;
use strata_kernels::lru::CacheLimits;
use strata_provider::{CpuProviderBundle, DomainAdmission, DomainContract, DomainPlacement, ProviderKind};
use strata_topology::CpuTopology;

use crate::error::CpuBackendError;
use crate::profile::Profiler;

/// Where a backend's domains come from.
#[derive(Debug)]
pub(crate) enum Domains {
    /// Pinned pools strata builds: one for all allowed CPUs, one per NUMA node, lazily.
    Managed(ManagedDomainRegistry),
    /// Executors the caller registered.
    External(ExternalDomainRegistry),
}

/// State every handle derived from one construction shares: the topology, the domains,
/// cache and pool limits, and the profiler.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) topology: Arc<CpuTopology>,
    pub(crate) domains: Domains,
    pub(crate) indexed_limits: Mutex<CacheLimits>,
    pub(crate) pool_cap_bytes: AtomicUsize,
    pub(crate) profiler: Profiler,
}

impl Shared {
    /// Every domain that exists now (managed domains not yet built are not listed).
    pub(crate) fn live_domains(&self) -> Vec<Arc<CpuDomain>> {
        match &self.domains {
            Domains::Managed(r) => r.built_domains(),
            Domains::External(r) => r.domains().to_vec(),
        }
    }

    /// Applies the shared limits to a domain met for the first time.
    fn adopt(&self, domain: &CpuDomain) {
        let cap = self.pool_cap_bytes.load(Ordering::Relaxed);
        let pool = domain.resources().buffer_pool();
        if pool.cap_bytes() != cap {
            pool.set_cap_bytes(cap);
        }
        if let Some(cache) = domain.resources().get::<IndexedPlanCache>() {
            cache.set_limits(*self.indexed_limits.lock());
        }
    }

    fn domain_for(&self, placement: &CpuPlacement) -> Result<Arc<CpuDomain>, CpuBackendError> {
        let domain = match &self.domains {
            Domains::Managed(r) => r.domain(placement)?,
            Domains::External(r) => Arc::clone(r.domain_for(placement)?),
        };
        self.adopt(&domain);
        Ok(domain)
    }

    /// Checks `bundle` against every domain this backend may serve, including managed
    /// NUMA domains not built yet (their contract is derived from their resolution).
    fn validate_bundle(&self, bundle: &CpuProviderBundle) -> Result<(), CpuBackendError> {
        match &self.domains {
            Domains::External(r) => {
                for d in r.domains() {
                    d.validate_provider_bundle(bundle)?;
                }
            }
            Domains::Managed(r) => {
                let mut placements = vec![CpuPlacement::Auto];
                placements.extend(self.topology.nodes().iter().map(|n| CpuPlacement::NumaNode(n.id())));
                for placement in placements {
                    // Placements this machine cannot serve at all are refused when asked for.
                    let Ok(resolution) = r.resolve(&placement) else { continue };
                    let label = match &resolution.resolved {
                        ResolvedCpuPlacement::AllAllowed { .. } => "all-allowed".to_string(),
                        ResolvedCpuPlacement::NumaNode { id, .. } => format!("numa{id}"),
                    };
                    let contract = DomainContract {
                        label: label.clone(),
                        thread_budget: r.thread_budget().min(resolution.resolved.cpus().len()),
                        placement: match resolution.guarantee {
                            CpuPlacementGuarantee::Exact => DomainPlacement::ExactPinned,
                            CpuPlacementGuarantee::Advisory => DomainPlacement::Advisory,
                        },
                        admission: DomainAdmission::CooperativeCpuSet,
                    };
                    bundle.validate_for_domain(&contract).map_err(|source| {
                        CpuBackendError::from(strata_engine::EngineError::ProviderBundle {
                            domain: CpuDomainId::new(label),
                            source,
                        })
                    })?;
                }
            }
        }
        Ok(())
    }
}

/// One handle's state: the shared part plus the placement, domain and bundle it serves.
#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) shared: Arc<Shared>,
    pub(crate) bundle: CpuProviderBundle,
    pub(crate) requested: CpuPlacement,
    pub(crate) domain: Arc<CpuDomain>,
    pub(crate) allocation: Arc<CpuDomain>,
    pub(crate) identity: u64,
    /// Only `Auto` work may run on the caller's thread (the engine's inline rule).
    pub(crate) inline_ok: bool,
    contraction: OnceLock<Arc<ContractionAnalysisCache>>,
    indexed: OnceLock<Arc<IndexedPlanCache>>,
}

/// Stands in for dtypes no GEMM provider serves (integers, bool): the contraction
/// kernels run those with their own loops and never call it.
static NO_GEMM_DTYPE: strata_provider::FaerGemmProvider = strata_provider::FaerGemmProvider;

impl Inner {
    /// The bundle's GEMM provider for `dtype`.
    #[inline]
    pub(crate) fn provider(&self, dtype: strata_tensor::DType) -> &dyn strata_provider::GemmProvider {
        match self.bundle.provider(dtype) {
            Some(p) => p.as_ref(),
            None => &NO_GEMM_DTYPE,
        }
    }

    /// The executing domain's contraction-analysis cache (created on first use).
    #[inline]
    pub(crate) fn contraction_cache(&self) -> &ContractionAnalysisCache {
        self.contraction.get_or_init(|| self.domain.resources().get_or_insert_with(ContractionAnalysisCache::default))
    }

    /// The executing domain's indexed-plan cache (created on first use with the shared
    /// limits).
    #[inline]
    pub(crate) fn indexed_cache(&self) -> &IndexedPlanCache {
        self.indexed.get_or_init(|| {
            let limits = *self.shared.indexed_limits.lock();
            self.domain.resources().get_or_insert_with(|| IndexedPlanCache::new(limits))
        })
    }
}

fn next_identity() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The CPU backend: a cheap clone handle onto a set of CPU domains, a provider bundle and
/// shared caches and limits. Every op of the op traits runs through it (see the crate
/// docs for the path of one op).
///
/// Clones share everything, including the runtime identity. [`CpuBackend::for_placement`],
/// [`CpuBackend::for_domain`] and [`CpuBackend::with_provider_bundle`] derive handles that
/// share the domains, pools and caches but serve another domain or bundle.
///
/// ```
/// use strata_backend::prelude::*;
/// let backend = CpuBackend::with_threads(1)?;
/// let a = TypedTensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2])?;
/// let b = TypedTensor::from_vec(vec![1.0f64, 0.0, 0.0, 1.0], &[2, 2])?;
/// let c = backend.matmul(&a, &b)?;
/// assert_eq!(c.as_typed::<f64>()?.data(), &[1.0, 2.0, 3.0, 4.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct CpuBackend {
    pub(crate) inner: Arc<Inner>,
}

impl fmt::Debug for CpuBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CpuBackend")
            .field("kind", &self.kind())
            .field("placement", &self.inner.requested)
            .field("domain", self.inner.domain.id())
            .field("budget", &self.inner.domain.budget())
            .field("runtime_identity", &self.inner.identity)
            .finish()
    }
}

/// Configures a [`CpuBackend`] over managed (pinned) domains: topology, thread budget,
/// provider, arbiter. The named constructors of [`CpuBackend`] are shorthands for it.
///
/// ```
/// use std::sync::Arc;
/// use strata_backend::{CpuBackend, CpuPlacement};
/// use strata_topology::{SyntheticTopology, TopologySource};
/// // A two-node fixture machine (workers are not pinned: its CPUs need not exist here).
/// let topo = Arc::new(SyntheticTopology::new(2, 2, 1)?.load()?);
/// let backend = CpuBackend::builder().topology(topo).threads(1).pinning(false).build()?;
/// assert_eq!(backend.num_threads(), 1);
/// assert!(!backend.supports_placement(&CpuPlacement::AllAllowed)); // needs pinning
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct CpuBackendBuilder {
    topology: Option<Arc<CpuTopology>>,
    threads: Option<usize>,
    kind: Option<ProviderKind>,
    bundle: Option<CpuProviderBundle>,
    arbiter: Option<Arc<ResourceArbiter>>,
    affinity: Option<Arc<dyn ThreadAffinity>>,
    pinning: Option<bool>,
    pool_cap_bytes: Option<usize>,
}

impl CpuBackendBuilder {
    /// The machine to place on (default: [`strata_topology::discover`]).
    pub fn topology(mut self, topology: Arc<CpuTopology>) -> Self {
        self.topology = Some(topology);
        self
    }

    /// The thread budget (default: the topology's, honouring affinity, cgroup quota and
    /// `RAYON_NUM_THREADS`).
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads);
        self
    }

    /// The provider kind (default [`ProviderKind::Faer`]); ignored when a bundle is given.
    pub fn kind(mut self, kind: ProviderKind) -> Self {
        self.kind = Some(kind);
        self
    }

    /// A provider bundle, validated against every domain at build.
    pub fn provider_bundle(mut self, bundle: CpuProviderBundle) -> Self {
        self.bundle = Some(bundle);
        self
    }

    /// Admits work through `arbiter` (default: the process-global arbiter, so separate
    /// backends never oversubscribe the same CPUs).
    pub fn arbiter(mut self, arbiter: Arc<ResourceArbiter>) -> Self {
        self.arbiter = Some(arbiter);
        self
    }

    /// Replaces the OS thread-affinity calls of the managed pools (tests on fixture
    /// machines use a double).
    pub fn thread_affinity(mut self, affinity: Arc<dyn ThreadAffinity>) -> Self {
        self.affinity = Some(affinity);
        self
    }

    /// Whether managed workers are pinned (default: on Linux). Off is the compatibility
    /// mode: only `Auto` placement, unpinned pools.
    pub fn pinning(mut self, pinning: bool) -> Self {
        self.pinning = Some(pinning);
        self
    }

    /// Retention cap of every domain's buffer pool (default
    /// [`DEFAULT_DOMAIN_POOL_CAP_BYTES`]).
    pub fn buffer_pool_limit(mut self, bytes: usize) -> Self {
        self.pool_cap_bytes = Some(bytes);
        self
    }

    /// Builds the backend serving `Auto` placement.
    ///
    /// Errors: [`CpuBackendError::Placement`] for a zero or too large thread budget, a
    /// malformed `RAYON_NUM_THREADS`, an undiscoverable topology or a pool that cannot
    /// start; [`CpuBackendError::Provider`] when the kind's bundle cannot be built; a
    /// `Placement` error wrapping the bundle's reason when it cannot serve a domain.
    pub fn build(self) -> Result<CpuBackend, CpuBackendError> {
        let topology = match self.topology {
            Some(t) => t,
            None => {
                Arc::new(strata_topology::discover().map_err(|source| strata_engine::EngineError::Topology { source })?)
            }
        };
        let pool_cap = self.pool_cap_bytes.unwrap_or(DEFAULT_DOMAIN_POOL_CAP_BYTES);
        let mut registry = ManagedDomainRegistry::builder(Arc::clone(&topology)).buffer_pool_cap_bytes(pool_cap);
        if let Some(threads) = self.threads {
            registry = registry.thread_budget(threads);
        }
        if let Some(arbiter) = self.arbiter {
            registry = registry.arbiter(arbiter);
        }
        if let Some(affinity) = self.affinity {
            registry = registry.affinity(affinity);
        }
        registry = registry.pinning(self.pinning.unwrap_or_else(platform_supports_pinning));
        let registry = registry.build()?;
        let bundle = match self.bundle {
            Some(b) => b,
            None => CpuProviderBundle::new(self.kind.unwrap_or(ProviderKind::Faer))?,
        };
        CpuBackend::assemble(topology, Domains::Managed(registry), bundle, pool_cap)
    }
}

impl CpuBackend {
    /// A builder for managed domains (fixture topologies, custom arbiter, ...).
    pub fn builder() -> CpuBackendBuilder {
        CpuBackendBuilder::default()
    }

    /// The default backend: the live topology, the default thread budget
    /// (min(allowed CPUs, ceil(cgroup quota)), or `RAYON_NUM_THREADS`), faer, `Auto`
    /// placement. Returns a `Result` rather than panicking: discovery and the
    /// environment can be wrong, and that is the caller's to report.
    ///
    /// Errors: see [`CpuBackendBuilder::build`].
    pub fn new() -> Result<Self, CpuBackendError> {
        Self::builder().build()
    }

    /// The same as [`CpuBackend::new`]; kept for callers that spell fallibility in the
    /// name.
    pub fn try_new() -> Result<Self, CpuBackendError> {
        Self::new()
    }

    /// A backend with a budget of `threads` workers per operation.
    ///
    /// Errors: [`CpuBackendError::Placement`] for 0 or more threads than allowed CPUs.
    pub fn with_threads(threads: usize) -> Result<Self, CpuBackendError> {
        Self::builder().threads(threads).build()
    }

    /// A backend whose GEMM provider bundle comes from `kind`'s defaults.
    ///
    /// Errors: [`CpuBackendError::Provider`] when the kind is not compiled in.
    pub fn with_kind(kind: ProviderKind) -> Result<Self, CpuBackendError> {
        Self::builder().kind(kind).build()
    }

    /// [`CpuBackend::with_threads`] and [`CpuBackend::with_kind`] together.
    pub fn with_threads_and_kind(threads: usize, kind: ProviderKind) -> Result<Self, CpuBackendError> {
        Self::builder().threads(threads).kind(kind).build()
    }

    /// A backend running on the caller's Rayon pool: one external, caller-managed domain
    /// serving `Auto` (id `rayon`), budget = the pool's thread count. strata never shuts
    /// the pool down.
    ///
    /// Errors: [`CpuBackendError::Placement`] when the topology cannot be discovered.
    pub fn from_rayon_pool(pool: Arc<rayon::ThreadPool>) -> Result<Self, CpuBackendError> {
        let domain =
            ExternalCpuDomain::caller_managed("rayon", CpuPlacement::Auto, Arc::new(RayonCpuDomainExecutor::new(pool)));
        Self::from_external_domains(CpuDomainId::new("rayon"), vec![domain])
    }

    /// A backend over the caller's external domains; `default_id` serves `Auto`.
    ///
    /// Errors: [`CpuBackendError::ExternalRegistry`] with the first violation (empty list,
    /// duplicate id or placement, CPUs outside the process mask, exact all-allowed not
    /// equal to the mask, bad budget, missing default).
    pub fn from_external_domains(
        default_id: CpuDomainId,
        domains: Vec<ExternalCpuDomain>,
    ) -> Result<Self, CpuBackendError> {
        Self::from_external_domains_with_bundle(default_id, domains, CpuProviderBundle::new(ProviderKind::Faer)?)
    }

    /// [`CpuBackend::from_external_domains`] with a provider bundle, validated against
    /// every domain.
    pub fn from_external_domains_with_bundle(
        default_id: CpuDomainId,
        domains: Vec<ExternalCpuDomain>,
        bundle: CpuProviderBundle,
    ) -> Result<Self, CpuBackendError> {
        let topology =
            Arc::new(strata_topology::discover().map_err(|source| strata_engine::EngineError::Topology { source })?);
        Self::from_external_domains_on(topology, default_id, domains, bundle)
    }

    /// [`CpuBackend::from_external_domains_with_bundle`] validated against `topology`'s
    /// allowed CPUs instead of the live process mask (fixture machines).
    pub fn from_external_domains_on(
        topology: Arc<CpuTopology>,
        default_id: CpuDomainId,
        domains: Vec<ExternalCpuDomain>,
        bundle: CpuProviderBundle,
    ) -> Result<Self, CpuBackendError> {
        let mut builder = ExternalDomainRegistry::builder(topology.allowed_cpus().clone()).default_domain(default_id);
        for d in domains {
            builder = builder.domain(d);
        }
        let registry = builder.build().map_err(|source| CpuBackendError::ExternalRegistry { source })?;
        let cap = registry.default_domain().resources().buffer_pool().cap_bytes();
        Self::assemble(topology, Domains::External(registry), bundle, cap)
    }

    fn assemble(
        topology: Arc<CpuTopology>,
        domains: Domains,
        bundle: CpuProviderBundle,
        pool_cap: usize,
    ) -> Result<Self, CpuBackendError> {
        let shared = Arc::new(Shared {
            topology,
            domains,
            indexed_limits: Mutex::new(IndexedPlanCache::DEFAULT_LIMITS),
            pool_cap_bytes: AtomicUsize::new(pool_cap),
            profiler: Profiler::from_env(),
        });
        shared.validate_bundle(&bundle)?;
        let domain = shared.domain_for(&CpuPlacement::Auto)?;
        Ok(Self::handle(shared, bundle, CpuPlacement::Auto, domain, None, next_identity()))
    }

    fn handle(
        shared: Arc<Shared>,
        bundle: CpuProviderBundle,
        requested: CpuPlacement,
        domain: Arc<CpuDomain>,
        allocation: Option<Arc<CpuDomain>>,
        identity: u64,
    ) -> Self {
        let allocation = allocation.unwrap_or_else(|| Arc::clone(&domain));
        CpuBackend {
            inner: Arc::new(Inner {
                shared,
                bundle,
                inline_ok: requested == CpuPlacement::Auto,
                requested,
                domain,
                allocation,
                identity,
                contraction: OnceLock::new(),
                indexed: OnceLock::new(),
            }),
        }
    }

    /// A handle serving `placement` (building its managed domain on first use), sharing
    /// this backend's domains, caches, limits and bundle. The runtime identity is kept
    /// when the domain is the same one, renewed otherwise.
    ///
    /// Errors: [`CpuBackendError::Placement`] for an unknown node, a placement this
    /// platform cannot pin, no external domain serving it, or a provider that cannot keep
    /// it.
    pub fn for_placement(&self, placement: CpuPlacement) -> Result<Self, CpuBackendError> {
        let shared = &self.inner.shared;
        if let Domains::Managed(r) = &shared.domains
            && let Some(caps) = self.inner.bundle.capabilities(strata_tensor::DType::F64)
        {
            r.resolve_for_provider(&placement, caps)?;
        }
        let domain = shared.domain_for(&placement)?;
        domain.validate_provider_bundle(&self.inner.bundle)?;
        Ok(self.rehome(placement, domain))
    }

    /// A handle on the domain with id `id` (an external domain, or a managed domain
    /// already built: `all-allowed`, `numa0`, ...), serving its placement.
    ///
    /// Errors: [`CpuBackendError::Placement`] with `NoDomainForPlacement` when no such
    /// domain exists.
    pub fn for_domain(&self, id: &CpuDomainId) -> Result<Self, CpuBackendError> {
        let domain = self.find_domain(id)?;
        Ok(self.rehome(domain.placement(), domain))
    }

    fn find_domain(&self, id: &CpuDomainId) -> Result<Arc<CpuDomain>, CpuBackendError> {
        let shared = &self.inner.shared;
        shared.live_domains().into_iter().find(|d| d.id() == id).ok_or_else(|| {
            strata_engine::EngineError::NoDomainForPlacement { placement: format!("domain id {id}") }.into()
        })
    }

    fn rehome(&self, requested: CpuPlacement, domain: Arc<CpuDomain>) -> Self {
        let same = Arc::ptr_eq(&domain, &self.inner.domain);
        let identity = if same { self.inner.identity } else { next_identity() };
        let allocation = if Arc::ptr_eq(&self.inner.allocation, &self.inner.domain) {
            None
        } else {
            Some(Arc::clone(&self.inner.allocation))
        };
        Self::handle(Arc::clone(&self.inner.shared), self.inner.bundle.clone(), requested, domain, allocation, identity)
    }

    /// A handle using `bundle` for GEMM, after validating it against every domain of this
    /// backend (managed NUMA domains not built yet included). New runtime identity.
    ///
    /// Errors: [`CpuBackendError::Placement`] wrapping the bundle's reason.
    pub fn with_provider_bundle(&self, bundle: CpuProviderBundle) -> Result<Self, CpuBackendError> {
        self.inner.shared.validate_bundle(&bundle)?;
        let mut handle = self.rehome(self.inner.requested, Arc::clone(&self.inner.domain));
        // INVARIANT: `rehome` returned a fresh, unshared `Inner`.
        if let Some(inner) = Arc::get_mut(&mut handle.inner) {
            inner.bundle = bundle;
            inner.identity = next_identity();
        }
        Ok(handle)
    }

    /// A handle whose buffers are returned to (and whose pool statistics come from) the
    /// domain `id`, while ops still execute on this handle's domain: for pipelines that
    /// keep their data in one node's memory. Clones and derived handles share the binding.
    ///
    /// Errors: [`CpuBackendError::Placement`] when no such domain exists.
    pub fn with_allocation_domain(&self, id: &CpuDomainId) -> Result<Self, CpuBackendError> {
        let allocation = self.find_domain(id)?;
        let mut handle = self.rehome(self.inner.requested, Arc::clone(&self.inner.domain));
        if let Some(inner) = Arc::get_mut(&mut handle.inner) {
            inner.allocation = allocation;
        }
        Ok(handle)
    }

    /// Whether [`CpuBackend::for_placement`] would succeed for `placement` (builds
    /// nothing).
    pub fn supports_placement(&self, placement: &CpuPlacement) -> bool {
        match &self.inner.shared.domains {
            Domains::Managed(r) => r.resolve(placement).is_ok(),
            Domains::External(r) => r.domain_for(placement).is_ok(),
        }
    }

    /// The placement this handle was asked for.
    pub fn placement(&self) -> CpuPlacement {
        self.inner.requested
    }

    /// The concrete CPUs it resolved to (`None` for a caller-managed external domain).
    pub fn resolved_placement(&self) -> Option<ResolvedCpuPlacement> {
        self.inner.domain.resolved_placement().cloned()
    }

    /// The machine as seen by this backend.
    pub fn topology(&self) -> &Arc<CpuTopology> {
        &self.inner.shared.topology
    }

    /// The provider kind of the bundle.
    pub fn kind(&self) -> ProviderKind {
        self.inner.bundle.kind()
    }

    /// The thread budget of one operation on this handle's domain.
    pub fn num_threads(&self) -> usize {
        self.inner.domain.budget()
    }

    /// The provider bundle.
    pub fn provider_bundle(&self) -> &CpuProviderBundle {
        &self.inner.bundle
    }

    /// A number naming this runtime configuration: equal across clones, new for each
    /// construction and whenever a derived handle changes domain or bundle. Caches keyed
    /// outside strata can use it to tell configurations apart.
    pub fn runtime_identity(&self) -> u64 {
        self.inner.identity
    }

    /// The domain that executes this handle's ops and so produced every tensor it
    /// returns. Outputs are plain tensors (no wrapper): their producing domain is this
    /// id, fixed for the handle's lifetime.
    pub fn producing_domain(&self) -> &CpuDomainId {
        self.inner.domain.id()
    }

    /// The domain whose pool receives recycled buffers (this handle's domain unless
    /// [`CpuBackend::with_allocation_domain`] bound another).
    pub fn allocation_domain(&self) -> &CpuDomainId {
        self.inner.allocation.id()
    }

    /// The domain itself, for callers that use the engine directly.
    pub fn domain(&self) -> &Arc<CpuDomain> {
        &self.inner.domain
    }
}
