//! Managed domains: one per NUMA node and one for all allowed CPUs, each built on first
//! use (concurrent first uses build it once).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use parking_lot::Mutex;
use strata_arbiter::ResourceArbiter;
use strata_pool::BufferPool;
use strata_provider::ProviderCapabilities;
use strata_topology::{CpuTopology, NumaNodeId};

use crate::affinity::{SystemThreadAffinity, ThreadAffinity};
use crate::domain::{ArbiterHandle, CpuDomain, CpuDomainId, DomainAdmission, DomainOwnership, DomainParts};
use crate::error::EngineError;
use crate::executor::CpuDomainExecutor;
use crate::first_touch::FirstTouchPolicy;
use crate::managed::{DEFAULT_STARTUP_TIMEOUT, DEFAULT_WORKER_STACK_SIZE, ManagedCpuExecutor};
use crate::placement::{
    CpuPlacement, CpuPlacementGuarantee, PlacementResolution, ResolvedCpuPlacement, platform_supports_pinning,
    resolve_placement,
};
use crate::resources::{DEFAULT_DOMAIN_POOL_CAP_BYTES, DomainResources};
use crate::topology_view;

/// A domain built at most once, on first use.
#[derive(Debug, Default)]
struct LazyDomain {
    built: OnceLock<Arc<CpuDomain>>,
    // Serialises first builds so that concurrent first uses start one pool, not several.
    building: Mutex<()>,
}

impl LazyDomain {
    fn get_or_build(
        &self,
        build: impl FnOnce() -> Result<Arc<CpuDomain>, EngineError>,
    ) -> Result<Arc<CpuDomain>, EngineError> {
        if let Some(d) = self.built.get() {
            return Ok(Arc::clone(d));
        }
        let _building = self.building.lock();
        if let Some(d) = self.built.get() {
            return Ok(Arc::clone(d));
        }
        let domain = build()?;
        Ok(Arc::clone(self.built.get_or_init(|| domain)))
    }
}

/// Configures a [`ManagedDomainRegistry`].
#[derive(Debug, Clone)]
pub struct ManagedDomainRegistryBuilder {
    topology: Arc<CpuTopology>,
    budget: Option<usize>,
    stack_size: usize,
    startup_timeout: Duration,
    thread_name_prefix: String,
    affinity: Arc<dyn ThreadAffinity>,
    arbiter: Option<Arc<ResourceArbiter>>,
    pool_cap_bytes: usize,
    pinning: bool,
}

impl ManagedDomainRegistryBuilder {
    /// Thread budget of the all-allowed domain (default: the topology's budget,
    /// min(allowed CPUs, ceil(cgroup quota))). Node domains use min(budget, node CPUs).
    pub fn thread_budget(mut self, budget: usize) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Worker stack size (default [`DEFAULT_WORKER_STACK_SIZE`]).
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = bytes;
        self
    }

    /// How long a pool build waits for its workers' pinning reports.
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    /// Worker names become `{prefix}-{domain}-{index}` (default prefix `strata`).
    pub fn thread_name_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.thread_name_prefix = prefix.into();
        self
    }

    /// Replaces the OS affinity calls (tests use a double).
    pub fn affinity(mut self, affinity: Arc<dyn ThreadAffinity>) -> Self {
        self.affinity = affinity;
        self
    }

    /// Admits work through `arbiter` (default: the process-global arbiter).
    pub fn arbiter(mut self, arbiter: Arc<ResourceArbiter>) -> Self {
        self.arbiter = Some(arbiter);
        self
    }

    /// Retention cap of each domain's buffer pool (default
    /// [`DEFAULT_DOMAIN_POOL_CAP_BYTES`]).
    pub fn buffer_pool_cap_bytes(mut self, bytes: usize) -> Self {
        self.pool_cap_bytes = bytes;
        self
    }

    /// Whether workers are pinned (default: [`platform_supports_pinning`]). Without
    /// pinning only `Auto` resolves, with an advisory guarantee.
    pub fn pinning(mut self, pinning: bool) -> Self {
        self.pinning = pinning;
        self
    }

    /// Validates the budget and builds the (still empty) registry.
    ///
    /// Errors: [`EngineError::ZeroBudget`], [`EngineError::BudgetExceedsCpus`] (more than
    /// the allowed CPUs), [`EngineError::Topology`] for a malformed `RAYON_NUM_THREADS`
    /// when no budget is given (a value above the CPU count is capped).
    pub fn build(self) -> Result<ManagedDomainRegistry, EngineError> {
        let allowed = topology_view::allowed_cpus(&self.topology).len();
        let budget = match self.budget {
            Some(0) => return Err(EngineError::ZeroBudget),
            Some(b) if b > allowed => return Err(EngineError::BudgetExceedsCpus { budget: b, cpus: allowed }),
            Some(b) => b,
            // An environment override above the CPU count is capped rather than refused:
            // RAYON_NUM_THREADS is often set for other pools of the same process.
            None => topology_view::default_budget(&self.topology)?.clamp(1, allowed),
        };
        let nodes = topology_view::numa_nodes(&self.topology)
            .unwrap_or_default()
            .into_iter()
            .map(|(id, _)| (id, LazyDomain::default()))
            .collect();
        Ok(ManagedDomainRegistry {
            arbiter: ArbiterHandle::from_option(self.arbiter.clone()),
            budget,
            nodes,
            all_allowed: LazyDomain::default(),
            settings: self,
        })
    }
}

/// Managed domains over one topology: one per NUMA node and one for all allowed CPUs,
/// each a pinned pool built on first use.
///
/// ```
/// use std::sync::Arc;
/// use strata_engine::{CpuPlacement, ManagedDomainRegistry};
/// let topo = Arc::new(strata_topology::discover().unwrap());
/// let registry = ManagedDomainRegistry::builder(topo).thread_budget(1).build().unwrap();
/// let domain = registry.domain(&CpuPlacement::Auto).unwrap();
/// let entry = domain.enter().unwrap();
/// let mut ran = false;
/// entry.executor().run(&mut || ran = true);
/// assert!(ran);
/// ```
#[derive(Debug)]
pub struct ManagedDomainRegistry {
    settings: ManagedDomainRegistryBuilder,
    arbiter: ArbiterHandle,
    budget: usize,
    nodes: Vec<(NumaNodeId, LazyDomain)>,
    all_allowed: LazyDomain,
}

impl ManagedDomainRegistry {
    /// A builder over `topology`.
    pub fn builder(topology: Arc<CpuTopology>) -> ManagedDomainRegistryBuilder {
        ManagedDomainRegistryBuilder {
            topology,
            budget: None,
            stack_size: DEFAULT_WORKER_STACK_SIZE,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            thread_name_prefix: "strata".to_string(),
            affinity: Arc::new(SystemThreadAffinity),
            arbiter: None,
            pool_cap_bytes: DEFAULT_DOMAIN_POOL_CAP_BYTES,
            pinning: platform_supports_pinning(),
        }
    }

    /// The topology the domains are placed on.
    pub fn topology(&self) -> &Arc<CpuTopology> {
        &self.settings.topology
    }

    /// The all-allowed domain's budget.
    pub fn thread_budget(&self) -> usize {
        self.budget
    }

    /// The arbiter admitting work onto these domains.
    pub fn arbiter(&self) -> &ResourceArbiter {
        self.arbiter.get()
    }

    /// Resolves `placement` against this registry's topology (nothing is built).
    pub fn resolve(&self, placement: &CpuPlacement) -> Result<PlacementResolution, EngineError> {
        resolve_placement(&self.settings.topology, placement, self.settings.pinning)
    }

    /// Resolves `placement` and checks that a provider with `capabilities` can keep it
    /// on the domain that would serve it (see [`PlacementResolution::check_provider`]).
    ///
    /// Errors: those of [`resolve_placement`], and [`EngineError::ProviderCannotHonour`].
    pub fn resolve_for_provider(
        &self,
        placement: &CpuPlacement,
        capabilities: &ProviderCapabilities,
    ) -> Result<PlacementResolution, EngineError> {
        let resolution = self.resolve(placement)?;
        resolution.check_provider(capabilities, self.budget.min(resolution.resolved.cpus().len()))?;
        Ok(resolution)
    }

    /// The domain serving `placement`, building it on first use. `Auto` and `AllAllowed`
    /// share the all-allowed domain.
    ///
    /// Errors: those of [`resolve_placement`] and of building the pool
    /// ([`ManagedCpuExecutor`]'s pinning checks). A failed build is not remembered: the
    /// next call tries again.
    pub fn domain(&self, placement: &CpuPlacement) -> Result<Arc<CpuDomain>, EngineError> {
        if let Some(built) = self.already_built(placement) {
            return Ok(built);
        }
        let resolution = self.resolve(placement)?;
        let slot = match &resolution.resolved {
            ResolvedCpuPlacement::AllAllowed { .. } => &self.all_allowed,
            // Resolution only yields nodes the topology lists and `nodes` holds one slot per
            // listed node; should the two ever disagree, the caller still gets a typed error.
            ResolvedCpuPlacement::NumaNode { id, .. } => match self.nodes.iter().find(|(n, _)| n == id) {
                Some((_, slot)) => slot,
                None => return Err(EngineError::UnknownNumaNode { node: *id, available: self.node_list() }),
            },
        };
        slot.get_or_build(|| self.build_domain(resolution))
    }

    /// The domains built so far (all-allowed first, then nodes in topology order).
    pub fn built_domains(&self) -> Vec<Arc<CpuDomain>> {
        self.all_allowed
            .built
            .get()
            .into_iter()
            .chain(self.nodes.iter().filter_map(|(_, s)| s.built.get()))
            .cloned()
            .collect()
    }

    /// The built domain for `placement` when resolving it again could not fail (the
    /// lookup that every operation after the first takes: no CPU set is cloned).
    fn already_built(&self, placement: &CpuPlacement) -> Option<Arc<CpuDomain>> {
        let slot = match placement {
            CpuPlacement::Auto => &self.all_allowed,
            CpuPlacement::AllAllowed if self.settings.pinning => &self.all_allowed,
            CpuPlacement::NumaNode(id) if self.settings.pinning => &self.nodes.iter().find(|(n, _)| n == id)?.1,
            _ => return None,
        };
        slot.built.get().cloned()
    }

    fn node_list(&self) -> String {
        self.nodes.iter().map(|(n, _)| n.to_string()).collect::<Vec<_>>().join(", ")
    }

    fn build_domain(&self, resolution: PlacementResolution) -> Result<Arc<CpuDomain>, EngineError> {
        let s = &self.settings;
        let cpus = resolution.resolved.cpus().clone();
        let (id, node) = match &resolution.resolved {
            ResolvedCpuPlacement::AllAllowed { .. } => (CpuDomainId::new("all-allowed"), None),
            ResolvedCpuPlacement::NumaNode { id, .. } => (CpuDomainId::new(format!("numa{id}")), Some(*id)),
        };
        let budget = self.budget.min(cpus.len());
        let pinned = resolution.guarantee == CpuPlacementGuarantee::Exact;
        let executor = ManagedCpuExecutor::builder(cpus.clone(), budget)
            .thread_name_prefix(format!("{}-{}", s.thread_name_prefix, id))
            .stack_size(s.stack_size)
            .startup_timeout(s.startup_timeout)
            .affinity(Arc::clone(&s.affinity))
            .pinning(pinned)
            .build()?;
        let executor: Arc<dyn CpuDomainExecutor> = Arc::new(executor);
        let pool = match node {
            Some(node) => BufferPool::on_node(
                s.pool_cap_bytes,
                node.0 as usize,
                Arc::new(FirstTouchPolicy::new(Arc::clone(&executor))),
            ),
            None => BufferPool::new(s.pool_cap_bytes),
        };
        Ok(CpuDomain::from_parts(DomainParts {
            id,
            requested: resolution.resolved.as_request(),
            placement: Some(resolution.resolved),
            cpus: Some(cpus),
            guarantee: resolution.guarantee,
            budget,
            ownership: DomainOwnership::Managed,
            admission: DomainAdmission::CooperativeCpuSet,
            executor,
            resources: DomainResources::new(pool),
            arbiter: self.arbiter.clone(),
        }))
    }
}
