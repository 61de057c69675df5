//! `cast` between all seven dtypes, with XLA's conversion rules:
//!
//! - float → integer truncates toward zero and saturates at the integer's range; NaN → 0;
//! - integer → integer keeps the low bits (narrowing wraps, widening sign-extends);
//! - integer/float → float rounds to nearest even (one rounding, from the source value);
//! - anything → bool is `x != 0` (NaN → true);
//! - bool → number is 0 or 1;
//! - complex → non-complex takes the real part first, then applies the rules above
//!   (so `complex → bool` tests only the real part);
//! - real → complex puts the converted value in the real part, imaginary 0.

use strata_tensor::{DType, Result, Scalar, Tensor, TensorRead, TensorWrite, TypedView, c32, c64, dispatch_dtype};

use crate::alloc::fill_output;
use crate::context::KernelContext;
use crate::strided::{for_each_block, gather};

use super::write_into;

/// A source value carried without loss between any two dtypes: integers as `i64`, floats
/// as `f64` (exact for `f32`), complex as two `f64`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WideValue {
    /// An integer.
    Int(i64),
    /// A real float.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A complex number (real, imaginary).
    Complex(f64, f64),
}

/// Conversion of one dtype to and from [`WideValue`], the single place the cast rules live.
pub trait CastScalar: Scalar {
    /// The value, losslessly widened.
    fn to_wide(self) -> WideValue;
    /// The value converted by the cast rules of this module.
    fn from_wide(w: WideValue) -> Self;
}

macro_rules! impl_cast_real {
    ($t:ty, $variant:ident, $as_wide:ty) => {
        impl CastScalar for $t {
            #[inline(always)]
            fn to_wide(self) -> WideValue {
                WideValue::$variant(self as $as_wide)
            }
            #[inline(always)]
            fn from_wide(w: WideValue) -> Self {
                // Rust's `as` between numbers is exactly the rule set above: float → int
                // truncates, saturates and maps NaN to 0; int → int wraps; → float rounds.
                match w {
                    WideValue::Int(i) => i as $t,
                    WideValue::Float(f) => f as $t,
                    WideValue::Bool(b) => b as u8 as $t,
                    WideValue::Complex(re, _) => re as $t,
                }
            }
        }
    };
}

impl_cast_real!(f32, Float, f64);
impl_cast_real!(f64, Float, f64);
impl_cast_real!(i32, Int, i64);
impl_cast_real!(i64, Int, i64);

impl CastScalar for bool {
    #[inline(always)]
    fn to_wide(self) -> WideValue {
        WideValue::Bool(self)
    }
    #[inline(always)]
    fn from_wide(w: WideValue) -> Self {
        match w {
            WideValue::Int(i) => i != 0,
            WideValue::Float(f) => f != 0.0,
            WideValue::Bool(b) => b,
            WideValue::Complex(re, _) => re != 0.0,
        }
    }
}

macro_rules! impl_cast_complex {
    ($t:ty, $r:ty) => {
        impl CastScalar for $t {
            #[inline(always)]
            fn to_wide(self) -> WideValue {
                WideValue::Complex(self.re as f64, self.im as f64)
            }
            #[inline(always)]
            fn from_wide(w: WideValue) -> Self {
                match w {
                    WideValue::Int(i) => <$t>::new(i as $r, 0.0),
                    WideValue::Float(f) => <$t>::new(f as $r, 0.0),
                    WideValue::Bool(b) => <$t>::new(b as u8 as $r, 0.0),
                    WideValue::Complex(re, im) => <$t>::new(re as $r, im as $r),
                }
            }
        }
    };
}

impl_cast_complex!(c32, f32);
impl_cast_complex!(c64, f64);

/// Converts every element of `src` into `out` (row-major of `src`'s shape).
pub(crate) fn cast_slices<S: CastScalar, D: CastScalar>(src: &[S], out: &mut [D]) {
    for (o, &s) in out.iter_mut().zip(src) {
        *o = D::from_wide(s.to_wide());
    }
}

fn cast_view<S: CastScalar, D: CastScalar>(ctx: &KernelContext<'_>, src: &TypedView<'_, S>, out: &mut [D]) {
    let buf = src.buffer();
    for_each_block(ctx.par(), src.shape(), [src.layout()], out, |block, [off], [st]| {
        let mut scratch = Vec::new();
        cast_slices(gather(buf, off, st, block.len(), &mut scratch), block);
    });
}

/// `convert_element_type`: `x` converted to `dtype` by the rules of this module.
///
/// ```
/// use strata_kernels::{KernelContext, structural};
/// use strata_tensor::{DType, Tensor};
/// let x = Tensor::from_vec(vec![-1.7f32, 2.9, f32::NAN, 1e10], &[4]).unwrap();
/// let y = structural::cast(&KernelContext::sequential(), (&x).into(), DType::I32).unwrap();
/// assert_eq!(y.as_typed::<i32>().unwrap().data(), &[-1, 2, 0, i32::MAX]);
/// ```
pub fn cast(ctx: &KernelContext<'_>, x: TensorRead<'_>, dtype: DType) -> Result<Tensor> {
    dispatch_dtype!(x.dtype(), S => {
        let src = x.typed_view::<S>()?;
        dispatch_dtype!(dtype, D => {
            fill_output::<D>(ctx, "cast", src.shape(), |out| cast_view(ctx, &src, out)).map(Tensor::from)
        })
    })
}

/// [`cast`] into a destination of the target dtype (its dtype names the target) and
/// the input's shape.
pub fn cast_into(ctx: &KernelContext<'_>, x: TensorRead<'_>, mut out: TensorWrite<'_>) -> Result<()> {
    let dtype = out.dtype();
    out.expect("cast", dtype, x.shape())?;
    dispatch_dtype!(x.dtype(), S => {
        let src = x.typed_view::<S>()?;
        dispatch_dtype!(dtype, D => write_into::<D>(ctx, &mut out, |o| cast_view(ctx, &src, o)))
    })
}
