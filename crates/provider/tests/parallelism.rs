//! One parallelism owner per operation: a counting double proves that the provider's
//! threads and the engine's pool never run at once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rayon::prelude::*;
use strata_provider::{
    BatchedGemm, GemmDTypes, GemmError, GemmMatrix, GemmMatrixMut, GemmProvider, GemmScalar, ParallelismOwner,
    PlacementControl, ProviderCapabilities, ProviderParallelism, ScopedThreadParallelism, ThreadControl,
    parallelism_owner, reference,
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
    fn gemm_f64(&self, job: &mut BatchedGemm<'_, f64>, par: &dyn ProviderParallelism) -> Result<(), GemmError> {
        let threads = par.threads();
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
        f64::gemm(provider, &mut job, &ScopedThreadParallelism::new(threads)).unwrap();
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

/// Claims four workers, runs every index on the calling thread, and records the calls.
#[derive(Default)]
struct RecordingParallelism {
    forks: Mutex<Vec<usize>>,
    ran: Mutex<Vec<(usize, std::thread::ThreadId)>>,
}

// SAFETY: a plain loop (each index once, in range, all finished before returning).
unsafe impl ProviderParallelism for RecordingParallelism {
    fn threads(&self) -> usize {
        4
    }
    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) -> Result<(), strata_provider::ScheduleError> {
        self.forks.lock().unwrap().push(n);
        for i in 0..n {
            self.ran.lock().unwrap().push((i, std::thread::current().id()));
            body(i);
        }
        Ok(())
    }
}

#[cfg(feature = "faer")]
#[test]
fn faer_forks_only_through_the_parallelism_it_is_handed() {
    use strata_provider::FaerGemmProvider;
    // Tall, wide and square products: every panel split goes through the double, whose
    // indices all run on this thread — no other thread may take part.
    for (m, n, k) in [(512, 96, 64), (96, 512, 64), (256, 256, 33)] {
        let a: Vec<f64> = (0..m * k).map(|i| ((i % 17) as f64 - 8.0) / 7.0).collect();
        let b: Vec<f64> = (0..k * n).map(|i| ((i % 13) as f64 - 6.0) / 5.0).collect();
        let mut c = vec![f64::NAN; m * n];
        let par = RecordingParallelism::default();
        let mut job = BatchedGemm {
            batch: 1,
            m,
            n,
            k,
            alpha: 1.0,
            a: GemmMatrix::row_major(&a, m, k),
            conj_a: false,
            b: GemmMatrix::row_major(&b, k, n),
            conj_b: false,
            beta: 0.0,
            c: GemmMatrixMut::row_major(&mut c, m, n),
        };
        f64::gemm(&FaerGemmProvider, &mut job, &par).unwrap();
        let forks = par.forks.into_inner().unwrap();
        assert_eq!(forks.len(), 1, "{m}x{n}x{k}: one fork-join per product");
        assert!(forks[0] > 1, "{m}x{n}x{k}: split into panels");
        let ran = par.ran.into_inner().unwrap();
        let me = std::thread::current().id();
        assert_eq!(ran.iter().map(|r| r.0).collect::<Vec<_>>(), (0..forks[0]).collect::<Vec<_>>());
        assert!(ran.iter().all(|r| r.1 == me));
        for i in 0..m {
            for j in 0..n {
                let want: f64 = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
                assert!((c[i * n + j] - want).abs() <= 1e-12 * (1.0 + want.abs()), "{m}x{n}x{k} at ({i}, {j})");
            }
        }
    }
}

/// Skips the last index and says so: the provider must report the broken schedule.
struct SkippingParallelism;

// SAFETY: runs indices at most once, in range, and never claims success when it skipped.
unsafe impl ProviderParallelism for SkippingParallelism {
    fn threads(&self) -> usize {
        2
    }
    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) -> Result<(), strata_provider::ScheduleError> {
        (0..n.saturating_sub(1)).for_each(body);
        Err(strata_provider::ScheduleError::new("skipping-double", format!("index {} never ran", n - 1)))
    }
}

#[cfg(feature = "faer")]
#[test]
fn a_failed_fork_join_is_a_schedule_error() {
    let (m, n, k) = (256, 256, 8);
    let a = vec![1.0f64; m * k];
    let mut c = vec![0.0f64; m * n];
    let mut job = BatchedGemm {
        batch: 1,
        m,
        n,
        k,
        alpha: 1.0,
        a: GemmMatrix::row_major(&a, m, k),
        conj_a: false,
        b: GemmMatrix::row_major(&a, m, k).transposed(),
        conj_b: false,
        beta: 0.0,
        c: GemmMatrixMut::row_major(&mut c, m, n),
    };
    let err = f64::gemm(&strata_provider::FaerGemmProvider, &mut job, &SkippingParallelism).unwrap_err();
    assert!(matches!(err, GemmError::Schedule(_)), "{err:?}");
    let converted: strata_tensor::Error = err.into();
    assert_eq!(converted.kind(), strata_tensor::ErrorKind::RuntimeState);
    assert!(converted.message().contains("skipping-double"), "{converted}");
}
