//! `ln x` for real floats as straight-line arithmetic that the compiler vectorises (the
//! same approach as `exponential.rs`: one libm call per element was the whole cost).
//!
//! Method (f64): `x = 2^k · m` with `m` in `[√2/2, √2)` read off the bits with no
//! comparison (subtracting the bits of √2/2 puts `k` in the exponent field), and
//! `ln m = ln(1 + f)` with `f = m − 1` exact. With `s = f / (2 + f)`,
//! `ln(1 + f) = 2·atanh(s) = 2s + 2s·T` where `T = Σ_{n≥1} s^(2n) / (2n + 1)`; since
//! `f = 2s + s·f`, this is `f − s·(f − 2T)`: the exact `f` plus a correction about `f²/2`
//! in size, so the rounding of the division only touches the correction. `|s| ≤ 0.1716`,
//! so eleven terms of `T` leave a truncation error below 2⁻⁶². Then `k·ln 2` is added
//! with `ln 2` split in two: `k·LN2_HI + f` as an exact pair (fast two-sum), the small
//! parts added to its low half, so one addition rounds. Error: below 1 ulp against a
//! correctly rounded logarithm, equal to glibc's on nearly every input (tested).
//!
//! f32 has a native core (16 lanes per AVX-512 register) with no division: a series in
//! `f` fitted for the least relative error (`gen_log_f32.py`). Both run a fast core in the
//! vector loop on positive, normal, finite inputs (one unsigned comparison of the bits
//! tells them apart); zero, subnormals, negatives, infinity and NaN are patched
//! afterwards by the full function (subnormals scaled by 2^54 or 2^23 first, exactly;
//! `ln(±0) = −∞`, `ln(+∞) = +∞`, NaN for negative and NaN inputs), which gives the same
//! bits as the fast core where both apply (tested). Dropping the four special-value
//! selects from the loop made it 1.6× (f64) and 1.9× (f32) faster in-cache.
//!
//! Fused multiply-adds only where written (`mul_add`), so results are bit-identical
//! whatever the CPU, the vector width or the position of an element in a slice.

use super::exponential::{LN2_HI, LN2_LO, ROUND_SHIFT};
use super::{polynomial, real_cores};

/// 2^54: scales a subnormal into the normal range exactly.
const TWO_54: f64 = 18_014_398_509_481_984.0;
/// The low 52 bits: the fraction field.
const FRACTION_BITS: u64 = (1 << 52) - 1;
/// 1/(2n + 1) for n = 11 down to 1: the series of `atanh(s)/s − 1` in `z = s²`.
const INV_ODD: [f64; 11] = [
    1.0 / 23.0,
    1.0 / 21.0,
    1.0 / 19.0,
    1.0 / 17.0,
    1.0 / 15.0,
    1.0 / 13.0,
    1.0 / 11.0,
    1.0 / 9.0,
    1.0 / 7.0,
    1.0 / 5.0,
    1.0 / 3.0,
];

/// `ln x` in f64 for a positive, normal, finite `x` (the vector loop's common case; the
/// rest go to [`log_with_tail`], whose result this equals bit for bit here).
#[inline(always)]
fn log_core(x: f64) -> f64 {
    log_parts(x, 0.0, 0.0)
}

/// Whether `x` is zero, subnormal, negative, infinite or NaN: one unsigned comparison of
/// the bits (every such `x` lies outside `[MIN_POSITIVE, ∞)` as a bit pattern).
#[inline(always)]
fn log_outside(x: f64) -> bool {
    const LOW: u64 = f64::MIN_POSITIVE.to_bits();
    x.to_bits().wrapping_sub(LOW) >= f64::INFINITY.to_bits() - LOW
}

/// `ln(1 + x)` in f64: `u = 1 + x` rounded, its rounding error `c` exactly (fast two-sum,
/// the larger operand first), and `ln(1 + x) = ln u + ln(1 + c/u)`, where `c/u` is below
/// 2⁻⁵³ and joins the low-order terms of `ln u`. Near 0 this leaves `f + c = x` exactly,
/// so tiny inputs come back unchanged. Below 1 ulp (tested against glibc).
#[inline(always)]
fn log1p_core(x: f64) -> f64 {
    let u = 1.0 + x;
    let c = if x.abs() > 1.0 { (x - u) + 1.0 } else { (1.0 - u) + x };
    let y = log_with_tail(u, c / u);
    // x = ±0 keeps its sign (the sum above gives +0); NaN passes through.
    if x == 0.0 || x.is_nan() { x } else { y }
}

/// The bits of √2/2 rounded: subtracting them from a float's bits puts the exponent of
/// its mantissa taken in `[√2/2, √2)` in the exponent field.
const SQRT_HALF_BITS: u64 = 0x3FE6_A09E_667F_3BCD;

/// `ln x + tail` for a `tail` far below the result's last place (0 for `ln` itself; the
/// rounding error of `1 + x` for `ln(1 + x)`), with the special values of `ln x`.
#[inline(always)]
fn log_with_tail(x: f64, tail: f64) -> f64 {
    let tiny = x < f64::MIN_POSITIVE;
    let scaled = if tiny { x * TWO_54 } else { x };
    let y = log_parts(scaled, if tiny { 54.0 } else { 0.0 }, tail);
    let y = if x == f64::INFINITY { x } else { y };
    let y = if x == 0.0 { f64::NEG_INFINITY } else { y };
    let y = if x < 0.0 { f64::NAN } else { y };
    if x.is_nan() { x } else { y }
}

/// `ln(2^-shift · x) + tail` for a positive, normal, finite `x` (see the module
/// documentation).
#[inline(always)]
fn log_parts(x: f64, shift: f64, tail: f64) -> f64 {
    // x = 2^k · m with m in [√2/2, √2), from the bits with no comparison: `k` is the
    // exponent field of the offset (arithmetic shift), as a float without an integer
    // conversion (which AVX2 lacks): placed in the low bits of 1.5·2^52 it is that
    // float's excess over 1.5·2^52.
    let offset = x.to_bits().wrapping_sub(SQRT_HALF_BITS);
    let exponent = ((offset as i64) >> 52) as u64;
    let k = (f64::from_bits(ROUND_SHIFT.to_bits().wrapping_add(exponent)) - ROUND_SHIFT) - shift;
    let m = f64::from_bits((offset & FRACTION_BITS) + SQRT_HALF_BITS);
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let t = polynomial(z, &INV_ODD) * z;
    // ln(1 + f) = f − correction, and k·ln2 = k·LN2_HI + k·LN2_LO; `k·LN2_HI + f` as an
    // exact pair (fast two-sum: |k·LN2_HI| > |f| unless k = 0, when the pair is f, 0).
    let correction = s * (f - (t + t)) - k * LN2_LO - tail;
    let scaled_ln2 = k * LN2_HI;
    let head = scaled_ln2 + f;
    let head_err = (scaled_ln2 - head) + f;
    head + (head_err - correction)
}

/// `Q` of the f32 logarithm, highest degree first: `ln(1 + f) = f − f²/2 + f³·Q(f)` on
/// `f` in `[√2/2 − 1, √2 − 1]`, fitted for the least relative error of `ln(1 + f)`
/// (2⁻³⁰ before rounding; `gen_log_f32.py` reproduces the fit).
const LOG_F32_TERMS: [f32; 9] =
    [0.06746601, -0.11675642, 0.11888175, -0.124055915, 0.14219551, -0.16667996, 0.20002119, -0.2500001, 0.33333313];

/// `ln x` in f32 for a positive, normal, finite `x` (the others go to
/// [`log_anywhere_f32`], whose result this equals bit for bit here): the mantissa taken
/// in `[√2/2, √2)` straight from the bits (subtracting the bits of √2/2 moves the boundary
/// to the exponent field, so no comparison is needed), `ln m = ln(1 + f)` by a fitted
/// series in `f = m − 1` (exact), summed so that the exact `f` is added last, and
/// `k·ln 2` added by fused multiply-adds. No division, and no special value in the
/// vector loop. Within 1 eps of |ln x| (tested against the f64 logarithm).
#[inline(always)]
fn log_core_f32(x: f32) -> f32 {
    log_parts_f32(x, 0.0)
}

/// `ln(2^-shift · x)` in f32 for a positive, normal, finite `x`.
#[inline(always)]
fn log_parts_f32(x: f32, shift: f32) -> f32 {
    const SQRT_HALF_BITS_F32: u32 = 0x3F35_04F3;
    let offset = x.to_bits().wrapping_sub(SQRT_HALF_BITS_F32);
    let k = ((offset as i32) >> 23) as f32 - shift;
    let m = f32::from_bits((offset & 0x007F_FFFF) + SQRT_HALF_BITS_F32);
    let f = m - 1.0;
    let ln_m = (f * f).mul_add(f.mul_add(polynomial(f, &LOG_F32_TERMS), -0.5), f);
    k.mul_add(f32::from_bits(0x3F31_7200), k.mul_add(f32::from_bits(0x35BF_BE8E), ln_m))
}

/// `ln x` in f32 for every input: subnormals scaled by 2^23 first, and the special values.
#[inline(always)]
fn log_anywhere_f32(x: f32) -> f32 {
    let tiny = x < f32::MIN_POSITIVE;
    let scaled = if tiny { x * 8_388_608.0 } else { x };
    let y = log_parts_f32(scaled, if tiny { 23.0 } else { 0.0 });
    let y = if x == f32::INFINITY { x } else { y };
    let y = if x == 0.0 { f32::NEG_INFINITY } else { y };
    let y = if x < 0.0 { f32::NAN } else { y };
    if x.is_nan() { x } else { y }
}

/// `ln x`: the fast cores on positive, normal, finite inputs, the full functions on the
/// rest.
pub(crate) struct Log;

impl super::RealCore for Log {
    const HAS_FALLBACK: bool = true;
    const FALLBACK_EVERYWHERE: bool = true;

    #[inline(always)]
    fn core(x: f64) -> f64 {
        log_core(x)
    }

    #[inline(always)]
    fn outside(x: f64) -> bool {
        log_outside(x)
    }

    #[inline(always)]
    fn fallback(x: f64) -> f64 {
        log_with_tail(x, 0.0)
    }

    #[inline(always)]
    fn core_f32(x: f32) -> f32 {
        log_core_f32(x)
    }

    #[inline(always)]
    fn outside_f32(x: f32) -> bool {
        const LOW: u32 = f32::MIN_POSITIVE.to_bits();
        x.to_bits().wrapping_sub(LOW) >= f32::INFINITY.to_bits() - LOW
    }

    #[inline(always)]
    fn fallback_f32(x: f32) -> f32 {
        log_anywhere_f32(x)
    }
}

real_cores! {
    /// `ln(1 + x)`.
    Log1p => log1p_core;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::test_support::{
        check_core_is_fallback, check_core_is_fallback_f32, check_every_length, check_f32, check_f64,
    };
    use crate::analytic::value;

    /// A deterministic spread of positive inputs: every binade from the smallest
    /// subnormal to the largest float with pseudo-random fractions, a dense sweep around
    /// 1 and around the √2 switch, and the edges.
    fn inputs() -> Vec<f64> {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut xs: Vec<f64> = (0..400_000).map(|_| f64::from_bits(next() % 0x7FF0_0000_0000_0000)).collect();
        xs.extend((0..100_000).map(|i| 1.0 + (i as f64 - 50_000.0) * 1e-7));
        xs.extend((0..50_000).map(|i| 2.0 + (i as f64 - 25_000.0) * 1e-6));
        xs.extend((0..50_000).map(|i| std::f64::consts::SQRT_2 * (1.0 + (i as f64 - 25_000.0) * 1e-9)));
        xs.extend((0..20_000).map(|i| std::f64::consts::FRAC_1_SQRT_2 * (1.0 + (i as f64 - 10_000.0) * 1e-9)));
        xs.extend([
            f64::from_bits(1),
            f64::MIN_POSITIVE,
            f64::MIN_POSITIVE * (1.0 - f64::EPSILON),
            f64::MAX,
            1.0,
            2.0,
            0.5,
            std::f64::consts::E,
            1.0 + f64::EPSILON,
            1.0 - f64::EPSILON / 2.0,
        ]);
        xs
    }

    #[test]
    fn f64_is_within_one_ulp_of_libm_everywhere() {
        let same = check_f64::<Log>("ln", &inputs(), f64::ln, 1.0);
        // Nearly always the correctly rounded value, as glibc's is.
        assert!(same >= 0.97, "{same} equal to libm");
    }

    #[test]
    fn special_values_follow_ieee() {
        assert_eq!(value::<Log, _>(1.0f64).to_bits(), 0.0f64.to_bits(), "ln 1 is +0");
        assert_eq!(value::<Log, _>(0.0f64), f64::NEG_INFINITY);
        assert_eq!(value::<Log, _>(-0.0f64), f64::NEG_INFINITY);
        assert_eq!(value::<Log, _>(f64::INFINITY), f64::INFINITY);
        assert!(value::<Log, _>(f64::NEG_INFINITY).is_nan());
        assert!(value::<Log, _>(-1.0f64).is_nan());
        assert!(value::<Log, _>(-f64::from_bits(1)).is_nan());
        assert!(value::<Log, _>(f64::NAN).is_nan());
        assert_eq!(value::<Log, _>(std::f64::consts::E), 1.0);
        assert_eq!(value::<Log, _>(2.0f64), std::f64::consts::LN_2);
        assert_eq!(value::<Log, _>(f64::from_bits(1)), -744.4400719213812, "smallest subnormal");
        assert_eq!(value::<Log, _>(f64::MAX), 709.782712893384);
        assert_eq!(value::<Log, _>(0.0f32), f32::NEG_INFINITY);
        assert!(value::<Log, _>(-2.0f32).is_nan());
    }

    #[test]
    fn f32_cores_meet_their_bounds() {
        let mut xs: Vec<f32> = (1..200_000u32).map(|i| f32::from_bits(i.wrapping_mul(21_467) % 0x7F80_0000)).collect();
        xs.extend((0..100_000).map(|i| 1.0 + (i as f32 - 50_000.0) * 1e-6));
        xs.extend((0..100_000).map(|i| std::f32::consts::SQRT_2 * (1.0 + (i as f32 - 50_000.0) * 1e-6)));
        xs.extend((0..200).map(|i| f32::from_bits(i * 40_000)));
        xs.extend([f32::MIN_POSITIVE, f32::MAX, f32::INFINITY, 1.0, 2.0, 0.5]);
        // The native f32 core: within 1 eps of |ln x| (as the f64 core).
        let ln = check_f32::<Log>("ln", &xs, f64::ln, 1.0);
        assert!(ln <= 0.75, "ln {ln}");
        // log1p rounds the f64 core once.
        check_f32::<Log1p>("log1p", &xs, f64::ln_1p, 0.51);
        let near_zero: Vec<f32> = (0..200_000).map(|i| (i as f32 - 100_000.0) * 1e-6).collect();
        check_f32::<Log1p>("log1p", &near_zero, f64::ln_1p, 0.51);
        assert_eq!(value::<Log, _>(1.0f32).to_bits(), 0.0f32.to_bits());
        assert_eq!(value::<Log, _>(f32::INFINITY), f32::INFINITY);
        assert!(value::<Log, _>(f32::NEG_INFINITY).is_nan() && value::<Log, _>(f32::NAN).is_nan());
        assert_eq!(value::<Log, _>(f32::from_bits(1)), -103.27893);
    }

    #[test]
    fn log1p_is_within_one_ulp_of_libm_everywhere() {
        let mut xs: Vec<f64> = inputs().iter().map(|x| x - 1.0).collect();
        xs.extend(inputs());
        xs.extend((0..100_000).map(|i| (i as f64 - 50_000.0) * 1e-9));
        xs.extend((1..1000).flat_map(|i| [f64::powi(2.0, -i), -f64::powi(2.0, -i)]));
        xs.extend((0..40_000).map(|i| -1.0 + f64::powi(2.0, -(i % 53)) * (1.0 + i as f64 * 1e-6)));
        let same = check_f64::<Log1p>("log1p", &xs, f64::ln_1p, 1.0);
        assert!(same >= 0.95, "{same} equal to libm");
        assert_eq!(value::<Log1p, _>(-0.0f64).to_bits(), (-0.0f64).to_bits());
        assert_eq!(value::<Log1p, _>(-1.0f64), f64::NEG_INFINITY);
        assert!(value::<Log1p, _>(-1.5f64).is_nan());
        assert!(value::<Log1p, _>(f64::NEG_INFINITY).is_nan());
        assert_eq!(value::<Log1p, _>(f64::INFINITY), f64::INFINITY);
        assert_eq!(value::<Log1p, _>(1e-300f64), 1e-300);
        assert!(value::<Log1p, _>(f64::NAN).is_nan());
        assert_eq!(value::<Log1p, _>(-1.0f32), f32::NEG_INFINITY);
    }

    #[test]
    fn every_length_and_alignment_gives_the_same_bits() {
        let mut xs: Vec<f64> = (0..67).map(|i| (i as f64 * 0.37 + 0.01).powi(3)).collect();
        // Inputs the fast cores leave to the full function, among the others.
        let rare = [0.0, -0.0, -2.0, f64::from_bits(3), f64::INFINITY, f64::NAN, 1e-310];
        for (i, x) in [3, 11, 20, 33, 47, 58, 66].into_iter().zip(rare) {
            xs[i] = x;
        }
        check_every_length::<Log>(&xs);
        check_every_length::<Log1p>(&xs);
    }

    /// The fast cores give the full functions' bits on every input they take: random
    /// bits over the whole positive range, the ends of the normal range, around 1.
    #[test]
    fn fast_cores_give_the_full_functions_bits() {
        let mut xs = inputs();
        xs.extend((0..20_000u64).map(|i| f64::from_bits(f64::MIN_POSITIVE.to_bits() + i)));
        xs.extend((0..20_000u64).map(|i| f64::from_bits(f64::MAX.to_bits() - i)));
        assert!(check_core_is_fallback::<Log>(&xs) > 600_000);
        let mut narrow: Vec<f32> =
            (1..400_000u32).map(|i| f32::from_bits(i.wrapping_mul(10_733) % 0x7F80_0000)).collect();
        narrow.extend((0..20_000u32).map(|i| f32::from_bits(f32::MIN_POSITIVE.to_bits() + i)));
        narrow.extend((0..20_000u32).map(|i| f32::from_bits(f32::MAX.to_bits() - i)));
        narrow.extend(xs.iter().map(|&x| x as f32));
        assert!(check_core_is_fallback_f32::<Log>(&narrow) > 600_000);
    }
}
