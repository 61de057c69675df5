//! # strata-pool: bounded typed host buffers
//!
//! A pool of host buffers for the seven strata dtypes, so that kernels producing many
//! temporaries reuse memory instead of paying the allocator and the page faults again.
//!
//! **Promises.**
//! - Reuse by capacity with a bound on over-size: a request of `n` bytes is served only
//!   by a buffer of the same dtype with capacity in `n ..= 2n + 4096` bytes
//!   ([`REUSE_SLACK_BYTES`]), the smallest such; otherwise fresh memory is allocated.
//! - After every acquire, return and cap change, retained bytes `<=` the cap (0 disables
//!   retention; lowering the cap evicts at once), evicting the least recently used
//!   buffers across all dtypes first.
//! - Two acquire modes: [`BufferPool::acquire_zeroed`], or
//!   [`BufferPool::acquire_for_overwrite`] whose [`OverwriteLoan`] guard must be written
//!   through before it can be read or become a tensor. No undefined behaviour in either:
//!   see the safety argument on [`OverwriteLoan`].
//! - A [`BufferLoan`] returns its buffer when dropped, also during a panic, so the
//!   statistics ([`PoolStats`]) never lose a loan.
//! - Every fresh allocation goes through an object-safe [`AllocationPolicy`] with the
//!   pool's NUMA node and the size, so an engine can first-touch or bind it on its node.
//! - The uncontended acquire and return of a retained buffer take one short lock each
//!   and allocate nothing.
//!
//! **Does not.** Know about threads, NUMA topology or system calls (the policy brings
//! those), share buffers across dtypes, or shrink a buffer it hands out.
//!
//! ```
//! use strata_pool::BufferPool;
//! use strata_tensor::Tensor;
//!
//! let pool = BufferPool::new(1 << 20);
//! let a = pool.acquire_zeroed::<f32>(256).unwrap();
//! assert!(a.iter().all(|&x| x == 0.0));
//! drop(a); // back into the pool
//! let b = pool.acquire_for_overwrite::<f32>(200).unwrap(); // reuses the 1 KiB buffer
//! let (b, ()) = b.write_with(|out| out.fill(1.5));
//! let t: Tensor = b.into_tensor(&[10, 20]).unwrap().into();
//! pool.recycle_tensor(t); // the tensor's buffer goes back too
//! let s = pool.stats();
//! assert_eq!((s.hits, s.misses, s.buffers, s.outstanding_loans), (1, 1, 1, 0));
//! assert!(s.retained_bytes <= s.cap_bytes);
//! ```
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod huge_pages;
mod loan;
mod policy;
mod pool;
mod raw;
mod retained;

pub use huge_pages::ADVICE_MIN_BYTES as HUGE_PAGE_ADVICE_MIN_BYTES;
pub use loan::{BufferLoan, OverwriteLoan};
pub use policy::{AllocationPolicy, AllocationRequest, FreshMemory, NoopAllocationPolicy};
pub use pool::{BufferPool, PoolStats, REUSE_SLACK_BYTES};
