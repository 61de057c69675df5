//! # strata-engine: where work runs
//!
//! Placement resolution, CPU domains, executors and per-domain resources.
//!
//! - A [`CpuPlacement`] request (`Auto`, `NumaNode(id)`, `AllAllowed`) resolves against a
//!   [`strata_topology::CpuTopology`] into a [`ResolvedCpuPlacement`] (a concrete CPU set)
//!   and a [`CpuPlacementGuarantee`].
//! - A [`CpuDomain`] owns an executor, a CPU set, a thread budget, an admission mode and
//!   [`DomainResources`] (a buffer pool and typed cache slots). Managed domains come from
//!   a [`ManagedDomainRegistry`] (one pinned pool per NUMA node and one for all allowed
//!   CPUs, built on first use); external domains wrap a caller's executor and are
//!   validated by an [`ExternalDomainRegistry`].
//! - [`CpuDomain::enter`] admits work (an arbiter permit for the domain's CPUs) and
//!   returns an RAII [`DomainEntry`] giving the executor, budget and resources.
//!
//! **Promises.** A managed pool's workers are each confined to the domain's whole CPU set,
//! and every worker's mask was read back at start-up (a mismatch is an error, not a
//! warning). Work admitted onto overlapping CPU sets never runs at once; disjoint domains
//! run concurrently. Entering any domain from inside a domain execution (the entering
//! thread, or a task running on the executor of an entry) is refused with
//! [`EngineError::Reentrant`], never a deadlock. Node-placed domains first-touch fresh
//! pool memory on their own workers ([`FirstTouchPolicy`]).
//!
//! **Inline rule.** Only `Auto` carries no placement contract, so only `Auto` work may
//! run on the caller's thread: [`CpuDomain::enter_inline`] takes no permit and gives a
//! budget of 1. The backend uses it when the domain's budget is 1 or an operation is too
//! small to split. Explicit placements always run on the domain's workers.
//!
//! **Entries stay on their thread.** A [`DomainEntry`] borrows its domain and holds an
//! arbiter permit, which belongs to the entering thread; it is not `Send`. Work fans out
//! through the entry's executor, never by moving the entry.
//!
//! **Not here.** Kernels (they see only [`CpuDomainExecutor`]), the cache types stored in
//! resource slots, provider selection, and discovery of the machine (strata-topology).
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use strata_engine::{CpuPlacement, ManagedDomainRegistry};
//!
//! let topology = Arc::new(strata_topology::discover().unwrap());
//! let registry = ManagedDomainRegistry::builder(topology).build().unwrap();
//! let domain = registry.domain(&CpuPlacement::AllAllowed).unwrap();
//! let entry = domain.enter().unwrap();
//! let sum = AtomicUsize::new(0);
//! entry.executor().for_each_index(100, &|i| { sum.fetch_add(i, Ordering::Relaxed); });
//! assert_eq!(sum.into_inner(), 4950);
//! // Entering again from inside the execution is refused.
//! assert!(domain.enter().is_err());
//! ```
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod affinity;
mod domain;
mod entry;
mod error;
mod executor;
mod external;
mod first_touch;
mod managed;
mod placement;
mod rayon_adapter;
mod registry;
mod resources;
mod topology_view;

pub use affinity::{SystemThreadAffinity, ThreadAffinity};
pub use domain::{CpuDomain, CpuDomainId, DomainAdmission, DomainOwnership};
pub use entry::{DomainEntry, inside_domain_execution};
pub use error::EngineError;
pub use executor::{
    AffinityClaim, CpuDomainExecutor, ExecutorCapabilities, InlineExecutor, ReentrancyBehaviour, ShutdownOwner,
};
pub use external::{ExternalAdmission, ExternalCpuDomain, ExternalDomainRegistry, ExternalDomainRegistryBuilder};
pub use first_touch::FirstTouchPolicy;
pub use managed::{DEFAULT_STARTUP_TIMEOUT, DEFAULT_WORKER_STACK_SIZE, ManagedCpuExecutor, ManagedExecutorBuilder};
pub use placement::{
    CpuPlacement, CpuPlacementGuarantee, PlacementResolution, ResolvedCpuPlacement, platform_supports_pinning,
    resolve_placement,
};
pub use rayon_adapter::RayonCpuDomainExecutor;
pub use registry::{ManagedDomainRegistry, ManagedDomainRegistryBuilder};
pub use resources::{DEFAULT_DOMAIN_POOL_CAP_BYTES, DomainResources};
