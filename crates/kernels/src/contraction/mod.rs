//! contraction kernels (being written).
