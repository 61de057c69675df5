//! Shared helpers for strata's Criterion benchmarks (the benchmarks live in `benches/`).
