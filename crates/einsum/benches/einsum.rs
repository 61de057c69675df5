//! The tensor-network suite as einsum strings (benches/workloads.txt), run through the
//! facade's cached `einsum` at 1 and 2 threads, plus the fixed cost of a cache hit on a
//! tiny expression and the cost of planning (path search and layouts) on a miss.
//!
//! Throughput is reported in flops (opt_einsum's count of the chosen path), so Criterion's
//! "elem/s" reads as flop/s. The same workloads run in numpy, opt_einsum and JAX with
//! `benches/peers.py`; see docs/PERFORMANCE.md for how the two are compared.
//!
//! `cargo bench -p strata-einsum --bench einsum` (add `-- <filter>` for one workload).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use strata_backend::CpuBackend;
use strata_einsum::PreparedEinsum;
use strata_tensor::{TensorRead, TypedTensor};

#[path = "workloads.rs"]
mod workloads;
use workloads::{operands, workloads};

fn tensor_networks(c: &mut Criterion) {
    for threads in [1, 2] {
        let Ok(backend) = CpuBackend::with_threads(threads) else { continue };
        let mut g = c.benchmark_group(format!("einsum_tn_{threads}t"));
        g.sample_size(20);
        for w in workloads() {
            let tensors = operands(&w);
            let ops: Vec<TensorRead<'_>> = tensors.iter().map(Into::into).collect();
            let shapes: Vec<&[usize]> = w.shapes.iter().map(Vec::as_slice).collect();
            let flops = backend.einsum_prepare(&w.spec, &shapes).unwrap().path().flops();
            g.throughput(Throughput::Elements(flops as u64));
            g.bench_function(&w.name, |b| b.iter(|| black_box(backend.einsum(&w.spec, &ops).unwrap())));
        }
        g.finish();
    }
}

fn fixed_costs(c: &mut Criterion) {
    let backend = CpuBackend::with_threads(1).unwrap();
    let a = TypedTensor::from_fn(&[2, 2], |i| (i[0] + i[1]) as f64).unwrap();
    let b = TypedTensor::from_fn(&[2, 2], |i| (i[0] * i[1]) as f64).unwrap();
    let mut g = c.benchmark_group("einsum_fixed_cost");
    g.bench_function("cached_2x2_matmul", |bch| {
        bch.iter(|| black_box(backend.einsum("ij,jk->ik", &[(&a).into(), (&b).into()]).unwrap()))
    });
    g.bench_function("dot_general_2x2_matmul", |bch| {
        bch.iter(|| black_box(strata_tensor::ContractionOps::matmul(&backend, (&a).into(), (&b).into()).unwrap()))
    });
    for w in workloads().iter().filter(|w| ["dmrg_heff_chi64", "mera_ascend_chi8"].contains(&w.name.as_str())) {
        let shapes: Vec<&[usize]> = w.shapes.iter().map(Vec::as_slice).collect();
        g.bench_function(format!("plan_{}", w.name), |bch| {
            bch.iter(|| black_box(PreparedEinsum::new(&w.spec, &shapes).unwrap()))
        });
    }
    g.finish();
}

criterion_group!(benches, tensor_networks, fixed_costs);
criterion_main!(benches);
