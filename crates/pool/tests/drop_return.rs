//! Tensors made from loans bring their buffers back when they drop: reuse of the very
//! same memory, the cap and LRU eviction still holding, clones, conversions and moves
//! across threads, `into_vec` taking a buffer away for good, and tensors outliving
//! their pool.

use strata_pool::BufferPool;
use strata_tensor::{Tensor, TypedTensor};

fn tensor_from(pool: &BufferPool, len: usize, value: f64) -> TypedTensor<f64> {
    let loan = pool.acquire_for_overwrite::<f64>(len).unwrap();
    let (loan, ()) = loan.write_with(|s| s.fill(value));
    loan.into_tensor(&[len]).unwrap()
}

#[test]
fn a_dropped_tensor_lends_its_memory_to_the_next_request() {
    let pool = BufferPool::new(64 << 20);
    let t = tensor_from(&pool, 1 << 20, 1.0);
    assert!(t.has_recycler());
    let addr = t.data().as_ptr();
    assert_eq!(pool.stats().outstanding_loans, 0, "the loan ended when the tensor was made");
    drop(t);
    let s = pool.stats();
    assert_eq!((s.buffers, s.retained_bytes, s.returned_on_drop), (1, 8 << 20, 1));
    let again = tensor_from(&pool, 1 << 20, 2.0);
    assert_eq!(again.data().as_ptr(), addr, "the same pages serve the next output");
    assert!(again.data().iter().all(|&x| x == 2.0));
    assert_eq!((pool.stats().hits, pool.stats().misses), (1, 1));
}

#[test]
fn the_loop_of_a_user_allocates_once() {
    // `let c = op(..); ...; drop(c)` a hundred times: one fresh allocation in all.
    let pool = BufferPool::new(64 << 20);
    for i in 0..100 {
        let c = tensor_from(&pool, 500_000, i as f64);
        assert_eq!(c.data()[499_999], i as f64);
    }
    let s = pool.stats();
    assert_eq!((s.misses, s.hits, s.returned_on_drop, s.buffers), (1, 99, 100, 1));
}

#[test]
fn dropped_tensors_respect_the_cap_and_evict_least_recently_used() {
    // Cap of 3 MiB; five tensors of 1 MiB each dropped in order: the two oldest are
    // evicted, the last three kept.
    let pool = BufferPool::new(3 << 20);
    let tensors: Vec<_> = (0..5).map(|i| tensor_from(&pool, 1 << 17, i as f64)).collect();
    let addrs: Vec<usize> = tensors.iter().map(|t| t.data().as_ptr() as usize).collect();
    drop(tensors);
    let s = pool.stats();
    assert_eq!((s.buffers, s.retained_bytes, s.evictions, s.returned_on_drop), (3, 3 << 20, 2, 5));
    assert!(s.retained_bytes <= s.cap_bytes);
    // The next three requests get the three most recent buffers back (most recent first).
    let held: Vec<_> = (0..3).map(|_| tensor_from(&pool, 1 << 17, 0.0)).collect();
    let got: Vec<usize> = held.iter().map(|t| t.data().as_ptr() as usize).collect();
    assert_eq!(got, vec![addrs[4], addrs[3], addrs[2]]);
    // A tensor larger than the cap alone is discarded on drop.
    drop(tensor_from(&pool, 1 << 20, 0.0));
    assert_eq!(pool.stats().discards, 1);
    // A cap of 0 keeps nothing.
    pool.set_cap_bytes(0);
    drop(held);
    let s = pool.stats();
    assert_eq!((s.buffers, s.retained_bytes), (0, 0));
}

#[test]
fn clones_conversions_reshapes_and_moves_keep_the_way_back() {
    let pool = BufferPool::new(64 << 20);
    let t = tensor_from(&pool, 4096, 3.0);
    let copy = t.clone();
    assert!(copy.has_recycler());
    assert_eq!(copy, t);
    // Erased and back, reshaped, moved to another thread and dropped there.
    let erased: Tensor = t.reshape(&[64, 64]).unwrap().into();
    let typed = erased.into_typed::<f64>().unwrap();
    assert_eq!(typed.shape(), &[64, 64]);
    std::thread::spawn(move || drop(typed)).join().unwrap();
    assert_eq!(pool.stats().returned_on_drop, 1);
    drop(copy);
    let s = pool.stats();
    assert_eq!((s.returned_on_drop, s.buffers), (2, 2));
}

#[test]
fn into_vec_and_into_parts_take_the_buffer_away_for_good() {
    let pool = BufferPool::new(64 << 20);
    let v = tensor_from(&pool, 4096, 1.0).into_vec();
    assert_eq!(v.len(), 4096);
    drop(v);
    let (data, shape) = tensor_from(&pool, 4096, 1.0).into_parts();
    assert_eq!((data.len(), shape), (4096, vec![4096]));
    drop(data);
    let free = tensor_from(&pool, 4096, 1.0).without_recycler();
    assert!(!free.has_recycler());
    drop(free);
    let s = pool.stats();
    assert_eq!((s.returned_on_drop, s.buffers, s.misses), (0, 0, 3));
}

#[test]
fn recycling_by_hand_still_counts_once() {
    // `recycle_tensor` of a tensor that would also come back on its own: one return.
    let pool = BufferPool::new(64 << 20);
    let t: Tensor = tensor_from(&pool, 4096, 1.0).into();
    pool.recycle_tensor(t);
    let s = pool.stats();
    assert_eq!((s.buffers, s.returned_on_drop), (1, 0));
    // Recycled into another pool, it lands there only.
    let other = BufferPool::new(64 << 20);
    let t: Tensor = tensor_from(&pool, 4096, 1.0).into();
    other.recycle_tensor(t);
    assert_eq!((pool.stats().buffers, other.stats().buffers), (0, 1));
}

#[test]
fn a_tensor_outliving_its_pool_frees_its_buffer() {
    let pool = BufferPool::new(64 << 20);
    let t = tensor_from(&pool, 1 << 16, 5.0);
    let watcher = pool.clone();
    drop(pool);
    // A live handle keeps the pool: the buffer returns.
    drop(tensor_from(&watcher, 1 << 16, 0.0));
    assert_eq!(watcher.stats().returned_on_drop, 1);
    drop(watcher);
    // Every handle is gone: the tensor still reads, and dropping it simply frees it.
    assert!(t.data().iter().all(|&x| x == 5.0));
    let moved = std::thread::spawn(move || t).join().unwrap();
    drop(moved);
}

#[test]
fn concurrent_drops_keep_the_accounting() {
    let pool = BufferPool::new(16 << 20);
    std::thread::scope(|s| {
        for k in 0..4 {
            let pool = &pool;
            s.spawn(move || {
                for i in 0..200 {
                    let t = tensor_from(pool, 1000 + (i + k) % 7 * 100, 1.0);
                    assert!(t.data().iter().all(|&x| x == 1.0));
                }
            });
        }
    });
    let s = pool.stats();
    assert_eq!(s.returned_on_drop, 800);
    assert_eq!(s.hits + s.misses, 800);
    assert!(s.misses <= 4 * 7, "{} fresh allocations for 800 outputs", s.misses);
    assert_eq!(s.outstanding_loans, 0);
    assert!(s.retained_bytes <= s.cap_bytes);
}
