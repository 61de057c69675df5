//! Statistics every strata cache reports.

/// A snapshot of a cache's counters.
///
/// ```
/// use strata_tensor::CacheStats;
/// let s = CacheStats { hits: 3, misses: 1, ..CacheStats::default() };
/// assert_eq!(s.lookups(), 4);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CacheStats {
    /// Entries held now.
    pub entries: usize,
    /// Bytes held now (as estimated by the cache for its entries).
    pub bytes: usize,
    /// Lookups that found an entry.
    pub hits: u64,
    /// Lookups that found none.
    pub misses: u64,
    /// Entries dropped to respect the entry or byte limit.
    pub evictions: u64,
    /// Times the cache was cleared.
    pub clears: u64,
}

impl CacheStats {
    /// Hits plus misses.
    pub fn lookups(&self) -> u64 {
        self.hits + self.misses
    }
}
