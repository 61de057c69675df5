//! Per-CPU occupancy slots: the lock-free half of admission.
//!
//! Every CPU id has one 64-byte slot holding its occupancy word, so threads working on
//! different CPUs never write the same cache line. Slots are allocated lazily in chunks of
//! 64 CPUs the first time one of their ids is requested; a chunk, once published, lives as
//! long as the table.
//!
//! All operations on occupancy words, on the chunk pointers and on the arbiter's gate are
//! `SeqCst`: admission relies on two store-then-load handshakes (a fast-path claimer that
//! claims slots and then reads the gate, against an exclusive request that closes the gate
//! and then reads the slots; a releaser that clears its slots and then reads the gate) and
//! those are only correct in a single total order.

use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use strata_topology::CpuId;

/// The slot is held by a permit.
pub(crate) const HELD: u64 = 1;
/// The slot is the first CPU of the permit holding it (used to count holders).
pub(crate) const LEAD: u64 = 1 << 1;
/// At least one queued request waits for this CPU: the fast path must not take it.
pub(crate) const WAITING: u64 = 1 << 2;

const CPUS_PER_CHUNK: usize = 64;
/// Enough chunks for every id up to and including [`CpuId::MAX`].
const CHUNKS: usize = (CpuId::MAX.0 as usize) / CPUS_PER_CHUNK + 1;

/// One CPU's occupancy, alone on its cache line.
#[repr(align(64))]
#[derive(Default)]
pub(crate) struct CpuSlot {
    /// `HELD | LEAD | WAITING` bits.
    pub(crate) state: AtomicU64,
    /// Fast-path grants whose lead CPU is this one.
    ///
    /// Only the thread that holds this slot as `LEAD` through the fast path writes it, so a
    /// plain load + store (no read-modify-write) suffices: the previous writer's release
    /// of the slot happens-before the next claimer's successful claim.
    pub(crate) fast_grants: AtomicU64,
}

struct Chunk {
    slots: [CpuSlot; CPUS_PER_CHUNK],
}

/// The slots of every CPU id, allocated on first use.
pub(crate) struct SlotTable {
    chunks: Box<[AtomicPtr<Chunk>]>,
    /// One past the highest chunk index ever published, so scans skip the empty tail.
    /// Raised (SeqCst) after publishing and before any slot of the chunk is claimed.
    scan_end: AtomicUsize,
}

impl SlotTable {
    pub(crate) fn new() -> SlotTable {
        SlotTable {
            chunks: (0..CHUNKS).map(|_| AtomicPtr::new(ptr::null_mut())).collect(),
            scan_end: AtomicUsize::new(0),
        }
    }

    /// The slot of `cpu`.
    ///
    /// The caller has checked `cpu <= CpuId::MAX` (`AdmissionRequest` validation does).
    #[inline]
    pub(crate) fn slot(&self, cpu: CpuId) -> &CpuSlot {
        let index = cpu.index();
        let chunk_index = index / CPUS_PER_CHUNK;
        // INVARIANT: ids were validated against CpuId::MAX, so the index is in range.
        let existing = self.chunks[chunk_index].load(Ordering::SeqCst);
        // The publisher raises `scan_end` right after publishing; a claimer that sees the
        // chunk before that makes sure it is raised itself, so no slot is ever claimed in
        // a chunk that a scan would skip.
        if existing.is_null() || self.scan_end.load(Ordering::SeqCst) <= chunk_index {
            return &self.publish_chunk(chunk_index).slots[index % CPUS_PER_CHUNK];
        }
        // SAFETY: a non-null pointer in the table came from `Box::into_raw` in
        // `publish_chunk` and is freed only in `Drop`, which cannot run while `&self` is
        // borrowed.
        let chunk = unsafe { &*existing };
        &chunk.slots[index % CPUS_PER_CHUNK]
    }

    /// Allocates and publishes the chunk (unless another thread did), and raises
    /// `scan_end` to cover it.
    #[cold]
    fn publish_chunk(&self, chunk_index: usize) -> &Chunk {
        let cell = &self.chunks[chunk_index];
        let mut chunk = cell.load(Ordering::SeqCst);
        if chunk.is_null() {
            let fresh = Box::into_raw(Box::new(Chunk { slots: std::array::from_fn(|_| CpuSlot::default()) }));
            chunk = match cell.compare_exchange(ptr::null_mut(), fresh, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => fresh,
                Err(winner) => {
                    // SAFETY: `fresh` was never published, so this thread owns it alone.
                    drop(unsafe { Box::from_raw(fresh) });
                    winner
                }
            };
        }
        self.scan_end.fetch_max(chunk_index + 1, Ordering::SeqCst);
        // SAFETY: `chunk` is published (by us or the winner) and lives until `Drop`.
        unsafe { &*chunk }
    }

    /// Calls `visit` on every slot allocated so far.
    pub(crate) fn for_each_allocated(&self, mut visit: impl FnMut(&CpuSlot)) {
        let end = self.scan_end.load(Ordering::SeqCst);
        for cell in self.chunks[..end].iter() {
            let chunk = cell.load(Ordering::SeqCst);
            if chunk.is_null() {
                continue;
            }
            // SAFETY: published chunks stay valid until `Drop` (see `chunk`).
            let chunk = unsafe { &*chunk };
            chunk.slots.iter().for_each(&mut visit);
        }
    }
}

impl Drop for SlotTable {
    fn drop(&mut self) {
        for cell in self.chunks.iter_mut() {
            let chunk = *cell.get_mut();
            if !chunk.is_null() {
                // SAFETY: the pointer came from `Box::into_raw`, and `&mut self` proves no
                // reference into the chunk is alive any more.
                drop(unsafe { Box::from_raw(chunk) });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_distinct_per_cpu_and_stable() {
        let table = SlotTable::new();
        let a = table.slot(CpuId(3)) as *const CpuSlot;
        let b = table.slot(CpuId(4)) as *const CpuSlot;
        let far = table.slot(CpuId::MAX) as *const CpuSlot;
        assert_ne!(a, b);
        assert_ne!(a, far);
        assert_eq!(a, table.slot(CpuId(3)) as *const CpuSlot);
        // Neighbouring CPUs sit on different cache lines.
        assert!((b as usize).abs_diff(a as usize) >= 64);
        let mut allocated = 0;
        table.for_each_allocated(|_| allocated += 1);
        assert_eq!(allocated, 2 * CPUS_PER_CHUNK);
    }

    #[test]
    fn concurrent_first_use_publishes_one_chunk() {
        let table = SlotTable::new();
        let addresses: Vec<usize> = std::thread::scope(|s| {
            let handles: Vec<_> =
                (0..4).map(|_| s.spawn(|| table.slot(CpuId(130)) as *const CpuSlot as usize)).collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(addresses.windows(2).all(|w| w[0] == w[1]));
    }
}
