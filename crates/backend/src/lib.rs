//! # strata-backend: the facade
//!
//! `CpuBackend` and the re-exports users need.
#![deny(missing_docs)]
