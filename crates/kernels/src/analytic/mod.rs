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
