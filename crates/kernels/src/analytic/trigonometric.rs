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
use super::{RealCore, polynomial, two_sum};

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
    let s = polynomial(z, &SIN_TERMS);
    // sin r = r − r³/6 + ...: the odd series with its sign folded into the terms.
    r + (r_lo * (1.0 - 0.5 * z) - r * z * s)
}

/// `cos(r + r_lo)` for `|r| ≤ π/4`.
#[inline(always)]
fn cos_reduced(r: f64, r_lo: f64) -> f64 {
    let z = r * r;
    let c = polynomial(z, &COS_TERMS);
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

/// Beyond this magnitude (and for non-finite inputs) f32 inputs take the f64 path.
const MAX_REDUCED_F32: f32 = 8192.0;
/// π/2 in three f32 parts (24, 24 and 24 significant bits), for a reduction by fused
/// multiply-adds.
const PIO2_F32: [f32; 3] = [f32::from_bits(0x3FC9_0FDB), f32::from_bits(0xB33B_BD2E), f32::from_bits(0xA6F7_2CED)];
/// (−1)^n / (2n + 3)! for n = 3 down to 0: `sin r = r + r³·S(r²)` (truncation below
/// 2⁻²⁸ of r on `|r| ≤ π/4`).
const SIN_TERMS_F32: [f32; 4] = [1.0 / 362_880.0, -1.0 / 5_040.0, 1.0 / 120.0, -1.0 / 6.0];
/// (−1)^n / (2n + 4)! for n = 3 down to 0: `cos r = 1 − r²/2 + r⁴·C(r²)`.
const COS_TERMS_F32: [f32; 4] = [-1.0 / 3_628_800.0, 1.0 / 40_320.0, -1.0 / 720.0, 1.0 / 24.0];

/// `x` (with `|x| ≤ MAX_REDUCED_F32`) reduced by the nearest multiple `k` of π/2, in
/// f32: `(sin r, cos r, k mod 4)`. Each part of π/2 is subtracted by one fused
/// multiply-add, so `r` carries π/2 to 72 bits and keeps its relative accuracy next to the
/// multiples of π/2.
#[inline(always)]
fn sin_cos_f32(x: f32) -> (f32, f32, u32) {
    let shifted = x * std::f32::consts::FRAC_2_PI + 12_582_912.0;
    let k = shifted - 12_582_912.0;
    let quadrant = shifted.to_bits() & 3;
    let r = (-k).mul_add(PIO2_F32[0], x);
    let r = (-k).mul_add(PIO2_F32[1], r);
    let r = (-k).mul_add(PIO2_F32[2], r);
    let z = r * r;
    let sin_r = (r * z).mul_add(polynomial(z, &SIN_TERMS_F32), r);
    let cos_r = (z * z).mul_add(polynomial(z, &COS_TERMS_F32), (-0.5f32).mul_add(z, 1.0));
    (sin_r, cos_r, quadrant)
}

/// `sin x` in f32 for `|x| ≤ MAX_REDUCED_F32`: within 2 eps of |sin x| (tested against
/// the f64 sine).
#[inline(always)]
fn sin_core_f32(x: f32) -> f32 {
    let (s, c, quadrant) = sin_cos_f32(x);
    let y = if quadrant & 1 == 0 { s } else { c };
    let y = if quadrant & 2 == 0 { y } else { -y };
    if x == 0.0 { x } else { y }
}

/// `cos x` in f32 for `|x| ≤ MAX_REDUCED_F32`.
#[inline(always)]
fn cos_core_f32(x: f32) -> f32 {
    let (s, c, quadrant) = sin_cos_f32(x);
    let y = if quadrant & 1 == 0 { c } else { -s };
    if quadrant & 2 == 0 { y } else { -y }
}

/// Declares the unit types of `sin` and `cos`: the cores within `MAX_REDUCED` (f64) and
/// `MAX_REDUCED_F32` (f32), libm beyond them and for non-finite inputs.
macro_rules! reduced_trig {
    ($($(#[$doc:meta])* $name:ident => $core:ident, $core32:ident, $libm:path;)*) => {
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

                #[inline(always)]
                fn core_f32(x: f32) -> f32 {
                    $core32(x)
                }

                #[inline(always)]
                fn outside_f32(x: f32) -> bool {
                    x.abs() > MAX_REDUCED_F32 || x.is_nan()
                }
            }
        )*
    };
}

reduced_trig! {
    /// `sin x`, for [`super::map_slice`].
    Sin => sin_core, sin_core_f32, f64::sin;
    /// `cos x`, for [`super::map_slice`].
    Cos => cos_core, cos_core_f32, f64::cos;
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
    fn f32_cores_are_within_two_eps_of_the_f64_functions() {
        let mut xs: Vec<f32> = (0..300_000).map(|i| (i as f32 - 150_000.0) * 1.7e-3).collect();
        xs.extend((0..200_000).map(|i| (i as f32 - 100_000.0) * 0.0831));
        // The f32 values nearest the multiples of π/2 (and their neighbours), where the
        // result is tiny and only an accurate reduction keeps its relative error small.
        for k in 1..5300i32 {
            let near = (f64::from(k) * std::f64::consts::FRAC_PI_2) as f32;
            let bits = near.to_bits();
            xs.extend((bits - 3..=bits + 3).map(f32::from_bits));
            xs.extend((bits - 3..=bits + 3).map(|b| -f32::from_bits(b)));
        }
        xs.extend((1..150).flat_map(|i| [f32::powi(2.0, -i), -f32::powi(2.0, -i)]));
        xs.extend([8191.9995, 8192.0, 8192.001, 1e6, 1e30, f32::MAX, f32::INFINITY, f32::NAN, 0.0, -0.0]);
        let sin = check_f32::<Sin>("sin", &xs, f64::sin, 2.0);
        let cos = check_f32::<Cos>("cos", &xs, f64::cos, 2.0);
        assert!(sin <= 1.5 && cos <= 1.5, "sin {sin}, cos {cos}");
        assert_eq!(value::<Sin, _>(-0.0f32).to_bits(), (-0.0f32).to_bits());
        assert_eq!(value::<Cos, _>(0.0f32), 1.0);
        assert!(value::<Sin, _>(f32::INFINITY).is_nan());
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
