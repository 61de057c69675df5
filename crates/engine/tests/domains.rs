//! Live domains: lazy managed registry, admission, concurrency of disjoint domains,
//! re-entrancy detection, inline entry, resources and first-touch placement.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use common::{CountingExecutor, WAIT, process_mask, wait_until};
use strata_arbiter::ResourceArbiter;
use strata_engine::{
    AffinityClaim, CpuDomain, CpuPlacement, CpuPlacementGuarantee, DomainAdmission, DomainOwnership, EngineError,
    ExternalCpuDomain, ExternalDomainRegistry, FirstTouchPolicy, InlineExecutor, ManagedCpuExecutor,
    ManagedDomainRegistry, RayonCpuDomainExecutor, inside_domain_execution,
};
use strata_pool::{AllocationPolicy, AllocationRequest, BufferPool, FreshMemory};
use strata_topology::CpuSet;

fn live_registry(arbiter: Arc<ResourceArbiter>) -> ManagedDomainRegistry {
    let topo = Arc::new(strata_topology::discover().unwrap());
    let budget = topo.allowed_cpus().len().min(2);
    ManagedDomainRegistry::builder(topo).thread_budget(budget).arbiter(arbiter).build().unwrap()
}

/// One external cooperative domain per CPU set, admitted by `arbiter`.
fn cooperative_pair(a: CpuSet, b: CpuSet, arbiter: Arc<ResourceArbiter>) -> ExternalDomainRegistry {
    let exec_a = ManagedCpuExecutor::builder(a.clone(), 1).thread_name_prefix("dom-a").build().unwrap();
    let exec_b = ManagedCpuExecutor::builder(b.clone(), 1).thread_name_prefix("dom-b").build().unwrap();
    ExternalDomainRegistry::builder(process_mask())
        .domain(ExternalCpuDomain::cooperative(
            "a",
            CpuPlacement::Auto,
            a,
            CpuPlacementGuarantee::Exact,
            Arc::new(exec_a),
        ))
        .domain(ExternalCpuDomain::cooperative(
            "b",
            CpuPlacement::AllAllowed,
            b,
            CpuPlacementGuarantee::Advisory,
            Arc::new(exec_b),
        ))
        .default_domain("a")
        .arbiter(arbiter)
        .build()
        .unwrap()
}

#[test]
fn managed_domains_are_built_once_under_concurrent_first_use() {
    let reg = Arc::new(live_registry(Arc::new(ResourceArbiter::new())));
    let domains: Vec<Arc<CpuDomain>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..6)
            .map(|i| {
                let reg = Arc::clone(&reg);
                let p = if i % 2 == 0 { CpuPlacement::Auto } else { CpuPlacement::AllAllowed };
                s.spawn(move || reg.domain(&p).unwrap())
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(domains.iter().all(|d| Arc::ptr_eq(d, &domains[0])));
    assert_eq!(reg.built_domains().len(), 1);
    let d = &domains[0];
    assert_eq!(d.id().as_str(), "all-allowed");
    assert_eq!(d.cpus(), Some(&process_mask()));
    assert_eq!(d.ownership(), DomainOwnership::Managed);
    assert_eq!(d.admission(), DomainAdmission::CooperativeCpuSet);
    assert_eq!(d.guarantee(), CpuPlacementGuarantee::Exact);
    assert_eq!(d.executor().capabilities().affinity, AffinityClaim::PinnedVerified);
    assert_eq!(d.placement(), CpuPlacement::AllAllowed);

    // The node domain of this machine's first node is separate and node-local.
    let node = reg.topology().nodes()[0].id();
    let nd = reg.domain(&CpuPlacement::NumaNode(node)).unwrap();
    assert_eq!(nd.id().as_str(), format!("numa{node}"));
    assert_eq!(nd.resources().buffer_pool().numa_node(), Some(node.0 as usize));
    assert_eq!(d.resources().buffer_pool().numa_node(), None);
    assert_eq!(reg.built_domains().len(), 2);
    assert!(Arc::ptr_eq(&nd, &reg.domain(&CpuPlacement::NumaNode(node)).unwrap()));
}

#[test]
fn entering_runs_work_pinned_and_holds_the_permit() {
    let arbiter = Arc::new(ResourceArbiter::new());
    let reg = live_registry(Arc::clone(&arbiter));
    let d = reg.domain(&CpuPlacement::AllAllowed).unwrap();
    let mask = process_mask();
    {
        let entry = d.enter().unwrap();
        assert!(!entry.runs_inline());
        assert_eq!(entry.permit().map(|p| p.cpu_ids()), Some(mask.as_slice()));
        assert_eq!(entry.budget(), d.budget());
        assert!(inside_domain_execution());
        let ok = AtomicUsize::new(0);
        entry.executor().for_each_index(50, &|_| {
            if strata_topology::current_thread_affinity().unwrap() == mask && inside_domain_execution() {
                ok.fetch_add(1, Ordering::Relaxed);
            }
        });
        assert_eq!(ok.into_inner(), 50);
        let name = entry.install(|| std::thread::current().name().map(str::to_string)).unwrap().unwrap();
        assert!(name.starts_with("strata-all-allowed-"), "{name}");
        // Another thread cannot take the same CPUs while the entry lives.
        std::thread::scope(|s| {
            let refused = s.spawn(|| matches!(d.try_enter(), Err(EngineError::Admission { .. }))).join().unwrap();
            assert!(refused);
        });
    }
    assert!(!inside_domain_execution());
    // Released on drop: another thread gets in now.
    std::thread::scope(|s| assert!(s.spawn(|| d.enter_timeout(WAIT).map(drop).is_ok()).join().unwrap()));
}

#[test]
fn reentry_is_refused_on_the_thread_and_on_workers() {
    let reg = live_registry(Arc::new(ResourceArbiter::new()));
    let d = reg.domain(&CpuPlacement::AllAllowed).unwrap();
    let entry = d.enter().unwrap();
    // Same thread.
    match d.enter() {
        Err(EngineError::Reentrant { entered, active }) => {
            assert_eq!(entered.as_str(), "all-allowed");
            assert_eq!(active.as_str(), "all-allowed");
        }
        other => panic!("expected Reentrant, got {other:?}"),
    }
    assert!(matches!(d.enter_inline(&CpuPlacement::Auto), Err(EngineError::Reentrant { .. })));
    // From a task running on the domain's workers: every index sees the refusal.
    let refused = AtomicUsize::new(0);
    entry.executor().for_each_index(16, &|_| {
        if matches!(d.enter(), Err(EngineError::Reentrant { .. })) {
            refused.fetch_add(1, Ordering::Relaxed);
        }
    });
    assert_eq!(refused.into_inner(), 16);
    let mut inner = None;
    entry.executor().run(&mut || inner = Some(d.try_enter().map(drop)));
    assert!(matches!(inner, Some(Err(EngineError::Reentrant { .. }))));
    // Entering another domain from inside is refused too, naming the active one.
    let other = reg.domain(&CpuPlacement::NumaNode(reg.topology().nodes()[0].id())).unwrap();
    let mut nested = None;
    entry.executor().run(&mut || nested = Some(other.enter().map(drop)));
    match nested {
        Some(Err(EngineError::Reentrant { entered, active })) => {
            assert_eq!(entered, *other.id());
            assert_eq!(active.as_str(), "all-allowed");
        }
        other => panic!("expected Reentrant, got {other:?}"),
    }
    let e: strata_tensor::Error = d.enter().unwrap_err().into();
    assert_eq!(e.kind(), strata_tensor::ErrorKind::RuntimeState);
    drop(entry);
    // A task of the domain's own pool outside any strata execution (an application's
    // task) is served: no permit, the pool's budget, work on that task; entering again
    // from inside that entry is refused, and so is an exclusive entry from the task.
    let mut from_task = None;
    d.executor().run(&mut || {
        from_task = Some(d.enter().map(|e| {
            let nested = matches!(d.enter(), Err(EngineError::Reentrant { .. }));
            let ran_here = e.install(|| std::thread::current().id()).unwrap() == std::thread::current().id();
            (e.permit().is_none(), e.from_pool_task(), e.budget(), e.runs_operations_on_workers(), nested, ran_here)
        }));
        let exclusive = d.enter_exclusive().map(drop);
        assert!(matches!(exclusive, Err(EngineError::Reentrant { .. })), "{exclusive:?}");
    });
    assert_eq!(from_task.unwrap().unwrap(), (true, true, d.budget(), true, true, true));
    // And after everything is dropped, entering works again.
    assert!(d.enter().is_ok());
}

#[test]
fn a_panic_inside_an_entry_leaves_the_thread_and_the_cpus_clean() {
    let reg = live_registry(Arc::new(ResourceArbiter::new()));
    let d = reg.domain(&CpuPlacement::AllAllowed).unwrap();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let entry = d.enter().unwrap();
        entry.executor().for_each_index(4, &|i| assert!(i < 2, "task panics"));
    }));
    assert!(r.is_err());
    assert!(!inside_domain_execution());
    std::thread::scope(|s| assert!(s.spawn(|| d.try_enter().map(drop).is_ok()).join().unwrap()));
}

#[test]
fn disjoint_domains_run_at_the_same_time() {
    let mask = process_mask();
    if mask.len() < 2 {
        // The proof needs two CPUs to pin two single-worker domains apart.
        eprintln!("skipped: needs 2 allowed CPUs, have {mask}");
        return;
    }
    let a = CpuSet::single(mask.first());
    let b = CpuSet::single(mask.last());
    let reg = cooperative_pair(a.clone(), b.clone(), Arc::new(ResourceArbiter::new()));
    let inside = AtomicUsize::new(0);
    let both_seen = AtomicBool::new(false);
    let run = |id: &str, cpus: &CpuSet| {
        let d = reg.domain(&id.into()).unwrap();
        let entry = d.enter().unwrap();
        let mut on_cpus = false;
        entry.executor().run(&mut || {
            on_cpus = strata_topology::current_thread_affinity().unwrap() == *cpus;
            inside.fetch_add(1, Ordering::SeqCst);
            // Each job waits (bounded) for the other to be inside too: only possible if
            // both domains were admitted at once.
            if wait_until(|| inside.load(Ordering::SeqCst) == 2) {
                both_seen.store(true, Ordering::SeqCst);
            }
        });
        on_cpus
    };
    let (ra, rb) = std::thread::scope(|s| {
        let ha = s.spawn(|| run("a", &a));
        let hb = s.spawn(|| run("b", &b));
        (ha.join().unwrap(), hb.join().unwrap())
    });
    assert!(ra && rb, "each job ran on its own domain's CPU");
    assert!(both_seen.load(Ordering::SeqCst));
}

#[test]
fn overlapping_domains_wait_for_each_other() {
    let mask = process_mask();
    let reg = cooperative_pair(mask.clone(), CpuSet::single(mask.first()), Arc::new(ResourceArbiter::new()));
    let a = reg.domain(&"a".into()).unwrap();
    let b = reg.domain(&"b".into()).unwrap();
    let entry = a.enter().unwrap();
    std::thread::scope(|s| {
        let r = s.spawn(|| b.enter_timeout(Duration::from_millis(50)).map(drop)).join().unwrap();
        assert!(matches!(r, Err(EngineError::Admission { .. })), "{r:?}");
    });
    drop(entry);
    std::thread::scope(|s| assert!(s.spawn(|| b.enter_timeout(WAIT).map(drop).is_ok()).join().unwrap()));
}

#[test]
fn inline_entry_is_only_for_auto_and_takes_no_permit() {
    let reg = live_registry(Arc::new(ResourceArbiter::new()));
    let d = reg.domain(&CpuPlacement::Auto).unwrap();
    assert!(d.allows_inline(&CpuPlacement::Auto));
    match d.enter_inline(&CpuPlacement::AllAllowed) {
        Err(EngineError::InlineNotAllowed { domain }) => assert_eq!(domain.as_str(), "all-allowed"),
        other => panic!("expected InlineNotAllowed, got {other:?}"),
    }
    let caller = std::thread::current().id();
    let entry = d.enter_inline(&CpuPlacement::Auto).unwrap();
    assert!(entry.runs_inline());
    assert!(entry.permit().is_none());
    assert_eq!(entry.budget(), 1);
    assert_eq!(entry.executor().capabilities().workers, 1);
    let same_thread = AtomicUsize::new(0);
    entry.executor().for_each_index(5, &|_| {
        if std::thread::current().id() == caller {
            same_thread.fetch_add(1, Ordering::Relaxed);
        }
    });
    assert_eq!(same_thread.into_inner(), 5);
    // A permit-holding entry from another thread is not blocked by inline work.
    std::thread::scope(|s| assert!(s.spawn(|| d.try_enter().map(drop).is_ok()).join().unwrap()));
    assert!(matches!(d.enter(), Err(EngineError::Reentrant { .. })));
}

#[test]
fn caller_managed_domains_take_no_permit_but_detect_reentry() {
    let pool = Arc::new(rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap());
    let reg = ExternalDomainRegistry::builder(process_mask())
        .domain(ExternalCpuDomain::caller_managed(
            "callers",
            CpuPlacement::Auto,
            Arc::new(RayonCpuDomainExecutor::new(Arc::clone(&pool))),
        ))
        .default_domain("callers")
        .build()
        .unwrap();
    let d = reg.default_domain();
    let entry = d.enter().unwrap();
    assert!(entry.permit().is_none());
    assert_eq!(entry.budget(), 2);
    let refused = AtomicUsize::new(0);
    entry.executor().for_each_index(8, &|_| {
        if matches!(d.enter(), Err(EngineError::Reentrant { .. })) {
            refused.fetch_add(1, Ordering::Relaxed);
        }
    });
    assert_eq!(refused.into_inner(), 8);
    // Another thread may enter concurrently: the caller manages admission.
    std::thread::scope(|s| assert!(s.spawn(|| d.try_enter().map(drop).is_ok()).join().unwrap()));
}

#[test]
fn exclusive_entry_conflicts_with_every_domain() {
    let mask = process_mask();
    let arbiter = Arc::new(ResourceArbiter::new());
    let reg = cooperative_pair(mask.clone(), CpuSet::single(mask.first()), Arc::clone(&arbiter));
    let a = reg.domain(&"a".into()).unwrap();
    let b = reg.domain(&"b".into()).unwrap();
    let entry = b.enter_exclusive().unwrap();
    assert!(entry.permit().is_some_and(|p| p.is_exclusive()));
    std::thread::scope(|s| {
        assert!(matches!(s.spawn(|| a.try_enter().map(drop)).join().unwrap(), Err(EngineError::Admission { .. })));
    });
}

#[test]
fn resources_hold_one_value_per_type_created_once() {
    #[derive(Debug)]
    struct PlanCache(usize);
    impl PlanCache {
        fn creator(&self) -> usize {
            self.0
        }
    }
    let reg = live_registry(Arc::new(ResourceArbiter::new()));
    let d = reg.domain(&CpuPlacement::AllAllowed).unwrap();
    let inits = AtomicUsize::new(0);
    let got: Vec<Arc<PlanCache>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..8)
            .map(|i| {
                let d = &d;
                let inits = &inits;
                s.spawn(move || {
                    d.resources().get_or_insert_with(|| {
                        inits.fetch_add(1, Ordering::SeqCst);
                        PlanCache(i)
                    })
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(inits.into_inner(), 1);
    assert!(got.iter().all(|c| Arc::ptr_eq(c, &got[0])));
    assert!(got[0].creator() < 8);
    assert!(d.resources().get::<u32>().is_none());
    assert_eq!(d.resources().slot_count(), 1);
    let entry = d.enter().unwrap();
    assert!(Arc::ptr_eq(&entry.resources().get::<PlanCache>().unwrap(), &got[0]));
    assert!(entry.resources().buffer_pool().same_pool(d.resources().buffer_pool()));
}

/// Records which policy calls happened, delegating to the first-touch policy under test.
struct Recording {
    inner: FirstTouchPolicy,
    calls: AtomicUsize,
}

impl AllocationPolicy for Recording {
    fn on_fresh_allocation(&self, request: &AllocationRequest, memory: FreshMemory<'_>) {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.on_fresh_allocation(request, memory)
    }
}

#[test]
fn first_touch_splits_large_buffers_over_the_domains_workers() {
    let exec = CountingExecutor::new(4);
    let policy = Arc::new(Recording { inner: FirstTouchPolicy::new(exec.clone()), calls: AtomicUsize::new(0) });
    let pool = BufferPool::on_node(64 << 20, 1, policy.clone());
    // 4 MiB: split into one part per worker.
    let big = pool.acquire_zeroed::<f64>(512 * 1024).unwrap();
    assert!(big.iter().all(|&x| x == 0.0));
    assert_eq!(exec.fork_joins.load(Ordering::SeqCst), 1);
    assert_eq!(exec.indices.load(Ordering::SeqCst), 4);
    // 8 KiB: one worker touches it.
    let small = pool.acquire_zeroed::<f32>(2048).unwrap();
    assert!(small.iter().all(|&x| x == 0.0));
    assert_eq!(exec.runs.load(Ordering::SeqCst), 1);
    assert_eq!(policy.calls.load(Ordering::SeqCst), 2);
    // A reused buffer is not touched again.
    drop(big);
    let again = pool.acquire_zeroed::<f64>(512 * 1024).unwrap();
    assert!(again.iter().all(|&x| x == 0.0));
    assert_eq!(policy.calls.load(Ordering::SeqCst), 2);
    assert_eq!(exec.fork_joins.load(Ordering::SeqCst), 1);
}

#[test]
fn first_touch_runs_on_the_pinned_workers_of_a_live_node_domain() {
    let reg = live_registry(Arc::new(ResourceArbiter::new()));
    let node = reg.topology().nodes()[0].id();
    let d = reg.domain(&CpuPlacement::NumaNode(node)).unwrap();
    let pool = d.resources().buffer_pool();
    let before = pool.stats().misses;
    let buf = pool.acquire_zeroed::<f64>(1 << 20).unwrap();
    assert_eq!(pool.stats().misses, before + 1);
    assert_eq!(buf.len(), 1 << 20);
    assert!(buf.iter().all(|&x| x == 0.0));
    // From inside the domain (a worker allocating), memory is touched in place.
    let entry = d.enter().unwrap();
    let ok = entry.install(|| pool.acquire_zeroed::<f32>(100_000).map(|b| b.iter().all(|&x| x == 0.0))).unwrap();
    assert!(ok.unwrap());
}

#[test]
fn an_inline_executor_domain_round_trips() {
    let reg = ExternalDomainRegistry::builder(process_mask())
        .domain(ExternalCpuDomain::caller_managed("inline", CpuPlacement::Auto, Arc::new(InlineExecutor)))
        .default_domain("inline")
        .build()
        .unwrap();
    let entry = reg.default_domain().enter().unwrap();
    assert_eq!(entry.install(|| 6 * 7).unwrap(), 42);
}

#[test]
fn without_pinning_auto_gets_an_advisory_unpinned_domain() {
    let topo = Arc::new(strata_topology::discover().unwrap());
    let reg = ManagedDomainRegistry::builder(topo)
        .thread_budget(1)
        .pinning(false)
        .arbiter(Arc::new(ResourceArbiter::new()))
        .build()
        .unwrap();
    let d = reg.domain(&CpuPlacement::Auto).unwrap();
    assert_eq!(d.guarantee(), CpuPlacementGuarantee::Advisory);
    assert_eq!(d.executor().capabilities().affinity, AffinityClaim::Unconstrained);
    assert!(matches!(reg.domain(&CpuPlacement::AllAllowed), Err(EngineError::AffinityUnavailable { .. })));
    assert_eq!(d.enter().unwrap().install(|| 5).unwrap(), 5);
}

/// An executor whose `run` misbehaves in one chosen way.
#[derive(Debug)]
enum BrokenRun {
    NeverRuns,
    Panics,
}

impl strata_engine::CpuDomainExecutor for BrokenRun {
    fn run(&self, _job: &mut (dyn FnMut() + Send)) {
        if let BrokenRun::Panics = self {
            panic!("executor run blew up");
        }
    }

    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) {
        (0..n).for_each(body)
    }

    fn capabilities(&self) -> strata_engine::ExecutorCapabilities {
        strata_engine::ExecutorCapabilities { workers: 2, ..InlineExecutor.capabilities() }
    }
}

fn caller_managed(executor: Arc<dyn strata_engine::CpuDomainExecutor>) -> ExternalDomainRegistry {
    ExternalDomainRegistry::builder(process_mask())
        .domain(ExternalCpuDomain::caller_managed("ext", CpuPlacement::Auto, executor))
        .default_domain("ext")
        .build()
        .unwrap()
}

#[test]
fn install_reports_a_run_that_never_runs_or_panics_and_propagates_the_jobs_panic() {
    for (exec, expect) in [(BrokenRun::NeverRuns, "without running"), (BrokenRun::Panics, "executor run blew up")] {
        let reg = caller_managed(Arc::new(exec));
        let entry = reg.default_domain().enter().unwrap();
        match entry.install(|| 7) {
            Err(EngineError::ExecutorContract { executor, reason }) => {
                assert!(executor.contains("BrokenRun"), "{executor}");
                assert!(reason.contains(expect), "{reason}");
            }
            other => panic!("expected ExecutorContract, got {other:?}"),
        }
        let e: strata_tensor::Error = entry.install(|| 7).unwrap_err().into();
        assert_eq!(e.kind(), strata_tensor::ErrorKind::RuntimeState);
    }
    // The job's own panic reaches the caller unchanged, and the domain stays usable.
    let reg = caller_managed(Arc::new(InlineExecutor));
    let d = reg.default_domain();
    let entry = d.enter().unwrap();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| entry.install(|| panic!("job blew up"))));
    assert_eq!(strata_tensor::panic_message(r.unwrap_err().as_ref()), "job blew up");
    assert_eq!(entry.install(|| 5).unwrap(), 5);
}

/// A Rayon adapter that declares nested submissions refused.
#[derive(Debug)]
struct RefusesNesting(RayonCpuDomainExecutor);

impl strata_engine::CpuDomainExecutor for RefusesNesting {
    fn run(&self, job: &mut (dyn FnMut() + Send)) {
        self.0.run(job)
    }
    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) {
        self.0.for_each_index(n, body)
    }
    fn capabilities(&self) -> strata_engine::ExecutorCapabilities {
        strata_engine::ExecutorCapabilities {
            reentrancy: strata_engine::ReentrancyBehaviour::Refused,
            ..self.0.capabilities()
        }
    }
    fn current_thread_is_worker(&self) -> bool {
        self.0.current_thread_is_worker()
    }
}

#[test]
fn an_executor_refusing_nested_submissions_keeps_ops_on_the_caller_and_serves_its_tasks_inline() {
    let pool = Arc::new(rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap());
    let reg = caller_managed(Arc::new(RefusesNesting(RayonCpuDomainExecutor::new(Arc::clone(&pool)))));
    let d = reg.default_domain();
    {
        let entry = d.enter().unwrap();
        assert!(!entry.runs_inline() && !entry.runs_operations_on_workers());
        assert_eq!(entry.budget(), 2);
    }
    let from_task = pool.install(|| d.enter().map(|e| (e.runs_inline(), e.budget(), e.from_pool_task())));
    assert_eq!(from_task.unwrap(), (true, 1, false));
    // The Rayon adapter serves nested submissions: ops run on the pool as a whole.
    let reg = caller_managed(Arc::new(RayonCpuDomainExecutor::new(Arc::clone(&pool))));
    assert!(reg.default_domain().enter().unwrap().runs_operations_on_workers());
}
