//! Placement requests and their resolution against the machine's topology.
//!
//! A request ([`CpuPlacement`]) says where work should run; resolution turns it into a
//! concrete CPU set ([`ResolvedCpuPlacement`]) and a [`CpuPlacementGuarantee`] saying
//! whether that set is enforced (exact: pinned and verified) or only declared.

use std::fmt;

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
