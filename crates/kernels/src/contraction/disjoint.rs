//! A destination buffer shared by workers that each write their own elements.
//!
//! Batched contractions write the GEMMs of different batch indices from different
//! workers into one buffer. The elements they touch are disjoint (a mutable view never
//! lets two indices reach one element, and staging buffers are compact), but the borrow
//! checker cannot see that through strided index arithmetic, so this small type carries
//! the raw pointer and checks every index against the buffer's length.

use std::marker::PhantomData;

/// Shared write access to a `&mut [T]` for workers that touch disjoint elements.
pub(crate) struct DisjointOut<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: `DisjointOut` is only a mutable borrow of a slice spread over workers; sending
// or sharing it is as safe as sending `&mut [T]` when `T: Send`, given the disjointness
// contract of `read`/`write` below.
unsafe impl<T: Send> Send for DisjointOut<'_, T> {}
// SAFETY: as above: every access goes through the unsafe methods whose callers promise
// that no two threads touch one element.
unsafe impl<T: Send> Sync for DisjointOut<'_, T> {}

impl<'a, T: Copy> DisjointOut<'a, T> {
    pub(crate) fn new(buf: &'a mut [T]) -> Self {
        DisjointOut { ptr: buf.as_mut_ptr(), len: buf.len(), _borrow: PhantomData }
    }

    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The buffer's start, for kernels that prove their own bounds (writes through it
    /// carry the same disjointness contract as [`DisjointOut::write`]).
    pub(crate) fn as_mut_ptr(&self) -> *mut T {
        self.ptr
    }

    /// Reads element `i`.
    ///
    /// # Safety
    /// No other thread may write element `i` during the call.
    #[inline(always)]
    pub(crate) unsafe fn read(&self, i: usize) -> T {
        assert!(i < self.len, "destination index {i} outside a buffer of {}", self.len);
        // SAFETY: in bounds (checked above); the caller excludes concurrent writers.
        unsafe { *self.ptr.add(i) }
    }

    /// Writes element `i`.
    ///
    /// # Safety
    /// No other thread may read or write element `i` during the call.
    #[inline(always)]
    pub(crate) unsafe fn write(&self, i: usize, v: T) {
        assert!(i < self.len, "destination index {i} outside a buffer of {}", self.len);
        // SAFETY: in bounds (checked above); the caller excludes concurrent access.
        unsafe { *self.ptr.add(i) = v }
    }
}
