//! # strata-kernels: the algorithms
//!
//! Strided iteration, every op family, dot_general planning and plan caches. Kernels are
//! free functions that receive the parallelism they may use ([`Parallelism`]) explicitly.
#![deny(missing_docs)]

mod par;

pub use par::Parallelism;
