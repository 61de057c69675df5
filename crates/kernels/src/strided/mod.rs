//! strided kernels (being written).
