//! Controls: buffer-pool and cache limits, statistics, reset and clear, profiling.

use std::sync::atomic::Ordering;

use strata_kernels::contraction::ContractionAnalysisCache;
use strata_kernels::indexing::IndexedPlanCache;
use strata_kernels::lru::CacheLimits;
use strata_pool::PoolStats;
use strata_tensor::CacheStats;

use crate::backend::CpuBackend;
use crate::profile::ProfileReport;

/// Two caches' statistics added field by field.
pub(crate) fn add_stats(a: CacheStats, s: CacheStats) -> CacheStats {
    CacheStats {
        entries: a.entries + s.entries,
        bytes: a.bytes + s.bytes,
        hits: a.hits + s.hits,
        misses: a.misses + s.misses,
        evictions: a.evictions + s.evictions,
        clears: a.clears + s.clears,
    }
}

fn sum_stats(all: impl Iterator<Item = CacheStats>) -> CacheStats {
    all.fold(CacheStats::default(), add_stats)
}

impl CpuBackend {
    /// The retention cap (bytes) of the domains' buffer pools.
    pub fn buffer_pool_limit(&self) -> usize {
        self.inner.shared.pool_cap_bytes.load(Ordering::Relaxed)
    }

    /// Sets the retention cap of every domain's buffer pool, now and for domains built
    /// later; shrinking evicts at once (0 disables retention).
    pub fn set_buffer_pool_limit(&self, bytes: usize) {
        let shared = &self.inner.shared;
        shared.pool_cap_bytes.store(bytes, Ordering::Relaxed);
        for d in shared.live_domains() {
            d.resources().buffer_pool().set_cap_bytes(bytes);
        }
    }

    /// Statistics of the allocation domain's buffer pool.
    pub fn buffer_pool_stats(&self) -> PoolStats {
        self.inner.allocation.resources().buffer_pool().stats()
    }

    /// Frees every retained buffer of every domain's pool and zeroes the counters.
    pub fn reset_buffer_pool(&self) {
        for d in self.inner.shared.live_domains() {
            d.resources().buffer_pool().reset();
        }
    }

    /// The limits of the indexed-plan caches (gather, scatter, dynamic slices).
    pub fn indexed_plan_cache_limits(&self) -> CacheLimits {
        *self.inner.shared.indexed_limits.lock()
    }

    /// Sets the indexed-plan cache limits of every domain, now and for domains built
    /// later; shrinking evicts least recently used plans at once.
    pub fn set_indexed_plan_cache_limits(&self, limits: CacheLimits) {
        let shared = &self.inner.shared;
        *shared.indexed_limits.lock() = limits;
        for d in shared.live_domains() {
            d.resources().get_or_insert_with(|| IndexedPlanCache::new(limits)).set_limits(limits);
        }
    }

    /// Indexed-plan cache statistics summed over every domain.
    pub fn indexed_plan_cache_stats(&self) -> CacheStats {
        let domains = self.inner.shared.live_domains();
        sum_stats(domains.iter().filter_map(|d| d.resources().get::<IndexedPlanCache>()).map(|c| c.stats()))
    }

    /// Empties every domain's indexed-plan cache.
    pub fn clear_indexed_plan_cache(&self) {
        for d in self.inner.shared.live_domains() {
            if let Some(c) = d.resources().get::<IndexedPlanCache>() {
                c.clear();
            }
        }
    }

    /// Contraction-analysis cache statistics summed over every domain.
    pub fn contraction_cache_stats(&self) -> CacheStats {
        let domains = self.inner.shared.live_domains();
        sum_stats(domains.iter().filter_map(|d| d.resources().get::<ContractionAnalysisCache>()).map(|c| c.stats()))
    }

    /// Empties every domain's contraction-analysis cache.
    pub fn clear_contraction_cache(&self) {
        for d in self.inner.shared.live_domains() {
            if let Some(c) = d.resources().get::<ContractionAnalysisCache>() {
                c.clear();
            }
        }
    }

    /// Turns per-op profiling on or off for this backend and every handle sharing its
    /// domains (also switched on at construction by `STRATA_PROFILE=1`).
    pub fn set_profiling(&self, on: bool) {
        self.inner.shared.profiler.set_enabled(on);
    }

    /// Whether profiling is on.
    pub fn profiling(&self) -> bool {
        self.inner.shared.profiler.is_enabled()
    }

    /// What the profiler collected so far.
    pub fn profile_report(&self) -> ProfileReport {
        self.inner.shared.profiler.report()
    }

    /// Forgets what the profiler collected.
    pub fn reset_profile(&self) {
        self.inner.shared.profiler.reset();
    }
}
