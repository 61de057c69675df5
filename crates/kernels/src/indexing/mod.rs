//! Indexing kernels with StableHLO/XLA semantics: `gather`, `scatter`, `slice`,
//! `dynamic_slice`, `dynamic_update_slice`, `pad`, `concatenate` and `reverse`.
//!
//! Every kernel reads its operands through [`TensorRead`](strata_tensor::TensorRead) (owned
//! tensors or views of any strides, every dtype, rank 0 and empty tensors), validates its
//! whole input before allocating or writing anything, and returns a fresh row-major
//! [`Tensor`](strata_tensor::Tensor). Indices are int32 or int64; any other index dtype is a
//! dtype-mismatch error.
//!
//! Out-of-range starts follow XLA exactly: `gather`, `dynamic_slice` and
//! `dynamic_update_slice` clamp each start so the window fits; `scatter` skips a window
//! that would not fit, whole.
//!
//! The four index-driven ops (gather, scatter and the dynamic forms) compile a plan from
//! shapes, strides and config; an [`IndexedPlanCache`] (one per domain) keeps the plans of
//! recent calls. Large gathers and scatters split over the context's workers with results
//! identical for every worker count (see [`scatter`] for its deterministic order).

mod concat;
mod copy;
mod dynamic;
mod gather;
mod index_source;
mod pad;
mod parallel;
mod plan_cache;
mod scatter;
mod slice;

pub use concat::concatenate;
pub use dynamic::{StartIndices, dynamic_slice, dynamic_update_slice};
pub use gather::gather;
pub use pad::pad;
pub use plan_cache::IndexedPlanCache;
pub use scatter::scatter;
pub use slice::{reverse, slice};

#[cfg(test)]
mod tests;
