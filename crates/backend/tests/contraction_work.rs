//! The facade's inline rule weighs a contraction by its multiply-adds, not only by the
//! elements of its operands: an `Auto` op with small inputs but a large product enters the
//! domain (and its kernel forks over the workers), while a small product stays inline on
//! the caller (no fork at all).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use strata_backend::prelude::*;
use strata_engine::{
    AffinityClaim, CpuDomainExecutor, CpuDomainId, CpuPlacement, ExecutorCapabilities, ExternalCpuDomain,
    ReentrancyBehaviour, ShutdownOwner,
};

/// Runs every fork-join on the calling thread, counting them, while claiming two workers.
#[derive(Debug, Default)]
struct CountingExecutor {
    forks: AtomicUsize,
    runs: AtomicUsize,
}

impl CpuDomainExecutor for CountingExecutor {
    fn run(&self, job: &mut (dyn FnMut() + Send)) {
        self.runs.fetch_add(1, Ordering::Relaxed);
        job()
    }
    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) {
        self.forks.fetch_add(1, Ordering::Relaxed);
        (0..n).for_each(body)
    }
    fn capabilities(&self) -> ExecutorCapabilities {
        ExecutorCapabilities {
            workers: 2,
            affinity: AffinityClaim::Unconstrained,
            shutdown: ShutdownOwner::Caller,
            reentrancy: ReentrancyBehaviour::RunsInline,
        }
    }
}

fn values(n: usize, seed: usize) -> Vec<f64> {
    (0..n).map(|i| ((i * 7919 + seed * 104729) % 1000) as f64 / 1000.0 - 0.5).collect()
}

#[test]
fn large_products_of_small_operands_enter_the_domain_and_small_ones_stay_inline() {
    let exec = Arc::new(CountingExecutor::default());
    let domain = ExternalCpuDomain::caller_managed("counting", CpuPlacement::Auto, exec.clone()).with_budget(2);
    let backend = CpuBackend::from_external_domains(CpuDomainId::new("counting"), vec![domain]).unwrap();

    // An outer product: 2048 input elements, 2^20 multiply-adds and output elements.
    let (m, n) = (1024, 1024);
    let (a, b) = (values(m, 1), values(n, 2));
    let lhs = TypedTensor::from_vec(a.clone(), &[m, 1]).unwrap();
    let rhs = TypedTensor::from_vec(b.clone(), &[1, n]).unwrap();
    let before = exec.forks.load(Ordering::Relaxed);
    let out = backend.dot_general(&lhs, &rhs, &DotGeneral::matmul()).unwrap();
    assert!(exec.forks.load(Ordering::Relaxed) > before, "the product was split over the domain's workers");
    let got = out.as_typed::<f64>().unwrap().data();
    for (i, row) in got.chunks(n).enumerate() {
        for (j, &x) in row.iter().enumerate() {
            assert_eq!(x, a[i] * b[j], "element ({i}, {j})");
        }
    }

    // A 16³ product: inline on the caller, no fork.
    let (x, y) = (values(256, 3), values(256, 4));
    let lhs = TypedTensor::from_vec(x.clone(), &[16, 16]).unwrap();
    let rhs = TypedTensor::from_vec(y.clone(), &[16, 16]).unwrap();
    let before = exec.forks.load(Ordering::Relaxed);
    let out = backend.dot_general(&lhs, &rhs, &DotGeneral::matmul()).unwrap();
    assert_eq!(exec.forks.load(Ordering::Relaxed), before, "a small product forked");
    let got = out.as_typed::<f64>().unwrap().data();
    for i in 0..16 {
        for j in 0..16 {
            let want: f64 = (0..16).map(|p| x[i * 16 + p] * y[p * 16 + j]).sum();
            assert!((got[i * 16 + j] - want).abs() <= 1e-14 * 16.0, "element ({i}, {j})");
        }
    }
}

#[test]
fn a_session_runs_small_ops_on_its_thread_and_large_ones_in_the_executor() {
    let exec = Arc::new(CountingExecutor::default());
    let domain = ExternalCpuDomain::caller_managed("counting", CpuPlacement::Auto, exec.clone()).with_budget(2);
    let backend = CpuBackend::from_external_domains(CpuDomainId::new("counting"), vec![domain]).unwrap();
    let small = TypedTensor::from_vec(values(64, 5), &[64]).unwrap();
    let large = TypedTensor::from_vec(values(1 << 20, 6), &[1 << 20]).unwrap();
    let (runs, forks) = backend
        .session(|s| {
            let before = (exec.runs.load(Ordering::Relaxed), exec.forks.load(Ordering::Relaxed));
            let sum = s.add(&small, &small)?;
            let after_small = (exec.runs.load(Ordering::Relaxed), exec.forks.load(Ordering::Relaxed));
            assert_eq!(after_small, before, "a 64-element add in a session left the calling thread");
            let want: Vec<f64> = small.data().iter().map(|x| x + x).collect();
            assert_eq!(sum.to_vec::<f64>()?, want);
            let big = s.add(&large, &large)?;
            let want: Vec<f64> = large.data().iter().map(|x| x + x).collect();
            assert_eq!(big.to_vec::<f64>()?, want);
            Ok::<_, Error>((
                exec.runs.load(Ordering::Relaxed) - before.0,
                exec.forks.load(Ordering::Relaxed) - before.1,
            ))
        })
        .unwrap();
    assert!(runs >= 1, "the large add ran inside the executor");
    assert!(forks >= 1, "the large add forked over the domain's workers");
}
