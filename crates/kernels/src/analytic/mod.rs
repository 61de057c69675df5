//! Analytic kernels: exp, log, sin, cos, tanh, sqrt, rsqrt, expm1, log1p and pow, on
//! f32, f64, c32 and c64 (integers and bool get an Unsupported error). They share the
//! elementwise engine; this module names them.
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

pub(crate) mod exponential;
pub(crate) mod logarithm;

use strata_tensor::config::{BinaryOp, UnaryOp};
use strata_tensor::{Result, Tensor, TensorRead, TensorWrite};

use crate::context::KernelContext;
use crate::elementwise::{binary, binary_into, named_unary, unary, unary_into};

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

/// `a ** b` elementwise (lax.pow): floats and complex, and integers by squaring with
/// wrap (a negative integer exponent gives 0 except for bases ±1, as XLA does).
pub fn pow(ctx: &KernelContext<'_>, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
    binary(ctx, BinaryOp::Pow, a, b)
}

/// [`pow`] into `out`.
pub fn pow_into(ctx: &KernelContext<'_>, a: TensorRead<'_>, b: TensorRead<'_>, out: TensorWrite<'_>) -> Result<()> {
    binary_into(ctx, BinaryOp::Pow, a, b, out)
}

/// The real floats whose analytic functions run through an f64 core (f32 widens exactly
/// and rounds the result once).
pub(crate) trait CoreFloat: Copy {
    /// Widens to f64 (exact).
    fn widen(self) -> f64;
    /// Rounds an f64 result to this type.
    fn narrow(x: f64) -> Self;
}

impl CoreFloat for f64 {
    #[inline(always)]
    fn widen(self) -> f64 {
        self
    }
    #[inline(always)]
    fn narrow(x: f64) -> Self {
        x
    }
}

impl CoreFloat for f32 {
    #[inline(always)]
    fn widen(self) -> f64 {
        f64::from(self)
    }
    #[inline(always)]
    fn narrow(x: f64) -> Self {
        x as f32
    }
}

/// A real function with an f64 core, for [`map_slice`]. The core is an associated
/// function rather than a closure because a closure's call shim is not reliably inlined
/// into the SIMD loop (measured: tanh and log1p ran one call per element, slower than libm).
pub(crate) trait RealCore {
    /// The function in f64: straight-line arithmetic, `#[inline(always)]`.
    fn core(x: f64) -> f64;
}

/// `out[i] = F(a[i])` (through the f64 core, rounded once for f32), with the loop
/// compiled for the widest SIMD level the CPU has. No fused multiply-add is enabled at
/// any level, so every level gives the same bits as the scalar core.
#[inline(always)]
pub(crate) fn map_slice<T: CoreFloat, F: RealCore>(a: &[T], out: &mut [T]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU reports AVX-512F, the only feature `map_avx512` enables.
            return unsafe { simd::map_avx512::<T, F>(a, out) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU reports AVX2, the only feature `map_avx2` enables.
            return unsafe { simd::map_avx2::<T, F>(a, out) };
        }
    }
    map_loop::<T, F>(a, out)
}

#[inline(always)]
fn map_loop<T: CoreFloat, F: RealCore>(a: &[T], out: &mut [T]) {
    for (o, &x) in out.iter_mut().zip(a) {
        *o = T::narrow(F::core(x.widen()));
    }
}

/// The same loop compiled for wider vector units.
#[cfg(target_arch = "x86_64")]
mod simd {
    use super::{CoreFloat, RealCore, map_loop};

    #[target_feature(enable = "avx512f")]
    pub(super) fn map_avx512<T: CoreFloat, F: RealCore>(a: &[T], out: &mut [T]) {
        map_loop::<T, F>(a, out)
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn map_avx2<T: CoreFloat, F: RealCore>(a: &[T], out: &mut [T]) {
        map_loop::<T, F>(a, out)
    }
}
