//! The arbiter: validation, re-entrancy, the lock-free fast path, and the queued slow path.

use std::fmt;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use strata_topology::CpuSet;

use crate::error::{AdmissionError, OwnerKind};
use crate::fairness::{Claim, GATE_OPEN, WaitQueue, release_prefix};
use crate::owner::{self, Owner};
use crate::permit::{Held, ResourcePermit};
use crate::request::{AdmissionRequest, WaitPolicy};
use crate::slots::{HELD, LEAD, SlotTable, WAITING};
use crate::stats::AdmissionStats;

/// The gate word alone on its cache line: every fast path reads it, the slow path rarely
/// writes it, and it must not share a line with the mutex that contended callers write.
#[repr(align(64))]
struct GateLine(AtomicU32);

static NEXT_ARBITER_ID: AtomicU64 = AtomicU64::new(1);

/// Grants [`ResourcePermit`]s for CPU sets, or for the whole machine.
///
/// Two requests conflict when their CPU sets overlap or either is
/// [`AdmissionRequest::Exclusive`]. A request is admitted when it conflicts with no held
/// permit and with no older request still waiting; see the crate documentation for the
/// full rule and its costs.
///
/// Each owner (the calling thread, or an [`crate::OwnerToken`]) holds at most one permit
/// per arbiter; asking again while holding one is refused with
/// [`AdmissionError::ReEntrant`].
pub struct ResourceArbiter {
    id: u64,
    gate: GateLine,
    slots: SlotTable,
    queue: Mutex<WaitQueue>,
}

/// When a queued request gives up.
#[derive(Clone, Copy)]
enum Deadline {
    Now,
    At(Instant),
    Never,
}

impl ResourceArbiter {
    /// An independent arbiter: its permits never conflict with another arbiter's.
    pub fn new() -> ResourceArbiter {
        ResourceArbiter {
            id: NEXT_ARBITER_ID.fetch_add(1, Ordering::Relaxed),
            gate: GateLine(AtomicU32::new(GATE_OPEN)),
            slots: SlotTable::new(),
            queue: Mutex::new(WaitQueue::new()),
        }
    }

    /// The process-wide arbiter, shared by every engine that does not bring its own.
    pub fn global() -> &'static ResourceArbiter {
        static GLOBAL: OnceLock<ResourceArbiter> = OnceLock::new();
        GLOBAL.get_or_init(ResourceArbiter::new)
    }

    /// Waits until `request` is admitted, on behalf of the calling thread.
    ///
    /// Errors: [`AdmissionError::ReEntrant`] if the thread already holds a permit of this
    /// arbiter; [`AdmissionError::CpuIdTooLarge`] for ids above `CpuId::MAX`.
    #[inline]
    pub fn acquire(&self, request: &AdmissionRequest) -> Result<ResourcePermit<'_>, AdmissionError> {
        self.admit_as("ResourceArbiter::acquire", request, Owner::CurrentThread, WaitPolicy::Indefinitely)
    }

    /// Admits `request` only if that needs no waiting, else [`AdmissionError::WouldBlock`].
    ///
    /// A request that overlaps an older waiting request is refused even if its CPUs are
    /// free at this instant (the waiter comes first). Under concurrent admission of
    /// overlapping requests, a refusal may reflect a claim that was being rolled back.
    #[inline]
    pub fn try_acquire(&self, request: &AdmissionRequest) -> Result<ResourcePermit<'_>, AdmissionError> {
        self.admit_as("ResourceArbiter::try_acquire", request, Owner::CurrentThread, WaitPolicy::NoWait)
    }

    /// Waits at most `timeout` for `request`, else [`AdmissionError::TimedOut`].
    ///
    /// A zero timeout never waits (see [`WaitPolicy::Timeout`]).
    #[inline]
    pub fn acquire_timeout(
        &self,
        request: &AdmissionRequest,
        timeout: Duration,
    ) -> Result<ResourcePermit<'_>, AdmissionError> {
        self.admit_as("ResourceArbiter::acquire_timeout", request, Owner::CurrentThread, WaitPolicy::Timeout(timeout))
    }

    /// The general entry point: any owner, any wait policy.
    ///
    /// ```
    /// use std::time::Duration;
    /// use strata_arbiter::{AdmissionError, AdmissionRequest, Owner, OwnerToken, ResourceArbiter, WaitPolicy};
    /// use strata_topology::CpuId;
    ///
    /// let arbiter = ResourceArbiter::new();
    /// let token = OwnerToken::new();
    /// let request = AdmissionRequest::cpu(CpuId(0));
    /// let permit = arbiter.admit(&request, Owner::Token(&token), WaitPolicy::Indefinitely)?;
    /// // A child task handed the token is refused at once instead of waiting forever on
    /// // CPUs its own parent holds.
    /// let child = token.clone();
    /// let again = std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         let wait = WaitPolicy::Timeout(Duration::from_secs(5));
    ///         arbiter.admit(&request, Owner::Token(&child), wait).map(drop)
    ///     })
    ///     .join()
    /// })
    /// .expect("child thread panicked");
    /// assert!(matches!(again, Err(AdmissionError::ReEntrant { .. })));
    /// drop(permit);
    /// # Ok::<(), AdmissionError>(())
    /// ```
    #[inline]
    pub fn admit<'a>(
        &'a self,
        request: &AdmissionRequest,
        owner: Owner<'a>,
        wait: WaitPolicy,
    ) -> Result<ResourcePermit<'a>, AdmissionError> {
        self.admit_as("ResourceArbiter::admit", request, owner, wait)
    }

    /// A snapshot of the counters. Fields are read one after another, so a snapshot taken
    /// while other threads are admitting may mix moments.
    pub fn stats(&self) -> AdmissionStats {
        let mut fast_grants = 0u64;
        let mut holders = 0usize;
        self.slots.for_each_allocated(|slot| {
            fast_grants += slot.fast_grants.load(Ordering::Relaxed);
            if slot.state.load(Ordering::SeqCst) & (HELD | LEAD) == HELD | LEAD {
                holders += 1;
            }
        });
        let queue = self.queue.lock();
        let slow = &queue.stats;
        let immediate_grants = fast_grants + slow.immediate_grants;
        AdmissionStats {
            grants: immediate_grants + slow.waited_grants,
            immediate_grants,
            waits: slow.waits,
            timeouts: slow.timeouts,
            total_wait: slow.total_wait,
            holders: holders + usize::from(queue.exclusive_held),
            waiting: queue.waiting(),
        }
    }

    #[inline]
    fn admit_as<'a>(
        &'a self,
        op: &'static str,
        request: &AdmissionRequest,
        owner: Owner<'a>,
        wait: WaitPolicy,
    ) -> Result<ResourcePermit<'a>, AdmissionError> {
        request.validate(op)?;
        // A permit never leaves the thread that acquired it (`ResourcePermit` is !Send), so
        // the thread's record covers token-owned permits too: a thread never waits on a
        // permit it holds itself, whoever it holds it for.
        if !owner::thread_try_mark(self.id) {
            return Err(AdmissionError::ReEntrant { op, owner: OwnerKind::CurrentThread });
        }
        let token = match owner {
            Owner::CurrentThread => None,
            Owner::Token(token) => {
                if !token.try_mark(self.id) {
                    owner::thread_remove(self.id);
                    return Err(AdmissionError::ReEntrant { op, owner: OwnerKind::Token });
                }
                Some(token)
            }
        };
        match self.admit_unowned(op, request, wait) {
            Ok(()) => {
                let held = match request {
                    AdmissionRequest::Cpus(set) if set.len() == 1 => Held::Cpu(set.first()),
                    AdmissionRequest::Cpus(set) => Held::Cpus(set.clone()),
                    AdmissionRequest::Exclusive => Held::Exclusive,
                };
                Ok(ResourcePermit::new(self, held, token))
            }
            Err(error) => {
                owner::thread_remove(self.id);
                if let Some(token) = token {
                    token.unmark(self.id);
                }
                Err(error)
            }
        }
    }

    /// Admission proper, once validation and re-entrancy checks have passed.
    fn admit_unowned(
        &self,
        op: &'static str,
        request: &AdmissionRequest,
        wait: WaitPolicy,
    ) -> Result<(), AdmissionError> {
        let refusal = match wait {
            WaitPolicy::Timeout(timeout) => AdmissionError::TimedOut { op, timeout },
            _ => AdmissionError::WouldBlock { op },
        };
        let deadline = match wait {
            WaitPolicy::Indefinitely => Deadline::Never,
            WaitPolicy::NoWait => Deadline::Now,
            WaitPolicy::Timeout(Duration::ZERO) => Deadline::Now,
            WaitPolicy::Timeout(timeout) => match Instant::now().checked_add(timeout) {
                Some(at) => Deadline::At(at),
                None => Deadline::Never,
            },
        };
        match request {
            AdmissionRequest::Cpus(set) => match self.claim_fast(set) {
                Ok(()) => Ok(()),
                Err(must_admit) => {
                    if let Deadline::Now = deadline {
                        // The fast path already applied the admission rule; only a rolled
                        // back claim that a waiter saw needs the queue to look again.
                        if must_admit {
                            self.queue.lock().admit(&self.slots, &self.gate.0);
                        }
                        return Err(refusal);
                    }
                    self.wait_in_queue(Claim::Cpus(set.clone()), deadline, refusal)
                }
            },
            AdmissionRequest::Exclusive => self.wait_in_queue(Claim::Exclusive, deadline, refusal),
        }
    }

    /// Claims every CPU of `set` without the mutex. Succeeds only if each slot is entirely
    /// free (not held, no waiter) and no exclusive request waits or holds.
    ///
    /// On failure, returns whether the queue must run an admission pass because a claim
    /// was rolled back that a waiter may have observed.
    #[inline]
    fn claim_fast(&self, set: &CpuSet) -> Result<(), bool> {
        let gate = &self.gate.0;
        if gate.load(Ordering::SeqCst) != GATE_OPEN {
            return Err(false);
        }
        let lead = self.slots.slot(set.first());
        if lead.state.compare_exchange(0, HELD | LEAD, Ordering::SeqCst, Ordering::Relaxed).is_err() {
            return Err(false);
        }
        for (claimed, cpu) in set.iter().enumerate().skip(1) {
            let state = &self.slots.slot(cpu).state;
            if state.compare_exchange(0, HELD, Ordering::SeqCst, Ordering::Relaxed).is_err() {
                return Err(release_prefix(&self.slots, set, claimed));
            }
        }
        // An exclusive request closes the gate and then looks for held slots; we claimed
        // and then look at the gate. In the single SeqCst order one of us sees the other.
        if gate.load(Ordering::SeqCst) != GATE_OPEN {
            release_prefix(&self.slots, set, set.len());
            return Err(true);
        }
        // Only the holder of the lead slot writes this counter (see `CpuSlot`).
        let count = lead.fast_grants.load(Ordering::Relaxed);
        lead.fast_grants.store(count + 1, Ordering::Relaxed);
        Ok(())
    }

    fn wait_in_queue(&self, claim: Claim, deadline: Deadline, refusal: AdmissionError) -> Result<(), AdmissionError> {
        let (slots, gate) = (&self.slots, &self.gate.0);
        let mut queue = self.queue.lock();
        let (ticket, signal) = queue.enqueue(claim, slots, gate);
        queue.admit(slots, gate);
        if signal.granted.load(Ordering::Relaxed) {
            queue.remove(ticket, slots, gate);
            queue.stats.immediate_grants += 1;
            return Ok(());
        }
        if let Deadline::Now = deadline {
            queue.remove(ticket, slots, gate);
            queue.admit(slots, gate);
            return Err(refusal);
        }
        queue.stats.waits += 1;
        let started = Instant::now();
        loop {
            if signal.granted.load(Ordering::Relaxed) {
                break;
            }
            match deadline {
                Deadline::At(at) => {
                    if signal.condvar.wait_until(&mut queue, at).timed_out() {
                        break;
                    }
                }
                Deadline::Never | Deadline::Now => signal.condvar.wait(&mut queue),
            }
        }
        queue.stats.total_wait += started.elapsed();
        let granted = signal.granted.load(Ordering::Relaxed);
        queue.remove(ticket, slots, gate);
        if granted {
            queue.stats.waited_grants += 1;
            Ok(())
        } else {
            // Leaving the queue may unblock younger requests that overlapped this one.
            queue.admit(slots, gate);
            queue.stats.timeouts += 1;
            Err(refusal)
        }
    }

    /// Gives back what a permit held; called once per permit, from its `Drop`.
    #[inline]
    pub(crate) fn release(&self, held: &Held) {
        let had_waiter = match held {
            Held::Cpu(cpu) => {
                let previous = self.slots.slot(*cpu).state.fetch_and(!(HELD | LEAD), Ordering::SeqCst);
                previous & WAITING != 0
            }
            Held::Cpus(set) => release_prefix(&self.slots, set, set.len()),
            Held::Exclusive => {
                let mut queue = self.queue.lock();
                queue.exclusive_held = false;
                queue.publish_gate(&self.gate.0);
                queue.admit(&self.slots, &self.gate.0);
                return;
            }
        };
        // We cleared our slots and then read the gate; an exclusive request closes the
        // gate and then reads the slots: one of us sees the other.
        if had_waiter || self.gate.0.load(Ordering::SeqCst) != GATE_OPEN {
            self.queue.lock().admit(&self.slots, &self.gate.0);
        }
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }
}

impl Default for ResourceArbiter {
    fn default() -> Self {
        ResourceArbiter::new()
    }
}

impl fmt::Debug for ResourceArbiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceArbiter").field("id", &self.id).field("stats", &self.stats()).finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::channel;

    use strata_topology::CpuId;

    use super::*;

    const PATIENCE: Duration = Duration::from_secs(10);

    #[test]
    fn uncontended_requests_never_touch_the_queue_mutex() {
        // With the slow path's mutex held elsewhere, requests on free CPUs (single, sets,
        // try, timed) are still admitted and released: the fast path takes no global lock.
        let arbiter = ResourceArbiter::new();
        let (done_tx, done_rx) = channel();
        std::thread::scope(|s| {
            let guard = arbiter.queue.lock();
            let arbiter = &arbiter;
            s.spawn(move || {
                for cpu in 0..8 {
                    let single = AdmissionRequest::cpu(CpuId(cpu));
                    drop(arbiter.acquire_timeout(&single, PATIENCE).unwrap());
                    drop(arbiter.try_acquire(&single).unwrap());
                }
                let set = AdmissionRequest::Cpus(CpuSet::new([CpuId(3), CpuId(64), CpuId(9)]).unwrap());
                drop(arbiter.acquire(&set).unwrap());
                done_tx.send(()).unwrap();
            });
            let outcome = done_rx.recv_timeout(PATIENCE);
            drop(guard);
            assert!(outcome.is_ok(), "an uncontended request waited for the queue mutex");
        });
        assert_eq!(arbiter.stats().immediate_grants, 17);
    }

    #[test]
    fn a_rolled_back_claim_seen_by_a_waiter_is_handed_on() {
        // A waiter marks CPU 1 while a fast-path claimer holds it only transiently (its
        // claim of CPU 2 fails); the roll-back must admit the waiter.
        let arbiter = ResourceArbiter::new();
        let two = arbiter.acquire(&AdmissionRequest::cpu(CpuId(2))).unwrap();
        let set = CpuSet::new([CpuId(1), CpuId(2)]).unwrap();
        // Simulate the interleaving by hand: claim 1, then a waiter marks 1, then the
        // claim of 2 fails and everything is rolled back.
        let one = &arbiter.slots.slot(CpuId(1)).state;
        one.store(HELD | LEAD, Ordering::SeqCst);
        let (granted_tx, granted_rx) = channel();
        std::thread::scope(|s| {
            s.spawn(|| {
                let permit = arbiter.acquire_timeout(&AdmissionRequest::cpu(CpuId(1)), PATIENCE).unwrap();
                granted_tx.send(()).unwrap();
                drop(permit);
            });
            let deadline = Instant::now() + PATIENCE;
            while one.load(Ordering::SeqCst) & WAITING == 0 {
                assert!(Instant::now() < deadline);
                std::thread::yield_now();
            }
            assert!(granted_rx.try_recv().is_err());
            // Roll back exactly as `claim_fast` does when the second CAS fails.
            let had_waiter = release_prefix(&arbiter.slots, &set, 1);
            assert!(had_waiter);
            arbiter.queue.lock().admit(&arbiter.slots, &arbiter.gate.0);
            granted_rx.recv_timeout(PATIENCE).unwrap();
        });
        drop(two);
        assert_eq!(arbiter.stats().holders, 0);
    }
}
