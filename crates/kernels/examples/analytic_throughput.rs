//! Throughput of the real analytic functions on one thread, in cache (64 Ki elements)
//! and from memory (8 Mi), into a preallocated output, timed by the thread's CPU clock so
//! that other processes on a shared machine move the figures less. Inputs as the bench's
//! `analytic` group: exp on [-5, 5), log on (0, 100], sin on [-30, 30), tanh on [-4, 4).
//!
//! ```sh
//! cargo run --release -p strata-kernels --example analytic_throughput
//! python3 crates/kernels/examples/analytic_throughput.py   # numpy, the same inputs
//! ```

use std::hint::black_box;

use strata_kernels::{KernelContext, analytic};
use strata_tensor::{Result, Scalar, Tensor, TensorRead, TensorWrite};

type Op = fn(&KernelContext<'_>, TensorRead<'_>, TensorWrite<'_>) -> Result<()>;

/// A function's name, its `_into` op, and the map from [-1, 1) to its inputs.
type Case = (&'static str, Op, fn(f64) -> f64);

/// Seconds of CPU time this thread has used.
fn thread_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the call.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// `len` values of `f(u)` for pseudo-random `u` in [-1, 1).
fn inputs(len: usize, f: fn(f64) -> f64) -> Vec<f64> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            f((state >> 11) as f64 / (1u64 << 52) as f64 - 1.0)
        })
        .collect()
}

/// Median elements per second of `op` over `a` into `out`.
fn rate(ctx: &KernelContext<'_>, op: Op, a: &Tensor, out: &mut Tensor, len: usize) -> f64 {
    let repetitions = ((1usize << 24) / len).max(1);
    let mut samples: Vec<f64> = (0..11)
        .map(|_| {
            let start = thread_seconds();
            for _ in 0..repetitions {
                op(ctx, a.into(), out.into()).expect("a float tensor");
                black_box(&mut *out);
            }
            (repetitions * len) as f64 / (thread_seconds() - start)
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn run<T: Scalar>(ctx: &KernelContext<'_>, name: &str, op: Op, values: &[f64], narrow: fn(f64) -> T) {
    let len = values.len();
    let a = Tensor::from_vec(values.iter().map(|&x| narrow(x)).collect::<Vec<T>>(), &[len]).expect("a 1-D tensor");
    let mut out = Tensor::from_vec(vec![narrow(0.0); len], &[len]).expect("a 1-D tensor");
    let per_second = rate(ctx, op, &a, &mut out, len);
    let bytes = 2 * size_of::<T>();
    println!(
        "{name:<5} {:<4} {len:>8}  {:6.3} Gelem/s  {:6.2} GB/s",
        std::any::type_name::<T>(),
        per_second * 1e-9,
        per_second * bytes as f64 * 1e-9
    );
}

fn main() {
    let ctx = KernelContext::sequential();
    let funcs: [Case; 4] = [
        ("exp", analytic::exp_into, |u| 5.0 * u),
        ("log", analytic::log_into, |u| 50.0 * (u + 1.0) + 1e-3),
        ("sin", analytic::sin_into, |u| 30.0 * u),
        ("tanh", analytic::tanh_into, |u| 4.0 * u),
    ];
    for len in [1 << 16, 1 << 23] {
        for (name, op, map) in funcs {
            let values = inputs(len, map);
            run::<f64>(&ctx, name, op, &values, |x| x);
            run::<f32>(&ctx, name, op, &values, |x| x as f32);
        }
    }
}
