//! Panic safety of loans and of the policy hook, and the allocation-policy seam through
//! a recording test double.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

use strata_pool::{AllocationPolicy, AllocationRequest, BufferPool, FreshMemory, NoopAllocationPolicy};
use strata_tensor::{DType, c64};

#[test]
fn panic_while_holding_loans_loses_no_accounting() {
    let pool = BufferPool::new(1 << 20);
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut a = pool.acquire_zeroed::<f64>(100).unwrap();
        let _b = pool.acquire_for_overwrite::<i32>(50).unwrap();
        a[3] = 1.0;
        assert_eq!(pool.stats().outstanding_loans, 2);
        panic!("boom inside the loans' scope");
    }));
    assert!(result.is_err());
    let s = pool.stats();
    assert_eq!((s.outstanding_loans, s.buffers, s.retained_bytes, s.misses), (0, 2, 800 + 200, 2));
    // Both buffers are reusable afterwards.
    let _a = pool.acquire_zeroed::<f64>(100).unwrap();
    let _b = pool.acquire_zeroed::<i32>(50).unwrap();
    assert_eq!(pool.stats().hits, 2);
}

#[test]
fn panic_inside_write_with_returns_the_buffer() {
    let pool = BufferPool::new(1 << 20);
    let loan = pool.acquire_for_overwrite::<c64>(64).unwrap();
    let result = catch_unwind(AssertUnwindSafe(move || {
        loan.write_with(|s| {
            s[0] = c64::new(1.0, 1.0);
            panic!("boom half-way through writing");
        })
    }));
    assert!(result.is_err());
    let s = pool.stats();
    assert_eq!((s.outstanding_loans, s.buffers, s.retained_bytes), (0, 1, 64 * 16));
}

#[test]
fn pool_survives_many_panicking_threads() {
    let pool = BufferPool::new(1 << 20);
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let pool = pool.clone();
            std::thread::spawn(move || {
                let _loan = pool.acquire_zeroed::<f32>(256 + t).unwrap();
                panic!("thread {t} panics holding a loan");
            })
        })
        .collect();
    for h in handles {
        assert!(h.join().is_err());
    }
    let s = pool.stats();
    assert_eq!((s.outstanding_loans, s.hits + s.misses), (0, 4));
    assert!(s.buffers >= 1 && s.retained_bytes <= s.cap_bytes);
}

/// A policy double: records every request, checks the memory handle against it,
/// and first-touches the two halves of the memory from two threads.
#[derive(Default)]
struct RecordingPolicy {
    seen: Mutex<Vec<AllocationRequest>>,
}

impl AllocationPolicy for RecordingPolicy {
    fn on_fresh_allocation(&self, request: &AllocationRequest, memory: FreshMemory<'_>) {
        assert_eq!(memory.len_bytes(), request.bytes);
        assert_eq!(request.bytes, request.len * request.dtype.size_bytes());
        let (mut head, mut tail) = memory.split_at(request.bytes / 2);
        assert_eq!(head.len_bytes() + tail.len_bytes(), request.bytes);
        std::thread::scope(|s| {
            s.spawn(move || head.touch_pages());
            s.spawn(move || tail.touch_pages());
        });
        self.seen.lock().unwrap().push(*request);
    }
}

#[test]
fn policy_receives_node_and_size_of_every_fresh_allocation_only() {
    let policy = Arc::new(RecordingPolicy::default());
    let pool = BufferPool::on_node(1 << 24, 3, policy.clone());
    assert_eq!(pool.numa_node(), Some(3));
    let a = pool.acquire_zeroed::<f32>(1000).unwrap();
    let b = pool.acquire_for_overwrite::<c64>(3 << 10).unwrap();
    assert!(a.iter().all(|&x| x == 0.0), "touching writes only zeros");
    let (_b, ()) = b.write_with(|s| assert!(s.iter().all(|&x| x == c64::new(0.0, 0.0))));
    drop(a);
    drop(pool.acquire_zeroed::<f32>(900).unwrap()); // a hit: no policy call
    drop(pool.acquire_zeroed::<bool>(0).unwrap()); // empty: no policy call
    let seen = policy.seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![
            AllocationRequest { node: Some(3), dtype: DType::F32, len: 1000, bytes: 4000 },
            AllocationRequest { node: Some(3), dtype: DType::C64, len: 3 << 10, bytes: 3 << 14 },
        ]
    );
    // A pool without a node says so.
    let unplaced = BufferPool::with_policy(1 << 20, policy.clone());
    assert_eq!(unplaced.numa_node(), None);
    drop(unplaced.acquire_zeroed::<i64>(7).unwrap());
    assert_eq!(
        policy.seen.lock().unwrap().last(),
        Some(&AllocationRequest { node: None, dtype: DType::I64, len: 7, bytes: 56 })
    );
}

#[test]
fn split_clamps_and_empty_halves_are_harmless() {
    struct SplitBeyondEnd;
    impl AllocationPolicy for SplitBeyondEnd {
        fn on_fresh_allocation(&self, request: &AllocationRequest, memory: FreshMemory<'_>) {
            let (mut all, mut none) = memory.split_at(usize::MAX);
            assert_eq!((all.len_bytes(), none.len_bytes()), (request.bytes, 0));
            assert!(none.is_empty() && !all.is_empty());
            none.touch_pages();
            all.touch_pages();
            assert!(!all.as_mut_ptr().is_null());
        }
    }
    let pool = BufferPool::with_policy(1 << 20, Arc::new(SplitBeyondEnd));
    let l = pool.acquire_zeroed::<bool>(5).unwrap();
    assert_eq!(&l[..], &[false; 5]);
}

#[test]
fn panicking_policy_loses_no_buffer_and_no_accounting() {
    struct PanickingPolicy;
    impl AllocationPolicy for PanickingPolicy {
        fn on_fresh_allocation(&self, request: &AllocationRequest, _memory: FreshMemory<'_>) {
            panic!("cannot bind {} bytes", request.bytes);
        }
    }
    let pool = BufferPool::with_policy(1 << 20, Arc::new(PanickingPolicy));
    // The panic is caught and becomes a typed error naming the hook.
    let result = catch_unwind(AssertUnwindSafe(|| pool.acquire_zeroed::<f64>(10)));
    let err = result.expect("the pool caught the policy's panic").unwrap_err();
    assert_eq!(err.kind(), strata_tensor::ErrorKind::BackendFailure);
    assert!(
        err.message().contains("allocation policy panicked") && err.message().contains("cannot bind 80 bytes"),
        "{err}"
    );
    let s = pool.stats();
    assert_eq!((s.outstanding_loans, s.misses, s.buffers, s.retained_bytes), (0, 1, 1, 80));
    // The retained buffer is served without calling the policy again.
    let l = pool.acquire_zeroed::<f64>(10).unwrap();
    assert_eq!(pool.stats().hits, 1);
    assert!(l.iter().all(|&x| x == 0.0));
}

#[test]
fn noop_policy_is_the_default() {
    let pool = BufferPool::with_policy(1 << 20, Arc::new(NoopAllocationPolicy));
    let l = pool.acquire_zeroed::<i32>(3).unwrap();
    assert_eq!(&l[..], &[0, 0, 0]);
}
