//! reduction kernels (being written).
