//! Per-domain resources: the domain's buffer pool and typed slots for caches that layers
//! above own (the kernels' plan caches), so this crate need not know their types.

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

use parking_lot::RwLock;
use strata_pool::BufferPool;

type Slot = (TypeId, Arc<dyn Any + Send + Sync>);

/// Default retention cap of a domain's buffer pool: 256 MiB.
pub const DEFAULT_DOMAIN_POOL_CAP_BYTES: usize = 256 << 20;

/// The resources one CPU domain owns: a buffer pool and one lazily created value per
/// type stored with [`DomainResources::get_or_insert_with`].
///
/// ```
/// use std::sync::Arc;
/// use strata_engine::DomainResources;
/// use strata_pool::BufferPool;
///
/// #[derive(Debug, Default)]
/// struct PlanCache { entries: usize }
///
/// let res = DomainResources::new(BufferPool::new(1 << 20));
/// let a = res.get_or_insert_with(PlanCache::default);
/// let b = res.get_or_insert_with(|| PlanCache { entries: 99 });
/// assert!(Arc::ptr_eq(&a, &b)); // created once, shared afterwards
/// assert_eq!(b.entries, 0);
/// ```
pub struct DomainResources {
    pool: BufferPool,
    // A handful of slots at most: a vector scanned under a read lock beats a hash map.
    slots: RwLock<Vec<Slot>>,
}

impl DomainResources {
    /// Resources around `pool`, with no typed slot filled yet.
    pub fn new(pool: BufferPool) -> Self {
        DomainResources { pool, slots: RwLock::new(Vec::new()) }
    }

    /// The domain's buffer pool.
    pub fn buffer_pool(&self) -> &BufferPool {
        &self.pool
    }

    /// The value of type `T` stored in this domain, if one was inserted.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        let key = TypeId::of::<T>();
        let slots = self.slots.read();
        slots.iter().find(|(k, _)| *k == key).and_then(|(_, v)| Arc::clone(v).downcast::<T>().ok())
    }

    /// The value of type `T` stored in this domain, created with `init` on first use.
    /// Concurrent first uses create it once; every caller gets the same `Arc`.
    pub fn get_or_insert_with<T: Any + Send + Sync>(&self, init: impl FnOnce() -> T) -> Arc<T> {
        if let Some(existing) = self.get::<T>() {
            return existing;
        }
        let key = TypeId::of::<T>();
        let mut slots = self.slots.write();
        if let Some((_, v)) = slots.iter().find(|(k, _)| *k == key)
            && let Ok(existing) = Arc::clone(v).downcast::<T>()
        {
            return existing;
        }
        let value = Arc::new(init());
        slots.push((key, Arc::clone(&value) as Arc<dyn Any + Send + Sync>));
        value
    }

    /// Number of typed slots filled.
    pub fn slot_count(&self) -> usize {
        self.slots.read().len()
    }
}

impl fmt::Debug for DomainResources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DomainResources").field("slots", &self.slot_count()).finish_non_exhaustive()
    }
}
