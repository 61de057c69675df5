//! Tests of the indexing kernels against independent reference loops written from the
//! StableHLO definitions (multi-index arithmetic only, no strides, no plans).

mod cache;
mod combine;
mod errors;
mod gather;
mod scatter;
mod shape_ops;
mod support;
