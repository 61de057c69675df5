//! One parallelism owner per operation: a counting double proves that the provider's
//! threads and the engine's pool never run at once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rayon::prelude::*;
use strata_provider::{
    BatchedGemm, GemmDTypes, GemmError, GemmMatrix, GemmMatrixMut, GemmProvider, GemmScalar, ParallelismOwner,
    PlacementControl, ProviderCapabilities, ThreadControl, parallelism_owner, reference,
};

/// Declares whatever capabilities it is given, computes with the reference, and records
/// how many threads are in use across all calls running at once.
#[derive(Debug)]
struct CountingDouble {
    caps: ProviderCapabilities,
    threads_in_use: AtomicUsize,
    peak_threads: AtomicUsize,
    active_calls: AtomicUsize,
    peak_calls: AtomicUsize,
    threads_seen: Mutex<Vec<usize>>,
}

impl CountingDouble {
    fn new(threads: ThreadControl, placement: PlacementControl) -> Self {
        CountingDouble {
            caps: ProviderCapabilities {
                name: "counting-double".into(),
                threads,
                placement,
                dtypes: GemmDTypes::ALL,
                needs_unit_stride: false,
            },
            threads_in_use: AtomicUsize::new(0),
            peak_threads: AtomicUsize::new(0),
            active_calls: AtomicUsize::new(0),
            peak_calls: AtomicUsize::new(0),
            threads_seen: Mutex::new(Vec::new()),
        }
    }
}

impl GemmProvider for CountingDouble {
    fn capabilities(&self) -> ProviderCapabilities {
        self.caps.clone()
    }
    fn gemm_f64(&self, job: &mut BatchedGemm<'_, f64>, threads: usize) -> Result<(), GemmError> {
        let now = self.threads_in_use.fetch_add(threads, Ordering::SeqCst) + threads;
        self.peak_threads.fetch_max(now, Ordering::SeqCst);
        let calls = self.active_calls.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak_calls.fetch_max(calls, Ordering::SeqCst);
        self.threads_seen.lock().unwrap().push(threads);
        // Long enough that concurrent calls overlap; bounded.
        std::thread::sleep(Duration::from_millis(3));
        let result = reference::gemm(job);
        self.active_calls.fetch_sub(1, Ordering::SeqCst);
        self.threads_in_use.fetch_sub(threads, Ordering::SeqCst);
        result
    }
}

/// What an engine does with a batch of independent products: ask `parallelism_owner`,
/// then either split the batch over its pool with single-threaded provider calls, or run
/// the calls one after another with the provider's own threads.
fn run_operation(
    provider: &CountingDouble,
    budget: usize,
    pool: &rayon::ThreadPool,
    items: &mut [Vec<f64>],
    a: &[f64],
) {
    let owner = parallelism_owner(&provider.caps, budget);
    let call = |c: &mut Vec<f64>, threads: usize| {
        let mut job = BatchedGemm {
            batch: 1,
            m: 4,
            n: 4,
            k: 4,
            alpha: 1.0,
            a: GemmMatrix::row_major(a, 4, 4),
            conj_a: false,
            b: GemmMatrix::row_major(a, 4, 4).transposed(),
            conj_b: false,
            beta: 0.0,
            c: GemmMatrixMut::row_major(c, 4, 4),
        };
        f64::gemm(provider, &mut job, threads).unwrap();
    };
    match owner {
        ParallelismOwner::Engine => pool.install(|| items.par_iter_mut().for_each(|c| call(c, 1))),
        ParallelismOwner::Provider { threads, .. } => pool.install(|| items.iter_mut().for_each(|c| call(c, threads))),
    }
}

fn expected(a: &[f64]) -> Vec<f64> {
    let mut c = vec![0.0; 16];
    for i in 0..4 {
        for j in 0..4 {
            c[i * 4 + j] = (0..4).map(|p| a[i * 4 + p] * a[j * 4 + p]).sum();
        }
    }
    c
}

fn exercise(threads: ThreadControl, placement: PlacementControl, budget: usize) -> Arc<CountingDouble> {
    let provider = Arc::new(CountingDouble::new(threads, placement));
    let pool = rayon::ThreadPoolBuilder::new().num_threads(budget).build().unwrap();
    let a: Vec<f64> = (0..16).map(|i| (i as f64 * 0.37).sin()).collect();
    let mut items = vec![vec![f64::NAN; 16]; 16];
    run_operation(&provider, budget, &pool, &mut items, &a);
    let want = expected(&a);
    for c in &items {
        for (x, y) in c.iter().zip(&want) {
            assert!((x - y).abs() < 1e-12);
        }
    }
    assert_eq!(provider.threads_seen.lock().unwrap().len(), 16);
    // Never both: the threads of all calls in flight never exceed the budget.
    assert!(provider.peak_threads.load(Ordering::SeqCst) <= budget);
    provider
}

#[test]
fn global_team_owns_parallelism_alone() {
    let p = exercise(ThreadControl::GlobalOnly, PlacementControl::OwnWorkers, 4);
    assert_eq!(parallelism_owner(&p.caps, 4), ParallelismOwner::Provider { threads: 4, exclusive_permit: true });
    assert_eq!(p.peak_calls.load(Ordering::SeqCst), 1, "the engine must not split provider-owned work");
    assert!(p.threads_seen.lock().unwrap().iter().all(|&t| t == 4));
}

#[test]
fn sequential_provider_leaves_parallelism_to_the_engine() {
    let p = exercise(ThreadControl::Sequential, PlacementControl::CallingThread, 4);
    assert_eq!(parallelism_owner(&p.caps, 4), ParallelismOwner::Engine);
    assert!(p.threads_seen.lock().unwrap().iter().all(|&t| t == 1), "provider must be told single-threaded");
    assert!(p.peak_calls.load(Ordering::SeqCst) > 1, "the engine's pool should run calls concurrently");
}

#[test]
fn per_call_provider_on_engine_workers_gets_the_budget() {
    let p = exercise(ThreadControl::PerCall, PlacementControl::EngineWorkers, 3);
    assert_eq!(parallelism_owner(&p.caps, 3), ParallelismOwner::Provider { threads: 3, exclusive_permit: false });
    assert_eq!(p.peak_calls.load(Ordering::SeqCst), 1);
}

#[test]
fn budget_one_is_always_engine_owned() {
    for threads in [ThreadControl::Sequential, ThreadControl::PerCall, ThreadControl::GlobalOnly] {
        for placement in
            [PlacementControl::EngineWorkers, PlacementControl::CallingThread, PlacementControl::OwnWorkers]
        {
            let p = exercise(threads, placement, 1);
            assert_eq!(parallelism_owner(&p.caps, 1), ParallelismOwner::Engine);
            assert_eq!(p.peak_threads.load(Ordering::SeqCst), 1);
        }
    }
}

#[test]
fn per_call_on_own_workers_needs_an_exclusive_permit() {
    let caps = CountingDouble::new(ThreadControl::PerCall, PlacementControl::OwnWorkers).caps;
    assert_eq!(parallelism_owner(&caps, 2), ParallelismOwner::Provider { threads: 2, exclusive_permit: true });
    assert_eq!(parallelism_owner(&caps, 0), ParallelismOwner::Engine);
}

#[cfg(not(feature = "faer"))]
#[test]
fn injected_kind_without_faer_needs_every_dtype() {
    let naive = Arc::new(strata_provider::NaiveGemmProvider::new());
    let err = strata_provider::CpuProviderBundle::builder(strata_provider::ProviderKind::Injected)
        .provider_for(strata_tensor::DType::F64, naive)
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        strata_provider::BundleError::MissingProvider {
            dtype: strata_tensor::DType::F32,
            kind: strata_provider::ProviderKind::Injected
        }
    );
}
