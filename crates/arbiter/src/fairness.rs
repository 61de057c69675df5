//! The slow path: a FIFO queue of waiting requests behind one mutex.
//!
//! Admission rule: a queued request is granted when it is compatible with every held
//! permit and with every *older* request still waiting that it overlaps. An older request
//! blocked on CPU 0 therefore never holds back a newer one for CPU 1, while a newer request
//! that overlaps an older one queues behind it, so neither a stream of small requests nor
//! a stream of disjoint ones can starve a large or exclusive request.
//!
//! The fast path (see `arbiter.rs`) obeys the same rule without the mutex: every CPU that
//! some waiter wants carries the `WAITING` bit in its slot, and an exclusive waiter closes
//! the gate, so a fast-path claim succeeds only when no older waiter overlaps it.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use parking_lot::Condvar;
use strata_topology::CpuSet;

use crate::slots::{HELD, LEAD, SlotTable, WAITING};

/// Gate: no exclusive request is waiting or held; the fast path may run.
pub(crate) const GATE_OPEN: u32 = 0;
/// Gate: an exclusive request waits; every new request must queue.
pub(crate) const GATE_EXCLUSIVE_WAITING: u32 = 1;
/// Gate: an exclusive permit is held.
pub(crate) const GATE_EXCLUSIVE_HELD: u32 = 2;

/// What a queued request claims.
pub(crate) enum Claim {
    Cpus(CpuSet),
    Exclusive,
}

/// The wake-up line of one waiting thread.
pub(crate) struct WaitSignal {
    /// Set (under the queue mutex) when the request has been granted.
    pub(crate) granted: AtomicBool,
    pub(crate) condvar: Condvar,
}

struct Waiter {
    ticket: u64,
    claim: Claim,
    signal: Arc<WaitSignal>,
}

/// Counters kept under the queue mutex.
#[derive(Default)]
pub(crate) struct SlowStats {
    pub(crate) immediate_grants: u64,
    pub(crate) waited_grants: u64,
    pub(crate) waits: u64,
    pub(crate) timeouts: u64,
    pub(crate) total_wait: Duration,
}

/// Everything behind the arbiter's mutex.
pub(crate) struct WaitQueue {
    entries: VecDeque<Waiter>,
    next_ticket: u64,
    /// Waiting requests per CPU id (index), mirrored as the `WAITING` slot bit.
    waiting_per_cpu: Vec<u32>,
    exclusive_waiting: usize,
    pub(crate) exclusive_held: bool,
    pub(crate) stats: SlowStats,
}

impl WaitQueue {
    pub(crate) const fn new() -> WaitQueue {
        WaitQueue {
            entries: VecDeque::new(),
            next_ticket: 0,
            waiting_per_cpu: Vec::new(),
            exclusive_waiting: 0,
            exclusive_held: false,
            stats: SlowStats {
                immediate_grants: 0,
                waited_grants: 0,
                waits: 0,
                timeouts: 0,
                total_wait: Duration::ZERO,
            },
        }
    }

    /// Requests queued and not yet granted.
    pub(crate) fn waiting(&self) -> usize {
        self.entries.iter().filter(|w| !w.signal.granted.load(Ordering::Relaxed)).count()
    }

    /// Appends a request, marks what it wants, and returns its ticket and signal.
    pub(crate) fn enqueue(&mut self, claim: Claim, slots: &SlotTable, gate: &AtomicU32) -> (u64, Arc<WaitSignal>) {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        let signal = Arc::new(WaitSignal { granted: AtomicBool::new(false), condvar: Condvar::new() });
        match &claim {
            Claim::Cpus(set) => self.mark_waiting(set, slots),
            Claim::Exclusive => {
                self.exclusive_waiting += 1;
                self.publish_gate(gate);
            }
        }
        self.entries.push_back(Waiter { ticket, claim, signal: Arc::clone(&signal) });
        (ticket, signal)
    }

    /// Removes the entry with `ticket` (granted or abandoned). An abandoned entry also
    /// gives up its waiting marks, which may unblock younger requests: the caller runs
    /// [`WaitQueue::admit`] afterwards.
    pub(crate) fn remove(&mut self, ticket: u64, slots: &SlotTable, gate: &AtomicU32) {
        let Some(index) = self.entries.iter().position(|w| w.ticket == ticket) else {
            return;
        };
        // INVARIANT: `index` was just found in `entries`.
        let Some(waiter) = self.entries.remove(index) else {
            return;
        };
        if !waiter.signal.granted.load(Ordering::Relaxed) {
            self.unmark_waiting(&waiter.claim, slots, gate);
        }
    }

    /// Grants every queued request the admission rule allows, in FIFO order.
    pub(crate) fn admit(&mut self, slots: &SlotTable, gate: &AtomicU32) {
        if self.exclusive_held {
            return;
        }
        // Indices of older requests that stay blocked; a younger request overlapping any
        // of them must wait behind it.
        let mut blocked: Vec<usize> = Vec::new();
        for index in 0..self.entries.len() {
            let waiter = &self.entries[index];
            if waiter.signal.granted.load(Ordering::Relaxed) {
                continue;
            }
            match &waiter.claim {
                Claim::Exclusive => {
                    if blocked.is_empty() && !any_held(slots) {
                        self.exclusive_held = true;
                        self.exclusive_waiting -= 1;
                        self.publish_gate(gate);
                        self.grant(index);
                    }
                    // Granted or not, everything younger conflicts with it.
                    return;
                }
                Claim::Cpus(set) => {
                    let behind_older = blocked.iter().any(|&b| match &self.entries[b].claim {
                        Claim::Cpus(older) => older.overlaps(set),
                        Claim::Exclusive => true,
                    });
                    if !behind_older && claim_for_waiter(slots, set) {
                        let set = set.clone();
                        self.unmark_waiting(&Claim::Cpus(set), slots, gate);
                        self.grant(index);
                    } else {
                        blocked.push(index);
                    }
                }
            }
        }
    }

    fn grant(&mut self, index: usize) {
        let signal = &self.entries[index].signal;
        signal.granted.store(true, Ordering::Relaxed);
        signal.condvar.notify_one();
    }

    /// Publishes the gate value implied by the exclusive counters.
    pub(crate) fn publish_gate(&self, gate: &AtomicU32) {
        let value = if self.exclusive_held {
            GATE_EXCLUSIVE_HELD
        } else if self.exclusive_waiting > 0 {
            GATE_EXCLUSIVE_WAITING
        } else {
            GATE_OPEN
        };
        gate.store(value, Ordering::SeqCst);
    }

    fn mark_waiting(&mut self, set: &CpuSet, slots: &SlotTable) {
        let needed = set.last().index() + 1;
        if self.waiting_per_cpu.len() < needed {
            self.waiting_per_cpu.resize(needed, 0);
        }
        for cpu in set.iter() {
            let count = &mut self.waiting_per_cpu[cpu.index()];
            *count += 1;
            if *count == 1 {
                slots.slot(cpu).state.fetch_or(WAITING, Ordering::SeqCst);
            }
        }
    }

    fn unmark_waiting(&mut self, claim: &Claim, slots: &SlotTable, gate: &AtomicU32) {
        match claim {
            Claim::Cpus(set) => {
                for cpu in set.iter() {
                    // INVARIANT: `mark_waiting` grew the table to cover this set.
                    let count = &mut self.waiting_per_cpu[cpu.index()];
                    *count -= 1;
                    if *count == 0 {
                        slots.slot(cpu).state.fetch_and(!WAITING, Ordering::SeqCst);
                    }
                }
            }
            Claim::Exclusive => {
                self.exclusive_waiting -= 1;
                self.publish_gate(gate);
            }
        }
    }
}

/// Whether any slot is held (an exclusive request must see none).
pub(crate) fn any_held(slots: &SlotTable) -> bool {
    let mut held = false;
    slots.for_each_allocated(|slot| held |= slot.state.load(Ordering::SeqCst) & HELD != 0);
    held
}

/// Claims every CPU of `set` for a queued request, tolerating `WAITING` bits (they belong
/// to this request or to younger ones). All or nothing.
fn claim_for_waiter(slots: &SlotTable, set: &CpuSet) -> bool {
    for (claimed, cpu) in set.iter().enumerate() {
        let bits = if claimed == 0 { HELD | LEAD } else { HELD };
        let state = &slots.slot(cpu).state;
        let mut current = state.load(Ordering::SeqCst);
        loop {
            if current & HELD != 0 {
                release_prefix(slots, set, claimed);
                return false;
            }
            match state.compare_exchange_weak(current, current | bits, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => break,
                Err(actual) => current = actual,
            }
        }
    }
    true
}

/// Releases the first `count` CPUs of `set`; returns whether any of them had a waiter.
pub(crate) fn release_prefix(slots: &SlotTable, set: &CpuSet, count: usize) -> bool {
    let mut had_waiter = false;
    for cpu in set.iter().take(count) {
        let previous = slots.slot(cpu).state.fetch_and(!(HELD | LEAD), Ordering::SeqCst);
        had_waiter |= previous & WAITING != 0;
    }
    had_waiter
}
