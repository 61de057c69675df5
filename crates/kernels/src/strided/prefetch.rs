//! Software prefetch hints for access patterns the hardware prefetchers cannot follow
//! (a tensor permutation reads and writes whole cache lines at large power-of-two
//! strides). A hint never faults and never changes memory, so the addresses may lie
//! outside any allocation; on targets without a stable prefetch intrinsic the hints are
//! no-ops.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{_MM_HINT_ET0, _MM_HINT_T0, _mm_prefetch};

/// Asks the cache hierarchy to start loading the line holding `ptr` for reading.
#[inline(always)]
pub(crate) fn prefetch_read<T>(ptr: *const T) {
    #[cfg(target_arch = "x86_64")]
    hint::<{ _MM_HINT_T0 }, T>(ptr);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}

/// Asks the cache hierarchy to start loading the line holding `ptr` in a state ready for
/// writing (`prefetchw`; a plain prefetch on processors without it).
#[inline(always)]
pub(crate) fn prefetch_write<T>(ptr: *const T) {
    #[cfg(target_arch = "x86_64")]
    hint::<{ _MM_HINT_ET0 }, T>(ptr);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn hint<const STRATEGY: i32, T>(ptr: *const T) {
    // SAFETY: the prefetch instructions need only SSE, which every x86_64 target has; a
    // prefetch does not dereference its address (it cannot fault or change memory), so
    // any pointer value is sound, including one past the end of an allocation.
    unsafe { _mm_prefetch::<STRATEGY>(ptr.cast::<i8>()) }
}
