//! # strata-arbiter: admission of work onto CPU sets
//!
//! Concurrent callers of a CPU backend must neither oversubscribe the machine nor
//! serialise independent work. A [`ResourceArbiter`] grants RAII [`ResourcePermit`]s for a
//! [`CpuSet`](strata_topology::CpuSet), or for the whole machine
//! ([`AdmissionRequest::Exclusive`], for libraries whose threads we cannot bound).
//!
//! ## What it promises
//! - **Safety:** no two held permits overlap; an exclusive permit is held alone.
//! - **Fairness:** a request is admitted when it conflicts with no held permit and with no
//!   *older* waiting request. An old request blocked on CPU 0 never holds back a new one
//!   for CPU 1; a new request that overlaps an older waiter queues behind it, so a stream
//!   of small requests cannot starve a large or exclusive one.
//! - **Re-entrancy:** an owner (the calling thread, or an [`OwnerToken`] handed to child
//!   tasks) holds at most one permit per arbiter. Asking again while holding one, or while
//!   another request of the same token is still waiting, returns
//!   [`AdmissionError::ReEntrant`] at once: never a deadlock, never a nested grant.
//! - **Panics:** a permit is released by `Drop`, so unwinding releases it. The arbiter
//!   uses `parking_lot` locks, which do not poison: a panic elsewhere never leaves the
//!   arbiter unusable.
//! - **Cost:** an uncontended acquire + release touches only the requested CPUs' own cache
//!   lines (one 64-byte occupancy slot per CPU id, claimed with compare-and-swap) plus a
//!   read of a rarely written gate word; it takes no lock and does not allocate. Requests on
//!   disjoint CPUs from different threads therefore scale. Only contended requests go
//!   through the mutex-protected FIFO queue, and each waiter sleeps on its own condition
//!   variable.
//!
//! ## Decisions where the specification left a choice
//! - **Re-entrancy** is refused with a typed error, never granted nested: a nested grant
//!   of overlapping CPUs would have to be treated as a no-op and would hide a budget bug.
//!   The rule is per owner and per arbiter, whatever the CPUs: request the union once.
//!   A thread that holds a permit for a token is also a holder itself (the permit cannot
//!   leave the thread), so it cannot wait on its own permit under another identity.
//! - **Permits are `!Send` and `!Sync`.** The thread's re-entrancy record is
//!   thread-local, so a permit released elsewhere would corrupt it. Work spanning threads
//!   uses an [`OwnerToken`] and keeps the permit with the parent.
//! - **Timeouts:** [`WaitPolicy::Timeout`] with `Duration::ZERO` never waits and refuses
//!   with [`AdmissionError::TimedOut`] (the same kind any timeout gives); `try_acquire`
//!   refuses with [`AdmissionError::WouldBlock`]. A timeout too large for an `Instant`
//!   waits indefinitely. A waiter granted at the instant its timeout expires keeps the
//!   permit.
//! - **Bad input:** a [`CpuSet`](strata_topology::CpuSet) cannot be empty, so there is no
//!   empty request; ids above `CpuId::MAX` are refused with
//!   [`AdmissionError::CpuIdTooLarge`] before any state is touched.
//! - **Memory:** 8 KiB of chunk pointers per arbiter, plus 4 KiB for each block of 64 CPU
//!   ids ever requested, kept until the arbiter is dropped (`global()` lives forever).
//! - **Statistics** are per arbiter and read without stopping admission, so a snapshot
//!   taken under load may mix moments; fast-path grants are counted on the granted
//!   CPU's own cache line, never on a shared counter.
//!
//! ## What it does not do
//! It does not pin threads or start any; it does not know the machine's topology (any
//! CPU id up to [`CpuId::MAX`](strata_topology::CpuId::MAX) may be requested); it does not
//! detect deadlocks between *different* owners (two threads that each hold one permit and
//! wait for the other's CPUs deadlock as with any lock).
//!
//! ```
//! use std::time::Duration;
//! use strata_arbiter::{AdmissionError, AdmissionRequest, ResourceArbiter};
//! use strata_topology::CpuSet;
//!
//! let arbiter = ResourceArbiter::new();
//! let node0 = AdmissionRequest::Cpus("0-3".parse::<CpuSet>()?);
//! let node1 = AdmissionRequest::Cpus("4-7".parse::<CpuSet>()?);
//! let permit = arbiter.acquire(&node0).expect("uncontended");
//!
//! // Disjoint work runs at once; overlapping work waits (here: gives up).
//! std::thread::scope(|s| {
//!     s.spawn(|| {
//!         assert!(arbiter.try_acquire(&node1).is_ok());
//!         let overlapping = AdmissionRequest::Cpus("3".parse().unwrap());
//!         let waited = arbiter.acquire_timeout(&overlapping, Duration::from_millis(10));
//!         assert!(matches!(waited, Err(AdmissionError::TimedOut { .. })));
//!     });
//! });
//!
//! // The same thread asking again is refused, not deadlocked.
//! assert!(matches!(arbiter.acquire(&node1), Err(AdmissionError::ReEntrant { .. })));
//! drop(permit);
//! assert_eq!(arbiter.stats().holders, 0);
//! # Ok::<(), strata_topology::TopologyError>(())
//! ```
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod arbiter;
mod error;
mod fairness;
mod owner;
mod permit;
mod request;
mod slots;
mod stats;

pub use arbiter::ResourceArbiter;
pub use error::{AdmissionError, OwnerKind};
pub use owner::{Owner, OwnerToken};
pub use permit::ResourcePermit;
pub use request::{AdmissionRequest, WaitPolicy};
pub use stats::AdmissionStats;
