//! A CPU domain: the unit that owns an executor, a CPU set, a thread budget, an admission
//! mode and per-domain resources.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use strata_arbiter::{AdmissionRequest, ResourceArbiter};
use strata_provider::{CpuProviderBundle, DomainAdmission as ProviderAdmission, DomainContract, DomainPlacement};
use strata_topology::CpuSet;

use crate::error::EngineError;
use crate::executor::CpuDomainExecutor;
use crate::placement::{CpuPlacement, CpuPlacementGuarantee, ResolvedCpuPlacement};
use crate::resources::DomainResources;

/// The name of a CPU domain, unique within a registry (cheap to clone).
///
/// ```
/// use strata_engine::CpuDomainId;
/// let id = CpuDomainId::new("numa0");
/// assert_eq!(id.as_str(), "numa0");
/// assert_eq!(id, CpuDomainId::from("numa0"));
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CpuDomainId(Arc<str>);

impl CpuDomainId {
    /// A domain id with the given name.
    pub fn new(name: impl AsRef<str>) -> Self {
        CpuDomainId(Arc::from(name.as_ref()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for CpuDomainId {
    fn from(name: &str) -> Self {
        CpuDomainId::new(name)
    }
}

impl fmt::Display for CpuDomainId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for CpuDomainId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CpuDomainId({:?})", &*self.0)
    }
}

/// Who owns a domain's threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DomainOwnership {
    /// strata built the executor (a pinned pool) and shuts it down.
    Managed,
    /// The caller supplied the executor and keeps its threads.
    External,
}

/// How work is admitted onto a domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DomainAdmission {
    /// Entering takes an arbiter permit for the domain's CPU set, so overlapping domains
    /// never run at once and disjoint ones do.
    CooperativeCpuSet,
    /// The caller manages admission; entering takes no permit (only the re-entrancy guard).
    CallerManaged,
}

/// The arbiter a domain admits through: the process-global one, or one the caller built.
#[derive(Clone)]
pub(crate) enum ArbiterHandle {
    Global,
    Owned(Arc<ResourceArbiter>),
}

impl ArbiterHandle {
    pub(crate) fn from_option(arbiter: Option<Arc<ResourceArbiter>>) -> Self {
        arbiter.map_or(ArbiterHandle::Global, ArbiterHandle::Owned)
    }

    pub(crate) fn get(&self) -> &ResourceArbiter {
        match self {
            ArbiterHandle::Global => ResourceArbiter::global(),
            ArbiterHandle::Owned(a) => a,
        }
    }
}

impl fmt::Debug for ArbiterHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArbiterHandle::Global => f.write_str("ArbiterHandle::Global"),
            ArbiterHandle::Owned(a) => write!(f, "ArbiterHandle::Owned({:p})", Arc::as_ptr(a)),
        }
    }
}

/// Process-unique serial of a domain instance: identifies "the domain whose execution is
/// in progress" in the re-entrancy marker without cloning names on the hot path.
pub(crate) fn next_domain_serial() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Everything a domain is made of; built by the registries.
pub(crate) struct DomainParts {
    pub(crate) id: CpuDomainId,
    pub(crate) requested: CpuPlacement,
    pub(crate) placement: Option<ResolvedCpuPlacement>,
    pub(crate) cpus: Option<CpuSet>,
    pub(crate) guarantee: CpuPlacementGuarantee,
    pub(crate) budget: usize,
    pub(crate) ownership: DomainOwnership,
    pub(crate) admission: DomainAdmission,
    pub(crate) executor: Arc<dyn CpuDomainExecutor>,
    pub(crate) resources: DomainResources,
    pub(crate) arbiter: ArbiterHandle,
}

/// A CPU domain: id, CPU set (none when caller-managed), thread budget, ownership,
/// admission mode, executor and resources. Shared as `Arc<CpuDomain>`; enter it with
/// [`CpuDomain::enter`] to run work.
pub struct CpuDomain {
    pub(crate) serial: u64,
    pub(crate) parts: DomainParts,
    // Built once so that entering clones nothing: the request for the domain's CPUs
    // under cooperative admission, `None` when the caller manages admission.
    pub(crate) cpu_request: Option<AdmissionRequest>,
    // Read once from the executor's capabilities: whether a task of it may submit again.
    pub(crate) nested_submissions: bool,
}

impl CpuDomain {
    pub(crate) fn from_parts(parts: DomainParts) -> Arc<CpuDomain> {
        let cpu_request = match (parts.admission, &parts.cpus) {
            (DomainAdmission::CooperativeCpuSet, Some(cpus)) => Some(AdmissionRequest::Cpus(cpus.clone())),
            _ => None,
        };
        let nested_submissions = crate::entry::serves_nested_submissions(parts.executor.as_ref());
        let domain = Arc::new(CpuDomain { serial: next_domain_serial(), parts, cpu_request, nested_submissions });
        crate::entry::register_name(domain.serial, &domain.parts.id);
        domain
    }

    /// The domain's id.
    pub fn id(&self) -> &CpuDomainId {
        &self.parts.id
    }

    /// The CPUs the domain runs on; `None` for a caller-managed domain.
    pub fn cpus(&self) -> Option<&CpuSet> {
        self.parts.cpus.as_ref()
    }

    /// The resolved placement the domain serves; `None` for a caller-managed domain
    /// that declared no placement.
    pub fn resolved_placement(&self) -> Option<&ResolvedCpuPlacement> {
        self.parts.placement.as_ref()
    }

    /// The placement request this domain was built (or declared) to serve.
    pub fn placement(&self) -> CpuPlacement {
        self.parts.requested
    }

    /// How strongly the domain keeps its CPU set.
    pub fn guarantee(&self) -> CpuPlacementGuarantee {
        self.parts.guarantee
    }

    /// How many workers one operation may use.
    pub fn budget(&self) -> usize {
        self.parts.budget
    }

    /// Who owns the threads.
    pub fn ownership(&self) -> DomainOwnership {
        self.parts.ownership
    }

    /// How work is admitted.
    pub fn admission(&self) -> DomainAdmission {
        self.parts.admission
    }

    /// The executor (use [`crate::DomainEntry::executor`] to run work: it is admitted and
    /// marks re-entrancy).
    pub fn executor(&self) -> &Arc<dyn CpuDomainExecutor> {
        &self.parts.executor
    }

    /// The domain's resources.
    pub fn resources(&self) -> &DomainResources {
        &self.parts.resources
    }

    /// What this domain promises to the providers serving it, for
    /// [`strata_provider::CpuProviderBundle::validate_for_domain`]. The admission is the
    /// domain's own; set it to `ExclusivePermit` for operations entered with
    /// [`CpuDomain::enter_exclusive`].
    pub fn provider_contract(&self) -> DomainContract {
        let placement = match (&self.parts.cpus, self.parts.guarantee) {
            (None, _) => DomainPlacement::CallerManaged,
            (Some(_), CpuPlacementGuarantee::Exact) => DomainPlacement::ExactPinned,
            (Some(_), CpuPlacementGuarantee::Advisory) => DomainPlacement::Advisory,
        };
        let admission = match self.parts.admission {
            DomainAdmission::CooperativeCpuSet => ProviderAdmission::CooperativeCpuSet,
            DomainAdmission::CallerManaged => ProviderAdmission::CallerManaged,
        };
        DomainContract { label: self.parts.id.to_string(), thread_budget: self.parts.budget, placement, admission }
    }

    /// Checks that every provider of `bundle` can serve this domain under its own
    /// admission ([`CpuDomain::provider_contract`]).
    ///
    /// Errors: [`EngineError::ProviderBundle`] with the bundle's reason.
    pub fn validate_provider_bundle(&self, bundle: &CpuProviderBundle) -> Result<(), EngineError> {
        bundle
            .validate_for_domain(&self.provider_contract())
            .map_err(|source| EngineError::ProviderBundle { domain: self.parts.id.clone(), source })
    }

    /// The arbiter that admits work onto this domain.
    pub fn arbiter(&self) -> &ResourceArbiter {
        self.parts.arbiter.get()
    }
}

impl Drop for CpuDomain {
    fn drop(&mut self) {
        crate::entry::unregister_name(self.serial);
    }
}

impl fmt::Debug for CpuDomain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CpuDomain")
            .field("id", &self.parts.id)
            .field("cpus", &self.parts.cpus)
            .field("placement", &self.parts.placement)
            .field("guarantee", &self.parts.guarantee)
            .field("budget", &self.parts.budget)
            .field("ownership", &self.parts.ownership)
            .field("admission", &self.parts.admission)
            .field("executor", &self.parts.executor)
            .finish_non_exhaustive()
    }
}
