//! Owner tokens, panics while holding, and recovery.

mod common;

use std::sync::mpsc::channel;
use std::time::Duration;

use common::{PATIENCE, cpus, expect_msg, expect_silence};
use strata_arbiter::{AdmissionError, AdmissionRequest, Owner, OwnerKind, OwnerToken, ResourceArbiter, WaitPolicy};

const BOUNDED: WaitPolicy = WaitPolicy::Timeout(PATIENCE);

#[test]
fn child_task_with_the_parents_token_is_refused_at_once() {
    let arbiter = ResourceArbiter::new();
    let token = OwnerToken::new();
    let parent = arbiter.admit(&cpus("0-1"), Owner::Token(&token), BOUNDED).unwrap();
    std::thread::scope(|s| {
        let child_token = token.clone();
        let arbiter = &arbiter;
        s.spawn(move || {
            for request in [cpus("0"), cpus("5"), AdmissionRequest::Exclusive] {
                let started = std::time::Instant::now();
                let refused = arbiter.admit(&request, Owner::Token(&child_token), BOUNDED);
                assert_eq!(
                    refused.map(drop),
                    Err(AdmissionError::ReEntrant { op: "ResourceArbiter::admit", owner: OwnerKind::Token })
                );
                // Refused without waiting for the parent's CPUs (bounded far below PATIENCE).
                assert!(started.elapsed() < PATIENCE / 2);
            }
            // The child as itself is another owner: disjoint CPUs are admitted.
            let own = arbiter.acquire_timeout(&cpus("5"), PATIENCE).unwrap();
            drop(own);
        })
        .join()
        .unwrap();
    });
    drop(parent);
    // Released: the token may be used again, from any thread.
    std::thread::scope(|s| {
        s.spawn(|| {
            let permit = arbiter.admit(&cpus("0"), Owner::Token(&token), BOUNDED).unwrap();
            drop(permit);
        })
        .join()
        .unwrap();
    });
}

#[test]
fn a_token_still_waiting_counts_as_asking() {
    // Two requests of one token in flight at once would let the second wait on the
    // first; the second is refused while the first is merely queued.
    let arbiter = ResourceArbiter::new();
    let blocker = arbiter.acquire(&cpus("0")).unwrap();
    let token = OwnerToken::new();
    let (done_tx, done_rx) = channel();
    std::thread::scope(|s| {
        let (arbiter_ref, first_token) = (&arbiter, token.clone());
        s.spawn(move || {
            let permit = arbiter_ref.admit(&cpus("0"), Owner::Token(&first_token), BOUNDED).unwrap();
            done_tx.send(()).unwrap();
            drop(permit);
        });
        let deadline = std::time::Instant::now() + PATIENCE;
        while arbiter.stats().waiting != 1 {
            assert!(std::time::Instant::now() < deadline);
            std::thread::sleep(Duration::from_millis(1));
        }
        s.spawn(|| {
            assert!(matches!(
                arbiter.admit(&cpus("7"), Owner::Token(&token), WaitPolicy::NoWait),
                Err(AdmissionError::ReEntrant { .. })
            ));
        })
        .join()
        .unwrap();
        drop(blocker);
        expect_msg(&done_rx, "token's first request after release");
    });
}

#[test]
fn a_failed_token_request_leaves_the_token_usable() {
    let arbiter = ResourceArbiter::new();
    let token = OwnerToken::new();
    let held = arbiter.acquire(&cpus("3")).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            assert!(matches!(
                arbiter.admit(&cpus("3"), Owner::Token(&token), WaitPolicy::NoWait),
                Err(AdmissionError::WouldBlock { .. })
            ));
            assert!(matches!(
                arbiter.admit(&cpus("3"), Owner::Token(&token), WaitPolicy::Timeout(Duration::from_millis(10))),
                Err(AdmissionError::TimedOut { .. })
            ));
            // The refusals did not leave the token marked as a holder.
            let permit = arbiter.admit(&cpus("4"), Owner::Token(&token), WaitPolicy::NoWait).unwrap();
            drop(permit);
        })
        .join()
        .unwrap();
    });
    drop(held);
}

#[test]
fn thread_holding_a_token_permit_cannot_ask_again_as_itself() {
    // The permit stays on this thread, so asking again as the thread could wait on it.
    let arbiter = ResourceArbiter::new();
    let token = OwnerToken::new();
    let permit = arbiter.admit(&cpus("0"), Owner::Token(&token), BOUNDED).unwrap();
    assert!(matches!(
        arbiter.acquire(&cpus("0")),
        Err(AdmissionError::ReEntrant { owner: OwnerKind::CurrentThread, .. })
    ));
    let another = OwnerToken::new();
    assert!(matches!(
        arbiter.admit(&cpus("1"), Owner::Token(&another), BOUNDED),
        Err(AdmissionError::ReEntrant { .. })
    ));
    drop(permit);
    assert_eq!(arbiter.stats().holders, 0);
}

#[test]
fn panic_while_holding_releases_the_permit() {
    let arbiter = ResourceArbiter::new();
    let other = ResourceArbiter::new();
    let token = OwnerToken::new();
    std::thread::scope(|s| {
        let outcome = s
            .spawn(|| {
                let _permit = arbiter.acquire(&cpus("0-3")).unwrap();
                let _token_permit = other.admit(&cpus("0"), Owner::Token(&token), BOUNDED).unwrap();
                assert_eq!((arbiter.stats().holders, other.stats().holders), (1, 1));
                panic!("kernel failed while holding CPUs 0-3");
            })
            .join();
        assert!(outcome.is_err(), "the thread was meant to panic");
    });
    assert_eq!((arbiter.stats().holders, other.stats().holders), (0, 0));
    let permit = arbiter.acquire_timeout(&cpus("2"), PATIENCE).unwrap();
    drop(permit);
    // The token was released with its permit.
    let permit = other.admit(&cpus("0"), Owner::Token(&token), WaitPolicy::NoWait).unwrap();
    drop(permit);
}

#[test]
fn panic_releases_to_a_waiter_and_the_arbiter_stays_usable() {
    // The permit of a panicking thread is handed to a waiter; the locks involved do not
    // poison, so every later request, fast or queued, still works.
    let arbiter = ResourceArbiter::new();
    let token = OwnerToken::new();
    let (held_tx, held_rx) = channel();
    let (go_tx, go_rx) = channel::<()>();
    let (waiter_tx, waiter_rx) = channel();
    std::thread::scope(|s| {
        let (arbiter_ref, panicking_token) = (&arbiter, token.clone());
        let panicking = s.spawn(move || {
            let _permit = arbiter_ref.admit(&cpus("0-1"), Owner::Token(&panicking_token), BOUNDED).unwrap();
            held_tx.send(()).unwrap();
            expect_msg(&go_rx, "order to panic");
            panic!("worker failed");
        });
        expect_msg(&held_rx, "panicking thread holds 0-1");
        s.spawn(|| {
            let permit = arbiter.acquire_timeout(&cpus("1-2"), PATIENCE).unwrap();
            waiter_tx.send(()).unwrap();
            drop(permit);
        });
        expect_silence(&waiter_rx, "waiter admitted while 0-1 held");
        go_tx.send(()).unwrap();
        assert!(panicking.join().is_err());
        expect_msg(&waiter_rx, "waiter after the holder panicked");
    });
    // The panicked token is no longer marked as a holder.
    let again = arbiter.admit(&cpus("0-1"), Owner::Token(&token), WaitPolicy::NoWait).unwrap();
    drop(again);
    let exclusive = arbiter.acquire_timeout(&AdmissionRequest::Exclusive, PATIENCE).unwrap();
    drop(exclusive);
    let stats = arbiter.stats();
    assert_eq!((stats.holders, stats.waiting), (0, 0));
    assert_eq!(stats.grants, 4);
}
