//! # strata-provider: GEMM and contraction providers
//!
//! The provider interface, capability declarations, bundles, and the built-in faer,
//! BLAS and injected providers.
#![deny(missing_docs)]
