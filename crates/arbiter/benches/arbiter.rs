//! Admission costs: the uncontended fast path against a bare mutex, and scaling of two
//! threads on disjoint CPUs against two threads on the same CPU.
//!
//! Run: `cargo bench -p strata-arbiter --bench arbiter`.

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use strata_arbiter::{AdmissionRequest, ResourceArbiter};
use strata_topology::{CpuId, CpuSet};

fn uncontended(c: &mut Criterion) {
    let mut group = c.benchmark_group("uncontended acquire+release");
    let mutex = parking_lot::Mutex::new(0u64);
    group.bench_function("parking_lot Mutex lock+unlock", |b| {
        b.iter(|| {
            let mut guard = mutex.lock();
            *guard += 1;
            black_box(&*guard);
        })
    });
    let arbiter = ResourceArbiter::new();
    let single = AdmissionRequest::cpu(CpuId(0));
    group.bench_function("arbiter, 1 CPU", |b| b.iter(|| black_box(arbiter.acquire(black_box(&single)).unwrap())));
    let four = AdmissionRequest::Cpus(CpuSet::range(CpuId(0), CpuId(3)).unwrap());
    group.bench_function("arbiter, 4 CPUs", |b| b.iter(|| black_box(arbiter.acquire(black_box(&four)).unwrap())));
    group.bench_function("arbiter, try 1 CPU", |b| {
        b.iter(|| black_box(arbiter.try_acquire(black_box(&single)).unwrap()))
    });
    group.bench_function("arbiter, exclusive (queued path)", |b| {
        b.iter(|| black_box(arbiter.acquire(&AdmissionRequest::Exclusive).unwrap()))
    });
    group.finish();
}

/// Runs `body(thread, iters)` on `threads` threads started together; returns the time
/// until the last one finished.
fn timed_on_threads(threads: usize, iters: u64, body: impl Fn(usize, u64) + Sync) -> Duration {
    let start_line = Barrier::new(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (start_line, body) = (&start_line, &body);
                s.spawn(move || {
                    start_line.wait();
                    let started = Instant::now();
                    body(t, iters);
                    started.elapsed()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("bench thread panicked")).max().unwrap_or_default()
    })
}

fn scaling(c: &mut Criterion) {
    let mut group = c.benchmark_group("threads x (acquire+release) per iteration");
    let arbiter = ResourceArbiter::new();
    let requests = [AdmissionRequest::cpu(CpuId(0)), AdmissionRequest::cpu(CpuId(1))];
    let cycle = |request: &AdmissionRequest, iters: u64| {
        for _ in 0..iters {
            drop(black_box(arbiter.acquire(request).unwrap()));
        }
    };
    group.bench_function("1 thread, CPU 0", |b| {
        b.iter_custom(|iters| timed_on_threads(1, iters, |_, n| cycle(&requests[0], n)))
    });
    group.bench_function("2 threads, CPUs 0 and 1 (disjoint)", |b| {
        b.iter_custom(|iters| timed_on_threads(2, iters, |t, n| cycle(&requests[t], n)))
    });
    group.bench_function("2 threads, both CPU 0 (same)", |b| {
        b.iter_custom(|iters| timed_on_threads(2, iters, |_, n| cycle(&requests[0], n)))
    });
    // The peers' design for reference: one global lock taken by every caller.
    let global = parking_lot::Mutex::new(0u64);
    group.bench_function("1 thread, parking_lot Mutex", |b| {
        b.iter_custom(|iters| {
            timed_on_threads(1, iters, |_, n| {
                for _ in 0..n {
                    *global.lock() += 1;
                }
            })
        })
    });
    group.bench_function("2 threads, one shared parking_lot Mutex", |b| {
        b.iter_custom(|iters| {
            timed_on_threads(2, iters, |_, n| {
                for _ in 0..n {
                    *global.lock() += 1;
                }
            })
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = uncontended, scaling
}
criterion_main!(benches);
