//! A randomized 16-thread run checked by an independent occupancy table.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use common::PATIENCE;
use parking_lot::Mutex;
use strata_arbiter::{AdmissionError, AdmissionRequest, ResourceArbiter};
use strata_topology::{CpuId, CpuSet};

const THREADS: usize = 16;
const ROUNDS: usize = 1000;

/// Who holds what, according to the permits the test received: kept apart from the
/// arbiter, behind its own mutex, and checked on every grant.
struct OccupancyChecker {
    owner: Vec<Option<usize>>,
    exclusive: Option<usize>,
    holders: usize,
}

impl OccupancyChecker {
    fn new(cpus: u32) -> OccupancyChecker {
        OccupancyChecker { owner: vec![None; cpus as usize], exclusive: None, holders: 0 }
    }

    fn grant(&mut self, thread: usize, request: &AdmissionRequest) {
        assert_eq!(self.exclusive, None, "thread {thread} admitted during an exclusive permit");
        match request {
            AdmissionRequest::Exclusive => {
                assert_eq!(self.holders, 0, "exclusive admitted to {thread} beside {} holders", self.holders);
                self.exclusive = Some(thread);
            }
            AdmissionRequest::Cpus(set) => {
                for cpu in set.iter() {
                    let slot = &mut self.owner[cpu.index()];
                    assert_eq!(*slot, None, "CPU {cpu} granted to {thread} while held");
                    *slot = Some(thread);
                }
            }
        }
        self.holders += 1;
    }

    fn release(&mut self, thread: usize, request: &AdmissionRequest) {
        match request {
            AdmissionRequest::Exclusive => self.exclusive = None,
            AdmissionRequest::Cpus(set) => {
                for cpu in set.iter() {
                    assert_eq!(self.owner[cpu.index()], Some(thread));
                    self.owner[cpu.index()] = None;
                }
            }
        }
        self.holders -= 1;
    }
}

/// xorshift64*: a small deterministic generator, seeded per thread.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn random_request(rng: &mut Rng, cpus: u32) -> AdmissionRequest {
    if rng.below(20) == 0 {
        return AdmissionRequest::Exclusive;
    }
    let size = 1 + rng.below(4);
    let ids: Vec<CpuId> = (0..size).map(|_| CpuId(rng.below(cpus.into()) as u32)).collect();
    AdmissionRequest::Cpus(CpuSet::new(ids).unwrap())
}

#[test]
fn sixteen_threads_on_twelve_cpus_never_overlap_and_all_finish() {
    stress(12);
}

#[test]
fn sixteen_threads_on_four_cpus_never_overlap_and_all_finish() {
    stress(4);
}

/// 16 threads issue random requests over CPUs `0..cpus` (1 in 20 exclusive) with random
/// wait policies; every grant is checked against an independent occupancy table, every
/// blocking request must be admitted within `PATIENCE`, and the arbiter's counters must
/// match what the threads observed.
fn stress(cpus: u32) {
    let arbiter = ResourceArbiter::new();
    let checker = Mutex::new(OccupancyChecker::new(cpus));
    let granted = AtomicU64::new(0);
    let timed_out = AtomicU64::new(0);
    std::thread::scope(|s| {
        for thread in 0..THREADS {
            let (arbiter, checker, granted, timed_out) = (&arbiter, &checker, &granted, &timed_out);
            s.spawn(move || {
                let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ ((thread as u64 + 1) * 0x1234_5678));
                for _ in 0..ROUNDS {
                    let request = random_request(&mut rng, cpus);
                    let outcome = match rng.below(5) {
                        // Blocking (bounded): must always be admitted.
                        0..=2 => Ok(arbiter
                            .acquire_timeout(&request, PATIENCE)
                            .unwrap_or_else(|e| panic!("thread {thread}: {e}"))),
                        3 => arbiter.try_acquire(&request),
                        _ => arbiter.acquire_timeout(&request, Duration::from_micros(300)),
                    };
                    let permit = match outcome {
                        Ok(permit) => permit,
                        Err(AdmissionError::WouldBlock { .. }) => continue,
                        Err(AdmissionError::TimedOut { .. }) => {
                            timed_out.fetch_add(1, Ordering::Relaxed);
                            continue;
                        }
                        Err(other) => panic!("thread {thread}: unexpected {other}"),
                    };
                    granted.fetch_add(1, Ordering::Relaxed);
                    checker.lock().grant(thread, &request);
                    // Hold for a moment; sometimes check re-entrancy while holding.
                    match rng.below(4) {
                        0 => std::thread::yield_now(),
                        1 => std::thread::sleep(Duration::from_micros(rng.below(50))),
                        2 => assert!(matches!(
                            arbiter.try_acquire(&random_request(&mut rng, cpus)),
                            Err(AdmissionError::ReEntrant { .. })
                        )),
                        _ => {}
                    }
                    checker.lock().release(thread, &request);
                    drop(permit);
                }
            });
        }
    });
    let stats = arbiter.stats();
    assert_eq!(stats.grants, granted.load(Ordering::Relaxed));
    assert_eq!(stats.timeouts, timed_out.load(Ordering::Relaxed));
    assert!(stats.waits >= stats.timeouts);
    assert_eq!(stats.grants - stats.immediate_grants + stats.timeouts, stats.waits);
    assert_eq!((stats.holders, stats.waiting), (0, 0));
    let checker = checker.lock();
    assert_eq!(checker.holders, 0);
    // Everything is free again, for every CPU and for an exclusive request.
    arbiter.try_acquire(&AdmissionRequest::Exclusive).unwrap().release();
}
