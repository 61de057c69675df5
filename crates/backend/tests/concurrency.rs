//! Re-entry, panics inside install and sessions, and a bounded 16-thread stress test.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use common::{Rng, fixture_backend, naive_matmul};
use strata_backend::prelude::*;

fn tensor(data: Vec<f64>, shape: &[usize]) -> Tensor {
    Tensor::from(TypedTensor::from_vec(data, shape).unwrap())
}

fn f64s(t: &Tensor) -> Vec<f64> {
    t.as_typed::<f64>().unwrap().data().to_vec()
}

#[test]
fn reentry_from_a_session_or_install_is_a_typed_error() {
    let b = CpuBackend::with_threads(1).unwrap();
    let x = tensor(vec![1.0], &[1]);
    let inner = b.with_session(|_| b.add(&x, &x)).unwrap();
    assert_eq!(inner.unwrap_err().kind(), ErrorKind::RuntimeState);
    let nested = b.with_session(|_| b.with_session(|_| ())).unwrap();
    assert!(matches!(nested, Err(CpuBackendError::Placement { .. })));
    let from_install = b.install(|| b.add(&x, &x).map(|_| ())).unwrap();
    assert_eq!(from_install.unwrap_err().kind(), ErrorKind::RuntimeState);
    let install_in_session = b.with_session(|_| b.install(|| 1)).unwrap();
    assert!(install_in_session.is_err());
    // Other handles (clones, other placements) are refused the same way.
    let clone = b.clone();
    let r = b.with_session(|_| clone.sum(&x, &[0])).unwrap();
    assert_eq!(r.unwrap_err().kind(), ErrorKind::RuntimeState);
    // And after all that, the backend still works.
    assert_eq!(f64s(&b.add(&x, &x).unwrap()), vec![2.0]);
}

#[test]
fn a_panic_inside_install_or_a_session_leaves_the_backend_usable() {
    for b in [CpuBackend::with_threads(1).unwrap(), fixture_backend(1, 2, 1).0] {
        let x = tensor(vec![2.0], &[1]);
        let boom = catch_unwind(AssertUnwindSafe(|| b.install(|| panic!("inside install"))));
        assert!(boom.is_err());
        let boom = catch_unwind(AssertUnwindSafe(|| b.with_session(|_| panic!("inside session"))));
        assert!(boom.is_err());
        // Admission was released: a session and an op both run again.
        let sq = b.with_session(|s| s.mul(&x, &x)).unwrap().unwrap();
        assert_eq!(f64s(&sq), vec![4.0]);
        assert_eq!(b.install(|| 5).unwrap(), 5);
        assert_eq!(f64s(&b.add(&x, &x).unwrap()), vec![4.0]);
    }
}

/// 16 threads mix placements (Auto, two NUMA nodes of a fixture machine, a one-thread
/// live backend), sessions, installs and ops of several families; every result is checked
/// against a naive reference. The whole test is bounded by a timeout.
#[test]
fn sixteen_threads_mixing_placements_sessions_and_ops() {
    let (fixture, _) = fixture_backend(2, 2, 1);
    let live = CpuBackend::with_threads(1).unwrap();
    let handles = [
        fixture.clone(),
        fixture.for_placement(CpuPlacement::NumaNode(NumaNodeId(0))).unwrap(),
        fixture.for_placement(CpuPlacement::NumaNode(NumaNodeId(1))).unwrap(),
        live,
    ];
    let (done_tx, done_rx) = mpsc::channel();
    let mut threads = Vec::new();
    for t in 0..16u64 {
        let backend = handles[t as usize % handles.len()].clone();
        let done = done_tx.clone();
        threads.push(thread::spawn(move || {
            let mut rng = Rng::new(100 + t);
            for round in 0..40 {
                let (m, k, n) = (rng.range(1, 6), rng.range(1, 6), rng.range(1, 6));
                let (a, c) = (rng.vec(m * k), rng.vec(k * n));
                let (ta, tc) = (tensor(a.clone(), &[m, k]), tensor(c.clone(), &[k, n]));
                match (t + round) % 4 {
                    0 => {
                        let got = backend.matmul(&ta, &tc).unwrap();
                        assert_eq!(f64s(&got), naive_matmul(&a, &c, m, k, n));
                    }
                    1 => {
                        let (sum, red) = backend
                            .with_session(|s| {
                                let sum = s.add(&ta, &ta).unwrap();
                                let red = s.sum(&ta, &[1]).unwrap();
                                (sum, red)
                            })
                            .unwrap();
                        assert_eq!(f64s(&sum), a.iter().map(|v| 2.0 * v).collect::<Vec<_>>());
                        let want: Vec<f64> = (0..m).map(|i| a[i * k..(i + 1) * k].iter().sum()).collect();
                        assert_eq!(f64s(&red), want);
                    }
                    2 => {
                        let tr = backend.transpose(&ta, &[1, 0]).unwrap();
                        let want: Vec<f64> = (0..k * m).map(|q| a[(q % m) * k + q / m]).collect();
                        assert_eq!(f64s(&tr), want);
                    }
                    _ => {
                        let total = backend.install(|| a.iter().sum::<f64>()).unwrap();
                        let via_op = backend.sum(&ta, &[0, 1]).unwrap();
                        assert_eq!(f64s(&via_op), vec![total]);
                    }
                }
            }
            done.send(t).unwrap();
        }));
    }
    drop(done_tx);
    let mut finished = 0;
    while finished < 16 {
        match done_rx.recv_timeout(Duration::from_secs(120)) {
            Ok(_) => finished += 1,
            Err(e) => panic!("stress test stalled after {finished} threads finished: {e}"),
        }
    }
    for t in threads {
        t.join().unwrap();
    }
}
