//! The seam between "where the machine description comes from" and everything else.

use crate::description::MachineDescription;
use crate::error::TopologyError;
use crate::topology::CpuTopology;

/// Something that can describe a machine: the live system, a fixture folder, a synthetic
/// description, hwloc, or a test double.
///
/// Object safe, so layers above hold a `Box<dyn TopologySource>` and tests swap in fakes.
///
/// ```
/// use strata_topology::{CpuSet, MachineDescription, TopologyError, TopologySource};
///
/// /// A machine that only knows its affinity.
/// struct Fixed(CpuSet);
///
/// impl TopologySource for Fixed {
///     fn describe(&self) -> Result<MachineDescription, TopologyError> {
///         Ok(MachineDescription::new(self.0.clone(), "fixed"))
///     }
/// }
///
/// let source: Box<dyn TopologySource> = Box::new(Fixed("0-3".parse()?));
/// let topo = source.load()?;
/// assert_eq!(topo.nodes().len(), 1);
/// assert_eq!(topo.cores().len(), 4);
/// # Ok::<(), TopologyError>(())
/// ```
pub trait TopologySource: Send + Sync {
    /// The raw description of the machine, not yet restricted to the allowed CPUs.
    fn describe(&self) -> Result<MachineDescription, TopologyError>;

    /// The checked topology: [`CpuTopology::from_description`] of [`Self::describe`].
    fn load(&self) -> Result<CpuTopology, TopologyError> {
        CpuTopology::from_description(self.describe()?)
    }
}

/// The source for the running system: sysfs on Linux, `available_parallelism` elsewhere.
pub fn live_source() -> Box<dyn TopologySource> {
    #[cfg(target_os = "linux")]
    {
        Box::new(crate::sysfs::SysfsSource::live())
    }
    #[cfg(not(target_os = "linux"))]
    {
        Box::new(crate::fallback::ParallelismSource)
    }
}

/// Discovers the running machine with [`live_source`].
///
/// ```
/// let topo = strata_topology::discover()?;
/// assert!(topo.allowed_cpus().len() >= 1);
/// assert!(topo.hardware_thread_budget().get() <= topo.allowed_cpus().len());
/// # Ok::<(), strata_topology::TopologyError>(())
/// ```
pub fn discover() -> Result<CpuTopology, TopologyError> {
    live_source().load()
}

/// The running machine's default thread budget: `RAYON_NUM_THREADS` when set (zero or
/// malformed is an error), else min(allowed CPUs, ceil(cgroup quota)).
pub fn default_thread_budget() -> Result<std::num::NonZeroUsize, TopologyError> {
    discover()?.default_thread_budget()
}
