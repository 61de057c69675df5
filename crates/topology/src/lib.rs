//! # strata-topology: the machine this process may use
//!
//! CPU ids and sets, NUMA nodes, cores and SMT siblings, cache groups, node distances,
//! process affinity, cgroup CPU quota and thread pinning.
#![deny(missing_docs)]
