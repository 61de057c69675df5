//! External domains: a caller's executor, declared CPUs (or caller-managed admission),
//! and the validated registry that serves placements from them.

use std::sync::Arc;

use strata_arbiter::ResourceArbiter;
use strata_pool::BufferPool;
use strata_topology::{CpuSet, CpuTopology, NumaNodeId};

use crate::domain::{ArbiterHandle, CpuDomain, CpuDomainId, DomainAdmission, DomainOwnership, DomainParts};
use crate::error::EngineError;
use crate::executor::CpuDomainExecutor;
use crate::placement::{CpuPlacement, CpuPlacementGuarantee, ResolvedCpuPlacement};
use crate::resources::DomainResources;

/// How an external domain is admitted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExternalAdmission {
    /// strata admits work with arbiter permits for the declared CPUs.
    Cooperative {
        /// The CPUs the caller's executor runs on.
        cpus: CpuSet,
        /// Whether the caller vouches that its workers are confined to exactly `cpus`.
        guarantee: CpuPlacementGuarantee,
    },
    /// The caller admits work itself; strata only guards against re-entry.
    CallerManaged,
}

/// A domain whose executor belongs to the caller, as registered in an
/// [`ExternalDomainRegistry`].
#[derive(Clone, Debug)]
pub struct ExternalCpuDomain {
    id: CpuDomainId,
    placement: CpuPlacement,
    admission: ExternalAdmission,
    executor: Arc<dyn CpuDomainExecutor>,
    budget: Option<usize>,
    pool: Option<BufferPool>,
}

impl ExternalCpuDomain {
    /// A domain serving `placement` on the caller's `executor`, admitted cooperatively
    /// for `cpus` with the given guarantee.
    pub fn cooperative(
        id: impl Into<CpuDomainId>,
        placement: CpuPlacement,
        cpus: CpuSet,
        guarantee: CpuPlacementGuarantee,
        executor: Arc<dyn CpuDomainExecutor>,
    ) -> Self {
        ExternalCpuDomain {
            id: id.into(),
            placement,
            admission: ExternalAdmission::Cooperative { cpus, guarantee },
            executor,
            budget: None,
            pool: None,
        }
    }

    /// A domain serving `placement` on the caller's `executor`, whose admission the
    /// caller manages (no CPU set; the placement is advisory).
    pub fn caller_managed(
        id: impl Into<CpuDomainId>,
        placement: CpuPlacement,
        executor: Arc<dyn CpuDomainExecutor>,
    ) -> Self {
        ExternalCpuDomain {
            id: id.into(),
            placement,
            admission: ExternalAdmission::CallerManaged,
            executor,
            budget: None,
            pool: None,
        }
    }

    /// Sets the thread budget (default: the executor's worker count, capped by the
    /// declared CPUs).
    pub fn with_budget(mut self, budget: usize) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Gives the domain this buffer pool (default: a fresh pool per domain retaining
    /// [`crate::DEFAULT_DOMAIN_POOL_CAP_BYTES`]).
    pub fn with_buffer_pool(mut self, pool: BufferPool) -> Self {
        self.pool = Some(pool);
        self
    }

    /// The domain's id.
    pub fn id(&self) -> &CpuDomainId {
        &self.id
    }

    /// The placement it serves.
    pub fn placement(&self) -> CpuPlacement {
        self.placement
    }

    /// Its admission.
    pub fn admission(&self) -> &ExternalAdmission {
        &self.admission
    }
}

/// Collects external domains and validates them into an [`ExternalDomainRegistry`].
///
/// ```
/// use std::sync::Arc;
/// use strata_engine::{CpuPlacement, CpuPlacementGuarantee, ExternalCpuDomain, ExternalDomainRegistry, InlineExecutor};
/// let mask: strata_topology::CpuSet = "0-3".parse().unwrap();
/// let registry = ExternalDomainRegistry::builder(mask.clone())
///     .domain(ExternalCpuDomain::cooperative("all", CpuPlacement::AllAllowed, mask,
///         CpuPlacementGuarantee::Advisory, Arc::new(InlineExecutor)))
///     .default_domain("all")
///     .build()
///     .unwrap();
/// assert_eq!(registry.default_domain().id().as_str(), "all");
/// ```
#[derive(Debug)]
pub struct ExternalDomainRegistryBuilder {
    process_mask: CpuSet,
    // The topology's usable nodes, when the registry was built against a topology.
    nodes: Option<Vec<(NumaNodeId, CpuSet)>>,
    domains: Vec<ExternalCpuDomain>,
    default: Option<CpuDomainId>,
    arbiter: Option<Arc<ResourceArbiter>>,
}

impl ExternalDomainRegistryBuilder {
    /// Adds a domain.
    pub fn domain(mut self, domain: ExternalCpuDomain) -> Self {
        self.domains.push(domain);
        self
    }

    /// Names the domain that serves `Auto` and unspecified requests.
    pub fn default_domain(mut self, id: impl Into<CpuDomainId>) -> Self {
        self.default = Some(id.into());
        self
    }

    /// Admits cooperative domains through `arbiter` (default: the process-global one).
    pub fn arbiter(mut self, arbiter: Arc<ResourceArbiter>) -> Self {
        self.arbiter = Some(arbiter);
        self
    }

    /// Validates and builds. One typed error per violation, checked in this order:
    /// [`EngineError::EmptyRegistry`], then per domain in registration order
    /// [`EngineError::DuplicateDomainId`], [`EngineError::DuplicatePlacement`],
    /// [`EngineError::CpusOutsideMask`], [`EngineError::ExactAllAllowedMismatch`],
    /// (with a topology) [`EngineError::UnknownNumaNode`] / [`EngineError::ExactNodeMismatch`],
    /// [`EngineError::ZeroBudget`] / [`EngineError::BudgetExceedsCpus`], and finally
    /// [`EngineError::MissingDefault`].
    pub fn build(self) -> Result<ExternalDomainRegistry, EngineError> {
        if self.domains.is_empty() {
            return Err(EngineError::EmptyRegistry);
        }
        for (i, d) in self.domains.iter().enumerate() {
            let earlier = &self.domains[..i];
            if earlier.iter().any(|e| e.id == d.id) {
                return Err(EngineError::DuplicateDomainId { id: d.id.clone() });
            }
            if let Some(first) = earlier.iter().find(|e| e.placement == d.placement) {
                return Err(EngineError::DuplicatePlacement {
                    placement: d.placement.to_string(),
                    first: first.id.clone(),
                    second: d.id.clone(),
                });
            }
            validate_declared(d, &self.process_mask)?;
            if let Some(nodes) = &self.nodes {
                validate_node(d, nodes)?;
            }
        }
        let default = match &self.default {
            Some(id) => self.domains.iter().position(|d| &d.id == id),
            None => None,
        }
        .ok_or_else(|| EngineError::MissingDefault { requested: self.default.clone() })?;
        let arbiter = ArbiterHandle::from_option(self.arbiter);
        let domains = self.domains.into_iter().map(|d| into_domain(d, &arbiter)).collect();
        Ok(ExternalDomainRegistry { domains, default })
    }
}

/// With a topology: a node placement names a usable node, and an exact node domain
/// declares exactly that node's allowed CPUs.
fn validate_node(d: &ExternalCpuDomain, nodes: &[(NumaNodeId, CpuSet)]) -> Result<(), EngineError> {
    let CpuPlacement::NumaNode(node) = d.placement else {
        return Ok(());
    };
    let Some((_, node_cpus)) = nodes.iter().find(|(n, _)| *n == node) else {
        return Err(EngineError::UnknownNumaNode {
            node,
            available: nodes.iter().map(|(n, _)| n.to_string()).collect::<Vec<_>>().join(", "),
        });
    };
    if let ExternalAdmission::Cooperative { cpus, guarantee: CpuPlacementGuarantee::Exact } = &d.admission
        && cpus != node_cpus
    {
        return Err(EngineError::ExactNodeMismatch {
            id: d.id.clone(),
            node,
            declared: cpus.clone(),
            node_cpus: node_cpus.clone(),
        });
    }
    Ok(())
}

fn validate_declared(d: &ExternalCpuDomain, mask: &CpuSet) -> Result<(), EngineError> {
    let cpu_count = match &d.admission {
        ExternalAdmission::Cooperative { cpus, guarantee } => {
            if let Some(outside) = cpus.difference(mask) {
                return Err(EngineError::CpusOutsideMask { outside, mask: mask.clone() });
            }
            if d.placement == CpuPlacement::AllAllowed && *guarantee == CpuPlacementGuarantee::Exact && cpus != mask {
                return Err(EngineError::ExactAllAllowedMismatch {
                    id: d.id.clone(),
                    declared: cpus.clone(),
                    mask: mask.clone(),
                });
            }
            Some(cpus.len())
        }
        ExternalAdmission::CallerManaged => None,
    };
    match (d.budget, cpu_count) {
        (Some(0), _) => Err(EngineError::ZeroBudget),
        (Some(budget), Some(cpus)) if budget > cpus => Err(EngineError::BudgetExceedsCpus { budget, cpus }),
        _ => Ok(()),
    }
}

fn into_domain(d: ExternalCpuDomain, arbiter: &ArbiterHandle) -> Arc<CpuDomain> {
    let workers = d.executor.capabilities().workers.max(1);
    let (cpus, guarantee, admission) = match d.admission {
        ExternalAdmission::Cooperative { cpus, guarantee } => {
            (Some(cpus), guarantee, DomainAdmission::CooperativeCpuSet)
        }
        ExternalAdmission::CallerManaged => (None, CpuPlacementGuarantee::Advisory, DomainAdmission::CallerManaged),
    };
    let budget = d.budget.unwrap_or_else(|| cpus.as_ref().map_or(workers, |c| workers.min(c.len())));
    let resolved = cpus.as_ref().map(|cpus| match d.placement {
        CpuPlacement::NumaNode(id) => ResolvedCpuPlacement::NumaNode { id, cpus: cpus.clone() },
        CpuPlacement::AllAllowed | CpuPlacement::Auto => ResolvedCpuPlacement::AllAllowed { cpus: cpus.clone() },
    });
    let pool = d.pool.unwrap_or_else(|| BufferPool::new(crate::resources::DEFAULT_DOMAIN_POOL_CAP_BYTES));
    CpuDomain::from_parts(DomainParts {
        id: d.id,
        requested: d.placement,
        placement: resolved,
        cpus,
        guarantee,
        budget,
        ownership: DomainOwnership::External,
        admission,
        executor: d.executor,
        resources: DomainResources::new(pool),
        arbiter: arbiter.clone(),
    })
}

/// A validated set of external domains, one per placement, with a default.
#[derive(Debug, Clone)]
pub struct ExternalDomainRegistry {
    domains: Vec<Arc<CpuDomain>>,
    default: usize,
}

impl ExternalDomainRegistry {
    /// A builder validating against the process affinity mask `process_mask`.
    pub fn builder(process_mask: CpuSet) -> ExternalDomainRegistryBuilder {
        ExternalDomainRegistryBuilder { process_mask, nodes: None, domains: Vec::new(), default: None, arbiter: None }
    }

    /// A builder validating against `topology`: its allowed CPUs are the mask, and node
    /// placements are checked against its nodes as well ([`EngineError::UnknownNumaNode`];
    /// [`EngineError::ExactNodeMismatch`] when an exact node domain declares other CPUs
    /// than the node's allowed ones).
    pub fn builder_for_topology(topology: &CpuTopology) -> ExternalDomainRegistryBuilder {
        ExternalDomainRegistryBuilder {
            process_mask: crate::topology_view::allowed_cpus(topology),
            nodes: Some(crate::topology_view::numa_nodes(topology).unwrap_or_default()),
            domains: Vec::new(),
            default: None,
            arbiter: None,
        }
    }

    /// The default domain (serves `Auto`).
    pub fn default_domain(&self) -> &Arc<CpuDomain> {
        // INVARIANT: `default` was checked to index `domains` in `build`.
        &self.domains[self.default]
    }

    /// The domain with this id.
    pub fn domain(&self, id: &CpuDomainId) -> Option<&Arc<CpuDomain>> {
        self.domains.iter().find(|d| d.id() == id)
    }

    /// The domain serving `placement`: the one registered for it, or for `Auto` (when no
    /// domain declared `Auto`) the default.
    ///
    /// Errors: [`EngineError::NoDomainForPlacement`].
    pub fn domain_for(&self, placement: &CpuPlacement) -> Result<&Arc<CpuDomain>, EngineError> {
        if let Some(d) = self.domains.iter().find(|d| d.placement() == *placement) {
            return Ok(d);
        }
        if *placement == CpuPlacement::Auto {
            return Ok(self.default_domain());
        }
        Err(EngineError::NoDomainForPlacement { placement: placement.to_string() })
    }

    /// Every domain, in registration order.
    pub fn domains(&self) -> &[Arc<CpuDomain>] {
        &self.domains
    }
}
