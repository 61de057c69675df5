//! Where a permutation's tiles write their output rows: a plain slice when a worker's
//! piece of the output is one contiguous range, or a piece of a shared output when the
//! pieces interleave (split along an inner output axis, so that no worker has to cut the
//! source's contiguous runs).
//!
//! The shared form is the one place the permutation kernel writes through a raw pointer:
//! each worker's rows are those whose index along the split axis lies in its own range,
//! so no two workers ever touch the same element, but the ranges interleave in memory and
//! cannot be expressed as disjoint `&mut` slices up front.

use std::marker::PhantomData;

/// Output rows a tile writes, addressed by element offset.
pub(super) trait RowSink<T> {
    /// The address of offset 0 (for cache-line phases and write prefetches; never
    /// dereferenced through this pointer).
    fn base(&self) -> *const T;

    /// The `len` elements starting at `start`. Panics when they lie outside the output.
    fn row(&mut self, start: usize, len: usize) -> &mut [T];

    /// The number of elements the output holds (offsets `0..len`).
    fn len(&self) -> usize;

    /// A pointer to offset 0 for writing rows the caller proved inside the output (and,
    /// for a piece of a shared output, inside its own rows). It stays valid until the
    /// next call on `self`.
    fn write_ptr(&mut self) -> *mut T;
}

impl<T> RowSink<T> for [T] {
    #[inline(always)]
    fn base(&self) -> *const T {
        self.as_ptr()
    }

    #[inline(always)]
    fn row(&mut self, start: usize, len: usize) -> &mut [T] {
        &mut self[start..start + len]
    }

    #[inline(always)]
    fn len(&self) -> usize {
        <[T]>::len(self)
    }

    #[inline(always)]
    fn write_ptr(&mut self) -> *mut T {
        self.as_mut_ptr()
    }
}

/// An output that several workers fill at once, each through its own [`PieceRows`].
pub(super) struct SharedRows<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: `SharedRows` only hands out `PieceRows`, whose creators promise disjoint
// writes (see `piece`); sharing it between threads is sharing a `&mut [T]` split into
// disjoint parts, which is sound for `T: Send`.
unsafe impl<T: Send> Sync for SharedRows<'_, T> {}

impl<'a, T> SharedRows<'a, T> {
    /// Borrows `out` exclusively for the shared fill.
    pub(super) fn new(out: &'a mut [T]) -> Self {
        SharedRows { ptr: out.as_mut_ptr(), len: out.len(), _borrow: PhantomData }
    }

    /// One worker's writer.
    ///
    /// # Safety
    /// While the returned writer lives, no other writer made from this `SharedRows` may
    /// be asked for a row overlapping one this writer is asked for.
    pub(super) unsafe fn piece(&self) -> PieceRows<'_, T> {
        PieceRows { ptr: self.ptr, len: self.len, _borrow: PhantomData }
    }
}

/// One worker's writer into a [`SharedRows`] output.
pub(super) struct PieceRows<'s, T> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'s SharedRows<'s, T>>,
}

impl<T> RowSink<T> for PieceRows<'_, T> {
    #[inline(always)]
    fn base(&self) -> *const T {
        self.ptr
    }

    #[inline(always)]
    fn row(&mut self, start: usize, len: usize) -> &mut [T] {
        let end = start.checked_add(len).filter(|&end| end <= self.len);
        let Some(_) = end else { panic!("output row {start}..+{len} outside an output of {}", self.len) };
        // SAFETY: the range lies inside the exclusively borrowed output (checked above),
        // the returned slice borrows `self` mutably so this writer holds one row at a
        // time, and `SharedRows::piece`'s contract keeps other writers off these
        // elements.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), len) }
    }

    #[inline(always)]
    fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn write_ptr(&mut self) -> *mut T {
        self.ptr
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_write_interleaved_rows_of_one_output_from_several_threads() {
        let mut out = vec![0usize; 64];
        let shared = SharedRows::new(&mut out);
        std::thread::scope(|s| {
            for worker in 0..4usize {
                let shared = &shared;
                s.spawn(move || {
                    // SAFETY: worker `w` writes only rows 4k + w (elements 4 each).
                    let mut rows = unsafe { shared.piece() };
                    for k in 0..4 {
                        let start = (4 * k + worker) * 4;
                        rows.row(start, 4).iter_mut().for_each(|x| *x = worker + 1);
                    }
                });
            }
        });
        assert!(out.chunks(4).enumerate().all(|(r, row)| row.iter().all(|&x| x == r % 4 + 1)));
    }

    #[test]
    #[should_panic(expected = "outside an output")]
    fn a_row_past_the_end_panics_before_writing() {
        let mut out = vec![0u8; 8];
        let shared = SharedRows::new(&mut out);
        // SAFETY: the only writer.
        let mut rows = unsafe { shared.piece() };
        rows.row(6, 4);
    }
}
