//! Indexing benchmarks: a 1M-row gather (and the matching scatter-add) against a
//! hand-written loop doing the same copies, sequential and split over a Rayon pool.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rayon::prelude::*;
use strata_engine::{AffinityClaim, CpuDomainExecutor, ExecutorCapabilities, ReentrancyBehaviour, ShutdownOwner};
use strata_kernels::indexing::{IndexedPlanCache, gather, scatter};
use strata_kernels::{KernelContext, Parallelism};
use strata_tensor::Tensor;
use strata_tensor::config::{GatherConfig, ScatterCombiner, ScatterConfig};

/// Records fork-join violations of the executors used here (none are expected).
static AUDIT: strata_kernels::ScheduleAudit = strata_kernels::ScheduleAudit::new();

const ROWS: usize = 4096;
const WIDTH: usize = 16;
const LOOKUPS: usize = 1 << 20;

/// Runs fork-joins on Rayon's global pool (the bench's stand-in for a domain executor).
#[derive(Debug)]
struct RayonGlobal;

impl CpuDomainExecutor for RayonGlobal {
    fn run(&self, job: &mut (dyn FnMut() + Send)) {
        job()
    }
    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) {
        (0..n).into_par_iter().for_each(body)
    }
    fn capabilities(&self) -> ExecutorCapabilities {
        ExecutorCapabilities {
            workers: rayon::current_num_threads(),
            affinity: AffinityClaim::Unconstrained,
            shutdown: ShutdownOwner::Caller,
            reentrancy: ReentrancyBehaviour::RunsInline,
        }
    }
}

/// Deterministic pseudo-random row indices.
fn row_indices() -> Vec<i32> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    (0..LOOKUPS)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % ROWS as u64) as i32
        })
        .collect()
}

fn bench_gather(c: &mut Criterion) {
    let table_data: Vec<f32> = (0..ROWS * WIDTH).map(|x| x as f32).collect();
    let table = Tensor::from_vec(table_data.clone(), &[ROWS, WIDTH]).unwrap();
    let idx = row_indices();
    let indices = Tensor::from_vec(idx.clone(), &[LOOKUPS, 1]).unwrap();
    let config = GatherConfig::rows(2, WIDTH);
    let cache = IndexedPlanCache::default();
    let threads = rayon::current_num_threads();
    let pooled = KernelContext::new(Parallelism::new(&RayonGlobal, threads, &AUDIT));

    let mut group = c.benchmark_group("gather_1M_rows_4096x16_f32");
    group.throughput(Throughput::Bytes((LOOKUPS * WIDTH * 4) as u64));
    group.bench_function("hand_loop", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(LOOKUPS * WIDTH);
            for &r in &idx {
                let r = r.clamp(0, ROWS as i32 - 1) as usize;
                out.extend_from_slice(&table_data[r * WIDTH..(r + 1) * WIDTH]);
            }
            black_box(out)
        })
    });
    // The same copies into a zero-filled buffer, as `fill_output` hands out today: isolates
    // the cost of zeroing the output from the cost of the gather itself.
    group.bench_function("hand_loop_zeroed_output", |b| {
        b.iter(|| {
            let mut out = vec![0.0f32; LOOKUPS * WIDTH];
            for (chunk, &r) in out.chunks_exact_mut(WIDTH).zip(&idx) {
                let r = r.clamp(0, ROWS as i32 - 1) as usize;
                chunk.copy_from_slice(&table_data[r * WIDTH..(r + 1) * WIDTH]);
            }
            black_box(out)
        })
    });
    group.bench_function("strata_sequential", |b| {
        let ctx = KernelContext::sequential();
        b.iter(|| black_box(gather(&ctx, &(&table).into(), &(&indices).into(), &config, Some(&cache)).unwrap()))
    });
    group.bench_function(format!("strata_{threads}_threads"), |b| {
        b.iter(|| black_box(gather(&pooled, &(&table).into(), &(&indices).into(), &config, Some(&cache)).unwrap()))
    });
    group.finish();

    let updates = Tensor::from_vec(vec![1.0f32; LOOKUPS * WIDTH], &[LOOKUPS, WIDTH]).unwrap();
    let scatter_config = ScatterConfig::rows(2, ScatterCombiner::Add);
    let mut group = c.benchmark_group("scatter_add_1M_rows_4096x16_f32");
    group.throughput(Throughput::Bytes((LOOKUPS * WIDTH * 4) as u64));
    group.bench_function("hand_loop", |b| {
        let u = updates.as_typed::<f32>().unwrap().data();
        b.iter(|| {
            let mut out = table_data.clone();
            for (j, &r) in idx.iter().enumerate() {
                let r = r as usize;
                for (o, &x) in out[r * WIDTH..(r + 1) * WIDTH].iter_mut().zip(&u[j * WIDTH..(j + 1) * WIDTH]) {
                    *o += x;
                }
            }
            black_box(out)
        })
    });
    for (name, ctx) in
        [("strata_sequential".to_string(), KernelContext::sequential()), (format!("strata_{threads}_threads"), pooled)]
    {
        group.bench_function(name, |b| {
            b.iter(|| {
                black_box(
                    scatter(
                        &ctx,
                        &(&table).into(),
                        &(&indices).into(),
                        &(&updates).into(),
                        &scatter_config,
                        Some(&cache),
                    )
                    .unwrap(),
                )
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    targets = bench_gather
}
criterion_main!(benches);
