//! Software prefetch hints for access patterns the hardware prefetchers cannot follow
//! (a tensor permutation reads and writes whole cache lines at large power-of-two
//! strides). A hint never faults and never changes memory, so the addresses may lie
//! outside any allocation; on targets without a stable prefetch intrinsic the hints are
//! no-ops.

/// Asks the cache hierarchy to start loading the line holding `ptr` for reading.
#[inline(always)]
pub(crate) fn prefetch_read<T>(ptr: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` needs only SSE, which every x86_64 target has; a prefetch
    // does not dereference its address (it cannot fault or change memory), so any
    // pointer value is sound, including one past the end of an allocation.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(ptr.cast::<i8>())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}

/// Asks the cache hierarchy to start loading the line holding `ptr` in a state ready for
/// writing (`prefetchw`; a plain prefetch on processors without it).
#[inline(always)]
pub(crate) fn prefetch_write<T>(ptr: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as for `prefetch_read`: the hint needs only baseline x86_64 and never
    // dereferences its address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_ET0 }>(ptr.cast::<i8>())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}
