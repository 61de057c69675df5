//! The pool itself: the retention cap, statistics, the acquire paths and the return path.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use strata_tensor::{BufferRecycler, Error, Result, Scalar, Tensor, TypedTensor, dispatch_dtype};

use crate::loan::{BufferLoan, OverwriteLoan};
use crate::policy::{AllocationPolicy, AllocationRequest, FreshMemory, NoopAllocationPolicy};
use crate::raw::{ErasedBuffer, LentVec};
use crate::retained::RetainedBuffers;

/// Extra bytes a reused buffer may have beyond twice the request, so that small requests
/// can still reuse a small (page-sized) buffer. See [`BufferPool`] for the reuse rule.
pub const REUSE_SLACK_BYTES: usize = 4096;

/// A snapshot of a pool's counters.
///
/// Arithmetic that always holds: every acquire of a non-zero length counts exactly one
/// hit (served from a retained buffer) or one miss (fresh allocation);
/// `outstanding_loans` is the number of live loans (including zero-length ones);
/// `buffers`/`retained_bytes` describe what is retained now, with
/// `retained_bytes <= cap_bytes`. A returned buffer is either retained, or counted in
/// `discards` (cap 0, or larger than the cap alone); a retained buffer leaves by reuse
/// (a hit), by `evictions` (least recently used first, to honour the cap), or by
/// [`BufferPool::clear`]/[`BufferPool::reset`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolStats {
    /// Number of retained buffers.
    pub buffers: usize,
    /// Total capacity of the retained buffers in bytes.
    pub retained_bytes: usize,
    /// The retention cap in bytes.
    pub cap_bytes: usize,
    /// Acquires served from a retained buffer.
    pub hits: u64,
    /// Acquires that allocated fresh memory.
    pub misses: u64,
    /// Retained buffers freed to honour the cap.
    pub evictions: u64,
    /// Returned buffers freed at once instead of retained (cap 0, or larger than the cap).
    pub discards: u64,
    /// Loans currently alive.
    pub outstanding_loans: usize,
    /// Bytes of fresh memory allocated by misses.
    pub fresh_bytes: u64,
    /// Buffers that came back on their own when a tensor made by
    /// [`BufferLoan::into_tensor`] dropped (each then retained or discarded like any
    /// returned buffer).
    pub returned_on_drop: u64,
}

/// Everything the lock guards.
struct PoolState {
    retained: RetainedBuffers,
    stats: PoolStats,
}

/// The state shared by a pool's handles and its live loans.
pub(crate) struct PoolShared {
    state: Mutex<PoolState>,
    policy: Arc<dyn AllocationPolicy>,
    node: Option<usize>,
    /// What tensors made from this pool's loans carry: a weak way back here.
    drop_return: Arc<dyn BufferRecycler>,
}

/// How a buffer came back to the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Returned {
    /// A loan dropped.
    Loan,
    /// Handed back by `recycle`.
    Recycled,
    /// A tensor made from a loan dropped.
    OnDrop,
}

/// The way back from a tensor to the pool that lent its buffer. It holds the pool
/// weakly: a tensor that outlives every handle and loan of its pool frees its buffer as
/// any vector would, and never keeps a dead pool's retained memory alive.
struct DropReturn(Weak<PoolShared>);

impl BufferRecycler for DropReturn {
    fn recycle(&self, buffer: Tensor) {
        if let Some(pool) = self.0.upgrade() {
            pool.take_back_dropped(buffer);
        }
    }
}

/// A bounded pool of typed host buffers for all seven strata dtypes.
///
/// **Sharing.** `BufferPool` is a handle to internally reference-counted state: `clone`
/// is cheap and every clone is the same pool. It is `Send + Sync`; loans keep the pool
/// alive, so a loan may outlive every handle.
///
/// **Reuse rule.** A request for `n` bytes (`len * size_of::<T>()`) is served by the
/// retained buffer of the same dtype whose capacity `c` is smallest among those with
/// `n <= c <= 2 * n + REUSE_SLACK_BYTES` (most recently used first among equal
/// capacities); with none, fresh memory of exactly `n` bytes is allocated. So a 1 GiB
/// buffer is never lent for 1 KiB.
///
/// **Retention.** A buffer comes back when its loan drops (also during a panic), when a
/// tensor made from a loan ([`BufferLoan::into_tensor`]) drops (the tensor holds the pool
/// weakly: once the pool is gone, its tensors free their buffers normally), or by
/// [`recycle`](Self::recycle)/[`recycle_tensor`](Self::recycle_tensor). It is retained
/// as the most recently used buffer, after which least recently used buffers (of any
/// dtype) are freed until `retained_bytes <= cap_bytes`; a buffer larger than the cap on
/// its own is freed at once. A cap of 0 disables retention. Freed memory is released
/// outside the lock.
///
/// **Locking.** One `std::sync::Mutex` held for a few dozen instructions per acquire and
/// per return, never while allocating, zeroing, freeing or calling the policy; a
/// poisoned lock is recovered (no code panics while holding it, so the state is
/// consistent). Steady-state reuse allocates nothing.
///
/// **Sizes.** `len == 0` is valid and returns an empty loan without touching memory (it
/// counts as an outstanding loan but as neither hit nor miss). A byte size that
/// overflows `usize` or exceeds `isize::MAX` is an `InvalidArgument` error, and a failed
/// allocation a `BackendFailure` error; neither changes any counter.
///
/// ```
/// use strata_pool::BufferPool;
/// let pool = BufferPool::new(64 << 20);
/// {
///     let mut a = pool.acquire_zeroed::<f64>(1 << 20).unwrap(); // 8 MiB, fresh
///     a[0] = 1.0;
/// } // returned to the pool
/// let b = pool.acquire_for_overwrite::<f64>(1 << 20).unwrap(); // reused
/// let (b, sum) = b.write_with(|s| {
///     s.fill(2.0);
///     s.iter().sum::<f64>()
/// });
/// assert_eq!(sum, 2.0 * (1 << 20) as f64);
/// let t = b.into_tensor(&[1024, 1024]).unwrap();
/// assert_eq!(t.shape(), &[1024, 1024]);
/// let s = pool.stats();
/// assert_eq!((s.hits, s.misses, s.outstanding_loans), (1, 1, 0));
/// ```
#[derive(Clone)]
pub struct BufferPool {
    shared: Arc<PoolShared>,
}

impl fmt::Debug for BufferPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufferPool")
            .field("node", &self.shared.node)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// The error for a request whose byte size cannot be allocated on any machine.
fn overflow_error<T: Scalar>(op: &'static str, len: usize) -> Error {
    Error::invalid_argument(
        op,
        format!(
            "{len} elements of {} ({} bytes each) exceed the largest possible allocation ({} bytes)",
            T::DTYPE,
            T::DTYPE.size_bytes(),
            isize::MAX
        ),
    )
}

/// Byte size of `len` elements of `T`, if an allocation of that size can exist.
fn request_bytes<T: Scalar>(len: usize) -> Option<usize> {
    len.checked_mul(T::DTYPE.size_bytes()).filter(|&b| b <= isize::MAX as usize)
}

/// The error of an allocation the allocator refused.
fn refused_error<T: Scalar>(op: &'static str, len: usize, bytes: usize) -> Error {
    Error::backend_failure(
        op,
        format!("the allocator could not provide {bytes} bytes for {len} elements of {}", T::DTYPE),
    )
}

/// A fresh, zero-filled `Vec` of `len` elements outside any pool: the fallible
/// `vec![zero; len]` (zero pages come lazily from the operating system, as there).
///
/// ```
/// let v = strata_pool::try_zeroed_vec::<f64>("example", 3).unwrap();
/// assert_eq!(v, [0.0; 3]);
/// let e = strata_pool::try_zeroed_vec::<f64>("example", usize::MAX).unwrap_err();
/// assert_eq!(e.op(), "example");
/// ```
///
/// Errors: `InvalidArgument` naming `op` when `len` elements exceed the largest possible
/// allocation; `BackendFailure` naming `op` and the bytes when the allocator refuses.
pub fn try_zeroed_vec<T: Scalar>(op: &'static str, len: usize) -> Result<Vec<T>> {
    let bytes = request_bytes::<T>(len).ok_or_else(|| overflow_error::<T>(op, len))?;
    let buffer = ErasedBuffer::alloc_zeroed::<T>(len).map_err(|_| refused_error::<T>(op, len, bytes))?;
    match buffer.into_vec::<T>(len) {
        Ok(lent) => Ok(lent.into_vec()),
        // INVARIANT: a buffer just allocated for `len` elements of `T` converts back.
        Err(_) => Err(Error::internal(op, "a fresh buffer did not convert to its own type")),
    }
}

impl BufferPool {
    /// A pool retaining at most `cap_bytes` bytes, with the no-op allocation policy and
    /// no NUMA node.
    pub fn new(cap_bytes: usize) -> Self {
        Self::build(cap_bytes, Arc::new(NoopAllocationPolicy), None)
    }

    /// A pool whose fresh allocations go through `policy` (with no NUMA node).
    pub fn with_policy(cap_bytes: usize, policy: Arc<dyn AllocationPolicy>) -> Self {
        Self::build(cap_bytes, policy, None)
    }

    /// A pool belonging to NUMA node `node`: `policy` receives the node with every fresh
    /// allocation, to bind or first-touch the memory there.
    pub fn on_node(cap_bytes: usize, node: usize, policy: Arc<dyn AllocationPolicy>) -> Self {
        Self::build(cap_bytes, policy, Some(node))
    }

    fn build(cap_bytes: usize, policy: Arc<dyn AllocationPolicy>, node: Option<usize>) -> Self {
        let stats = PoolStats { cap_bytes, ..PoolStats::default() };
        let state = PoolState { retained: RetainedBuffers::new(), stats };
        let shared = Arc::new_cyclic(|weak| PoolShared {
            state: Mutex::new(state),
            policy,
            node,
            drop_return: Arc::new(DropReturn(Weak::clone(weak))),
        });
        BufferPool { shared }
    }

    /// The NUMA node the pool belongs to, if any.
    pub fn numa_node(&self) -> Option<usize> {
        self.shared.node
    }

    /// The retention cap in bytes.
    pub fn cap_bytes(&self) -> usize {
        self.shared.lock().stats.cap_bytes
    }

    /// Changes the retention cap. Lowering it evicts least recently used buffers at once,
    /// until the retained bytes fit.
    pub fn set_cap_bytes(&self, cap_bytes: usize) {
        let mut freed = Vec::new();
        {
            let mut state = self.shared.lock();
            state.stats.cap_bytes = cap_bytes;
            state.evict_over_cap(&mut freed);
        }
        drop(freed);
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> PoolStats {
        self.shared.lock().stats
    }

    /// True when `self` and `other` are handles to the same pool.
    pub fn same_pool(&self, other: &BufferPool) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Frees every retained buffer, keeping the counters.
    pub fn clear(&self) {
        let mut freed = Vec::new();
        {
            let mut state = self.shared.lock();
            while let Some(b) = state.retained.pop_oldest() {
                freed.push(b);
            }
            state.sync_retained();
        }
        drop(freed);
    }

    /// Frees every retained buffer and zeroes the cumulative counters (hits, misses,
    /// evictions, discards, fresh bytes). The cap and `outstanding_loans` are kept: live
    /// loans still return here when they drop.
    pub fn reset(&self) {
        let mut freed = Vec::new();
        {
            let mut state = self.shared.lock();
            while let Some(b) = state.retained.pop_oldest() {
                freed.push(b);
            }
            let s = state.stats;
            state.stats =
                PoolStats { cap_bytes: s.cap_bytes, outstanding_loans: s.outstanding_loans, ..PoolStats::default() };
            state.sync_retained();
        }
        drop(freed);
    }

    /// Lends `len` elements, all zero (`false`, `0`, `0.0`, `0+0i`).
    ///
    /// Fresh memory comes zeroed from the allocator (lazily, page by page, with no
    /// explicit write); a reused buffer is zero-filled.
    pub fn acquire_zeroed<T: Scalar>(&self, len: usize) -> Result<BufferLoan<T>> {
        let (mut loan, fresh) = self.acquire_raw::<T>("BufferPool::acquire_zeroed", len)?;
        if !fresh {
            loan.fill(T::zero());
        }
        Ok(loan)
    }

    /// Lends `len` elements whose contents are unspecified (stale values from an earlier
    /// loan, or zeros), behind a guard that must be written through
    /// [`OverwriteLoan::write_with`] before the buffer can be read or become a tensor.
    /// Reuse costs no memset.
    pub fn acquire_for_overwrite<T: Scalar>(&self, len: usize) -> Result<OverwriteLoan<T>> {
        let (loan, _) = self.acquire_raw::<T>("BufferPool::acquire_for_overwrite", len)?;
        Ok(OverwriteLoan::new(loan))
    }

    /// Returns a vector's buffer to the pool (subject to the cap). A zero-capacity vector
    /// is ignored.
    pub fn recycle<T: Scalar>(&self, v: Vec<T>) {
        if v.capacity() == 0 {
            return;
        }
        self.shared.retain(ErasedBuffer::from_vec(v), Returned::Recycled);
    }

    /// Returns a typed tensor's buffer to the pool (subject to the cap).
    pub fn recycle_typed<T: Scalar>(&self, t: TypedTensor<T>) {
        self.recycle(t.into_vec());
    }

    /// Returns a tensor's buffer to the pool (subject to the cap), whatever its dtype.
    /// The buffer is filed under the tensor's own dtype, so it can only ever be lent
    /// again for that dtype.
    pub fn recycle_tensor(&self, t: Tensor) {
        dispatch_dtype!(t.dtype(), T => {
            if let Ok(typed) = T::from_tensor(t) {
                self.recycle_typed(typed);
            }
        })
    }

    /// The common acquire path; also reports whether the memory is fresh (known zero).
    fn acquire_raw<T: Scalar>(&self, op: &'static str, len: usize) -> Result<(BufferLoan<T>, bool)> {
        let bytes = request_bytes::<T>(len).ok_or_else(|| overflow_error::<T>(op, len))?;
        if bytes == 0 {
            self.shared.lock().stats.outstanding_loans += 1;
            return Ok((BufferLoan::new(LentVec::empty(), Arc::clone(&self.shared)), true));
        }
        let max_bytes = bytes.saturating_mul(2).saturating_add(REUSE_SLACK_BYTES);
        let reused = {
            let mut state = self.shared.lock();
            let found = state.retained.take_best_fit(T::DTYPE, bytes, max_bytes);
            match found {
                Some(_) => state.stats.hits += 1,
                None => {
                    state.stats.misses += 1;
                    state.stats.fresh_bytes += bytes as u64;
                }
            }
            state.stats.outstanding_loans += 1;
            state.sync_retained();
            found
        };
        match reused {
            Some(buffer) => match buffer.into_vec::<T>(len) {
                Ok(lent) => Ok((BufferLoan::new(lent, Arc::clone(&self.shared)), false)),
                Err(buffer) => {
                    // INVARIANT: buckets hold only buffers of their dtype with capacity
                    // >= the request, so this is unreachable; report instead of panic.
                    drop(buffer);
                    self.shared.lock().end_loan();
                    Err(Error::internal(op, "a retained buffer did not fit its bucket"))
                }
            },
            None => self.allocate_fresh::<T>(op, len, bytes).map(|loan| (loan, true)),
        }
    }

    /// A miss: fresh zeroed memory, placed by the policy. The loan exists before the
    /// policy runs, so a panicking policy still returns the buffer; the panic becomes a
    /// `BackendFailure` error of `op`.
    fn allocate_fresh<T: Scalar>(&self, op: &'static str, len: usize, bytes: usize) -> Result<BufferLoan<T>> {
        let fresh = ErasedBuffer::alloc_zeroed::<T>(len).ok().and_then(|b| b.into_vec::<T>(len).ok());
        let Some(lent) = fresh else {
            let mut state = self.shared.lock();
            // Undo the miss counted at lookup (saturating: a `reset` may have zeroed the
            // counters in between).
            state.end_loan();
            state.stats.misses = state.stats.misses.saturating_sub(1);
            state.stats.fresh_bytes = state.stats.fresh_bytes.saturating_sub(bytes as u64);
            return Err(refused_error::<T>(op, len, bytes));
        };
        let mut loan = BufferLoan::new(lent, Arc::clone(&self.shared));
        let request = AllocationRequest { node: self.shared.node, dtype: T::DTYPE, len, bytes };
        let placed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.shared.policy.on_fresh_allocation(&request, FreshMemory::new(&mut loan[..]))
        }));
        match placed {
            Ok(()) => Ok(loan),
            Err(payload) => Err(Error::backend_failure(
                op,
                format!(
                    "the allocation policy panicked while placing {bytes} fresh bytes: {}",
                    strata_tensor::panic_message(payload.as_ref())
                ),
            )),
        }
    }
}

impl PoolShared {
    /// Locks the state, recovering from poisoning: no code panics while holding the lock,
    /// so a poisoned state is still consistent.
    fn lock(&self) -> MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes back a buffer, ending its loan in the accounting when it comes from one.
    pub(crate) fn retain(&self, buffer: ErasedBuffer, from: Returned) {
        // `Vec::new` does not allocate: only an actual eviction pays for the list.
        let mut freed = Vec::new();
        let mut discarded = None;
        {
            let mut state = self.lock();
            match from {
                Returned::Loan => state.end_loan(),
                Returned::OnDrop => state.stats.returned_on_drop += 1,
                Returned::Recycled => {}
            }
            if buffer.capacity() == 0 {
                // Nothing to keep: an empty loan's buffer.
                discarded = Some(buffer);
            } else if buffer.bytes() > state.stats.cap_bytes {
                state.stats.discards += 1;
                discarded = Some(buffer);
            } else {
                state.retained.insert(buffer);
                state.evict_over_cap(&mut freed);
            }
            state.sync_retained();
        }
        // Freeing (possibly `munmap`) happens outside the lock.
        drop(discarded);
        drop(freed);
    }

    /// Ends a loan whose buffer left the pool (`into_vec`).
    pub(crate) fn forget_loan(&self) {
        self.lock().end_loan();
    }

    /// The recycler a tensor made from one of this pool's loans carries.
    pub(crate) fn drop_return(&self) -> Arc<dyn BufferRecycler> {
        Arc::clone(&self.drop_return)
    }

    /// Takes back the buffer of a dropped tensor made from one of this pool's loans.
    fn take_back_dropped(&self, buffer: Tensor) {
        dispatch_dtype!(buffer.dtype(), T => {
            if let Ok(typed) = T::from_tensor(buffer) {
                self.retain(ErasedBuffer::from_vec(typed.into_vec()), Returned::OnDrop);
            }
        })
    }
}

impl PoolState {
    /// Ends one loan in the accounting. Saturating, so that even a broken invariant
    /// cannot panic while the lock is held.
    fn end_loan(&mut self) {
        self.stats.outstanding_loans = self.stats.outstanding_loans.saturating_sub(1);
    }

    /// Evicts least recently used buffers into `freed` until the cap holds.
    fn evict_over_cap(&mut self, freed: &mut Vec<ErasedBuffer>) {
        while self.retained.bytes() > self.stats.cap_bytes {
            match self.retained.pop_oldest() {
                Some(b) => {
                    self.stats.evictions += 1;
                    freed.push(b);
                }
                None => break,
            }
        }
        self.sync_retained();
    }

    /// Copies the retained totals into the statistics.
    fn sync_retained(&mut self) {
        self.stats.buffers = self.retained.len();
        self.stats.retained_bytes = self.retained.bytes();
    }
}
