//! Fixed cost of the facade: 1-element add through the backend and inside a session,
//! 2x2 matmul, and two threads each with a budget-1 backend (throughput vs one thread).
//!
//! `cargo bench -p strata-backend --bench facade`

use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use strata_backend::prelude::*;

fn small_ops(backend: &CpuBackend, a: &Tensor, m: &Tensor, iters: u64) {
    for _ in 0..iters {
        black_box(backend.add(a, a).unwrap());
        black_box(backend.matmul(m, m).unwrap());
    }
}

/// Runs `iters` small-op rounds on each of `threads` threads (each with its own budget-1
/// backend) and returns the wall time.
fn parallel_rounds(backends: &[CpuBackend], iters: u64) -> Duration {
    let barrier = Arc::new(Barrier::new(backends.len() + 1));
    let handles: Vec<_> = backends
        .iter()
        .cloned()
        .map(|b| {
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                let a = Tensor::from(TypedTensor::from_vec(vec![1.0f32], &[1]).unwrap());
                let m = Tensor::from(TypedTensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap());
                barrier.wait();
                small_ops(&b, &a, &m, iters);
            })
        })
        .collect();
    barrier.wait();
    let start = Instant::now();
    for h in handles {
        h.join().unwrap();
    }
    start.elapsed()
}

fn facade(c: &mut Criterion) {
    let backend = CpuBackend::with_threads(1).unwrap();
    let one = Tensor::from(TypedTensor::from_vec(vec![1.0f32], &[1]).unwrap());
    let m = Tensor::from(TypedTensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap());

    c.bench_function("add_1_element_facade", |b| b.iter(|| backend.add(&one, &one).unwrap()));
    c.bench_function("add_1_element_session", |b| {
        backend.with_session(|s| b.iter(|| s.add(&one, &one).unwrap())).unwrap()
    });
    c.bench_function("matmul_2x2_facade", |b| b.iter(|| backend.matmul(&m, &m).unwrap()));

    let one_thread = vec![CpuBackend::with_threads(1).unwrap()];
    let two_threads = vec![CpuBackend::with_threads(1).unwrap(), CpuBackend::with_threads(1).unwrap()];
    c.bench_function("small_ops_1_thread", |b| b.iter_custom(|iters| parallel_rounds(&one_thread, iters)));
    // Two threads do twice the work: equal time means 2x throughput.
    c.bench_function("small_ops_2_threads_each_budget_1", |b| {
        b.iter_custom(|iters| parallel_rounds(&two_threads, iters))
    });
}

criterion_group!(benches, facade);
criterion_main!(benches);
