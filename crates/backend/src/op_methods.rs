//! The op methods users call on [`CpuBackend`] and [`CpuSession`]: every input is
//! `impl Into<TensorRead>` (a `&Tensor`, a `&TypedTensor<T>`, a view or a `TensorRead`)
//! and every destination `impl Into<TensorWrite>` (`&mut Tensor`, `&mut TypedTensor<T>`,
//! a mutable view), so a call reads `backend.add(&a, &b)?`.
//!
//! Each method converts its arguments and calls the object-safe op trait method of
//! strata-tensor (the one code path; the traits stay usable behind `dyn`). Inherent
//! methods take precedence over trait methods, so these are what `backend.add(..)`
//! resolves to; generic code over `B: ElementwiseOps` keeps calling the trait methods.

use strata_tensor::config::{
    BinaryOp, CompareDir, DotGeneral, ElementwiseFusionPlan, GatherConfig, GroupedGemmConfig, PadConfig, PadValue,
    ReduceOp, ScatterConfig, SliceConfig, UnaryOp,
};
use strata_tensor::{
    AnalyticOps, ContractionOps, DType, ElementwiseOps, FusionOps, IndexingOps, ReductionOps, Result, ScalarValue,
    StructuralOps, Tensor, TensorRead, TensorWrite,
};

use crate::backend::CpuBackend;
use crate::session::CpuSession;

/// Defines each method once for [`CpuBackend`] (with its documentation) and once for
/// [`CpuSession`] (pointing to it).
macro_rules! op_methods {
    ($(
        $(#[doc = $doc:expr])*
        fn $name:ident(&$self:ident $(, $arg:ident: $ty:ty)*) -> $ret:ty $body:block
    )*) => {
        impl CpuBackend {
            $(
                $(#[doc = $doc])*
                #[inline]
                pub fn $name<'a>(&$self $(, $arg: $ty)*) -> $ret $body
            )*
        }

        impl CpuSession<'_> {
            $(
                #[doc = concat!("[`CpuBackend::", stringify!($name), "`], inside the session.")]
                #[inline]
                pub fn $name<'a>(&$self $(, $arg: $ty)*) -> $ret $body
            )*
        }
    };
}

/// Converts a list of inputs.
fn reads<'a, R: Clone + Into<TensorRead<'a>>>(inputs: &[R]) -> Vec<TensorRead<'a>> {
    inputs.iter().cloned().map(Into::into).collect()
}

/// The pad value as the rank-0 tensor the kernel takes, converted to `dtype` when given
/// as a number.
fn pad_value(value: PadValue<'_>, dtype: DType) -> Result<PadTensor<'_>> {
    Ok(match value {
        PadValue::Scalar(v) => PadTensor::Owned(v.to_dtype(dtype, "pad")?.to_tensor()),
        PadValue::Tensor(t) => PadTensor::Borrowed(t),
    })
}

enum PadTensor<'a> {
    Owned(Tensor),
    Borrowed(TensorRead<'a>),
}

impl PadTensor<'_> {
    fn read(&self) -> TensorRead<'_> {
        match self {
            PadTensor::Owned(t) => t.into(),
            PadTensor::Borrowed(t) => t.clone(),
        }
    }
}

/// A coefficient of `axpby_into`/`dot_general_into` in the kernels' form.
fn coefficient(op: &'static str, v: ScalarValue) -> Result<strata_tensor::c64> {
    v.to_c64(op)
}

op_methods! {
    /// `a + b` elementwise (shapes equal, one dtype; no implicit broadcasting: use `broadcast_in_dim`).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(backend.add(&x, &x)?.to_vec::<f64>()?, [2.0, 4.0, 8.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn add(&self, a: impl Into<TensorRead<'a>>, b: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        ElementwiseOps::add(self, a.into(), b.into())
    }

    /// `a - b` elementwise.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(backend.sub(&x, &x)?.to_vec::<f64>()?, [0.0, 0.0, 0.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn sub(&self, a: impl Into<TensorRead<'a>>, b: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        ElementwiseOps::sub(self, a.into(), b.into())
    }

    /// `a * b` elementwise.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(backend.mul(&x, &x)?.to_vec::<f64>()?, [1.0, 4.0, 16.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn mul(&self, a: impl Into<TensorRead<'a>>, b: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        ElementwiseOps::mul(self, a.into(), b.into())
    }

    /// `a / b` elementwise (integers truncate toward zero; `x / 0` is `-1` as in XLA).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(backend.div(&x, &x)?.to_vec::<f64>()?, [1.0, 1.0, 1.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn div(&self, a: impl Into<TensorRead<'a>>, b: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        ElementwiseOps::div(self, a.into(), b.into())
    }

    /// Remainder with the dividend's sign (C `fmod` for floats; `x % 0 = x` for integers).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(backend.rem(&x, &x)?.to_vec::<f64>()?, [0.0, 0.0, 0.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn rem(&self, a: impl Into<TensorRead<'a>>, b: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        ElementwiseOps::rem(self, a.into(), b.into())
    }

    /// Elementwise maximum (NaN propagates; `-0 < +0`).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(backend.maximum(&x, &x)?.to_vec::<f64>()?, [1.0, 2.0, 4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn maximum(&self, a: impl Into<TensorRead<'a>>, b: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        ElementwiseOps::maximum(self, a.into(), b.into())
    }

    /// Elementwise minimum (NaN propagates).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(backend.minimum(&x, &x)?.to_vec::<f64>()?, [1.0, 2.0, 4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn minimum(&self, a: impl Into<TensorRead<'a>>, b: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        ElementwiseOps::minimum(self, a.into(), b.into())
    }

    /// `a ** b` elementwise (integers: XLA's rules for negative exponents).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(backend.pow(&x, &x)?.to_vec::<f64>()?, [1.0, 4.0, 256.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn pow(&self, a: impl Into<TensorRead<'a>>, b: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        AnalyticOps::pow(self, a.into(), b.into())
    }

    /// `-x` (wrapping for integer MIN).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(backend.neg(&x)?.to_vec::<f64>()?, [-1.0, -2.0, -4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn neg(&self, x: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        ElementwiseOps::neg(self, x.into())
    }

    /// Complex conjugate. As in lax, a real float input gives the complex dtype of its width
    /// (zero imaginary parts); integers and bool are `Unsupported`.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let z = TypedTensor::from_vec(vec![c64::new(1.0, 2.0)], &[1])?;
    /// assert_eq!(backend.conj(&z)?.to_vec::<c64>()?, [c64::new(1.0, -2.0)]);
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(backend.conj(&x)?.dtype(), DType::C64);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn conj(&self, x: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        ElementwiseOps::conj(self, x.into())
    }

    /// `|x|`; the result of a complex input is real.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(backend.abs(&x)?.to_vec::<f64>()?, [1.0, 2.0, 4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn abs(&self, x: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        ElementwiseOps::abs(self, x.into())
    }

    /// Sign of `x` (`x / |x|` for complex; 0 stays 0).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(backend.sign(&x)?.to_vec::<f64>()?, [1.0, 1.0, 1.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn sign(&self, x: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        ElementwiseOps::sign(self, x.into())
    }

    /// Square root.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(backend.sqrt(&x)?.to_vec::<f64>()?, [1.0, 2.0_f64.sqrt(), 2.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn sqrt(&self, x: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        AnalyticOps::sqrt(self, x.into())
    }

    /// `1 / sqrt(x)`.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(backend.rsqrt(&x)?.to_vec::<f64>()?, [1.0, 1.0 / 2.0_f64.sqrt(), 0.5]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn rsqrt(&self, x: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        AnalyticOps::rsqrt(self, x.into())
    }

    /// `e^x` (floats and complex; integers are `Unsupported`).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::scalar(1.0f64);
    /// let y = backend.exp(&x)?.to_scalar::<f64>()?;
    /// assert!((y - 1.0f64.exp()).abs() <= 1e-15 * y.abs().max(1.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn exp(&self, x: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        AnalyticOps::exp(self, x.into())
    }

    /// Natural logarithm.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::scalar(1.0f64);
    /// let y = backend.log(&x)?.to_scalar::<f64>()?;
    /// assert!((y - 0.0).abs() <= 1e-15 * y.abs().max(1.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn log(&self, x: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        AnalyticOps::log(self, x.into())
    }

    /// Sine.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::scalar(1.0f64);
    /// let y = backend.sin(&x)?.to_scalar::<f64>()?;
    /// assert!((y - 1.0f64.sin()).abs() <= 1e-15 * y.abs().max(1.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn sin(&self, x: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        AnalyticOps::sin(self, x.into())
    }

    /// Cosine.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::scalar(1.0f64);
    /// let y = backend.cos(&x)?.to_scalar::<f64>()?;
    /// assert!((y - 1.0f64.cos()).abs() <= 1e-15 * y.abs().max(1.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn cos(&self, x: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        AnalyticOps::cos(self, x.into())
    }

    /// Hyperbolic tangent.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::scalar(1.0f64);
    /// let y = backend.tanh(&x)?.to_scalar::<f64>()?;
    /// assert!((y - 1.0f64.tanh()).abs() <= 1e-15 * y.abs().max(1.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn tanh(&self, x: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        AnalyticOps::tanh(self, x.into())
    }

    /// `e^x - 1`, accurate near 0.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::scalar(1.0f64);
    /// let y = backend.expm1(&x)?.to_scalar::<f64>()?;
    /// assert!((y - 1.0f64.exp_m1()).abs() <= 1e-15 * y.abs().max(1.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn expm1(&self, x: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        AnalyticOps::expm1(self, x.into())
    }

    /// `ln(1 + x)`, accurate near 0.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::scalar(1.0f64);
    /// let y = backend.log1p(&x)?.to_scalar::<f64>()?;
    /// assert!((y - 1.0f64.ln_1p()).abs() <= 1e-15 * y.abs().max(1.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn log1p(&self, x: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        AnalyticOps::log1p(self, x.into())
    }

    /// `op(a, b)` for any [`BinaryOp`] (the named methods above are shorthands of it).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(backend.binary(BinaryOp::Add, &x, &x)?, backend.add(&x, &x)?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn binary(&self, op: BinaryOp, a: impl Into<TensorRead<'a>>, b: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        ElementwiseOps::binary(self, op, a.into(), b.into())
    }

    /// `out = op(a, b)`: writes into a destination of the result's shape and dtype (a strided view too).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let mut out = TypedTensor::<f64>::zeros(&[3])?;
    /// backend.binary_into(BinaryOp::Mul, &x, &x, &mut out)?;
    /// assert_eq!(out.data(), &[1.0, 4.0, 16.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn binary_into(&self, op: BinaryOp, a: impl Into<TensorRead<'a>>, b: impl Into<TensorRead<'a>>, out: impl Into<TensorWrite<'a>>) -> Result<()> {
        ElementwiseOps::binary_into(self, op, a.into(), b.into(), out.into())
    }

    /// `op(x)` for any [`UnaryOp`].
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(backend.unary(UnaryOp::Neg, &x)?.to_vec::<f64>()?, [-1.0, -2.0, -4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn unary(&self, op: UnaryOp, x: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        ElementwiseOps::unary(self, op, x.into())
    }

    /// `out = op(x)`.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let mut out = TypedTensor::<f64>::zeros(&[3])?;
    /// backend.unary_into(UnaryOp::Abs, &x, &mut out)?;
    /// assert_eq!(out.data(), x.data());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn unary_into(&self, op: UnaryOp, x: impl Into<TensorRead<'a>>, out: impl Into<TensorWrite<'a>>) -> Result<()> {
        ElementwiseOps::unary_into(self, op, x.into(), out.into())
    }

    /// `a <dir> b` elementwise, giving a Bool tensor (complex inputs are `Unsupported`).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let two = TypedTensor::filled(&[3], 2.0)?;
    /// assert_eq!(backend.compare(CompareDir::Lt, &x, &two)?.to_vec::<bool>()?, [true, false, false]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn compare(&self, dir: CompareDir, a: impl Into<TensorRead<'a>>, b: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        ElementwiseOps::compare(self, dir, a.into(), b.into())
    }

    /// `out = a <dir> b` (a Bool destination).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let mut out = TypedTensor::<bool>::zeros(&[3])?;
    /// backend.compare_into(CompareDir::Eq, &x, &x, &mut out)?;
    /// assert_eq!(out.data(), &[true; 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn compare_into(&self, dir: CompareDir, a: impl Into<TensorRead<'a>>, b: impl Into<TensorRead<'a>>, out: impl Into<TensorWrite<'a>>) -> Result<()> {
        ElementwiseOps::compare_into(self, dir, a.into(), b.into(), out.into())
    }

    /// `pred ? on_true : on_false` elementwise (`pred` is Bool; numpy's `where`).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let p = TypedTensor::from_vec(vec![true, false, true], &[3])?;
    /// let zero = TypedTensor::<f64>::zeros(&[3])?;
    /// assert_eq!(backend.select(&p, &x, &zero)?.to_vec::<f64>()?, [1.0, 0.0, 4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn select(&self, pred: impl Into<TensorRead<'a>>, on_true: impl Into<TensorRead<'a>>, on_false: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        ElementwiseOps::select(self, pred.into(), on_true.into(), on_false.into())
    }

    /// `out = pred ? on_true : on_false`.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let p = TypedTensor::filled(&[3], false)?;
    /// let mut out = TypedTensor::<f64>::zeros(&[3])?;
    /// backend.select_into(&p, &x, &x, &mut out)?;
    /// assert_eq!(out.data(), x.data());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn select_into(&self, pred: impl Into<TensorRead<'a>>, on_true: impl Into<TensorRead<'a>>, on_false: impl Into<TensorRead<'a>>, out: impl Into<TensorWrite<'a>>) -> Result<()> {
        ElementwiseOps::select_into(self, pred.into(), on_true.into(), on_false.into(), out.into())
    }

    /// `min(max(x, lo), hi)` elementwise; `lo`/`hi` have `x`'s shape or rank 0.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let (lo, hi) = (TypedTensor::scalar(1.5), TypedTensor::scalar(3.0));
    /// assert_eq!(backend.clamp(&lo, &x, &hi)?.to_vec::<f64>()?, [1.5, 2.0, 3.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn clamp(&self, lo: impl Into<TensorRead<'a>>, x: impl Into<TensorRead<'a>>, hi: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        ElementwiseOps::clamp(self, lo.into(), x.into(), hi.into())
    }

    /// `out = clamp(lo, x, hi)`.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let (lo, hi) = (TypedTensor::scalar(0.0), TypedTensor::scalar(2.0));
    /// let mut out = TypedTensor::<f64>::zeros(&[3])?;
    /// backend.clamp_into(&lo, &x, &hi, &mut out)?;
    /// assert_eq!(out.data(), &[1.0, 2.0, 2.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn clamp_into(&self, lo: impl Into<TensorRead<'a>>, x: impl Into<TensorRead<'a>>, hi: impl Into<TensorRead<'a>>, out: impl Into<TensorWrite<'a>>) -> Result<()> {
        ElementwiseOps::clamp_into(self, lo.into(), x.into(), hi.into(), out.into())
    }

    /// Sum over `axes` (removed from the shape; no axes is a copy; an empty sum is 0).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(backend.sum(&m, &[0])?.to_vec::<f64>()?, [5.0, 7.0, 9.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn sum(&self, x: impl Into<TensorRead<'a>>, axes: &[usize]) -> Result<Tensor> {
        ReductionOps::sum(self, x.into(), axes)
    }

    /// Sum of `|x|^2` over `axes` (real for complex input).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(backend.sum_squares(&m, &[0])?.to_vec::<f64>()?, [17.0, 29.0, 45.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn sum_squares(&self, x: impl Into<TensorRead<'a>>, axes: &[usize]) -> Result<Tensor> {
        ReductionOps::sum_squares(self, x.into(), axes)
    }

    /// Product over `axes` (an empty product is 1).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(backend.prod(&m, &[0])?.to_vec::<f64>()?, [4.0, 10.0, 18.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn prod(&self, x: impl Into<TensorRead<'a>>, axes: &[usize]) -> Result<Tensor> {
        ReductionOps::prod(self, x.into(), axes)
    }

    /// Maximum over `axes` (an empty maximum is -inf, MIN for integers).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(backend.max(&m, &[0])?.to_vec::<f64>()?, [4.0, 5.0, 6.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn max(&self, x: impl Into<TensorRead<'a>>, axes: &[usize]) -> Result<Tensor> {
        ReductionOps::max(self, x.into(), axes)
    }

    /// Minimum over `axes` (an empty minimum is +inf, MAX for integers).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(backend.min(&m, &[0])?.to_vec::<f64>()?, [1.0, 2.0, 3.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn min(&self, x: impl Into<TensorRead<'a>>, axes: &[usize]) -> Result<Tensor> {
        ReductionOps::min(self, x.into(), axes)
    }

    /// `op` over `axes` for any [`ReduceOp`].
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(backend.reduce(ReduceOp::Sum, &m, &[0, 1])?.to_scalar::<f64>()?, 21.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn reduce(&self, op: ReduceOp, x: impl Into<TensorRead<'a>>, axes: &[usize]) -> Result<Tensor> {
        ReductionOps::reduce(self, op, x.into(), axes)
    }

    /// `out = op over axes of x`.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// let mut out = TypedTensor::<f64>::zeros(&[2])?;
    /// backend.reduce_into(ReduceOp::Max, &m, &[1], &mut out)?;
    /// assert_eq!(out.data(), &[3.0, 6.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn reduce_into(&self, op: ReduceOp, x: impl Into<TensorRead<'a>>, axes: &[usize], out: impl Into<TensorWrite<'a>>) -> Result<()> {
        ReductionOps::reduce_into(self, op, x.into(), axes, out.into())
    }

    /// A compact copy with axes permuted: output axis `i` is input axis `perm[i]` (numpy/lax `transpose`; the views' [`TensorView::transpose`](strata_tensor::TensorView::transpose) does it without a copy).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(backend.transpose(&m, &[1, 0])?.to_vec::<f64>()?, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn transpose(&self, x: impl Into<TensorRead<'a>>, perm: &[usize]) -> Result<Tensor> {
        StructuralOps::transpose(self, x.into(), perm)
    }

    /// A compact row-major copy of any view.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// let reversed = m.view().reverse(&[1])?;
    /// assert_eq!(backend.to_contiguous(reversed)?.to_vec::<f64>()?, [3.0, 2.0, 1.0, 6.0, 5.0, 4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn to_contiguous(&self, x: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        StructuralOps::to_contiguous(self, x.into())
    }

    /// Copies `src` into `dst` (same dtype and shape; `dst` may be a strided view).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// let mut t = TypedTensor::<f64>::zeros(&[3, 2])?;
    /// backend.copy_into(m.view().transpose(&[1, 0])?, &mut t)?;
    /// assert_eq!(t.data(), &[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn copy_into(&self, src: impl Into<TensorRead<'a>>, dst: impl Into<TensorWrite<'a>>) -> Result<()> {
        StructuralOps::copy_into(self, src.into(), dst.into())
    }

    /// `x` converted to `dtype` (XLA convert: float to int truncates and saturates, NaN to 0; `x != 0` to Bool; complex to real keeps the real part).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.9, -2.7, f64::NAN], &[3])?;
    /// assert_eq!(backend.cast(&x, DType::I32)?.to_vec::<i32>()?, [1, -2, 0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn cast(&self, x: impl Into<TensorRead<'a>>, dtype: DType) -> Result<Tensor> {
        StructuralOps::cast(self, x.into(), dtype)
    }

    /// `x` converted into `out`'s dtype.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let mut out = TypedTensor::<f32>::zeros(&[3])?;
    /// backend.cast_into(&x, &mut out)?;
    /// assert_eq!(out.data(), &[1.0f32, 2.0, 4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn cast_into(&self, x: impl Into<TensorRead<'a>>, out: impl Into<TensorWrite<'a>>) -> Result<()> {
        StructuralOps::cast_into(self, x.into(), out.into())
    }

    /// `x` read in row-major order into `shape` (same element count).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(backend.reshape(&m, &[3, 2])?.shape(), &[3, 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn reshape(&self, x: impl Into<TensorRead<'a>>, shape: &[usize]) -> Result<Tensor> {
        StructuralOps::reshape(self, x.into(), shape)
    }

    /// `x` broadcast into `out_shape`: input axis `k` becomes output axis `dims[k]` (extent equal or 1).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let rows = backend.broadcast_in_dim(&x, &[2, 3], &[1])?;
    /// assert_eq!(rows.to_vec::<f64>()?, [1.0, 2.0, 4.0, 1.0, 2.0, 4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn broadcast_in_dim(&self, x: impl Into<TensorRead<'a>>, out_shape: &[usize], dims: &[usize]) -> Result<Tensor> {
        StructuralOps::broadcast_in_dim(self, x.into(), out_shape, dims)
    }

    /// The diagonal `offset` of axes 0 and 1, appended as the last axis: numpy's and jnp's `diagonal(a, offset)` (`offset > 0` above the main diagonal). Other axis pairs: [`CpuBackend::extract_diagonal`].
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(backend.diagonal(&m, 0)?.to_vec::<f64>()?, [1.0, 5.0]);
    /// assert_eq!(backend.diagonal(&m, 1)?.to_vec::<f64>()?, [2.0, 6.0]);
    /// assert_eq!(backend.diagonal(&m, -1)?.to_vec::<f64>()?, [4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn diagonal(&self, x: impl Into<TensorRead<'a>>, offset: isize) -> Result<Tensor> {
        let x = x.into();
        StructuralOps::to_contiguous(self, x.view().diagonal(offset)?.into())
    }

    /// The main diagonal of axes `a` and `b`, appended as the last axis (numpy's `diagonal(x, 0, a, b)`).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(backend.extract_diagonal(&m, 0, 1)?.to_vec::<f64>()?, [1.0, 5.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn extract_diagonal(&self, x: impl Into<TensorRead<'a>>, a: usize, b: usize) -> Result<Tensor> {
        StructuralOps::extract_diagonal(self, x.into(), a, b)
    }

    /// The inverse of [`CpuBackend::extract_diagonal`]: the last axis becomes the diagonal of output axes `a` and `b`, zeros elsewhere.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let d = TypedTensor::from_vec(vec![1.0, 2.0], &[2])?;
    /// assert_eq!(backend.embed_diagonal(&d, 0, 1)?.to_vec::<f64>()?, [1.0, 0.0, 0.0, 2.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn embed_diagonal(&self, x: impl Into<TensorRead<'a>>, a: usize, b: usize) -> Result<Tensor> {
        StructuralOps::embed_diagonal(self, x.into(), a, b)
    }

    /// Zeroes the elements above diagonal `k` of the last two axes (numpy's `tril`).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(backend.tril(&m, 0)?.to_vec::<f64>()?, [1.0, 0.0, 0.0, 4.0, 5.0, 0.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn tril(&self, x: impl Into<TensorRead<'a>>, k: isize) -> Result<Tensor> {
        StructuralOps::tril(self, x.into(), k)
    }

    /// Zeroes the elements below diagonal `k` of the last two axes (numpy's `triu`).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(backend.triu(&m, 1)?.to_vec::<f64>()?, [0.0, 2.0, 3.0, 0.0, 0.0, 6.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn triu(&self, x: impl Into<TensorRead<'a>>, k: isize) -> Result<Tensor> {
        StructuralOps::triu(self, x.into(), k)
    }

    /// XLA `dot_general` as described by a [`DotGeneral`]: output axes are batch, then lhs free, then rhs free; conjugation applies to complex operands. The analysis is cached per domain.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let a = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0], &[2, 2])?;
    /// let c = backend.dot_general(&a, &a, &DotGeneral::matmul())?;
    /// assert_eq!(c.to_vec::<f64>()?, [7.0, 10.0, 15.0, 22.0]);
    /// // Contract both axes: the Frobenius inner product, rank 0.
    /// let f = backend.dot_general(&a, &a, &DotGeneral::new().contract([0, 1], [0, 1]))?;
    /// assert_eq!(f.to_scalar::<f64>()?, 30.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn dot_general(&self, lhs: impl Into<TensorRead<'a>>, rhs: impl Into<TensorRead<'a>>, spec: &DotGeneral) -> Result<Tensor> {
        ContractionOps::dot_general(self, lhs.into(), rhs.into(), &spec.dims, spec.conj_lhs, spec.conj_rhs)
    }

    /// `out = spec.alpha * dot_general(lhs, rhs) + spec.beta * out` (`beta = 0` never reads `out`); `alpha`/`beta` in the operands' dtype (real for real dtypes).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let a = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0], &[2, 2])?;
    /// let mut c = TypedTensor::filled(&[2, 2], 1.0)?;
    /// backend.dot_general_into(&a, &a, &DotGeneral::matmul().alpha(2.0).beta(1.0), &mut c)?;
    /// assert_eq!(c.data(), &[15.0, 21.0, 31.0, 45.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn dot_general_into(&self, lhs: impl Into<TensorRead<'a>>, rhs: impl Into<TensorRead<'a>>, spec: &DotGeneral, out: impl Into<TensorWrite<'a>>) -> Result<()> {
        const OP: &str = "dot_general_into";
        ContractionOps::dot_general_into(self, lhs.into(), rhs.into(), &spec.dims, spec.conj_lhs, spec.conj_rhs, coefficient(OP, spec.alpha)?, coefficient(OP, spec.beta)?, out.into())
    }

    /// The matrix product of two rank-2 tensors (`dot_general` with [`DotGeneral::matmul`]).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let a = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0], &[2, 2])?;
    /// assert_eq!(backend.matmul(&a, &a)?.to_vec::<f64>()?, [7.0, 10.0, 15.0, 22.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn matmul(&self, lhs: impl Into<TensorRead<'a>>, rhs: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        ContractionOps::matmul(self, lhs.into(), rhs.into())
    }

    /// Many independent GEMMs (`lhs[i] · rhs[i]`) in one call.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let a = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0], &[2, 2])?;
    /// let cs = backend.grouped_gemm(&[&a, &a], &[&a, &a], &GroupedGemmConfig::default())?;
    /// assert_eq!(cs.len(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn grouped_gemm(&self, lhs: &[impl Clone + Into<TensorRead<'a>>], rhs: &[impl Clone + Into<TensorRead<'a>>], config: &GroupedGemmConfig) -> Result<Vec<Tensor>> {
        ContractionOps::grouped_gemm(self, &reads(lhs), &reads(rhs), config)
    }

    /// `sum(conj(x) * y)` over all elements, as a rank-0 tensor.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(backend.vdot(&x, &x)?.to_scalar::<f64>()?, 21.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn vdot(&self, x: impl Into<TensorRead<'a>>, y: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        ContractionOps::vdot(self, x.into(), y.into())
    }

    /// `sum(|x|^2)` as a rank-0 tensor of the real dtype.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let z = TypedTensor::from_vec(vec![c64::new(3.0, 4.0)], &[1])?;
    /// assert_eq!(backend.norm_squared(&z)?.to_scalar::<f64>()?, 25.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn norm_squared(&self, x: impl Into<TensorRead<'a>>) -> Result<Tensor> {
        ContractionOps::norm_squared(self, x.into())
    }

    /// `y = a * x + b * y` (`a`, `b` numbers in `x`'s dtype).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let mut y = TypedTensor::filled(&[3], 1.0)?;
    /// backend.axpby_into(2.0, &x, -1.0, &mut y)?;
    /// assert_eq!(y.data(), &[1.0, 3.0, 7.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn axpby_into(&self, a: impl Into<ScalarValue>, x: impl Into<TensorRead<'a>>, b: impl Into<ScalarValue>, y: impl Into<TensorWrite<'a>>) -> Result<()> {
        const OP: &str = "axpby_into";
        ContractionOps::axpby_into(self, coefficient(OP, a.into())?, x.into(), coefficient(OP, b.into())?, y.into())
    }

    /// StableHLO `gather` (start indices clamped into range); [`GatherConfig::take`] builds numpy's `take`.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// let idx = TypedTensor::from_vec(vec![1i64, 0, 1], &[3])?;
    /// let rows = backend.gather(&m, &idx, &GatherConfig::take(m.shape(), idx.shape(), 0))?;
    /// assert_eq!(rows.shape(), &[3, 3]);
    /// assert_eq!(rows.to_vec::<f64>()?[..3], [4.0, 5.0, 6.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn gather(&self, operand: impl Into<TensorRead<'a>>, indices: impl Into<TensorRead<'a>>, config: &GatherConfig) -> Result<Tensor> {
        IndexingOps::gather(self, operand.into(), indices.into(), config)
    }

    /// StableHLO `scatter` with the config's combiner (out-of-range windows are skipped).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::<f64>::zeros(&[4])?;
    /// let idx = TypedTensor::from_vec(vec![1i64, 3], &[2, 1])?;
    /// let upd = TypedTensor::from_vec(vec![5.0, 7.0], &[2])?;
    /// let cfg = ScatterConfig { update_window_dims: vec![], inserted_window_dims: vec![0], scatter_dims_to_operand_dims: vec![0], index_vector_dim: 1, ..ScatterConfig::default() };
    /// assert_eq!(backend.scatter(&x, &idx, &upd, &cfg)?.to_vec::<f64>()?, [0.0, 5.0, 0.0, 7.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn scatter(&self, operand: impl Into<TensorRead<'a>>, indices: impl Into<TensorRead<'a>>, updates: impl Into<TensorRead<'a>>, config: &ScatterConfig) -> Result<Tensor> {
        IndexingOps::scatter(self, operand.into(), indices.into(), updates.into(), config)
    }

    /// A static strided slice, copied (a view's [`TensorView::slice`](strata_tensor::TensorView::slice) takes the same config without a copy).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// let s = backend.slice(&m, &SliceConfig::ranges([0..2, 1..3]))?;
    /// assert_eq!(s.to_vec::<f64>()?, [2.0, 3.0, 5.0, 6.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn slice(&self, operand: impl Into<TensorRead<'a>>, config: &SliceConfig) -> Result<Tensor> {
        IndexingOps::slice(self, operand.into(), config)
    }

    /// A window of `sizes` at `starts` (one per axis, clamped so the window fits).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(backend.dynamic_slice(&m, &[1, 5], &[1, 2])?.to_vec::<f64>()?, [5.0, 6.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn dynamic_slice(&self, operand: impl Into<TensorRead<'a>>, starts: &[i64], sizes: &[usize]) -> Result<Tensor> {
        IndexingOps::dynamic_slice(self, operand.into(), starts, sizes)
    }

    /// `operand` with `update` written at `starts` (clamped so it fits).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// let u = TypedTensor::filled(&[1, 2], 0.0)?;
    /// let r = backend.dynamic_update_slice(&m, &u, &[0, 1])?;
    /// assert_eq!(r.to_vec::<f64>()?, [1.0, 0.0, 0.0, 4.0, 5.0, 6.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn dynamic_update_slice(&self, operand: impl Into<TensorRead<'a>>, update: impl Into<TensorRead<'a>>, starts: &[i64]) -> Result<Tensor> {
        IndexingOps::dynamic_update_slice(self, operand.into(), update.into(), starts)
    }

    /// Edge and interior padding with `value`: a number (converted to the operand's dtype) or a rank-0 tensor; negative edges crop.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let p = backend.pad(&x, 0.0, &PadConfig::none(1).low(0, 1).interior(0, 1))?;
    /// assert_eq!(p.to_vec::<f64>()?, [0.0, 1.0, 0.0, 2.0, 0.0, 4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn pad(&self, operand: impl Into<TensorRead<'a>>, value: impl Into<PadValue<'a>>, config: &PadConfig) -> Result<Tensor> {
        let operand = operand.into();
        let value = pad_value(value.into(), operand.dtype())?;
        IndexingOps::pad(self, operand, value.read(), config)
    }

    /// Joins `operands` along `axis`.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(backend.concatenate(&[&x, &x], 0)?.shape(), &[6]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn concatenate(&self, operands: &[impl Clone + Into<TensorRead<'a>>], axis: usize) -> Result<Tensor> {
        IndexingOps::concatenate(self, &reads(operands), axis)
    }

    /// `operand` with each of `axes` reversed (a view's `reverse` does it without a copy).
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(backend.reverse(&x, &[0])?.to_vec::<f64>()?, [4.0, 2.0, 1.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn reverse(&self, operand: impl Into<TensorRead<'a>>, axes: &[usize]) -> Result<Tensor> {
        IndexingOps::reverse(self, operand.into(), axes)
    }

    /// Runs an [`ElementwiseFusionPlan`] over `inputs` (one shape) in one pass; one tensor per plan output.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// // out = x * x + x
    /// let plan = ElementwiseFusionPlan::new(vec![FusionInstr::Input(0), FusionInstr::Binary(BinaryOp::Mul, 0, 0), FusionInstr::Binary(BinaryOp::Add, 1, 0)], vec![2]);
    /// assert_eq!(backend.execute_fusion(&plan, &[&x])?[0].to_vec::<f64>()?, [2.0, 6.0, 20.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn execute_fusion(&self, plan: &ElementwiseFusionPlan, inputs: &[impl Clone + Into<TensorRead<'a>>]) -> Result<Vec<Tensor>> {
        FusionOps::execute_fusion(self, plan, &reads(inputs))
    }

    /// `a * b` with both broadcast into `out_shape` (`a`'s axis `k` becomes output axis `a_dims[k]`, likewise `b`), without materialising the broadcasts.
    ///
    /// ```
    /// use strata_backend::prelude::*;
    /// let backend = CpuBackend::new()?;
    /// let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let outer = backend.broadcast_multiply(&x, &[0], &x, &[1], &[3, 3])?;
    /// assert_eq!(outer.to_vec::<f64>()?[..3], [1.0, 2.0, 4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn broadcast_multiply(&self, a: impl Into<TensorRead<'a>>, a_dims: &[usize], b: impl Into<TensorRead<'a>>, b_dims: &[usize], out_shape: &[usize]) -> Result<Tensor> {
        FusionOps::broadcast_multiply(self, a.into(), a_dims, b.into(), b_dims, out_shape)
    }

}
