//! strata's benchmark suite: the `strata-bench` runner behind `cargo xtask bench` and the
//! Criterion benches, over the same inputs.
//!
//! The runner measures every party of a case in the same process, alternating between
//! them repetition by repetition, so that frequency changes and noise from the other
//! core hit all of them alike. Figures are per-call times; each case converts them into
//! its unit (GFLOP/s, GB/s, ns, x). Every case checks once, untimed, that the parties
//! compute the same result.
//!
//! # Layout
//! - [`cases`]: one module per family; each lists its [`suite::Case`]s (name, group,
//!   unit, threads, peers, references, target, limit) with the closure that measures
//!   them. [`cases::all`] is the run order.
//! - [`tn`]: the tensor-network workloads of `benches/tn/workloads.tn`, which the Python
//!   peers (`xtask/py/peers.py`) read too, with the shared input generator, flop counts,
//!   einsum form and a naive reference.
//! - [`suite`]: cases and the records of one run; [`check`]: result comparison;
//!   [`openblas`]: the OpenBLAS peer (feature `openblas`); [`subject`]: strata as measured.
//!
//! # Adding a case
//! Add a `Case::new(name, group, unit, threads).peers(..).target(..).run(..)` to its
//! family's `cases()`; to have numpy/JAX measure it too, add its name to `cases_known` in
//! `xtask/py/peers.py`. A tensor-network workload is one block of `benches/tn/workloads.tn`
//! and needs nothing else. Adding a group: an entry in `xtask::groups::GROUPS`;
//! [`cases::check_declarations`] (run by the tests and by the runner) refuses a case whose
//! group, parties or target the report would not understand. The `einsum` family
//! ([`cases::einsum`]) is the hook for issue 17: its docs say what to fill in. The
//! `distributed` family ([`cases::distributed`], issue 18) runs strata-mpi's scaling
//! example under `mpirun` and records what it reports.
#![deny(missing_docs)]

pub mod cases;
pub mod check;
pub mod openblas;
pub mod subject;
pub mod suite;
pub mod tn;

use std::time::{Duration, Instant};

/// How long and how often to measure.
#[derive(Clone, Copy, Debug)]
pub struct MeasureConfig {
    /// Repetitions per party (the median and best are taken over these).
    pub reps: usize,
    /// Target duration of one repetition's batch of calls.
    pub batch_target: Duration,
}

impl MeasureConfig {
    /// Short measurements for `--quick`.
    pub fn quick() -> Self {
        MeasureConfig { reps: 5, batch_target: Duration::from_millis(40) }
    }
    /// The default measurements.
    pub fn full() -> Self {
        MeasureConfig { reps: 11, batch_target: Duration::from_millis(150) }
    }
}

/// Median and best seconds per call of one party.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// Median over repetitions.
    pub median: f64,
    /// Fastest repetition.
    pub best: f64,
}

/// One party of a case: a name (`strata`, `faer`, ...) and the call to time.
pub struct Party<'a> {
    /// Who this is, as it appears in the report.
    pub who: &'static str,
    /// One call of the measured operation.
    pub call: Box<dyn FnMut() + 'a>,
}

impl<'a> Party<'a> {
    /// A party named `who` timing `call`.
    pub fn new(who: &'static str, call: impl FnMut() + 'a) -> Self {
        Party { who, call: Box::new(call) }
    }
}

/// Calls per repetition so that one batch lasts about `target`, and the time of one call.
/// The first (warm-up) call is timed too, so a call longer than the target costs no
/// further probing.
fn batch_size(call: &mut dyn FnMut(), target: Duration) -> (usize, f64) {
    let t0 = Instant::now();
    call();
    let first = t0.elapsed();
    if first >= target {
        return (1, first.as_secs_f64());
    }
    let mut n = 1usize;
    loop {
        let t0 = Instant::now();
        for _ in 0..n {
            call();
        }
        let t = t0.elapsed();
        if t >= target / 4 || n >= 1 << 24 {
            let per = t.as_secs_f64() / n as f64;
            return (((target.as_secs_f64() / per.max(1e-12)) as usize).clamp(1, 1 << 26), per);
        }
        n *= 4;
    }
}

/// Measures every party, alternating between them in each repetition.
pub fn measure(config: MeasureConfig, parties: &mut [Party<'_>]) -> Vec<(&'static str, Timing)> {
    let probes: Vec<(usize, f64)> = parties.iter_mut().map(|p| batch_size(&mut p.call, config.batch_target)).collect();
    let sizes: Vec<usize> = probes.iter().map(|p| p.0).collect();
    // Calls far longer than a batch (a 1024³ GEMM on a loaded machine) get fewer
    // repetitions, never fewer than three, so that the quick run stays quick.
    let slowest = probes.iter().map(|p| p.1).fold(0.0, f64::max);
    let reps = if slowest > 4.0 * config.batch_target.as_secs_f64() { config.reps.min(3) } else { config.reps };
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(reps); parties.len()];
    for _ in 0..reps {
        for (i, p) in parties.iter_mut().enumerate() {
            let t0 = Instant::now();
            for _ in 0..sizes[i] {
                (p.call)();
            }
            samples[i].push(t0.elapsed().as_secs_f64() / sizes[i] as f64);
        }
    }
    parties
        .iter()
        .zip(samples)
        .map(|(p, mut s)| {
            s.sort_by(f64::total_cmp);
            (p.who, Timing { median: s[s.len() / 2], best: s[0] })
        })
        .collect()
}

/// Deterministic pseudo-random f64 values in [-1, 1) (xorshift; no dependency).
pub fn random_f64(len: usize, seed: u64) -> Vec<f64> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measure_orders_parties_by_cost() {
        let cfg = MeasureConfig { reps: 3, batch_target: Duration::from_millis(5) };
        let mut sink = 0u64;
        let mut cheap = 0u64;
        let mut parties = vec![
            Party::new("slow", || {
                for i in 0..2000u64 {
                    sink = std::hint::black_box(sink.wrapping_add(i));
                }
            }),
            Party::new("fast", || cheap = std::hint::black_box(cheap + 1)),
        ];
        let r = measure(cfg, &mut parties);
        drop(parties);
        assert_eq!(r[0].0, "slow");
        assert!(r[0].1.median > r[1].1.median);
        assert!(r.iter().all(|(_, t)| t.best <= t.median));
    }

    #[test]
    fn random_values_are_in_range_and_repeatable() {
        let a = random_f64(1000, 7);
        assert!(a.iter().all(|v| (-1.0..1.0).contains(v)));
        assert_eq!(a, random_f64(1000, 7));
        assert_ne!(a, random_f64(1000, 8));
    }
}
