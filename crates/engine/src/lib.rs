//! # strata-engine: where work runs
//!
//! Placement resolution, CPU domains, executors (managed pinned Rayon pools and
//! caller-supplied executors) and per-domain resources. Kernels see only the
//! [`CpuDomainExecutor`] trait defined here.
#![deny(missing_docs)]

mod executor;

pub use executor::{
    AffinityClaim, CpuDomainExecutor, ExecutorCapabilities, InlineExecutor, ReentrancyBehaviour, ShutdownOwner,
};
