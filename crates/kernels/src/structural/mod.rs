//! structural kernels (being written).
