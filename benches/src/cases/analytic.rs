//! Analytic functions on 8 Mi elements into a preallocated output, f64 and f32, at one
//! thread and at the run's count, beside the libm loop, ndarray, numpy (`out=`) and JAX
//! (which has no destination form and allocates).

use strata_tensor::config::UnaryOp;

use super::flat::{self, Func, Operand, Real};
use super::{consume, suffix, thread_counts};
use crate::Party;
use crate::check::close;
use crate::subject::Strata;
use crate::suite::{Case, Suite, Unit, gbps};

const LEN: usize = 8 << 20;

/// A function's case name, its libm reference, strata's op, and the inputs it is measured
/// on (a map from x in [-1, 1)).
type AnalyticCase = (&'static str, Func, UnaryOp, fn(f64) -> f64);

/// Each function of the group.
const FUNCS: [AnalyticCase; 4] = [
    ("exp", Func::Exp, UnaryOp::Exp, |x| 5.0 * x),
    ("log", Func::Log, UnaryOp::Log, |x| 50.0 * (x + 1.0) + 1e-3),
    ("sin", Func::Sin, UnaryOp::Sin, |x| 30.0 * x),
    ("tanh", Func::Tanh, UnaryOp::Tanh, |x| 4.0 * x),
];

/// The analytic cases.
pub fn cases(tmax: usize) -> Vec<Case> {
    let mut v = Vec::new();
    for (name, func, op, input) in FUNCS {
        for threads in thread_counts(tmax) {
            for f32_case in [false, true] {
                let dtype = if f32_case { "f32" } else { "f64" };
                let c = Case::new(
                    format!("{name}_{dtype}_8m_{}", suffix(threads)),
                    "analytic",
                    Unit::GigabytePerSecond,
                    threads,
                )
                .peers(&["ndarray", "numpy", "jax"])
                .references(&["rust_loop"])
                .target("ref:numpy:1")
                .limit("stream_copy");
                v.push(if f32_case {
                    c.run(move |s| measure::<f32>(s, threads, func, op, input))
                } else {
                    c.run(move |s| measure::<f64>(s, threads, func, op, input))
                });
            }
        }
    }
    v
}

fn measure<T: Real>(
    suite: &mut Suite,
    threads: usize,
    func: Func,
    op: UnaryOp,
    input: fn(f64) -> f64,
) -> Result<(), String> {
    let strata = Strata::with_threads(threads)?;
    let pool = flat::pool(threads)?;
    let a = Operand::<T>::new(flat::values(LEN, 24, input))?;
    let mut out = Operand::<T>::new(vec![T::of(0.0); LEN])?;
    let strata_call = |out: &mut Operand<T>| strata.backend().unary_into(op, &a.tensor, &mut out.tensor);
    let mut want = vec![T::of(0.0); LEN];
    flat::loop1(&pool, a.data(), &mut want, |x| x.apply(func));
    strata_call(&mut out).map_err(|e| e.to_string())?;
    // strata's own cores are within a few ulp of libm: relative to the largest value.
    close("strata", out.data(), &want, T::TOL)?;
    let mut nd_out = out.nd.clone();
    nd_out.zip_mut_with(&a.nd, |c, &x| *c = x.apply(func));
    close("ndarray", nd_out.as_slice().unwrap_or(&[]), &want, 0.0)?;

    let mut failure = None;
    let mut parties = vec![
        Party::new("strata", || consume(&mut failure, strata_call(&mut out))),
        Party::new("ndarray", || nd_out.zip_mut_with(&a.nd, |c, &x| *c = x.apply(func))),
        Party::new("rust_loop", || flat::loop1(&pool, a.data(), &mut want, |x| x.apply(func))),
    ];
    suite.measure(&mut parties, gbps((2 * LEN * size_of::<T>()) as f64));
    drop(parties);
    failure.map_or(Ok(()), Err)
}
