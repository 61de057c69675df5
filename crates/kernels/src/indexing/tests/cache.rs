//! The indexed-plan cache: one entry per distinct (op, dtypes, shapes, strides, config),
//! hit/miss/eviction/clear counts, entry and byte limits.

use strata_tensor::config::{GatherConfig, ScatterCombiner, ScatterConfig};
use strata_tensor::{CacheStats, Tensor};

use crate::KernelContext;
use crate::indexing::{IndexedPlanCache, StartIndices, dynamic_slice, gather, scatter};
use crate::lru::CacheLimits;

fn gather_rows(cache: &IndexedPlanCache, rows: usize, dtype_f64: bool) {
    let ctx = KernelContext::sequential();
    let table = if dtype_f64 {
        Tensor::zeros(strata_tensor::DType::F64, &[rows, 2]).unwrap()
    } else {
        Tensor::zeros(strata_tensor::DType::F32, &[rows, 2]).unwrap()
    };
    let idx = Tensor::from_vec(vec![0i32], &[1, 1]).unwrap();
    gather(&ctx, &(&table).into(), &(&idx).into(), &GatherConfig::rows(2, 2), Some(cache)).unwrap();
}

#[test]
fn one_entry_per_distinct_key_and_exact_counters() {
    let cache = IndexedPlanCache::new(CacheLimits::new(100, 1 << 20));
    for rows in 1..=4 {
        for _ in 0..3 {
            gather_rows(&cache, rows, false);
        }
    }
    gather_rows(&cache, 4, true); // another dtype: another plan
    let s = cache.stats();
    assert_eq!((s.entries, s.hits, s.misses, s.evictions, s.clears), (5, 8, 5, 0, 0));
    assert!(s.bytes > 0);
    // A scatter and a dynamic slice of the same shapes are distinct plans too.
    let ctx = KernelContext::sequential();
    let t = Tensor::zeros(strata_tensor::DType::F32, &[4, 2]).unwrap();
    let idx = Tensor::from_vec(vec![0i32], &[1, 1]).unwrap();
    let upd = Tensor::zeros(strata_tensor::DType::F32, &[1, 2]).unwrap();
    let cfg = ScatterConfig::rows(2, ScatterCombiner::Add);
    scatter(&ctx, &(&t).into(), &(&idx).into(), &(&upd).into(), &cfg, Some(&cache)).unwrap();
    dynamic_slice(&ctx, &(&t).into(), StartIndices::Values(&[1, 0]), &[1, 2], Some(&cache)).unwrap();
    assert_eq!(cache.stats().entries, 7);
    cache.clear();
    assert_eq!(cache.stats(), CacheStats { entries: 0, bytes: 0, hits: 8, misses: 7, evictions: 0, clears: 1 });
}

#[test]
fn entry_and_byte_limits_evict_least_recent_plans() {
    let cache = IndexedPlanCache::new(CacheLimits::new(2, 1 << 20));
    gather_rows(&cache, 1, false);
    gather_rows(&cache, 2, false);
    gather_rows(&cache, 1, false); // hit: rows=1 is now the most recent
    gather_rows(&cache, 3, false); // evicts rows=2
    gather_rows(&cache, 1, false); // still cached
    gather_rows(&cache, 2, false); // rebuilt
    let s = cache.stats();
    assert_eq!((s.entries, s.hits, s.misses, s.evictions), (2, 2, 4, 2));
    // A byte limit below one plan's size disables retention; shrinking evicts now.
    let one_plan = cache.stats().bytes / 2;
    cache.set_limits(CacheLimits::new(10, one_plan));
    assert_eq!(cache.stats().entries, 1);
    cache.set_limits(CacheLimits::new(10, 1));
    assert_eq!(cache.stats().entries, 0);
    gather_rows(&cache, 1, false);
    assert_eq!(cache.stats().entries, 0);
    assert_eq!(cache.limits(), CacheLimits::new(10, 1));
}
