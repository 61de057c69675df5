//! A global allocator for test binaries that refuses every request above a cap, so that
//! tests of huge outputs see the allocator fail at once (deterministically, without
//! touching memory or waking the OOM killer), exactly as a real allocator fails on a
//! request it cannot serve. Any path that allocates infallibly would then abort the test
//! binary (`handle_alloc_error`), which is what these tests exist to rule out.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Requests above this many bytes fail.
pub const CAP_BYTES: usize = 64 << 20;

/// Counts the refusals (a test can check that its huge request reached the allocator).
pub static REFUSED: AtomicUsize = AtomicUsize::new(0);

pub struct CappedAllocator;

impl CappedAllocator {
    fn refuse(size: usize) -> bool {
        let refuse = size > CAP_BYTES;
        if refuse {
            REFUSED.fetch_add(1, Ordering::Relaxed);
        }
        refuse
    }
}

// SAFETY: every request is either refused (a null pointer, which `GlobalAlloc` allows) or
// forwarded unchanged to the system allocator, which upholds the contract; `dealloc`
// only ever sees memory the system allocator handed out.
unsafe impl GlobalAlloc for CappedAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if Self::refuse(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's layout is forwarded as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if Self::refuse(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's layout is forwarded as is.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` with this layout (refused requests never
        // produced a pointer).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if Self::refuse(new_size) {
            return std::ptr::null_mut();
        }
        // SAFETY: forwarded unchanged; `ptr` and `layout` came from `System`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}
