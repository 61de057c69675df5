//! The fast path does not allocate: counted by a global allocator wrapper.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use strata_arbiter::{AdmissionRequest, Owner, OwnerToken, ResourceArbiter, WaitPolicy};
use strata_topology::CpuSet;

thread_local! {
    // Per thread, so the test harness's own threads do not disturb the count.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

struct CountingAllocator;

fn count() {
    // `try_with`: the allocator may run while this thread's locals are torn down.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every method forwards its arguments unchanged to the system allocator, which
// upholds the `GlobalAlloc` contract; counting touches only a const-initialised
// thread-local cell and never allocates.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded from our caller, who upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: `ptr` and `layout` came from this allocator, i.e. from `System`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` and `layout` came from this allocator, i.e. from `System`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

#[test]
fn uncontended_acquire_and_release_do_not_allocate() {
    let arbiter = ResourceArbiter::new();
    let token = OwnerToken::new();
    let requests = [
        AdmissionRequest::Cpus("0".parse::<CpuSet>().unwrap()),
        AdmissionRequest::Cpus("0-3,8,130".parse::<CpuSet>().unwrap()),
    ];
    // Warm up: the first use of a CPU range allocates its slot chunk, once.
    for request in &requests {
        drop(arbiter.acquire(request).unwrap());
    }
    let before = allocations();
    for _ in 0..1000 {
        for request in &requests {
            drop(arbiter.acquire(request).unwrap());
            drop(arbiter.try_acquire(request).unwrap());
            drop(arbiter.acquire_timeout(request, std::time::Duration::from_secs(1)).unwrap());
            drop(arbiter.admit(request, Owner::Token(&token), WaitPolicy::NoWait).unwrap());
        }
    }
    assert_eq!(allocations() - before, 0);
    // The counter does count: a sanity check that the wrapper is installed.
    let boxed = std::hint::black_box(Box::new(7u64));
    drop(boxed);
    assert!(allocations() - before >= 1);
    assert_eq!(arbiter.stats().grants, 8002);
}
