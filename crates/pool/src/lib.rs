//! # strata-pool: bounded typed host buffers
//!
//! A typed buffer pool with a byte cap, statistics and a NUMA allocation hook.
#![deny(missing_docs)]
