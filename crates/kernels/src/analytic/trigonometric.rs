//! `sin x` and `cos x` for real floats as straight-line arithmetic that the compiler
//! vectorises, for |x| up to 10⁶; larger and non-finite inputs (rare in practice) go to
//! libm one by one after the vector loop.
//!
//! Method: `k = round(x · 2/π)` and `r = x − k·π/2` with π/2 split in three parts (33,
//! 33 and 53 significant bits: `k` times either of the first two is exact for
//! `|k| < 2^20`, `x − k·HI` is exact by Sterbenz's lemma), kept as a two-double pair
//! `r + r_lo`. On `|r| ≤ π/4`, `sin r = r + r³·S(r²)` and `cos r = 1 − r²/2 + r⁴·C(r²)`
//! with `S` and `C` the Taylor series to degrees 21 and 20 (truncation below 2⁻⁶⁰); the
//! pair's low part enters to first order (`+ r_lo·cos r`, `− r_lo·sin r`) and
//! `1 − r²/2` is summed as an exact pair, so the last addition is the main rounding.
//! The quadrant `k mod 4` picks `±sin r` or `±cos r` with selects. Error: within 2 ulp of
//! glibc on the tested range (the reduction loses relative accuracy only within about
//! 2⁻⁴⁰ of a multiple of π/2, where the result itself is that small).
//!
//! No fused multiply-adds on any path, so results are bit-identical whatever the CPU,
//! the vector width or the position of an element in a slice; `sin(−0) = −0`.

use super::exponential::ROUND_SHIFT;
use super::{RealCore, horner, two_sum};

/// 2/π.
const TWO_OVER_PI: f64 = f64::from_bits(0x3FE4_5F30_6DC9_C883);
/// π/2 rounded to 33 significant bits.
const PIO2_HI: f64 = f64::from_bits(0x3FF9_21FB_5440_0000);
/// π/2 − PIO2_HI rounded to 33 significant bits.
const PIO2_MID: f64 = f64::from_bits(0x3DD0_B461_1A60_0000);
/// π/2 − PIO2_HI − PIO2_MID rounded to 53 bits (the three parts leave 10⁻³⁷).
const PIO2_LO: f64 = f64::from_bits(0x3BA3_198A_2E03_7073);
/// Beyond this magnitude `k` could reach 2^20 and the reduction lose exactness: libm.
const MAX_REDUCED: f64 = 1.0e6;
/// (−1)^n / (2n + 3)! for n = 9 down to 0: `sin r = r + r³·S(r²)`.
const SIN_TERMS: [f64; 10] = [
    -1.0 / 51_090_942_171_709_440_000.0,
    1.0 / 121_645_100_408_832_000.0,
    -1.0 / 355_687_428_096_000.0,
    1.0 / 1_307_674_368_000.0,
    -1.0 / 6_227_020_800.0,
    1.0 / 39_916_800.0,
    -1.0 / 362_880.0,
    1.0 / 5_040.0,
    -1.0 / 120.0,
    1.0 / 6.0,
];
/// (−1)^n / (2n + 4)! for n = 8 down to 0: `cos r = 1 − r²/2 + r⁴·C(r²)`.
const COS_TERMS: [f64; 9] = [
    1.0 / 2_432_902_008_176_640_000.0,
    -1.0 / 6_402_373_705_728_000.0,
    1.0 / 20_922_789_888_000.0,
    -1.0 / 87_178_291_200.0,
    1.0 / 479_001_600.0,
    -1.0 / 3_628_800.0,
    1.0 / 40_320.0,
    -1.0 / 720.0,
    1.0 / 24.0,
];

/// `x` reduced by the nearest multiple `k` of π/2: `(r, r_lo, k mod 4)` with
/// `x ≈ k·π/2 + r + r_lo`.
#[inline(always)]
fn reduce(x: f64) -> (f64, f64, u64) {
    let shifted = x * TWO_OVER_PI + ROUND_SHIFT;
    let k = shifted - ROUND_SHIFT;
    // The low bits of the shifted float are k's two's-complement bits.
    let quadrant = shifted.to_bits() & 3;
    let t = x - k * PIO2_HI;
    let w = k * PIO2_MID;
    // `t - w` and its exact error, then the last part of k·π/2.
    let (r, err) = two_sum(t, -w);
    let lo = err - k * PIO2_LO;
    let r2 = r + lo;
    (r2, (r - r2) + lo, quadrant)
}

/// `sin(r + r_lo)` for `|r| ≤ π/4`.
#[inline(always)]
fn sin_reduced(r: f64, r_lo: f64) -> f64 {
    let z = r * r;
    let s = horner(z, &SIN_TERMS);
    // sin r = r − r³/6 + ...: the odd series with its sign folded into the terms.
    r + (r_lo * (1.0 - 0.5 * z) - r * z * s)
}

/// `cos(r + r_lo)` for `|r| ≤ π/4`.
#[inline(always)]
fn cos_reduced(r: f64, r_lo: f64) -> f64 {
    let z = r * r;
    let c = horner(z, &COS_TERMS);
    let half_z = 0.5 * z;
    let w = 1.0 - half_z;
    let w_err = (1.0 - w) - half_z;
    w + (w_err + (z * z * c - r * r_lo))
}

/// `sin x` for `|x| ≤ MAX_REDUCED`.
#[inline(always)]
fn sin_core(x: f64) -> f64 {
    let (r, r_lo, quadrant) = reduce(x);
    let s = sin_reduced(r, r_lo);
    let c = cos_reduced(r, r_lo);
    let y = if quadrant & 1 == 0 { s } else { c };
    let y = if quadrant & 2 == 0 { y } else { -y };
    if x == 0.0 { x } else { y }
}

/// `cos x` for `|x| ≤ MAX_REDUCED`.
#[inline(always)]
fn cos_core(x: f64) -> f64 {
    let (r, r_lo, quadrant) = reduce(x);
    let s = sin_reduced(r, r_lo);
    let c = cos_reduced(r, r_lo);
    let y = if quadrant & 1 == 0 { c } else { -s };
    if quadrant & 2 == 0 { y } else { -y }
}

/// Declares the unit types of `sin` and `cos`: the core within `MAX_REDUCED`, libm
/// beyond it and for non-finite inputs.
macro_rules! reduced_trig {
    ($($(#[$doc:meta])* $name:ident => $core:ident, $libm:path;)*) => {
        $(
            $(#[$doc])*
            pub(crate) struct $name;

            impl RealCore for $name {
                const HAS_FALLBACK: bool = true;

                #[inline(always)]
                fn core(x: f64) -> f64 {
                    $core(x)
                }

                #[inline(always)]
                fn outside(x: f64) -> bool {
                    x.abs() > MAX_REDUCED || x.is_nan()
                }

                fn fallback(x: f64) -> f64 {
                    $libm(x)
                }
            }
        )*
    };
}

reduced_trig! {
    /// `sin x`, for [`super::map_slice`].
    Sin => sin_core, f64::sin;
    /// `cos x`, for [`super::map_slice`].
    Cos => cos_core, f64::cos;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::test_support::{check_every_length, check_f32, check_f64};
    use crate::analytic::value;

    /// Pseudo-random inputs across the reduced range, a dense sweep near 0 and around
    /// the multiples of π/4 up to 100, large and non-finite inputs (libm's), and edges.
    fn inputs() -> Vec<f64> {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut xs: Vec<f64> = (0..200_000).map(|_| (next() >> 11) as f64 / (1u64 << 53) as f64 * 2e6 - 1e6).collect();
        xs.extend((0..200_000).map(|_| ((next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 20.0));
        xs.extend((0..50_000).map(|i| (i as f64 - 25_000.0) * 1e-9));
        xs.extend(
            (1..128).flat_map(|j| {
                (0..200).map(move |i| j as f64 * std::f64::consts::FRAC_PI_4 + (i as f64 - 100.0) * 1e-7)
            }),
        );
        xs.extend((1..1000).flat_map(|i| [f64::powi(2.0, -i), -f64::powi(2.0, -i)]));
        xs.extend([
            0.0,
            -0.0,
            1e6,
            -1e6,
            1e6 + 1.0,
            3e8,
            1e300,
            -1e300,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ]);
        xs
    }

    #[test]
    fn sin_and_cos_are_within_two_ulp_of_libm() {
        let xs = inputs();
        let same = check_f64::<Sin>("sin", &xs, f64::sin, 2.0);
        assert!(same >= 0.95, "sin: {same} equal to libm");
        let same = check_f64::<Cos>("cos", &xs, f64::cos, 2.0);
        assert!(same >= 0.95, "cos: {same} equal to libm");
    }

    #[test]
    fn special_values_follow_ieee() {
        assert_eq!(value::<Sin, _>(-0.0f64).to_bits(), (-0.0f64).to_bits());
        assert_eq!(value::<Sin, _>(0.0f64).to_bits(), 0.0f64.to_bits());
        assert_eq!(value::<Cos, _>(-0.0f64), 1.0);
        assert_eq!(value::<Sin, _>(1e-300f64), 1e-300);
        assert!(value::<Sin, _>(f64::INFINITY).is_nan());
        assert!(value::<Cos, _>(f64::NEG_INFINITY).is_nan());
        assert!(value::<Sin, _>(f64::NAN).is_nan());
        assert!(value::<Cos, _>(f32::NAN).is_nan());
    }

    #[test]
    fn f32_matches_the_rounded_f64_functions() {
        let xs: Vec<f32> = (0..300_000).map(|i| (i as f32 - 150_000.0) * 1.7e-3).collect();
        check_f32::<Sin>("sin", &xs, f64::sin);
        check_f32::<Cos>("cos", &xs, f64::cos);
    }

    #[test]
    fn every_length_and_alignment_gives_the_same_bits() {
        let mut xs: Vec<f64> = (0..67).map(|i| i as f64 * 0.77 - 20.0).collect();
        xs[30] = 5e6;
        xs[41] = f64::INFINITY;
        check_every_length::<Sin>(&xs);
        check_every_length::<Cos>(&xs);
    }
}
