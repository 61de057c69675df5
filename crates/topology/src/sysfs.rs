//! The Linux source: sysfs node, CPU and cache files, the scheduler's affinity mask and
//! the cgroup quota — read from the live system or from a fixture folder of the same shape.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::cgroup::cgroup_quota;
use crate::cpuset::{CpuId, CpuSet, NumaNodeId};
use crate::description::{CacheDescription, CoreDescription, MachineDescription, NodeDescription};
use crate::error::TopologyError;
use crate::files::{read_optional, read_required};
use crate::source::TopologySource;

/// Where the affinity mask comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AffinityOrigin {
    /// `sched_getaffinity` of the process (live system).
    Scheduler,
    /// The `Cpus_allowed_list:` line of `<root>/proc/self/status` (fixtures).
    ProcStatus,
}

/// Reads the machine from sysfs- and procfs-shaped files under a root folder.
///
/// Files read (all relative to the root; nothing is ever written):
///
/// | file | use | when missing |
/// |---|---|---|
/// | `sys/devices/system/cpu/online` | online CPUs | every affinity CPU is online |
/// | `sys/devices/system/node/node<N>/cpulist` | node CPUs (may be empty) | error if the node folder exists |
/// | `sys/devices/system/node/node<N>/distance` | one distance per node folder, ascending ids | error if the node folder exists |
/// | `sys/devices/system/cpu/cpu<N>/topology/thread_siblings_list` | SMT siblings | CPU is a core of its own |
/// | `sys/devices/system/cpu/cpu<N>/topology/physical_package_id` | package | package unknown |
/// | `sys/devices/system/cpu/cpu<N>/cache/index<I>/{level,type,shared_cpu_list,size}` | last-level cache | no cache group |
/// | `proc/self/cgroup`, `proc/self/mountinfo`, cgroup `cpu.max` / `cpu.cfs_*` | quota | no quota |
/// | `proc/self/status` (fixtures only) | affinity (`Cpus_allowed_list:`) | error |
///
/// No `sys/devices/system/node` folder means one node 0 holding every allowed CPU.
///
/// ```no_run
/// use strata_topology::{SysfsSource, TopologySource};
/// let topo = SysfsSource::fixture("tests/fixtures/two-nodes-smt").load()?;
/// println!("{}", topo.summary());
/// # Ok::<(), strata_topology::TopologyError>(())
/// ```
#[derive(Debug, Clone)]
pub struct SysfsSource {
    root: PathBuf,
    affinity: AffinityOrigin,
}

impl SysfsSource {
    /// The running system: root `/`, affinity from `sched_getaffinity`.
    pub fn live() -> Self {
        SysfsSource { root: PathBuf::from("/"), affinity: AffinityOrigin::Scheduler }
    }

    /// A fake machine described as a folder: the same files under `root`, with the affinity
    /// read from `root/proc/self/status`.
    pub fn fixture(root: impl Into<PathBuf>) -> Self {
        SysfsSource { root: root.into(), affinity: AffinityOrigin::ProcStatus }
    }

    /// The folder the files are read under.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn read_affinity(&self) -> Result<CpuSet, TopologyError> {
        match self.affinity {
            AffinityOrigin::Scheduler => crate::affinity::process_affinity(),
            AffinityOrigin::ProcStatus => {
                let path = self.root.join("proc/self/status");
                let text = read_required(&path)?;
                let list = text
                    .lines()
                    .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                    .ok_or_else(|| TopologyError::malformed(&path, "no `Cpus_allowed_list:` line"))?;
                parse_cpulist_text(list, &path)
            }
        }
    }
}

impl TopologySource for SysfsSource {
    fn describe(&self) -> Result<MachineDescription, TopologyError> {
        let affinity = self.read_affinity()?;
        let cpu_dir = self.root.join("sys/devices/system/cpu");
        // Without sysfs (a minimal container) every affinity CPU is taken as online.
        let online_path = cpu_dir.join("online");
        let online = match read_optional(&online_path)? {
            Some(text) => parse_cpulist_text(&text, &online_path)?,
            None => affinity.clone(),
        };
        let nodes = read_nodes(&self.root.join("sys/devices/system/node"))?;
        // Only allowed CPUs matter, and reading a few hundred small files per CPU on a big
        // machine is not free: skip the rest.
        let (cores, last_level_caches) = match affinity.intersection(&online) {
            Some(relevant) => (read_cores(&cpu_dir, &relevant)?, read_last_level_caches(&cpu_dir, &relevant)?),
            None => (Vec::new(), Vec::new()),
        };
        let quota = cgroup_quota(&self.root)?;
        let mut desc = MachineDescription::new(
            affinity,
            match self.affinity {
                AffinityOrigin::Scheduler => "sysfs",
                AffinityOrigin::ProcStatus => "fixture",
            },
        );
        desc.online = Some(online);
        desc.nodes = nodes;
        desc.cores = cores;
        desc.last_level_caches = last_level_caches;
        desc.quota = quota;
        desc.pinnable = self.affinity == AffinityOrigin::Scheduler;
        Ok(desc)
    }
}

fn parse_cpulist_text(text: &str, path: &Path) -> Result<CpuSet, TopologyError> {
    text.parse().map_err(|e: TopologyError| TopologyError::malformed(path, e.to_string()))
}

fn parse_possibly_empty(text: &str, path: &Path) -> Result<Option<CpuSet>, TopologyError> {
    CpuSet::parse_possibly_empty(text).map_err(|e| TopologyError::malformed(path, e.to_string()))
}

fn read_nodes(node_dir: &Path) -> Result<Vec<NodeDescription>, TopologyError> {
    let entries = match std::fs::read_dir(node_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(TopologyError::io(node_dir, e)),
    };
    let mut found: Vec<(NumaNodeId, PathBuf)> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| TopologyError::io(node_dir, e))?;
        let name = entry.file_name();
        let Some(digits) = name.to_str().and_then(|n| n.strip_prefix("node")) else {
            continue;
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let id = digits
            .parse::<u32>()
            .map_err(|_| TopologyError::malformed(entry.path(), "node number does not fit in 32 bits"))?;
        found.push((NumaNodeId(id), entry.path()));
    }
    found.sort();
    let ids: Vec<NumaNodeId> = found.iter().map(|(id, _)| *id).collect();
    let mut nodes = Vec::with_capacity(found.len());
    for (id, dir) in &found {
        let cpulist = dir.join("cpulist");
        let cpus = parse_possibly_empty(&read_required(&cpulist)?, &cpulist)?;
        let distance_path = dir.join("distance");
        let text = read_required(&distance_path)?;
        let values =
            text.split_whitespace().map(|t| t.parse::<u32>()).collect::<Result<Vec<u32>, _>>().map_err(|_| {
                TopologyError::malformed(
                    &distance_path,
                    format!("expected whitespace-separated distances, found `{}`", text.trim()),
                )
            })?;
        if values.len() != ids.len() {
            return Err(TopologyError::malformed(
                &distance_path,
                format!("expected {} distances (one per node folder), found {}", ids.len(), values.len()),
            ));
        }
        let mut node = NodeDescription::new(*id, cpus);
        node.distances = ids.iter().copied().zip(values).collect();
        nodes.push(node);
    }
    Ok(nodes)
}

fn read_cores(cpu_dir: &Path, relevant: &CpuSet) -> Result<Vec<CoreDescription>, TopologyError> {
    let mut cores: Vec<CoreDescription> = Vec::new();
    for cpu in relevant {
        if cores.iter().any(|c| c.cpus.contains(cpu)) {
            continue;
        }
        let topology = cpu_dir.join(format!("cpu{cpu}/topology"));
        let siblings_path = topology.join("thread_siblings_list");
        let Some(text) = read_optional(&siblings_path)? else {
            continue;
        };
        let siblings = parse_cpulist_text(&text, &siblings_path)?;
        let package_path = topology.join("physical_package_id");
        let package = match read_optional(&package_path)? {
            None => None,
            Some(text) => {
                let value: i64 = text.trim().parse().map_err(|_| {
                    TopologyError::malformed(&package_path, format!("expected an integer, found `{}`", text.trim()))
                })?;
                // Some firmware reports -1 for "unknown".
                u32::try_from(value).ok()
            }
        };
        cores.push(CoreDescription::new(package, siblings));
    }
    Ok(cores)
}

fn read_last_level_caches(cpu_dir: &Path, relevant: &CpuSet) -> Result<Vec<CacheDescription>, TopologyError> {
    let mut caches: Vec<CacheDescription> = Vec::new();
    for cpu in relevant {
        if caches.iter().any(|c| c.cpus.contains(cpu)) {
            continue;
        }
        if let Some(cache) = read_cpu_llc(&cpu_dir.join(format!("cpu{cpu}/cache")), cpu)? {
            caches.push(cache);
        }
    }
    Ok(caches)
}

/// The highest-level data or unified cache of one CPU, `None` without cache folders.
fn read_cpu_llc(cache_dir: &Path, cpu: CpuId) -> Result<Option<CacheDescription>, TopologyError> {
    let entries = match std::fs::read_dir(cache_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(TopologyError::io(cache_dir, e)),
    };
    let mut index_dirs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| TopologyError::io(cache_dir, e))?;
        if entry.file_name().to_str().is_some_and(|n| n.starts_with("index")) {
            index_dirs.push(entry.path());
        }
    }
    index_dirs.sort();
    let mut best: Option<(u8, PathBuf)> = None;
    for dir in index_dirs {
        if let Some(kind) = read_optional(&dir.join("type"))?
            && kind.trim() == "Instruction"
        {
            continue;
        }
        let level_path = dir.join("level");
        let text = read_required(&level_path)?;
        let level: u8 = text.trim().parse().map_err(|_| {
            TopologyError::malformed(&level_path, format!("expected a cache level, found `{}`", text.trim()))
        })?;
        if best.as_ref().is_none_or(|(l, _)| level > *l) {
            best = Some((level, dir));
        }
    }
    let Some((level, dir)) = best else {
        return Ok(None);
    };
    let shared_path = dir.join("shared_cpu_list");
    let cpus = parse_cpulist_text(&read_required(&shared_path)?, &shared_path)?;
    if !cpus.contains(cpu) {
        // A CPU always shares its own cache; a list that omits it is inconsistent.
        return Err(TopologyError::malformed(&shared_path, format!("cache of CPU {cpu} lists only CPUs {cpus}")));
    }
    let size_path = dir.join("size");
    let size_bytes = match read_optional(&size_path)? {
        None => None,
        Some(text) => Some(parse_cache_size(&text).ok_or_else(|| {
            TopologyError::malformed(&size_path, format!("expected a size such as `32K`, found `{}`", text.trim()))
        })?),
    };
    Ok(Some(CacheDescription::new(level, size_bytes, cpus)))
}

/// Parses sysfs cache sizes: `48K`, `2048K`, `16M`, or plain bytes.
fn parse_cache_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, scale) = match text.as_bytes().last()? {
        b'K' => (&text[..text.len() - 1], 1u64 << 10),
        b'M' => (&text[..text.len() - 1], 1 << 20),
        b'G' => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes() {
        assert_eq!(parse_cache_size("48K\n"), Some(48 * 1024));
        assert_eq!(parse_cache_size("16M"), Some(16 << 20));
        assert_eq!(parse_cache_size("1G"), Some(1 << 30));
        assert_eq!(parse_cache_size("512"), Some(512));
        for bad in ["", "K", "-1K", "1.5M", "12Q", "99999999999999999999G"] {
            assert_eq!(parse_cache_size(bad), None, "{bad:?}");
        }
    }
}
