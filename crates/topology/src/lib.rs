//! # strata-topology: the machine this process may use
//!
//! Discovers which CPUs, NUMA nodes, cores (with their SMT siblings), last-level caches
//! and how much cgroup CPU quota this process may use, and pins threads to CPU sets.
//!
//! **Promises.** OS ids are kept as the kernel numbers them, never renumbered. A
//! [`CpuSet`] is never empty. A [`CpuTopology`] only holds allowed CPUs: every usable
//! node, core and cache group is restricted to the process affinity, and nodes without an
//! allowed CPU are dropped. The default thread budget is min(allowed CPUs, ceil(quota)),
//! overridden by `RAYON_NUM_THREADS` (0 means the default, as in Rayon); malformed values are errors, not silent
//! fallbacks. Bad input (malformed files, cpulists, quotas, environment values) gives a
//! [`TopologyError`], never a panic. Discovery only reads; it never writes to sysfs or the
//! cgroup tree.
//!
//! **Does not.** Start threads, bind memory, or decide placement: the engine layer does
//! that with what this crate reports. Sources sit behind the object-safe
//! [`TopologySource`] trait: [`SysfsSource`] (live Linux or a fixture folder),
//! [`SyntheticTopology`], [`ParallelismSource`] (portable fallback) and, with the `hwloc`
//! feature, `HwlocSource`.
//!
//! ```
//! use strata_topology::{CpuId, CpuQuota, CpuSet, SyntheticTopology, TopologySource};
//!
//! let cpus: CpuSet = "0-3,8".parse()?;
//! assert_eq!(cpus.to_string(), "0-3,8");
//!
//! // Two nodes of four cores with two threads each, in a container with 1.5 CPUs.
//! let topo = SyntheticTopology::new(2, 4, 2)?
//!     .with_quota(CpuQuota::new(150_000, 100_000)?)
//!     .load()?;
//! assert_eq!(topo.allowed_cpus().len(), 16);
//! assert_eq!(topo.smt_siblings(CpuId(0)).map(|s| s.to_string()), Some("0,8".into()));
//! assert_eq!(topo.thread_budget(None)?.get(), 2);
//!
//! // The live machine.
//! let live = strata_topology::discover()?;
//! assert!(live.nodes().iter().all(|n| n.cpus().is_subset(live.allowed_cpus())));
//! # Ok::<(), strata_topology::TopologyError>(())
//! ```
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod affinity;
mod budget;
mod cgroup;
mod cpuset;
mod description;
mod error;
mod fallback;
mod files;
#[cfg(feature = "hwloc")]
mod hwloc;
mod json;
mod quota;
mod source;
mod synthetic;
mod sysfs;
mod topology;

pub use affinity::{current_thread_affinity, pin_current_thread, process_affinity};
pub use budget::{MAX_THREAD_COUNT, RAYON_NUM_THREADS, check_thread_count, parse_thread_count};
pub use cpuset::{CpuId, CpuSet, NumaNodeId};
pub use description::{CacheDescription, CoreDescription, MachineDescription, NodeDescription};
pub use error::{CpuListError, TopologyError};
pub use fallback::ParallelismSource;
#[cfg(feature = "hwloc")]
pub use hwloc::HwlocSource;
pub use quota::CpuQuota;
pub use source::{TopologySource, default_thread_budget, discover, live_source};
pub use synthetic::SyntheticTopology;
pub use sysfs::SysfsSource;
pub use topology::{CacheGroup, CpuCore, CpuNode, CpuTopology};
