//! Placement requests and their resolution against the machine's topology.
//!
//! A request ([`CpuPlacement`]) says where work should run; resolution turns it into a
//! concrete CPU set ([`ResolvedCpuPlacement`]) and a [`CpuPlacementGuarantee`] saying
//! whether that set is enforced (exact: pinned and verified) or only declared.

use std::fmt;

use strata_provider::{ParallelismOwner, PlacementControl, ProviderCapabilities, parallelism_owner};
use strata_topology::{CpuSet, CpuTopology, NumaNodeId};

use crate::error::EngineError;

/// Where a caller asks work to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CpuPlacement {
    /// Anywhere the process may run; strata chooses. The only placement under which
    /// work may run inline on the calling thread (see [`crate::CpuDomain::enter_inline`]).
    #[default]
    Auto,
    /// On the allowed CPUs of one NUMA node.
    NumaNode(NumaNodeId),
    /// On every CPU the process may use.
    AllAllowed,
}

impl fmt::Display for CpuPlacement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CpuPlacement::Auto => f.write_str("auto"),
            CpuPlacement::NumaNode(node) => write!(f, "numa-node {node}"),
            CpuPlacement::AllAllowed => f.write_str("all-allowed"),
        }
    }
}

/// A placement made concrete: the CPU set work will run on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ResolvedCpuPlacement {
    /// One NUMA node's allowed CPUs.
    NumaNode {
        /// The node.
        id: NumaNodeId,
        /// Its CPUs that the process may use.
        cpus: CpuSet,
    },
    /// Every CPU the process may use.
    AllAllowed {
        /// The process affinity mask.
        cpus: CpuSet,
    },
}

impl ResolvedCpuPlacement {
    /// The CPUs of the placement.
    pub fn cpus(&self) -> &CpuSet {
        match self {
            ResolvedCpuPlacement::NumaNode { cpus, .. } | ResolvedCpuPlacement::AllAllowed { cpus } => cpus,
        }
    }

    /// The node, for a node placement.
    pub fn numa_node(&self) -> Option<NumaNodeId> {
        match self {
            ResolvedCpuPlacement::NumaNode { id, .. } => Some(*id),
            ResolvedCpuPlacement::AllAllowed { .. } => None,
        }
    }

    /// The request this resolution answers (`Auto` resolves to all-allowed and reports
    /// [`CpuPlacement::AllAllowed`]).
    pub fn as_request(&self) -> CpuPlacement {
        match self {
            ResolvedCpuPlacement::NumaNode { id, .. } => CpuPlacement::NumaNode(*id),
            ResolvedCpuPlacement::AllAllowed { .. } => CpuPlacement::AllAllowed,
        }
    }
}

impl fmt::Display for ResolvedCpuPlacement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResolvedCpuPlacement::NumaNode { id, cpus } => write!(f, "numa-node {id} (CPUs {cpus})"),
            ResolvedCpuPlacement::AllAllowed { cpus } => write!(f, "all-allowed (CPUs {cpus})"),
        }
    }
}

/// How strongly a domain keeps its placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CpuPlacementGuarantee {
    /// Every worker is pinned to the set and its mask was read back (managed domains),
    /// or the caller vouches for exactly this (external domains declared exact).
    Exact,
    /// The set is declared (by a caller, or for `Auto` where affinity is unavailable);
    /// strata neither pins nor verifies.
    Advisory,
}

/// Whether this platform lets strata set and read thread affinity (Linux).
pub fn platform_supports_pinning() -> bool {
    cfg!(target_os = "linux")
}

/// A placement request resolved against a topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacementResolution {
    /// What was asked for.
    pub requested: CpuPlacement,
    /// The concrete CPUs.
    pub resolved: ResolvedCpuPlacement,
    /// Whether the CPUs are enforced.
    pub guarantee: CpuPlacementGuarantee,
}

/// Resolves `placement` against `topology`. `pinning` says whether workers can be pinned
/// (see [`platform_supports_pinning`]).
///
/// - `Auto` resolves to every allowed CPU: exact when pinning is available, advisory
///   otherwise (Auto never fails).
/// - `AllAllowed` resolves to every allowed CPU, exact; without pinning it is
///   [`EngineError::AffinityUnavailable`].
/// - `NumaNode(id)` resolves to that node's allowed CPUs, exact. A topology without NUMA
///   information gives [`EngineError::NumaUnavailable`], a node it does not list (or with
///   no allowed CPU) [`EngineError::UnknownNumaNode`], no pinning
///   [`EngineError::AffinityUnavailable`].
///
/// ```
/// use strata_engine::{resolve_placement, CpuPlacement, CpuPlacementGuarantee};
/// use strata_topology::{NumaNodeId, SyntheticTopology, TopologySource};
/// let topo = SyntheticTopology::new(2, 4, 1).unwrap().load().unwrap();
/// let r = resolve_placement(&topo, &CpuPlacement::NumaNode(NumaNodeId(1)), true).unwrap();
/// assert_eq!(r.resolved.cpus().to_string(), "4-7");
/// assert_eq!(r.guarantee, CpuPlacementGuarantee::Exact);
/// assert!(resolve_placement(&topo, &CpuPlacement::NumaNode(NumaNodeId(7)), true).is_err());
/// ```
pub fn resolve_placement(
    topology: &CpuTopology,
    placement: &CpuPlacement,
    pinning: bool,
) -> Result<PlacementResolution, EngineError> {
    let mask = crate::topology_view::allowed_cpus(topology);
    let (resolved, guarantee) = match placement {
        CpuPlacement::Auto => {
            let guarantee = if pinning { CpuPlacementGuarantee::Exact } else { CpuPlacementGuarantee::Advisory };
            (ResolvedCpuPlacement::AllAllowed { cpus: mask }, guarantee)
        }
        CpuPlacement::AllAllowed => {
            require_pinning(pinning, placement)?;
            (ResolvedCpuPlacement::AllAllowed { cpus: mask }, CpuPlacementGuarantee::Exact)
        }
        CpuPlacement::NumaNode(id) => {
            let nodes = crate::topology_view::numa_nodes(topology).ok_or_else(|| EngineError::NumaUnavailable {
                reason: "the topology source reports no NUMA nodes".to_string(),
            })?;
            let cpus = nodes.iter().find(|(n, _)| n == id).map(|(_, c)| c.clone()).ok_or_else(|| {
                EngineError::UnknownNumaNode {
                    node: *id,
                    available: nodes.iter().map(|(n, _)| n.to_string()).collect::<Vec<_>>().join(", "),
                }
            })?;
            require_pinning(pinning, placement)?;
            (ResolvedCpuPlacement::NumaNode { id: *id, cpus }, CpuPlacementGuarantee::Exact)
        }
    };
    Ok(PlacementResolution { requested: *placement, resolved, guarantee })
}

fn require_pinning(pinning: bool, placement: &CpuPlacement) -> Result<(), EngineError> {
    if pinning {
        Ok(())
    } else {
        Err(EngineError::AffinityUnavailable {
            reason: format!("placement {placement} needs pinned workers, which this platform cannot provide"),
        })
    }
}

impl PlacementResolution {
    /// Checks that a provider with `capabilities`, serving a domain of `budget` workers
    /// on this placement, can keep the placement's contract.
    ///
    /// The one contract no admission mode can rescue is an exact node placement served
    /// by a provider whose own threads own the parallelism ([`parallelism_owner`] asks for
    /// an exclusive permit) and run outside our workers ([`PlacementControl::OwnWorkers`],
    /// e.g. a BLAS team started once for the whole process): those threads compute on
    /// CPUs outside the node. Providers on the engine's workers or the calling thread
    /// inherit the pinning; an all-allowed placement is covered by an exclusive entry
    /// ([`crate::CpuDomain::enter_exclusive`]); budget 1 runs the provider sequentially.
    ///
    /// Errors: [`EngineError::ProviderCannotHonour`].
    pub fn check_provider(&self, capabilities: &ProviderCapabilities, budget: usize) -> Result<(), EngineError> {
        let exact_node = self.guarantee == CpuPlacementGuarantee::Exact
            && matches!(self.resolved, ResolvedCpuPlacement::NumaNode { .. });
        let own_threads = matches!(
            parallelism_owner(capabilities, budget),
            ParallelismOwner::Provider { exclusive_permit: true, .. }
        ) && capabilities.placement == PlacementControl::OwnWorkers;
        if exact_node && own_threads {
            return Err(EngineError::ProviderCannotHonour {
                provider: capabilities.name.to_string(),
                placement: self.resolved.to_string(),
                reason: format!(
                    "with {budget} threads it computes on threads of its own, which are not confined to the node; \
                     use a budget of 1 or a provider that runs on the domain's workers"
                ),
            });
        }
        Ok(())
    }
}
