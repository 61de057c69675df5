//! Analytic kernels: exp, log, sin, cos, tanh, sqrt, rsqrt, expm1, log1p and pow, on
//! f32, f64, c32 and c64 (integers and bool get an Unsupported error). They share the
//! elementwise engine; this module names them.
//!
//! On real floats, exp, expm1 and tanh (`exponential.rs`), log and log1p
//! (`logarithm.rs`), sin and cos (`trigonometric.rs`) are our own branch-free f64 cores,
//! and exp, log, sin, cos and tanh also have native f32 cores (f32 expm1 and log1p round
//! the f64 core); `map_slice` runs them over slices at the widest SIMD level the CPU has,
//! giving the same bits on every path; each documents its method and tested error.
//! sqrt is the hardware's and real pow is libm's. The complex functions (`complex.rs`)
//! are our own formulas on f64 parts, free of cancellation, with jax.lax's special values.
//!
//! ```
//! use strata_kernels::{KernelContext, analytic};
//! use strata_tensor::{ErrorKind, Tensor};
//! let ctx = KernelContext::sequential();
//! let x = Tensor::from_vec(vec![0.0f64, 1.0], &[2]).unwrap();
//! let e = analytic::exp(&ctx, (&x).into()).unwrap();
//! assert_eq!(e.as_typed::<f64>().unwrap().data(), &[1.0, std::f64::consts::E]);
//! let i = Tensor::from_vec(vec![1i32], &[1]).unwrap();
//! assert_eq!(analytic::exp(&ctx, (&i).into()).unwrap_err().kind(), ErrorKind::Unsupported);
//! ```

pub(crate) mod complex;
pub(crate) mod exponential;
pub(crate) mod logarithm;
pub(crate) mod trigonometric;

use strata_tensor::config::{BinaryOp, UnaryOp};
use strata_tensor::{Result, Tensor, TensorRead, TensorWrite};

use std::marker::PhantomData;

use crate::context::KernelContext;
use crate::elementwise::{binary, binary_into, named_unary, unary, unary_into};
use crate::simd::{self, SimdTask};

named_unary! {
    exp, exp_into, Exp;
    log, log_into, Log;
    sin, sin_into, Sin;
    cos, cos_into, Cos;
    tanh, tanh_into, Tanh;
    sqrt, sqrt_into, Sqrt;
    rsqrt, rsqrt_into, Rsqrt;
    expm1, expm1_into, Expm1;
    log1p, log1p_into, Log1p;
}

/// `a ** b` elementwise (lax.pow), on floats and complex; integers are `Unsupported`, as
/// `lax.pow` rejects them.
pub fn pow(ctx: &KernelContext<'_>, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
    binary(ctx, BinaryOp::Pow, a, b)
}

/// [`pow`] into `out`.
pub fn pow_into(ctx: &KernelContext<'_>, a: TensorRead<'_>, b: TensorRead<'_>, out: TensorWrite<'_>) -> Result<()> {
    binary_into(ctx, BinaryOp::Pow, a, b, out)
}

/// The real floats the analytic cores run on: f64 through each function's f64 core; f32
/// through its native f32 core where it has one (16 lanes per AVX-512 register instead
/// of 8), else through the f64 core, widened exactly and rounded once. This impl pair is
/// the one place that choice is made.
pub(crate) trait CoreFloat: Copy {
    /// `F` at `self` by the core (valid unless [`Self::outside`]).
    fn core<F: RealCore>(self) -> Self;
    /// Whether `self` is outside the core's range (never, unless `F::HAS_FALLBACK`).
    fn outside<F: RealCore>(self) -> bool;
    /// `F` at an input outside the core's range.
    fn fallback<F: RealCore>(self) -> Self;
}

impl CoreFloat for f64 {
    #[inline(always)]
    fn core<F: RealCore>(self) -> Self {
        F::core(self)
    }
    #[inline(always)]
    fn outside<F: RealCore>(self) -> bool {
        F::outside(self)
    }
    #[inline(always)]
    fn fallback<F: RealCore>(self) -> Self {
        F::fallback(self)
    }
}

impl CoreFloat for f32 {
    #[inline(always)]
    fn core<F: RealCore>(self) -> Self {
        F::core_f32(self)
    }
    #[inline(always)]
    fn outside<F: RealCore>(self) -> bool {
        F::outside_f32(self)
    }
    #[inline(always)]
    fn fallback<F: RealCore>(self) -> Self {
        F::fallback_f32(self)
    }
}

/// A real function with an f64 core and optionally a native f32 one, for
/// [`map_slice`]. The cores are associated functions rather than closures because a
/// closure's call shim is not reliably inlined into the SIMD loop (measured: tanh and
/// log1p ran one call per element, slower than libm).
pub(crate) trait RealCore {
    /// Whether some inputs are outside the cores' range and go to the fallbacks.
    const HAS_FALLBACK: bool = false;

    /// Whether the fallbacks are `#[inline(always)]` branch-free functions of every input
    /// that give the cores' bits inside their range: then a block with an input outside
    /// runs them, vectorised, on the whole block, instead of the core and then a patch
    /// lane by lane (which made a block of zeros for `ln` 2× slower than the full
    /// function). Fallbacks that call libm leave this `false`.
    const FALLBACK_EVERYWHERE: bool = false;

    /// The function in f64: straight-line arithmetic, `#[inline(always)]`.
    fn core(x: f64) -> f64;

    /// The function in f32; by default the f64 core, rounded once.
    #[inline(always)]
    fn core_f32(x: f32) -> f32 {
        Self::core(f64::from(x)) as f32
    }

    /// Whether `x` is outside the f64 core's range (never, unless `HAS_FALLBACK`).
    #[inline(always)]
    fn outside(x: f64) -> bool {
        let _ = x;
        false
    }

    /// The function at an input outside the f64 core's range.
    fn fallback(x: f64) -> f64 {
        x
    }

    /// Whether `x` is outside the f32 core's range; by default the f64 core's.
    #[inline(always)]
    fn outside_f32(x: f32) -> bool {
        Self::outside(f64::from(x))
    }

    /// The function at an input outside the f32 core's range: the f64 path, rounded once.
    fn fallback_f32(x: f32) -> f32 {
        let x = f64::from(x);
        (if Self::outside(x) { Self::fallback(x) } else { Self::core(x) }) as f32
    }
}

/// The floats the cores' polynomials are evaluated in: `mul_add` and `*`, nothing else.
pub(crate) trait PolyFloat: Copy + std::ops::Mul<Output = Self> {
    /// `self · a + b` rounded once.
    fn fused(self, a: Self, b: Self) -> Self;
}

impl PolyFloat for f64 {
    #[inline(always)]
    fn fused(self, a: Self, b: Self) -> Self {
        self.mul_add(a, b)
    }
}

impl PolyFloat for f32 {
    #[inline(always)]
    fn fused(self, a: Self, b: Self) -> Self {
        self.mul_add(a, b)
    }
}

/// The polynomial with `coefficients` (highest degree first) at `x`, with fused
/// multiply-adds in the one evaluation order every core's series uses: blocks of four
/// consecutive coefficients by Horner's rule in `x` (the highest block takes the
/// remainder), combined by Horner's rule in `x⁴`. Against plain Horner this cuts the
/// dependent chain of a degree-13 series from 13 fused multiply-adds to 6, which is what
/// bounded the vector loops (the blocks are independent, so the out-of-order core
/// overlaps them: +5-30 % in-cache on the f64 cores); the series are corrections far below
/// the result's last place, so the different rounding does not show. `mul_add` rounds
/// once on every path (an FMA instruction at the AVX2 and AVX-512 levels, which enable
/// it; libm's exactly rounded `fma` at the baseline), so the bits are the same everywhere.
#[inline(always)]
pub(crate) fn polynomial<T: PolyFloat>(x: T, coefficients: &[T]) -> T {
    const BLOCK: usize = 4;
    let horner = |block: &[T]| block[1..].iter().fold(block[0], |acc, &c| acc.fused(x, c));
    let first = match coefficients.len() % BLOCK {
        0 => BLOCK,
        rest => rest,
    };
    let x2 = x * x;
    let x4 = x2 * x2;
    let (head, blocks) = coefficients.split_at(first.min(coefficients.len()));
    blocks.chunks_exact(BLOCK).fold(horner(head), |acc, block| acc.fused(x4, horner(block)))
}

/// `a + b` as the rounded sum and its exact error (Knuth's two-sum: no ordering needed).
#[inline(always)]
pub(crate) fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let sum = a + b;
    let b_part = sum - a;
    let a_part = sum - b_part;
    (sum, (a - a_part) + (b - b_part))
}

/// `F` of one value: the same bits as every slice path.
#[inline(always)]
pub(crate) fn value<F: RealCore, T: CoreFloat>(x: T) -> T {
    if F::HAS_FALLBACK && x.outside::<F>() { x.fallback::<F>() } else { x.core::<F>() }
}

/// Declares unit types whose [`RealCore`] is the named `#[inline(always)]` f64 core, and
/// optionally a native f32 core (`Name => f64_core, f32_core;`).
macro_rules! real_cores {
    ($($(#[$doc:meta])* $name:ident => $core:ident $(, $core32:ident)?;)*) => {
        $(
            $(#[$doc])*
            pub(crate) struct $name;

            impl super::RealCore for $name {
                #[inline(always)]
                fn core(x: f64) -> f64 {
                    $core(x)
                }
                $(
                    #[inline(always)]
                    fn core_f32(x: f32) -> f32 {
                        $core32(x)
                    }
                )?
            }
        )*
    };
}
pub(crate) use real_cores;

/// `out[i] = F(a[i])` (by `T`'s core of `F`, see [`CoreFloat`]), with the loop compiled
/// for the widest SIMD level the CPU has ([`crate::simd`]). Fused multiply-adds appear
/// only where a core writes `mul_add`, which rounds once on every level, so every level
/// gives the same bits as the scalar core. A block of inputs all inside the core's range
/// runs the core; a block with some outside runs the full function on every element if
/// it is branch-free (`FALLBACK_EVERYWHERE`), else the core and then the full function
/// on the elements outside.
#[inline(always)]
pub(crate) fn map_slice<T: CoreFloat, F: RealCore>(a: &[T], out: &mut [T]) {
    simd::run(MapSlice::<T, F> { a, out, core: PhantomData })
}

/// The task of [`map_slice`].
struct MapSlice<'a, T, F> {
    a: &'a [T],
    out: &'a mut [T],
    core: PhantomData<F>,
}

impl<T: CoreFloat, F: RealCore> SimdTask for MapSlice<'_, T, F> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        map_loop::<T, F>(self.a, self.out)
    }
}

/// Elements per block of [`map_loop`]: a core's out-of-range inputs are patched while the
/// block is still in L1.
const BLOCK: usize = 256;

#[inline(always)]
fn map_loop<T: CoreFloat, F: RealCore>(a: &[T], out: &mut [T]) {
    for (a, out) in a.chunks(BLOCK).zip(out.chunks_mut(BLOCK)) {
        // A fold, not `any`: an early exit would scan one element at a time (it took as
        // long as the core itself for f32 sin), a fold vectorises.
        let rare = F::HAS_FALLBACK && a.iter().fold(false, |seen, &x| seen | x.outside::<F>());
        if rare && F::FALLBACK_EVERYWHERE {
            for (o, &x) in out.iter_mut().zip(a) {
                *o = x.fallback::<F>();
            }
            continue;
        }
        // The core on every element (the vectorised loop), then the rare inputs outside
        // its range one by one.
        for (o, &x) in out.iter_mut().zip(a) {
            *o = x.core::<F>();
        }
        if rare {
            for (o, &x) in out.iter_mut().zip(a) {
                if x.outside::<F>() {
                    *o = x.fallback::<F>();
                }
            }
        }
    }
}

/// Helpers of the analytic functions' accuracy tests.
#[cfg(test)]
pub(crate) mod test_support {
    use std::marker::PhantomData;

    use super::{MapSlice, RealCore, map_slice, value};
    use crate::simd::{self, SimdLevel};

    /// Distance in units of the last place of `want` (at the subnormal spacing below the
    /// normal range); 0 when both are the same infinity, zero or NaN.
    pub(crate) fn ulps(got: f64, want: f64) -> f64 {
        if got == want || (got.is_nan() && want.is_nan()) {
            return 0.0;
        }
        if !got.is_finite() || !want.is_finite() {
            return f64::INFINITY;
        }
        let spacing = if want.abs() < f64::MIN_POSITIVE { f64::from_bits(1) } else { want.abs() * f64::EPSILON };
        (got - want).abs() / spacing
    }

    /// Runs `F` over `xs` through the slice path and checks every result: within
    /// `max_ulps` of `reference`, and bit-equal to the scalar path. Returns the fraction of
    /// results bit-equal to `reference`.
    pub(crate) fn check_f64<F: RealCore>(name: &str, xs: &[f64], reference: impl Fn(f64) -> f64, max_ulps: f64) -> f64 {
        let mut out = vec![0.0; xs.len()];
        map_slice::<f64, F>(xs, &mut out);
        let mut same = 0usize;
        for (&x, &got) in xs.iter().zip(&out) {
            let want = reference(x);
            same += usize::from(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()));
            assert!(ulps(got, want) <= max_ulps, "{name}({x:e}) = {got:e}, libm {want:e}");
            assert_eq!(value::<F, f64>(x).to_bits(), got.to_bits(), "{name}({x:e}) scalar vs slice");
        }
        same as f64 / xs.len() as f64
    }

    /// Runs `F` over f32 inputs and checks every result within `max_eps` units of
    /// `eps · |want|` of the f64 `reference` (a subnormal's spacing below the normal range;
    /// an infinity where the reference lies beyond f32's range), and bit-equal to the
    /// scalar path. Returns the worst error in those units.
    pub(crate) fn check_f32<F: RealCore>(name: &str, xs: &[f32], reference: impl Fn(f64) -> f64, max_eps: f64) -> f64 {
        let mut out = vec![0.0f32; xs.len()];
        map_slice::<f32, F>(xs, &mut out);
        let mut worst = 0.0f64;
        for (&x, &got) in xs.iter().zip(&out) {
            let want = reference(f64::from(x));
            let spacing = (want.abs() * f64::from(f32::EPSILON)).max(f64::from(f32::from_bits(1)));
            let overflowed = got.is_infinite() && want.abs() > f64::from(f32::MAX) && (f64::from(got) * want) > 0.0;
            let same = f64::from(got) == want || (got.is_nan() && want.is_nan());
            let err = if overflowed || same { 0.0 } else { (f64::from(got) - want).abs() / spacing };
            assert!(err <= max_eps, "{name}({x:e}) = {got:e}, want {want:e}: {err:.3} eps of |want|");
            assert_eq!(value::<F, f32>(x).to_bits(), got.to_bits(), "{name}({x:e}) scalar vs slice");
            worst = worst.max(err);
        }
        worst
    }

    /// Checks that `F`'s fast f64 core gives its full function's bits (the fallback) on
    /// every input of `xs` the core takes, so that where a lane goes never changes a
    /// result. Returns how many inputs were compared.
    pub(crate) fn check_core_is_fallback<F: RealCore>(xs: &[f64]) -> usize {
        let inside: Vec<f64> = xs.iter().copied().filter(|&x| !F::outside(x)).collect();
        for &x in &inside {
            assert_eq!(F::core(x).to_bits(), F::fallback(x).to_bits(), "{x:e}: core vs full function");
        }
        inside.len()
    }

    /// [`check_core_is_fallback`] for the f32 cores.
    pub(crate) fn check_core_is_fallback_f32<F: RealCore>(xs: &[f32]) -> usize {
        let inside: Vec<f32> = xs.iter().copied().filter(|&x| !F::outside_f32(x)).collect();
        for &x in &inside {
            assert_eq!(F::core_f32(x).to_bits(), F::fallback_f32(x).to_bits(), "{x:e}: core vs full function");
        }
        inside.len()
    }

    /// Checks that every sub-slice of `xs` (every start phase and length) gives the
    /// scalar path's bits, in f64 and in f32, and that every SIMD level gives the same.
    pub(crate) fn check_every_length<F: RealCore>(xs: &[f64]) {
        let narrow: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
        for start in 0..16.min(xs.len()) {
            for end in start..xs.len() {
                let mut out = vec![0.0; end - start];
                map_slice::<f64, F>(&xs[start..end], &mut out);
                for (&x, &got) in xs[start..end].iter().zip(&out) {
                    assert_eq!(got.to_bits(), value::<F, f64>(x).to_bits());
                }
                let mut out = vec![0.0f32; end - start];
                map_slice::<f32, F>(&narrow[start..end], &mut out);
                for (&x, &got) in narrow[start..end].iter().zip(&out) {
                    assert_eq!(got.to_bits(), value::<F, f32>(x).to_bits());
                }
            }
        }
        for level in SimdLevel::ALL {
            let mut wide = vec![0.0; xs.len()];
            simd::run_at(level, MapSlice::<f64, F> { a: xs, out: &mut wide, core: PhantomData });
            assert!(xs.iter().zip(&wide).all(|(&x, &y)| y.to_bits() == value::<F, f64>(x).to_bits()), "{level:?}");
            let mut out = vec![0.0f32; xs.len()];
            simd::run_at(level, MapSlice::<f32, F> { a: &narrow, out: &mut out, core: PhantomData });
            assert!(narrow.iter().zip(&out).all(|(&x, &y)| y.to_bits() == value::<F, f32>(x).to_bits()), "{level:?}");
        }
    }
}
