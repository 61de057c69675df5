//! Config: grouped_gemm (being written).
