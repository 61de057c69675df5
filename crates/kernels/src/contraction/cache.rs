//! Caches of contraction analyses: the domain's LRU cache, shared by every call in the
//! domain, and a caller-held cache of numbered slots for contractions repeated in a loop
//! (a slot is checked by one key comparison, with no hashing and no shared lock).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use strata_tensor::config::DotGeneralConfig;
use strata_tensor::{CacheStats, DType, Error, Result};

use super::plan::{ContractionPlan, Geometry};
use crate::lru::{CacheLimits, LruCache};

/// Everything a contraction analysis depends on, packed into one vector of words (one
/// allocation per lookup; length prefixes keep the packing unambiguous). Offsets are not
/// part of it: the plan is the same for every window into the same buffers. The hash is a
/// precomputed fingerprint of the words, so a lookup hashes eight bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PlanKey {
    words: Vec<isize>,
    fingerprint: u64,
}

impl std::hash::Hash for PlanKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.fingerprint)
    }
}

impl PlanKey {
    /// The key of a contraction of `dtype` with this geometry and config.
    pub(crate) fn new(dtype: DType, geometry: &Geometry<'_>, config: &DotGeneralConfig) -> PlanKey {
        let g = geometry;
        let dims = [&config.lhs_batch, &config.rhs_batch, &config.lhs_contracting, &config.rhs_contracting];
        let len = 6
            + 2 * (g.lhs_shape.len() + g.rhs_shape.len())
            + g.out_strides.len()
            + dims.iter().map(|d| d.len()).sum::<usize>();
        let mut words: Vec<isize> = Vec::with_capacity(len);
        let dtype_tag = strata_provider::GemmDTypes::slot(dtype).map_or(-1, |s| s as isize);
        words.extend([
            dtype_tag,
            isize::from(g.needs_unit_stride),
            g.lhs_shape.len() as isize,
            g.rhs_shape.len() as isize,
            config.lhs_batch.len() as isize,
            config.lhs_contracting.len() as isize,
        ]);
        words.extend(g.lhs_shape.iter().map(|&e| e as isize));
        words.extend_from_slice(g.lhs_strides);
        words.extend(g.rhs_shape.iter().map(|&e| e as isize));
        words.extend_from_slice(g.rhs_strides);
        words.extend_from_slice(g.out_strides);
        for d in dims {
            words.extend(d.iter().map(|&a| a as isize));
        }
        // A multiply-rotate hash of the words (no quality needed beyond spreading keys over
        // the map: equality still compares every word).
        let fingerprint = words
            .iter()
            .fold(0x243F_6A88_85A3_08D3u64, |h, &w| (h ^ w as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29));
        PlanKey { words, fingerprint }
    }

    fn footprint_bytes(&self) -> usize {
        size_of::<Self>() + self.words.len() * size_of::<isize>()
    }
}

fn entry_bytes(key: &PlanKey, plan: &ContractionPlan) -> usize {
    key.footprint_bytes() + plan.footprint_bytes()
}

/// The domain's cache of contraction analyses: least recently used entries are evicted
/// past an entry limit or a byte limit.
///
/// ```
/// use strata_kernels::contraction::ContractionAnalysisCache;
/// use strata_kernels::lru::CacheLimits;
/// let cache = ContractionAnalysisCache::new(CacheLimits::new(64, 1 << 16));
/// assert_eq!(cache.stats().entries, 0);
/// cache.clear();
/// assert_eq!(cache.stats().clears, 1);
/// ```
#[derive(Debug)]
pub struct ContractionAnalysisCache {
    lru: LruCache<PlanKey, ContractionPlan>,
}

impl Default for ContractionAnalysisCache {
    /// 512 entries, 1 MiB: a few hundred distinct contraction shapes, far more than a
    /// typical tensor-network sweep uses.
    fn default() -> Self {
        ContractionAnalysisCache::new(CacheLimits::new(512, 1 << 20))
    }
}

impl ContractionAnalysisCache {
    /// An empty cache with `limits`.
    pub fn new(limits: CacheLimits) -> Self {
        ContractionAnalysisCache { lru: LruCache::new(limits) }
    }

    /// Counters: entries, bytes, hits, misses, evictions, clears.
    pub fn stats(&self) -> CacheStats {
        self.lru.stats()
    }

    /// The current limits.
    pub fn limits(&self) -> CacheLimits {
        self.lru.limits()
    }

    /// Replaces the limits, evicting at once when they shrink.
    pub fn set_limits(&self, limits: CacheLimits) {
        self.lru.set_limits(limits)
    }

    /// Drops every entry.
    pub fn clear(&self) {
        self.lru.clear()
    }

    pub(crate) fn get_or_analyze(
        &self,
        key: PlanKey,
        analyze: impl FnOnce() -> ContractionPlan,
    ) -> Arc<ContractionPlan> {
        let key_bytes = key.footprint_bytes();
        let built = self.lru.get_or_try_insert_with(key, || {
            let plan = analyze();
            let bytes = key_bytes + plan.footprint_bytes();
            Ok::<_, std::convert::Infallible>((plan, bytes))
        });
        match built {
            Ok(plan) => plan,
            Err(never) => match never {},
        }
    }
}

type Slot = Option<(PlanKey, Arc<ContractionPlan>)>;

/// A caller-held cache of numbered slots, each remembering the analysis of one
/// contraction. Pass `(cache, slot)` with every call of a contraction repeated in a loop:
/// a slot whose contraction has not changed skips the analysis; one that has changed is
/// re-analysed and replaced (counted as an eviction).
///
/// ```
/// use strata_kernels::contraction::ContractionCache;
/// let cache = ContractionCache::new(4);
/// assert_eq!(cache.slot_count(), 4);
/// assert_eq!(cache.stats().entries, 0);
/// ```
#[derive(Debug)]
pub struct ContractionCache {
    slots: Vec<Mutex<Slot>>,
    hits: AtomicU64,
    misses: AtomicU64,
    evictions: AtomicU64,
    clears: AtomicU64,
}

impl ContractionCache {
    /// A cache of `slots` empty slots, numbered `0..slots`.
    pub fn new(slots: usize) -> Self {
        ContractionCache {
            slots: (0..slots).map(|_| Mutex::new(None)).collect(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
            clears: AtomicU64::new(0),
        }
    }

    /// Number of slots.
    pub fn slot_count(&self) -> usize {
        self.slots.len()
    }

    fn lock(slot: &Mutex<Slot>) -> MutexGuard<'_, Slot> {
        // A slot is replaced in one assignment, so a poisoned lock still holds a whole entry.
        slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Counters; `entries` counts filled slots.
    pub fn stats(&self) -> CacheStats {
        let (mut entries, mut bytes) = (0, 0);
        for slot in &self.slots {
            if let Some((key, plan)) = Self::lock(slot).as_ref() {
                entries += 1;
                bytes += entry_bytes(key, plan);
            }
        }
        CacheStats {
            entries,
            bytes,
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
            clears: self.clears.load(Ordering::Relaxed),
        }
    }

    /// Empties every slot.
    pub fn clear(&self) {
        for slot in &self.slots {
            *Self::lock(slot) = None;
        }
        self.clears.fetch_add(1, Ordering::Relaxed);
    }

    /// Errors (naming `op`) unless `slot` exists.
    pub(crate) fn check_slot(&self, op: &'static str, slot: usize) -> Result<()> {
        if slot < self.slots.len() {
            Ok(())
        } else {
            Err(Error::invalid_argument(
                op,
                format!("cache slot {slot} is out of range; the cache has {} slots", self.slots.len()),
            ))
        }
    }

    /// The slot's plan when its key matches; else analyses and stores. `slot` must have
    /// passed [`check_slot`](Self::check_slot).
    pub(crate) fn get_or_analyze(
        &self,
        slot: usize,
        key: PlanKey,
        analyze: impl FnOnce() -> ContractionPlan,
    ) -> Arc<ContractionPlan> {
        // INVARIANT: the entry checked `slot` with `check_slot` before any work.
        let cell = &self.slots[slot];
        if let Some((k, plan)) = Self::lock(cell).as_ref()
            && *k == key
        {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Arc::clone(plan);
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let plan = Arc::new(analyze());
        let previous = Self::lock(cell).replace((key, Arc::clone(&plan)));
        if previous.is_some() {
            self.evictions.fetch_add(1, Ordering::Relaxed);
        }
        plan
    }
}

/// Where a contraction looks its analysis up.
#[derive(Clone, Copy, Debug)]
pub enum PlanCache<'a> {
    /// The domain's shared LRU cache.
    Domain(&'a ContractionAnalysisCache),
    /// One numbered slot of a caller-held cache.
    Slot {
        /// The caller's cache.
        cache: &'a ContractionCache,
        /// Which slot this contraction uses.
        slot: usize,
    },
}

impl PlanCache<'_> {
    pub(crate) fn check(&self, op: &'static str) -> Result<()> {
        match self {
            PlanCache::Domain(_) => Ok(()),
            PlanCache::Slot { cache, slot } => cache.check_slot(op, *slot),
        }
    }

    pub(crate) fn get_or_analyze(
        &self,
        key: PlanKey,
        analyze: impl FnOnce() -> ContractionPlan,
    ) -> Arc<ContractionPlan> {
        match self {
            PlanCache::Domain(c) => c.get_or_analyze(key, analyze),
            PlanCache::Slot { cache, slot } => cache.get_or_analyze(*slot, key, analyze),
        }
    }
}
