//! SPEC §7: exactly one party owns the parallelism of a contraction. A large single GEMM
//! gives the provider the whole budget; many batch items are forked over our workers with
//! the provider told to use one thread; tiny work stays on the calling thread.

mod contraction_support;

use std::sync::atomic::Ordering;

use contraction_support::{Kind, Rng, Strided, ThreadExecutor};
use strata_kernels::contraction::dot_general;
use strata_kernels::{KernelContext, Parallelism};
use strata_provider::NaiveGemmProvider;
use strata_tensor::config::DotGeneralConfig;

/// Records fork-join violations of the executors used here (none are expected).
static AUDIT: strata_kernels::ScheduleAudit = strata_kernels::ScheduleAudit::new();

fn batched() -> DotGeneralConfig {
    DotGeneralConfig::new(vec![0], vec![0], vec![2], vec![1])
}

#[test]
fn the_owner_follows_the_shape_of_the_work() {
    let exec = ThreadExecutor::new(4);
    let ctx = KernelContext::new(Parallelism::new(&exec, 4, &AUDIT));
    let mut rng = Rng::new(3);
    let run = |b: usize, m: usize, k: usize, n: usize, rng: &mut Rng| {
        let provider = NaiveGemmProvider::new();
        let l = Strided::random(rng, Kind::F64, &[b, m, k], true);
        let r = Strided::random(rng, Kind::F64, &[b, k, n], true);
        let forks = exec.forks.load(Ordering::Relaxed);
        dot_general(&ctx, l.view().into(), r.view().into(), &batched(), false, false, &provider, None).unwrap();
        (provider.calls(), provider.max_threads_seen(), exec.forks.load(Ordering::Relaxed) - forks)
    };
    // One large product: the provider gets the budget, we do not fork.
    let (calls, threads, forks) = run(1, 96, 96, 96, &mut rng);
    assert_eq!((calls, threads, forks), (1, 4, 0));
    // Many items: our fork over items, the provider single-threaded in each.
    let (calls, threads, forks) = run(32, 24, 24, 24, &mut rng);
    assert!(calls >= 4, "items were split over workers ({calls} calls)");
    assert_eq!((threads, forks), (1, 1));
    // Two large items, fewer than the workers: the provider owns the parallelism.
    let (_, threads, forks) = run(2, 80, 80, 80, &mut rng);
    assert_eq!((threads, forks), (4, 0));
    // Tiny work: inline, nothing forked, provider not even called (our own loops).
    let (calls, _, forks) = run(2, 3, 3, 3, &mut rng);
    assert_eq!((calls, forks), (0, 0));
}
