//! A compact description of a regular machine, for tests and examples.

use crate::cpuset::{CpuId, CpuSet, NumaNodeId};
use crate::description::{CacheDescription, CoreDescription, MachineDescription, NodeDescription};
use crate::error::TopologyError;
use crate::quota::CpuQuota;
use crate::source::TopologySource;

/// `nodes` NUMA nodes of `cores_per_node` cores with `threads_per_core` SMT threads each.
///
/// CPUs are numbered the way Linux numbers most x86 machines: first thread of every core
/// in node order, then the second threads, so with 2 nodes x 4 cores x 2 threads node 0
/// holds CPUs 0-3 and 8-11 and CPU 0's sibling is CPU 8. Each node is one package with
/// one shared L3; distances are 10 locally and 20 between nodes. Every CPU is allowed and
/// there is no quota unless set with [`SyntheticTopology::with_affinity`] and
/// [`SyntheticTopology::with_quota`].
///
/// ```
/// use strata_topology::{CpuId, SyntheticTopology, TopologySource};
///
/// let topo = SyntheticTopology::new(2, 4, 2)?.with_affinity("0-3".parse()?).load()?;
/// assert_eq!(topo.nodes().len(), 1); // node 1 has no allowed CPU
/// assert_eq!(topo.smt_siblings(CpuId(0)).map(|s| s.len()), Some(1));
/// # Ok::<(), strata_topology::TopologyError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntheticTopology {
    nodes: u32,
    cores_per_node: u32,
    threads_per_core: u32,
    affinity: Option<CpuSet>,
    quota: Option<CpuQuota>,
}

impl SyntheticTopology {
    /// Describes the machine; every count must be positive and the total at most
    /// [`CpuId::MAX`] + 1 CPUs.
    pub fn new(nodes: u32, cores_per_node: u32, threads_per_core: u32) -> Result<Self, TopologyError> {
        // u128: three u32 factors cannot overflow it.
        let total = u128::from(nodes) * u128::from(cores_per_node) * u128::from(threads_per_core);
        if total == 0 {
            return Err(TopologyError::InvalidDescription {
                reason: format!(
                    "{nodes} nodes x {cores_per_node} cores x {threads_per_core} threads: every count must be positive"
                ),
            });
        }
        if total > u128::from(CpuId::MAX.0) + 1 {
            return Err(TopologyError::InvalidDescription {
                reason: format!("{total} CPUs exceed the supported {}", u128::from(CpuId::MAX.0) + 1),
            });
        }
        Ok(SyntheticTopology { nodes, cores_per_node, threads_per_core, affinity: None, quota: None })
    }

    /// Restricts the process affinity to `affinity` (intersected with the machine's CPUs).
    pub fn with_affinity(mut self, affinity: CpuSet) -> Self {
        self.affinity = Some(affinity);
        self
    }

    /// Sets a cgroup CPU quota.
    pub fn with_quota(mut self, quota: CpuQuota) -> Self {
        self.quota = Some(quota);
        self
    }

    /// The OS id of thread `thread` of core `core` on node `node`.
    fn cpu(&self, node: u32, core: u32, thread: u32) -> CpuId {
        let cores_total = self.nodes * self.cores_per_node;
        // new() bounds the total by CpuId::MAX + 1, so this cannot overflow.
        CpuId(thread * cores_total + node * self.cores_per_node + core)
    }

    fn node_cpus(&self, node: u32) -> Result<CpuSet, TopologyError> {
        CpuSet::new(
            (0..self.cores_per_node)
                .flat_map(|core| (0..self.threads_per_core).map(move |thread| self.cpu(node, core, thread))),
        )
    }
}

impl TopologySource for SyntheticTopology {
    fn describe(&self) -> Result<MachineDescription, TopologyError> {
        let all = CpuSet::range(CpuId(0), CpuId(self.nodes * self.cores_per_node * self.threads_per_core - 1))?;
        let mut desc = MachineDescription::new(self.affinity.clone().unwrap_or(all.clone()), "synthetic");
        desc.online = Some(all);
        for node in 0..self.nodes {
            let cpus = self.node_cpus(node)?;
            let mut nd = NodeDescription::new(NumaNodeId(node), Some(cpus.clone()));
            nd.distances = (0..self.nodes).map(|to| (NumaNodeId(to), if to == node { 10 } else { 20 })).collect();
            desc.nodes.push(nd);
            for core in 0..self.cores_per_node {
                let siblings = CpuSet::new((0..self.threads_per_core).map(|thread| self.cpu(node, core, thread)))?;
                desc.cores.push(CoreDescription::new(Some(node), siblings));
            }
            desc.last_level_caches.push(CacheDescription::new(3, None, cpus));
        }
        desc.quota = self.quota;
        Ok(desc)
    }
}
