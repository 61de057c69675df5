//! A thread-safe least-recently-used cache with an entry limit and a byte limit, shared by
//! every plan cache in strata (indexed-operation plans, contraction analyses).
//!
//! Values are handed out as `Arc<V>`, so a plan stays usable by a caller after the cache
//! has evicted it. The caller states each entry's size in bytes when inserting; the cache
//! only adds those figures up, it never measures anything itself.
//!
//! All operations take one mutex and run in O(1) (hash lookup plus linked-list splicing
//! over a slab of nodes). A panic while the lock was held cannot leave the state torn (no
//! user code runs under the lock), so a poisoned lock is recovered instead of propagated.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};

use strata_tensor::CacheStats;

/// The two bounds a cache respects after every operation.
///
/// ```
/// use strata_kernels::lru::CacheLimits;
/// let l = CacheLimits::new(128, 1 << 20);
/// assert_eq!((l.max_entries, l.max_bytes), (128, 1 << 20));
/// assert_eq!(CacheLimits::disabled().max_entries, 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CacheLimits {
    /// Most entries held at once (0 disables the cache).
    pub max_entries: usize,
    /// Most bytes held at once, summed over the sizes the caller gave on insert.
    pub max_bytes: usize,
}

impl CacheLimits {
    /// Limits of `max_entries` entries and `max_bytes` bytes.
    pub fn new(max_entries: usize, max_bytes: usize) -> Self {
        CacheLimits { max_entries, max_bytes }
    }

    /// Limits that retain nothing.
    pub fn disabled() -> Self {
        CacheLimits { max_entries: 0, max_bytes: 0 }
    }
}

/// Marks the end of the recency list in `prev`/`next` links.
const NIL: usize = usize::MAX;

/// One slab node: an entry and its neighbours in recency order.
struct Node<K, V> {
    key: K,
    value: Arc<V>,
    bytes: usize,
    /// More recently used neighbour (towards `head`).
    prev: usize,
    /// Less recently used neighbour (towards `tail`).
    next: usize,
}

/// Everything behind the mutex.
struct LruState<K, V> {
    index: HashMap<K, usize>,
    /// Slab of nodes; `None` slots are listed in `free` for reuse.
    nodes: Vec<Option<Node<K, V>>>,
    free: Vec<usize>,
    /// Most recently used node, or NIL when empty.
    head: usize,
    /// Least recently used node, or NIL when empty.
    tail: usize,
    limits: CacheLimits,
    bytes: usize,
    hits: u64,
    misses: u64,
    evictions: u64,
    clears: u64,
}

impl<K: Hash + Eq + Clone, V> LruState<K, V> {
    fn node(&self, slot: usize) -> &Node<K, V> {
        // INVARIANT: every slot reachable from `index`, `head`, `tail` or a node's links is
        // occupied; slots become `None` only in `remove_slot`, which unlinks them first.
        self.nodes[slot].as_ref().expect("linked LRU slot is occupied")
    }

    fn node_mut(&mut self, slot: usize) -> &mut Node<K, V> {
        // INVARIANT: as in `node`.
        self.nodes[slot].as_mut().expect("linked LRU slot is occupied")
    }

    fn unlink(&mut self, slot: usize) {
        let (prev, next) = {
            let n = self.node(slot);
            (n.prev, n.next)
        };
        if prev == NIL {
            self.head = next;
        } else {
            self.node_mut(prev).next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.node_mut(next).prev = prev;
        }
    }

    fn push_front(&mut self, slot: usize) {
        let old_head = self.head;
        {
            let n = self.node_mut(slot);
            n.prev = NIL;
            n.next = old_head;
        }
        if old_head == NIL {
            self.tail = slot;
        } else {
            self.node_mut(old_head).prev = slot;
        }
        self.head = slot;
    }

    fn touch(&mut self, slot: usize) {
        if self.head != slot {
            self.unlink(slot);
            self.push_front(slot);
        }
    }

    /// Unlinks and frees `slot`, returning its node.
    fn remove_slot(&mut self, slot: usize) -> Node<K, V> {
        self.unlink(slot);
        // INVARIANT: `slot` was linked, hence occupied.
        let node = self.nodes[slot].take().expect("linked LRU slot is occupied");
        self.index.remove(&node.key);
        self.bytes -= node.bytes;
        self.free.push(slot);
        node
    }

    /// Drops least recently used entries until both limits hold.
    fn enforce_limits(&mut self) {
        while self.tail != NIL && (self.index.len() > self.limits.max_entries || self.bytes > self.limits.max_bytes) {
            let lru = self.tail;
            self.remove_slot(lru);
            self.evictions += 1;
        }
    }

    fn insert(&mut self, key: K, value: Arc<V>, bytes: usize) {
        if let Some(&slot) = self.index.get(&key) {
            let old = std::mem::replace(&mut self.node_mut(slot).bytes, bytes);
            self.node_mut(slot).value = value;
            self.bytes = self.bytes - old + bytes;
            self.touch(slot);
        } else {
            let node = Node { key: key.clone(), value, bytes, prev: NIL, next: NIL };
            let slot = match self.free.pop() {
                Some(slot) => {
                    self.nodes[slot] = Some(node);
                    slot
                }
                None => {
                    self.nodes.push(Some(node));
                    self.nodes.len() - 1
                }
            };
            self.index.insert(key, slot);
            self.bytes += bytes;
            self.push_front(slot);
        }
        self.enforce_limits();
    }

    fn clear(&mut self) {
        self.index.clear();
        self.nodes.clear();
        self.free.clear();
        self.head = NIL;
        self.tail = NIL;
        self.bytes = 0;
        self.clears += 1;
    }
}

/// A least-recently-used cache of `Arc<V>` values with entry and byte limits and
/// [`CacheStats`]. Cheap to share between threads by reference (`&self` everywhere).
///
/// Semantics:
/// - [`get`](Self::get) counts a hit or a miss; a hit makes the entry most recently used.
/// - [`insert`](Self::insert) stores or replaces an entry, makes it most recently used,
///   then evicts least recently used entries until both limits hold. An entry larger than
///   the byte limit is therefore dropped at once (and counted as an eviction).
/// - [`set_limits`](Self::set_limits) evicts immediately when the new limits are lower.
///
/// ```
/// use std::sync::Arc;
/// use strata_kernels::lru::{CacheLimits, LruCache};
/// let cache: LruCache<&str, i32> = LruCache::new(CacheLimits::new(2, 1000));
/// cache.insert("a", Arc::new(1), 10);
/// cache.insert("b", Arc::new(2), 10);
/// assert_eq!(cache.get(&"a").as_deref(), Some(&1)); // "a" is now most recently used
/// cache.insert("c", Arc::new(3), 10); // evicts "b"
/// assert!(cache.get(&"b").is_none());
/// let s = cache.stats();
/// assert_eq!((s.entries, s.bytes, s.hits, s.misses, s.evictions), (2, 20, 1, 1, 1));
/// ```
pub struct LruCache<K, V> {
    state: Mutex<LruState<K, V>>,
}

impl<K: Hash + Eq + Clone, V> LruCache<K, V> {
    /// An empty cache with `limits`.
    pub fn new(limits: CacheLimits) -> Self {
        LruCache {
            state: Mutex::new(LruState {
                index: HashMap::new(),
                nodes: Vec::new(),
                free: Vec::new(),
                head: NIL,
                tail: NIL,
                limits,
                bytes: 0,
                hits: 0,
                misses: 0,
                evictions: 0,
                clears: 0,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, LruState<K, V>> {
        // No caller code runs while the lock is held and every method leaves the state
        // consistent before anything that could panic, so a poisoned lock holds a valid state.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The value for `key`, marking it most recently used; counts a hit or a miss.
    pub fn get(&self, key: &K) -> Option<Arc<V>> {
        let mut s = self.lock();
        match s.index.get(key).copied() {
            Some(slot) => {
                s.hits += 1;
                s.touch(slot);
                Some(Arc::clone(&s.node(slot).value))
            }
            None => {
                s.misses += 1;
                None
            }
        }
    }

    /// Stores `value` under `key` with the caller's size estimate `bytes` (replacing any
    /// entry with that key), then evicts least recently used entries past the limits.
    pub fn insert(&self, key: K, value: Arc<V>, bytes: usize) {
        self.lock().insert(key, value, bytes);
    }

    /// The cached value for `key` (a hit), or else builds one with `build` (a miss),
    /// inserts it with the size `build` reports and returns it. `build` runs without the
    /// lock held, so two threads missing on one key at once may both build; the later
    /// insert replaces the earlier one, and both callers get a valid value.
    ///
    /// ```
    /// use strata_kernels::lru::{CacheLimits, LruCache};
    /// let cache: LruCache<u32, String> = LruCache::new(CacheLimits::new(8, 1 << 10));
    /// let v = cache.get_or_try_insert_with(7, || Ok::<_, ()>(("seven".to_string(), 5))).unwrap();
    /// let again = cache.get_or_try_insert_with(7, || Err(())).unwrap();
    /// assert_eq!((v.as_str(), again.as_str()), ("seven", "seven"));
    /// assert_eq!((cache.stats().hits, cache.stats().misses), (1, 1));
    /// ```
    pub fn get_or_try_insert_with<E>(
        &self,
        key: K,
        build: impl FnOnce() -> Result<(V, usize), E>,
    ) -> Result<Arc<V>, E> {
        if let Some(hit) = self.get(&key) {
            return Ok(hit);
        }
        let (value, bytes) = build()?;
        let value = Arc::new(value);
        self.insert(key, Arc::clone(&value), bytes);
        Ok(value)
    }

    /// Replaces the limits; when they shrink, least recently used entries are evicted now.
    pub fn set_limits(&self, limits: CacheLimits) {
        let mut s = self.lock();
        s.limits = limits;
        s.enforce_limits();
    }

    /// The current limits.
    pub fn limits(&self) -> CacheLimits {
        self.lock().limits
    }

    /// Drops every entry (not counted as evictions) and counts one clear.
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// Number of entries held now.
    pub fn len(&self) -> usize {
        self.lock().index.len()
    }

    /// True when the cache holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> CacheStats {
        let s = self.lock();
        CacheStats {
            entries: s.index.len(),
            bytes: s.bytes,
            hits: s.hits,
            misses: s.misses,
            evictions: s.evictions,
            clears: s.clears,
        }
    }

    /// The keys from most to least recently used (for diagnostics and tests).
    pub fn keys_by_recency(&self) -> Vec<K> {
        let s = self.lock();
        let mut keys = Vec::with_capacity(s.index.len());
        let mut slot = s.head;
        while slot != NIL {
            let n = s.node(slot);
            keys.push(n.key.clone());
            slot = n.next;
        }
        keys
    }
}

impl<K, V> std::fmt::Debug for LruCache<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        f.debug_struct("LruCache")
            .field("limits", &s.limits)
            .field("entries", &s.index.len())
            .field("bytes", &s.bytes)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::sync::mpsc;
    use std::time::Duration;

    fn cache(entries: usize, bytes: usize) -> LruCache<u32, u32> {
        LruCache::new(CacheLimits::new(entries, bytes))
    }

    #[test]
    fn entry_limit_evicts_least_recently_used() {
        let c = cache(3, usize::MAX);
        for k in 0..3 {
            c.insert(k, Arc::new(k * 10), 1);
        }
        assert_eq!(c.keys_by_recency(), vec![2, 1, 0]);
        // Touch 0 so that 1 becomes the least recently used.
        assert_eq!(c.get(&0).as_deref(), Some(&0));
        c.insert(3, Arc::new(30), 1);
        assert_eq!(c.keys_by_recency(), vec![3, 0, 2]);
        assert!(c.get(&1).is_none());
        assert_eq!(c.stats().evictions, 1);
    }

    #[test]
    fn byte_limit_evicts_until_it_holds() {
        let c = cache(100, 100);
        c.insert(1, Arc::new(1), 40);
        c.insert(2, Arc::new(2), 40);
        c.insert(3, Arc::new(3), 50); // 130 bytes: drops 1 -> 90
        assert_eq!(c.keys_by_recency(), vec![3, 2]);
        assert_eq!(c.stats().bytes, 90);
        c.insert(4, Arc::new(4), 100); // alone it fits exactly: drops 2 and 3
        assert_eq!(c.keys_by_recency(), vec![4]);
        assert_eq!(c.stats().bytes, 100);
        assert_eq!(c.stats().evictions, 3);
    }

    #[test]
    fn oversized_entry_is_not_retained() {
        let c = cache(10, 50);
        c.insert(1, Arc::new(1), 10);
        c.insert(2, Arc::new(2), 51);
        // The oversized entry is dropped first: it evicts everything older, then itself.
        assert!(c.is_empty());
        assert_eq!(c.stats().evictions, 2);
        assert_eq!(c.stats().bytes, 0);
    }

    #[test]
    fn replacing_a_key_updates_bytes_and_recency() {
        let c = cache(10, 1000);
        c.insert(1, Arc::new(1), 10);
        c.insert(2, Arc::new(2), 20);
        c.insert(1, Arc::new(100), 30);
        assert_eq!(c.keys_by_recency(), vec![1, 2]);
        assert_eq!(c.get(&1).as_deref(), Some(&100));
        let s = c.stats();
        assert_eq!((s.entries, s.bytes, s.evictions), (2, 50, 0));
    }

    #[test]
    fn shrinking_limits_evicts_at_once_and_zero_disables() {
        let c = cache(10, 1000);
        for k in 0..6 {
            c.insert(k, Arc::new(k), 10);
        }
        c.set_limits(CacheLimits::new(4, 1000));
        assert_eq!(c.keys_by_recency(), vec![5, 4, 3, 2]);
        c.set_limits(CacheLimits::new(4, 25));
        assert_eq!(c.keys_by_recency(), vec![5, 4]);
        assert_eq!(c.stats().evictions, 4);
        c.set_limits(CacheLimits::disabled());
        assert!(c.is_empty());
        c.insert(9, Arc::new(9), 0);
        assert!(c.get(&9).is_none());
        assert_eq!(c.limits(), CacheLimits::disabled());
    }

    #[test]
    fn clear_counts_and_keeps_hit_counters() {
        let c = cache(10, 1000);
        c.insert(1, Arc::new(1), 10);
        assert!(c.get(&1).is_some());
        assert!(c.get(&2).is_none());
        c.clear();
        c.clear();
        let s = c.stats();
        assert_eq!(s, CacheStats { entries: 0, bytes: 0, hits: 1, misses: 1, evictions: 0, clears: 2 });
        // The cache works normally after a clear, reusing no stale links.
        c.insert(3, Arc::new(3), 5);
        c.insert(4, Arc::new(4), 5);
        assert_eq!(c.keys_by_recency(), vec![4, 3]);
    }

    #[test]
    fn evicted_values_stay_alive_for_holders() {
        let c = cache(1, 100);
        c.insert(1, Arc::new(11), 1);
        let held = c.get(&1).unwrap();
        c.insert(2, Arc::new(22), 1);
        assert!(c.get(&1).is_none());
        assert_eq!(*held, 11);
    }

    #[test]
    fn get_or_try_insert_with_builds_once_and_propagates_errors() {
        let c = cache(4, 100);
        let built = std::cell::Cell::new(0);
        for _ in 0..3 {
            let v = c
                .get_or_try_insert_with(5, || {
                    built.set(built.get() + 1);
                    Ok::<_, &str>((55, 8))
                })
                .unwrap();
            assert_eq!(*v, 55);
        }
        assert_eq!(built.get(), 1);
        assert_eq!(c.get_or_try_insert_with(6, || Err("no")), Err("no"));
        let s = c.stats();
        assert_eq!((s.hits, s.misses, s.entries, s.bytes), (2, 2, 1, 8));
    }

    #[test]
    fn poisoned_lock_is_recovered() {
        let c = Arc::new(cache(4, 100));
        c.insert(1, Arc::new(1), 1);
        let c2 = Arc::clone(&c);
        let joined = std::thread::spawn(move || {
            let _guard = c2.state.lock().unwrap();
            panic!("poison the cache lock on purpose");
        })
        .join();
        assert!(joined.is_err());
        assert!(c.state.is_poisoned());
        assert_eq!(c.get(&1).as_deref(), Some(&1));
        c.insert(2, Arc::new(2), 1);
        assert_eq!(c.stats().entries, 2);
    }

    #[test]
    fn concurrent_use_respects_limits_and_counts_every_lookup() {
        let c = Arc::new(cache(8, 64));
        let threads = 4;
        let per_thread = 2_000u64;
        let (done_tx, done_rx) = mpsc::channel();
        for t in 0..threads {
            let c = Arc::clone(&c);
            let done_tx = done_tx.clone();
            std::thread::spawn(move || {
                for i in 0..per_thread {
                    let key = ((i * 7 + t) % 16) as u32;
                    if c.get(&key).is_none() {
                        c.insert(key, Arc::new(key), (key as usize % 8) + 1);
                    }
                    let s = c.stats();
                    assert!(s.entries <= 8 && s.bytes <= 64);
                }
                done_tx.send(()).unwrap();
            });
        }
        for _ in 0..threads {
            done_rx.recv_timeout(Duration::from_secs(30)).expect("a cache worker finished in time");
        }
        let s = c.stats();
        assert_eq!(s.lookups(), threads * per_thread);
        assert!(s.entries <= 8 && s.bytes <= 64);
        // Every value still maps to its own key.
        for k in c.keys_by_recency() {
            if let Some(v) = c.get(&k) {
                assert_eq!(*v, k);
            }
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Get(u8),
        Insert(u8, usize),
        SetLimits(usize, usize),
        Clear,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (0u8..12).prop_map(Op::Get),
            6 => (0u8..12, 0usize..40).prop_map(|(k, b)| Op::Insert(k, b)),
            1 => (0usize..8, 0usize..120).prop_map(|(e, b)| Op::SetLimits(e, b)),
            1 => Just(Op::Clear),
        ]
    }

    proptest! {
        /// Replays random operations against a plain vector model (most recent first) and
        /// checks order, contents and every counter, plus that the limits always hold.
        #[test]
        fn matches_a_vector_model(
            entries in 0usize..8,
            bytes in 0usize..120,
            ops in proptest::collection::vec(op(), 0..200),
        ) {
            let c: LruCache<u8, usize> = LruCache::new(CacheLimits::new(entries, bytes));
            let mut model: Vec<(u8, usize)> = Vec::new(); // (key, bytes), most recent first
            let mut limits = (entries, bytes);
            let mut expect = CacheStats::default();
            let evict = |model: &mut Vec<(u8, usize)>, limits: (usize, usize), expect: &mut CacheStats| {
                while !model.is_empty()
                    && (model.len() > limits.0 || model.iter().map(|e| e.1).sum::<usize>() > limits.1)
                {
                    model.pop();
                    expect.evictions += 1;
                }
            };
            for op in ops {
                match op {
                    Op::Get(k) => {
                        let got = c.get(&k);
                        match model.iter().position(|e| e.0 == k) {
                            Some(i) => {
                                let e = model.remove(i);
                                prop_assert_eq!(got.as_deref().copied(), Some(e.1));
                                model.insert(0, e);
                                expect.hits += 1;
                            }
                            None => {
                                prop_assert!(got.is_none());
                                expect.misses += 1;
                            }
                        }
                    }
                    Op::Insert(k, b) => {
                        // The value records its size, so a get can check it is the latest.
                        c.insert(k, Arc::new(b), b);
                        model.retain(|e| e.0 != k);
                        model.insert(0, (k, b));
                        evict(&mut model, limits, &mut expect);
                    }
                    Op::SetLimits(e, b) => {
                        c.set_limits(CacheLimits::new(e, b));
                        limits = (e, b);
                        evict(&mut model, limits, &mut expect);
                    }
                    Op::Clear => {
                        c.clear();
                        model.clear();
                        expect.clears += 1;
                    }
                }
                expect.entries = model.len();
                expect.bytes = model.iter().map(|e| e.1).sum();
                let s = c.stats();
                prop_assert_eq!(s, expect);
                prop_assert!(s.entries <= limits.0 && s.bytes <= limits.1);
                prop_assert_eq!(c.keys_by_recency(), model.iter().map(|e| e.0).collect::<Vec<_>>());
            }
        }
    }
}
