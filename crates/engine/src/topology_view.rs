//! The few facts the engine reads from a [`CpuTopology`], in one place.

use strata_topology::{CpuSet, CpuTopology, NumaNodeId};

use crate::error::EngineError;

/// Name of strata-topology's portable fallback source, which knows only a CPU count:
/// its single node is invented, not discovered.
const NO_NUMA_SOURCE: &str = "available_parallelism";

/// The process affinity mask.
pub(crate) fn allowed_cpus(topology: &CpuTopology) -> CpuSet {
    topology.allowed_cpus().clone()
}

/// The NUMA nodes with at least one allowed CPU and those CPUs, or `None` when the
/// topology has no NUMA information.
pub(crate) fn numa_nodes(topology: &CpuTopology) -> Option<Vec<(NumaNodeId, CpuSet)>> {
    if topology.source() == NO_NUMA_SOURCE {
        return None;
    }
    let nodes: Vec<(NumaNodeId, CpuSet)> = topology.nodes().iter().map(|n| (n.id(), n.cpus().clone())).collect();
    if nodes.is_empty() { None } else { Some(nodes) }
}

/// The default thread budget: `RAYON_NUM_THREADS` when set, else min(allowed CPUs,
/// ceil(cgroup quota)).
pub(crate) fn default_budget(topology: &CpuTopology) -> Result<usize, EngineError> {
    topology.default_thread_budget().map(|b| b.get()).map_err(|source| EngineError::Topology { source })
}
