//! The raw machine description every source produces, before it is intersected with the
//! process affinity and checked.

use crate::cpuset::{CpuSet, NumaNodeId};
use crate::quota::CpuQuota;

/// One NUMA node as the machine describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NodeDescription {
    /// The operating-system node id.
    pub id: NumaNodeId,
    /// All CPUs of the node, allowed or not; `None` for a memory-only node.
    pub cpus: Option<CpuSet>,
    /// Distances from this node to nodes (including itself), in the ACPI SLIT scale where
    /// 10 means local. Empty when unknown.
    pub distances: Vec<(NumaNodeId, u32)>,
}

impl NodeDescription {
    /// A node with these CPUs and no distance information.
    pub fn new(id: NumaNodeId, cpus: Option<CpuSet>) -> Self {
        NodeDescription { id, cpus, distances: Vec::new() }
    }
}

/// One physical core: the hardware threads (SMT siblings) that share it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CoreDescription {
    /// The package (socket) holding the core, when known.
    pub package: Option<u32>,
    /// All hardware threads of the core, allowed or not.
    pub cpus: CpuSet,
}

impl CoreDescription {
    /// A core made of these hardware threads.
    pub fn new(package: Option<u32>, cpus: CpuSet) -> Self {
        CoreDescription { package, cpus }
    }
}

/// One last-level cache and the CPUs sharing it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheDescription {
    /// The cache level (3 for an L3).
    pub level: u8,
    /// The size in bytes, when known.
    pub size_bytes: Option<u64>,
    /// All CPUs sharing the cache, allowed or not.
    pub cpus: CpuSet,
}

impl CacheDescription {
    /// A cache of this level shared by these CPUs.
    pub fn new(level: u8, size_bytes: Option<u64>, cpus: CpuSet) -> Self {
        CacheDescription { level, size_bytes, cpus }
    }
}

/// What a [`crate::TopologySource`] reports, before [`crate::CpuTopology::from_description`]
/// intersects it with the affinity and checks it.
///
/// Sources fill in what they know; the fields are public so tests and custom sources can
/// describe any machine.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MachineDescription {
    /// The process affinity mask: the CPUs the scheduler lets this process use.
    pub affinity: CpuSet,
    /// The CPUs the machine has online; `None` when the source does not know.
    pub online: Option<CpuSet>,
    /// NUMA nodes; empty when the machine reports none (then one node 0 holds every CPU).
    pub nodes: Vec<NodeDescription>,
    /// Cores with their SMT siblings; CPUs not covered become single-thread cores.
    pub cores: Vec<CoreDescription>,
    /// Last-level caches; CPUs not covered belong to no cache group.
    pub last_level_caches: Vec<CacheDescription>,
    /// The cgroup CPU quota, `None` when unlimited or unknown.
    pub quota: Option<CpuQuota>,
    /// A short name of the source, e.g. `"sysfs"`.
    pub source: &'static str,
    /// Whether the CPU ids are OS ids of the running machine, so threads can be pinned to
    /// them. True for the live sysfs and hwloc sources; false for fixtures, synthetic
    /// machines, XML exports and the `available_parallelism` fallback.
    pub pinnable: bool,
}

impl MachineDescription {
    /// A machine about which only the affinity mask is known (not pinnable).
    pub fn new(affinity: CpuSet, source: &'static str) -> Self {
        MachineDescription {
            affinity,
            online: None,
            nodes: Vec::new(),
            cores: Vec::new(),
            last_level_caches: Vec::new(),
            quota: None,
            source,
            pinnable: false,
        }
    }
}
