//! The managed (pinned) executor and the adapter around a caller's Rayon pool, live.

mod common;

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{FakeAffinity, process_mask};
use parking_lot::Mutex;
use strata_engine::{
    AffinityClaim, CpuDomainExecutor, EngineError, ManagedCpuExecutor, RayonCpuDomainExecutor, ShutdownOwner,
};
use strata_topology::{CpuId, CpuSet};

fn budget_for(mask: &CpuSet) -> usize {
    mask.len().min(2)
}

#[test]
fn every_worker_reads_back_the_whole_domain_set() {
    let mask = process_mask();
    let exec = ManagedCpuExecutor::builder(mask.clone(), budget_for(&mask)).build().unwrap();
    let masks = exec.worker_affinities();
    assert_eq!(masks.len(), budget_for(&mask));
    for m in masks {
        assert_eq!(m.unwrap(), mask);
    }
    // Also from inside ordinary work, read with the OS call directly.
    let seen = Mutex::new(Vec::new());
    exec.for_each_index(64, &|_| {
        seen.lock().push(strata_topology::current_thread_affinity().unwrap());
    });
    let seen = seen.into_inner();
    assert_eq!(seen.len(), 64);
    assert!(seen.iter().all(|m| *m == mask));
    let caps = exec.capabilities();
    assert_eq!(caps.workers, budget_for(&mask));
    assert_eq!(caps.affinity, AffinityClaim::PinnedVerified);
    assert_eq!(caps.shutdown, ShutdownOwner::Strata);
}

#[test]
fn a_single_cpu_domain_pins_to_that_cpu() {
    let mask = process_mask();
    let cpu = CpuSet::single(mask.last());
    let exec = ManagedCpuExecutor::builder(cpu.clone(), 1).build().unwrap();
    let mut observed = None;
    exec.run(&mut || observed = Some(strata_topology::current_thread_affinity().unwrap()));
    assert_eq!(observed.unwrap(), cpu);
}

#[test]
fn workers_are_named_and_run_jobs_off_the_caller() {
    let mask = process_mask();
    let exec =
        ManagedCpuExecutor::builder(mask.clone(), budget_for(&mask)).thread_name_prefix("exec-test").build().unwrap();
    let mut name = None;
    let caller = std::thread::current().id();
    let mut other_thread = false;
    exec.run(&mut || {
        name = std::thread::current().name().map(str::to_string);
        other_thread = std::thread::current().id() != caller;
    });
    let name = name.unwrap();
    assert!(name.starts_with("exec-test-"), "{name}");
    assert!(other_thread);
    assert!(!exec.current_thread_is_worker());
    let mut inside = false;
    exec.run(&mut || inside = exec.current_thread_is_worker());
    assert!(inside);
}

#[test]
fn stack_size_is_configurable() {
    // A 4 MiB array on the stack overflows Rust's 2 MiB default but fits in 16 MiB.
    let mask = process_mask();
    let exec = ManagedCpuExecutor::builder(mask, 1).stack_size(16 << 20).build().unwrap();
    let mut total = 0u64;
    exec.run(&mut || {
        let big = std::hint::black_box([1u8; 4 << 20]);
        total = big.iter().map(|&b| u64::from(b)).sum();
    });
    assert_eq!(total, 4 << 20);
}

#[test]
fn for_each_index_visits_every_index_exactly_once() {
    let mask = process_mask();
    let exec = ManagedCpuExecutor::builder(mask.clone(), budget_for(&mask)).build().unwrap();
    for n in [0usize, 1, 2, 7, 1000] {
        let hits: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
        exec.for_each_index(n, &|i| {
            hits[i].fetch_add(1, Ordering::Relaxed);
        });
        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1), "n = {n}");
    }
}

#[test]
fn a_panic_propagates_and_the_pool_stays_usable() {
    let mask = process_mask();
    let exec = ManagedCpuExecutor::builder(mask.clone(), budget_for(&mask)).build().unwrap();
    let r = catch_unwind(AssertUnwindSafe(|| exec.for_each_index(10, &|i| assert_ne!(i, 5, "boom"))));
    assert!(r.is_err());
    let r = catch_unwind(AssertUnwindSafe(|| exec.run(&mut || panic!("job panics"))));
    assert!(r.is_err());
    let count = AtomicUsize::new(0);
    exec.for_each_index(10, &|_| {
        count.fetch_add(1, Ordering::Relaxed);
    });
    assert_eq!(count.into_inner(), 10);
}

#[test]
fn bad_budgets_are_refused_before_any_thread_starts() {
    let mask = process_mask();
    assert!(matches!(ManagedCpuExecutor::builder(mask.clone(), 0).build(), Err(EngineError::ZeroBudget)));
    match ManagedCpuExecutor::builder(mask.clone(), mask.len() + 1).build() {
        Err(EngineError::BudgetExceedsCpus { budget, cpus }) => {
            assert_eq!((budget, cpus), (mask.len() + 1, mask.len()));
        }
        other => panic!("expected BudgetExceedsCpus, got {other:?}"),
    }
}

#[test]
fn a_worker_that_cannot_be_pinned_fails_construction() {
    let affinity = Arc::new(FakeAffinity { pin_error: Some("EPERM".to_string()), ..FakeAffinity::default() });
    let err = ManagedCpuExecutor::builder(process_mask(), 1).affinity(affinity).build().unwrap_err();
    match &err {
        EngineError::PinFailed { worker, reason, .. } => {
            assert_eq!(*worker, 0);
            assert_eq!(reason, "EPERM");
        }
        other => panic!("expected PinFailed, got {other:?}"),
    }
    let converted: strata_tensor::Error = err.into();
    assert_eq!(converted.kind(), strata_tensor::ErrorKind::BackendFailure);
    assert_eq!(converted.op(), "executor");
}

#[test]
fn a_mask_that_reads_back_differently_fails_construction() {
    let requested: CpuSet = "0-3".parse().unwrap();
    let affinity = Arc::new(FakeAffinity { reads_back: Some(CpuSet::single(CpuId(0))), ..FakeAffinity::default() });
    let err = ManagedCpuExecutor::builder(requested.clone(), 2).affinity(affinity.clone()).build().unwrap_err();
    match err {
        EngineError::PinVerificationFailed { requested: r, observed, .. } => {
            assert_eq!(r, requested);
            assert_eq!(observed, "0");
        }
        other => panic!("expected PinVerificationFailed, got {other:?}"),
    }
    // Every worker was asked for the whole set, never a single CPU.
    assert!(affinity.pinned.lock().iter().all(|s| *s == requested));
}

#[test]
fn the_double_pins_every_worker_to_the_whole_set() {
    let requested: CpuSet = "0-3".parse().unwrap();
    let affinity = Arc::new(FakeAffinity::default());
    let exec = ManagedCpuExecutor::builder(requested.clone(), 4).affinity(affinity.clone()).build().unwrap();
    assert_eq!(exec.budget(), 4);
    let pinned = affinity.pinned.lock().clone();
    assert_eq!(pinned.len(), 4);
    assert!(pinned.iter().all(|s| *s == requested));
}

#[test]
fn an_unpinned_pool_claims_nothing() {
    let affinity =
        Arc::new(FakeAffinity { pin_error: Some("must not be called".to_string()), ..FakeAffinity::default() });
    let exec = ManagedCpuExecutor::builder(process_mask(), 1).affinity(affinity).pinning(false).build().unwrap();
    assert_eq!(exec.capabilities().affinity, AffinityClaim::Unconstrained);
}

#[test]
fn the_rayon_adapter_uses_the_callers_pool_and_never_shuts_it_down() {
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new().num_threads(2).thread_name(|i| format!("caller-{i}")).build().unwrap(),
    );
    let exec = RayonCpuDomainExecutor::new(Arc::clone(&pool));
    let caps = exec.capabilities();
    assert_eq!(caps.workers, 2);
    assert_eq!(caps.shutdown, ShutdownOwner::Caller);
    assert_eq!(caps.affinity, AffinityClaim::Unconstrained);
    assert_eq!(RayonCpuDomainExecutor::declared(Arc::clone(&pool)).capabilities().affinity, AffinityClaim::Declared);

    let names = Mutex::new(BTreeSet::new());
    exec.for_each_index(100, &|_| {
        names.lock().insert(std::thread::current().name().unwrap_or("").to_string());
    });
    assert!(names.lock().iter().all(|n| n.starts_with("caller-")));
    let mut in_pool = false;
    exec.run(&mut || in_pool = pool.current_thread_index().is_some());
    assert!(in_pool);

    drop(exec);
    // The caller's pool still runs work after our handle is gone.
    assert_eq!(pool.install(|| 21 * 2), 42);
    assert_eq!(Arc::strong_count(&pool), 1);
}

#[test]
fn workers_that_do_not_report_in_time_fail_construction() {
    let affinity =
        Arc::new(FakeAffinity { pin_delay: Some(std::time::Duration::from_millis(500)), ..FakeAffinity::default() });
    let err = ManagedCpuExecutor::builder(process_mask(), 1)
        .affinity(affinity)
        .startup_timeout(std::time::Duration::from_millis(20))
        .build()
        .unwrap_err();
    match err {
        EngineError::WorkerStartTimeout { reported, expected, .. } => assert_eq!((reported, expected), (0, 1)),
        other => panic!("expected WorkerStartTimeout, got {other:?}"),
    }
}

/// An affinity hook that panics in one of its two calls.
#[derive(Debug)]
struct PanickingAffinity {
    on_read_back: bool,
}

impl strata_engine::ThreadAffinity for PanickingAffinity {
    fn pin_current_thread(&self, _cpus: &CpuSet) -> Result<(), String> {
        assert!(self.on_read_back, "the pinning hook blew up");
        Ok(())
    }

    fn current_thread_affinity(&self) -> Result<CpuSet, String> {
        panic!("the read-back hook blew up")
    }
}

#[test]
fn a_panicking_affinity_hook_is_a_construction_error_not_an_abort() {
    for (on_read_back, expect) in [(false, "the pinning hook blew up"), (true, "the read-back hook blew up")] {
        let affinity = Arc::new(PanickingAffinity { on_read_back });
        let err = ManagedCpuExecutor::builder(process_mask(), 1).affinity(affinity).build().unwrap_err();
        match &err {
            EngineError::PinFailed { worker: 0, reason, .. } => {
                assert!(reason.contains("panicked") && reason.contains(expect), "{reason}");
            }
            other => panic!("expected PinFailed, got {other:?}"),
        }
    }
    // Read-back after start-up with a hook that panics reports, per worker, instead of
    // unwinding through the pool.
    let fine =
        ManagedCpuExecutor::builder(process_mask(), 1).affinity(Arc::new(FakeAffinity::default())).build().unwrap();
    assert!(fine.worker_affinities().iter().all(Result::is_ok));
}
