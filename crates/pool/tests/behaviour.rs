//! Behaviour of the pool on hand-built sequences whose expected outcome is worked out in
//! the comments: reuse, the over-size bound, LRU order, statistics, the cap, errors, the
//! overwrite guard and `recycle`.

use strata_pool::{BufferPool, PoolStats, REUSE_SLACK_BYTES};
use strata_tensor::{DType, ErrorKind, Scalar, Tensor, TypedTensor, c32, c64};

/// The counters that tests compare, as a tuple: (buffers, retained_bytes, hits, misses,
/// evictions, discards, outstanding_loans).
fn counters(s: PoolStats) -> (usize, usize, u64, u64, u64, u64, usize) {
    (s.buffers, s.retained_bytes, s.hits, s.misses, s.evictions, s.discards, s.outstanding_loans)
}

#[test]
fn returned_buffer_is_reused_for_a_fitting_request() {
    let pool = BufferPool::new(1 << 20);
    let a = pool.acquire_zeroed::<f64>(1000).unwrap();
    let addr = a.as_ptr();
    assert_eq!(a.capacity(), 1000);
    drop(a);
    assert_eq!(counters(pool.stats()), (1, 8000, 0, 1, 0, 0, 0));
    // 900 elements = 7200 bytes <= 8000 <= 2 * 7200 + slack: reused, capacity kept.
    let b = pool.acquire_zeroed::<f64>(900).unwrap();
    assert_eq!(b.as_ptr(), addr);
    assert_eq!((b.len(), b.capacity()), (900, 1000));
    assert_eq!(counters(pool.stats()), (0, 0, 1, 1, 0, 0, 1));
}

#[test]
fn reuse_is_bounded_in_over_size() {
    let pool = BufferPool::new(1 << 30);
    drop(pool.acquire_zeroed::<bool>(1 << 20).unwrap()); // 1 MiB of bool
    // 1 KiB: 2 * 1024 + 4096 < 1 MiB, so the big buffer is not lent.
    let small = pool.acquire_zeroed::<bool>(1024).unwrap();
    assert_eq!(small.capacity(), 1024);
    assert_eq!(pool.stats().misses, 2);
    // The bound itself: capacity 2n + slack is accepted, one byte more is not.
    let n = 3000;
    let pool = BufferPool::new(1 << 30);
    drop(pool.acquire_zeroed::<bool>(2 * n + REUSE_SLACK_BYTES).unwrap());
    drop(pool.acquire_zeroed::<bool>(2 * n + REUSE_SLACK_BYTES + 1).unwrap());
    let hit = pool.acquire_zeroed::<bool>(n).unwrap();
    assert_eq!(hit.capacity(), 2 * n + REUSE_SLACK_BYTES);
    assert_eq!((pool.stats().hits, pool.stats().misses), (1, 2));
    // And a request larger than every retained capacity misses.
    let big = pool.acquire_zeroed::<bool>(2 * n + REUSE_SLACK_BYTES + 2).unwrap();
    assert_eq!(big.capacity(), 2 * n + REUSE_SLACK_BYTES + 2);
    assert_eq!(pool.stats().misses, 3);
}

#[test]
fn smallest_fitting_buffer_wins() {
    let pool = BufferPool::new(1 << 20);
    // Held together, so that none is served by another's buffer.
    let held: Vec<_> = [4000usize, 1200, 2000, 1100].iter().map(|&n| pool.acquire_zeroed::<f32>(n).unwrap()).collect();
    drop(held);
    // 1000 f32 = 4000 bytes fits capacities up to 12096 bytes: all four; 1100 is smallest.
    assert_eq!(pool.acquire_zeroed::<f32>(1000).unwrap().capacity(), 1100);
    let l = pool.acquire_zeroed::<f32>(1150).unwrap();
    assert_eq!(l.capacity(), 1200);
}

#[test]
fn buffers_never_cross_dtypes() {
    let pool = BufferPool::new(1 << 20);
    drop(pool.acquire_zeroed::<f64>(512).unwrap()); // 4096 bytes of f64
    // Same byte size, other dtypes of the same width: all misses.
    let i = pool.acquire_zeroed::<i64>(512).unwrap();
    let c = pool.acquire_zeroed::<c32>(512).unwrap();
    assert_eq!(pool.stats().misses, 3);
    assert_eq!(pool.stats().buffers, 1);
    drop((i, c));
    let f = pool.acquire_zeroed::<f64>(512).unwrap();
    assert_eq!(pool.stats().hits, 1);
    drop(f);
}

#[test]
fn zeroed_acquire_clears_stale_data() {
    let pool = BufferPool::new(1 << 20);
    let mut a = pool.acquire_zeroed::<c64>(300).unwrap();
    a.fill(c64::new(7.0, -1.0));
    drop(a);
    let b = pool.acquire_zeroed::<c64>(300).unwrap();
    assert_eq!(pool.stats().hits, 1);
    assert!(b.iter().all(|&x| x == c64::new(0.0, 0.0)));
}

#[test]
fn eviction_is_least_recently_used_across_dtypes() {
    // Four 4096-byte buffers of different dtypes; the cap holds three.
    let pool = BufferPool::new(3 * 4096);
    let a = pool.acquire_zeroed::<f32>(1024).unwrap();
    let b = pool.acquire_zeroed::<i64>(512).unwrap();
    let c = pool.acquire_zeroed::<c64>(256).unwrap();
    let d = pool.acquire_zeroed::<bool>(4096).unwrap();
    let pb = b.as_ptr() as usize;
    drop(a);
    drop(b);
    drop(c);
    drop(d); // retaining d evicts a, the least recently used
    assert_eq!(counters(pool.stats()), (3, 3 * 4096, 0, 4, 1, 0, 0));
    // Reusing b makes it the most recent: order is now c, d, b.
    let b = pool.acquire_zeroed::<i64>(512).unwrap();
    assert_eq!(b.as_ptr() as usize, pb);
    drop(b);
    pool.set_cap_bytes(2 * 4096); // evicts c
    assert_eq!(counters(pool.stats()), (2, 2 * 4096, 1, 4, 2, 0, 0));
    pool.set_cap_bytes(4096); // evicts d
    let s = pool.stats();
    assert_eq!((s.buffers, s.evictions), (1, 3));
    // Only b is left: the others miss, b hits with its old address.
    assert_eq!(pool.acquire_zeroed::<i64>(512).unwrap().as_ptr() as usize, pb);
    let others = (
        pool.acquire_zeroed::<f32>(1024).unwrap(),
        pool.acquire_zeroed::<c64>(256).unwrap(),
        pool.acquire_zeroed::<bool>(4096).unwrap(),
    );
    let s = pool.stats();
    assert_eq!((s.hits, s.misses, s.outstanding_loans), (2, 7, 3));
    drop(others);
}

#[test]
fn statistics_add_up_over_a_worked_sequence() {
    let pool = BufferPool::new(10_000);
    assert_eq!(pool.cap_bytes(), 10_000);
    let a = pool.acquire_zeroed::<f64>(500).unwrap(); // miss, 4000 B
    let b = pool.acquire_zeroed::<f32>(1500).unwrap(); // miss, 6000 B
    let c = pool.acquire_zeroed::<i32>(3000).unwrap(); // miss, 12000 B (> cap)
    let empty = pool.acquire_zeroed::<f64>(0).unwrap(); // neither hit nor miss
    assert_eq!(counters(pool.stats()), (0, 0, 0, 3, 0, 0, 4));
    assert_eq!(pool.stats().fresh_bytes, 4000 + 6000 + 12000);
    drop(c); // larger than the cap: discarded
    assert_eq!(counters(pool.stats()), (0, 0, 0, 3, 0, 1, 3));
    drop(a);
    drop(b); // 10000 B retained == cap
    assert_eq!(counters(pool.stats()), (2, 10_000, 0, 3, 0, 1, 1));
    drop(empty);
    let a2 = pool.acquire_for_overwrite::<f64>(400).unwrap(); // hit on a (3200 <= 4000)
    assert_eq!(counters(pool.stats()), (1, 6000, 1, 3, 0, 1, 1));
    let v = pool.acquire_zeroed::<f32>(1500).unwrap().into_vec(); // hit on b, leaves the pool
    assert_eq!(counters(pool.stats()), (0, 0, 2, 3, 0, 1, 1));
    pool.recycle(v); // back: 6000 B
    drop(a2); // 4000 B: 10000 total
    pool.recycle(vec![1i64; 10]); // 80 B more: evicts the oldest (b's buffer, 6000 B)
    assert_eq!(counters(pool.stats()), (2, 4080, 2, 3, 1, 1, 0));
    pool.clear();
    assert_eq!(counters(pool.stats()), (0, 0, 2, 3, 1, 1, 0));
    drop(pool.acquire_zeroed::<f64>(10).unwrap());
    let held = pool.acquire_zeroed::<f64>(10).unwrap();
    pool.reset(); // counters zeroed, the live loan still counted
    let s = pool.stats();
    assert_eq!((counters(s), s.cap_bytes, s.fresh_bytes), ((0, 0, 0, 0, 0, 0, 1), 10_000, 0));
    drop(held);
    assert_eq!(counters(pool.stats()), (1, 80, 0, 0, 0, 0, 0));
}

#[test]
fn zero_cap_retains_nothing() {
    let pool = BufferPool::new(0);
    for round in 0..3u64 {
        let mut l = pool.acquire_zeroed::<i32>(100).unwrap();
        l[0] = 5;
        drop(l);
        pool.recycle(vec![1.0f32; 3]);
        pool.recycle(Vec::<f32>::with_capacity(0)); // zero capacity: ignored entirely
        let s = pool.stats();
        assert_eq!(counters(s), (0, 0, 0, round + 1, 0, 2 * (round + 1), 0));
    }
    // Raising the cap enables retention again.
    pool.set_cap_bytes(400);
    drop(pool.acquire_zeroed::<i32>(100).unwrap());
    assert_eq!(pool.stats().buffers, 1);
    pool.set_cap_bytes(0);
    let s = pool.stats();
    assert_eq!((s.buffers, s.retained_bytes, s.evictions), (0, 0, 1));
}

#[test]
fn zero_length_requests_are_empty_loans() {
    let pool = BufferPool::new(1 << 20);
    let z = pool.acquire_zeroed::<c32>(0).unwrap();
    let o = pool.acquire_for_overwrite::<bool>(0).unwrap();
    assert!(z.is_empty() && o.is_empty());
    assert_eq!(counters(pool.stats()), (0, 0, 0, 0, 0, 0, 2));
    let (o, n) = o.write_with(|s| s.len());
    assert_eq!(n, 0);
    let t = o.into_tensor(&[0, 5]).unwrap();
    assert_eq!(t.shape(), &[0, 5]);
    drop(z);
    assert_eq!(counters(pool.stats()), (0, 0, 0, 0, 0, 0, 0));
}

#[test]
fn overflowing_sizes_are_typed_errors_that_change_nothing() {
    let pool = BufferPool::new(1 << 20);
    let before = pool.stats();
    let e = pool.acquire_zeroed::<f64>(usize::MAX / 4).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(e.op(), "BufferPool::acquire_zeroed");
    assert!(e.message().contains("float64"), "{e}");
    // Fits usize but not isize.
    let e = pool.acquire_for_overwrite::<bool>(isize::MAX as usize + 1).unwrap_err();
    assert_eq!((e.kind(), e.op()), (ErrorKind::InvalidArgument, "BufferPool::acquire_for_overwrite"));
    assert_eq!(pool.stats(), before);
}

#[test]
fn allocation_failure_is_a_typed_error_that_changes_nothing() {
    let pool = BufferPool::new(1 << 20);
    // A valid layout no machine can provide (half the address space).
    let e = pool.acquire_zeroed::<c64>((isize::MAX as usize / 16) / 2).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BackendFailure, "{e}");
    assert_eq!(pool.stats(), BufferPool::new(1 << 20).stats());
}

#[test]
fn into_tensor_checks_the_shape_and_returns_the_buffer_on_error() {
    let pool = BufferPool::new(1 << 20);
    let mut l = pool.acquire_zeroed::<i64>(6).unwrap();
    l.copy_from_slice(&[0, 1, 2, 3, 4, 5]);
    let e = l.into_tensor(&[4, 2]).unwrap_err();
    assert_eq!((e.kind(), e.op()), (ErrorKind::ShapeMismatch, "BufferLoan::into_tensor"));
    assert_eq!(counters(pool.stats()), (1, 48, 0, 1, 0, 0, 0));
    let e = pool.acquire_zeroed::<i64>(6).unwrap().into_tensor(&[usize::MAX, 3]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let mut l = pool.acquire_zeroed::<i64>(6).unwrap();
    l.copy_from_slice(&[0, 1, 2, 3, 4, 5]);
    let t = l.into_tensor(&[3, 2]).unwrap();
    assert_eq!(t, TypedTensor::from_fn(&[3, 2], |i| (i[0] * 2 + i[1]) as i64).unwrap());
    assert_eq!(counters(pool.stats()), (0, 0, 2, 1, 0, 0, 0));
}

#[test]
fn overwrite_loan_sees_only_stale_values_or_zeros() {
    let pool = BufferPool::new(1 << 20);
    // A recycled Vec<bool> whose spare capacity was never written.
    let mut v = Vec::with_capacity(100);
    v.resize(10, true);
    pool.recycle(v);
    let o = pool.acquire_for_overwrite::<bool>(100).unwrap();
    assert_eq!((o.len(), o.capacity()), (100, 100));
    let (loan, seen) = o.write_with(|s| {
        let seen = s.to_vec();
        s.fill(true);
        seen
    });
    // Stale `true`s where the old Vec had elements, zeros (false) in its spare capacity.
    assert_eq!(seen, [vec![true; 10], vec![false; 90]].concat());
    assert!(loan.iter().all(|&b| b));
    drop(loan);
    // Reused again: no zeroing, the written values are the stale contents now.
    let (loan, seen) = pool.acquire_for_overwrite::<bool>(50).unwrap().write_with(|s| {
        let seen = s.to_vec();
        s.fill(false);
        seen
    });
    assert_eq!(seen, vec![true; 50]);
    assert_eq!(loan.capacity(), 100);
    // Fresh memory is zeroed.
    let (_, seen) = pool.acquire_for_overwrite::<f32>(64).unwrap().write_with(|s| s.to_vec());
    assert_eq!(seen, vec![0.0; 64]);
}

#[test]
fn unwritten_overwrite_loan_returns_its_buffer() {
    let pool = BufferPool::new(1 << 20);
    let o = pool.acquire_for_overwrite::<f64>(16).unwrap();
    assert_eq!(pool.stats().outstanding_loans, 1);
    drop(o);
    assert_eq!(counters(pool.stats()), (1, 128, 0, 1, 0, 0, 0));
}

fn recycle_tensor_of<T: Scalar>(pool: &BufferPool, value: T) {
    let before = pool.stats();
    let t: Tensor = TypedTensor::filled(&[3, 5], value).unwrap().into();
    assert_eq!(t.dtype(), T::DTYPE);
    pool.recycle_tensor(t);
    let l = pool.acquire_zeroed::<T>(15).unwrap();
    assert!(l.iter().all(|&x| x == T::zero()));
    let after = pool.stats();
    assert_eq!(after.hits, before.hits + 1, "{:?}", T::DTYPE);
    assert_eq!(after.misses, before.misses, "{:?}", T::DTYPE);
}

#[test]
fn recycle_tensor_files_each_dtype_under_its_own_type() {
    let pool = BufferPool::new(1 << 20);
    recycle_tensor_of(&pool, 1.5f32);
    recycle_tensor_of(&pool, 2.5f64);
    recycle_tensor_of(&pool, 3i32);
    recycle_tensor_of(&pool, 4i64);
    recycle_tensor_of(&pool, true);
    recycle_tensor_of(&pool, c32::new(1.0, 2.0));
    recycle_tensor_of(&pool, c64::new(3.0, 4.0));
    assert_eq!(pool.stats().hits, DType::ALL.len() as u64);
}

#[test]
fn handles_share_one_pool_and_loans_outlive_them() {
    let pool = BufferPool::new(1 << 20);
    let other = pool.clone();
    assert!(pool.same_pool(&other));
    assert!(!pool.same_pool(&BufferPool::new(1 << 20)));
    let loan = other.acquire_zeroed::<f32>(10).unwrap();
    drop(other);
    assert_eq!(pool.stats().outstanding_loans, 1);
    drop(loan);
    assert_eq!(pool.stats().buffers, 1);
    // A loan whose pool handles are all gone still drops cleanly.
    let lonely = BufferPool::new(1 << 20).acquire_zeroed::<f32>(10).unwrap();
    assert_eq!(lonely.len(), 10);
    drop(lonely);
}

#[test]
fn pool_and_loans_are_thread_safe_types() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<BufferPool>();
    send_sync::<strata_pool::BufferLoan<c64>>();
    send_sync::<strata_pool::OverwriteLoan<bool>>();
    send::<strata_pool::FreshMemory<'static>>();
}
