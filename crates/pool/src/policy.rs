//! The allocation-policy seam: how an engine places a pool's fresh memory on its NUMA
//! node (first touch by the node's workers, or an `mbind`-style call), testable on a
//! one-node machine through a double.

use std::fmt;
use std::marker::PhantomData;
use std::ptr::NonNull;

use strata_tensor::DType;

use crate::raw::ZeroWritableBytes;

/// What a fresh allocation was for: the pool's NUMA node, the element type and count,
/// and the size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocationRequest {
    /// The NUMA node the pool belongs to (`None` for a pool without placement).
    pub node: Option<usize>,
    /// Element type of the buffer.
    pub dtype: DType,
    /// Number of elements allocated.
    pub len: usize,
    /// Number of bytes allocated (`len * dtype.size_bytes()`).
    pub bytes: usize,
}

/// Decides where freshly allocated pool memory lives. Called once for every fresh
/// allocation (never for a reused buffer, never for a zero-length request), on the
/// acquiring thread, after the memory is allocated and zeroed but before any page of it
/// has necessarily been touched, and outside the pool's lock.
///
/// Object-safe: a pool holds an `Arc<dyn AllocationPolicy>`. A panic in the hook is
/// caught: the `acquire_*` call returns a `BackendFailure` error naming it, the buffer
/// goes back to the pool and no accounting is lost.
///
/// ```
/// use std::sync::Arc;
/// use strata_pool::{AllocationPolicy, AllocationRequest, BufferPool, FreshMemory};
///
/// /// First-touches every page from the allocating thread.
/// struct TouchOnAllocate;
/// impl AllocationPolicy for TouchOnAllocate {
///     fn on_fresh_allocation(&self, request: &AllocationRequest, mut memory: FreshMemory<'_>) {
///         assert_eq!(memory.len_bytes(), request.bytes);
///         memory.touch_pages();
///     }
/// }
///
/// let pool = BufferPool::on_node(1 << 20, 0, Arc::new(TouchOnAllocate));
/// let loan = pool.acquire_zeroed::<f32>(1000).unwrap();
/// assert!(loan.iter().all(|&x| x == 0.0));
/// ```
pub trait AllocationPolicy: Send + Sync {
    /// Places (binds, first-touches) the fresh memory of `request`.
    fn on_fresh_allocation(&self, request: &AllocationRequest, memory: FreshMemory<'_>);
}

/// The default policy: leaves fresh memory where the operating system's first-touch rule
/// puts it (on the node of whichever thread writes it first).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoopAllocationPolicy;

impl AllocationPolicy for NoopAllocationPolicy {
    fn on_fresh_allocation(&self, _request: &AllocationRequest, _memory: FreshMemory<'_>) {}
}

/// A mutable borrow of freshly allocated, zero-filled pool memory, seen as bytes.
///
/// It offers what placement needs and nothing that could break the buffer's element
/// type: the address and length (for `mbind`-style system calls) and zero-writing page
/// touches (for first-touch placement, possibly from another thread: the handle is
/// `Send` and can be split). It cannot read the memory or write anything but zero
/// bytes, which are valid in every strata scalar.
///
/// Whoever uses [`as_mut_ptr`](Self::as_mut_ptr) in `unsafe` code must uphold the same
/// rule: write only zero bytes, within [`len_bytes`](Self::len_bytes), during the hook.
pub struct FreshMemory<'a> {
    bytes: ZeroWritableBytes,
    _borrow: PhantomData<&'a mut [u8]>,
}

// SAFETY: a `FreshMemory` is a unique borrow of plain bytes (like `&mut [u8]`, which is
// `Send`); the buffer it borrows is not touched by anyone else while it lives.
unsafe impl Send for FreshMemory<'_> {}

/// Distance between page touches: the smallest common page size, so every page of any
/// size gets at least one write.
const TOUCH_STRIDE: usize = 4096;

impl<'a> FreshMemory<'a> {
    /// Borrows `slice` as fresh memory.
    pub(crate) fn new<T>(slice: &'a mut [T]) -> Self {
        let len = std::mem::size_of_val(slice);
        let ptr = NonNull::from(slice).cast::<u8>();
        FreshMemory { bytes: ZeroWritableBytes { ptr, len }, _borrow: PhantomData }
    }

    /// Length of the memory in bytes.
    pub fn len_bytes(&self) -> usize {
        self.bytes.len
    }

    /// True when there are no bytes (a split can produce an empty half).
    pub fn is_empty(&self) -> bool {
        self.bytes.len == 0
    }

    /// Start address, for `mbind`-style calls that move or bind pages without changing
    /// their contents. Writing through it is allowed only for zero bytes inside
    /// `len_bytes()`.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.bytes.ptr.as_ptr()
    }

    /// Writes a zero byte into every page (every 4096 bytes, and the last byte), so the
    /// calling thread takes the first-touch page faults and the pages land on its node.
    pub fn touch_pages(&mut self) {
        self.bytes.touch_every(TOUCH_STRIDE);
    }

    /// Splits at byte `mid` (clamped to the length) into two disjoint handles, so that
    /// several workers can first-touch their own parts in parallel.
    pub fn split_at(self, mid: usize) -> (FreshMemory<'a>, FreshMemory<'a>) {
        let mid = mid.min(self.bytes.len);
        let head = ZeroWritableBytes { ptr: self.bytes.ptr, len: mid };
        // SAFETY: `mid <= len`, so the pointer stays inside (or one past the end of) the
        // borrowed memory.
        let tail_ptr = unsafe { self.bytes.ptr.add(mid) };
        let tail = ZeroWritableBytes { ptr: tail_ptr, len: self.bytes.len - mid };
        (FreshMemory { bytes: head, _borrow: PhantomData }, FreshMemory { bytes: tail, _borrow: PhantomData })
    }
}

impl fmt::Debug for FreshMemory<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FreshMemory").field("ptr", &self.bytes.ptr).field("len_bytes", &self.bytes.len).finish()
    }
}
