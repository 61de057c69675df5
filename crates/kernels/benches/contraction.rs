//! Contraction benchmarks: a 1024² GEMM-shaped dot_general against faer called directly,
//! the einsum `abcd,cdef->abef` (extents 32, f64), a tensor-network step
//! `iaj,jbk->iabk` with bond dimensions 64..256, and the fixed cost of a 2×2 matmul.
//!
//! Everything runs on the calling thread (budget 1, faer `Par::Seq`), so the comparison
//! with faer measures our planning and dispatch, not thread scheduling.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, Par};
use strata_kernels::KernelContext;
use strata_kernels::contraction::{
    ContractionAnalysisCache, ContractionCache, PlanCache, dot_general, dot_general_into,
};
use strata_provider::FaerGemmProvider;
use strata_tensor::config::DotGeneralConfig;
use strata_tensor::{Tensor, c64};

/// Records fork-join violations of the executors used here (none are expected).
static AUDIT: strata_kernels::ScheduleAudit = strata_kernels::ScheduleAudit::new();

fn filled(shape: &[usize]) -> Tensor {
    let len: usize = shape.iter().product();
    Tensor::from_vec((0..len).map(|i| ((i * 7919) % 1000) as f64 / 1000.0 - 0.5).collect(), shape).unwrap()
}

fn gemm_1024(c: &mut Criterion) {
    let n = 1024;
    let mut g = c.benchmark_group("gemm_1024_f64");
    g.sample_size(10);
    let (a, b) = (filled(&[n, n]), filled(&[n, n]));
    let ctx = KernelContext::sequential();
    let domain = ContractionAnalysisCache::default();
    let cache = PlanCache::Domain(&domain);
    let mut out = Tensor::zeros(strata_tensor::DType::F64, &[n, n]).unwrap();
    let (one, zero) = (c64::new(1.0, 0.0), c64::new(0.0, 0.0));
    g.bench_function("strata_dot_general_into", |bch| {
        bch.iter(|| {
            dot_general_into(
                &ctx,
                (&a).into(),
                (&b).into(),
                &DotGeneralConfig::matmul(),
                false,
                false,
                one,
                zero,
                (&mut out).into(),
                &FaerGemmProvider,
                Some(&cache),
            )
            .unwrap()
        })
    });
    g.bench_function("strata_dot_general", |bch| {
        bch.iter(|| {
            dot_general(
                &ctx,
                (&a).into(),
                (&b).into(),
                &DotGeneralConfig::matmul(),
                false,
                false,
                &FaerGemmProvider,
                Some(&cache),
            )
            .unwrap()
        })
    });
    let fa = Mat::<f64>::from_fn(n, n, |i, j| ((i * n + j) * 7919 % 1000) as f64 / 1000.0 - 0.5);
    let fb = fa.clone();
    let mut fc = Mat::<f64>::zeros(n, n);
    g.bench_function("faer_matmul", |bch| {
        bch.iter(|| matmul(fc.as_mut(), Accum::Replace, fa.as_ref(), fb.as_ref(), 1.0, Par::Seq))
    });
    g.finish();
}

fn einsum_abcd_cdef(c: &mut Criterion) {
    let mut g = c.benchmark_group("einsum_abcd_cdef_abef_32_f64");
    g.sample_size(10);
    let (a, b) = (filled(&[32, 32, 32, 32]), filled(&[32, 32, 32, 32]));
    let cfg = DotGeneralConfig::new(vec![], vec![], vec![2, 3], vec![0, 1]);
    let ctx = KernelContext::sequential();
    let domain = ContractionAnalysisCache::default();
    let cache = PlanCache::Domain(&domain);
    g.bench_function("strata", |bch| {
        bch.iter(|| {
            dot_general(&ctx, (&a).into(), (&b).into(), &cfg, false, false, &FaerGemmProvider, Some(&cache)).unwrap()
        })
    });
    g.finish();
}

fn tensor_network_step(c: &mut Criterion) {
    let mut g = c.benchmark_group("iaj_jbk_iabk_f64");
    g.sample_size(10);
    let cfg = DotGeneralConfig::new(vec![], vec![], vec![2], vec![0]);
    let ctx = KernelContext::sequential();
    let domain = ContractionAnalysisCache::default();
    let cache = PlanCache::Domain(&domain);
    for chi in [64usize, 128, 256] {
        let (l, r) = (filled(&[chi, 2, chi]), filled(&[chi, 2, chi]));
        g.bench_with_input(BenchmarkId::new("strata", chi), &chi, |bch, _| {
            bch.iter(|| {
                dot_general(&ctx, (&l).into(), (&r).into(), &cfg, false, false, &FaerGemmProvider, Some(&cache))
                    .unwrap()
            })
        });
        // The same product with faer on pre-shaped matrices: the floor for this step.
        let fa = Mat::<f64>::from_fn(2 * chi, chi, |i, j| (i + j) as f64);
        let fb = Mat::<f64>::from_fn(chi, 2 * chi, |i, j| (i * j % 7) as f64);
        let mut fc = Mat::<f64>::zeros(2 * chi, 2 * chi);
        g.bench_with_input(BenchmarkId::new("faer_matmul", chi), &chi, |bch, _| {
            bch.iter(|| matmul(fc.as_mut(), Accum::Replace, fa.as_ref(), fb.as_ref(), 1.0, Par::Seq))
        });
    }
    g.finish();
}

fn matmul_2x2_overhead(c: &mut Criterion) {
    let mut g = c.benchmark_group("matmul_2x2_f64");
    let (a, b) = (filled(&[2, 2]), filled(&[2, 2]));
    let mm = DotGeneralConfig::matmul();
    let ctx = KernelContext::sequential();
    let domain = ContractionAnalysisCache::default();
    let slots = ContractionCache::new(1);
    g.bench_function("no_cache", |bch| {
        bch.iter(|| {
            dot_general(&ctx, black_box(&a).into(), (&b).into(), &mm, false, false, &FaerGemmProvider, None).unwrap()
        })
    });
    let cache = PlanCache::Domain(&domain);
    g.bench_function("domain_cache", |bch| {
        bch.iter(|| {
            dot_general(&ctx, black_box(&a).into(), (&b).into(), &mm, false, false, &FaerGemmProvider, Some(&cache))
                .unwrap()
        })
    });
    let slot = PlanCache::Slot { cache: &slots, slot: 0 };
    g.bench_function("caller_slot", |bch| {
        bch.iter(|| {
            dot_general(&ctx, black_box(&a).into(), (&b).into(), &mm, false, false, &FaerGemmProvider, Some(&slot))
                .unwrap()
        })
    });
    let mut out = Tensor::zeros(strata_tensor::DType::F64, &[2, 2]).unwrap();
    let (one, zero) = (c64::new(1.0, 0.0), c64::new(0.0, 0.0));
    g.bench_function("into_caller_slot", |bch| {
        bch.iter(|| {
            dot_general_into(
                &ctx,
                black_box(&a).into(),
                (&b).into(),
                &mm,
                false,
                false,
                one,
                zero,
                (&mut out).into(),
                &FaerGemmProvider,
                Some(&slot),
            )
            .unwrap()
        })
    });
    let fa = Mat::<f64>::from_fn(2, 2, |i, j| (i + j) as f64);
    let mut fc = Mat::<f64>::zeros(2, 2);
    g.bench_function("faer_matmul", |bch| {
        bch.iter(|| matmul(fc.as_mut(), Accum::Replace, black_box(fa.as_ref()), fa.as_ref(), 1.0, Par::Seq))
    });
    g.finish();
}

/// One large job plus many tiny ones on a 2-thread domain: grouped against a loop of
/// single calls (each of which picks its own parallelism owner).
fn grouped_vs_one_by_one(c: &mut Criterion) {
    let mut g = c.benchmark_group("grouped_1x384_plus_200x8_f64_2threads");
    g.sample_size(10);
    let pool = std::sync::Arc::new(rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap());
    let exec = strata_engine::RayonCpuDomainExecutor::new(pool.clone());
    let ctx = KernelContext::new(strata_kernels::Parallelism::new(&exec, 2, &AUDIT));
    let mut lhs = vec![filled(&[384, 384])];
    let mut rhs = vec![filled(&[384, 384])];
    for _ in 0..200 {
        lhs.push(filled(&[8, 8]));
        rhs.push(filled(&[8, 8]));
    }
    let lr: Vec<_> = lhs.iter().map(Into::into).collect();
    let rr: Vec<_> = rhs.iter().map(Into::into).collect();
    let cfg = strata_tensor::config::GroupedGemmConfig::default();
    g.bench_function("grouped", |bch| {
        bch.iter(|| {
            pool.install(|| strata_kernels::contraction::grouped_gemm(&ctx, &lr, &rr, &cfg, &FaerGemmProvider).unwrap())
        })
    });
    let mm = DotGeneralConfig::matmul();
    g.bench_function("one_by_one", |bch| {
        bch.iter(|| {
            pool.install(|| {
                lr.iter()
                    .zip(&rr)
                    .map(|(l, r)| {
                        dot_general(&ctx, l.clone(), r.clone(), &mm, false, false, &FaerGemmProvider, None).unwrap()
                    })
                    .collect::<Vec<_>>()
            })
        })
    });
    g.finish();
}

criterion_group!(benches, matmul_2x2_overhead, grouped_vs_one_by_one, tensor_network_step, einsum_abcd_cdef, gemm_1024);
criterion_main!(benches);
