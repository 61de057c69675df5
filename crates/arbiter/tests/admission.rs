//! Admission behaviour with real threads; every wait is bounded.

mod common;

use std::sync::mpsc::channel;
use std::time::Duration;

use common::{PATIENCE, cpus, expect_msg, expect_silence};
use strata_arbiter::{AdmissionError, AdmissionRequest, ResourceArbiter};
use strata_topology::{CpuId, CpuSet, TopologyError};

#[test]
fn disjoint_sets_coexist() {
    let arbiter = ResourceArbiter::new();
    let held = arbiter.acquire(&cpus("0-1")).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            let other = arbiter.acquire_timeout(&cpus("2-3,8"), PATIENCE).unwrap();
            assert_eq!(other.cpu_ids(), [CpuId(2), CpuId(3), CpuId(8)]);
            assert!(other.covers(CpuId(8)) && !other.covers(CpuId(0)));
            assert_eq!(arbiter.stats().holders, 2);
        })
        .join()
        .unwrap();
    });
    assert_eq!(held.cpu_ids(), [CpuId(0), CpuId(1)]);
    let stats = arbiter.stats();
    assert_eq!(stats.grants, 2);
    assert_eq!(stats.immediate_grants, 2);
    assert_eq!(stats.waits, 0);
    assert_eq!(stats.holders, 1);
}

#[test]
fn overlapping_request_waits_for_release() {
    let arbiter = ResourceArbiter::new();
    let held = arbiter.acquire(&cpus("0-1")).unwrap();
    let (granted_tx, granted_rx) = channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            let permit = arbiter.acquire_timeout(&cpus("1-2"), PATIENCE).unwrap();
            granted_tx.send(()).unwrap();
            drop(permit);
        });
        wait_until(|| arbiter.stats().waiting == 1);
        expect_silence(&granted_rx, "overlapping request admitted while 1 is held");
        drop(held);
        expect_msg(&granted_rx, "overlapping request after release");
    });
    let stats = arbiter.stats();
    assert_eq!(stats.grants, 2);
    assert_eq!(stats.waits, 1);
    assert_eq!(stats.immediate_grants, 1);
    assert!(stats.total_wait >= Duration::from_millis(50), "{stats:?}");
    assert_eq!((stats.holders, stats.waiting), (0, 0));
}

#[test]
fn younger_request_overlapping_an_older_waiter_queues_behind_it() {
    // CPU 1 is free, but an older waiter wants {0,1}: a younger request for {1} must not
    // overtake it.
    let arbiter = ResourceArbiter::new();
    let held = arbiter.acquire(&cpus("0")).unwrap();
    let (order_tx, order_rx) = channel();
    std::thread::scope(|s| {
        let older_tx = order_tx.clone();
        let arbiter = &arbiter;
        s.spawn(move || {
            let permit = arbiter.acquire_timeout(&cpus("0-1"), PATIENCE).unwrap();
            older_tx.send("older").unwrap();
            std::thread::sleep(Duration::from_millis(20));
            drop(permit);
        });
        wait_until(|| arbiter.stats().waiting == 1);
        s.spawn(move || {
            assert!(matches!(arbiter.try_acquire(&cpus("1")), Err(AdmissionError::WouldBlock { .. })));
            let permit = arbiter.acquire_timeout(&cpus("1"), PATIENCE).unwrap();
            order_tx.send("younger").unwrap();
            drop(permit);
        });
        expect_silence(&order_rx, "younger request overtook the older waiter");
        drop(held);
        assert_eq!(expect_msg(&order_rx, "first grant"), "older");
        assert_eq!(expect_msg(&order_rx, "second grant"), "younger");
    });
}

#[test]
fn older_waiter_does_not_hold_back_disjoint_younger_request() {
    let arbiter = ResourceArbiter::new();
    let held = arbiter.acquire(&cpus("0")).unwrap();
    let (granted_tx, granted_rx) = channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            let permit = arbiter.acquire_timeout(&cpus("0"), PATIENCE).unwrap();
            granted_tx.send(()).unwrap();
            drop(permit);
        });
        wait_until(|| arbiter.stats().waiting == 1);
        s.spawn(|| {
            // Immediately admissible: the only waiter wants CPU 0.
            let permit = arbiter.try_acquire(&cpus("1-3")).unwrap();
            assert_eq!(arbiter.stats().waiting, 1);
            drop(permit);
        })
        .join()
        .unwrap();
        expect_silence(&granted_rx, "waiter for 0 admitted while 0 is held");
        drop(held);
        expect_msg(&granted_rx, "waiter for 0 after release");
    });
}

#[test]
fn exclusive_waits_for_sets_and_blocks_younger_sets() {
    let arbiter = ResourceArbiter::new();
    let held = arbiter.acquire(&cpus("0")).unwrap();
    assert!(matches!(
        std::thread::scope(|s| s.spawn(|| arbiter.try_acquire(&AdmissionRequest::Exclusive).map(drop)).join().unwrap()),
        Err(AdmissionError::WouldBlock { .. })
    ));
    let (exclusive_tx, exclusive_rx) = channel();
    let (release_tx, release_rx) = channel::<()>();
    std::thread::scope(|s| {
        let arbiter_ref = &arbiter;
        s.spawn(move || {
            let arbiter = arbiter_ref;
            let permit = arbiter.acquire_timeout(&AdmissionRequest::Exclusive, PATIENCE).unwrap();
            assert!(permit.is_exclusive() && permit.cpu_ids().is_empty());
            assert!(permit.covers(CpuId(1234)));
            exclusive_tx.send(()).unwrap();
            expect_msg(&release_rx, "release order for the exclusive permit");
        });
        wait_until(|| arbiter.stats().waiting == 1);
        // A younger set request, on a free CPU, queues behind the exclusive waiter.
        s.spawn(|| {
            let younger = arbiter.acquire_timeout(&cpus("5"), Duration::from_millis(30));
            assert!(matches!(younger, Err(AdmissionError::TimedOut { .. })));
            assert!(matches!(arbiter.try_acquire(&cpus("7")), Err(AdmissionError::WouldBlock { .. })));
        })
        .join()
        .unwrap();
        expect_silence(&exclusive_rx, "exclusive admitted while a set is held");
        drop(held);
        expect_msg(&exclusive_rx, "exclusive after the set was released");
        // While exclusive is held, nothing else is admitted.
        s.spawn(|| {
            assert!(matches!(arbiter.try_acquire(&cpus("9")), Err(AdmissionError::WouldBlock { .. })));
            let (tx, rx) = channel();
            std::thread::scope(|inner| {
                inner.spawn(|| {
                    let permit = arbiter.acquire_timeout(&cpus("9"), PATIENCE).unwrap();
                    tx.send(()).unwrap();
                    drop(permit);
                });
                expect_silence(&rx, "set admitted during an exclusive permit");
                release_tx.send(()).unwrap();
                expect_msg(&rx, "set after the exclusive permit");
            });
        })
        .join()
        .unwrap();
    });
    let stats = arbiter.stats();
    assert_eq!((stats.holders, stats.waiting), (0, 0));
    assert_eq!(stats.timeouts, 1);
}

#[test]
fn stream_of_small_requests_cannot_starve_exclusive() {
    let arbiter = ResourceArbiter::new();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        for cpu in 0..4u32 {
            let (arbiter, stop) = (&arbiter, &stop);
            s.spawn(move || {
                let request = AdmissionRequest::cpu(CpuId(cpu));
                let mut rounds = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let permit = arbiter.acquire_timeout(&request, PATIENCE).unwrap();
                    std::hint::black_box(&permit);
                    drop(permit);
                    rounds += 1;
                }
                rounds
            });
        }
        std::thread::sleep(Duration::from_millis(20));
        let exclusive = arbiter.acquire_timeout(&AdmissionRequest::Exclusive, PATIENCE);
        assert!(exclusive.is_ok(), "exclusive starved: {exclusive:?}");
        assert_eq!(arbiter.stats().holders, 1);
        drop(exclusive);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    assert_eq!(arbiter.stats().holders, 0);
}

#[test]
fn reentrant_requests_are_refused_not_deadlocked() {
    let arbiter = ResourceArbiter::new();
    let permit = arbiter.acquire(&cpus("0")).unwrap();
    for request in [cpus("0"), cpus("1"), AdmissionRequest::Exclusive] {
        assert_eq!(
            arbiter.acquire(&request).map(drop),
            Err(AdmissionError::ReEntrant {
                op: "ResourceArbiter::acquire",
                owner: strata_arbiter::OwnerKind::CurrentThread,
            })
        );
        assert!(matches!(arbiter.try_acquire(&request), Err(AdmissionError::ReEntrant { .. })));
        assert!(matches!(arbiter.acquire_timeout(&request, PATIENCE), Err(AdmissionError::ReEntrant { .. })));
    }
    // Another arbiter is another resource: no conflict.
    let other = ResourceArbiter::new();
    let elsewhere = other.acquire(&cpus("0")).unwrap();
    drop(elsewhere);
    drop(permit);
    // Once released, the thread may ask again.
    let again = arbiter.try_acquire(&cpus("1")).unwrap();
    drop(again);
    let exclusive = arbiter.acquire(&AdmissionRequest::Exclusive).unwrap();
    assert!(matches!(arbiter.acquire(&cpus("3")), Err(AdmissionError::ReEntrant { .. })));
    drop(exclusive);
    assert_eq!(arbiter.stats().holders, 0);
}

#[test]
fn zero_timeout_polls_without_waiting() {
    let arbiter = ResourceArbiter::new();
    let free = arbiter.acquire_timeout(&cpus("0"), Duration::ZERO).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            assert_eq!(
                arbiter.acquire_timeout(&cpus("0"), Duration::ZERO).map(drop),
                Err(AdmissionError::TimedOut { op: "ResourceArbiter::acquire_timeout", timeout: Duration::ZERO })
            );
            assert!(matches!(
                arbiter.acquire_timeout(&AdmissionRequest::Exclusive, Duration::ZERO),
                Err(AdmissionError::TimedOut { .. })
            ));
        })
        .join()
        .unwrap();
    });
    drop(free);
    let stats = arbiter.stats();
    // Polls are neither waits nor timeouts of a wait.
    assert_eq!((stats.waits, stats.timeouts, stats.waiting), (0, 0, 0));
    let exclusive = arbiter.acquire_timeout(&AdmissionRequest::Exclusive, Duration::ZERO).unwrap();
    drop(exclusive);
}

#[test]
fn timeout_expires_and_leaving_the_queue_unblocks_younger_requests() {
    let arbiter = ResourceArbiter::new();
    let held = arbiter.acquire(&cpus("0")).unwrap();
    let (younger_tx, younger_rx) = channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            let older = arbiter.acquire_timeout(&cpus("0-1"), Duration::from_millis(500));
            assert_eq!(
                older.map(drop),
                Err(AdmissionError::TimedOut {
                    op: "ResourceArbiter::acquire_timeout",
                    timeout: Duration::from_millis(500),
                })
            );
        });
        wait_until(|| arbiter.stats().waiting == 1);
        s.spawn(|| {
            // Blocked behind the older waiter (which overlaps on 1) until it gives up,
            // even though CPU 0 stays held throughout.
            let permit = arbiter.acquire_timeout(&cpus("1"), PATIENCE).unwrap();
            younger_tx.send(()).unwrap();
            drop(permit);
        });
        expect_silence(&younger_rx, "younger overtook the older waiter");
        expect_msg(&younger_rx, "younger after the older waiter timed out");
    });
    drop(held);
    let stats = arbiter.stats();
    assert_eq!(stats.timeouts, 1);
    assert_eq!(stats.waits, 2);
    assert_eq!((stats.holders, stats.waiting), (0, 0));
}

#[test]
fn huge_timeout_waits_like_acquire() {
    let arbiter = ResourceArbiter::new();
    let held = arbiter.acquire(&cpus("2")).unwrap();
    let (tx, rx) = channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            let permit = arbiter.acquire_timeout(&cpus("2"), Duration::MAX).unwrap();
            tx.send(()).unwrap();
            drop(permit);
        });
        expect_silence(&rx, "granted while held");
        drop(held);
        expect_msg(&rx, "granted after release");
    });
}

#[test]
fn invalid_requests_are_typed_errors() {
    // There is no empty request: the set type refuses to exist empty.
    assert!(matches!(CpuSet::new(std::iter::empty()), Err(TopologyError::EmptyCpuSet { .. })));
    let arbiter = ResourceArbiter::new();
    let too_large = AdmissionRequest::Cpus(CpuSet::new([CpuId(3), CpuId(70_000)]).unwrap());
    let error = arbiter.acquire(&too_large).unwrap_err();
    assert_eq!(error, AdmissionError::CpuIdTooLarge { op: "ResourceArbiter::acquire", cpu: CpuId(70_000) });
    assert!(error.to_string().contains("ResourceArbiter::acquire"));
    assert!(error.to_string().contains("70000"));
    // Nothing was claimed, not even CPU 3.
    assert_eq!(arbiter.stats(), Default::default());
    arbiter.try_acquire(&cpus("3")).unwrap().release();
    // The largest valid id works.
    let max = arbiter.try_acquire(&AdmissionRequest::cpu(CpuId::MAX)).unwrap();
    drop(max);
}

#[test]
fn global_arbiter_is_one_instance() {
    let a = ResourceArbiter::global();
    let b = ResourceArbiter::global();
    assert!(std::ptr::eq(a, b));
    // Use a CPU id no other test of this binary touches through the global arbiter.
    let permit = a.acquire(&cpus("4000")).unwrap();
    assert!(matches!(b.try_acquire(&cpus("4001")), Err(AdmissionError::ReEntrant { .. })));
    drop(permit);
}

#[test]
fn error_messages_name_the_operation_and_the_problem() {
    let reentrant = AdmissionError::ReEntrant { op: "ResourceArbiter::admit", owner: strata_arbiter::OwnerKind::Token };
    let text = reentrant.to_string();
    assert!(text.starts_with("ResourceArbiter::admit: "), "{text}");
    assert!(text.contains("owner token"), "{text}");
    let timed_out =
        AdmissionError::TimedOut { op: "ResourceArbiter::acquire_timeout", timeout: Duration::from_millis(5) };
    assert!(timed_out.to_string().contains("5ms"));
    let error: Box<dyn std::error::Error> = Box::new(timed_out);
    assert!(error.source().is_none());
}

/// Polls `condition` until true (bounded by `PATIENCE`).
fn wait_until(condition: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + PATIENCE;
    while !condition() {
        assert!(std::time::Instant::now() < deadline, "condition not reached within {PATIENCE:?}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn blocking_is_transitive_through_older_waiters() {
    // Held: {0}. Then, in order: A wants {0,1}, B {1,2}, C {3}, D {2}.
    // C overlaps nobody: admitted at once. A waits for 0; B waits behind A (on 1); D waits
    // behind B (on 2) although CPU 2 is free. Releases then hand on A -> B -> D.
    let arbiter = ResourceArbiter::new();
    let held = arbiter.acquire(&cpus("0")).unwrap();
    let (granted_tx, granted_rx) = channel();
    let mut release = Vec::new();
    std::thread::scope(|s| {
        for (name, list) in [("A", "0-1"), ("B", "1-2"), ("C", "3"), ("D", "2")] {
            let (release_tx, release_rx) = channel::<()>();
            release.push(release_tx);
            let (arbiter, granted_tx) = (&arbiter, granted_tx.clone());
            let waiting_before = arbiter.stats().waiting;
            s.spawn(move || {
                let permit = arbiter.acquire_timeout(&cpus(list), PATIENCE).unwrap();
                granted_tx.send(name).unwrap();
                expect_msg(&release_rx, "release order");
                drop(permit);
            });
            // Enqueue strictly one after another (C is admitted without queueing).
            if name == "C" {
                assert_eq!(expect_msg(&granted_rx, "C"), "C");
            } else {
                wait_until(|| arbiter.stats().waiting == waiting_before + 1);
            }
        }
        expect_silence(&granted_rx, "a waiter overtook the FIFO order");
        drop(held);
        assert_eq!(expect_msg(&granted_rx, "after {0} released"), "A");
        expect_silence(&granted_rx, "B or D admitted while A holds 1");
        release[0].send(()).unwrap();
        assert_eq!(expect_msg(&granted_rx, "after A released"), "B");
        expect_silence(&granted_rx, "D admitted while B holds 2");
        release[1].send(()).unwrap();
        assert_eq!(expect_msg(&granted_rx, "after B released"), "D");
        release[2].send(()).unwrap();
        release[3].send(()).unwrap();
    });
    let stats = arbiter.stats();
    assert_eq!((stats.grants, stats.immediate_grants, stats.waits), (5, 2, 3));
}
