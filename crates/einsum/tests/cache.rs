//! The backend's LRU of prepared expressions: hits, misses, limits (also for domains
//! built later), eviction, clear, sharing with `einsum_prepare`, concurrent use, and the
//! session path of large expressions.

use strata_backend::prelude::*;
use strata_backend::{CacheLimits, CpuPlacement};

fn matrix(n: usize, m: usize, seed: usize) -> TypedTensor<f64> {
    TypedTensor::from_fn(&[n, m], |i| ((i[0] * 31 + i[1] * 17 + seed) % 13) as f64 - 6.0).unwrap()
}

#[test]
fn repeated_calls_plan_once_and_shapes_key_the_cache() {
    let backend = CpuBackend::with_threads(1).unwrap();
    let (a, b) = (matrix(4, 5, 1), matrix(5, 6, 2));
    let first = backend.einsum("ij,jk->ik", &[(&a).into(), (&b).into()]).unwrap();
    let second = backend.einsum("ij,jk->ik", &[(&a).into(), (&b).into()]).unwrap();
    assert_eq!(first.as_typed::<f64>().unwrap().data(), second.as_typed::<f64>().unwrap().data());
    let s = backend.einsum_cache_stats();
    assert_eq!((s.entries, s.hits, s.misses), (1, 1, 1));
    assert!(s.bytes > 0);
    // Other shapes, another spec text, other options: new entries.
    let c = matrix(5, 7, 3);
    backend.einsum("ij,jk->ik", &[(&a).into(), (&c).into()]).unwrap();
    backend.einsum("ij,jk", &[(&a).into(), (&b).into()]).unwrap();
    let greedy = strata_backend::einsum::EinsumOptions::new().strategy(strata_backend::einsum::PathStrategy::Greedy);
    backend.einsum_with("ij,jk->ik", &[(&a).into(), (&b).into()], &greedy).unwrap();
    assert_eq!(backend.einsum_cache_stats().entries, 4);
    // A prepared expression comes from (and lands in) the same cache.
    let prepared = backend.einsum_prepare("ij,jk->ik", &[&[4, 5], &[5, 6]]).unwrap();
    assert_eq!(backend.einsum_cache_stats().hits, 2);
    assert_eq!(prepared.execute(&backend, &[(&a).into(), (&b).into()]).unwrap().shape(), &[4, 6]);
}

#[test]
fn limits_evict_and_clear_empties() {
    let backend = CpuBackend::with_threads(1).unwrap();
    assert_eq!(backend.einsum_cache_limits(), strata_backend::einsum::DEFAULT_EINSUM_CACHE_LIMITS);
    let a = matrix(3, 3, 0);
    for spec in ["ij->ji", "ij->i", "ij->j", "ij->"] {
        backend.einsum(spec, &[(&a).into()]).unwrap();
    }
    backend.set_einsum_cache_limits(CacheLimits::new(2, 1 << 20));
    let s = backend.einsum_cache_stats();
    assert_eq!((s.entries, s.evictions), (2, 2));
    assert_eq!(backend.einsum_cache_limits(), CacheLimits::new(2, 1 << 20));
    // A byte limit below one expression keeps nothing, and every call still works.
    backend.set_einsum_cache_limits(CacheLimits::new(8, 1));
    for _ in 0..3 {
        let t = backend.einsum("ij->ji", &[(&a).into()]).unwrap();
        assert_eq!(t.shape(), &[3, 3]);
    }
    assert_eq!(backend.einsum_cache_stats().entries, 0);
    backend.set_einsum_cache_limits(CacheLimits::disabled());
    backend.einsum("ii", &[(&a).into()]).unwrap();
    assert_eq!(backend.einsum_cache_stats().entries, 0);
    backend.set_einsum_cache_limits(CacheLimits::new(8, 1 << 20));
    backend.einsum("ii", &[(&a).into()]).unwrap();
    backend.clear_einsum_cache();
    let s = backend.einsum_cache_stats();
    assert_eq!((s.entries, s.bytes, s.clears), (0, 0, 1));
}

#[test]
fn domains_built_later_take_the_limits_set_before() {
    let backend = CpuBackend::new().unwrap();
    let limits = CacheLimits::new(7, 12345);
    backend.set_einsum_cache_limits(limits);
    let node = CpuPlacement::NumaNode(NumaNodeId(0));
    if !backend.supports_placement(&node) {
        return; // compatibility mode: no placed domains on this platform
    }
    let placed = backend.for_placement(node).unwrap();
    let a = matrix(3, 3, 0);
    placed.einsum("ij->ji", &[(&a).into()]).unwrap();
    assert_eq!(placed.einsum_cache_limits(), limits);
    assert_eq!(backend.einsum_cache_stats().entries, 1, "stats sum over every domain");
}

#[test]
fn concurrent_callers_share_one_cache() {
    let backend = CpuBackend::with_threads(1).unwrap();
    let a = matrix(6, 5, 4);
    let b = matrix(5, 4, 5);
    let want = backend.einsum("ij,jk->ki", &[(&a).into(), (&b).into()]).unwrap();
    let want = want.as_typed::<f64>().unwrap().data().to_vec();
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..50 {
                    let got = backend.einsum("ij,jk->ki", &[(&a).into(), (&b).into()]).unwrap();
                    assert_eq!(got.as_typed::<f64>().unwrap().data(), want.as_slice());
                }
            });
        }
    });
    let s = backend.einsum_cache_stats();
    assert_eq!(s.lookups(), 201);
    assert_eq!(s.entries, 1);
}

#[test]
fn large_expressions_run_in_one_session_on_two_threads() {
    let backend = CpuBackend::with_threads(2).unwrap();
    let n = 192;
    let (a, b, c) = (matrix(n, n, 1), matrix(n, n, 2), matrix(n, n, 3));
    let got = backend.einsum("ij,jk,kl->il", &[(&a).into(), (&b).into(), (&c).into()]).unwrap();
    let ab = backend.matmul(&a, &b).unwrap();
    let want = backend.matmul(&ab, &c).unwrap();
    // Small integers: every order of summation is exact.
    assert_eq!(got.as_typed::<f64>().unwrap().data(), want.as_typed::<f64>().unwrap().data());
    // Re-entry from inside the backend's own execution is refused, not a deadlock.
    let nested = backend.with_session(|_| backend.einsum("ij,jk,kl->il", &[(&a).into(), (&b).into(), (&c).into()]));
    assert_eq!(nested.unwrap().unwrap_err().kind(), ErrorKind::RuntimeState);
}
