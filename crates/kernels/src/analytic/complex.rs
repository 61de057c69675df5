//! The complex analytic functions: exp, log, log1p, sqrt, rsqrt, sin, cos, tanh, expm1
//! and pow, each on `(re, im)` pairs of f64. complex128 runs them directly; complex64
//! widens its parts (exactly), runs the same code and rounds each part once, so it is
//! accurate to about half a unit of its own precision.
//!
//! Two rules shape every function:
//!
//! - **Accuracy.** Each is accurate to a few units in the last place of each part of the
//!   result wherever that part is not tiny beside the other (then relative to the modulus),
//!   over the whole plane: no formula subtracts nearly equal quantities. Where the textbook
//!   formula cancels, the function uses an exact rearrangement: `log` and `log1p` compute
//!   `|z|² − 1` and `|1 + z|² − 1` from error-free products and an exact sum, `tanh`
//!   divides by `sinh² x + cos² y` (both terms non-negative) instead of
//!   `cosh 2x + cos 2y`, `expm1` writes `cos y − 1` as `−2 sin²(y/2)`, and `sqrt` and
//!   `rsqrt` take the larger part from `|x| + |z|` (Kahan's method) with power-of-two
//!   scaling at the ends of the range.
//! - **Special values follow jax.lax** (0.10.2 on CPU, which lowers these through XLA's
//!   own expansions), including where that differs from C99 Annex G: a NaN part makes both
//!   parts NaN except where a result part is pinned (the imaginary part of `exp`,
//!   `expm1`, `tanh` of `x + 0i` is `+0`; `tanh(±inf + iy) = ±1 + 0i` even for a NaN `y`),
//!   `sqrt` chooses the branch by `y < 0` (so `sqrt(-1 - 0i) = +i`), while `rsqrt` follows
//!   `atan2` (so `rsqrt(-4 - 0i) = 0.5i`), `rsqrt(0) = inf + NaN·i`, and `log(inf + NaN·i)`
//!   is NaN in both parts. Each function states its cases.

use super::two_sum;

/// A complex scalar whose parts widen to f64 exactly and round back once.
pub(crate) trait WideComplex: Copy {
    /// `(re, im)` as f64.
    fn parts(self) -> (f64, f64);
    /// The value nearest `(re, im)`.
    fn from_parts(re: f64, im: f64) -> Self;
}

impl WideComplex for strata_tensor::c32 {
    #[inline(always)]
    fn parts(self) -> (f64, f64) {
        (f64::from(self.re), f64::from(self.im))
    }
    #[inline(always)]
    fn from_parts(re: f64, im: f64) -> Self {
        strata_tensor::c32::new(re as f32, im as f32)
    }
}

impl WideComplex for strata_tensor::c64 {
    #[inline(always)]
    fn parts(self) -> (f64, f64) {
        (self.re, self.im)
    }
    #[inline(always)]
    fn from_parts(re: f64, im: f64) -> Self {
        strata_tensor::c64::new(re, im)
    }
}

/// `f` of `z` through its f64 parts.
#[inline(always)]
pub(crate) fn apply<T: WideComplex>(z: T, f: fn(f64, f64) -> (f64, f64)) -> T {
    let (x, y) = z.parts();
    let (re, im) = f(x, y);
    T::from_parts(re, im)
}

/// `a · b` as the rounded product and its exact error (exact unless the product is below
/// the normal range).
#[inline(always)]
fn two_product(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

/// The sum of finite `terms` as `hi + lo`, accurate as if computed in four-fold precision
/// and then rounded (`hi` within an ulp of the exact sum, `lo` the rounded remainder):
/// Ogita, Rump and Oishi's SumK with K = 4 — three error-free sweeps of two-sums, which move
/// the sum into the last element and shrink the errors in the others, then a plain sum of
/// those. Branch-free (a partials list with data-dependent branches measured 46 % of
/// complex log1p's time). Its error, about `(5ε)⁴ · Σ|terms|`, is far below the smallest
/// non-zero `|z|² − 1` of double inputs near the unit circle (~2^-106).
fn exact_sum<const N: usize>(mut p: [f64; N]) -> (f64, f64) {
    for _ in 0..3 {
        for i in 1..N {
            let (s, e) = two_sum(p[i], p[i - 1]);
            p[i] = s;
            p[i - 1] = e;
        }
    }
    let lo: f64 = p[..N - 1].iter().sum();
    two_sum(p[N - 1], lo)
}

/// `ln √(a² + b²)` for finite `a`, `b` not both zero, without overflow or underflow:
/// `ln m + ½·ln(1 + (n/m)²)` with `m`, `n` the larger and smaller magnitude. Accurate
/// where the result is not near 0 (`|(a, b)|` away from 1), which is where callers use it.
fn log_hypot(a: f64, b: f64) -> f64 {
    let (a, b) = (a.abs(), b.abs());
    let (m, n) = if a >= b { (a, b) } else { (b, a) };
    let r = if m == n { 1.0 } else { n / m };
    m.ln() + 0.5 * (r * r).ln_1p()
}

/// `e^z`. Special values (lax): `exp(x + 0i)` has imaginary part `+0` for every `x`
/// (also NaN and ±inf); `exp(±inf + iy)` for an infinite or NaN `y` is NaN in both parts;
/// `exp(-inf + iy) = 0·cis(y)` for finite `y`. `e^x` is split as `(e^{x/2})²` where it
/// overflows alone, so `e^x·cos y` stays finite wherever it is representable.
pub(crate) fn exp(x: f64, y: f64) -> (f64, f64) {
    let (s, c) = y.sin_cos();
    let e = x.exp();
    let (re, im) = if e == f64::INFINITY {
        let h = (0.5 * x).exp();
        (h * c * h, h * s * h)
    } else {
        (e * c, e * s)
    };
    (re, if y == 0.0 { 0.0 } else { im })
}

/// `e^z − 1`: real part `expm1(x)·cos y − 2 sin²(y/2)` (no cancellation near 0), imaginary
/// part `e^x·sin y`, `+0` when `y == 0` (lax: `expm1(inf + 0i) = inf + 0i`). Past
/// `x = 709` (where `e^x` overflows alone) both parts are `e^{x/2}·(e^{x/2}·cis y)`, the
/// `−1` being far below their last bit.
pub(crate) fn expm1(x: f64, y: f64) -> (f64, f64) {
    let (s, c) = y.sin_cos();
    let (re, im) = if x > 709.0 {
        let h = (0.5 * x).exp();
        (h * c * h, h * s * h)
    } else {
        let half = (0.5 * y).sin();
        (x.exp_m1() * c - 2.0 * half * half, x.exp() * s)
    };
    (re, if y == 0.0 { 0.0 } else { im })
}

/// `ln z` (principal branch): imaginary part `atan2(y, x)`; real part `½·log1p(|z|² − 1)`
/// with `|z|² − 1` summed exactly near the unit circle, else `ln |z|` by [`log_hypot`].
/// A NaN part makes both parts NaN (lax; C99 would give `inf + NaN·i` for
/// `ln(inf + NaN·i)`); `ln 0 = -inf + atan2(±0, ±0)·i`.
pub(crate) fn log(x: f64, y: f64) -> (f64, f64) {
    if x.is_nan() || y.is_nan() {
        return (f64::NAN, f64::NAN);
    }
    let im = y.atan2(x);
    let (ax, ay) = (x.abs(), y.abs());
    if ax.is_infinite() || ay.is_infinite() {
        return (f64::INFINITY, im);
    }
    if ax == 0.0 && ay == 0.0 {
        return (f64::NEG_INFINITY, im);
    }
    let m = ax.max(ay);
    let n = ax.min(ay);
    // |z|² − 1 cancels where |z| is near 1 (m in [0.5, √2] with n not too small).
    if (0.5..=1.5).contains(&m) && m * m + n * n > 0.5 && m * m + n * n < 1.75 {
        let (m2, m2e) = two_product(m, m);
        let (n2, n2e) = two_product(n, n);
        let (hi, lo) = exact_sum([-1.0, m2, n2, m2e, n2e]);
        return (0.5 * (hi.ln_1p() + lo / (1.0 + hi)), im);
    }
    (log_hypot(ax, ay), im)
}

/// `ln(1 + z)` (principal branch), accurate near 0 and near `z = -1`: imaginary part
/// `atan2(y, 1 + x)`; real part `½·log1p(2x + x² + y²)` with the argument summed exactly,
/// except near `-1` (where `|1 + z|² − 1` is close to `-1` and its rounding would be
/// amplified) and for huge `|z|`, which take `ln |1 + z|` by [`log_hypot`] (`1 + x` is
/// exact near `-1`). A NaN part makes both parts NaN (lax).
pub(crate) fn log1p(x: f64, y: f64) -> (f64, f64) {
    if x.is_nan() || y.is_nan() {
        return (f64::NAN, f64::NAN);
    }
    let u = 1.0 + x;
    let im = y.atan2(u);
    let (ax, ay) = (x.abs(), y.abs());
    if ax.is_infinite() || ay.is_infinite() {
        return (f64::INFINITY, im);
    }
    if ax.max(ay) > 1e150 {
        // 1 + x = x to far below one part in 2^53 of |z|.
        return (log_hypot(x, y), im);
    }
    if u.abs() + ay < 0.5 {
        // Here x is in (-1.5, -0.5), so u = 1 + x is exact (Sterbenz); |1 + z| < 0.5 keeps
        // the logarithm away from 0, so ln|1 + z| is well conditioned.
        if u == 0.0 && ay == 0.0 {
            return (f64::NEG_INFINITY, im);
        }
        return (log_hypot(u, y), im);
    }
    let (x2, x2e) = two_product(x, x);
    let (y2, y2e) = two_product(y, y);
    let (hi, lo) = exact_sum([2.0 * x, x2, y2, x2e, y2e]);
    (0.5 * (hi.ln_1p() + lo / (1.0 + hi)), im)
}

/// For finite `x`, `y` not both zero: `(t, v)` with `t = √((|x| + |z|)/2)` (the larger
/// magnitude among the parts of `√z`) and `v = |y|/(2t)` (the other), scaled by powers of
/// two at the ends of the range so that `|x| + |z|` neither overflows nor loses bits
/// below the normal range.
fn sqrt_parts(x: f64, y: f64) -> (f64, f64) {
    const BIG: f64 = 1.0e300;
    const SMALL: f64 = 1.0e-300;
    let (mut ax, mut ay) = (x.abs(), y.abs());
    let m = ax.max(ay);
    // Scaling z by 4^k scales √z by 2^k; both factors are exact powers of two.
    let unscale = if m > BIG {
        ax *= 0.25;
        ay *= 0.25;
        2.0
    } else if m < SMALL {
        const UP: f64 = (1u128 << 120) as f64;
        ax *= UP * UP;
        ay *= UP * UP;
        1.0 / UP
    } else {
        1.0
    };
    let t = (0.5 * (ax + ax.hypot(ay))).sqrt();
    let v = ay / (2.0 * t);
    (t * unscale, v * unscale)
}

/// `√z` (principal branch). As jax.lax computes it, the side of the cut is chosen by
/// `y < 0`, so a negative zero imaginary part counts as positive: `√(-4 - 0i) = 2i`
/// (C99: `-2i`), and `√(±0 ± 0i) = 0 + 0i`. Infinite `y` gives `inf ± inf·i`; `x = +inf`
/// gives `inf ± 0i`, `x = -inf` gives `0 ± inf·i` (finite `y`); any NaN part, NaN in both.
pub(crate) fn sqrt(x: f64, y: f64) -> (f64, f64) {
    if x.is_nan() || y.is_nan() {
        return (f64::NAN, f64::NAN);
    }
    let sign = if y < 0.0 { -1.0 } else { 1.0 };
    if y.is_infinite() {
        return (f64::INFINITY, sign * f64::INFINITY);
    }
    if x == f64::INFINITY {
        return (f64::INFINITY, sign * 0.0);
    }
    if x == f64::NEG_INFINITY {
        return (0.0, sign * f64::INFINITY);
    }
    if x == 0.0 && y == 0.0 {
        return (0.0, 0.0);
    }
    let (t, v) = sqrt_parts(x, y);
    if x >= 0.0 { (t, sign * v) } else { (v, sign * t) }
}

/// `1/√z`, on the principal branch with the side of the cut chosen by the sign bit of `y`
/// (as `atan2(y, x)` chooses it, which is how jax.lax computes `rsqrt`): `rsqrt(-4 - 0i) =
/// 0.5i`. Special values (lax): `rsqrt(0) = inf + NaN·i`; an infinite `x` (or an infinite
/// `y` with a NaN `x`) gives `copysign(0, x) - copysign(0, y)·i`; a finite `x` with an
/// infinite `y` gives `0 ∓ 0i`; any other NaN part, NaN in both.
pub(crate) fn rsqrt(x: f64, y: f64) -> (f64, f64) {
    if x == 0.0 && y == 0.0 {
        return (f64::INFINITY, f64::NAN);
    }
    if x.is_infinite() || (y.is_infinite() && x.is_nan()) {
        return (0.0f64.copysign(x), -(0.0f64.copysign(y)));
    }
    if x.is_nan() || y.is_nan() {
        return (f64::NAN, f64::NAN);
    }
    if y.is_infinite() {
        return (0.0, -(0.0f64.copysign(y)));
    }
    let (t, v) = sqrt_parts(x, y);
    // √z = a + s·b·i with a, b ≥ 0 and s the sign of y; 1/√z = (a − s·b·i)/(a² + b²),
    // divided in Smith's order so that a² + b² is never formed.
    let (a, b) = if x >= 0.0 { (t, v) } else { (v, t) };
    let (re, im) = if a >= b {
        let r = b / a;
        let d = a + b * r;
        (1.0 / d, -r / d)
    } else {
        let r = a / b;
        let d = a * r + b;
        (r / d, -1.0 / d)
    };
    (re, if y.is_sign_negative() { -im } else { im })
}

/// `(u·cosh y, v·sinh y)` without cancellation or premature overflow: from
/// `E± = expm1(±y)` as `((E₊ + E₋ + 2)/2, (E₊ − E₋)/2)`, and past `|y| = 709` (where `e^|y|`
/// overflows alone while the products may not) as `(u·h/2)·h` and `±(v·h/2)·h` with
/// `h = e^{|y|/2}` (`cosh y` and `|sinh y|` agree to far below their last bit there).
fn scaled_cosh_sinh(u: f64, v: f64, y: f64) -> (f64, f64) {
    if y.abs() > 709.0 {
        let h = (0.5 * y.abs()).exp();
        return (u * 0.5 * h * h, (v * 0.5 * h * h).copysign(v * y));
    }
    let (ep, em) = (y.exp_m1(), (-y).exp_m1());
    (u * ((ep + em + 2.0) * 0.5), v * ((ep - em) * 0.5))
}

/// `sin z = sin x·cosh y + i·cos x·sinh y`; the real part is `+0` when `x == 0` (lax),
/// also for an infinite or NaN `y`.
pub(crate) fn sin(x: f64, y: f64) -> (f64, f64) {
    let (s, c) = x.sin_cos();
    let (re, im) = scaled_cosh_sinh(s, c, y);
    (if x == 0.0 { 0.0 } else { re }, im)
}

/// `cos z = cos x·cosh y − i·sin x·sinh y`; the imaginary part is `+0` when `x == 0`.
pub(crate) fn cos(x: f64, y: f64) -> (f64, f64) {
    let (s, c) = x.sin_cos();
    let (re, im) = scaled_cosh_sinh(c, -s, y);
    (re, if x == 0.0 { 0.0 } else { im })
}

/// `tanh z = (sinh x·cosh x + i·sin y·cos y) / (sinh² x + cos² y)`: the denominator is a
/// sum of two non-negative terms, so it does not cancel near the poles `x = 0`,
/// `y = π/2 + kπ`. Past `|x| = 22` the real part is `±1` and the imaginary part
/// `4·sin y·cos y·e^{−2|x|}`. Special values (lax): `tanh(±inf + iy) = ±1 ± 0i` (`+0i` for
/// an infinite or NaN `y`), a NaN `x` gives `NaN + 0i` when `y == 0` and NaN otherwise, an
/// infinite or NaN `y` with finite `x` gives NaN; `y == 0` gives an imaginary part `+0`.
pub(crate) fn tanh(x: f64, y: f64) -> (f64, f64) {
    if x.is_nan() {
        return (f64::NAN, if y == 0.0 { 0.0 } else { f64::NAN });
    }
    if !y.is_finite() {
        return if x.is_infinite() { (1.0f64.copysign(x), 0.0) } else { (f64::NAN, f64::NAN) };
    }
    if y == 0.0 {
        return (x.tanh(), 0.0);
    }
    let (s, c) = y.sin_cos();
    if x.abs() > 22.0 {
        return (1.0f64.copysign(x), 4.0 * s * c * (-2.0 * x.abs()).exp());
    }
    let sh = x.sinh();
    let den = sh * sh + c * c;
    (sh * x.cosh() / den, s * c / den)
}

/// `a^b` for complex `a = ar + ai·i`, `b = br + bi·i`, as jax.lax computes it: with
/// `r = |a|` and `t = atan2(ai, ar)`, `|a^b| = r^br·e^{−bi·t}` and `arg a^b = br·t +
/// bi·ln r`. Special values (lax, later rules win): `0^b = 0` for real `b > 0` (`1` for
/// `b = 0`); `a^0 = 1`; `1^b = 1`; `(+inf)^b = +inf` for real `b > 0` and `0` for real
/// `b < 0`; otherwise the formula (so `0^b` with `b` not a non-negative real is NaN).
pub(crate) fn pow(ar: f64, ai: f64, br: f64, bi: f64) -> (f64, f64) {
    let b_real = bi == 0.0;
    if ar == f64::INFINITY && ai == 0.0 && b_real && br != 0.0 && !br.is_nan() {
        return if br > 0.0 { (f64::INFINITY, 0.0) } else { (0.0, 0.0) };
    }
    if (ar == 1.0 && ai == 0.0) || (br == 0.0 && b_real) {
        return (1.0, 0.0);
    }
    let r = ar.hypot(ai);
    // hypot(inf, NaN) is inf in C; lax's modulus is NaN when a part is NaN.
    let r = if ar.is_nan() || ai.is_nan() { f64::NAN } else { r };
    if r == 0.0 && b_real && br >= 0.0 {
        return (0.0, 0.0);
    }
    let t = ai.atan2(ar);
    let modulus = r.powf(br) * (-bi * t).exp();
    let angle = br * t + bi * r.ln();
    let (s, c) = angle.sin_cos();
    (modulus * c, modulus * s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_sum_is_exact_for_cancelling_terms() {
        let (hi, lo) = exact_sum([1.0, 1e-30, -1.0, 3e-40, 0.0]);
        assert_eq!(hi, 1e-30 + 3e-40);
        assert!(lo.abs() <= 1e-30 * f64::EPSILON);
        let (hi, _) = exact_sum([-1.0, 1.0 + f64::EPSILON, -f64::EPSILON, 2f64.powi(-80), 0.0]);
        assert_eq!(hi, 2f64.powi(-80));
    }
}
