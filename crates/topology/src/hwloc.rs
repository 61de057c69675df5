//! The hwloc source (feature `hwloc`): the live machine through libhwloc, or an hwloc XML
//! export such as one written by `lstopo --of xml`.

use std::borrow::Borrow;
use std::path::{Path, PathBuf};

use hwlocality::Topology;
use hwlocality::bitmap::Bitmap;
use hwlocality::object::TopologyObject;
use hwlocality::object::attributes::ObjectAttributes;
use hwlocality::object::types::ObjectType;

use crate::cpuset::{CpuId, CpuSet, NumaNodeId};
use crate::description::{CacheDescription, CoreDescription, MachineDescription, NodeDescription};
use crate::error::TopologyError;
use crate::source::TopologySource;

#[derive(Debug, Clone, PartialEq, Eq)]
enum HwlocInput {
    Live,
    XmlFile(PathBuf),
}

/// Describes the machine through hwloc.
///
/// Live: hwloc's view of the running machine, with the affinity from `sched_getaffinity`
/// and the cgroup quota read as [`crate::SysfsSource`] does, so both sources agree.
/// XML: the exported machine, with its `allowed_cpuset` as the affinity and no quota.
///
/// ```no_run
/// use strata_topology::{HwlocSource, TopologySource};
/// let topo = HwlocSource::from_xml_file("tests/data/hwloc-2pkg-2numa.xml").load()?;
/// assert_eq!(topo.nodes().len(), 2);
/// # Ok::<(), strata_topology::TopologyError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HwlocSource {
    input: HwlocInput,
}

impl HwlocSource {
    /// The running machine.
    pub fn live() -> Self {
        HwlocSource { input: HwlocInput::Live }
    }

    /// A machine exported to an hwloc XML file.
    pub fn from_xml_file(path: impl Into<PathBuf>) -> Self {
        HwlocSource { input: HwlocInput::XmlFile(path.into()) }
    }

    fn build(&self) -> Result<Topology, TopologyError> {
        let hwloc_error =
            |what: &str, e: &dyn std::fmt::Display| TopologyError::Hwloc { message: format!("{what}: {e}") };
        match &self.input {
            HwlocInput::Live => Topology::new().map_err(|e| hwloc_error("loading the machine", &e)),
            HwlocInput::XmlFile(path) => {
                // hwloc's own error for a missing file is vague; name the file instead.
                std::fs::metadata(path).map_err(|e| TopologyError::io(path, e))?;
                Topology::builder()
                    .from_xml_file(path)
                    .map_err(|e| hwloc_error(&format!("reading {}", path.display()), &e))?
                    .build()
                    .map_err(|e| hwloc_error(&format!("building from {}", path.display()), &e))
            }
        }
    }
}

impl TopologySource for HwlocSource {
    fn describe(&self) -> Result<MachineDescription, TopologyError> {
        let topology = self.build()?;
        let (affinity, quota, source) = match &self.input {
            HwlocInput::Live => {
                (crate::affinity::process_affinity()?, crate::cgroup::cgroup_quota(Path::new("/"))?, "hwloc")
            }
            HwlocInput::XmlFile(_) => {
                (bitmap_to_set(&*topology.allowed_cpuset(), "hwloc allowed cpuset")?, None, "hwloc-xml")
            }
        };
        let mut desc = MachineDescription::new(affinity, source);
        desc.online = Some(bitmap_to_set(&*topology.cpuset(), "hwloc topology cpuset")?);
        desc.quota = quota;
        desc.pinnable = self.input == HwlocInput::Live;

        for node in topology.objects_with_type(ObjectType::NUMANode) {
            let id = os_index(node, "NUMA node")?;
            let cpus = match node.cpuset() {
                Some(set) if !set.is_empty() => Some(bitmap_to_set(&*set, "NUMA node cpuset")?),
                _ => None,
            };
            desc.nodes.push(NodeDescription::new(NumaNodeId(id), cpus));
        }
        attach_distances(&topology, &mut desc.nodes)?;

        for core in topology.objects_with_type(ObjectType::Core) {
            let Some(set) = core.cpuset().filter(|s| !s.is_empty()) else {
                continue;
            };
            let package = core
                .first_ancestor_with_type(ObjectType::Package)
                .and_then(|p| p.os_index())
                .and_then(|i| u32::try_from(i).ok());
            desc.cores.push(CoreDescription::new(package, bitmap_to_set(&*set, "core cpuset")?));
        }

        // The last-level cache is the deepest data cache level that exists.
        let levels =
            [ObjectType::L5Cache, ObjectType::L4Cache, ObjectType::L3Cache, ObjectType::L2Cache, ObjectType::L1Cache];
        if let Some(&llc_type) = levels.iter().find(|&&ty| topology.objects_with_type(ty).next().is_some()) {
            for cache in topology.objects_with_type(llc_type) {
                let Some(set) = cache.cpuset().filter(|s| !s.is_empty()) else {
                    continue;
                };
                let (level, size) = match cache.attributes() {
                    Some(ObjectAttributes::Cache(attr)) => {
                        (u8::try_from(attr.depth()).unwrap_or(u8::MAX), attr.size().map(|s| s.get()))
                    }
                    _ => (cache_level(llc_type), None),
                };
                desc.last_level_caches.push(CacheDescription::new(level, size, bitmap_to_set(&*set, "cache cpuset")?));
            }
        }
        Ok(desc)
    }
}

fn cache_level(ty: ObjectType) -> u8 {
    match ty {
        ObjectType::L1Cache => 1,
        ObjectType::L2Cache => 2,
        ObjectType::L3Cache => 3,
        ObjectType::L4Cache => 4,
        _ => 5,
    }
}

fn os_index(object: &TopologyObject, what: &str) -> Result<u32, TopologyError> {
    object
        .os_index()
        .and_then(|i| u32::try_from(i).ok())
        .ok_or_else(|| TopologyError::Hwloc { message: format!("{what} without a usable OS index") })
}

/// Copies the first NUMA distance matrix hwloc knows into the node descriptions.
fn attach_distances(topology: &Topology, nodes: &mut [NodeDescription]) -> Result<(), TopologyError> {
    let matrices = topology
        .distances_with_type(None, ObjectType::NUMANode)
        .map_err(|e| TopologyError::Hwloc { message: format!("reading NUMA distances: {e}") })?;
    let Some(matrix) = matrices.first() else {
        return Ok(());
    };
    let ids: Vec<Option<u32>> =
        matrix.objects().map(|o| o.and_then(|o| o.os_index()).and_then(|i| u32::try_from(i).ok())).collect();
    for ((from, to), value) in matrix.enumerate_distances() {
        let (Some(from), Some(to)) = (ids[from], ids[to]) else {
            continue;
        };
        let value = u32::try_from(value).map_err(|_| TopologyError::Hwloc {
            message: format!("distance {value} from node {from} to {to} does not fit in 32 bits"),
        })?;
        if let Some(node) = nodes.iter_mut().find(|n| n.id == NumaNodeId(from)) {
            node.distances.push((NumaNodeId(to), value));
        }
    }
    Ok(())
}

fn bitmap_to_set(bitmap: &impl Borrow<Bitmap>, what: &str) -> Result<CpuSet, TopologyError> {
    let bitmap: &Bitmap = bitmap.borrow();
    if bitmap.weight().is_none() {
        return Err(TopologyError::Hwloc { message: format!("{what} is infinite") });
    }
    let ids = bitmap
        .iter_set()
        .map(|i| {
            let i = usize::from(i);
            u32::try_from(i).ok().filter(|&i| i <= CpuId::MAX.0).map(CpuId).ok_or_else(|| TopologyError::Hwloc {
                message: format!("{what} holds CPU {i}, above the supported maximum"),
            })
        })
        .collect::<Result<Vec<CpuId>, _>>()?;
    CpuSet::new(ids).map_err(|_| TopologyError::Hwloc { message: format!("{what} is empty") })
}
