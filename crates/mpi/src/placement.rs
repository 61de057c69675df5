//! Rank placement: which CPUs of a node each MPI rank on it computes on, and the
//! `CpuBackend` placed there.
//!
//! The plan is a pure function of the node's topology, the rank's position among the
//! ranks of its node and every local rank's affinity mask, so every rank computes the
//! whole node's plan identically without further communication (and tests run it on
//! fixture machines without MPI):
//!
//! - masks already pairwise disjoint (the launcher bound the ranks, `mpirun --bind-to
//!   core|numa`): each rank keeps its own mask;
//! - equal masks (`--bind-to none`, or an oversubscribed `mpirun`, which binds nothing):
//!   with at most as many ranks as NUMA nodes each rank gets its own node(s); with more,
//!   the ranks of a node split its cores (whole cores, so SMT siblings stay together)
//!   into disjoint shares, then its hardware threads; with more ranks than hardware
//!   threads, ranks share single CPUs round-robin (reported as oversubscribed);
//! - masks that overlap without being equal: each rank keeps its own mask, reported as
//!   overlapping (strata cannot repair a launcher's partial binding).
//!
//! A cgroup CPU quota is split across the node's ranks (each at least one thread).

use std::fmt;
use std::sync::Arc;

use strata_backend::{CpuBackend, CpuPlacement, ProviderKind};
use strata_tensor::{Error, Result};
use strata_topology::{
    CacheDescription, CoreDescription, CpuSet, CpuTopology, MachineDescription, NodeDescription, NumaNodeId,
};

const OP: &str = "rank_placement";

/// How a rank's CPU share was decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShareKind {
    /// The launcher bound the ranks to disjoint CPUs; the rank keeps its binding.
    LauncherBound,
    /// The rank owns one or more whole NUMA nodes.
    NumaNodes,
    /// The rank owns a disjoint share of one node's CPUs (ranks outnumber nodes).
    CpuShare,
    /// More ranks than CPUs on the node: the rank shares one CPU with other ranks.
    Oversubscribed,
    /// The launcher's masks overlap without being equal: the rank keeps its mask.
    Overlapping,
}

impl fmt::Display for ShareKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ShareKind::LauncherBound => "launcher-bound",
            ShareKind::NumaNodes => "numa-nodes",
            ShareKind::CpuShare => "cpu-share",
            ShareKind::Oversubscribed => "oversubscribed",
            ShareKind::Overlapping => "overlapping",
        })
    }
}

/// One rank's place on its node: its CPUs, the NUMA nodes they lie on and its thread
/// budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankShare {
    /// The CPUs the rank's workers (and its main thread) run on.
    pub cpus: CpuSet,
    /// The NUMA nodes of those CPUs, ascending.
    pub nodes: Vec<NumaNodeId>,
    /// Worker threads per op (at most `cpus.len()`, at least 1).
    pub threads: usize,
    /// How the share was decided.
    pub kind: ShareKind,
}

/// Plans the share of local rank `local_rank` among `affinities.len()` ranks on one
/// node, given every local rank's affinity mask (indexed by local rank) and this rank's
/// topology (restricted to its own mask, as [`strata_topology::discover`] gives it).
///
/// ```
/// use strata_mpi::{plan_rank_share, ShareKind};
/// use strata_topology::{SyntheticTopology, TopologySource};
/// // Two NUMA nodes of four single-thread cores, four ranks not bound by the launcher.
/// let topo = SyntheticTopology::new(2, 4, 1)?.load()?;
/// let masks = vec![topo.allowed_cpus().clone(); 4];
/// let share = plan_rank_share(&topo, 3, &masks)?;
/// assert_eq!(share.kind, ShareKind::CpuShare);
/// assert_eq!(share.cpus.to_string(), "6-7"); // node 1's second half
/// assert_eq!(share.threads, 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn plan_rank_share(topology: &CpuTopology, local_rank: usize, affinities: &[CpuSet]) -> Result<RankShare> {
    let ranks = affinities.len();
    if local_rank >= ranks {
        return Err(Error::invalid_argument(OP, format!("local rank {local_rank} is not below {ranks} local ranks")));
    }
    let own = &affinities[local_rank];
    let equal = affinities.iter().all(|m| m == own);
    let disjoint = affinities.iter().enumerate().all(|(i, a)| affinities[i + 1..].iter().all(|b| !a.overlaps(b)));
    let (cpus, kind) = if ranks == 1 || equal {
        share_of_equal_masks(topology, local_rank, ranks)?
    } else if disjoint {
        (topology.allowed_cpus().clone(), ShareKind::LauncherBound)
    } else {
        (topology.allowed_cpus().clone(), ShareKind::Overlapping)
    };
    let quota_threads = topology.cpu_quota().map(|q| {
        let total = q.ceil_cpus();
        (total / ranks + usize::from(local_rank < total % ranks)).max(1)
    });
    let threads = quota_threads.map_or(cpus.len(), |q| q.min(cpus.len())).max(1);
    let mut nodes: Vec<NumaNodeId> = cpus.iter().filter_map(|c| topology.node_of(c)).collect();
    nodes.dedup();
    Ok(RankShare { cpus, nodes, threads, kind })
}

/// The split of one node's CPUs among ranks that all see the same mask.
fn share_of_equal_masks(topology: &CpuTopology, local_rank: usize, ranks: usize) -> Result<(CpuSet, ShareKind)> {
    let nodes = topology.nodes();
    let n = nodes.len();
    if ranks <= n {
        // Contiguous groups of nodes, one group per rank.
        let group = &nodes[local_rank * n / ranks..(local_rank + 1) * n / ranks];
        let cpus = group.iter().skip(1).fold(group[0].cpus().clone(), |acc, node| acc.union(node.cpus()));
        return Ok((cpus, ShareKind::NumaNodes));
    }
    // Contiguous groups of ranks per node: rank r lives on node floor(r * n / ranks).
    let node_index = local_rank * n / ranks;
    let first_on_node = (0..ranks).position(|r| r * n / ranks == node_index).unwrap_or(local_rank);
    let on_node = (0..ranks).filter(|r| r * n / ranks == node_index).count();
    let q = local_rank - first_on_node;
    let node_cpus = nodes[node_index].cpus();
    let mut cores: Vec<&CpuSet> =
        topology.cores().iter().map(|c| c.cpus()).filter(|c| c.is_subset(node_cpus)).collect();
    cores.sort_by_key(|c| c.first());
    let covered = cores.iter().map(|c| c.len()).sum::<usize>() == node_cpus.len();
    let pieces: Vec<CpuSet> = if covered && cores.len() >= on_node {
        cores.into_iter().cloned().collect()
    } else {
        node_cpus.iter().map(CpuSet::single).collect()
    };
    if pieces.len() < on_node {
        let cpu = node_cpus.as_slice()[q % node_cpus.len()];
        return Ok((CpuSet::single(cpu), ShareKind::Oversubscribed));
    }
    let mine = &pieces[q * pieces.len() / on_node..(q + 1) * pieces.len() / on_node];
    let cpus = mine.iter().skip(1).fold(mine[0].clone(), |acc, p| acc.union(p));
    Ok((cpus, ShareKind::CpuShare))
}

/// `topology` restricted to `cpus` (a subset of its allowed CPUs): the machine a rank's
/// backend is built on, so its managed pools are sized by and pinned to the share.
/// The cgroup quota is dropped: the rank's thread count already carries its part of it.
pub fn restrict_topology(topology: &CpuTopology, cpus: &CpuSet) -> Result<CpuTopology> {
    if !cpus.is_subset(topology.allowed_cpus()) {
        return Err(Error::invalid_argument(
            OP,
            format!("CPUs {cpus} are not all among the allowed CPUs {}", topology.allowed_cpus()),
        ));
    }
    let mut desc = MachineDescription::new(cpus.clone(), topology.source());
    desc.pinnable = topology.is_pinnable();
    for node in topology.nodes() {
        let mut d = NodeDescription::new(node.id(), Some(node.cpus().clone()));
        d.distances =
            topology.nodes().iter().filter_map(|to| Some((to.id(), topology.distance(node.id(), to.id())?))).collect();
        desc.nodes.push(d);
    }
    desc.cores = topology.cores().iter().map(|c| CoreDescription::new(c.package(), c.cpus().clone())).collect();
    desc.last_level_caches = topology
        .llc_groups()
        .iter()
        .map(|g| CacheDescription::new(g.level(), g.size_bytes(), g.cpus().clone()))
        .collect();
    CpuTopology::from_description(desc)
        .map_err(|e| Error::runtime_state(OP, format!("restricting the topology to CPUs {cpus}: {e}")).with_source(e))
}

impl RankShare {
    /// A backend on this share: managed workers pinned to its CPUs (when the topology is
    /// pinnable), `threads` per op, the share's NUMA node as placement when it lies on
    /// one node of a multi-node machine (so its buffers are node-local).
    pub fn backend(&self, topology: &CpuTopology, kind: ProviderKind) -> Result<CpuBackend> {
        let restricted = Arc::new(restrict_topology(topology, &self.cpus)?);
        let backend = CpuBackend::builder()
            .topology(restricted)
            .threads(self.threads)
            .kind(kind)
            .pinning(topology.is_pinnable())
            .build()
            .map_err(|e| Error::runtime_state(OP, format!("building the rank's backend on CPUs {}: {e}", self.cpus)))?;
        if topology.nodes().len() > 1 && self.nodes.len() == 1 && topology.is_pinnable() {
            return backend.for_placement(CpuPlacement::NumaNode(self.nodes[0])).map_err(|e| {
                Error::runtime_state(OP, format!("placing the rank's backend on node {}: {e}", self.nodes[0]))
            });
        }
        Ok(backend)
    }
}

/// One rank's line of the placement map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankPlacement {
    /// Rank in the world communicator.
    pub world_rank: usize,
    /// The node's name (`MPI_Get_processor_name`).
    pub host: String,
    /// Rank among the ranks of its node (MPI shared-memory split, ordered by world rank).
    pub local_rank: usize,
    /// Ranks on its node.
    pub local_size: usize,
    /// Its share.
    pub share: RankShare,
    /// Whether its main thread was pinned to the share.
    pub main_thread_pinned: bool,
}

/// Where every rank of the job computes: one [`RankPlacement`] per world rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacementMap {
    /// The ranks, by world rank.
    pub ranks: Vec<RankPlacement>,
}

impl fmt::Display for PlacementMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "rank  host              local  kind            threads  NUMA   CPUs")?;
        for r in &self.ranks {
            let nodes: Vec<String> = r.share.nodes.iter().map(|n| n.to_string()).collect();
            writeln!(
                f,
                "{:<5} {:<17} {:<6} {:<15} {:<8} {:<6} {}{}",
                r.world_rank,
                r.host,
                format!("{}/{}", r.local_rank, r.local_size),
                r.share.kind.to_string(),
                r.share.threads,
                nodes.join(","),
                r.share.cpus,
                if r.main_thread_pinned { "" } else { " (main thread not pinned)" }
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_topology::{CpuId, CpuQuota, SyntheticTopology, TopologySource};

    fn machine(nodes: u32, cores: u32, smt: u32) -> CpuTopology {
        SyntheticTopology::new(nodes, cores, smt).unwrap().load().unwrap()
    }

    fn plan_all(topo: &CpuTopology, ranks: usize) -> Vec<RankShare> {
        let masks = vec![topo.allowed_cpus().clone(); ranks];
        (0..ranks).map(|r| plan_rank_share(topo, r, &masks).unwrap()).collect()
    }

    /// Over many machine shapes and rank counts: shares are disjoint and cover the
    /// machine while ranks fit, each lies on one node once ranks outnumber nodes, whole
    /// cores stay together while cores suffice, and shares are balanced within one piece.
    #[test]
    fn equal_masks_split_into_disjoint_balanced_shares() {
        for (nodes, cores, smt) in [(1, 2, 1), (1, 4, 2), (2, 4, 2), (2, 3, 1), (4, 2, 2), (3, 5, 1)] {
            let topo = machine(nodes, cores, smt);
            let total = topo.allowed_cpus().len();
            for ranks in 1..=total + 3 {
                let shares = plan_all(&topo, ranks);
                if ranks <= total {
                    for (i, a) in shares.iter().enumerate() {
                        for b in &shares[i + 1..] {
                            assert!(!a.cpus.overlaps(&b.cpus), "{nodes}x{cores}x{smt}, {ranks} ranks: {a:?} {b:?}");
                        }
                    }
                    let all = shares.iter().skip(1).fold(shares[0].cpus.clone(), |acc, s| acc.union(&s.cpus));
                    assert_eq!(&all, topo.allowed_cpus());
                } else {
                    // Some node has more ranks than CPUs: its ranks share single CPUs.
                    assert!(shares.iter().all(|s| s.cpus.len() == 1));
                    assert!(shares.iter().any(|s| s.kind == ShareKind::Oversubscribed));
                }
                for s in &shares {
                    assert_eq!(s.threads, s.cpus.len());
                    if ranks >= nodes as usize {
                        assert_eq!(s.nodes.len(), 1, "{ranks} ranks: {s:?}");
                    }
                    if ranks <= (nodes * cores) as usize {
                        // Whole cores: every core is inside or outside the share.
                        for core in topo.cores() {
                            assert!(core.cpus().is_subset(&s.cpus) || !core.cpus().overlaps(&s.cpus), "{s:?}");
                        }
                    }
                }
                if ranks <= nodes as usize {
                    assert!(shares.iter().all(|s| s.kind == ShareKind::NumaNodes));
                }
            }
        }
    }

    #[test]
    fn launcher_bindings_are_kept_and_overlaps_reported() {
        let topo = machine(1, 4, 1);
        let masks: Vec<CpuSet> = (0..4).map(|c| CpuSet::single(CpuId(c))).collect();
        // This rank's own topology is restricted to its binding, as discovery gives it.
        let own = restrict_topology(&topo, &masks[2]).unwrap();
        let share = plan_rank_share(&own, 2, &masks).unwrap();
        assert_eq!(share.kind, ShareKind::LauncherBound);
        assert_eq!(share.cpus, masks[2]);

        let overlapping = vec![CpuSet::range(CpuId(0), CpuId(2)).unwrap(), CpuSet::range(CpuId(2), CpuId(3)).unwrap()];
        let own = restrict_topology(&topo, &overlapping[1]).unwrap();
        let share = plan_rank_share(&own, 1, &overlapping).unwrap();
        assert_eq!(share.kind, ShareKind::Overlapping);
        assert_eq!(share.cpus, overlapping[1]);

        let e = plan_rank_share(&topo, 4, &masks).unwrap_err();
        assert!(e.to_string().contains("local rank 4"), "{e}");
    }

    #[test]
    fn quota_is_split_among_ranks() {
        let topo = SyntheticTopology::new(1, 8, 1)
            .unwrap()
            .with_quota(CpuQuota::new(300_000, 100_000).unwrap())
            .load()
            .unwrap();
        let shares = plan_all(&topo, 2);
        assert_eq!(shares.iter().map(|s| s.threads).collect::<Vec<_>>(), vec![2, 1]);
        let shares = plan_all(&topo, 5);
        assert!(shares.iter().all(|s| s.threads == 1));
    }

    #[test]
    fn restricted_topology_and_backend_follow_the_share() {
        let topo = machine(2, 4, 2);
        let shares = plan_all(&topo, 4);
        for s in &shares {
            let restricted = restrict_topology(&topo, &s.cpus).unwrap();
            assert_eq!(restricted.allowed_cpus(), &s.cpus);
            assert_eq!(restricted.nodes().len(), 1);
            assert_eq!(restricted.cores().len(), s.cpus.len() / 2);
            // Fixture CPUs cannot be pinned: the backend is built unpinned, budget = share.
            let backend = s.backend(&topo, ProviderKind::Faer).unwrap();
            assert_eq!(backend.num_threads(), s.threads);
            assert_eq!(backend.topology().allowed_cpus(), &s.cpus);
        }
        let outside = CpuSet::single(CpuId(99));
        assert!(restrict_topology(&topo, &outside).is_err());
    }

    #[test]
    fn map_prints_one_line_per_rank() {
        let topo = machine(1, 2, 1);
        let shares = plan_all(&topo, 2);
        let map = PlacementMap {
            ranks: shares
                .into_iter()
                .enumerate()
                .map(|(r, share)| RankPlacement {
                    world_rank: r,
                    host: "node-a".into(),
                    local_rank: r,
                    local_size: 2,
                    share,
                    main_thread_pinned: r == 0,
                })
                .collect(),
        };
        let text = map.to_string();
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(text.lines().nth(1).unwrap().contains("cpu-share"), "{text}");
        assert!(text.lines().nth(2).unwrap().ends_with("1 (main thread not pinned)"), "{text}");
    }
}
