//! Contractions: `dot_general`, grouped GEMM and the BLAS-1 operations.
//!
//! **How a `dot_general` runs.** The config is validated against the operand shapes
//! first (nothing is written before every check passed). Then an *analysis* classifies
//! each axis as batch, m (lhs free), n (rhs free) or k (contracted) and looks for an axis
//! order in which each group collapses to one stride in every tensor that carries it.
//! Row-major, column-major, transposed and reversed operands usually collapse, so they go
//! to the GEMM provider as they are (direct strided GEMM, no copy); an operand whose axes
//! interleave badly is first copied into a compact `[batch, m, k]` / `[batch, k, n]`
//! buffer (permute-then-GEMM), or, when it is the larger operand of an unbatched product
//! with many free rows, gathered block by block, each block multiplied while it is in
//! cache (see `blocked.rs`); a destination view that cannot collapse is computed into a
//! staging tensor. Batch axes become the provider's batch stride or a loop.
//! Dot products, tiny products and empty contractions take our own loops.
//!
//! **Parallelism (SPEC §7).** One party owns it: a large GEMM gives the provider the
//! whole budget; many batch items are forked over the domain's workers with the provider
//! told to use one thread; small work stays on the calling thread. Grouped GEMM applies a
//! cost model per job (see [`grouped_gemm`]).
//!
//! **Caching.** The analysis depends only on shapes, strides, config, dtype and whether
//! the provider needs unit strides, never on data or offsets. It is looked up in the
//! domain's [`ContractionAnalysisCache`] or in a slot of a caller-held
//! [`ContractionCache`], as the [`PlanCache`] argument says.
//!
//! **Numbers.** Each output element is computed by one worker in a fixed order, so results
//! do not depend on the thread count; with the faer provider and several threads, faer's
//! own blocking decides the summation order.

mod blas1;
mod blocked;
mod cache;
mod disjoint;
mod dot_general;
mod execute;
mod grouped;
mod microkernel;
mod plan;
mod scalar;
mod small;
mod tiny;

pub use blas1::{axpby_into, norm_squared, vdot};
pub use cache::{ContractionAnalysisCache, ContractionCache, PlanCache};
pub use dot_general::{MACS_PER_ELEMENT, dot_general, dot_general_into, dot_general_work};
pub use grouped::{grouped_gemm, grouped_gemm_work};
pub use scalar::ContractScalar;
