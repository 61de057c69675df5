//! In-cache elementwise ops: 4 Ki to 256 Ki elements into a preallocated output, where
//! the operands stay in L1/L2 and per-call cost and vector width decide; at the run's
//! thread count, beside strata at one thread (small work must not get slower with
//! more threads).

use strata_tensor::config::BinaryOp;

use super::flat::size_name;
use super::streaming::binary_into;
use crate::suite::{Case, Unit};

/// The in-cache cases.
pub fn cases(threads: usize) -> Vec<Case> {
    let mut v = Vec::new();
    for len in [4 << 10, 16 << 10, 64 << 10, 256 << 10] {
        v.push(
            Case::new(format!("add_f64_{}_into", size_name(len)), "in-cache", Unit::GigabytePerSecond, threads)
                .peers(&["ndarray", "numpy"])
                .references(&["rust_loop", "strata_1t"])
                .target("ref:numpy:1")
                .run(move |s| binary_into::<f64>(s, len, BinaryOp::Add, true)),
        );
    }
    v.push(
        Case::new("mul_f32_64k_into", "in-cache", Unit::GigabytePerSecond, threads)
            .peers(&["ndarray", "numpy"])
            .references(&["rust_loop", "strata_1t"])
            .target("ref:numpy:1")
            .run(|s| binary_into::<f32>(s, 64 << 10, BinaryOp::Mul, true)),
    );
    v
}
