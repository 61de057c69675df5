//! einsum on the facade: strata-einsum's expressions, with an LRU of prepared expressions
//! per domain so a repeated spec on repeated shapes plans nothing.
//!
//! The expressions themselves live in strata-einsum (re-exported here); this module only
//! keeps the cache and picks how the steps enter the domain.

use strata_kernels::lru::{CacheLimits, LruCache};
use strata_tensor::{CacheStats, Result, Tensor, TensorRead};

pub use strata_einsum::{
    ContractionPath, EinsumError, EinsumOps, EinsumOptions, EinsumSpec, PathStep, PathStrategy, PreparedEinsum,
    StepKind, einsum_path,
};

use crate::backend::CpuBackend;

/// Default limits of a domain's prepared-einsum cache: 256 expressions, 8 MiB.
pub const DEFAULT_EINSUM_CACHE_LIMITS: CacheLimits = CacheLimits { max_entries: 256, max_bytes: 8 << 20 };

/// Expressions whose path costs at least this many flops run under one session (one
/// admission for every step, the domain's workers available to each); smaller ones run
/// op by op, each small step inline on the calling thread without a permit.
const SESSION_FLOPS: u128 = 1 << 24;

/// A domain's prepared expressions, keyed by a hash of spec, shapes and options (a hit
/// is confirmed against the stored expression, so a collision only costs a re-plan).
#[derive(Debug)]
struct EinsumCache {
    lru: LruCache<u64, PreparedEinsum>,
}

impl EinsumCache {
    fn new(limits: CacheLimits) -> Self {
        EinsumCache { lru: LruCache::new(limits) }
    }

    /// The prepared expression for `spec` on `shapes` under `options`, planned on a miss.
    fn prepare(&self, spec: &str, shapes: &[&[usize]], options: &EinsumOptions) -> Result<PreparedEinsum> {
        let key = PreparedEinsum::cache_key(spec, shapes, options);
        if let Some(hit) = self.lru.get(&key)
            && hit.matches(spec, shapes, options)
        {
            return Ok((*hit).clone());
        }
        let prepared = PreparedEinsum::with_options(spec, shapes, options)?;
        let bytes = prepared.footprint_bytes();
        self.lru.insert(key, std::sync::Arc::new(prepared.clone()), bytes);
        Ok(prepared)
    }
}

impl CpuBackend {
    /// The executing domain's einsum cache, created on first use with the limits the
    /// other domains' caches have (all share the last `set_einsum_cache_limits`).
    fn einsum_cache(&self) -> std::sync::Arc<EinsumCache> {
        let resources = self.domain().resources();
        if let Some(cache) = resources.get::<EinsumCache>() {
            return cache;
        }
        // Looked up before inserting: `get_or_insert_with` holds the slots' lock while
        // its closure runs.
        let limits = self
            .inner
            .shared
            .live_domains()
            .iter()
            .find_map(|d| d.resources().get::<EinsumCache>())
            .map_or(DEFAULT_EINSUM_CACHE_LIMITS, |c| c.lru.limits());
        resources.get_or_insert_with(|| EinsumCache::new(limits))
    }

    /// numpy's `einsum`: `spec` over `operands`, planned once per spec and shapes (an LRU
    /// of prepared expressions per domain) and run as `dot_general`, reduction and
    /// multiply steps on this backend. Options: [`CpuBackend::einsum_with`].
    ///
    /// Errors (`einsum`, with an [`EinsumError`] source): the spec's syntax, shapes that
    /// do not fit it, operands of different dtypes, Bool operands.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::with_threads(1)?;
    /// let a = TypedTensor::from_fn(&[2, 3], |i| (i[0] * 3 + i[1]) as f64)?;
    /// let b = TypedTensor::from_fn(&[3, 4], |i| (i[0] + i[1]) as f64)?;
    /// let c = backend.einsum("ij,jk->ki", &[(&a).into(), (&b).into()])?;
    /// assert_eq!(c.shape(), &[4, 2]);
    /// let again = backend.einsum("ij,jk->ki", &[(&a).into(), (&b).into()])?; // planned once
    /// assert_eq!(backend.einsum_cache_stats().hits, 1);
    /// assert_eq!(c.as_typed::<f64>()?.data(), again.as_typed::<f64>()?.data());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn einsum(&self, spec: &str, operands: &[TensorRead<'_>]) -> Result<Tensor> {
        self.einsum_with(spec, operands, &EinsumOptions::default())
    }

    /// [`CpuBackend::einsum`] with a path strategy or memory limit.
    pub fn einsum_with(&self, spec: &str, operands: &[TensorRead<'_>], options: &EinsumOptions) -> Result<Tensor> {
        let mut shapes: Vec<&[usize]> = Vec::with_capacity(operands.len());
        shapes.extend(operands.iter().map(TensorRead::shape));
        let prepared = self.einsum_cache().prepare(spec, &shapes, options)?;
        if prepared.path().flops() < SESSION_FLOPS || self.num_threads() == 1 {
            prepared.execute(self, operands)
        } else {
            self.with_session(|s| prepared.execute(s, operands))?
        }
    }

    /// The prepared expression for `spec` on operands of `shapes` (from this domain's
    /// cache, planned on a miss): its [`PreparedEinsum::path`] shows the plan, and
    /// [`PreparedEinsum::execute`] runs it on this backend, a session or any other.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::with_threads(1)?;
    /// let prepared = backend.einsum_prepare("abc,cd,bd->a", &[&[8, 4, 4], &[4, 6], &[4, 6]])?;
    /// println!("{}", prepared.path());
    /// assert_eq!(prepared.output_shape(), &[8]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn einsum_prepare(&self, spec: &str, shapes: &[&[usize]]) -> Result<PreparedEinsum> {
        self.einsum_prepare_with(spec, shapes, &EinsumOptions::default())
    }

    /// [`CpuBackend::einsum_prepare`] with a path strategy or memory limit.
    pub fn einsum_prepare_with(
        &self,
        spec: &str,
        shapes: &[&[usize]],
        options: &EinsumOptions,
    ) -> Result<PreparedEinsum> {
        self.einsum_cache().prepare(spec, shapes, options)
    }

    /// Prepared-einsum cache statistics summed over every domain.
    pub fn einsum_cache_stats(&self) -> CacheStats {
        let domains = self.inner.shared.live_domains();
        domains
            .iter()
            .filter_map(|d| d.resources().get::<EinsumCache>())
            .map(|c| c.lru.stats())
            .fold(CacheStats::default(), crate::controls::add_stats)
    }

    /// The limits of the prepared-einsum caches.
    pub fn einsum_cache_limits(&self) -> CacheLimits {
        self.einsum_cache().lru.limits()
    }

    /// Sets the prepared-einsum cache limits of every domain, now and for domains built
    /// later; shrinking evicts least recently used expressions at once (0 entries
    /// disables the cache: every call plans).
    pub fn set_einsum_cache_limits(&self, limits: CacheLimits) {
        for d in self.inner.shared.live_domains() {
            d.resources().get_or_insert_with(|| EinsumCache::new(limits)).lru.set_limits(limits);
        }
    }

    /// Empties every domain's prepared-einsum cache.
    pub fn clear_einsum_cache(&self) {
        for d in self.inner.shared.live_domains() {
            if let Some(c) = d.resources().get::<EinsumCache>() {
                c.lru.clear();
            }
        }
    }
}
