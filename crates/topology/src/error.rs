//! The one error type of this crate.

use std::path::PathBuf;

use crate::cpuset::{CpuId, NumaNodeId};

/// Why a Linux cpulist string (such as `0-3,8,10-11`) was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CpuListError {
    /// The list holds no CPU at all (empty or only whitespace).
    #[error("the list is empty")]
    Empty,
    /// A comma-separated item is empty (`0,,2`, a leading or trailing comma).
    #[error("item {index} is empty")]
    EmptyItem {
        /// Zero-based index of the empty item.
        index: usize,
    },
    /// A token is not a decimal CPU number.
    #[error("`{token}` is not a CPU number")]
    NotANumber {
        /// The offending token.
        token: String,
    },
    /// A number does not fit in the id type at all.
    #[error("`{token}` overflows a CPU id")]
    Overflow {
        /// The offending token.
        token: String,
    },
    /// A number fits but exceeds [`CpuId::MAX`].
    #[error("CPU id {id} exceeds the supported maximum {max}", max = CpuId::MAX.0)]
    IdTooLarge {
        /// The rejected id.
        id: u64,
    },
    /// A range whose end is below its start (`7-3`).
    #[error("range {start}-{end} is reversed")]
    ReversedRange {
        /// First number of the range.
        start: u32,
        /// Last number of the range.
        end: u32,
    },
}

/// Everything that can go wrong while describing, discovering or pinning CPUs.
///
/// Messages name what was expected and what was found, and the file involved when
/// one was read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyError {
    /// A [`crate::CpuSet`] must hold at least one CPU.
    #[error("{context}: a CPU set must not be empty")]
    EmptyCpuSet {
        /// The operation that would have produced the empty set.
        context: &'static str,
    },
    /// A CPU id above [`CpuId::MAX`] was given.
    #[error("{context}: CPU id {id} exceeds the supported maximum {max}", max = CpuId::MAX.0)]
    CpuIdTooLarge {
        /// The operation that received the id.
        context: &'static str,
        /// The rejected id.
        id: u32,
    },
    /// A cpulist string could not be parsed.
    #[error("invalid cpulist `{input}`: {reason}")]
    CpuList {
        /// The text as given (truncated to 200 characters).
        input: String,
        /// What is wrong with it.
        reason: CpuListError,
    },
    /// A file needed for discovery could not be read.
    #[error("cannot read {path}: {source}", path = path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating-system error.
        source: std::io::Error,
    },
    /// A file was read but its contents do not have the expected form.
    #[error("malformed {path}: {reason}", path = path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What was expected and what was found.
        reason: String,
    },
    /// Two node descriptions carry the same node id.
    #[error("NUMA node {node} is described twice")]
    DuplicateNode {
        /// The repeated id.
        node: NumaNodeId,
    },
    /// Two nodes claim the same CPU.
    #[error("CPU {cpu} belongs to both NUMA node {first} and node {second}")]
    OverlappingNodes {
        /// The shared CPU.
        cpu: CpuId,
        /// The first node claiming it.
        first: NumaNodeId,
        /// The second node claiming it.
        second: NumaNodeId,
    },
    /// A node id that the topology does not know (or that has no allowed CPU).
    #[error("NUMA node {node} is not a usable node of this topology (usable: {usable})")]
    UnknownNode {
        /// The requested node.
        node: NumaNodeId,
        /// The usable nodes, comma separated.
        usable: String,
    },
    /// The process may run on none of the CPUs the topology describes.
    #[error("no allowed CPU: the affinity {allowed} shares no CPU with the machine's {present}")]
    NoAllowedCpus {
        /// The affinity mask, as a cpulist.
        allowed: String,
        /// The CPUs the machine describes, as a cpulist.
        present: String,
    },
    /// A CPU quota file holds an impossible value.
    #[error("invalid CPU quota in {path}: {reason}", path = path.display())]
    InvalidQuota {
        /// The cgroup file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A thread count (from `RAYON_NUM_THREADS` or given explicitly) is zero or malformed.
    #[error("invalid thread count from {origin}: `{value}` ({reason})")]
    InvalidThreadCount {
        /// Where the value came from, e.g. `RAYON_NUM_THREADS`.
        origin: &'static str,
        /// The value as given.
        value: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// A synthetic description is impossible (zero nodes, zero cores, too many CPUs...).
    #[error("invalid synthetic topology: {reason}")]
    InvalidDescription {
        /// What is wrong.
        reason: String,
    },
    /// Reading or setting a thread's affinity failed.
    #[error("{op} failed: {source}")]
    Affinity {
        /// The system call, e.g. `sched_setaffinity`.
        op: &'static str,
        /// The operating-system error.
        source: std::io::Error,
    },
    /// The request cannot be served on this platform or build.
    #[error("unsupported: {what}")]
    Unsupported {
        /// What was asked for.
        what: &'static str,
    },
    /// The hwloc library reported an error (feature `hwloc`).
    #[error("hwloc: {message}")]
    Hwloc {
        /// hwloc's description of the failure.
        message: String,
    },
}

impl TopologyError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        TopologyError::Io { path: path.into(), source }
    }

    pub(crate) fn malformed(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        TopologyError::Malformed { path: path.into(), reason: reason.into() }
    }
}
