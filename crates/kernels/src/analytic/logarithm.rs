//! `ln x` for real floats as straight-line arithmetic that the compiler vectorises (the
//! same approach as `exponential.rs`: one libm call per element was the whole cost).
//!
//! Method: `x = 2^k · m` with `m` in `[√2/2, √2)` read off the bits (subnormals first
//! scaled by 2^54, exactly), and `ln m = ln(1 + f)` with `f = m − 1` exact. With
//! `s = f / (2 + f)`, `ln(1 + f) = 2·atanh(s) = 2s + 2s·T` where
//! `T = Σ_{n≥1} s^(2n) / (2n + 1)`; since `f = 2s + s·f`, this is `f − s·(f − 2T)`: the
//! exact `f` plus a correction about `f²/2` in size, so the rounding of the division
//! only touches the correction. `|s| ≤ 0.1716`, so eleven terms of `T` leave a
//! truncation error below 2⁻⁶². Then `k·ln 2` is added with `ln 2` split in two: when
//! `|k| ≤ 1` the high part plus `f` is exact (both are multiples of 2⁻⁵³ and the sum is
//! below 1), so it is added first; for larger `|k|` the small part is summed first and
//! rounds once against a result above 1. Error: below 1 ulp against a correctly rounded
//! logarithm, equal to glibc's on nearly every input (tested). f32 runs the same f64
//! core and rounds once.
//!
//! Special values come from selects at the end (no branches): `ln(±0) = −∞`,
//! `ln(+∞) = +∞`, NaN for negative inputs and NaN inputs. No fused multiply-adds on any
//! path, so results are bit-identical whatever the CPU, the vector width or the position
//! of an element in a slice.

use super::exponential::{LN2_HI, LN2_LO, ROUND_SHIFT};
use super::{CoreFloat, RealCore, map_slice};

/// 2^54: scales a subnormal into the normal range exactly.
const TWO_54: f64 = 18_014_398_509_481_984.0;
/// The low 52 bits: the fraction field.
const FRACTION_BITS: u64 = (1 << 52) - 1;
/// The exponent field of 1.0.
const ONE_EXPONENT_BITS: u64 = 0x3FF0_0000_0000_0000;
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

/// `ln x` in f64 (see the module documentation).
#[inline(always)]
fn log_core(x: f64) -> f64 {
    log_with_tail(x, 0.0)
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

/// `ln x + tail` for a `tail` far below the result's last place (0 for `ln` itself; the
/// rounding error of `1 + x` for `ln(1 + x)`), with the special values of `ln x`.
#[inline(always)]
fn log_with_tail(x: f64, tail: f64) -> f64 {
    let tiny = x < f64::MIN_POSITIVE;
    let scaled = if tiny { x * TWO_54 } else { x };
    let bits = scaled.to_bits();
    // The biased exponent as a float without an integer conversion (which AVX2 lacks):
    // placed in the low bits of 1.5·2^52 it is that float's excess over 1.5·2^52.
    let biased = f64::from_bits(ROUND_SHIFT.to_bits() | ((bits >> 52) & 0x7FF)) - ROUND_SHIFT;
    let m = f64::from_bits((bits & FRACTION_BITS) | ONE_EXPONENT_BITS);
    let above = m > std::f64::consts::SQRT_2;
    let m = if above { m * 0.5 } else { m };
    let k = biased - 1023.0 + if above { 1.0 } else { 0.0 } - if tiny { 54.0 } else { 0.0 };
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let mut t = INV_ODD[0];
    for c in &INV_ODD[1..] {
        t = t * z + c;
    }
    let t = t * z;
    // ln(1 + f) = f − correction, and k·ln2 = k·LN2_HI + k·LN2_LO.
    let correction = s * (f - (t + t)) - k * LN2_LO - tail;
    let near = (k * LN2_HI + f) - correction;
    let far = k * LN2_HI + (f - correction);
    let y = if k.abs() <= 1.0 { near } else { far };
    let y = if x == f64::INFINITY { x } else { y };
    let y = if x == 0.0 { f64::NEG_INFINITY } else { y };
    let y = if x < 0.0 { f64::NAN } else { y };
    if x.is_nan() { x } else { y }
}

/// `ln x` of one value.
#[inline(always)]
pub(crate) fn log_value<T: CoreFloat>(x: T) -> T {
    T::narrow(log_core(x.widen()))
}

/// `out[i] = ln a[i]`, at the widest SIMD level the CPU has.
pub(crate) fn log_slice<T: CoreFloat>(a: &[T], out: &mut [T]) {
    map_slice::<T, Log>(a, out)
}

/// `ln x` for [`map_slice`].
pub(crate) struct Log;

impl RealCore for Log {
    #[inline(always)]
    fn core(x: f64) -> f64 {
        log_core(x)
    }
}

/// `ln(1 + x)` of one value.
#[inline(always)]
pub(crate) fn log1p_value<T: CoreFloat>(x: T) -> T {
    T::narrow(log1p_core(x.widen()))
}

/// `out[i] = ln(1 + a[i])`, at the widest SIMD level the CPU has.
pub(crate) fn log1p_slice<T: CoreFloat>(a: &[T], out: &mut [T]) {
    map_slice::<T, Log1p>(a, out)
}

/// `ln(1 + x)` for [`map_slice`].
pub(crate) struct Log1p;

impl RealCore for Log1p {
    #[inline(always)]
    fn core(x: f64) -> f64 {
        log1p_core(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distance in units of the last place of `want`; 0 when both are the same
    /// infinity or NaN.
    fn ulps(got: f64, want: f64) -> f64 {
        if got == want || (got.is_nan() && want.is_nan()) {
            return 0.0;
        }
        if !got.is_finite() || !want.is_finite() {
            return f64::INFINITY;
        }
        (got - want).abs() / (want.abs() * f64::EPSILON).max(f64::from_bits(1))
    }

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
        let xs = inputs();
        let mut out = vec![0.0; xs.len()];
        log_slice(&xs, &mut out);
        let mut same = 0usize;
        for (&x, &got) in xs.iter().zip(&out) {
            let want = x.ln();
            same += usize::from(got.to_bits() == want.to_bits());
            assert!(ulps(got, want) <= 1.0, "ln({x:e}) = {got:e}, libm {want:e}");
            // The scalar path is the same arithmetic.
            assert_eq!(log_value(x).to_bits(), got.to_bits(), "ln({x:e}) scalar vs slice");
        }
        // Nearly always the correctly rounded value, as glibc's is.
        assert!(same as f64 >= 0.97 * xs.len() as f64, "{same} of {} equal to libm", xs.len());
    }

    #[test]
    fn special_values_follow_ieee() {
        assert_eq!(log_value(1.0f64).to_bits(), 0.0f64.to_bits(), "ln 1 is +0");
        assert_eq!(log_value(0.0f64), f64::NEG_INFINITY);
        assert_eq!(log_value(-0.0f64), f64::NEG_INFINITY);
        assert_eq!(log_value(f64::INFINITY), f64::INFINITY);
        assert!(log_value(f64::NEG_INFINITY).is_nan());
        assert!(log_value(-1.0f64).is_nan());
        assert!(log_value(-f64::from_bits(1)).is_nan());
        assert!(log_value(f64::NAN).is_nan());
        assert_eq!(log_value(std::f64::consts::E), 1.0);
        assert_eq!(log_value(2.0f64), std::f64::consts::LN_2);
        assert_eq!(log_value(f64::from_bits(1)), -744.4400719213812, "smallest subnormal");
        assert_eq!(log_value(f64::MAX), 709.782712893384);
        assert_eq!(log_value(0.0f32), f32::NEG_INFINITY);
        assert!(log_value(-2.0f32).is_nan());
    }

    #[test]
    fn f32_matches_the_rounded_f64_logarithm() {
        let mut xs: Vec<f32> = (1..200_000u32).map(|i| f32::from_bits(i.wrapping_mul(21_467) % 0x7F80_0000)).collect();
        xs.extend((0..100_000).map(|i| 1.0 + (i as f32 - 50_000.0) * 1e-6));
        let mut out = vec![0.0f32; xs.len()];
        log_slice(&xs, &mut out);
        for (&x, &got) in xs.iter().zip(&out) {
            let want = f64::from(x).ln();
            let spacing = (want.abs() * f64::from(f32::EPSILON)).max(f64::from(f32::from_bits(1)));
            assert!((f64::from(got) - want).abs() <= spacing, "ln({x:e}) = {got:e}, want {want:e}");
        }
    }

    #[test]
    fn log1p_is_within_one_ulp_of_libm_everywhere() {
        let mut xs: Vec<f64> = inputs().iter().map(|x| x - 1.0).collect();
        xs.extend(inputs());
        xs.extend((0..100_000).map(|i| (i as f64 - 50_000.0) * 1e-9));
        xs.extend((1..1000).flat_map(|i| [f64::powi(2.0, -i), -f64::powi(2.0, -i)]));
        xs.extend((0..40_000).map(|i| -1.0 + f64::powi(2.0, -(i % 53)) * (1.0 + i as f64 * 1e-6)));
        let mut out = vec![0.0; xs.len()];
        log1p_slice(&xs, &mut out);
        let mut same = 0usize;
        for (&x, &got) in xs.iter().zip(&out) {
            let want = x.ln_1p();
            same += usize::from(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()));
            assert!(ulps(got, want) <= 1.0, "log1p({x:e}) = {got:e}, libm {want:e}");
            assert_eq!(log1p_value(x).to_bits(), got.to_bits(), "log1p({x:e}) scalar vs slice");
        }
        assert!(same as f64 >= 0.95 * xs.len() as f64, "{same} of {} equal to libm", xs.len());
        assert_eq!(log1p_value(-0.0f64).to_bits(), (-0.0f64).to_bits());
        assert_eq!(log1p_value(-1.0f64), f64::NEG_INFINITY);
        assert!(log1p_value(-1.5f64).is_nan());
        assert!(log1p_value(f64::NEG_INFINITY).is_nan());
        assert_eq!(log1p_value(f64::INFINITY), f64::INFINITY);
        assert_eq!(log1p_value(1e-300f64), 1e-300);
        assert!(log1p_value(f64::NAN).is_nan());
        assert_eq!(log1p_value(-1.0f32), f32::NEG_INFINITY);
    }

    #[test]
    fn every_length_and_alignment_gives_the_same_bits() {
        let xs: Vec<f64> = (0..67).map(|i| (i as f64 * 0.37 + 0.01).powi(3)).collect();
        for start in 0..8 {
            for end in start..xs.len() {
                let mut out = vec![0.0; end - start];
                log_slice(&xs[start..end], &mut out);
                for (&x, &got) in xs[start..end].iter().zip(&out) {
                    assert_eq!(got.to_bits(), log_value(x).to_bits());
                }
            }
        }
    }
}
