//! The backend op traits: one object-safe trait per op family of SPEC §8.
//!
//! A backend (the CPU facade, a session of it, a test double) implements these so that
//! code written against `&dyn ContractionOps` and friends runs on any of them. Every
//! input is a [`TensorRead`] (an owned tensor or a view, so one method serves both) and
//! every caller-provided output a [`TensorWrite`]. Methods return fresh tensors; `_into`
//! forms write into the caller's output and return nothing. Provided methods are thin
//! conveniences over the required ones, never a second code path.
//!

use crate::config::{
    BinaryOp, CompareDir, DotGeneralConfig, ElementwiseFusionPlan, GatherConfig, GroupedGemmConfig, PadConfig,
    ReduceOp, ScatterConfig, SliceConfig, UnaryOp,
};
use crate::{DType, Result, Tensor, TensorRead, TensorWrite, c64};

/// Elementwise arithmetic, comparison and selection. Shapes must match exactly (no
/// implicit broadcasting) and operands share one dtype.
///
/// ```
/// use strata_tensor::{ElementwiseOps, Tensor, TensorRead, Result};
/// fn double(ops: &dyn ElementwiseOps, x: TensorRead<'_>) -> Result<Tensor> {
///     ops.add(x.clone(), x)
/// }
/// ```
pub trait ElementwiseOps {
    /// `op(a, b)` elementwise.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ElementwiseOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(ops.binary(BinaryOp::Add, (&x).into(), (&x).into())?.to_vec::<f64>()?, [2.0, 4.0, 8.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn binary(&self, op: BinaryOp, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor>;
    /// `out = op(a, b)`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ElementwiseOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let mut out = TypedTensor::<f64>::zeros(&[3])?;
    /// ops.binary_into(BinaryOp::Mul, (&x).into(), (&x).into(), (&mut out).into())?;
    /// assert_eq!(out.data(), &[1.0, 4.0, 16.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn binary_into(&self, op: BinaryOp, a: TensorRead<'_>, b: TensorRead<'_>, out: TensorWrite<'_>) -> Result<()>;
    /// `op(x)` elementwise (`Abs` of complex is real).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ElementwiseOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(ops.unary(UnaryOp::Neg, (&x).into())?.to_vec::<f64>()?, [-1.0, -2.0, -4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn unary(&self, op: UnaryOp, x: TensorRead<'_>) -> Result<Tensor>;
    /// `out = op(x)`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ElementwiseOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let mut out = TypedTensor::<f64>::zeros(&[3])?;
    /// ops.unary_into(UnaryOp::Abs, (&x).into(), (&mut out).into())?;
    /// assert_eq!(out.data(), x.data());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn unary_into(&self, op: UnaryOp, x: TensorRead<'_>, out: TensorWrite<'_>) -> Result<()>;
    /// `a <dir> b` elementwise, giving Bool.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ElementwiseOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let two = TypedTensor::filled(&[3], 2.0)?;
    /// assert_eq!(ops.compare(CompareDir::Lt, (&x).into(), (&two).into())?.to_vec::<bool>()?, [true, false, false]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn compare(&self, dir: CompareDir, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor>;
    /// `out = a <dir> b` (a Bool output).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ElementwiseOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let mut out = TypedTensor::<bool>::zeros(&[3])?;
    /// ops.compare_into(CompareDir::Eq, (&x).into(), (&x).into(), (&mut out).into())?;
    /// assert_eq!(out.data(), &[true; 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn compare_into(&self, dir: CompareDir, a: TensorRead<'_>, b: TensorRead<'_>, out: TensorWrite<'_>) -> Result<()>;
    /// `pred ? on_true : on_false` elementwise (`pred` is Bool).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ElementwiseOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let p = TypedTensor::from_vec(vec![true, false, true], &[3])?;
    /// let z = TypedTensor::<f64>::zeros(&[3])?;
    /// assert_eq!(ops.select((&p).into(), (&x).into(), (&z).into())?.to_vec::<f64>()?, [1.0, 0.0, 4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn select(&self, pred: TensorRead<'_>, on_true: TensorRead<'_>, on_false: TensorRead<'_>) -> Result<Tensor>;
    /// `out = pred ? on_true : on_false`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ElementwiseOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let p = TypedTensor::filled(&[3], true)?;
    /// let mut out = TypedTensor::<f64>::zeros(&[3])?;
    /// ops.select_into((&p).into(), (&x).into(), (&x).into(), (&mut out).into())?;
    /// assert_eq!(out.data(), x.data());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn select_into(
        &self,
        pred: TensorRead<'_>,
        on_true: TensorRead<'_>,
        on_false: TensorRead<'_>,
        out: TensorWrite<'_>,
    ) -> Result<()>;
    /// `min(max(x, lo), hi)` elementwise (`lo`/`hi` of `x`'s shape, or rank 0).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ElementwiseOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let (lo, hi) = (TypedTensor::scalar(1.5), TypedTensor::scalar(3.0));
    /// assert_eq!(ops.clamp((&lo).into(), (&x).into(), (&hi).into())?.to_vec::<f64>()?, [1.5, 2.0, 3.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn clamp(&self, lo: TensorRead<'_>, x: TensorRead<'_>, hi: TensorRead<'_>) -> Result<Tensor>;
    /// `out = clamp(lo, x, hi)`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ElementwiseOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let (lo, hi) = (TypedTensor::scalar(0.0), TypedTensor::scalar(2.0));
    /// let mut out = TypedTensor::<f64>::zeros(&[3])?;
    /// ops.clamp_into((&lo).into(), (&x).into(), (&hi).into(), (&mut out).into())?;
    /// assert_eq!(out.data(), &[1.0, 2.0, 2.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn clamp_into(&self, lo: TensorRead<'_>, x: TensorRead<'_>, hi: TensorRead<'_>, out: TensorWrite<'_>)
    -> Result<()>;

    /// `a + b`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ElementwiseOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(ops.add((&x).into(), (&x).into())?.to_vec::<f64>()?, [2.0, 4.0, 8.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn add(&self, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
        self.binary(BinaryOp::Add, a, b)
    }
    /// `a - b`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ElementwiseOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(ops.sub((&x).into(), (&x).into())?.to_vec::<f64>()?, [0.0, 0.0, 0.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn sub(&self, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
        self.binary(BinaryOp::Sub, a, b)
    }
    /// `a * b`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ElementwiseOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(ops.mul((&x).into(), (&x).into())?.to_vec::<f64>()?, [1.0, 4.0, 16.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn mul(&self, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
        self.binary(BinaryOp::Mul, a, b)
    }
    /// `a / b` (integers truncate; `x / 0 = -1`).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ElementwiseOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(ops.div((&x).into(), (&x).into())?.to_vec::<f64>()?, [1.0, 1.0, 1.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn div(&self, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
        self.binary(BinaryOp::Div, a, b)
    }
    /// Remainder with the dividend's sign.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ElementwiseOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(ops.rem((&x).into(), (&x).into())?.to_vec::<f64>()?, [0.0, 0.0, 0.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn rem(&self, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
        self.binary(BinaryOp::Rem, a, b)
    }
    /// Elementwise maximum (NaN propagates).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ElementwiseOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(ops.maximum((&x).into(), (&x).into())?.to_vec::<f64>()?, [1.0, 2.0, 4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn maximum(&self, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
        self.binary(BinaryOp::Max, a, b)
    }
    /// Elementwise minimum (NaN propagates).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ElementwiseOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(ops.minimum((&x).into(), (&x).into())?.to_vec::<f64>()?, [1.0, 2.0, 4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn minimum(&self, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
        self.binary(BinaryOp::Min, a, b)
    }
    /// `-x`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ElementwiseOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(ops.neg((&x).into())?.to_vec::<f64>()?, [-1.0, -2.0, -4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn neg(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Neg, x)
    }
    /// Complex conjugate; a real float gives its complex counterpart with imaginary part
    /// `+0` (as `lax.conj`); integers and bool are `Unsupported`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ElementwiseOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(ops.conj((&x).into())?.to_vec::<c64>()?, [c64::new(1.0, 0.0), c64::new(2.0, 0.0), c64::new(4.0, 0.0)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn conj(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Conj, x)
    }
    /// `|x|` (real for complex input).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ElementwiseOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(ops.abs((&x).into())?.to_vec::<f64>()?, [1.0, 2.0, 4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn abs(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Abs, x)
    }
    /// Sign of `x`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ElementwiseOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(ops.sign((&x).into())?.to_vec::<f64>()?, [1.0, 1.0, 1.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn sign(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Sign, x)
    }
}

/// Transcendental functions on float and complex tensors (integers: Unsupported). All
/// provided over [`ElementwiseOps`]: implementing it is `impl AnalyticOps for B {}`.
pub trait AnalyticOps: ElementwiseOps {
    /// `e^x`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn AnalyticOps = &backend;
    /// # let x = TypedTensor::scalar(1.0f64);
    /// let y = ops.exp((&x).into())?.to_scalar::<f64>()?;
    /// assert!((y - 1.0f64.exp()).abs() <= 1e-15);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn exp(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Exp, x)
    }
    /// Natural logarithm.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn AnalyticOps = &backend;
    /// # let x = TypedTensor::scalar(1.0f64);
    /// let y = ops.log((&x).into())?.to_scalar::<f64>()?;
    /// assert!((y - 0.0).abs() <= 1e-15);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn log(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Log, x)
    }
    /// Sine.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn AnalyticOps = &backend;
    /// # let x = TypedTensor::scalar(1.0f64);
    /// let y = ops.sin((&x).into())?.to_scalar::<f64>()?;
    /// assert!((y - 1.0f64.sin()).abs() <= 1e-15);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn sin(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Sin, x)
    }
    /// Cosine.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn AnalyticOps = &backend;
    /// # let x = TypedTensor::scalar(1.0f64);
    /// let y = ops.cos((&x).into())?.to_scalar::<f64>()?;
    /// assert!((y - 1.0f64.cos()).abs() <= 1e-15);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn cos(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Cos, x)
    }
    /// Hyperbolic tangent.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn AnalyticOps = &backend;
    /// # let x = TypedTensor::scalar(1.0f64);
    /// let y = ops.tanh((&x).into())?.to_scalar::<f64>()?;
    /// assert!((y - 1.0f64.tanh()).abs() <= 1e-15);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn tanh(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Tanh, x)
    }
    /// Square root.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn AnalyticOps = &backend;
    /// # let x = TypedTensor::scalar(1.0f64);
    /// let y = ops.sqrt((&x).into())?.to_scalar::<f64>()?;
    /// assert!((y - 1.0).abs() <= 1e-15);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn sqrt(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Sqrt, x)
    }
    /// `1 / sqrt(x)`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn AnalyticOps = &backend;
    /// # let x = TypedTensor::scalar(1.0f64);
    /// let y = ops.rsqrt((&x).into())?.to_scalar::<f64>()?;
    /// assert!((y - 1.0).abs() <= 1e-15);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn rsqrt(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Rsqrt, x)
    }
    /// `e^x - 1`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn AnalyticOps = &backend;
    /// # let x = TypedTensor::scalar(1.0f64);
    /// let y = ops.expm1((&x).into())?.to_scalar::<f64>()?;
    /// assert!((y - 1.0f64.exp_m1()).abs() <= 1e-15);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn expm1(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Expm1, x)
    }
    /// `ln(1 + x)`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn AnalyticOps = &backend;
    /// # let x = TypedTensor::scalar(1.0f64);
    /// let y = ops.log1p((&x).into())?.to_scalar::<f64>()?;
    /// assert!((y - 1.0f64.ln_1p()).abs() <= 1e-15);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn log1p(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Log1p, x)
    }
    /// `a ** b` elementwise, on floats and complex (`lax.pow` rejects integers).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn AnalyticOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(ops.pow((&x).into(), (&x).into())?.to_vec::<f64>()?, [1.0, 4.0, 256.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn pow(&self, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
        self.binary(BinaryOp::Pow, a, b)
    }
}

/// Reductions over any set of axes (the reduced axes are removed; no axes is a copy).
pub trait ReductionOps {
    /// `op` over `axes` of `x`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ReductionOps = &backend;
    /// # let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(ops.reduce(ReduceOp::Sum, (&m).into(), &[0, 1])?.to_scalar::<f64>()?, 21.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn reduce(&self, op: ReduceOp, x: TensorRead<'_>, axes: &[usize]) -> Result<Tensor>;
    /// `out = op over axes of x`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ReductionOps = &backend;
    /// # let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// let mut out = TypedTensor::<f64>::zeros(&[2])?;
    /// ops.reduce_into(ReduceOp::Max, (&m).into(), &[1], (&mut out).into())?;
    /// assert_eq!(out.data(), &[3.0, 6.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn reduce_into(&self, op: ReduceOp, x: TensorRead<'_>, axes: &[usize], out: TensorWrite<'_>) -> Result<()>;

    /// Sum over `axes`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ReductionOps = &backend;
    /// # let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(ops.sum((&m).into(), &[0])?.to_vec::<f64>()?, [5.0, 7.0, 9.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn sum(&self, x: TensorRead<'_>, axes: &[usize]) -> Result<Tensor> {
        self.reduce(ReduceOp::Sum, x, axes)
    }
    /// Sum of `|x|^2` over `axes` (real for complex input).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ReductionOps = &backend;
    /// # let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(ops.sum_squares((&m).into(), &[0])?.to_vec::<f64>()?, [17.0, 29.0, 45.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn sum_squares(&self, x: TensorRead<'_>, axes: &[usize]) -> Result<Tensor> {
        self.reduce(ReduceOp::SumSquares, x, axes)
    }
    /// Product over `axes`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ReductionOps = &backend;
    /// # let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(ops.prod((&m).into(), &[0])?.to_vec::<f64>()?, [4.0, 10.0, 18.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn prod(&self, x: TensorRead<'_>, axes: &[usize]) -> Result<Tensor> {
        self.reduce(ReduceOp::Prod, x, axes)
    }
    /// Maximum over `axes`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ReductionOps = &backend;
    /// # let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(ops.max((&m).into(), &[0])?.to_vec::<f64>()?, [4.0, 5.0, 6.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn max(&self, x: TensorRead<'_>, axes: &[usize]) -> Result<Tensor> {
        self.reduce(ReduceOp::Max, x, axes)
    }
    /// Minimum over `axes`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ReductionOps = &backend;
    /// # let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(ops.min((&m).into(), &[0])?.to_vec::<f64>()?, [1.0, 2.0, 3.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn min(&self, x: TensorRead<'_>, axes: &[usize]) -> Result<Tensor> {
        self.reduce(ReduceOp::Min, x, axes)
    }
}

/// Layout ops that move or copy data without arithmetic.
///
/// ```
/// use strata_tensor::{StructuralOps, Tensor, TensorRead, TensorWrite, Result};
/// // Object safety: the trait works behind `dyn`.
/// fn copy_twice(ops: &dyn StructuralOps, x: TensorRead<'_>) -> Result<Tensor> {
///     let once = ops.to_contiguous(x)?;
///     ops.to_contiguous((&once).into())
/// }
/// ```
pub trait StructuralOps {
    /// `x` with its axes permuted: output axis `i` is input axis `perm[i]`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn StructuralOps = &backend;
    /// # let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(ops.transpose((&m).into(), &[1, 0])?.shape(), &[3, 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn transpose(&self, x: TensorRead<'_>, perm: &[usize]) -> Result<Tensor>;

    /// A compact row-major copy of `x` (any strides).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn StructuralOps = &backend;
    /// # let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// let r = m.view().reverse(&[1])?;
    /// assert_eq!(ops.to_contiguous(r.into())?.to_vec::<f64>()?, [3.0, 2.0, 1.0, 6.0, 5.0, 4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn to_contiguous(&self, x: TensorRead<'_>) -> Result<Tensor>;

    /// Copies `src` into `dst` (same dtype and shape; `dst` may be a strided view).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn StructuralOps = &backend;
    /// # let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// let mut t = TypedTensor::<f64>::zeros(&[2, 3])?;
    /// ops.copy_into((&m).into(), (&mut t).into())?;
    /// assert_eq!(&t, &m);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn copy_into(&self, src: TensorRead<'_>, dst: TensorWrite<'_>) -> Result<()>;

    /// `x` converted to `dtype` (XLA convert: truncating, saturating float to int; NaN
    /// to 0; `x != 0` to Bool; the real part of complex).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn StructuralOps = &backend;
    /// # let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(ops.cast((&m).into(), DType::I32)?.to_vec::<i32>()?, [1, 2, 3, 4, 5, 6]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn cast(&self, x: TensorRead<'_>, dtype: DType) -> Result<Tensor>;

    /// `x` converted into `out`'s dtype.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn StructuralOps = &backend;
    /// # let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// let mut out = TypedTensor::<f32>::zeros(&[2, 3])?;
    /// ops.cast_into((&m).into(), (&mut out).into())?;
    /// assert_eq!(out.data()[5], 6.0f32);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn cast_into(&self, x: TensorRead<'_>, out: TensorWrite<'_>) -> Result<()>;

    /// `x` read in row-major order into `shape` (same element count).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn StructuralOps = &backend;
    /// # let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(ops.reshape((&m).into(), &[3, 2])?.shape(), &[3, 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn reshape(&self, x: TensorRead<'_>, shape: &[usize]) -> Result<Tensor>;

    /// `x` broadcast into `out_shape`: input axis `k` becomes output axis `dims[k]`
    /// (extent equal or 1).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn StructuralOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(ops.broadcast_in_dim((&x).into(), &[2, 3], &[1])?.shape(), &[2, 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn broadcast_in_dim(&self, x: TensorRead<'_>, out_shape: &[usize], dims: &[usize]) -> Result<Tensor>;

    /// The diagonal of axes `a` and `b`, appended as the last axis (numpy's convention).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn StructuralOps = &backend;
    /// # let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(ops.extract_diagonal((&m).into(), 0, 1)?.to_vec::<f64>()?, [1.0, 5.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn extract_diagonal(&self, x: TensorRead<'_>, a: usize, b: usize) -> Result<Tensor>;

    /// The inverse of [`StructuralOps::extract_diagonal`]: the last axis becomes the
    /// diagonal of output axes `a` and `b`, zeros elsewhere.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn StructuralOps = &backend;
    /// # let d = TypedTensor::from_vec(vec![1.0, 2.0], &[2])?;
    /// assert_eq!(ops.embed_diagonal((&d).into(), 0, 1)?.to_vec::<f64>()?, [1.0, 0.0, 0.0, 2.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn embed_diagonal(&self, x: TensorRead<'_>, a: usize, b: usize) -> Result<Tensor>;

    /// Zeroes the elements above diagonal `k` of the last two axes.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn StructuralOps = &backend;
    /// # let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(ops.tril((&m).into(), 0)?.to_vec::<f64>()?, [1.0, 0.0, 0.0, 4.0, 5.0, 0.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn tril(&self, x: TensorRead<'_>, k: isize) -> Result<Tensor>;

    /// Zeroes the elements below diagonal `k` of the last two axes.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn StructuralOps = &backend;
    /// # let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(ops.triu((&m).into(), 1)?.to_vec::<f64>()?, [0.0, 2.0, 3.0, 0.0, 0.0, 6.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn triu(&self, x: TensorRead<'_>, k: isize) -> Result<Tensor>;
}

/// Contractions: `dot_general` and its relatives.
pub trait ContractionOps {
    /// XLA `dot_general`: output axes are batch, then lhs free, then rhs free. The
    /// conjugation flags conjugate complex operands on the fly (ignored for reals).
    /// The analysis is cached per domain.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ContractionOps = &backend;
    /// # let a = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0], &[2, 2])?;
    /// let c = ops.dot_general((&a).into(), (&a).into(), &DotGeneralConfig::matmul(), false, false)?;
    /// assert_eq!(c.to_vec::<f64>()?, [7.0, 10.0, 15.0, 22.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn dot_general(
        &self,
        lhs: TensorRead<'_>,
        rhs: TensorRead<'_>,
        config: &DotGeneralConfig,
        conj_lhs: bool,
        conj_rhs: bool,
    ) -> Result<Tensor>;

    /// `out = alpha * dot_general(lhs, rhs) + beta * out`; `alpha`/`beta` must be
    /// representable in the operands' dtype (real for real dtypes).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ContractionOps = &backend;
    /// # let a = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0], &[2, 2])?;
    /// let mut c = TypedTensor::filled(&[2, 2], 1.0)?;
    /// let (two, one) = (c64::new(2.0, 0.0), c64::new(1.0, 0.0));
    /// ops.dot_general_into((&a).into(), (&a).into(), &DotGeneralConfig::matmul(), false, false, two, one, (&mut c).into())?;
    /// assert_eq!(c.data(), &[15.0, 21.0, 31.0, 45.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    fn dot_general_into(
        &self,
        lhs: TensorRead<'_>,
        rhs: TensorRead<'_>,
        config: &DotGeneralConfig,
        conj_lhs: bool,
        conj_rhs: bool,
        alpha: c64,
        beta: c64,
        out: TensorWrite<'_>,
    ) -> Result<()>;

    /// Many independent GEMMs (`lhs[i] · rhs[i]`) in one call.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ContractionOps = &backend;
    /// # let a = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0], &[2, 2])?;
    /// let cs = ops.grouped_gemm(&[(&a).into()], &[(&a).into()], &GroupedGemmConfig::default())?;
    /// assert_eq!(cs[0].to_vec::<f64>()?, [7.0, 10.0, 15.0, 22.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn grouped_gemm(
        &self,
        lhs: &[TensorRead<'_>],
        rhs: &[TensorRead<'_>],
        config: &GroupedGemmConfig,
    ) -> Result<Vec<Tensor>>;

    /// `sum(conj(x) * y)` over all elements, as a rank-0 tensor.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ContractionOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(ops.vdot((&x).into(), (&x).into())?.to_scalar::<f64>()?, 21.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn vdot(&self, x: TensorRead<'_>, y: TensorRead<'_>) -> Result<Tensor>;

    /// `sum(|x|^2)` as a rank-0 tensor of the real dtype.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ContractionOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(ops.norm_squared((&x).into())?.to_scalar::<f64>()?, 21.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn norm_squared(&self, x: TensorRead<'_>) -> Result<Tensor>;

    /// `y = a * x + b * y`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ContractionOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let mut y = TypedTensor::filled(&[3], 1.0)?;
    /// ops.axpby_into(c64::new(2.0, 0.0), (&x).into(), c64::new(-1.0, 0.0), (&mut y).into())?;
    /// assert_eq!(y.data(), &[1.0, 3.0, 7.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn axpby_into(&self, a: c64, x: TensorRead<'_>, b: c64, y: TensorWrite<'_>) -> Result<()>;

    /// Matrix product of two rank-2 tensors (`dot_general` contracting lhs axis 1 with
    /// rhs axis 0).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn ContractionOps = &backend;
    /// # let a = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0], &[2, 2])?;
    /// assert_eq!(ops.matmul((&a).into(), (&a).into())?.to_vec::<f64>()?, [7.0, 10.0, 15.0, 22.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn matmul(&self, lhs: TensorRead<'_>, rhs: TensorRead<'_>) -> Result<Tensor> {
        self.dot_general(lhs, rhs, &DotGeneralConfig::matmul(), false, false)
    }
}

/// Indexing ops with StableHLO semantics.
pub trait IndexingOps {
    /// StableHLO `gather` (start indices clamped into range).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn IndexingOps = &backend;
    /// # let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// let idx = TypedTensor::from_vec(vec![1i64, 0], &[2])?;
    /// let rows = ops.gather((&m).into(), (&idx).into(), &GatherConfig::take(m.shape(), idx.shape(), 0))?;
    /// assert_eq!(rows.to_vec::<f64>()?, [4.0, 5.0, 6.0, 1.0, 2.0, 3.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn gather(&self, operand: TensorRead<'_>, indices: TensorRead<'_>, config: &GatherConfig) -> Result<Tensor>;

    /// StableHLO `scatter` with the config's combiner (out-of-range windows skipped).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn IndexingOps = &backend;
    /// # let x = TypedTensor::<f64>::zeros(&[4])?;
    /// # let idx = TypedTensor::from_vec(vec![1i64, 3], &[2, 1])?;
    /// # let upd = TypedTensor::from_vec(vec![5.0, 7.0], &[2])?;
    /// let cfg = ScatterConfig { inserted_window_dims: vec![0], scatter_dims_to_operand_dims: vec![0], index_vector_dim: 1, ..ScatterConfig::default() };
    /// assert_eq!(ops.scatter((&x).into(), (&idx).into(), (&upd).into(), &cfg)?.to_vec::<f64>()?, [0.0, 5.0, 0.0, 7.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn scatter(
        &self,
        operand: TensorRead<'_>,
        indices: TensorRead<'_>,
        updates: TensorRead<'_>,
        config: &ScatterConfig,
    ) -> Result<Tensor>;

    /// Static strided slice.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn IndexingOps = &backend;
    /// # let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(ops.slice((&m).into(), &SliceConfig::ranges([0..2, 1..3]))?.to_vec::<f64>()?, [2.0, 3.0, 5.0, 6.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn slice(&self, operand: TensorRead<'_>, config: &SliceConfig) -> Result<Tensor>;

    /// A window of `sizes` starting at `starts` (one per axis, clamped into range).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn IndexingOps = &backend;
    /// # let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(ops.dynamic_slice((&m).into(), &[1, 5], &[1, 2])?.to_vec::<f64>()?, [5.0, 6.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn dynamic_slice(&self, operand: TensorRead<'_>, starts: &[i64], sizes: &[usize]) -> Result<Tensor>;

    /// `operand` with `update` written at `starts` (clamped into range).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn IndexingOps = &backend;
    /// # let m = TypedTensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// let u = TypedTensor::filled(&[1, 2], 0.0)?;
    /// assert_eq!(ops.dynamic_update_slice((&m).into(), (&u).into(), &[0, 1])?.to_vec::<f64>()?, [1.0, 0.0, 0.0, 4.0, 5.0, 6.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn dynamic_update_slice(&self, operand: TensorRead<'_>, update: TensorRead<'_>, starts: &[i64]) -> Result<Tensor>;

    /// Edge and interior padding with a rank-0 `padding_value` (negative edges crop).
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn IndexingOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let zero = Tensor::scalar(0.0);
    /// let p = ops.pad((&x).into(), (&zero).into(), &PadConfig::none(1).low(0, 1))?;
    /// assert_eq!(p.to_vec::<f64>()?, [0.0, 1.0, 2.0, 4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn pad(&self, operand: TensorRead<'_>, padding_value: TensorRead<'_>, config: &PadConfig) -> Result<Tensor>;

    /// Joins `operands` along `axis`.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn IndexingOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(ops.concatenate(&[(&x).into(), (&x).into()], 0)?.shape(), &[6]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn concatenate(&self, operands: &[TensorRead<'_>], axis: usize) -> Result<Tensor>;

    /// `operand` with each of `axes` reversed.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn IndexingOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// assert_eq!(ops.reverse((&x).into(), &[0])?.to_vec::<f64>()?, [4.0, 2.0, 1.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn reverse(&self, operand: TensorRead<'_>, axes: &[usize]) -> Result<Tensor>;
}

/// Fused elementwise work: one pass over memory for many ops.
pub trait FusionOps {
    /// Runs `plan` over `inputs` (one shape) and returns one tensor per plan output.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn FusionOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let plan = ElementwiseFusionPlan::new(vec![FusionInstr::Input(0), FusionInstr::Binary(BinaryOp::Mul, 0, 0)], vec![1]);
    /// assert_eq!(ops.execute_fusion(&plan, &[(&x).into()])?[0].to_vec::<f64>()?, [1.0, 4.0, 16.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn execute_fusion(&self, plan: &ElementwiseFusionPlan, inputs: &[TensorRead<'_>]) -> Result<Vec<Tensor>>;

    /// `a * b` with both broadcast into `out_shape` (`a`'s axis `k` becomes output axis
    /// `a_dims[k]`, likewise `b`) without materialising the broadcasts.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn FusionOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let outer = ops.broadcast_multiply((&x).into(), &[0], (&x).into(), &[1], &[3, 3])?;
    /// assert_eq!(outer.shape(), &[3, 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn broadcast_multiply(
        &self,
        a: TensorRead<'_>,
        a_dims: &[usize],
        b: TensorRead<'_>,
        b_dims: &[usize],
        out_shape: &[usize],
    ) -> Result<Tensor>;
}

/// Buffers and host transfer. On a CPU backend host memory *is* backend memory: every
/// [`Tensor`] already lives on the host, so download and upload hand the tensor back
/// unchanged (no copy); a backend with memory of its own refuses tensors it does not own.
pub trait BufferOps {
    /// Gives `tensor`'s buffer back to the backend's pool for reuse.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn BufferOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let y = backend.add(&x, &x)?;
    /// ops.recycle(y); // its buffer serves a later output
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn recycle(&self, tensor: Tensor);

    /// A row-major tensor of `dtype` and `shape` for the caller to overwrite, from the
    /// backend's pool where it keeps one (so a large buffer reuses mapped pages, and is
    /// placed like the backend's outputs). Its elements are valid values of the dtype but
    /// otherwise unspecified: zeros from fresh pages, or what an earlier output held.
    /// Errors: a shape whose element count overflows, or memory the allocator refuses.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn BufferOps = &backend;
    /// let mut t = ops.empty(DType::F64, &[2, 3])?.into_typed::<f64>()?;
    /// t.data_mut().fill(1.5); // every element written before it is read
    /// assert_eq!(t.data(), &[1.5; 6]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn empty(&self, dtype: DType, shape: &[usize]) -> Result<Tensor>;

    /// The tensor as host data.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn BufferOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let t = Tensor::from(x.clone());
    /// assert_eq!(ops.download(t)?.to_vec::<f64>()?, x.data());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn download(&self, tensor: Tensor) -> Result<Tensor>;

    /// Host data as a backend tensor.
    ///
    /// ```
    /// # use strata_backend::prelude::*;
    /// # let backend = CpuBackend::new()?; let ops: &dyn BufferOps = &backend;
    /// # let x = TypedTensor::from_vec(vec![1.0, 2.0, 4.0], &[3])?;
    /// let t = Tensor::from(x.clone());
    /// assert_eq!(ops.upload(t)?.shape(), &[3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn upload(&self, tensor: Tensor) -> Result<Tensor>;
}
