//! # strata-arbiter: admission of work onto CPU sets
//!
//! Permits, exclusivity, fairness and re-entrancy detection.
#![deny(missing_docs)]
