//! # strata-topology: the machine this process may use
//!
//! CPU ids and sets, NUMA nodes, cores and SMT siblings, cache groups, node distances,
//! process affinity, cgroup CPU quota and thread pinning.
//!
//! ```
//! use strata_topology::{CpuId, CpuSet};
//!
//! let cpus: CpuSet = "0-3,8".parse()?;
//! assert_eq!(cpus.len(), 5);
//! assert!(cpus.contains(CpuId(8)));
//! # Ok::<(), strata_topology::TopologyError>(())
//! ```
#![deny(missing_docs)]

mod cpuset;
mod error;

pub use cpuset::{CpuId, CpuSet, NumaNodeId};
pub use error::{CpuListError, TopologyError};
