//! Dense-family benchmarks against the plain Rust loops they must keep up with. All on
//! one worker (the baselines are single-threaded loops).
//!
//! Run: `cargo bench -p strata-kernels --bench dense`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkGroup, Criterion, criterion_group, criterion_main, measurement::WallTime};
use strata_engine::RayonCpuDomainExecutor;
use strata_kernels::{KernelContext, Parallelism, analytic, elementwise, fusion, reduction, structural};
use strata_tensor::config::{BinaryOp, ElementwiseFusionPlan, FusionConstant, FusionInstr, ReduceOp, UnaryOp};
use strata_tensor::{Tensor, TypedTensor};

/// Records fork-join violations of the executors used here (none are expected).
static AUDIT: strata_kernels::ScheduleAudit = strata_kernels::ScheduleAudit::new();

const N: usize = 8 << 20;

fn quick(g: &mut BenchmarkGroup<'_, WallTime>) {
    g.sample_size(10).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(300));
}

fn vector(seed: f64) -> Tensor {
    Tensor::from_vec((0..N).map(|i| (i % 1000) as f64 * 1e-3 + seed).collect::<Vec<f64>>(), &[N]).unwrap()
}

fn elementwise_and_reduce(c: &mut Criterion) {
    let ctx = KernelContext::sequential();
    let (a, b) = (vector(0.5), vector(-0.25));
    let mut out = Tensor::zeros(strata_tensor::DType::F64, &[N]).unwrap();
    let (sa, sb) = (a.as_typed::<f64>().unwrap().data(), b.as_typed::<f64>().unwrap().data());
    let mut g = c.benchmark_group("add_8M_f64");
    quick(&mut g);
    g.bench_function("slice_loop", |bch| {
        bch.iter(|| {
            let o = out.as_typed_mut::<f64>().unwrap().data_mut();
            for ((o, &x), &y) in o.iter_mut().zip(black_box(sa)).zip(black_box(sb)) {
                *o = x + y;
            }
        })
    });
    g.bench_function("strata_add_into", |bch| {
        bch.iter(|| elementwise::add_into(&ctx, (&a).into(), (&b).into(), (&mut out).into()).unwrap())
    });
    g.bench_function("strata_add_alloc", |bch| bch.iter(|| elementwise::add(&ctx, (&a).into(), (&b).into()).unwrap()));
    g.finish();

    let mut g = c.benchmark_group("sum_8M_f64");
    quick(&mut g);
    g.bench_function("read_loop", |bch| {
        bch.iter(|| {
            let mut acc = 0.0;
            for &x in black_box(sa) {
                acc += x;
            }
            acc
        })
    });
    g.bench_function("strata_sum", |bch| {
        bch.iter(|| reduction::reduce(&ctx, ReduceOp::Sum, (&a).into(), &[0]).unwrap())
    });
    g.finish();

    let mut g = c.benchmark_group("exp_8M_f64");
    quick(&mut g);
    g.bench_function("slice_loop", |bch| {
        bch.iter(|| {
            let o = out.as_typed_mut::<f64>().unwrap().data_mut();
            for (o, &x) in o.iter_mut().zip(black_box(sa)) {
                *o = x.exp();
            }
        })
    });
    g.bench_function("strata_exp_into", |bch| {
        bch.iter(|| analytic::exp_into(&ctx, (&a).into(), (&mut out).into()).unwrap())
    });
    g.finish();
}

fn permute(c: &mut Criterion) {
    let ctx = KernelContext::sequential();
    let shape = [64usize, 64, 64, 32]; // 8 Mi f64 = 64 MiB
    let src = TypedTensor::from_fn(&shape, |i| (i[0] + i[1] + i[2] + i[3]) as f64).unwrap();
    let mut out = vec![0.0f64; src.len()];
    let mut g = c.benchmark_group("permute_64MiB_f64");
    quick(&mut g);
    g.bench_function("memcpy", |b| b.iter(|| out.copy_from_slice(black_box(src.data()))));
    let view = src.view().permute(&[3, 2, 1, 0]).unwrap();
    g.bench_function("strata_3210", |b| {
        b.iter(|| structural::copy_into_slice(&ctx, black_box(&view), &mut out).unwrap())
    });
    let pool = RayonCpuDomainExecutor::new(std::sync::Arc::new(
        rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap(),
    ));
    let ctx2 = KernelContext::new(Parallelism::new(&pool, 2, &AUDIT));
    g.bench_function("strata_3210_2_workers", |b| {
        b.iter(|| structural::copy_into_slice(&ctx2, black_box(&view), &mut out).unwrap())
    });
    g.finish();
}

fn fused(c: &mut Criterion) {
    let ctx = KernelContext::sequential();
    let m = 2048;
    let x = Tensor::from(TypedTensor::from_fn(&[m, m], |i| (i[0] * 3 + i[1]) as f64 * 1e-6).unwrap());
    let y = Tensor::from(TypedTensor::from_fn(&[m, m], |i| (i[1] % 17) as f64).unwrap());
    let col = Tensor::from(TypedTensor::from_fn(&[m], |i| i[0] as f64).unwrap());
    let row = Tensor::from(TypedTensor::from_fn(&[m], |i| 1.0 / (1.0 + i[0] as f64)).unwrap());
    let mut g = c.benchmark_group("broadcast_multiply_4M_f64");
    quick(&mut g);
    g.bench_function("materialise_then_mul", |b| {
        b.iter(|| {
            let cb = structural::broadcast_in_dim(&ctx, (&col).into(), &[m, m], &[0]).unwrap();
            let rb = structural::broadcast_in_dim(&ctx, (&row).into(), &[m, m], &[1]).unwrap();
            elementwise::mul(&ctx, (&cb).into(), (&rb).into()).unwrap()
        })
    });
    g.bench_function("strata_broadcast_multiply", |b| {
        b.iter(|| fusion::broadcast_multiply(&ctx, (&col).into(), &[0], (&row).into(), &[1], &[m, m]).unwrap())
    });
    g.finish();

    // Four ops: max(x * 2 + y, 0) then sqrt.
    use FusionInstr::*;
    let mut plan = ElementwiseFusionPlan::default();
    let (xi, yi) = (plan.push(Input(0)), plan.push(Input(1)));
    let two = plan.push(Constant(FusionConstant::F64(2.0)));
    let zero = plan.push(Constant(FusionConstant::F64(0.0)));
    let m2 = plan.push(Binary(BinaryOp::Mul, xi, two));
    let s = plan.push(Binary(BinaryOp::Add, m2, yi));
    let r = plan.push(Binary(BinaryOp::Max, s, zero));
    let q = plan.push(Unary(UnaryOp::Sqrt, r));
    plan.add_output(q);
    let twos = Tensor::from(TypedTensor::filled(&[m, m], 2.0f64).unwrap());
    let zeros = Tensor::zeros(strata_tensor::DType::F64, &[m, m]).unwrap();
    let mut g = c.benchmark_group("four_op_fusion_4M_f64");
    quick(&mut g);
    g.bench_function("unfused", |b| {
        b.iter(|| {
            let t1 = elementwise::mul(&ctx, (&x).into(), (&twos).into()).unwrap();
            let t2 = elementwise::add(&ctx, (&t1).into(), (&y).into()).unwrap();
            let t3 = elementwise::maximum(&ctx, (&t2).into(), (&zeros).into()).unwrap();
            analytic::sqrt(&ctx, (&t3).into()).unwrap()
        })
    });
    g.bench_function("strata_fused", |b| b.iter(|| fusion::execute(&ctx, &plan, &[(&x).into(), (&y).into()]).unwrap()));
    g.finish();
}

criterion_group!(benches, elementwise_and_reduce, permute, fused);
criterion_main!(benches);
