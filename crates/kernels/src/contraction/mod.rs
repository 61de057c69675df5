//! Contractions: `dot_general`, grouped GEMM and the BLAS-1 operations.

mod blas1;
mod cache;
mod disjoint;
mod dot_general;
mod execute;
mod grouped;
mod plan;
mod scalar;
mod small;
mod strided_copy;

pub use blas1::{axpby_into, norm_squared, vdot};
pub use cache::{ContractionAnalysisCache, ContractionCache, PlanCache};
pub use dot_general::{dot_general, dot_general_into};
pub use grouped::grouped_gemm;
pub use scalar::ContractScalar;
