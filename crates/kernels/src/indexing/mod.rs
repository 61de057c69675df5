//! indexing kernels (being written).
