//! Faulty caller executors on every route: an executor that skips an index, runs one
//! twice (one after the other, or concurrently), runs indices out of range, panics, or
//! whose `run` never runs the job (or panics) makes the op return a typed `RuntimeState`
//! error naming the executor and the op the user called — for `_into` forms too, so a
//! destination is never reported as valid — and never a panic, an abort or a data race.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use strata_backend::prelude::*;
use strata_backend::{CpuDomainId, ExternalCpuDomain};
use strata_engine::{CpuDomainExecutor, ExecutorCapabilities, RayonCpuDomainExecutor};
use strata_tensor::c64;
use strata_tensor::config::{
    DotGeneralConfig, ElementwiseFusionPlan, FusionInstr, GatherConfig, GroupedGemmConfig, PadConfig, SliceConfig,
};

/// What an executor does wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    SkipsLastIndex,
    RunsFirstIndexTwice,
    RunsEveryIndexTwiceConcurrently,
    RunsAnIndexOutOfRange,
    PanicsInForEachIndex,
    RunNeverRunsTheJob,
    RunPanics,
}

const FAULTS: [Fault; 7] = [
    Fault::SkipsLastIndex,
    Fault::RunsFirstIndexTwice,
    Fault::RunsEveryIndexTwiceConcurrently,
    Fault::RunsAnIndexOutOfRange,
    Fault::PanicsInForEachIndex,
    Fault::RunNeverRunsTheJob,
    Fault::RunPanics,
];

/// A caller's Rayon pool of two workers, with one fault.
#[derive(Debug)]
struct FaultyExecutor {
    pool: RayonCpuDomainExecutor,
    fault: Fault,
}

impl CpuDomainExecutor for FaultyExecutor {
    fn run(&self, job: &mut (dyn FnMut() + Send)) {
        match self.fault {
            Fault::RunNeverRunsTheJob => {}
            Fault::RunPanics => panic!("the faulty executor's run gave up"),
            _ => self.pool.run(job),
        }
    }

    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) {
        match self.fault {
            Fault::SkipsLastIndex => self.pool.for_each_index(n - 1, body),
            Fault::RunsFirstIndexTwice => {
                self.pool.for_each_index(n, body);
                body(0);
            }
            // Both runs of an index may be on the two workers at the same time.
            Fault::RunsEveryIndexTwiceConcurrently => self.pool.for_each_index(2 * n, &|i| body(i % n)),
            Fault::RunsAnIndexOutOfRange => self.pool.for_each_index(n + 1, body),
            Fault::PanicsInForEachIndex => {
                self.pool.for_each_index(n / 2, body);
                panic!("the faulty executor's fork-join gave up");
            }
            Fault::RunNeverRunsTheJob | Fault::RunPanics => self.pool.for_each_index(n, body),
        }
    }

    fn capabilities(&self) -> ExecutorCapabilities {
        self.pool.capabilities()
    }

    fn name(&self) -> std::borrow::Cow<'static, str> {
        format!("faulty-executor({:?})", self.fault).into()
    }

    fn current_thread_is_worker(&self) -> bool {
        self.pool.current_thread_is_worker()
    }
}

fn backend_with(fault: Fault, pool: &Arc<rayon::ThreadPool>) -> CpuBackend {
    let exec = FaultyExecutor { pool: RayonCpuDomainExecutor::new(Arc::clone(pool)), fault };
    let domain = ExternalCpuDomain::caller_managed("faulty", CpuPlacement::Auto, Arc::new(exec));
    CpuBackend::from_external_domains(CpuDomainId::new("faulty"), vec![domain]).unwrap()
}

fn f64_tensor(shape: &[usize], seed: u64) -> Tensor {
    let mut rng = common::Rng::new(seed);
    TypedTensor::from_vec(rng.vec(shape.iter().product()), shape).unwrap().into()
}

fn zeros(shape: &[usize]) -> Tensor {
    TypedTensor::from_vec(vec![0.0f64; shape.iter().product()], shape).unwrap().into()
}

/// One route, large enough to be split over both workers: the op name its errors must
/// carry, and the call.
struct Route {
    op: &'static str,
    run: fn(&CpuBackend, &Operands) -> strata_tensor::Result<()>,
}

struct Operands {
    long_a: Tensor,
    long_b: Tensor,
    mat_a: Tensor,
    mat_b: Tensor,
    batch_a: Tensor,
    batch_b: Tensor,
    square: Tensor,
    row: Tensor,
    rows_index: Tensor,
    zero: Tensor,
    fusion: ElementwiseFusionPlan,
}

fn operands() -> Operands {
    let mut fusion = ElementwiseFusionPlan::default();
    let a = fusion.push(FusionInstr::Input(0));
    let b = fusion.push(FusionInstr::Input(1));
    let s = fusion.push(FusionInstr::Binary(BinaryOp::Add, a, b));
    fusion.add_output(s);
    Operands {
        long_a: f64_tensor(&[1 << 20], 1),
        long_b: f64_tensor(&[1 << 20], 2),
        mat_a: f64_tensor(&[256, 256], 3),
        mat_b: f64_tensor(&[256, 256], 4),
        batch_a: f64_tensor(&[8, 96, 96], 5),
        batch_b: f64_tensor(&[8, 96, 96], 6),
        square: f64_tensor(&[1024, 1024], 7),
        row: f64_tensor(&[1024], 8),
        rows_index: TypedTensor::from_vec((0..4096).map(|i| (i * 5 % 1024) as i64).collect::<Vec<_>>(), &[4096, 1])
            .unwrap()
            .into(),
        zero: TypedTensor::from_vec(vec![0.0f64], &[]).unwrap().into(),
        fusion,
    }
}

fn routes() -> Vec<Route> {
    vec![
        Route { op: "add", run: |b, x| b.add(&x.long_a, &x.long_b).map(drop) },
        Route {
            op: "add",
            run: |b, x| {
                let mut out = zeros(&[1 << 20]);
                b.binary_into(BinaryOp::Add, &x.long_a, &x.long_b, &mut out)
            },
        },
        Route {
            op: "exp",
            run: |b, x| {
                let mut out = zeros(&[1 << 20]);
                b.unary_into(UnaryOp::Exp, &x.long_a, &mut out)
            },
        },
        Route { op: "dot_general", run: |b, x| b.matmul(&x.mat_a, &x.mat_b).map(drop) },
        Route {
            op: "dot_general_into",
            run: |b, x| {
                let mut out = zeros(&[256, 256]);
                let one = c64::new(1.0, 0.0);
                ContractionOps::dot_general_into(
                    b,
                    (&x.mat_a).into(),
                    (&x.mat_b).into(),
                    &DotGeneralConfig::matmul(),
                    false,
                    false,
                    one,
                    one,
                    (&mut out).into(),
                )
            },
        },
        Route {
            op: "dot_general_into",
            run: |b, x| {
                // beta = 1 over batched items: an item run twice would double-count.
                let mut out = zeros(&[8, 96, 96]);
                let one = c64::new(1.0, 0.0);
                let cfg = DotGeneralConfig::new(vec![0], vec![0], vec![2], vec![1]);
                ContractionOps::dot_general_into(
                    b,
                    (&x.batch_a).into(),
                    (&x.batch_b).into(),
                    &cfg,
                    false,
                    false,
                    one,
                    one,
                    (&mut out).into(),
                )
            },
        },
        Route {
            op: "grouped_gemm",
            run: |b, x| {
                let lhs: Vec<TensorRead<'_>> = (0..4).map(|_| (&x.mat_a).into()).collect();
                let rhs: Vec<TensorRead<'_>> = (0..4).map(|_| (&x.mat_b).into()).collect();
                b.grouped_gemm(&lhs, &rhs, &GroupedGemmConfig::default()).map(drop)
            },
        },
        Route { op: "transpose", run: |b, x| b.transpose(&x.square, &[1, 0]).map(drop) },
        Route {
            op: "copy_into",
            run: |b, x| {
                let mut out = vec![0.0f64; 1024 * 1024];
                let view = strata_tensor::TypedViewMut::new(&mut out, &[1024, 1024], &[1, 1024], 0)?;
                b.copy_into(&x.square, view)
            },
        },
        Route { op: "execute_fusion", run: |b, x| b.execute_fusion(&x.fusion, &[&x.long_a, &x.long_b]).map(drop) },
        Route {
            op: "broadcast_multiply",
            run: |b, x| b.broadcast_multiply(&x.row, &[0], &x.row, &[1], &[1024, 1024]).map(drop),
        },
        Route { op: "reduce_sum", run: |b, x| b.sum(&x.long_a, &[0]).map(drop) },
        Route {
            op: "reduce_sum",
            run: |b, x| {
                let mut out = zeros(&[1024]);
                b.reduce_into(ReduceOp::Sum, &x.square, &[1], &mut out)
            },
        },
        Route { op: "norm_squared", run: |b, x| b.norm_squared(&x.long_a).map(drop) },
        Route { op: "gather", run: |b, x| b.gather(&x.square, &x.rows_index, &GatherConfig::rows(2, 1024)).map(drop) },
        Route {
            op: "pad",
            run: |b, x| b.pad(&x.square, &x.zero, &PadConfig::new(vec![1, 1], vec![1, 1], vec![0, 1])).map(drop),
        },
        Route {
            op: "slice",
            run: |b, x| b.slice(&x.square, &SliceConfig::new(vec![0, 0], vec![1024, 1024], vec![1, 2])).map(drop),
        },
        Route { op: "reverse", run: |b, x| b.reverse(&x.square, &[0, 1]).map(drop) },
        Route { op: "concatenate", run: |b, x| b.concatenate(&[&x.square, &x.square], 0).map(drop) },
        Route { op: "broadcast_in_dim", run: |b, x| b.broadcast_in_dim(&x.row, &[1024, 1024], &[1]).map(drop) },
        Route {
            op: "cast",
            run: |b, x| {
                let mut out: Tensor = TypedTensor::from_vec(vec![0.0f32; 1024 * 1024], &[1024, 1024]).unwrap().into();
                b.cast_into(&x.square, &mut out)
            },
        },
    ]
}

/// A correct executor over the same pool that counts the fork-joins reaching it.
#[derive(Debug)]
struct Counting {
    pool: RayonCpuDomainExecutor,
    forks: AtomicUsize,
}

impl CpuDomainExecutor for Counting {
    fn run(&self, job: &mut (dyn FnMut() + Send)) {
        self.pool.run(job)
    }
    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) {
        self.forks.fetch_add(1, Ordering::Relaxed);
        self.pool.for_each_index(n, body)
    }
    fn capabilities(&self) -> ExecutorCapabilities {
        self.pool.capabilities()
    }
    fn current_thread_is_worker(&self) -> bool {
        self.pool.current_thread_is_worker()
    }
}

/// For every route, whether it forks on the executor (with a correct executor, which
/// must also let every route succeed: the faults below are what makes them fail).
fn forking_routes(pool: &Arc<rayon::ThreadPool>, x: &Operands) -> Vec<bool> {
    let exec = Arc::new(Counting { pool: RayonCpuDomainExecutor::new(Arc::clone(pool)), forks: AtomicUsize::new(0) });
    let domain = ExternalCpuDomain::caller_managed("counting", CpuPlacement::Auto, Arc::clone(&exec) as _);
    let backend = CpuBackend::from_external_domains(CpuDomainId::new("counting"), vec![domain]).unwrap();
    routes()
        .iter()
        .map(|route| {
            let before = exec.forks.load(Ordering::Relaxed);
            (route.run)(&backend, x).unwrap_or_else(|e| panic!("{} with a correct executor: {e}", route.op));
            exec.forks.load(Ordering::Relaxed) > before
        })
        .collect()
}

#[test]
fn every_fault_on_every_route_is_a_typed_error_naming_the_executor_and_the_op() {
    let pool = Arc::new(rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap());
    let x = operands();
    let routes = routes();
    let forks = forking_routes(&pool, &x);
    assert!(forks.iter().filter(|&&f| f).count() >= routes.len() - 2, "most routes split their work: {forks:?}");
    for fault in FAULTS {
        let backend = backend_with(fault, &pool);
        let run_fault = matches!(fault, Fault::RunNeverRunsTheJob | Fault::RunPanics);
        for (route, &forks) in routes.iter().zip(&forks) {
            let what = format!("{fault:?} / {}", route.op);
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (route.run)(&backend, &x)));
            let err = match result {
                Err(p) => panic!("{what}: the op panicked: {}", strata_tensor::panic_message(p.as_ref())),
                // A route that never forks is untouched by a broken fork-join.
                Ok(Ok(())) if !forks && !run_fault => continue,
                Ok(Ok(())) => panic!("{what}: the op returned Ok under a broken schedule"),
                Ok(Err(e)) => e,
            };
            assert_eq!(err.kind(), ErrorKind::RuntimeState, "{what}: {err}");
            assert_eq!(err.op(), route.op, "{what}: {err}");
            assert!(err.message().contains(&format!("faulty-executor({fault:?})")), "{what}: {err}");
        }
        // The same backend still serves work that never reaches its executor.
        let small = f64_tensor(&[8], 9);
        assert!(backend.add(&small, &small).is_ok(), "{fault:?}: inline work");
    }
}
