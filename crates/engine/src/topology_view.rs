//! The few facts the engine reads from a [`CpuTopology`], in one place.

use strata_topology::{CpuSet, CpuTopology, NumaNodeId};

/// The process affinity mask.
pub(crate) fn allowed_cpus(topology: &CpuTopology) -> CpuSet {
    topology.allowed_cpus().clone()
}

/// The NUMA nodes with at least one allowed CPU and those CPUs, or `None` when the
/// topology has no NUMA information.
pub(crate) fn numa_nodes(topology: &CpuTopology) -> Option<Vec<(NumaNodeId, CpuSet)>> {
    let nodes: Vec<(NumaNodeId, CpuSet)> = topology.nodes().iter().map(|n| (n.id(), n.cpus().clone())).collect();
    if nodes.is_empty() { None } else { Some(nodes) }
}

/// The default thread budget: min(allowed CPUs, ceil(cgroup quota)).
pub(crate) fn default_budget(topology: &CpuTopology) -> usize {
    topology.default_thread_budget()
}
