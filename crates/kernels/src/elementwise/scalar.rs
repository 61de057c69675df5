//! `ElementwiseScalar`: the per-dtype arithmetic every dense family is generic over,
//! with jax.lax semantics. Implemented once per dtype *family* (real floats, integers,
//! complex, bool) by one macro each.
//!
//! The methods are total so that inner loops stay branch-free: which (op, dtype) pairs
//! exist is decided by the configs (`BinaryOp::supports`, ...) before a kernel runs, and
//! a method of a pair that does not exist (say `exp` on `i32`) is never called; it
//! returns its first operand unchanged.

use strata_tensor::config::UnaryOp;
use strata_tensor::{Scalar, c32, c64};

use crate::analytic::{
    self,
    complex::{self, WideComplex},
    exponential::{Exp, Expm1, Tanh},
    logarithm::{Log, Log1p},
    trigonometric::{Cos, Sin},
};
use crate::structural::CastScalar;

/// Elementwise arithmetic of one dtype, with jax.lax semantics.
pub trait ElementwiseScalar: Scalar + CastScalar {
    /// The result type of `abs` and `|x|²`: the real counterpart for complex.
    type RealPart: ElementwiseScalar;

    /// `a + b` (wrapping for integers).
    fn add(a: Self, b: Self) -> Self;
    /// `a - b` (wrapping for integers).
    fn sub(a: Self, b: Self) -> Self;
    /// `a * b` (wrapping for integers).
    fn mul(a: Self, b: Self) -> Self;
    /// `a / b`: integers truncate, `x / 0 = -1`, `MIN / -1 = MIN`.
    fn div(a: Self, b: Self) -> Self;
    /// Remainder with the dividend's sign: `fmod` for floats, `x % 0 = x`, `MIN % -1 = 0`.
    fn rem(a: Self, b: Self) -> Self;
    /// `a ** b`.
    fn pow(a: Self, b: Self) -> Self;
    /// NaN-propagating maximum, `-0 < +0`, lexicographic for complex, or for bool.
    fn max(a: Self, b: Self) -> Self;
    /// NaN-propagating minimum, `-0 < +0`, lexicographic for complex, and for bool.
    fn min(a: Self, b: Self) -> Self;
    /// `clamp(lo, x, hi)` as XLA computes it: `min(max(x, lo), hi)` with the rules of
    /// [`max`](Self::max) and [`min`](Self::min); complex overrides it (XLA compares
    /// complex bounds by real part only).
    #[inline(always)]
    fn clamp(lo: Self, x: Self, hi: Self) -> Self {
        Self::min(Self::max(x, lo), hi)
    }
    /// `a == b`.
    fn equal(a: Self, b: Self) -> bool;
    /// `a < b` (IEEE for floats, `false < true`).
    fn less(a: Self, b: Self) -> bool;
    /// `a <= b`.
    fn less_eq(a: Self, b: Self) -> bool;
    /// `-x` (wrapping).
    fn neg(x: Self) -> Self;
    /// Complex conjugate (identity on reals; `conj` of a real tensor is a cast to complex,
    /// decided by the kernel).
    fn conj(x: Self) -> Self;
    /// `|x|` (wrapping for integers, modulus for complex).
    fn abs(x: Self) -> Self::RealPart;
    /// `|x|²` (real for complex).
    fn abs_sq(x: Self) -> Self::RealPart;
    /// Sign: -1, 0, 1; NaN and ±0 kept; `z / |z|` for complex.
    fn sign(x: Self) -> Self;

    // The analytic functions exist for floats and complex only (integers and bool get an
    // `Unsupported` error from the config first); the defaults are the never-called
    // identity the module doc describes, so only those families implement them.
    /// `e^x`.
    fn exp(x: Self) -> Self {
        x
    }
    /// Runs `op` over a whole slice where this type has a faster form than one call
    /// per element (the same values as the per-element function), returning whether it
    /// did; `false` leaves `out` untouched for the caller's element loop.
    #[inline(always)]
    fn analytic_slice(op: UnaryOp, a: &[Self], out: &mut [Self]) -> bool {
        let _ = (op, a, out);
        false
    }
    /// `ln x`.
    fn log(x: Self) -> Self {
        x
    }
    /// `sin x`.
    fn sin(x: Self) -> Self {
        x
    }
    /// `cos x`.
    fn cos(x: Self) -> Self {
        x
    }
    /// `tanh x`.
    fn tanh(x: Self) -> Self {
        x
    }
    /// `√x`.
    fn sqrt(x: Self) -> Self {
        x
    }
    /// `1 / √x`.
    fn rsqrt(x: Self) -> Self {
        x
    }
    /// `e^x - 1`.
    fn expm1(x: Self) -> Self {
        x
    }
    /// `ln(1 + x)`.
    fn log1p(x: Self) -> Self {
        x
    }
    /// The initial value of a `max` reduction (lax's): -inf, integer MIN, `false`,
    /// `-inf + 0i` for complex.
    fn max_identity() -> Self;
    /// The initial value of a `min` reduction: +inf, integer MAX, `true`, `+inf + 0i`.
    fn min_identity() -> Self;
}

macro_rules! impl_float {
    ($t:ty) => {
        impl ElementwiseScalar for $t {
            type RealPart = $t;
            #[inline(always)]
            fn add(a: Self, b: Self) -> Self {
                a + b
            }
            #[inline(always)]
            fn sub(a: Self, b: Self) -> Self {
                a - b
            }
            #[inline(always)]
            fn mul(a: Self, b: Self) -> Self {
                a * b
            }
            #[inline(always)]
            fn div(a: Self, b: Self) -> Self {
                a / b
            }
            #[inline(always)]
            fn rem(a: Self, b: Self) -> Self {
                // Rust's float `%` is C fmod: truncated quotient, sign of the dividend.
                a % b
            }
            #[inline(always)]
            fn pow(a: Self, b: Self) -> Self {
                a.powf(b)
            }
            #[inline(always)]
            fn max(a: Self, b: Self) -> Self {
                if a.is_nan() {
                    a
                } else if b.is_nan() || b > a || (b == a && a.is_sign_negative()) {
                    b
                } else {
                    a
                }
            }
            #[inline(always)]
            fn min(a: Self, b: Self) -> Self {
                if a.is_nan() {
                    a
                } else if b.is_nan() || b < a || (b == a && b.is_sign_negative()) {
                    b
                } else {
                    a
                }
            }
            #[inline(always)]
            fn equal(a: Self, b: Self) -> bool {
                a == b
            }
            #[inline(always)]
            fn less(a: Self, b: Self) -> bool {
                a < b
            }
            #[inline(always)]
            fn less_eq(a: Self, b: Self) -> bool {
                a <= b
            }
            #[inline(always)]
            fn neg(x: Self) -> Self {
                -x
            }
            #[inline(always)]
            fn conj(x: Self) -> Self {
                x
            }
            #[inline(always)]
            fn abs(x: Self) -> Self {
                x.abs()
            }
            #[inline(always)]
            fn abs_sq(x: Self) -> Self {
                x * x
            }
            #[inline(always)]
            fn sign(x: Self) -> Self {
                if x.is_nan() || x == 0.0 { x } else { (1.0 as $t).copysign(x) }
            }
            #[inline(always)]
            fn exp(x: Self) -> Self {
                analytic::value::<Exp, _>(x)
            }
            #[inline(always)]
            fn analytic_slice(op: UnaryOp, a: &[Self], out: &mut [Self]) -> bool {
                match op {
                    UnaryOp::Exp => analytic::map_slice::<Self, Exp>(a, out),
                    UnaryOp::Log => analytic::map_slice::<Self, Log>(a, out),
                    UnaryOp::Log1p => analytic::map_slice::<Self, Log1p>(a, out),
                    UnaryOp::Expm1 => analytic::map_slice::<Self, Expm1>(a, out),
                    UnaryOp::Tanh => analytic::map_slice::<Self, Tanh>(a, out),
                    UnaryOp::Sin => analytic::map_slice::<Self, Sin>(a, out),
                    UnaryOp::Cos => analytic::map_slice::<Self, Cos>(a, out),
                    _ => return false,
                }
                true
            }
            #[inline(always)]
            fn log(x: Self) -> Self {
                analytic::value::<Log, _>(x)
            }
            #[inline(always)]
            fn sin(x: Self) -> Self {
                analytic::value::<Sin, _>(x)
            }
            #[inline(always)]
            fn cos(x: Self) -> Self {
                analytic::value::<Cos, _>(x)
            }
            #[inline(always)]
            fn tanh(x: Self) -> Self {
                analytic::value::<Tanh, _>(x)
            }
            #[inline(always)]
            fn sqrt(x: Self) -> Self {
                x.sqrt()
            }
            #[inline(always)]
            fn rsqrt(x: Self) -> Self {
                // f32 divides in f64 and rounds once (correctly rounded but for rare double
                // roundings); f64 is within one ulp.
                (1.0 / f64::from(x).sqrt()) as $t
            }
            #[inline(always)]
            fn expm1(x: Self) -> Self {
                analytic::value::<Expm1, _>(x)
            }
            #[inline(always)]
            fn log1p(x: Self) -> Self {
                analytic::value::<Log1p, _>(x)
            }
            fn max_identity() -> Self {
                <$t>::NEG_INFINITY
            }
            fn min_identity() -> Self {
                <$t>::INFINITY
            }
        }
    };
}

macro_rules! impl_int {
    ($t:ty) => {
        impl ElementwiseScalar for $t {
            type RealPart = $t;
            #[inline(always)]
            fn add(a: Self, b: Self) -> Self {
                a.wrapping_add(b)
            }
            #[inline(always)]
            fn sub(a: Self, b: Self) -> Self {
                a.wrapping_sub(b)
            }
            #[inline(always)]
            fn mul(a: Self, b: Self) -> Self {
                a.wrapping_mul(b)
            }
            #[inline(always)]
            fn div(a: Self, b: Self) -> Self {
                if b == 0 { -1 } else { a.wrapping_div(b) }
            }
            #[inline(always)]
            fn rem(a: Self, b: Self) -> Self {
                if b == 0 { a } else { a.wrapping_rem(b) }
            }
            fn pow(a: Self, _b: Self) -> Self {
                // lax.pow rejects integers (`BinaryOp::Pow` is Unsupported there).
                a
            }
            #[inline(always)]
            fn max(a: Self, b: Self) -> Self {
                Ord::max(a, b)
            }
            #[inline(always)]
            fn min(a: Self, b: Self) -> Self {
                Ord::min(a, b)
            }
            #[inline(always)]
            fn equal(a: Self, b: Self) -> bool {
                a == b
            }
            #[inline(always)]
            fn less(a: Self, b: Self) -> bool {
                a < b
            }
            #[inline(always)]
            fn less_eq(a: Self, b: Self) -> bool {
                a <= b
            }
            #[inline(always)]
            fn neg(x: Self) -> Self {
                x.wrapping_neg()
            }
            #[inline(always)]
            fn conj(x: Self) -> Self {
                x
            }
            #[inline(always)]
            fn abs(x: Self) -> Self {
                x.wrapping_abs()
            }
            #[inline(always)]
            fn abs_sq(x: Self) -> Self {
                x.wrapping_mul(x)
            }
            #[inline(always)]
            fn sign(x: Self) -> Self {
                x.signum()
            }
            fn max_identity() -> Self {
                <$t>::MIN
            }
            fn min_identity() -> Self {
                <$t>::MAX
            }
        }
    };
}

macro_rules! impl_complex {
    ($t:ty, $r:ty) => {
        impl ElementwiseScalar for $t {
            type RealPart = $r;
            #[inline(always)]
            fn add(a: Self, b: Self) -> Self {
                a + b
            }
            #[inline(always)]
            fn sub(a: Self, b: Self) -> Self {
                a - b
            }
            #[inline(always)]
            fn mul(a: Self, b: Self) -> Self {
                // The textbook product, in the dtype's own precision (vectorises; a complex64
                // product computed on f64 parts measured 3x slower in cache).
                a * b
            }
            #[inline(always)]
            fn div(a: Self, b: Self) -> Self {
                // XLA's complex division in the dtype's own precision: Smith's algorithm
                // (scaled by the larger part of the divisor, so |b|² is never formed); then,
                // only when both parts came out NaN, C99 Annex G's recovery of zeros and
                // infinities as XLA applies it.
                let (ar, ai, br, bi) = (a.re, a.im, b.re, b.im);
                let (re, im) = if br.abs() < bi.abs() {
                    let r = br / bi;
                    let den = bi + r * br;
                    ((ar * r + ai) / den, (ai * r - ar) / den)
                } else {
                    let r = bi / br;
                    let den = br + r * bi;
                    ((ar + ai * r) / den, (ai - ar * r) / den)
                };
                if !(re.is_nan() && im.is_nan()) {
                    return <$t>::new(re, im);
                }
                let inf = <$r>::INFINITY;
                let unit = |v: $r| (if v.is_infinite() { 1.0 as $r } else { 0.0 }).copysign(v);
                if br == 0.0 && bi == 0.0 && !(ar.is_nan() && ai.is_nan()) {
                    // x / 0: each part divided by a zero of the divisor's real sign.
                    let q = inf.copysign(br);
                    <$t>::new(q * ar, q * ai)
                } else if (ar.is_infinite() || ai.is_infinite()) && br.is_finite() && bi.is_finite() {
                    let (a1, a2) = (unit(ar), unit(ai));
                    <$t>::new((a1 * br + a2 * bi) * inf, (a2 * br - a1 * bi) * inf)
                } else if (br.is_infinite() || bi.is_infinite()) && ar.is_finite() && ai.is_finite() {
                    let (b1, b2) = (unit(br), unit(bi));
                    <$t>::new((ar * b1 + ai * b2) * 0.0, (ai * b1 - ar * b2) * 0.0)
                } else {
                    <$t>::new(re, im)
                }
            }
            fn rem(a: Self, _b: Self) -> Self {
                a
            }
            fn pow(a: Self, b: Self) -> Self {
                let ((ar, ai), (br, bi)) = (a.parts(), b.parts());
                let (re, im) = complex::pow(ar, ai, br, bi);
                <$t as WideComplex>::from_parts(re, im)
            }
            #[inline(always)]
            fn max(a: Self, b: Self) -> Self {
                // XLA's lexicographic select: `a` only when it compares strictly greater;
                // every comparison with NaN is false, so a NaN part selects `b`.
                if a.re > b.re || (a.re == b.re && a.im > b.im) { a } else { b }
            }
            #[inline(always)]
            fn min(a: Self, b: Self) -> Self {
                // As `max`: `a` only when strictly smaller, so a NaN part selects `b`.
                if a.re < b.re || (a.re == b.re && a.im < b.im) { a } else { b }
            }
            #[inline(always)]
            fn clamp(lo: Self, x: Self, hi: Self) -> Self {
                // XLA's complex clamp compares real parts only, keeping the bound on a
                // tie: `m = lo.re >= x.re ? lo : x`, then `m.re <= hi.re ? m : hi`
                // (jax.lax.clamp(5i, 3i, 4i) = 5i; a NaN real part never wins a compare).
                let m = if lo.re >= x.re { lo } else { x };
                if m.re <= hi.re { m } else { hi }
            }
            #[inline(always)]
            fn equal(a: Self, b: Self) -> bool {
                a == b
            }
            fn less(_a: Self, _b: Self) -> bool {
                false
            }
            fn less_eq(_a: Self, _b: Self) -> bool {
                false
            }
            #[inline(always)]
            fn neg(x: Self) -> Self {
                -x
            }
            #[inline(always)]
            fn conj(x: Self) -> Self {
                x.conj()
            }
            #[inline(always)]
            fn abs(x: Self) -> $r {
                // hypot(NaN, ±inf) is +inf in C; XLA's complex abs gives NaN.
                if x.re.is_nan() || x.im.is_nan() { <$r>::NAN } else { x.norm() }
            }
            #[inline(always)]
            fn abs_sq(x: Self) -> $r {
                x.re * x.re + x.im * x.im
            }
            fn sign(x: Self) -> Self {
                if x.re == 0.0 && x.im == 0.0 { x } else { x / x.norm() }
            }
            // The analytic functions run on f64 parts (`analytic::complex`).
            fn exp(x: Self) -> Self {
                complex::apply(x, complex::exp)
            }
            fn log(x: Self) -> Self {
                complex::apply(x, complex::log)
            }
            fn sin(x: Self) -> Self {
                complex::apply(x, complex::sin)
            }
            fn cos(x: Self) -> Self {
                complex::apply(x, complex::cos)
            }
            fn tanh(x: Self) -> Self {
                complex::apply(x, complex::tanh)
            }
            fn sqrt(x: Self) -> Self {
                complex::apply(x, complex::sqrt)
            }
            fn rsqrt(x: Self) -> Self {
                complex::apply(x, complex::rsqrt)
            }
            fn expm1(x: Self) -> Self {
                complex::apply(x, complex::expm1)
            }
            fn log1p(x: Self) -> Self {
                complex::apply(x, complex::log1p)
            }
            fn max_identity() -> Self {
                // jax.lax.reduce_max's init value for complex: -inf + 0i.
                <$t>::new(<$r>::NEG_INFINITY, 0.0)
            }
            fn min_identity() -> Self {
                <$t>::new(<$r>::INFINITY, 0.0)
            }
        }
    };
}

impl_float!(f32);
impl_float!(f64);
impl_int!(i32);
impl_int!(i64);
impl_complex!(c32, f32);
impl_complex!(c64, f64);

impl ElementwiseScalar for bool {
    type RealPart = bool;
    fn add(a: Self, _b: Self) -> Self {
        a
    }
    fn sub(a: Self, _b: Self) -> Self {
        a
    }
    fn mul(a: Self, _b: Self) -> Self {
        a
    }
    fn div(a: Self, _b: Self) -> Self {
        a
    }
    fn rem(a: Self, _b: Self) -> Self {
        a
    }
    fn pow(a: Self, _b: Self) -> Self {
        a
    }
    #[inline(always)]
    fn max(a: Self, b: Self) -> Self {
        a | b
    }
    #[inline(always)]
    fn min(a: Self, b: Self) -> Self {
        a & b
    }
    #[inline(always)]
    fn equal(a: Self, b: Self) -> bool {
        a == b
    }
    #[inline(always)]
    fn less(a: Self, b: Self) -> bool {
        !a & b
    }
    #[inline(always)]
    fn less_eq(a: Self, b: Self) -> bool {
        !a | b
    }
    fn neg(x: Self) -> Self {
        x
    }
    fn conj(x: Self) -> Self {
        x
    }
    fn abs(x: Self) -> Self {
        x
    }
    fn abs_sq(x: Self) -> Self {
        x
    }
    fn sign(x: Self) -> Self {
        x
    }
    fn max_identity() -> Self {
        false
    }
    fn min_identity() -> Self {
        true
    }
}
