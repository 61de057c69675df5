//! The portable source: `std::thread::available_parallelism`, for systems without sysfs.

use crate::cpuset::{CpuId, CpuSet};
use crate::description::MachineDescription;
use crate::error::TopologyError;
use crate::source::TopologySource;

/// A machine known only by its CPU count: CPUs `0..n` all allowed, one node, no cache or
/// quota information.
///
/// `n` is `std::thread::available_parallelism()`. The ids are positions, not OS ids, which
/// is why explicit placement on such a topology is reported as unsupported by the layers
/// above.
#[derive(Debug, Clone, Copy, Default)]
pub struct ParallelismSource;

impl TopologySource for ParallelismSource {
    fn describe(&self) -> Result<MachineDescription, TopologyError> {
        let n = std::thread::available_parallelism()
            .map_err(|source| TopologyError::Affinity { op: "available_parallelism", source })?
            .get();
        let last = u32::try_from(n - 1).ok().filter(|&l| l <= CpuId::MAX.0).unwrap_or(CpuId::MAX.0);
        let all = CpuSet::range(CpuId(0), CpuId(last))?;
        Ok(MachineDescription::new(all, "available_parallelism"))
    }
}
