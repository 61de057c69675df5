//! Fixed costs: a one-element add (alone and inside a session), a 2 × 2 matrix product,
//! an uncontended admission, and reuse of a retained 8 MiB buffer.

use std::hint::black_box;

use ndarray::{Array1, Array2};
use strata_arbiter::{AdmissionRequest, ResourceArbiter};
use strata_pool::BufferPool;
use strata_tensor::config::{BinaryOp, DotGeneral};
use strata_tensor::{Tensor, TypedTensor};
use strata_topology::CpuId;

use super::{CaseFn, consume};
use crate::Party;
use crate::check::close;
use crate::subject::Strata;
use crate::suite::{Suite, Unit};

/// f64 elements in 8 MiB.
const POOL_LEN: usize = 1 << 20;

/// Runs the overhead cases that pass the filter.
pub fn run(suite: &mut Suite) {
    let steps: [(&str, CaseFn); 5] = [
        ("tiny_add_ns", tiny_add),
        ("tiny_add_session_ns", tiny_add_session),
        ("matmul_2x2_ns", matmul_2x2),
        ("arbiter_uncontended_ns", arbiter),
        ("pool_reuse_8mib_ns", pool_reuse),
    ];
    for (case, step) in steps {
        if suite.wants(case)
            && let Err(e) = step(suite, case)
        {
            suite.fail(case, e);
        }
    }
}

fn one_element(v: f64) -> Result<Tensor, String> {
    TypedTensor::from_vec(vec![v], &[1]).map(Tensor::from).map_err(|e| e.to_string())
}

fn tiny_add(suite: &mut Suite, case: &str) -> Result<(), String> {
    let strata = Strata::with_threads(suite.threads)?;
    let (a, b) = (one_element(1.5)?, one_element(2.25)?);
    let strata_call = || strata.backend().binary(BinaryOp::Add, &a, &b);
    let got = strata_call().map_err(|e| e.to_string())?;
    close("strata", got.as_typed::<f64>().map_err(|e| e.to_string())?.data(), &[3.75], 0.0)?;
    let (na, nb) = (Array1::from_vec(vec![1.5]), Array1::from_vec(vec![2.25]));
    close("ndarray", (&na + &nb).as_slice().unwrap_or(&[]), &[3.75], 0.0)?;

    let mut failure = None;
    let mut parties = vec![
        Party::new("strata", || consume(&mut failure, strata_call())),
        Party::new("ndarray", || drop(black_box(&na + &nb))),
    ];
    suite.measure(case, Unit::Nanoseconds, &mut parties, |s| s);
    drop(parties);
    failure.map_or(Ok(()), Err)
}

fn tiny_add_session(suite: &mut Suite, case: &str) -> Result<(), String> {
    let strata = Strata::with_threads(suite.threads)?;
    let (a, b) = (one_element(1.5)?, one_element(2.25)?);
    let (na, nb) = (Array1::from_vec(vec![1.5]), Array1::from_vec(vec![2.25]));
    let config = suite.config;
    let session_result = strata.backend().with_session(|session| -> Result<_, String> {
        let call = || session.binary(BinaryOp::Add, &a, &b);
        let got = call().map_err(|e| e.to_string())?;
        close("strata", got.as_typed::<f64>().map_err(|e| e.to_string())?.data(), &[3.75], 0.0)?;
        let mut failure = None;
        let mut parties = vec![
            Party::new("strata", || consume(&mut failure, call())),
            Party::new("ndarray", || drop(black_box(&na + &nb))),
        ];
        let timings = crate::measure(config, &mut parties);
        drop(parties);
        failure.map_or(Ok(timings), Err)
    });
    let timings = session_result.map_err(|e| format!("with_session: {e}"))??;
    eprintln!("  {case}");
    for (who, t) in timings {
        suite.record(case, Unit::Nanoseconds, who, t, |s| s);
    }
    Ok(())
}

fn matmul_2x2(suite: &mut Suite, case: &str) -> Result<(), String> {
    let strata = Strata::with_threads(suite.threads)?;
    let (va, vb) = (vec![1.0, 2.0, 3.0, 4.0], vec![5.0, 6.0, 7.0, 8.0]);
    let want = [19.0, 22.0, 43.0, 50.0];
    let a = TypedTensor::from_vec(va.clone(), &[2, 2]).map(Tensor::from).map_err(|e| e.to_string())?;
    let b = TypedTensor::from_vec(vb.clone(), &[2, 2]).map(Tensor::from).map_err(|e| e.to_string())?;
    let config = DotGeneral::matmul();
    let strata_call = || strata.backend().dot_general(&a, &b, &config);
    let got = strata_call().map_err(|e| e.to_string())?;
    close("strata", got.as_typed::<f64>().map_err(|e| e.to_string())?.data(), &want, 0.0)?;
    let (na, nb) = (
        Array2::from_shape_vec((2, 2), va.clone()).map_err(|e| e.to_string())?,
        Array2::from_shape_vec((2, 2), vb.clone()).map_err(|e| e.to_string())?,
    );
    close("ndarray", na.dot(&nb).as_slice().unwrap_or(&[]), &want, 0.0)?;
    let (fa, fb) = (faer::Mat::from_fn(2, 2, |i, j| va[2 * i + j]), faer::Mat::from_fn(2, 2, |i, j| vb[2 * i + j]));
    let fc = &fa * &fb;
    let faer_rows: Vec<f64> = (0..4).map(|x| fc[(x / 2, x % 2)]).collect();
    close("faer", &faer_rows, &want, 0.0)?;

    let mut failure = None;
    let mut parties = vec![
        Party::new("strata", || consume(&mut failure, strata_call())),
        Party::new("faer", || drop(black_box(&fa * &fb))),
        Party::new("ndarray", || drop(black_box(na.dot(&nb)))),
    ];
    suite.measure(case, Unit::Nanoseconds, &mut parties, |s| s);
    drop(parties);
    failure.map_or(Ok(()), Err)
}

fn arbiter(suite: &mut Suite, case: &str) -> Result<(), String> {
    let arbiter = ResourceArbiter::new();
    let request = AdmissionRequest::cpu(CpuId(0));
    // Check: a permit is granted, and a second one for the same CPU is refused while
    // the first is held (the admission really happens).
    {
        let held = arbiter.acquire(&request).map_err(|e| format!("arbiter: {e}"))?;
        if arbiter.try_acquire(&request).is_ok() {
            return Err("arbiter: a second permit for a held CPU was granted".into());
        }
        drop(held);
    }
    let mutex = parking_lot::Mutex::new(0u64);
    let mut failure = None;
    let mut parties = vec![
        Party::new("strata", || match arbiter.acquire(black_box(&request)) {
            Ok(permit) => drop(black_box(permit)),
            Err(e) => drop(failure.get_or_insert(e.to_string())),
        }),
        Party::new("rust_loop", || {
            let mut guard = mutex.lock();
            *guard += 1;
            black_box(&*guard);
        }),
    ];
    suite.measure(case, Unit::Nanoseconds, &mut parties, |s| s);
    drop(parties);
    failure.map_or(Ok(()), Err)
}

fn pool_reuse(suite: &mut Suite, case: &str) -> Result<(), String> {
    let pool = BufferPool::new(64 << 20);
    drop(pool.acquire_zeroed::<f64>(POOL_LEN).map_err(|e| e.to_string())?);
    // Check: the warm pool hands back its retained buffer (no fresh allocation).
    let before = pool.stats();
    drop(pool.acquire_for_overwrite::<f64>(POOL_LEN).map_err(|e| e.to_string())?);
    let after = pool.stats();
    if after.hits != before.hits + 1 || after.misses != before.misses {
        return Err(format!("pool: the warm acquire was not a hit ({before:?} -> {after:?})"));
    }
    let mut failure = None;
    let mut parties = vec![
        Party::new("strata", || match pool.acquire_for_overwrite::<f64>(black_box(POOL_LEN)) {
            Ok(loan) => drop(black_box(loan)),
            Err(e) => drop(failure.get_or_insert(e.to_string())),
        }),
        Party::new("rust_loop", || {
            let mut v: Vec<f64> = Vec::with_capacity(black_box(POOL_LEN));
            v.resize(POOL_LEN, 1.0);
            black_box(&v[POOL_LEN - 1]);
        }),
    ];
    suite.measure(case, Unit::Nanoseconds, &mut parties, |s| s);
    drop(parties);
    failure.map_or(Ok(()), Err)
}
