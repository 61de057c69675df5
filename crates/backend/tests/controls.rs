//! Pool and cache controls, sharing between clones, incompatible bundles, profiling.

mod common;

use std::sync::Arc;

use common::fixture_backend;
use strata_backend::prelude::*;
use strata_backend::{CacheLimits, CpuProviderBundle};
use strata_provider::{GemmDTypes, GemmError, GemmProvider, PlacementControl, ProviderCapabilities, ThreadControl};

fn tensor(data: Vec<f64>, shape: &[usize]) -> Tensor {
    Tensor::from(TypedTensor::from_vec(data, shape).unwrap())
}

#[test]
fn buffer_pool_limit_stats_and_reset_are_shared_by_clones() {
    let b = CpuBackend::with_threads(1).unwrap();
    let c = b.clone();
    b.set_buffer_pool_limit(1 << 20);
    assert_eq!(c.buffer_pool_limit(), 1 << 20);
    assert_eq!(c.buffer_pool_stats().cap_bytes, 1 << 20);
    let before = c.buffer_pool_stats().buffers;
    b.recycle(tensor(vec![0.0; 64], &[64]));
    assert_eq!(c.buffer_pool_stats().buffers, before + 1);
    c.reset_buffer_pool();
    assert_eq!(b.buffer_pool_stats().buffers, 0);
    b.set_buffer_pool_limit(0);
    b.recycle(tensor(vec![0.0; 64], &[64]));
    assert_eq!(b.buffer_pool_stats().buffers, 0);
}

#[test]
fn indexed_plan_cache_limits_apply_to_current_and_future_domains() {
    let (b, _) = fixture_backend(2, 2, 1);
    let t = tensor((0..8).map(f64::from).collect(), &[2, 4]);
    let idx = Tensor::from(TypedTensor::from_vec(vec![1i64], &[1, 1]).unwrap());
    b.gather(&t, &idx, &GatherConfig::rows(2, 4)).unwrap();
    b.gather(&t, &idx, &GatherConfig::rows(2, 4)).unwrap();
    let s = b.indexed_plan_cache_stats();
    assert_eq!((s.entries, s.hits, s.misses), (1, 1, 1));
    let limits = CacheLimits::new(0, 0);
    b.set_indexed_plan_cache_limits(limits);
    assert_eq!(b.indexed_plan_cache_limits(), limits);
    assert_eq!(b.indexed_plan_cache_stats().entries, 0);
    // A domain built after the change gets the new limits.
    let node = b.for_placement(CpuPlacement::NumaNode(NumaNodeId(1))).unwrap();
    node.gather(&t, &idx, &GatherConfig::rows(2, 4)).unwrap();
    assert_eq!(node.indexed_plan_cache_stats().entries, 0);
    b.set_indexed_plan_cache_limits(CacheLimits::new(16, 1 << 20));
    node.gather(&t, &idx, &GatherConfig::rows(2, 4)).unwrap();
    assert_eq!(b.indexed_plan_cache_stats().entries, 1);
    b.clear_indexed_plan_cache();
    let s = b.indexed_plan_cache_stats();
    assert_eq!(s.entries, 0);
    assert!(s.clears >= 1);
}

#[test]
fn contraction_cache_is_shared_by_clones_and_clearable() {
    let b = CpuBackend::with_threads(1).unwrap();
    b.clear_contraction_cache();
    let before = b.contraction_cache_stats();
    let c = b.clone();
    // 16x16x16 multiply-adds: above the size that skips analysis (and so the cache).
    let x = tensor((0..256).map(f64::from).collect(), &[16, 16]);
    b.matmul(&x, &x).unwrap();
    c.matmul(&x, &x).unwrap();
    let after = c.contraction_cache_stats();
    assert_eq!(after.lookups() - before.lookups(), 2);
    assert!(after.hits > before.hits, "the clone's lookup hit the analysis cached by the original");
    b.clear_contraction_cache();
    let cleared = c.contraction_cache_stats();
    assert_eq!(cleared.entries, 0);
    assert_eq!(cleared.clears, after.clears + 1);
}

/// A provider that owns its own threads (like a multithreaded BLAS), which cannot keep an
/// exact pinning without an exclusive permit.
#[derive(Debug)]
struct OwnThreadsProvider;

impl GemmProvider for OwnThreadsProvider {
    fn capabilities(&self) -> ProviderCapabilities {
        ProviderCapabilities {
            name: "own-threads".into(),
            threads: ThreadControl::GlobalOnly,
            placement: PlacementControl::OwnWorkers,
            dtypes: GemmDTypes::ALL,
            needs_unit_stride: false,
        }
    }

    fn gemm_f64(
        &self,
        _job: &mut strata_provider::BatchedGemm<'_, f64>,
        _par: &dyn strata_provider::ProviderParallelism,
    ) -> Result<(), GemmError> {
        Err(GemmError::unsupported("own-threads", "test double"))
    }
}

#[test]
fn an_incompatible_bundle_is_refused_for_lazily_built_node_domains_too() {
    let (b, _) = fixture_backend(2, 2, 1);
    let bundle =
        CpuProviderBundle::builder(ProviderKind::Injected).provider(Arc::new(OwnThreadsProvider)).build().unwrap();
    let err = b.with_provider_bundle(bundle).unwrap_err();
    assert!(matches!(err, CpuBackendError::Placement { .. }), "{err:?}");
    let e: strata_tensor::Error = err.into();
    assert!(e.message().contains("own-threads"), "{}", e.message());
    // A compatible bundle is accepted and changes the identity.
    let ok = b.with_provider_bundle(CpuProviderBundle::new(ProviderKind::Faer).unwrap()).unwrap();
    assert_ne!(ok.runtime_identity(), b.runtime_identity());
}

#[test]
fn profiling_counts_ops_and_exports_chrome_trace() {
    let b = CpuBackend::with_threads(1).unwrap();
    b.set_profiling(true);
    assert!(b.profiling());
    b.reset_profile();
    let x = tensor(vec![1.0, 2.0], &[2]);
    for _ in 0..3 {
        b.add(&x, &x).unwrap();
    }
    b.with_session(|s| s.sum(&x, &[0]).unwrap()).unwrap();
    let report = b.profile_report();
    assert_eq!(report.op("add").map(|o| o.count), Some(3));
    assert_eq!(report.op("reduce_sum").map(|o| o.count), Some(1));
    assert_eq!(report.events.len(), 4);
    let text = report.to_string();
    assert!(text.contains("add") && text.contains("reduce_sum"));
    let json = report.to_chrome_trace();
    assert!(json.starts_with("{\"traceEvents\":[{\"name\":\"add\""));
    assert_eq!(json.matches("\"ph\":\"X\"").count(), 4);
    b.set_profiling(false);
    b.add(&x, &x).unwrap();
    assert_eq!(b.profile_report().op("add").map(|o| o.count), Some(3));
}

#[test]
fn dropped_results_return_to_the_pool_and_may_outlive_the_backend() {
    // The user's loop `let c = add(a, b)?; ...; drop(c)`: one fresh output in all.
    let b = CpuBackend::with_threads(2).unwrap();
    let n = 1 << 18;
    let x = tensor((0..n).map(|i| i as f64).collect(), &[n]);
    let y = tensor((0..n).map(|i| 0.5 * i as f64).collect(), &[n]);
    b.reset_buffer_pool();
    for _ in 0..20 {
        let c = b.add(&x, &y).unwrap();
        let c = c.as_typed::<f64>().unwrap();
        assert!(c.data().iter().enumerate().all(|(i, &v)| v == 1.5 * i as f64));
    }
    let s = b.buffer_pool_stats();
    assert_eq!((s.misses, s.hits, s.returned_on_drop), (1, 19, 20));
    assert!(s.retained_bytes <= s.cap_bytes);
    // A result may outlive its backend: it still reads, and dropping it frees it.
    let kept = b.add(&x, &y).unwrap();
    drop(b);
    assert_eq!(kept.as_typed::<f64>().unwrap().data()[n - 1], 1.5 * (n - 1) as f64);
    drop(kept);
}

#[test]
fn empty_gives_every_dtype_and_shape_and_reuses_the_pools_pages() {
    let b = CpuBackend::with_threads(1).unwrap();
    b.reset_buffer_pool();
    for dtype in DType::ALL {
        for shape in [&[][..], &[0, 3][..], &[3, 5, 7][..]] {
            let t = b.empty(dtype, shape).unwrap();
            assert_eq!((t.dtype(), t.shape()), (dtype, shape));
        }
    }
    // A large buffer comes from the pool and, dropped, goes back to it: the next
    // request of that size is served from it (a hit), not from fresh pages.
    let n = 1 << 18;
    let first = b.empty(DType::F64, &[n]).unwrap();
    let misses = b.buffer_pool_stats().misses;
    drop(first);
    assert!(b.buffer_pool_stats().returned_on_drop >= 1);
    let hits = b.buffer_pool_stats().hits;
    let mut again = b.empty(DType::F64, &[n]).unwrap().into_typed::<f64>().unwrap();
    let stats = b.buffer_pool_stats();
    assert_eq!((stats.hits, stats.misses), (hits + 1, misses));
    // Its contents are the caller's to write; once written they read back.
    again.data_mut().iter_mut().enumerate().for_each(|(i, x)| *x = i as f64);
    assert!(again.data().iter().enumerate().all(|(i, &x)| x == i as f64));
}

#[test]
fn empty_refuses_a_shape_whose_size_overflows() {
    let b = CpuBackend::with_threads(1).unwrap();
    let e = b.empty(DType::F32, &[usize::MAX, 2]).unwrap_err();
    assert_eq!(e.op(), "empty");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}
