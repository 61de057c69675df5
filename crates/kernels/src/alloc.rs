//! The one place kernels obtain output buffers. Every kernel that produces a fresh
//! tensor goes through [`fill_output`], so the source of memory (the domain's buffer
//! pool, or the global allocator) is decided in one function.
//!
//! **Small outputs skip the pool.** An output of at most [`SMALL_OUTPUT_BYTES`] comes
//! from the global allocator even when the context has a pool: the allocator's per-thread
//! caches serve such a request in a few dozen instructions without a shared lock, while a
//! pool acquire takes the pool's lock and searches its size classes, and a fresh output
//! (which leaves the pool with the tensor) then misses anyway. The pool earns its keep on
//! large buffers, where reuse saves page faults; a buffer under one page has no such
//! cost. A pool that belongs to a NUMA node serves every output, small ones included, so
//! that its placement policy decides where all of a node domain's results live.
//!
//! **Dropped outputs come back.** A large output taken from the pool carries the pool's
//! recycler (`BufferLoan::into_tensor`): when the user drops the result, its buffer
//! returns to the pool (within its byte cap) and the next output of that size reuses
//! pages that are already mapped instead of faulting fresh ones.
//! (Recorded in docs/DECISIONS.md.)
//!
//! **Allocation failure is an error.** Every path allocates fallibly (the pool's, a
//! `try_reserve`, [`strata_pool::try_zeroed_vec`]): a request the allocator refuses is a
//! `BackendFailure` naming the op and the bytes, never an abort.

use strata_tensor::{Error, Result, Scalar, TypedTensor, shape::checked_len};

use crate::context::KernelContext;

/// Largest output, in bytes, taken from the global allocator rather than the context's
/// pool (unless the pool belongs to a NUMA node): one small page.
pub(crate) const SMALL_OUTPUT_BYTES: usize = 4096;

/// Allocates a row-major output of `shape` and lets `write` fill it. `write` must
/// overwrite every element: the buffer's prior contents are unspecified (valid values,
/// but possibly stale ones from an earlier loan of the pool). The one exception is
/// `structural::empty`, which hands such a buffer to a caller who overwrites it.
pub(crate) fn fill_output<T: Scalar>(
    ctx: &KernelContext<'_>,
    op: &'static str,
    shape: &[usize],
    write: impl FnOnce(&mut [T]),
) -> Result<TypedTensor<T>> {
    let len = checked_len(op, shape)?;
    let small = len <= SMALL_OUTPUT_BYTES / T::DTYPE.size_bytes();
    match ctx.pool() {
        Some(pool) if !small || pool.numa_node().is_some() => {
            let loan = pool.acquire_for_overwrite::<T>(len).map_err(|e| e.in_op(op))?;
            let (filled, ()) = loan.write_with(write);
            if small {
                // A node pool's small output: placed by the pool, but freed on drop like
                // any small output (taking the pool's lock to keep a page is no saving).
                TypedTensor::from_vec(filled.into_vec(), shape).map_err(|e| e.in_op(op))
            } else {
                // Comes back to the pool by itself when the result drops.
                filled.into_tensor(shape).map_err(|e| e.in_op(op))
            }
        }
        _ => {
            // Allocation failure is a typed error of `op` (with the bytes), never an abort.
            let mut data = if small {
                // `resize` rather than a zeroed allocation: that bypasses the allocator's
                // per-thread cache, and a few stores cost less.
                let mut data = Vec::new();
                data.try_reserve_exact(len).map_err(|_| {
                    Error::backend_failure(
                        op,
                        format!("the allocator could not provide {} bytes", len * T::DTYPE.size_bytes()),
                    )
                })?;
                data.resize(len, T::zero());
                data
            } else {
                // Large and no pool: zeroed pages come lazily from the operating system.
                strata_pool::try_zeroed_vec::<T>(op, len)?
            };
            write(&mut data);
            TypedTensor::from_vec(data, shape).map_err(|e| e.in_op(op))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_pool::BufferPool;

    fn filled(ctx: &KernelContext<'_>, shape: &[usize]) -> TypedTensor<f64> {
        fill_output::<f64>(ctx, "test", shape, |out| {
            for (i, x) in out.iter_mut().enumerate() {
                *x = i as f64;
            }
        })
        .unwrap()
    }

    #[test]
    fn small_outputs_bypass_the_pool_and_large_ones_use_it() {
        let pool = BufferPool::new(1 << 24);
        let ctx = KernelContext::sequential().with_pool(&pool);
        let limit = SMALL_OUTPUT_BYTES / 8;
        for shape in [vec![], vec![0], vec![1], vec![2, 3], vec![limit]] {
            let t = filled(&ctx, &shape);
            assert_eq!(t.shape(), &shape[..]);
            let want: Vec<f64> = (0..t.len()).map(|i| i as f64).collect();
            assert_eq!(t.data(), &want[..]);
        }
        let s = pool.stats();
        assert_eq!((s.hits, s.misses, s.outstanding_loans), (0, 0, 0), "small outputs touched the pool");
        let big = filled(&ctx, &[limit + 1]);
        assert_eq!(big.data()[limit], limit as f64);
        assert_eq!(pool.stats().misses, 1, "a large output comes from the pool");
    }

    #[test]
    fn dropped_large_outputs_come_back_and_small_ones_never_touch_the_pool() {
        let pool = BufferPool::new(1 << 24);
        let ctx = KernelContext::sequential().with_pool(&pool);
        let len = 4 * SMALL_OUTPUT_BYTES;
        let first = filled(&ctx, &[len]);
        let addr = first.data().as_ptr();
        assert!(first.has_recycler());
        drop(first);
        for _ in 0..10 {
            let again = filled(&ctx, &[len / 2, 2]);
            assert_eq!(again.data().as_ptr(), addr, "the dropped output's memory is reused");
            assert_eq!(again.data()[len - 1], (len - 1) as f64);
        }
        let s = pool.stats();
        assert_eq!((s.misses, s.hits, s.returned_on_drop), (1, 10, 11));
        let small = filled(&ctx, &[SMALL_OUTPUT_BYTES / 8]);
        assert!(!small.has_recycler());
        drop(small);
        assert_eq!(pool.stats().returned_on_drop, 11);
        // A node pool places small outputs, but they are freed on drop.
        let node = BufferPool::on_node(1 << 20, 0, std::sync::Arc::new(strata_pool::NoopAllocationPolicy));
        let small = filled(&KernelContext::sequential().with_pool(&node), &[3]);
        assert!(!small.has_recycler());
    }

    #[test]
    fn a_node_pool_serves_small_outputs_too() {
        let pool = BufferPool::on_node(1 << 20, 0, std::sync::Arc::new(strata_pool::NoopAllocationPolicy));
        let ctx = KernelContext::sequential().with_pool(&pool);
        let t = filled(&ctx, &[3]);
        assert_eq!(t.data(), &[0.0, 1.0, 2.0]);
        assert_eq!(pool.stats().misses, 1, "the node pool placed the small output");
    }

    #[test]
    fn stale_pool_contents_never_show_through() {
        // A retained large buffer full of garbage: the next large output reuses it and
        // must still see only what `write` stored.
        let pool = BufferPool::new(1 << 24);
        let len = SMALL_OUTPUT_BYTES; // f64: 8 pages, well above the small limit
        pool.recycle(vec![f64::NAN; len]);
        let ctx = KernelContext::sequential().with_pool(&pool);
        let t = filled(&ctx, &[len]);
        assert!(t.data().iter().enumerate().all(|(i, &x)| x == i as f64));
        assert_eq!(pool.stats().hits, 1);
    }

    #[test]
    fn bad_shapes_are_typed_errors() {
        let ctx = KernelContext::sequential();
        let e = fill_output::<f64>(&ctx, "some_op", &[usize::MAX, 2], |_| panic!("written")).unwrap_err();
        assert_eq!(e.kind(), strata_tensor::ErrorKind::InvalidArgument);
        assert_eq!(e.op(), "some_op");
    }
}
