//! Streaming cases, larger than the caches: an add into a preallocated output, the
//! allocating elementwise ops as a user's loop writes them (`let c = backend.add(a, b)?;
//! ...; drop(c)`, nothing handed back to the pool), and `sum` from 1 Ki to 64 Mi
//! elements against the plain loop and against strata itself at one thread.

use strata_tensor::config::{BinaryOp, ReduceOp};

use super::consume;
use super::flat::{self, Operand, Real, size_name};
use crate::Party;
use crate::check::close;
use crate::subject::Strata;
use crate::suite::{Case, Suite, Unit, gbps};

/// Elements of the 8 Mi cases.
const LEN: usize = 8 << 20;

/// The streaming cases at the run's thread count.
pub fn cases(threads: usize) -> Vec<Case> {
    let case = |name: &str| Case::new(name, "streaming", Unit::GigabytePerSecond, threads);
    let mut v = vec![
        case("add_f64_8m_into")
            .peers(&["ndarray", "numpy"])
            .references(&["rust_loop"])
            .target("ref:rust_loop:0.9")
            .limit("stream_triad")
            .run(|s| binary_into::<f64>(s, LEN, BinaryOp::Add, false)),
    ];
    for (name, op, len, is_f32) in [
        ("add_f64_8m_alloc", BinaryOp::Add, LEN, false),
        ("mul_f64_8m_alloc", BinaryOp::Mul, LEN, false),
        ("add_f32_16m_alloc", BinaryOp::Add, 2 * LEN, true),
    ] {
        let c = case(name).peers(&["ndarray", "numpy", "jax"]).target("ref:numpy:1.2").limit("stream_triad");
        v.push(if is_f32 {
            c.run(move |s| binary_alloc::<f32>(s, len, op))
        } else {
            c.run(move |s| binary_alloc::<f64>(s, len, op))
        });
    }
    for len in [1 << 10, 64 << 10, 1 << 20, 8 << 20, 64 << 20] {
        let mut c = case(&format!("sum_f64_{}", size_name(len)))
            .peers(&["ndarray", "numpy", "jax"])
            .references(&["rust_loop", "strata_1t"])
            .target("ref:rust_loop:0.95&ref:strata_1t:1");
        if len >= LEN {
            c = c.limit("stream_read");
        }
        v.push(c.run(move |s| sum::<f64>(s, len)));
    }
    v
}

fn apply<T: Real>(op: BinaryOp, a: T, b: T) -> T {
    if op == BinaryOp::Mul { a * b } else { a + b }
}

/// `c = a op b` into an existing output, against the loop, ndarray (and numpy's `out=`);
/// with `with_1t`, strata at one thread too.
pub(crate) fn binary_into<T: Real>(suite: &mut Suite, len: usize, op: BinaryOp, with_1t: bool) -> Result<(), String> {
    let strata = Strata::with_threads(suite.threads)?;
    let strata_1t = Strata::with_threads(1)?;
    let pool = flat::pool(strata.budget())?;
    let (a, b) = (Operand::<T>::new(flat::values(len, 21, |x| x))?, Operand::<T>::new(flat::values(len, 22, |x| x))?);
    let mut out = Operand::<T>::new(vec![T::of(0.0); len])?;
    let call = |s: &Strata, out: &mut Operand<T>| s.backend().binary_into(op, &a.tensor, &b.tensor, &mut out.tensor);
    let mut want = vec![T::of(0.0); len];
    flat::loop2(&pool, a.data(), b.data(), &mut want, |x, y| apply(op, x, y));
    call(&strata, &mut out).map_err(|e| e.to_string())?;
    close("strata", out.data(), &want, 0.0)?;
    let mut out_1t = Operand::<T>::new(vec![T::of(0.0); len])?;
    call(&strata_1t, &mut out_1t).map_err(|e| e.to_string())?;
    close("strata_1t", out_1t.data(), &want, 0.0)?;
    let nd_call = |c: &mut ndarray::Array1<T>| {
        ndarray::Zip::from(c).and(&a.nd).and(&b.nd).for_each(|c, &x, &y| *c = apply(op, x, y))
    };
    nd_call(&mut out.nd);
    close("ndarray", out.nd.as_slice().unwrap_or(&[]), &want, 0.0)?;

    let mut nd_out = out.nd.clone();
    let mut failure = None;
    let mut failure_1t = None;
    let mut parties = vec![
        Party::new("ndarray", || nd_call(&mut nd_out)),
        Party::new("rust_loop", || flat::loop2(&pool, a.data(), b.data(), &mut want, |x, y| apply(op, x, y))),
    ];
    parties.insert(0, Party::new("strata", || consume(&mut failure, call(&strata, &mut out))));
    if with_1t {
        parties.push(Party::new("strata_1t", || consume(&mut failure_1t, call(&strata_1t, &mut out_1t))));
    }
    suite.measure(&mut parties, gbps((3 * len * size_of::<T>()) as f64));
    drop(parties);
    failure.or(failure_1t).map_or(Ok(()), Err)
}

/// `c = a op b` with a fresh result per call, dropped as a user's loop drops it.
fn binary_alloc<T: Real>(suite: &mut Suite, len: usize, op: BinaryOp) -> Result<(), String> {
    let strata = Strata::with_threads(suite.threads)?;
    let pool = flat::pool(strata.budget())?;
    let (a, b) = (Operand::<T>::new(flat::values(len, 21, |x| x))?, Operand::<T>::new(flat::values(len, 22, |x| x))?);
    let strata_call = || strata.backend().binary(op, &a.tensor, &b.tensor);
    let mut want = vec![T::of(0.0); len];
    flat::loop2(&pool, a.data(), b.data(), &mut want, |x, y| apply(op, x, y));
    let got = strata_call().map_err(|e| e.to_string())?;
    close("strata", got.as_typed::<T>().map_err(|e| e.to_string())?.data(), &want, 0.0)?;
    drop(got);
    let nd_call = || ndarray::Zip::from(&a.nd).and(&b.nd).map_collect(|&x, &y| apply(op, x, y));
    close("ndarray", nd_call().as_slice().unwrap_or(&[]), &want, 0.0)?;

    let mut failure = None;
    let mut parties = vec![
        Party::new("strata", || consume(&mut failure, strata_call())),
        Party::new("ndarray", || drop(std::hint::black_box(nd_call()))),
    ];
    suite.measure(&mut parties, gbps((3 * len * size_of::<T>()) as f64));
    drop(parties);
    failure.map_or(Ok(()), Err)
}

/// The sum of all elements at the run's threads, at one thread, and the loop.
fn sum<T: Real>(suite: &mut Suite, len: usize) -> Result<(), String> {
    let strata = Strata::with_threads(suite.threads)?;
    let strata_1t = Strata::with_threads(1)?;
    let pool = flat::pool(strata.budget())?;
    let a = Operand::<T>::new(flat::values(len, 23, |x| x))?;
    let call = |s: &Strata| s.backend().reduce(ReduceOp::Sum, &a.tensor, &[0]);
    let want = flat::loop_sum(&pool, a.data());
    for (who, s) in [("strata", &strata), ("strata_1t", &strata_1t)] {
        let got = call(s).map_err(|e| format!("{who}: {e}"))?;
        let got = got.as_typed::<T>().map_err(|e| e.to_string())?.data()[0];
        // Relative to the sum of magnitudes: any summation order is within n·eps of it.
        let scale: f64 = a.data().iter().map(|x| x.parts().0.abs()).sum::<f64>().max(1.0);
        let err = (got.parts().0 - want).abs() / scale;
        suite.check(who, err, T::TOL * 100.0);
        if err > T::TOL * 100.0 {
            return Err(format!("{who}: sum {} against the loop's {want}", got.parts().0));
        }
    }
    let (mut failure, mut failure_1t) = (None, None);
    let mut parties = vec![
        Party::new("strata", || consume(&mut failure, call(&strata))),
        Party::new("strata_1t", || consume(&mut failure_1t, call(&strata_1t))),
        Party::new("ndarray", || {
            std::hint::black_box(a.nd.fold(T::of(0.0), |s, &x| s + x));
        }),
        Party::new("rust_loop", || {
            std::hint::black_box(flat::loop_sum(&pool, a.data()));
        }),
    ];
    suite.measure(&mut parties, gbps((len * size_of::<T>()) as f64));
    drop(parties);
    failure.or(failure_1t).map_or(Ok(()), Err)
}
