//! analytic kernels (being written).
