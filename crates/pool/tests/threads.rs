//! Real threads sharing one pool: no buffer is ever lent twice at once, the cap holds
//! at every observation, and the counters add up at the end. Every wait is bounded.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use strata_pool::{BufferLoan, BufferPool};

const THREADS: usize = 8;
const OPS: usize = 3000;
const WAIT: Duration = Duration::from_secs(60);

/// A small deterministic generator, one per thread.
struct XorShift(u64);
impl XorShift {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// One thread's work: acquire, stamp with a tag unique to (thread, op), hold a few,
/// verify the stamp before release. Returns the number of non-empty acquires.
fn worker(pool: BufferPool, thread: usize) -> u64 {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15 ^ (thread as u64 + 1));
    let mut held: Vec<(BufferLoan<i64>, i64)> = Vec::new();
    let mut acquires = 0;
    for op in 0..OPS {
        if held.len() < 4 && rng.below(3) != 0 {
            let len = rng.below(2048) as usize;
            let tag = (thread * OPS + op) as i64;
            let loan = if rng.below(2) == 0 {
                let mut l = pool.acquire_zeroed::<i64>(len).unwrap();
                assert!(l.iter().all(|&x| x == 0));
                l.fill(tag);
                l
            } else {
                pool.acquire_for_overwrite::<i64>(len).unwrap().write_with(|s| s.fill(tag)).0
            };
            acquires += u64::from(len > 0);
            held.push((loan, tag));
        } else if !held.is_empty() {
            let (loan, tag) = held.swap_remove(rng.below(held.len() as u64) as usize);
            assert!(loan.iter().all(|&x| x == tag), "a buffer was lent to two owners at once");
            drop(loan);
        }
    }
    for (loan, tag) in held {
        assert!(loan.iter().all(|&x| x == tag), "a buffer was lent to two owners at once");
    }
    acquires
}

#[test]
fn concurrent_loans_are_exclusive_and_accounted() {
    let cap = 40_000;
    let pool = BufferPool::new(cap);
    let stop = Arc::new(AtomicBool::new(false));
    let (monitor_tx, monitor_rx) = mpsc::channel();
    {
        let pool = pool.clone();
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut observations = 0u64;
            let mut worst = 0usize;
            while !stop.load(Ordering::Relaxed) {
                let s = pool.stats();
                worst = worst.max(s.retained_bytes);
                observations += 1;
                std::thread::yield_now();
            }
            let _ = monitor_tx.send((observations, worst));
        });
    }
    let (tx, rx) = mpsc::channel();
    for t in 0..THREADS {
        let pool = pool.clone();
        let tx = tx.clone();
        std::thread::spawn(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| worker(pool, t)));
            let _ = tx.send(result.map_err(|_| t));
        });
    }
    drop(tx);
    let mut acquires = 0;
    for _ in 0..THREADS {
        match rx.recv_timeout(WAIT) {
            Ok(Ok(n)) => acquires += n,
            Ok(Err(t)) => panic!("worker {t} failed"),
            Err(e) => panic!("a worker did not finish within {WAIT:?}: {e}"),
        }
    }
    stop.store(true, Ordering::Relaxed);
    let (observations, worst) = monitor_rx.recv_timeout(WAIT).expect("monitor finishes");
    assert!(observations > 0);
    assert!(worst <= cap, "retained {worst} bytes over the cap {cap}");
    let s = pool.stats();
    assert_eq!(s.outstanding_loans, 0);
    assert_eq!(s.hits + s.misses, acquires);
    assert!(s.retained_bytes <= cap);
    assert!(s.hits > 0, "with a shared cap some loans must be reused");
}
