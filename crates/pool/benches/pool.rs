//! Acquire + release of a retained 8 MiB buffer against a fresh allocation plus first
//! write of 8 MiB (the cost the pool exists to avoid).
//!
//! Note on the "fresh" cases: glibc raises its mmap threshold dynamically after the
//! first 8 MiB chunk is freed, and then recycles that chunk itself, so within this loop
//! a "fresh" `Vec` gets warm, already-faulted memory. To measure really fresh pages (the
//! situation of a long-running process with a fragmented heap, or any allocation above
//! glibc's 32 MiB ceiling), run with
//! `GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072 cargo bench -p strata-pool`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use strata_pool::BufferPool;

/// 8 MiB of f64.
const LEN: usize = 1 << 20;

fn retained_vs_fresh(c: &mut Criterion) {
    let mut g = c.benchmark_group("pool_8mib");
    let pool = BufferPool::new(64 << 20);
    drop(pool.acquire_zeroed::<f64>(LEN).expect("warm-up acquire"));

    g.bench_function("retained_acquire_for_overwrite_release", |b| {
        b.iter(|| {
            let loan = pool.acquire_for_overwrite::<f64>(black_box(LEN)).expect("acquire");
            black_box(&loan);
        })
    });
    // The floor the hot path is built from: two uncontended lock/unlock pairs (acquire
    // and release each take the pool lock once) and one Arc clone/drop (the loan's
    // handle on the pool). Measured in the same run to calibrate a loaded machine.
    let floor = std::sync::Arc::new(std::sync::Mutex::new(0u64));
    g.bench_function("floor_two_mutex_pairs_and_arc_clone", |b| {
        b.iter(|| {
            let handle = std::sync::Arc::clone(black_box(&floor));
            *handle.lock().unwrap_or_else(|e| e.into_inner()) += 1;
            *floor.lock().unwrap_or_else(|e| e.into_inner()) += 1;
            black_box(handle);
        })
    });
    g.bench_function("retained_acquire_zeroed_release", |b| {
        b.iter(|| {
            let loan = pool.acquire_zeroed::<f64>(black_box(LEN)).expect("acquire");
            black_box(&loan[LEN - 1]);
        })
    });
    g.bench_function("retained_acquire_release_plus_write", |b| {
        b.iter(|| {
            let loan = pool.acquire_for_overwrite::<f64>(black_box(LEN)).expect("acquire");
            let (loan, ()) = loan.write_with(|s| s.fill(1.0));
            black_box(&loan[LEN - 1]);
        })
    });
    g.bench_function("fresh_vec_alloc_plus_first_write", |b| {
        b.iter(|| {
            let mut v: Vec<f64> = Vec::with_capacity(black_box(LEN));
            v.resize(LEN, 1.0);
            black_box(&v[LEN - 1]);
        })
    });
    // What an output buffer costs without a pool today: `vec![zero; n]` and then the
    // kernel's write (when glibc recycles the freed chunk, calloc must memset it).
    g.bench_function("fresh_vec_zeroed_plus_write", |b| {
        b.iter(|| {
            let mut v = vec![0.0f64; black_box(LEN)];
            v.fill(1.0);
            black_box(&v[LEN - 1]);
        })
    });
    g.finish();
}

criterion_group!(benches, retained_vs_fresh);
criterion_main!(benches);
