//! The set of retained buffers: best-fit lookup by dtype and capacity, and one
//! least-recently-used order across all dtypes.
//!
//! Buffers live in a slab of slots linked into a doubly-linked LRU list (by index), and
//! each is also listed in a bucket keyed by (dtype, floor(log2(capacity in bytes))). A
//! lookup scans only the few buckets whose capacities can satisfy the request; removal
//! from the LRU list and from a bucket is O(1). Once the slab and buckets have grown to
//! the working set, inserting and taking buffers allocates nothing.

use strata_tensor::DType;

use crate::raw::ErasedBuffer;

/// No slot.
const NIL: usize = usize::MAX;
/// One size class per bit of `usize`.
const CLASSES: usize = usize::BITS as usize;

struct Slot {
    buffer: Option<ErasedBuffer>,
    /// Neighbour towards the least recently used end.
    older: usize,
    /// Neighbour towards the most recently used end.
    newer: usize,
    /// Bucket index and position inside it.
    bucket: usize,
    position: usize,
}

/// One bucket entry: what a lookup compares, without touching the slot.
#[derive(Clone, Copy)]
struct BucketEntry {
    bytes: usize,
    /// Insertion stamp: larger is more recently used.
    stamp: u64,
    slot: usize,
}

/// The retained buffers of one pool (not thread-safe: the pool's lock guards it).
pub(crate) struct RetainedBuffers {
    slots: Vec<Slot>,
    free_slots: Vec<usize>,
    oldest: usize,
    newest: usize,
    buckets: Vec<Vec<BucketEntry>>,
    next_stamp: u64,
    count: usize,
    bytes: usize,
}

fn size_class(bytes: usize) -> usize {
    // INVARIANT: only called with bytes > 0 (zero-capacity buffers are never retained,
    // and requests of zero bytes never look up), so the logarithm exists.
    (usize::BITS - 1 - bytes.leading_zeros()) as usize
}

fn bucket_index(dtype: DType, class: usize) -> usize {
    dtype as usize * CLASSES + class
}

impl RetainedBuffers {
    pub(crate) fn new() -> Self {
        RetainedBuffers {
            slots: Vec::new(),
            free_slots: Vec::new(),
            oldest: NIL,
            newest: NIL,
            buckets: (0..DType::ALL.len() * CLASSES).map(|_| Vec::new()).collect(),
            next_stamp: 0,
            count: 0,
            bytes: 0,
        }
    }

    /// Number of retained buffers.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// Total capacity of the retained buffers in bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Retains `buffer` (capacity > 0) as the most recently used one.
    pub(crate) fn insert(&mut self, buffer: ErasedBuffer) {
        let bytes = buffer.bytes();
        let bucket = bucket_index(buffer.dtype(), size_class(bytes));
        let stamp = self.next_stamp;
        self.next_stamp += 1;
        let position = self.buckets[bucket].len();
        let slot = Slot { buffer: Some(buffer), older: self.newest, newer: NIL, bucket, position };
        let index = match self.free_slots.pop() {
            Some(i) => {
                self.slots[i] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                self.slots.len() - 1
            }
        };
        match self.newest {
            NIL => self.oldest = index,
            newest => self.slots[newest].newer = index,
        }
        self.newest = index;
        self.buckets[bucket].push(BucketEntry { bytes, stamp, slot: index });
        self.count += 1;
        self.bytes += bytes;
    }

    /// Takes the best-fitting buffer of `dtype` whose capacity lies in
    /// `min_bytes..=max_bytes` (`min_bytes > 0`): the smallest such capacity, and among
    /// equal capacities the most recently used buffer (its cache lines are warmest).
    pub(crate) fn take_best_fit(&mut self, dtype: DType, min_bytes: usize, max_bytes: usize) -> Option<ErasedBuffer> {
        let first = size_class(min_bytes);
        let last = size_class(max_bytes);
        for class in first..=last {
            let entries = &self.buckets[bucket_index(dtype, class)];
            let mut best: Option<BucketEntry> = None;
            for e in entries {
                if e.bytes < min_bytes || e.bytes > max_bytes {
                    continue;
                }
                let better = match best {
                    None => true,
                    Some(b) => e.bytes < b.bytes || (e.bytes == b.bytes && e.stamp > b.stamp),
                };
                if better {
                    best = Some(*e);
                }
            }
            // Every capacity in a higher class is larger than any in this one.
            if let Some(b) = best {
                return self.remove(b.slot);
            }
        }
        None
    }

    /// Takes the least recently used buffer.
    pub(crate) fn pop_oldest(&mut self) -> Option<ErasedBuffer> {
        match self.oldest {
            NIL => None,
            oldest => self.remove(oldest),
        }
    }

    /// Unlinks slot `index` from the LRU list and its bucket and frees the slot.
    fn remove(&mut self, index: usize) -> Option<ErasedBuffer> {
        let (older, newer, bucket, position) = {
            let s = &self.slots[index];
            (s.older, s.newer, s.bucket, s.position)
        };
        match older {
            NIL => self.oldest = newer,
            o => self.slots[o].newer = newer,
        }
        match newer {
            NIL => self.newest = older,
            n => self.slots[n].older = older,
        }
        let entries = &mut self.buckets[bucket];
        entries.swap_remove(position);
        if let Some(moved) = entries.get(position) {
            self.slots[moved.slot].position = position;
        }
        let buffer = self.slots[index].buffer.take();
        self.free_slots.push(index);
        if let Some(b) = &buffer {
            self.count -= 1;
            self.bytes -= b.bytes();
        }
        buffer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buf(dtype_len_f64: usize) -> ErasedBuffer {
        ErasedBuffer::from_vec(vec![0.0f64; dtype_len_f64])
    }

    #[test]
    fn best_fit_prefers_smallest_then_newest() {
        let mut r = RetainedBuffers::new();
        r.insert(buf(100)); // 800 bytes
        r.insert(buf(64)); // 512 bytes
        r.insert(buf(70)); // 560 bytes
        r.insert(buf(64)); // 512 bytes, newer
        assert_eq!((r.len(), r.bytes()), (4, 800 + 512 + 560 + 512));
        let b = r.take_best_fit(DType::F64, 500, 1000).unwrap();
        assert_eq!(b.bytes(), 512);
        // The older 512-byte buffer is still the oldest-but-one in LRU order.
        assert_eq!(r.pop_oldest().unwrap().bytes(), 800);
        assert_eq!(r.pop_oldest().unwrap().bytes(), 512);
        assert_eq!(r.pop_oldest().unwrap().bytes(), 560);
        assert!(r.pop_oldest().is_none());
        assert_eq!((r.len(), r.bytes()), (0, 0));
    }

    #[test]
    fn lookup_respects_dtype_and_bounds() {
        let mut r = RetainedBuffers::new();
        r.insert(buf(128)); // 1024 bytes f64
        assert!(r.take_best_fit(DType::I64, 1024, 4096).is_none());
        assert!(r.take_best_fit(DType::F64, 1025, 4096).is_none());
        assert!(r.take_best_fit(DType::F64, 8, 1023).is_none());
        assert_eq!(r.take_best_fit(DType::F64, 1024, 1024).unwrap().bytes(), 1024);
    }

    #[test]
    fn slots_are_reused_and_links_stay_consistent() {
        let mut r = RetainedBuffers::new();
        for round in 0..5 {
            for n in 1..=20 {
                r.insert(buf(n));
            }
            // Take from the middle, then drain oldest first: sizes must come out in
            // insertion order minus the one taken.
            let taken = r.take_best_fit(DType::F64, 80, 80).unwrap();
            assert_eq!(taken.bytes(), 80, "round {round}");
            let order: Vec<usize> = std::iter::from_fn(|| r.pop_oldest().map(|b| b.capacity())).collect();
            let expected: Vec<usize> = (1..=20).filter(|&n| n != 10).collect();
            assert_eq!(order, expected);
        }
        assert!(r.slots.len() <= 20);
    }
}
