//! Batched small GEMMs and square GEMMs through the facade, best-of-N GFLOP/s, for
//! profiling (`perf record`, `valgrind --tool=callgrind`) and quick A/B runs between
//! builds. Each call allocates a fresh output, as the bench's `tn` group does.
//!
//! `cargo run --release -p strata-benches --example small_gemm_probe -- f64 1024 16 16 16 1 200`
//! (dtype, batch, m, k, n, threads, calls; batch 0 = a plain rank-2 GEMM; a trailing
//! `into` reuses one destination through `dot_general_into`, as the `gemm` group does)

use std::time::Instant;

use strata_backend::{ContractionOps, CpuBackend};
use strata_tensor::config::{DotGeneral, DotGeneralConfig};
use strata_tensor::{Tensor, TypedTensor, c32, c64};

fn filled<T: Copy>(len: usize, f: impl Fn(usize) -> T) -> Vec<T> {
    (0..len).map(f).collect()
}

fn tensors<T: Copy + strata_tensor::Scalar>(shapes: [&[usize]; 2], f: impl Fn(usize) -> T + Copy) -> (Tensor, Tensor) {
    let len = |s: &[usize]| s.iter().product::<usize>();
    let a = TypedTensor::from_vec(filled(len(shapes[0]), f), shapes[0]).expect("lhs");
    let b = TypedTensor::from_vec(filled(len(shapes[1]), f), shapes[1]).expect("rhs");
    (Tensor::from(a), Tensor::from(b))
}

/// CPU seconds of every thread of this process so far (Linux schedstat), or 0.
fn process_cpu_seconds() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return 0.0 };
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .sum::<f64>()
        / 1e9
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, d: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let dtype = args.first().map_or("f64", String::as_str);
    let (b, m, k, n, threads, calls) = (num(1, 1024), num(2, 16), num(3, 16), num(4, 16), num(5, 1), num(6, 200));
    let backend = CpuBackend::with_threads(threads).expect("backend");
    let (shapes, config): ([Vec<usize>; 2], DotGeneralConfig) = if b == 0 {
        ([vec![m, k], vec![k, n]], DotGeneralConfig::matmul())
    } else {
        ([vec![b, m, k], vec![b, k, n]], DotGeneralConfig::new(vec![0], vec![0], vec![2], vec![1]))
    };
    let shapes = [shapes[0].as_slice(), shapes[1].as_slice()];
    let x = |i: usize| ((i * 7919) % 1000) as f64 / 1000.0 - 0.5;
    let (lhs, rhs) = match dtype {
        "f32" => tensors::<f32>(shapes, |i| x(i) as f32),
        "c32" => tensors::<c32>(shapes, |i| c32::new(x(i) as f32, x(i + 1) as f32)),
        "c64" => tensors::<c64>(shapes, |i| c64::new(x(i), x(i + 1))),
        _ => tensors::<f64>(shapes, x),
    };
    let complex = dtype.starts_with('c');
    let flops = 2.0 * (b.max(1) * m * k * n) as f64 * if complex { 4.0 } else { 1.0 };
    let into = args.get(7).is_some_and(|s| s == "into");
    let mut dest = ContractionOps::dot_general(&backend, (&lhs).into(), (&rhs).into(), &config, false, false)
        .expect("dot_general");
    let mut best = f64::INFINITY;
    let mut times = Vec::with_capacity(calls);
    let cpu0 = process_cpu_seconds();
    for _ in 0..calls {
        let t = Instant::now();
        if into {
            let op = DotGeneral::new().contract([config.lhs_contracting[0]], [config.rhs_contracting[0]]);
            let op = if b == 0 { op } else { op.batch([0], [0]) };
            backend.dot_general_into(&lhs, &rhs, &op, &mut dest).expect("dot_general_into");
            std::hint::black_box(&dest);
        } else {
            let out = ContractionOps::dot_general(&backend, (&lhs).into(), (&rhs).into(), &config, false, false)
                .expect("dot_general");
            std::hint::black_box(&out);
            drop(out);
        }
        let s = t.elapsed().as_secs_f64();
        times.push(s);
        best = best.min(s);
    }
    let cpu = (process_cpu_seconds() - cpu0) / calls as f64;
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "{dtype} b={b} m={m} k={k} n={n} t={threads}: best {:.1} GFLOP/s, median {:.1} ({:.1} us best), \
         per process CPU-second {:.1}",
        flops / best / 1e9,
        flops / median / 1e9,
        best * 1e6,
        flops / cpu / 1e9
    );
}
