//! fusion kernels (being written).
