//! Memory-bound elementwise cases on 8 Mi f64 (64 MiB per operand): add into a
//! destination, allocating add, sum, exp. The hardware references are plain Rust loops
//! over the same data with the same thread count (triad-like add, multi-accumulator read).

use ndarray::{Array1, Zip};
use rayon::prelude::*;
use strata_backend::BufferOps;
use strata_tensor::TypedTensor;
use strata_tensor::config::{BinaryOp, ReduceOp, UnaryOp};

use super::consume;
use crate::check::close;
use crate::subject::Strata;
use crate::suite::{Suite, Unit, gbps};
use crate::{Party, random_f64};

/// Elements per operand.
pub const LEN: usize = 8 << 20;
/// Elements per task of the parallel reference loops.
const CHUNK: usize = 1 << 16;

/// Runs the elementwise cases that pass the filter.
pub fn run(suite: &mut Suite) {
    let names = ["add_f64_8m_into", "add_f64_8m_alloc", "sum_f64_8m", "exp_f64_8m"];
    if !names.iter().any(|n| suite.wants(n)) {
        return;
    }
    let fixture = match Fixture::new(suite.threads) {
        Ok(f) => f,
        Err(e) => return names.iter().for_each(|n| suite.fail(n, &e)),
    };
    let steps: [(&str, FixtureCase); 4] =
        [(names[0], add_into), (names[1], add_alloc), (names[2], sum), (names[3], exp)];
    for (name, step) in steps {
        if suite.wants(name)
            && let Err(e) = step(&fixture, suite, name)
        {
            suite.fail(name, e);
        }
    }
}

/// A case measured on the shared fixture.
type FixtureCase = fn(&Fixture, &mut Suite, &str) -> Result<(), String>;

struct Fixture {
    strata: Strata,
    pool: rayon::ThreadPool,
    a: TypedTensor<f64>,
    b: TypedTensor<f64>,
    nd_a: Array1<f64>,
    nd_b: Array1<f64>,
}

impl Fixture {
    fn new(threads: usize) -> Result<Self, String> {
        let strata = Strata::with_threads(threads)?;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(strata.budget())
            .build()
            .map_err(|e| format!("rayon pool: {e}"))?;
        let (va, vb) = (random_f64(LEN, 21), random_f64(LEN, 22));
        let nd_a = Array1::from_vec(va.clone());
        let nd_b = Array1::from_vec(vb.clone());
        let a = TypedTensor::from_vec(va, &[LEN]).map_err(|e| e.to_string())?;
        let b = TypedTensor::from_vec(vb, &[LEN]).map_err(|e| e.to_string())?;
        Ok(Fixture { strata, pool, a, b, nd_a, nd_b })
    }

    /// The triad-like reference: `c[i] = a[i] + b[i]`, chunks spread over the pool.
    fn loop_add(&self, c: &mut [f64]) {
        let (a, b) = (self.a.data(), self.b.data());
        self.pool.install(|| {
            c.par_chunks_mut(CHUNK).zip(a.par_chunks(CHUNK)).zip(b.par_chunks(CHUNK)).for_each(|((c, a), b)| {
                for ((c, a), b) in c.iter_mut().zip(a).zip(b) {
                    *c = a + b;
                }
            })
        });
    }
}

fn add_into(f: &Fixture, suite: &mut Suite, case: &str) -> Result<(), String> {
    let mut out = TypedTensor::<f64>::zeros(&[LEN]).map_err(|e| e.to_string())?;
    let strata_call = |out: &mut TypedTensor<f64>| f.strata.backend().binary_into(BinaryOp::Add, &f.a, &f.b, out);
    let mut want = vec![0.0; LEN];
    f.loop_add(&mut want);
    strata_call(&mut out).map_err(|e| e.to_string())?;
    close("strata", out.data(), &want, 0.0)?;
    let mut nd_out = Array1::<f64>::zeros(LEN);
    Zip::from(&mut nd_out).and(&f.nd_a).and(&f.nd_b).for_each(|c, &a, &b| *c = a + b);
    close("ndarray", nd_out.as_slice().unwrap_or(&[]), &want, 0.0)?;

    let mut failure = None;
    let mut parties = vec![
        Party::new("strata", || consume(&mut failure, strata_call(&mut out))),
        Party::new("ndarray", || Zip::from(&mut nd_out).and(&f.nd_a).and(&f.nd_b).for_each(|c, &a, &b| *c = a + b)),
        Party::new("rust_loop", || f.loop_add(&mut want)),
    ];
    suite.measure(case, Unit::GigabytePerSecond, &mut parties, gbps(24.0 * LEN as f64));
    drop(parties);
    failure.map_or(Ok(()), Err)
}

fn add_alloc(f: &Fixture, suite: &mut Suite, case: &str) -> Result<(), String> {
    // The output goes back to strata's pool after each call (BufferOps::recycle), so the
    // pool is warm: this measures an allocating add as a steady-state program sees it.
    let strata_call = || f.strata.backend().binary(BinaryOp::Add, &f.a, &f.b);
    let mut want = vec![0.0; LEN];
    f.loop_add(&mut want);
    let got = strata_call().map_err(|e| e.to_string())?;
    close("strata", got.as_typed::<f64>().map_err(|e| e.to_string())?.data(), &want, 0.0)?;
    f.strata.backend().recycle(got);
    let nd = &f.nd_a + &f.nd_b;
    close("ndarray", nd.as_slice().unwrap_or(&[]), &want, 0.0)?;

    let mut failure = None;
    let mut parties = vec![
        Party::new("strata", || match strata_call() {
            Ok(t) => f.strata.backend().recycle(std::hint::black_box(t)),
            Err(e) => drop(failure.get_or_insert(e.to_string())),
        }),
        Party::new("ndarray", || drop(std::hint::black_box(&f.nd_a + &f.nd_b))),
    ];
    suite.measure(case, Unit::GigabytePerSecond, &mut parties, gbps(24.0 * LEN as f64));
    drop(parties);
    failure.map_or(Ok(()), Err)
}

/// The read reference: eight independent accumulators per chunk (so the adds pipeline),
/// chunks spread over the pool.
fn loop_sum(pool: &rayon::ThreadPool, a: &[f64]) -> f64 {
    pool.install(|| {
        a.par_chunks(CHUNK)
            .map(|c| {
                let mut acc = [0.0f64; 8];
                let mut lanes = c.chunks_exact(8);
                for l in &mut lanes {
                    for (s, x) in acc.iter_mut().zip(l) {
                        *s += x;
                    }
                }
                acc.iter().sum::<f64>() + lanes.remainder().iter().sum::<f64>()
            })
            .sum()
    })
}

fn sum(f: &Fixture, suite: &mut Suite, case: &str) -> Result<(), String> {
    let strata_call = || f.strata.backend().reduce(ReduceOp::Sum, &f.a, &[0]);
    let want = loop_sum(&f.pool, f.a.data());
    let got = strata_call().map_err(|e| e.to_string())?;
    close("strata", got.as_typed::<f64>().map_err(|e| e.to_string())?.data(), &[want], 1e-12)?;
    close("ndarray", &[f.nd_a.sum()], &[want], 1e-12)?;

    let mut failure = None;
    let mut parties = vec![
        Party::new("strata", || consume(&mut failure, strata_call())),
        Party::new("ndarray", || {
            std::hint::black_box(f.nd_a.sum());
        }),
        Party::new("rust_loop", || {
            std::hint::black_box(loop_sum(&f.pool, f.a.data()));
        }),
    ];
    suite.measure(case, Unit::GigabytePerSecond, &mut parties, gbps(8.0 * LEN as f64));
    drop(parties);
    failure.map_or(Ok(()), Err)
}

fn exp(f: &Fixture, suite: &mut Suite, case: &str) -> Result<(), String> {
    let mut out = TypedTensor::<f64>::zeros(&[LEN]).map_err(|e| e.to_string())?;
    let strata_call = |out: &mut TypedTensor<f64>| f.strata.backend().unary_into(UnaryOp::Exp, &f.a, out);
    let loop_exp = |c: &mut [f64]| {
        let a = f.a.data();
        f.pool.install(|| {
            c.par_chunks_mut(CHUNK).zip(a.par_chunks(CHUNK)).for_each(|(c, a)| {
                for (c, a) in c.iter_mut().zip(a) {
                    *c = a.exp();
                }
            })
        })
    };
    let mut want = vec![0.0; LEN];
    loop_exp(&mut want);
    strata_call(&mut out).map_err(|e| e.to_string())?;
    close("strata", out.data(), &want, 1e-15)?;
    // ndarray's mapv, writing into a preallocated array (the same work as the others).
    let mut nd_out = Array1::<f64>::zeros(LEN);
    nd_out.zip_mut_with(&f.nd_a, |c, &a| *c = a.exp());
    close("ndarray", nd_out.as_slice().unwrap_or(&[]), &want, 1e-15)?;

    let mut failure = None;
    let mut parties = vec![
        Party::new("strata", || consume(&mut failure, strata_call(&mut out))),
        Party::new("ndarray", || nd_out.zip_mut_with(&f.nd_a, |c, &a| *c = a.exp())),
        Party::new("rust_loop", || loop_exp(&mut want)),
    ];
    suite.measure(case, Unit::GigabytePerSecond, &mut parties, gbps(16.0 * LEN as f64));
    drop(parties);
    failure.map_or(Ok(()), Err)
}
