//! # strata-kernels: the algorithms
//!
//! Strided iteration, every op family, dot_general planning and plan caches. Kernels are
//! free functions that receive the resources they may use ([`KernelContext`]: the
//! parallelism, and the domain's pool) explicitly.
#![deny(missing_docs)]

mod alloc;
mod context;
mod par;

pub mod analytic;
pub mod contraction;
pub mod elementwise;
pub mod fusion;
pub mod indexing;
pub mod lru;
pub mod reduction;
pub mod strided;
pub mod structural;

pub use context::KernelContext;
pub use par::{Parallelism, ScheduleAudit};
