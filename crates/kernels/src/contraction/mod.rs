//! Contractions: `dot_general`, grouped GEMM and the BLAS-1 operations.

mod cache;
mod plan;

pub use cache::{ContractionAnalysisCache, ContractionCache, PlanCache};
