//! Thread provenance: every route of every op family runs its work on the threads of the
//! domain it was placed on (or on the calling thread when it runs inline), for a managed
//! domain, a NUMA-node domain of a fixture machine, a caller's Rayon pool and a caller's
//! own (non-Rayon) executor.
//!
//! Two independent witnesses, neither of them a clock:
//! - the scheduler's per-thread CPU accounting (`/proc/self/task/*/schedstat`) of every
//!   thread of the process, sampled around a stretch of ops: threads outside the domain
//!   (Rayon's global pool, stray helpers, the caller when the op is not inline) must gain
//!   nothing beyond a small tolerance, the domain's threads the rest;
//! - a recording GEMM provider (faer underneath) that notes the thread of every provider
//!   call and of every index of the fork-join it was handed.
//!
//! Plus the two-caller test: two disjoint single-CPU domains running large GEMMs at once
//! share no thread.

mod common;
mod provenance_support;

use std::any::Any;
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::mpsc::Sender;
use std::thread::ThreadId;

use common::FakeAffinity;
use provenance_support::{RecordingProvider, SPAWNING_PREFIX, SpawningExecutor, Split, dropper, measure, serial};
use strata_arbiter::ResourceArbiter;
use strata_backend::prelude::*;
use strata_backend::{CpuDomainId, ExternalCpuDomain};
use strata_engine::ThreadAffinity;
use strata_tensor::config::{
    DotGeneralConfig, ElementwiseFusionPlan, FusionInstr, GatherConfig, GroupedGemmConfig, PadConfig, SliceConfig,
};
use strata_topology::{SyntheticTopology, TopologySource};

/// Work per measured stretch: enough CPU time that the scheduler's accounting (which may
/// lag one tick on a running thread) is small against it.
const TARGET_NS: u64 = 150_000_000;

/// CPU time a thread that did none of the work may still show: bookkeeping, the census
/// itself, a scheduler tick of lag.
fn tolerance(total_ns: u64) -> u64 {
    6_000_000 + total_ns / 20
}

/// An op's output, kept until the measurement ends and then dropped by the dropper.
type Kept = Box<dyn Any + Send>;

fn keep<T: Send + 'static>(out: T) -> Kept {
    Box::new(out)
}

fn f64_tensor(shape: &[usize], seed: u64) -> Tensor {
    let mut rng = common::Rng::new(seed);
    let len = shape.iter().product();
    TypedTensor::from_vec(rng.vec(len), shape).unwrap().into()
}

/// The operands of every route, built once.
struct Inputs {
    small: Tensor,
    long_a: Tensor,
    long_b: Tensor,
    mat_a: Tensor,
    mat_b: Tensor,
    batch_a: Tensor,
    batch_b: Tensor,
    tiles_a: Tensor,
    tiles_b: Tensor,
    grouped: Vec<(Tensor, Tensor)>,
    square: Tensor,
    row: Tensor,
    rows_index: Tensor,
    zero: Tensor,
    fusion: ElementwiseFusionPlan,
}

impl Inputs {
    fn new() -> Inputs {
        let mut fusion = ElementwiseFusionPlan::default();
        let a = fusion.push(FusionInstr::Input(0));
        let b = fusion.push(FusionInstr::Input(1));
        let s = fusion.push(FusionInstr::Binary(BinaryOp::Add, a, b));
        let p = fusion.push(FusionInstr::Binary(BinaryOp::Mul, s, a));
        fusion.add_output(p);
        let rows: Vec<i64> = (0..4096).map(|i| (i * 7 % 1024) as i64).collect();
        Inputs {
            // Under the facade's inline rule (2^20 elements touched) yet long enough that
            // one call's work outweighs the caller's brief spin while a domain runs it.
            small: f64_tensor(&[256 * 1024], 1),
            long_a: f64_tensor(&[1 << 20], 2),
            long_b: f64_tensor(&[1 << 20], 3),
            mat_a: f64_tensor(&[384, 384], 4),
            mat_b: f64_tensor(&[384, 384], 5),
            batch_a: f64_tensor(&[8, 128, 128], 6),
            batch_b: f64_tensor(&[8, 128, 128], 7),
            // 512 items of 16x16x16: the register-tile engine's batched route.
            tiles_a: f64_tensor(&[512, 16, 16], 12),
            tiles_b: f64_tensor(&[512, 16, 16], 13),
            grouped: (0..6).map(|j| (f64_tensor(&[160, 160], 10 + j), f64_tensor(&[160, 160], 20 + j))).collect(),
            square: f64_tensor(&[1024, 1024], 8),
            row: f64_tensor(&[1024], 9),
            rows_index: TypedTensor::from_vec(rows, &[4096, 1]).unwrap().into(),
            zero: TypedTensor::from_vec(vec![0.0f64], &[]).unwrap().into(),
            fusion,
        }
    }
}

/// One route of one op family: small work (inline under `Auto`), and whether it reaches
/// the GEMM provider.
struct Route {
    name: &'static str,
    small: bool,
    provider: bool,
    run: fn(&CpuBackend, &Inputs) -> strata_tensor::Result<Kept>,
}

fn routes() -> Vec<Route> {
    fn r(name: &'static str, run: fn(&CpuBackend, &Inputs) -> strata_tensor::Result<Kept>) -> Route {
        Route { name, small: false, provider: false, run }
    }
    vec![
        Route { small: true, ..r("small unary (inline under Auto)", |b, x| b.exp(&x.small).map(keep)) },
        r("elementwise fork-join", |b, x| b.add(&x.long_a, &x.long_b).map(keep)),
        r("analytic", |b, x| b.tanh(&x.long_a).map(keep)),
        Route { provider: true, ..r("provider single GEMM", |b, x| b.matmul(&x.mat_a, &x.mat_b).map(keep)) },
        Route {
            provider: true,
            ..r("provider batched", |b, x| {
                let cfg = DotGeneralConfig::new(vec![0], vec![0], vec![2], vec![1]);
                ContractionOps::dot_general(b, (&x.batch_a).into(), (&x.batch_b).into(), &cfg, false, false).map(keep)
            })
        },
        r("register-tile batch", |b, x| {
            let cfg = DotGeneralConfig::new(vec![0], vec![0], vec![2], vec![1]);
            ContractionOps::dot_general(b, (&x.tiles_a).into(), (&x.tiles_b).into(), &cfg, false, false).map(keep)
        }),
        Route {
            provider: true,
            ..r("grouped GEMM", |b, x| {
                let lhs: Vec<TensorRead<'_>> = x.grouped.iter().map(|(l, _)| l.into()).collect();
                let rhs: Vec<TensorRead<'_>> = x.grouped.iter().map(|(_, r)| r.into()).collect();
                b.grouped_gemm(&lhs, &rhs, &GroupedGemmConfig::default()).map(keep)
            })
        },
        r("permutation tiles", |b, x| b.transpose(&x.square, &[1, 0]).map(keep)),
        r("fusion", |b, x| b.execute_fusion(&x.fusion, &[&x.long_a, &x.long_b]).map(keep)),
        r("broadcast multiply", |b, x| b.broadcast_multiply(&x.row, &[0], &x.row, &[1], &[1024, 1024]).map(keep)),
        r("reduction over one axis", |b, x| b.sum(&x.square, &[1]).map(keep)),
        r("reduction over all", |b, x| b.sum(&x.long_a, &[0]).map(keep)),
        r("norm squared", |b, x| b.norm_squared(&x.long_a).map(keep)),
        r("gather", |b, x| b.gather(&x.square, &x.rows_index, &GatherConfig::rows(2, 1024)).map(keep)),
        r("pad", |b, x| b.pad(&x.square, &x.zero, &PadConfig::new(vec![3, 1], vec![1, 2], vec![0, 1])).map(keep)),
        r("slice", |b, x| b.slice(&x.square, &SliceConfig::new(vec![1, 0], vec![1024, 1024], vec![1, 2])).map(keep)),
        r("reverse", |b, x| b.reverse(&x.square, &[0, 1]).map(keep)),
        r("concatenate", |b, x| b.concatenate(&[&x.square, &x.square], 1).map(keep)),
        r("broadcast_in_dim", |b, x| b.broadcast_in_dim(&x.row, &[1024, 1024], &[1]).map(keep)),
        r("cast", |b, x| b.cast(&x.square, DType::F32).map(keep)),
    ]
}

/// A domain under test: the backend, how to recognise its threads, and its recorder.
struct Domain {
    label: &'static str,
    backend: CpuBackend,
    /// Thread names of the domain's workers start with this.
    prefix: String,
    /// CPU time of domain threads that exited (the spawning executor's), in ns.
    reported: Box<dyn Fn() -> u64>,
    recorder: Arc<RecordingProvider>,
    /// Whether the handle serves `Auto` (small work then runs inline on the caller).
    auto: bool,
}

fn live_budget() -> usize {
    strata_topology::discover().unwrap().allowed_cpus().len().min(2)
}

fn managed(explicit: bool) -> Domain {
    let recorder = Arc::new(RecordingProvider::default());
    let backend = CpuBackend::builder()
        .threads(live_budget())
        .provider_bundle(RecordingProvider::bundle(&recorder))
        .arbiter(Arc::new(ResourceArbiter::new()))
        .build()
        .unwrap();
    let backend = if explicit { backend.for_placement(CpuPlacement::AllAllowed).unwrap() } else { backend };
    Domain {
        label: if explicit { "managed, AllAllowed" } else { "managed, Auto" },
        backend,
        prefix: "strata-all-allowed-".into(),
        reported: Box::new(|| 0),
        recorder,
        auto: !explicit,
    }
}

fn fixture_node() -> Domain {
    let recorder = Arc::new(RecordingProvider::default());
    let topo = Arc::new(SyntheticTopology::new(2, 2, 1).unwrap().load().unwrap());
    let backend = CpuBackend::builder()
        .topology(topo)
        .threads(2)
        .pinning(true)
        .thread_affinity(Arc::new(FakeAffinity::default()) as Arc<dyn ThreadAffinity>)
        .arbiter(Arc::new(ResourceArbiter::new()))
        .provider_bundle(RecordingProvider::bundle(&recorder))
        .build()
        .unwrap();
    let node = backend.topology().nodes()[1].id();
    let backend = backend.for_placement(CpuPlacement::NumaNode(node)).unwrap();
    assert_eq!(backend.num_threads(), 2);
    Domain {
        label: "fixture NUMA node 1",
        backend,
        prefix: format!("strata-numa{node}-"),
        reported: Box::new(|| 0),
        recorder,
        auto: false,
    }
}

fn caller_pool() -> (Domain, Arc<rayon::ThreadPool>) {
    let recorder = Arc::new(RecordingProvider::default());
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new().num_threads(2).thread_name(|i| format!("caller-pool-{i}")).build().unwrap(),
    );
    let backend = CpuBackend::from_rayon_pool(Arc::clone(&pool))
        .unwrap()
        .with_provider_bundle(RecordingProvider::bundle(&recorder))
        .unwrap();
    let domain = Domain {
        label: "caller Rayon pool",
        backend,
        prefix: "caller-pool-".into(),
        reported: Box::new(|| 0),
        recorder,
        auto: true,
    };
    (domain, pool)
}

fn caller_executor() -> Domain {
    let recorder = Arc::new(RecordingProvider::default());
    let exec = SpawningExecutor::new(2);
    let domain = ExternalCpuDomain::caller_managed("custom", CpuPlacement::Auto, Arc::clone(&exec) as _);
    let backend = CpuBackend::from_external_domains_with_bundle(
        CpuDomainId::new("custom"),
        vec![domain],
        RecordingProvider::bundle(&recorder),
    )
    .unwrap();
    Domain {
        label: "caller executor (not Rayon)",
        backend,
        prefix: SPAWNING_PREFIX.into(),
        reported: Box::new(move || exec.reported()),
        recorder,
        auto: true,
    }
}

/// Where the CPU time of a stretch of one route went, and what the caller may spend just
/// entering the domain and handing its executor a job, as often (`backend.install` of an
/// empty job: a pool hop for Rayon, a thread spawn for the spawning executor).
struct RouteSplit {
    split: Split,
    hop_ns: u64,
}

/// Runs `route` until it has cost about [`TARGET_NS`] of CPU time and returns where that
/// time went. Outputs are dropped on the dropper thread.
fn measure_route(domain: &Domain, inputs: &Inputs, route: &Route, drops: &Sender<Kept>) -> RouteSplit {
    let once =
        || (route.run)(&domain.backend, inputs).unwrap_or_else(|e| panic!("{} / {}: {e}", domain.label, route.name));
    // Warm up (caches, lazily built pools, first-touch of pooled buffers) and size the
    // stretch from one measured call.
    drops.send(once()).unwrap();
    let one = measure(&domain.prefix, &*domain.reported, &mut || drops.send(once()).unwrap());
    let reps = (TARGET_NS / one.total_ns().max(1)).clamp(1, 20_000);
    let hop_ns = measure(&domain.prefix, &*domain.reported, &mut || {
        for _ in 0..reps {
            domain.backend.install(|| ()).unwrap();
        }
    })
    .caller_ns;
    domain.recorder.take();
    let split = measure(&domain.prefix, &*domain.reported, &mut || {
        for _ in 0..reps {
            drops.send(once()).unwrap();
        }
    });
    RouteSplit { split, hop_ns }
}

/// Whether a recorded thread is one of the domain's workers.
fn on_domain(name: &Option<String>, prefix: &str) -> bool {
    name.as_deref().is_some_and(|n| n.starts_with(prefix))
}

fn check_domain(domain: &Domain, inputs: &Inputs) {
    let caller = std::thread::current().id();
    let drops = dropper();
    for route in routes() {
        let inline = domain.auto && (route.small || domain.backend.num_threads() == 1);
        let RouteSplit { split, hop_ns } = measure_route(domain, inputs, &route, &drops);
        let total = split.total_ns();
        let tol = tolerance(total);
        let what = format!(
            "{} / {}: {split:?} (total {total} ns, tolerance {tol} ns, entry and hand-off {hop_ns} ns)",
            domain.label, route.name
        );
        assert!(split.outside_ns() <= tol, "work ran outside the domain and the caller: {what}");
        if inline {
            assert!(split.domain_ns <= tol, "inline work reached the domain's workers: {what}");
            assert!(split.caller_ns > 0, "the caller did not do the inline work: {what}");
        } else {
            assert!(split.caller_ns <= tol + 2 * hop_ns, "work ran on the calling thread: {what}");
            assert!(split.domain_ns >= total / 2, "the domain's threads did not do the work: {what}");
        }
        let sightings = domain.recorder.take();
        if route.provider {
            assert!(!sightings.is_empty(), "the provider was never called: {what}");
        }
        for (thread, name) in sightings {
            let ok = if inline { thread == caller } else { on_domain(&name, &domain.prefix) };
            assert!(ok, "{} / {}: a GEMM ran on thread {name:?} ({thread:?})", domain.label, route.name);
        }
    }
}

#[test]
fn every_route_runs_on_a_managed_domain_or_inline() {
    let _serial = serial();
    let inputs = Inputs::new();
    check_domain(&managed(false), &inputs);
    check_domain(&managed(true), &inputs);
}

#[test]
fn every_route_runs_on_the_workers_of_a_numa_node_domain() {
    let _serial = serial();
    check_domain(&fixture_node(), &Inputs::new());
}

#[test]
fn every_route_runs_on_a_callers_rayon_pool_or_inline() {
    let _serial = serial();
    let (domain, _pool) = caller_pool();
    check_domain(&domain, &Inputs::new());
}

#[test]
fn every_route_runs_on_a_callers_own_executor_or_inline() {
    let _serial = serial();
    check_domain(&caller_executor(), &Inputs::new());
}

#[test]
fn ops_called_from_a_task_of_the_callers_pool_run_on_that_pool() {
    let _serial = serial();
    let (domain, pool) = caller_pool();
    let inputs = Inputs::new();
    let caller_thread = std::thread::current().id();
    let drops = dropper();
    for route in routes() {
        let split = {
            let mut run = || {
                pool.install(|| {
                    for _ in 0..4 {
                        let out = (route.run)(&domain.backend, &inputs)
                            .unwrap_or_else(|e| panic!("{} from a pool task: {e}", route.name));
                        drops.send(out).unwrap();
                    }
                })
            };
            run();
            domain.recorder.take();
            measure(&domain.prefix, &|| 0, &mut run)
        };
        let tol = tolerance(split.total_ns());
        assert!(split.outside_ns() <= tol && split.caller_ns <= tol, "{}: {split:?}", route.name);
        for (thread, name) in domain.recorder.take() {
            assert!(thread != caller_thread && on_domain(&name, "caller-pool-"), "{}: GEMM on {name:?}", route.name);
        }
    }
}

#[test]
fn two_callers_on_disjoint_single_cpu_domains_share_no_thread() {
    let _serial = serial();
    // Two nodes of one CPU each: each node's domain has one worker.
    let topo = Arc::new(SyntheticTopology::new(2, 1, 1).unwrap().load().unwrap());
    let backend = CpuBackend::builder()
        .topology(topo)
        .threads(1)
        .pinning(true)
        .thread_affinity(Arc::new(FakeAffinity::default()) as Arc<dyn ThreadAffinity>)
        .arbiter(Arc::new(ResourceArbiter::new()))
        .build()
        .unwrap();
    let nodes: Vec<_> = backend.topology().nodes().iter().map(|n| n.id()).collect();
    let handles: Vec<(CpuBackend, Arc<RecordingProvider>, String)> = nodes
        .iter()
        .map(|&node| {
            let recorder = Arc::new(RecordingProvider::default());
            let handle = backend
                .for_placement(CpuPlacement::NumaNode(node))
                .unwrap()
                .with_provider_bundle(RecordingProvider::bundle(&recorder))
                .unwrap();
            (handle, recorder, format!("strata-numa{node}-"))
        })
        .collect();
    let a = f64_tensor(&[512, 512], 31);
    let b = f64_tensor(&[512, 512], 32);
    let want = backend.matmul(&a, &b).unwrap();
    let callers: Vec<ThreadId> = std::thread::scope(|s| {
        let joins: Vec<_> = handles
            .iter()
            .map(|(handle, _, _)| {
                s.spawn(|| {
                    for _ in 0..6 {
                        let c = handle.matmul(&a, &b).unwrap();
                        assert_eq!(c.as_typed::<f64>().unwrap().data(), want.as_typed::<f64>().unwrap().data());
                    }
                    std::thread::current().id()
                })
            })
            .collect();
        joins.into_iter().map(|j| j.join().unwrap()).collect()
    });
    let mut seen: Vec<HashSet<ThreadId>> = Vec::new();
    for (_, recorder, prefix) in &handles {
        let sightings = recorder.take();
        assert!(sightings.len() >= 6, "every GEMM reached the provider");
        for (thread, name) in &sightings {
            assert!(on_domain(name, prefix), "a GEMM of the {prefix} caller ran on {name:?}");
            assert!(!callers.contains(thread), "a GEMM ran on its calling thread");
        }
        seen.push(sightings.into_iter().map(|(t, _)| t).collect());
    }
    assert!(seen[0].is_disjoint(&seen[1]), "the two domains shared a thread: {seen:?}");
}
