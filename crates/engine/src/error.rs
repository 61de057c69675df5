//! The engine's typed errors, and their conversion into [`strata_tensor::Error`].

use std::time::Duration;

use strata_topology::{CpuSet, NumaNodeId};

use crate::domain::CpuDomainId;

/// Everything that can go wrong while resolving a placement, building an executor or a
/// domain registry, or entering a domain. Each variant names what was expected and what
/// was given; [`EngineError::op`] names the step that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// A placement named a NUMA node the process may not use.
    #[error("NUMA node {node} is not one of the process's nodes ({available})")]
    UnknownNumaNode {
        /// The node that was asked for.
        node: NumaNodeId,
        /// The nodes the topology offers, as a readable list.
        available: String,
    },
    /// A node placement was asked for but the topology has no NUMA information.
    #[error("NUMA placement is unavailable: {reason}")]
    NumaUnavailable {
        /// Why the topology cannot place on nodes.
        reason: String,
    },
    /// Exact placement needs thread affinity, which this platform or process lacks.
    #[error("thread affinity is unavailable: {reason}")]
    AffinityUnavailable {
        /// Why affinity cannot be set or read.
        reason: String,
    },
    /// The provider serving the domain cannot keep the placement's contract.
    #[error("provider {provider} cannot honour placement {placement}: {reason}")]
    ProviderCannotHonour {
        /// The provider's name.
        provider: String,
        /// The placement, as requested.
        placement: String,
        /// What the provider lacks.
        reason: String,
    },
    /// The topology could not answer (a malformed `RAYON_NUM_THREADS`, ...).
    #[error("{source}")]
    Topology {
        /// The topology's error.
        #[source]
        source: strata_topology::TopologyError,
    },
    /// A provider bundle cannot serve a domain.
    #[error("domain {domain}: {source}")]
    ProviderBundle {
        /// The domain.
        domain: CpuDomainId,
        /// The bundle's reason.
        #[source]
        source: strata_provider::BundleError,
    },
    /// A thread budget of zero was requested.
    #[error("thread budget must be at least 1, got 0")]
    ZeroBudget,
    /// A thread budget larger than the domain's CPU count was requested.
    #[error("thread budget {budget} exceeds the {cpus} CPUs of the domain")]
    BudgetExceedsCpus {
        /// The requested budget.
        budget: usize,
        /// The number of CPUs available to the domain.
        cpus: usize,
    },
    /// CPUs were declared that the process may not run on.
    #[error("CPUs {outside} are outside the process affinity mask {mask}")]
    CpusOutsideMask {
        /// The offending CPUs.
        outside: CpuSet,
        /// The process mask.
        mask: CpuSet,
    },
    /// The OS (or the [`crate::ThreadAffinity`] hook) refused to pin a worker, or the hook
    /// panicked.
    #[error("worker {worker} could not be pinned to CPUs {cpus}: {reason}")]
    PinFailed {
        /// Index of the worker in its pool.
        worker: usize,
        /// The CPUs it was to be pinned to.
        cpus: CpuSet,
        /// The OS's reason.
        reason: String,
    },
    /// A worker's affinity read back differs from the set it was pinned to.
    #[error("worker {worker} was pinned to CPUs {requested} but reads back {observed}")]
    PinVerificationFailed {
        /// Index of the worker in its pool.
        worker: usize,
        /// The CPUs it was pinned to.
        requested: CpuSet,
        /// The CPUs it reports.
        observed: String,
    },
    /// Not every worker reported its pinning within the start-up timeout.
    #[error("only {reported} of {expected} workers reported their pinning within {timeout:?}")]
    WorkerStartTimeout {
        /// Workers that reported.
        reported: usize,
        /// Workers that were started.
        expected: usize,
        /// How long construction waited.
        timeout: Duration,
    },
    /// Rayon refused to build the pool.
    #[error("could not build the worker pool: {reason}")]
    ThreadPoolBuild {
        /// Rayon's reason.
        reason: String,
    },
    /// A domain was entered from inside a domain execution (on the entering thread or in
    /// a task that execution submitted), or entered exclusively from a task of its own
    /// executor.
    #[error("domain {entered} entered from inside the execution of {active}; nested entry is refused")]
    Reentrant {
        /// The domain being entered.
        entered: CpuDomainId,
        /// The domain whose execution is already in progress.
        active: CpuDomainId,
    },
    /// Inline entry was asked of a domain whose placement contract forbids it.
    #[error("domain {domain} has an explicit placement; its work cannot run inline on the caller")]
    InlineNotAllowed {
        /// The domain.
        domain: CpuDomainId,
    },
    /// The arbiter refused or timed out the domain's admission.
    #[error("admission to domain {domain} failed: {source}")]
    Admission {
        /// The domain.
        domain: CpuDomainId,
        /// The arbiter's error.
        #[source]
        source: strata_arbiter::AdmissionError,
    },
    /// An executor broke the [`crate::CpuDomainExecutor`] contract.
    #[error("executor {executor} broke its contract: {reason}")]
    ExecutorContract {
        /// The executor's diagnostic name.
        executor: String,
        /// What it did.
        reason: String,
    },
    /// A domain registry was built with no domains.
    #[error("a domain registry needs at least one domain")]
    EmptyRegistry,
    /// Two domains in one registry share an id.
    #[error("domain id {id} is registered twice")]
    DuplicateDomainId {
        /// The repeated id.
        id: CpuDomainId,
    },
    /// Two domains in one registry serve the same placement.
    #[error("placement {placement} is served by both {first} and {second}")]
    DuplicatePlacement {
        /// The placement, as text.
        placement: String,
        /// The domain registered first.
        first: CpuDomainId,
        /// The domain registered second.
        second: CpuDomainId,
    },
    /// The registry's default domain was not named, or is not registered.
    #[error("the default domain {} is not registered", .requested.as_ref().map_or_else(|| "(none named)".to_string(), |d| d.to_string()))]
    MissingDefault {
        /// The default that was named, if any.
        requested: Option<CpuDomainId>,
    },
    /// An exact all-allowed domain declares CPUs different from the process mask.
    #[error("exact all-allowed domain {id} declares CPUs {declared}, but the process mask is {mask}")]
    ExactAllAllowedMismatch {
        /// The domain.
        id: CpuDomainId,
        /// The CPUs it declares.
        declared: CpuSet,
        /// The process mask.
        mask: CpuSet,
    },
    /// An exact node domain declares CPUs different from the node's allowed CPUs.
    #[error("exact domain {id} for NUMA node {node} declares CPUs {declared}, but the node's CPUs are {node_cpus}")]
    ExactNodeMismatch {
        /// The domain.
        id: CpuDomainId,
        /// The node.
        node: NumaNodeId,
        /// The CPUs it declares.
        declared: CpuSet,
        /// The node's allowed CPUs.
        node_cpus: CpuSet,
    },
    /// No domain of a registry serves the placement.
    #[error("no domain serves placement {placement}")]
    NoDomainForPlacement {
        /// The placement, as text.
        placement: String,
    },
}

impl EngineError {
    /// The step that failed, used as the `op` of the converted [`strata_tensor::Error`].
    pub fn op(&self) -> &'static str {
        use EngineError::*;
        match self {
            UnknownNumaNode { .. }
            | NumaUnavailable { .. }
            | AffinityUnavailable { .. }
            | ProviderCannotHonour { .. } => "resolve_placement",
            ProviderBundle { .. } => "validate_provider_bundle",
            Topology { .. } | ZeroBudget | BudgetExceedsCpus { .. } | CpusOutsideMask { .. } => "cpu_domain",
            PinFailed { .. }
            | PinVerificationFailed { .. }
            | WorkerStartTimeout { .. }
            | ThreadPoolBuild { .. }
            | ExecutorContract { .. } => "executor",
            Reentrant { .. } | InlineNotAllowed { .. } | Admission { .. } => "enter_domain",
            EmptyRegistry
            | DuplicateDomainId { .. }
            | DuplicatePlacement { .. }
            | MissingDefault { .. }
            | ExactAllAllowedMismatch { .. }
            | ExactNodeMismatch { .. }
            | NoDomainForPlacement { .. } => "domain_registry",
        }
    }

    fn kind(&self) -> strata_tensor::ErrorKind {
        use EngineError::*;
        use strata_tensor::ErrorKind as K;
        match self {
            UnknownNumaNode { .. }
            | Topology { .. }
            | ZeroBudget
            | BudgetExceedsCpus { .. }
            | CpusOutsideMask { .. }
            | EmptyRegistry
            | DuplicateDomainId { .. }
            | DuplicatePlacement { .. }
            | MissingDefault { .. }
            | ExactAllAllowedMismatch { .. }
            | ExactNodeMismatch { .. } => K::InvalidArgument,
            NumaUnavailable { .. }
            | AffinityUnavailable { .. }
            | ProviderCannotHonour { .. }
            | ProviderBundle { .. }
            | NoDomainForPlacement { .. } => K::Unsupported,
            PinFailed { .. } | PinVerificationFailed { .. } | WorkerStartTimeout { .. } | ThreadPoolBuild { .. } => {
                K::BackendFailure
            }
            Reentrant { .. } | InlineNotAllowed { .. } | Admission { .. } | ExecutorContract { .. } => K::RuntimeState,
        }
    }
}

impl From<EngineError> for strata_tensor::Error {
    fn from(e: EngineError) -> Self {
        strata_tensor::Error::new(e.kind(), e.op(), e.to_string()).with_source(e)
    }
}
