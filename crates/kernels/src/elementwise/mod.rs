//! elementwise kernels (being written).
