//! The kernels' one run-time SIMD dispatch.
//!
//! A hot loop is written once, as plain generic Rust that the compiler vectorises, inside
//! the `#[inline(always)]` [`SimdTask::run`] of a small task type. [`run`] executes it
//! compiled for the widest vector unit the CPU reports — AVX-512F, AVX2, or the baseline
//! x86-64 (SSE2) — chosen once per process. A task is a type with an associated method,
//! not a closure: a closure's call shim was not reliably inlined into the wide copies
//! (measured on the analytic cores, which then ran one call per element).
//!
//! Every level computes the same bits: Rust never fuses `a * b + c` into an FMA on its
//! own, and code that wants a fused multiply-add asks for it with `mul_add`, which rounds
//! once everywhere (the FMA instruction at the AVX2 and AVX-512 levels, which both
//! enable FMA and require the CPU to have it; libm's exactly rounded `fma` at the
//! baseline, correct but slow there). So only the width of the registers changes.
//! Reductions rely on this (their fixed tree is defined on element positions, not on
//! vector width), and the tests compare every level the CPU has against the baseline
//! ([`run_at`]).
//!
//! Other ISAs run the portable loop.

use std::sync::atomic::{AtomicU8, Ordering};

/// A loop to run at the widest SIMD level: `run` must be `#[inline(always)]` and call
/// only `#[inline(always)]` code in its hot part, or that part stays at the baseline.
pub(crate) trait SimdTask {
    /// What the loop produces.
    type Output;
    /// The loop itself.
    fn run(self) -> Self::Output;
}

/// The vector units a task may be compiled for, narrowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum SimdLevel {
    /// The target's baseline (SSE2 on x86-64).
    Baseline,
    /// AVX2 with FMA (256-bit registers).
    Avx2,
    /// AVX-512F with FMA (512-bit registers).
    Avx512,
}

impl SimdLevel {
    /// Every level, narrowest first.
    #[cfg(test)]
    pub(crate) const ALL: [SimdLevel; 3] = [SimdLevel::Baseline, SimdLevel::Avx2, SimdLevel::Avx512];

    fn detect() -> SimdLevel {
        #[cfg(target_arch = "x86_64")]
        {
            let fma = std::arch::is_x86_feature_detected!("fma");
            if fma && std::arch::is_x86_feature_detected!("avx512f") {
                return SimdLevel::Avx512;
            }
            if fma && std::arch::is_x86_feature_detected!("avx2") {
                return SimdLevel::Avx2;
            }
        }
        SimdLevel::Baseline
    }
}

/// The detected level, plus one (0 = not detected yet).
static LEVEL: AtomicU8 = AtomicU8::new(0);

/// The widest level this CPU has (detected once).
#[inline]
pub(crate) fn level() -> SimdLevel {
    match LEVEL.load(Ordering::Relaxed) {
        1 => SimdLevel::Baseline,
        2 => SimdLevel::Avx2,
        3 => SimdLevel::Avx512,
        _ => {
            let detected = SimdLevel::detect();
            LEVEL.store(detected as u8 + 1, Ordering::Relaxed);
            detected
        }
    }
}

/// Runs `task` compiled for the widest level the CPU has.
#[inline(always)]
pub(crate) fn run<K: SimdTask>(task: K) -> K::Output {
    run_at(level(), task)
}

/// Runs `task` compiled for `wanted`, or for the widest level below it that the CPU has.
#[inline(always)]
pub(crate) fn run_at<K: SimdTask>(wanted: SimdLevel, task: K) -> K::Output {
    #[cfg(target_arch = "x86_64")]
    {
        let have = level().min(wanted);
        if have == SimdLevel::Avx512 {
            // SAFETY: `level()` reported AVX-512F and FMA, the features `avx512` enables.
            return unsafe { x86::avx512(task) };
        }
        if have == SimdLevel::Avx2 {
            // SAFETY: `level()` reported AVX2 and FMA (or more), the features `avx2` enables.
            return unsafe { x86::avx2(task) };
        }
    }
    let _ = wanted;
    task.run()
}

/// The wide copies: the same `run`, compiled with the feature enabled.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::SimdTask;

    #[target_feature(enable = "avx512f,fma")]
    pub(super) fn avx512<K: SimdTask>(task: K) -> K::Output {
        task.run()
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn avx2<K: SimdTask>(task: K) -> K::Output {
        task.run()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct SumOfSquares<'a>(&'a [f64]);

    impl SimdTask for SumOfSquares<'_> {
        type Output = f64;
        #[inline(always)]
        fn run(self) -> f64 {
            let mut lanes = [0.0; 16];
            let (rows, rest) = self.0.as_chunks::<16>();
            for row in rows {
                for (a, &x) in lanes.iter_mut().zip(row) {
                    *a += x * x;
                }
            }
            lanes.iter().sum::<f64>() + rest.iter().map(|x| x * x).sum::<f64>()
        }
    }

    #[test]
    fn every_level_gives_the_baseline_bits() {
        let xs: Vec<f64> = (0..10_007).map(|i| ((i * 7919) % 1013) as f64 * 0.37 - 100.0).collect();
        let want = run_at(SimdLevel::Baseline, SumOfSquares(&xs));
        for level in SimdLevel::ALL {
            assert_eq!(run_at(level, SumOfSquares(&xs)).to_bits(), want.to_bits(), "{level:?}");
        }
        assert_eq!(run(SumOfSquares(&xs)).to_bits(), want.to_bits());
        assert_eq!(level(), SimdLevel::detect());
    }
}
