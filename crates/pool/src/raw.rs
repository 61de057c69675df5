//! Type-erased ownership of one `Vec<T>` allocation: the only module of the pool with
//! `unsafe` code.
//!
//! The pool keeps buffers of seven element types in one LRU order, so it stores them
//! without their type parameter: a pointer, a capacity in elements, the dtype, and the
//! length of the prefix known to hold valid values. A buffer only ever becomes a
//! `Vec<T>` again for the very `T` it was allocated for.
//!
//! Safety argument, in one place:
//! - **Same type back.** A buffer built from a `Vec<T>` (or from [`alloc_zeroed`] with
//!   `Layout::array::<T>(capacity)`, the layout `Vec<T>` itself uses) records
//!   `T::DTYPE`, and is only rebuilt as `Vec<U>` when `U::DTYPE` equals it. `Scalar` is
//!   sealed in strata-tensor to exactly seven types with seven distinct dtypes, so equal
//!   dtypes mean `U == T`: same size, alignment and allocation layout.
//! - **No uninitialised reads.** Every element below `initialized` holds a valid `T`:
//!   fresh memory is zeroed, and an all-zero bit pattern is a valid value of every
//!   strata scalar (0, 0.0, false, 0+0i); a recycled `Vec` contributes its length; a
//!   loan's slice can be overwritten only with valid `T`s. Before handing out `len`
//!   elements, the gap `initialized..len` (if any) is zero-filled. So no reader ever
//!   observes uninitialised memory, and no `MaybeUninit` juggling is needed.
//! - **Unique ownership.** An `ErasedBuffer` owns its allocation exactly as the `Vec`
//!   it came from did, and frees it in `Drop` through `Vec<T>`.
//!
//! [`alloc_zeroed`]: ErasedBuffer::alloc_zeroed

use std::alloc::{self, Layout};
use std::mem::ManuallyDrop;
use std::ptr::NonNull;

use strata_tensor::{DType, Scalar, dispatch_dtype};

/// One heap buffer of some strata scalar type, without its type parameter.
pub(crate) struct ErasedBuffer {
    /// Start of the allocation (dangling and never dereferenced when `capacity == 0`).
    ptr: *mut u8,
    /// Capacity in elements of `dtype`.
    capacity: usize,
    /// Elements `0..initialized` hold valid values; `initialized <= capacity`.
    initialized: usize,
    dtype: DType,
}

// SAFETY: an `ErasedBuffer` uniquely owns its allocation, exactly like the `Vec<T>` it
// came from, and every strata scalar is `Send + Sync`; it exposes no shared access to the
// memory, so moving it to or sharing a reference with another thread is as safe as for
// `Vec<T>`.
unsafe impl Send for ErasedBuffer {}
// SAFETY: see `Send` above; `&ErasedBuffer` only reads the metadata fields.
unsafe impl Sync for ErasedBuffer {}

/// The allocator returned null.
#[derive(Debug)]
pub(crate) struct AllocFailure;

impl ErasedBuffer {
    /// Takes ownership of `v`'s allocation; its length becomes the initialised prefix.
    pub(crate) fn from_vec<T: Scalar>(v: Vec<T>) -> Self {
        let initialized = v.len();
        // SAFETY: `v.len()` elements of a `Vec<T>` are valid by `Vec`'s own invariant.
        unsafe { Self::from_vec_initialized(v, initialized) }
    }

    /// Takes ownership of `v`'s allocation, recording that the first `initialized`
    /// elements (clamped to the capacity, and at least `v.len()`) hold valid values.
    ///
    /// # Safety
    /// Elements `v.len()..initialized` of the allocation must hold valid `T` values.
    unsafe fn from_vec_initialized<T: Scalar>(v: Vec<T>, initialized: usize) -> Self {
        let mut v = ManuallyDrop::new(v);
        let capacity = v.capacity();
        let initialized = initialized.clamp(v.len(), capacity);
        // `as_mut_ptr` (not `as_mut_slice().as_mut_ptr()`) keeps provenance over the whole
        // allocation, spare capacity included.
        let ptr = v.as_mut_ptr().cast::<u8>();
        ErasedBuffer { ptr, capacity, initialized, dtype: T::DTYPE }
    }

    /// A fresh, zero-filled buffer of exactly `len` elements. `len == 0` allocates nothing.
    pub(crate) fn alloc_zeroed<T: Scalar>(len: usize) -> Result<Self, AllocFailure> {
        if len == 0 {
            return Ok(Self::from_vec(Vec::<T>::new()));
        }
        let layout = Layout::array::<T>(len).map_err(|_| AllocFailure)?;
        // SAFETY: `layout` has non-zero size: `len > 0` and no strata scalar is zero-sized.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(AllocFailure);
        }
        crate::huge_pages::advise_huge_pages(ptr, layout.size());
        // INVARIANT: all-zero bytes are a valid value of every strata scalar (see the
        // module doc; `zeroed_memory_reads_as_scalar_zero` checks it for all seven), so
        // the whole buffer counts as initialised.
        Ok(ErasedBuffer { ptr, capacity: len, initialized: len, dtype: T::DTYPE })
    }

    /// Element type of the buffer.
    pub(crate) fn dtype(&self) -> DType {
        self.dtype
    }

    /// Capacity in elements.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Capacity in bytes. Cannot overflow: the allocation exists.
    pub(crate) fn bytes(&self) -> usize {
        self.capacity * self.dtype.size_bytes()
    }

    /// Rebuilds a `Vec<T>` of `len` valid elements over this allocation, zero-filling the
    /// part of `..len` that was never written. Gives the buffer back unchanged when `T`
    /// is not its type or `len` exceeds its capacity.
    pub(crate) fn into_vec<T: Scalar>(self, len: usize) -> Result<LentVec<T>, Self> {
        if T::DTYPE != self.dtype || len > self.capacity {
            return Err(self);
        }
        let this = ManuallyDrop::new(self);
        let ptr = this.ptr.cast::<T>();
        let mut initialized = this.initialized;
        if len > initialized {
            // SAFETY: `initialized < len <= capacity`, so the range lies inside the
            // allocation, which this buffer owns uniquely; zero bytes are a valid `T`.
            unsafe { ptr.add(initialized).write_bytes(0, len - initialized) };
            initialized = len;
        }
        // SAFETY: the allocation was made for `capacity` elements of this very `T` (equal
        // dtypes mean equal types, module doc), and its first `len <= initialized`
        // elements are valid. Ownership moves into the `Vec`: `this` is never dropped.
        let vec = unsafe { Vec::from_raw_parts(ptr, len, this.capacity) };
        Ok(LentVec { vec, initialized })
    }
}

/// A `Vec<T>` lent out by the pool, remembering how far past its length the allocation
/// holds valid values, so that taking it back needs no zero-filling.
///
/// Invariant (kept by this module: the fields are private and only [`ErasedBuffer::into_vec`]
/// builds one): elements `0..initialized` of the allocation are valid `T`s,
/// `vec.len() <= initialized <= vec.capacity()`, and the `Vec`'s length and allocation
/// are never changed while lent (outsiders only get `&mut [T]`, through which they can
/// write nothing but valid `T`s).
pub(crate) struct LentVec<T> {
    vec: Vec<T>,
    initialized: usize,
}

impl<T: Scalar> LentVec<T> {
    /// A zero-length, zero-capacity vector (allocates nothing).
    pub(crate) fn empty() -> Self {
        LentVec { vec: Vec::new(), initialized: 0 }
    }

    pub(crate) fn as_slice(&self) -> &[T] {
        &self.vec
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.vec
    }

    pub(crate) fn capacity(&self) -> usize {
        self.vec.capacity()
    }

    /// Gives the vector away for good.
    pub(crate) fn into_vec(self) -> Vec<T> {
        self.vec
    }

    /// Erases the type again, keeping the knowledge of the initialised prefix.
    pub(crate) fn into_erased(self) -> ErasedBuffer {
        // SAFETY: the struct invariant: elements `vec.len()..initialized` are valid.
        unsafe { ErasedBuffer::from_vec_initialized(self.vec, self.initialized) }
    }
}

impl Drop for ErasedBuffer {
    fn drop(&mut self) {
        let ptr = self.ptr;
        let capacity = self.capacity;
        dispatch_dtype!(self.dtype, T => {
            // SAFETY: the allocation was made for `capacity` elements of the `T` whose
            // dtype this is (module doc); a zero length drops no elements (scalars have no
            // drop glue anyway) and lets `Vec` free the memory with its own layout. A
            // zero capacity frees nothing; the pointer is then `Vec`'s own dangling one.
            drop(unsafe { Vec::<T>::from_raw_parts(ptr.cast::<T>(), 0, capacity) });
        })
    }
}

/// A byte-level, write-only window on freshly allocated pool memory, for placement
/// policies: exists only so [`crate::FreshMemory`] can share one safety argument.
pub(crate) struct ZeroWritableBytes {
    pub(crate) ptr: NonNull<u8>,
    pub(crate) len: usize,
}

impl ZeroWritableBytes {
    /// Writes a zero byte at every `stride`-th offset from the start (and the last byte),
    /// with volatile stores so the compiler cannot drop them as redundant on memory it
    /// knows to be zero: the purpose is the page fault, not the value.
    pub(crate) fn touch_every(&mut self, stride: usize) {
        if self.len == 0 {
            return;
        }
        let stride = stride.max(1);
        let mut offset = 0;
        while offset < self.len {
            // SAFETY: `offset < len`, and the window covers `len` bytes of memory the
            // caller borrows mutably; a zero byte leaves every element of every strata
            // scalar type a valid value (any bit pattern is a valid number; a bool byte of
            // 0 is `false`).
            unsafe { self.ptr.as_ptr().add(offset).write_volatile(0) };
            offset += stride;
        }
        // SAFETY: as above, for the last byte.
        unsafe { self.ptr.as_ptr().add(self.len - 1).write_volatile(0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_tensor::{c32, c64};

    fn zeroed_is_zero<T: Scalar>() {
        let buf = ErasedBuffer::alloc_zeroed::<T>(33).map_err(|_| ()).unwrap();
        let lent = buf.into_vec::<T>(33).map_err(|_| ()).unwrap();
        assert_eq!(lent.initialized, 33);
        assert!(lent.as_slice().iter().all(|&x| x == T::zero()), "{:?}", T::DTYPE);
    }

    #[test]
    fn zeroed_memory_reads_as_scalar_zero() {
        zeroed_is_zero::<f32>();
        zeroed_is_zero::<f64>();
        zeroed_is_zero::<i32>();
        zeroed_is_zero::<i64>();
        zeroed_is_zero::<bool>();
        zeroed_is_zero::<c32>();
        zeroed_is_zero::<c64>();
    }

    #[test]
    fn wrong_type_or_length_gives_buffer_back() {
        let buf = ErasedBuffer::from_vec(vec![1.5f64; 4]);
        let buf = buf.into_vec::<i64>(4).map(|_| ()).unwrap_err();
        let buf = buf.into_vec::<f64>(5).map(|_| ()).unwrap_err();
        let lent = buf.into_vec::<f64>(4).map_err(|_| ()).unwrap();
        assert_eq!(lent.initialized, 4);
        assert_eq!(lent.into_vec(), vec![1.5; 4]);
    }

    #[test]
    fn spare_capacity_is_zero_filled_once_and_remembered() {
        let mut v = Vec::with_capacity(10);
        v.extend_from_slice(&[true, true, true]);
        let buf = ErasedBuffer::from_vec(v);
        assert_eq!(buf.capacity(), 10);
        let mut lent = buf.into_vec::<bool>(7).map_err(|_| ()).unwrap();
        assert_eq!(lent.initialized, 7);
        assert_eq!(lent.as_slice(), [true, true, true, false, false, false, false]);
        lent.as_mut_slice()[5] = true;
        // A shorter loan of the same buffer still sees the valid prefix as initialised.
        let mut lent = lent.into_erased().into_vec::<bool>(2).map_err(|_| ()).unwrap();
        assert_eq!(lent.initialized, 7);
        assert_eq!(lent.as_slice(), [true, true]);
        lent.as_mut_slice()[0] = false;
        let lent = lent.into_erased().into_vec::<bool>(10).map_err(|_| ()).unwrap();
        assert_eq!(lent.initialized, 10);
        assert_eq!(lent.as_slice(), [false, true, true, false, false, true, false, false, false, false]);
    }
}
