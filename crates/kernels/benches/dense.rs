//! Dense-family benchmarks against the plain Rust loops they must keep up with.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use strata_kernels::{KernelContext, structural};
use strata_tensor::TypedTensor;

fn permute(c: &mut Criterion) {
    let ctx = KernelContext::sequential();
    let shape = [64usize, 64, 64, 32]; // 8 Mi f64 = 64 MiB
    let src = TypedTensor::from_fn(&shape, |i| (i[0] + i[1] + i[2] + i[3]) as f64).unwrap();
    let mut out = vec![0.0f64; src.len()];
    let mut g = c.benchmark_group("permute_64MiB");
    g.sample_size(10).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_millis(500));
    g.bench_function("memcpy", |b| b.iter(|| out.copy_from_slice(black_box(src.data()))));
    let view = src.view().permute(&[3, 2, 1, 0]).unwrap();
    g.bench_function("strata_3210", |b| {
        b.iter(|| structural::copy_into_slice(&ctx, black_box(&view), &mut out).unwrap())
    });
    g.finish();
}

criterion_group!(benches, permute);
criterion_main!(benches);
