//! Runs one op many times, for instruction counts (callgrind) and wall time of the
//! facade's per-op cost. Uses only the public facade, so the same file builds against
//! older commits for before/after comparisons.
//!
//! ```sh
//! cargo build --release -p strata-backend --example op_cost
//! # instructions per op: the difference of two runs divided by the extra iterations
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/op_cost add1 1000
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/op_cost add1 2000
//! # wall time per op (median of 15 batches)
//! target/release/examples/op_cost add_1m 200 --time
//! ```
//!
//! Cases: `add1` (1-element f32 add, budget-1 backend: inline), `add1_session` (the same
//! in a session), `matmul2` (2x2 f32), `add_64k` (65 536-element f64 add, budget 2: the
//! domain's workers), `add_1m` (1 Mi elements, budget 2), `matmul_256` (f64, budget 2).

use std::hint::black_box;
use std::time::Instant;

use strata_backend::prelude::*;

fn f32s(data: Vec<f32>, shape: &[usize]) -> Tensor {
    TypedTensor::from_vec(data, shape).unwrap().into()
}

fn f64s(len: usize, shape: &[usize]) -> Tensor {
    TypedTensor::from_vec((0..len).map(|i| (i % 17) as f64).collect(), shape).unwrap().into()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (case, iters) = match (args.get(1), args.get(2).and_then(|n| n.parse::<usize>().ok())) {
        (Some(case), Some(iters)) => (case.as_str(), iters),
        _ => {
            eprintln!("usage: op_cost <case> <iterations> [--time]");
            std::process::exit(2);
        }
    };
    let time = args.iter().any(|a| a == "--time");
    let threads = strata_topology::discover().map(|t| t.allowed_cpus().len().min(2)).unwrap_or(1);
    let one = CpuBackend::with_threads(1).unwrap();
    let two = CpuBackend::with_threads(threads).unwrap();
    let x1 = f32s(vec![1.0], &[1]);
    let m2 = f32s(vec![1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let x64k = f64s(1 << 16, &[1 << 16]);
    let x1m = f64s(1 << 20, &[1 << 20]);
    let m256 = f64s(256 * 256, &[256, 256]);
    let op = |n: usize| match case {
        "add1" => (0..n).for_each(|_| drop(black_box(one.add(&x1, &x1).unwrap()))),
        "add1_session" => one.with_session(|s| (0..n).for_each(|_| drop(black_box(s.add(&x1, &x1).unwrap())))).unwrap(),
        "matmul2" => (0..n).for_each(|_| drop(black_box(one.matmul(&m2, &m2).unwrap()))),
        "add_64k" => (0..n).for_each(|_| drop(black_box(two.add(&x64k, &x64k).unwrap()))),
        "add_1m" => (0..n).for_each(|_| drop(black_box(two.add(&x1m, &x1m).unwrap()))),
        "matmul_256" => (0..n).for_each(|_| drop(black_box(two.matmul(&m256, &m256).unwrap()))),
        other => {
            eprintln!("unknown case {other}");
            std::process::exit(2);
        }
    };
    if !time {
        op(iters);
        return;
    }
    op(iters.min(10));
    let mut batches: Vec<f64> = (0..15)
        .map(|_| {
            let start = Instant::now();
            op(iters);
            start.elapsed().as_nanos() as f64 / iters as f64
        })
        .collect();
    batches.sort_by(f64::total_cmp);
    println!("{case}: median {:.0} ns/op (min {:.0}, max {:.0})", batches[7], batches[0], batches[14]);
}
