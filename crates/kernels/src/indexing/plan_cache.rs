//! The domain's cache of compiled indexed-operation plans (gather, scatter, dynamic slice,
//! dynamic update slice), an LRU with entry and byte limits.

use std::sync::Arc;

use strata_tensor::config::{GatherConfig, ScatterConfig};
use strata_tensor::{CacheStats, DType, Result, TensorRead};

use super::dynamic::{DynamicSlicePlan, DynamicUpdatePlan};
use super::gather::GatherPlan;
use super::scatter::ScatterPlan;
use crate::lru::{CacheLimits, LruCache};

/// A tensor's shape and element strides: what a plan depends on (the offset does not).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct StridedShape {
    pub(crate) shape: Vec<usize>,
    pub(crate) strides: Vec<isize>,
}

impl StridedShape {
    pub(crate) fn of(t: &TensorRead<'_>) -> Self {
        let view = t.view();
        StridedShape { shape: view.shape().to_vec(), strides: view.layout().strides().to_vec() }
    }

    fn heap_bytes(&self) -> usize {
        self.shape.len() * (size_of::<usize>() + size_of::<isize>())
    }
}

/// What identifies a compiled plan: the op, the dtypes, every shape and stride the plan
/// bakes in, and the config.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum IndexedPlanKey {
    Gather {
        dtype: DType,
        index_dtype: DType,
        operand: StridedShape,
        indices: StridedShape,
        config: GatherConfig,
    },
    Scatter {
        dtype: DType,
        index_dtype: DType,
        operand: StridedShape,
        indices: StridedShape,
        updates: StridedShape,
        config: ScatterConfig,
    },
    DynamicSlice {
        dtype: DType,
        operand: Vec<usize>,
        sizes: Vec<usize>,
    },
    DynamicUpdateSlice {
        dtype: DType,
        operand: Vec<usize>,
        update: Vec<usize>,
    },
}

impl IndexedPlanKey {
    fn heap_bytes(&self) -> usize {
        let dims = |v: &[usize]| size_of_val(v);
        match self {
            IndexedPlanKey::Gather { operand, indices, config, .. } => {
                operand.heap_bytes()
                    + indices.heap_bytes()
                    + dims(&config.offset_dims)
                    + dims(&config.collapsed_slice_dims)
                    + dims(&config.operand_batching_dims)
                    + dims(&config.start_indices_batching_dims)
                    + dims(&config.start_index_map)
                    + dims(&config.slice_sizes)
            }
            IndexedPlanKey::Scatter { operand, indices, updates, config, .. } => {
                operand.heap_bytes()
                    + indices.heap_bytes()
                    + updates.heap_bytes()
                    + dims(&config.update_window_dims)
                    + dims(&config.inserted_window_dims)
                    + dims(&config.input_batching_dims)
                    + dims(&config.scatter_indices_batching_dims)
                    + dims(&config.scatter_dims_to_operand_dims)
            }
            IndexedPlanKey::DynamicSlice { operand, sizes, .. } => dims(operand) + dims(sizes),
            IndexedPlanKey::DynamicUpdateSlice { operand, update, .. } => dims(operand) + dims(update),
        }
    }
}

/// A compiled plan of one of the four cached ops.
#[derive(Debug)]
pub(crate) enum IndexedPlan {
    Gather(GatherPlan),
    Scatter(ScatterPlan),
    DynamicSlice(DynamicSlicePlan),
    DynamicUpdateSlice(DynamicUpdatePlan),
}

impl IndexedPlan {
    fn heap_bytes(&self) -> usize {
        match self {
            IndexedPlan::Gather(p) => p.heap_bytes(),
            IndexedPlan::Scatter(p) => p.heap_bytes(),
            IndexedPlan::DynamicSlice(p) => p.heap_bytes(),
            IndexedPlan::DynamicUpdateSlice(p) => p.heap_bytes(),
        }
    }
}

/// An LRU cache of compiled indexed-operation plans (gather, scatter, dynamic slice,
/// dynamic update slice) keyed by op, dtypes, shapes, strides and config. A CPU domain owns
/// one and passes it to the kernels; a plan found in the cache skips validation and
/// compilation (the key proves both already succeeded for exactly these inputs).
///
/// Each entry's size is estimated as the key and plan structs plus their heap vectors.
///
/// ```
/// use strata_kernels::{KernelContext, indexing::{IndexedPlanCache, gather}};
/// use strata_kernels::lru::CacheLimits;
/// use strata_tensor::{Tensor, config::GatherConfig};
/// let cache = IndexedPlanCache::new(CacheLimits::new(16, 1 << 16));
/// let table = Tensor::zeros(strata_tensor::DType::F64, &[8, 4]).unwrap();
/// let rows = Tensor::from_vec(vec![1i64, 2], &[2, 1]).unwrap();
/// let ctx = KernelContext::sequential();
/// for _ in 0..3 {
///     gather(&ctx, &(&table).into(), &(&rows).into(), &GatherConfig::rows(2, 4), Some(&cache)).unwrap();
/// }
/// let s = cache.stats();
/// assert_eq!((s.entries, s.hits, s.misses), (1, 2, 1));
/// ```
#[derive(Debug)]
pub struct IndexedPlanCache {
    plans: LruCache<IndexedPlanKey, IndexedPlan>,
}

impl IndexedPlanCache {
    /// Default limits: 512 plans, 4 MiB.
    pub const DEFAULT_LIMITS: CacheLimits = CacheLimits { max_entries: 512, max_bytes: 4 << 20 };

    /// An empty cache with `limits`.
    pub fn new(limits: CacheLimits) -> Self {
        IndexedPlanCache { plans: LruCache::new(limits) }
    }

    /// Replaces the limits; shrinking evicts least recently used plans at once.
    pub fn set_limits(&self, limits: CacheLimits) {
        self.plans.set_limits(limits);
    }

    /// The current limits.
    pub fn limits(&self) -> CacheLimits {
        self.plans.limits()
    }

    /// Drops every plan and counts one clear.
    pub fn clear(&self) {
        self.plans.clear();
    }

    /// Entries, estimated bytes, hits, misses, evictions and clears.
    pub fn stats(&self) -> CacheStats {
        self.plans.stats()
    }

    /// The plan for `key`, built by `build` and stored on a miss. Build errors are returned
    /// and nothing is stored.
    pub(crate) fn get_or_build(
        &self,
        key: IndexedPlanKey,
        build: impl FnOnce() -> Result<IndexedPlan>,
    ) -> Result<Arc<IndexedPlan>> {
        let key_bytes = size_of::<IndexedPlanKey>() + key.heap_bytes();
        self.plans.get_or_try_insert_with(key, || {
            let plan = build()?;
            let bytes = key_bytes + size_of::<IndexedPlan>() + plan.heap_bytes();
            Ok((plan, bytes))
        })
    }
}

impl Default for IndexedPlanCache {
    fn default() -> Self {
        IndexedPlanCache::new(Self::DEFAULT_LIMITS)
    }
}

/// The plan from `cache` (keyed by `key()`), or freshly built when there is no cache.
pub(crate) fn plan_for(
    cache: Option<&IndexedPlanCache>,
    key: impl FnOnce() -> IndexedPlanKey,
    build: impl FnOnce() -> Result<IndexedPlan>,
) -> Result<Arc<IndexedPlan>> {
    match cache {
        Some(cache) => cache.get_or_build(key(), build),
        None => build().map(Arc::new),
    }
}
