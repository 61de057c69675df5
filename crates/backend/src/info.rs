//! `execution_info`: a snapshot of how and where a backend runs.

use std::fmt;

use strata_engine::{
    AffinityClaim, CpuDomainId, CpuPlacement, CpuPlacementGuarantee, DomainAdmission, DomainOwnership,
    ResolvedCpuPlacement, ShutdownOwner,
};
use strata_provider::ProviderKind;
use strata_tensor::DType;
use strata_topology::CpuSet;

use crate::backend::{CpuBackend, Domains};

/// How a backend's work is executed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExecutionMode {
    /// strata's pools, workers pinned to the domain's CPUs and verified.
    PinnedPool,
    /// The caller's executor (a Rayon pool or another [`strata_engine::CpuDomainExecutor`]).
    ExternalExecutor,
    /// Compatibility mode (no thread affinity on this platform, or pinning turned off):
    /// unpinned pools, only `Auto` placement.
    Compatibility,
}

/// A snapshot of a backend's configuration, from [`CpuBackend::execution_info`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutionInfo {
    /// The provider kind.
    pub kind: ProviderKind,
    /// How work is executed.
    pub execution_mode: ExecutionMode,
    /// The placement asked for.
    pub requested_placement: CpuPlacement,
    /// The CPUs it resolved to (`None` for a caller-managed domain).
    pub resolved_placement: Option<ResolvedCpuPlacement>,
    /// The machine's summary on one line (source, CPUs, nodes, quota, budget).
    pub topology: String,
    /// The executing domain (the producing domain of every output).
    pub domain_id: CpuDomainId,
    /// The domain's CPUs (`None` when caller-managed).
    pub domain_cpus: Option<CpuSet>,
    /// Workers of the domain's executor.
    pub workers: usize,
    /// Workers one op may use.
    pub thread_budget: usize,
    /// How strongly the CPU set is kept.
    pub guarantee: CpuPlacementGuarantee,
    /// How work is admitted.
    pub admission: DomainAdmission,
    /// Who owns the threads.
    pub ownership: DomainOwnership,
    /// What the executor claims about where its workers run.
    pub executor_affinity: AffinityClaim,
    /// Who shuts the executor's threads down.
    pub shutdown_owner: ShutdownOwner,
    /// The domain receiving recycled buffers.
    pub allocation_domain: CpuDomainId,
    /// The providers serving each GEMM dtype.
    pub provider: String,
    /// The runtime identity.
    pub runtime_identity: u64,
}

impl fmt::Display for ExecutionInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "kind:              {:?}", self.kind)?;
        writeln!(f, "execution mode:    {:?}", self.execution_mode)?;
        writeln!(
            f,
            "placement:         {} -> {}",
            self.requested_placement,
            match &self.resolved_placement {
                Some(r) => r.to_string(),
                None => "caller-managed".to_string(),
            }
        )?;
        writeln!(f, "topology:          {}", self.topology)?;
        writeln!(
            f,
            "domain:            {} (cpus {})",
            self.domain_id,
            match &self.domain_cpus {
                Some(c) => c.to_string(),
                None => "caller-managed".to_string(),
            }
        )?;
        writeln!(f, "workers / budget:  {} / {}", self.workers, self.thread_budget)?;
        writeln!(f, "guarantee:         {:?}", self.guarantee)?;
        writeln!(f, "admission:         {:?}", self.admission)?;
        writeln!(f, "ownership:         {:?}", self.ownership)?;
        writeln!(f, "executor:          affinity {:?}, shutdown by {:?}", self.executor_affinity, self.shutdown_owner)?;
        writeln!(f, "allocation domain: {}", self.allocation_domain)?;
        writeln!(f, "provider:          {}", self.provider)?;
        write!(f, "runtime identity:  {}", self.runtime_identity)
    }
}

impl CpuBackend {
    /// A snapshot of how and where this handle runs.
    pub fn execution_info(&self) -> ExecutionInfo {
        let inner = &*self.inner;
        let d = &*inner.domain;
        let caps = d.executor().capabilities();
        let execution_mode = match (&inner.shared.domains, caps.affinity) {
            (Domains::External(_), _) => ExecutionMode::ExternalExecutor,
            (Domains::Managed(_), AffinityClaim::PinnedVerified) => ExecutionMode::PinnedPool,
            (Domains::Managed(_), _) => ExecutionMode::Compatibility,
        };
        let provider = [DType::F32, DType::F64, DType::C32, DType::C64]
            .into_iter()
            .map(|dt| match inner.bundle.capabilities(dt) {
                Some(c) => format!("{dt:?}: {}", c.name),
                None => format!("{dt:?}: none"),
            })
            .collect::<Vec<_>>()
            .join(", ");
        let topology = inner
            .shared
            .topology
            .summary()
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        ExecutionInfo {
            kind: inner.bundle.kind(),
            execution_mode,
            requested_placement: inner.requested,
            resolved_placement: d.resolved_placement().cloned(),
            topology,
            domain_id: d.id().clone(),
            domain_cpus: d.cpus().cloned(),
            workers: caps.workers,
            thread_budget: d.budget(),
            guarantee: d.guarantee(),
            admission: d.admission(),
            ownership: d.ownership(),
            executor_affinity: caps.affinity,
            shutdown_owner: caps.shutdown,
            allocation_domain: inner.allocation.id().clone(),
            provider: format!("{:?} bundle ({provider})", inner.bundle.kind()),
            runtime_identity: inner.identity,
        }
    }
}
