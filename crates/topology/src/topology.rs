//! The checked, affinity-restricted view of the machine: [`CpuTopology`].

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::num::NonZeroUsize;

use crate::budget;
use crate::cpuset::{CpuId, CpuSet, NumaNodeId};
use crate::description::MachineDescription;
use crate::error::TopologyError;
use crate::quota::CpuQuota;

/// A NUMA node this process can use: its id and its allowed CPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuNode {
    id: NumaNodeId,
    cpus: CpuSet,
}

impl CpuNode {
    /// The operating-system node id.
    pub fn id(&self) -> NumaNodeId {
        self.id
    }

    /// The node's CPUs that the process may use (never empty).
    pub fn cpus(&self) -> &CpuSet {
        &self.cpus
    }
}

/// A physical core restricted to the allowed CPUs: its usable SMT siblings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuCore {
    package: Option<u32>,
    cpus: CpuSet,
}

impl CpuCore {
    /// The package (socket) of the core, when the source knows it.
    pub fn package(&self) -> Option<u32> {
        self.package
    }

    /// The core's allowed hardware threads (one per SMT sibling).
    pub fn cpus(&self) -> &CpuSet {
        &self.cpus
    }
}

/// The allowed CPUs sharing one last-level cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheGroup {
    level: u8,
    size_bytes: Option<u64>,
    cpus: CpuSet,
}

impl CacheGroup {
    /// The cache level (3 for an L3).
    pub fn level(&self) -> u8 {
        self.level
    }

    /// The cache size in bytes, when known.
    pub fn size_bytes(&self) -> Option<u64> {
        self.size_bytes
    }

    /// The allowed CPUs sharing the cache.
    pub fn cpus(&self) -> &CpuSet {
        &self.cpus
    }
}

/// The CPUs, nodes, cores, caches and quota this process may use.
///
/// Built from a [`MachineDescription`] by [`CpuTopology::from_description`], which keeps OS
/// ids as they are and restricts everything to the allowed CPUs:
///
/// - allowed CPUs = affinity ∩ the machine's CPUs (never empty, else an error);
/// - a usable node is its CPUs ∩ allowed; nodes left empty are dropped; no node at all
///   means one node 0 holding every allowed CPU;
/// - cores and cache groups are restricted the same way; allowed CPUs that no core
///   describes become single-thread cores; CPUs with no cache information belong to no
///   cache group.
///
/// ```
/// use strata_topology::{CpuId, NumaNodeId, SyntheticTopology, TopologySource};
///
/// let topo = SyntheticTopology::new(2, 4, 2)?.load()?;
/// assert_eq!(topo.allowed_cpus().len(), 16);
/// assert_eq!(topo.nodes().len(), 2);
/// assert_eq!(topo.node_of(CpuId(9)), Some(NumaNodeId(0)));
/// assert_eq!(topo.distance(NumaNodeId(0), NumaNodeId(1)), Some(20));
/// # Ok::<(), strata_topology::TopologyError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuTopology {
    allowed: CpuSet,
    nodes: Vec<CpuNode>,
    cores: Vec<CpuCore>,
    llc_groups: Vec<CacheGroup>,
    // Row-major nodes.len() x nodes.len(), in the order of `nodes`.
    distances: Option<Vec<u32>>,
    quota: Option<CpuQuota>,
    source: &'static str,
    pinnable: bool,
}

impl CpuTopology {
    /// Checks a raw description and restricts it to the allowed CPUs (see the type docs).
    ///
    /// Errors on duplicate node ids, nodes sharing a CPU, cores or caches that overlap
    /// without being equal, distance tables that do not cover every pair of usable nodes,
    /// and an affinity that shares no CPU with the machine.
    pub fn from_description(desc: MachineDescription) -> Result<CpuTopology, TopologyError> {
        let mut described = desc.nodes;
        described.sort_by_key(|n| n.id);
        for pair in described.windows(2) {
            if pair[0].id == pair[1].id {
                return Err(TopologyError::DuplicateNode { node: pair[0].id });
            }
        }
        let mut owner: BTreeMap<CpuId, NumaNodeId> = BTreeMap::new();
        for node in &described {
            for cpu in node.cpus.iter().flat_map(CpuSet::iter) {
                if let Some(first) = owner.insert(cpu, node.id) {
                    return Err(TopologyError::OverlappingNodes { cpu, first, second: node.id });
                }
            }
        }

        let node_cpus = CpuSet::new(owner.keys().copied()).ok();
        let described_cpus = node_cpus.clone().or_else(|| desc.online.clone()).unwrap_or_else(|| desc.affinity.clone());
        // Offline CPUs may still be listed by their node; they are not usable.
        let machine = match &desc.online {
            Some(online) => described_cpus.intersection(online),
            None => Some(described_cpus),
        };
        let allowed = machine.as_ref().and_then(|m| desc.affinity.intersection(m)).ok_or_else(|| {
            TopologyError::NoAllowedCpus {
                allowed: desc.affinity.to_string(),
                present: machine.map_or_else(|| "no online CPU".to_string(), |m| m.to_string()),
            }
        })?;

        let nodes: Vec<CpuNode> = if node_cpus.is_none() {
            vec![CpuNode { id: NumaNodeId(0), cpus: allowed.clone() }]
        } else {
            described
                .iter()
                .filter_map(|n| {
                    let cpus = n.cpus.as_ref()?.intersection(&allowed)?;
                    Some(CpuNode { id: n.id, cpus })
                })
                .collect()
        };

        let distances = distance_matrix(&nodes, &described)?;
        let cores = restrict_cores(&desc.cores, &allowed)?;
        let llc_groups = restrict_caches(&desc.last_level_caches, &allowed)?;

        Ok(CpuTopology {
            allowed,
            nodes,
            cores,
            llc_groups,
            distances,
            quota: desc.quota,
            source: desc.source,
            pinnable: desc.pinnable,
        })
    }

    /// The CPUs this process may run on.
    pub fn allowed_cpus(&self) -> &CpuSet {
        &self.allowed
    }

    /// The usable NUMA nodes, by ascending id (at least one).
    pub fn nodes(&self) -> &[CpuNode] {
        &self.nodes
    }

    /// The usable node `id`, or [`TopologyError::UnknownNode`].
    pub fn node(&self, id: NumaNodeId) -> Result<&CpuNode, TopologyError> {
        self.nodes.iter().find(|n| n.id == id).ok_or_else(|| TopologyError::UnknownNode {
            node: id,
            usable: self.nodes.iter().map(|n| n.id.to_string()).collect::<Vec<_>>().join(","),
        })
    }

    /// The node holding an allowed CPU; `None` if the CPU is not allowed.
    pub fn node_of(&self, cpu: CpuId) -> Option<NumaNodeId> {
        self.nodes.iter().find(|n| n.cpus.contains(cpu)).map(|n| n.id)
    }

    /// The cores, each with its allowed SMT siblings, ordered by their first CPU.
    /// Together they cover exactly the allowed CPUs.
    pub fn cores(&self) -> &[CpuCore] {
        &self.cores
    }

    /// The allowed SMT siblings of `cpu` (including `cpu`); `None` if it is not allowed.
    pub fn smt_siblings(&self, cpu: CpuId) -> Option<&CpuSet> {
        self.cores.iter().find(|c| c.cpus.contains(cpu)).map(|c| &c.cpus)
    }

    /// The last-level-cache groups, ordered by their first CPU. Empty when the source
    /// has no cache information.
    pub fn llc_groups(&self) -> &[CacheGroup] {
        &self.llc_groups
    }

    /// The distance between two usable nodes (10 = local, ACPI SLIT scale), `None` when
    /// unknown or when a node is not usable.
    pub fn distance(&self, from: NumaNodeId, to: NumaNodeId) -> Option<u32> {
        let table = self.distances.as_ref()?;
        let i = self.nodes.iter().position(|n| n.id == from)?;
        let j = self.nodes.iter().position(|n| n.id == to)?;
        Some(table[i * self.nodes.len() + j])
    }

    /// The cgroup CPU quota; `None` when unlimited or unknown.
    pub fn cpu_quota(&self) -> Option<CpuQuota> {
        self.quota
    }

    /// The short name of the source that described the machine, e.g. `"sysfs"`.
    pub fn source(&self) -> &'static str {
        self.source
    }

    /// Whether the CPU ids are OS ids of the running machine, so [`crate::pin_current_thread`]
    /// can target them. False for fixtures, synthetic machines, hwloc XML exports and the
    /// `available_parallelism` fallback (whose ids are positions): placement on such a
    /// topology can only be advisory.
    pub fn is_pinnable(&self) -> bool {
        self.pinnable
    }

    /// min(allowed CPUs, ceil(quota)), at least 1, ignoring any environment override.
    pub fn hardware_thread_budget(&self) -> NonZeroUsize {
        let quota_cap = self.quota.map_or(usize::MAX, |q| q.ceil_cpus());
        let budget = self.allowed.len().min(quota_cap);
        // INVARIANT: allowed is non-empty and ceil_cpus() >= 1, so the minimum is >= 1.
        NonZeroUsize::new(budget).unwrap_or(NonZeroUsize::MIN)
    }

    /// The default number of worker threads: `RAYON_NUM_THREADS` from the process
    /// environment when set to a positive count, else [`CpuTopology::hardware_thread_budget`]
    /// (`RAYON_NUM_THREADS=0` means "the default", as in Rayon).
    ///
    /// A set but negative, non-numeric or absurd (> 65 536) value is an error. A valid
    /// count is honoured as given, even above the allowed CPU count: it is an explicit
    /// request.
    pub fn default_thread_budget(&self) -> Result<NonZeroUsize, TopologyError> {
        let value = budget::rayon_num_threads_from_env()?;
        self.thread_budget(value.as_deref())
    }

    /// As [`CpuTopology::default_thread_budget`], with the `RAYON_NUM_THREADS` value
    /// passed explicitly (`None` = unset) instead of read from the environment.
    ///
    /// ```
    /// use strata_topology::{CpuQuota, SyntheticTopology, TopologySource};
    ///
    /// let topo = SyntheticTopology::new(1, 8, 1)?
    ///     .with_quota(CpuQuota::new(150_000, 100_000)?)
    ///     .load()?;
    /// assert_eq!(topo.thread_budget(None)?.get(), 2);
    /// assert_eq!(topo.thread_budget(Some("3"))?.get(), 3);
    /// assert_eq!(topo.thread_budget(Some("0"))?.get(), 2); // 0: the default, as in Rayon
    /// assert!(topo.thread_budget(Some("-1")).is_err());
    /// # Ok::<(), strata_topology::TopologyError>(())
    /// ```
    pub fn thread_budget(&self, rayon_num_threads: Option<&str>) -> Result<NonZeroUsize, TopologyError> {
        match rayon_num_threads {
            // Rayon reads 0 as "pick the default"; so do we.
            Some(value) if !value.trim().is_empty() && value.trim().bytes().all(|b| b == b'0') => {
                Ok(self.hardware_thread_budget())
            }
            Some(value) => budget::parse_thread_count(budget::RAYON_NUM_THREADS, value),
            None => Ok(self.hardware_thread_budget()),
        }
    }

    /// A human-readable multi-line summary (what the `topology` example prints).
    pub fn summary(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = writeln!(out, "source:        {}{}", self.source, if self.pinnable { "" } else { " (not pinnable)" });
        let _ = writeln!(out, "allowed CPUs:  {} ({} CPUs)", self.allowed, self.allowed.len());
        for node in &self.nodes {
            let _ = writeln!(out, "node {}:        CPUs {}", node.id, node.cpus);
        }
        let smt: Vec<String> = self.cores.iter().map(|c| format!("[{}]", c.cpus)).collect();
        let _ = writeln!(out, "cores:         {} ({})", self.cores.len(), smt.join(" "));
        if self.llc_groups.is_empty() {
            let _ = writeln!(out, "LLC groups:    unknown");
        }
        for g in &self.llc_groups {
            let size = g.size_bytes.map_or_else(|| "size unknown".to_string(), |s| format!("{} KiB", s / 1024));
            let _ = writeln!(out, "LLC L{}:        CPUs {} ({size})", g.level, g.cpus);
        }
        match &self.distances {
            None => {
                let _ = writeln!(out, "distances:     unknown");
            }
            Some(_) => {
                for from in &self.nodes {
                    let row: Vec<String> = self
                        .nodes
                        .iter()
                        .filter_map(|to| self.distance(from.id, to.id))
                        .map(|d| d.to_string())
                        .collect();
                    let _ = writeln!(out, "distances {}:   {}", from.id, row.join(" "));
                }
            }
        }
        match &self.quota {
            None => {
                let _ = writeln!(out, "CPU quota:     none");
            }
            Some(q) => {
                let _ = writeln!(out, "CPU quota:     {q}");
            }
        }
        let _ = writeln!(out, "hardware thread budget: {}", self.hardware_thread_budget());
        out
    }
}

fn distance_matrix(
    nodes: &[CpuNode],
    described: &[crate::description::NodeDescription],
) -> Result<Option<Vec<u32>>, TopologyError> {
    let rows: Vec<&[(NumaNodeId, u32)]> =
        nodes.iter().filter_map(|n| described.iter().find(|d| d.id == n.id)).map(|d| d.distances.as_slice()).collect();
    if rows.len() != nodes.len() || rows.iter().all(|r| r.is_empty()) {
        return Ok(None);
    }
    let mut table = Vec::with_capacity(nodes.len() * nodes.len());
    for (from, row) in nodes.iter().zip(&rows) {
        for to in nodes {
            let d = row.iter().find(|(id, _)| *id == to.id).map(|&(_, d)| d).ok_or_else(|| {
                TopologyError::InvalidDescription {
                    reason: format!("no distance from node {} to node {}", from.id, to.id),
                }
            })?;
            table.push(d);
        }
    }
    Ok(Some(table))
}

/// Restricts sibling sets to `allowed`, merges repeats, and rejects partial overlaps.
fn restrict_groups<'a>(
    groups: impl Iterator<Item = &'a CpuSet>,
    allowed: &CpuSet,
    what: &str,
) -> Result<Vec<(usize, CpuSet)>, TopologyError> {
    let mut kept: Vec<(usize, CpuSet)> = Vec::new();
    for (index, cpus) in groups.enumerate() {
        let Some(cpus) = cpus.intersection(allowed) else {
            continue;
        };
        if let Some((_, existing)) = kept.iter().find(|(_, k)| k.overlaps(&cpus)) {
            if *existing == cpus {
                continue;
            }
            return Err(TopologyError::InvalidDescription {
                reason: format!("{what} {existing} and {cpus} share CPUs without being equal"),
            });
        }
        kept.push((index, cpus));
    }
    kept.sort_by_key(|(_, cpus)| cpus.first());
    Ok(kept)
}

fn restrict_cores(
    cores: &[crate::description::CoreDescription],
    allowed: &CpuSet,
) -> Result<Vec<CpuCore>, TopologyError> {
    let kept = restrict_groups(cores.iter().map(|c| &c.cpus), allowed, "cores")?;
    let mut out: Vec<CpuCore> = kept.into_iter().map(|(i, cpus)| CpuCore { package: cores[i].package, cpus }).collect();
    let covered = out.iter().map(|c| c.cpus.clone()).reduce(|a, b| a.union(&b));
    let uncovered = match &covered {
        Some(covered) => allowed.difference(covered),
        None => Some(allowed.clone()),
    };
    for cpu in uncovered.iter().flat_map(CpuSet::iter) {
        out.push(CpuCore { package: None, cpus: CpuSet::single(cpu) });
    }
    out.sort_by_key(|c| c.cpus.first());
    Ok(out)
}

fn restrict_caches(
    caches: &[crate::description::CacheDescription],
    allowed: &CpuSet,
) -> Result<Vec<CacheGroup>, TopologyError> {
    let kept = restrict_groups(caches.iter().map(|c| &c.cpus), allowed, "last-level caches")?;
    Ok(kept
        .into_iter()
        .map(|(i, cpus)| CacheGroup { level: caches[i].level, size_bytes: caches[i].size_bytes, cpus })
        .collect())
}
