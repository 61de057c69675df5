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
    fn binary(&self, op: BinaryOp, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor>;
    /// `out = op(a, b)`.
    fn binary_into(&self, op: BinaryOp, a: TensorRead<'_>, b: TensorRead<'_>, out: TensorWrite<'_>) -> Result<()>;
    /// `op(x)` elementwise (`Abs` of complex is real).
    fn unary(&self, op: UnaryOp, x: TensorRead<'_>) -> Result<Tensor>;
    /// `out = op(x)`.
    fn unary_into(&self, op: UnaryOp, x: TensorRead<'_>, out: TensorWrite<'_>) -> Result<()>;
    /// `a <dir> b` elementwise, giving Bool.
    fn compare(&self, dir: CompareDir, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor>;
    /// `out = a <dir> b` (a Bool output).
    fn compare_into(&self, dir: CompareDir, a: TensorRead<'_>, b: TensorRead<'_>, out: TensorWrite<'_>) -> Result<()>;
    /// `pred ? on_true : on_false` elementwise (`pred` is Bool).
    fn select(&self, pred: TensorRead<'_>, on_true: TensorRead<'_>, on_false: TensorRead<'_>) -> Result<Tensor>;
    /// `out = pred ? on_true : on_false`.
    fn select_into(
        &self,
        pred: TensorRead<'_>,
        on_true: TensorRead<'_>,
        on_false: TensorRead<'_>,
        out: TensorWrite<'_>,
    ) -> Result<()>;
    /// `min(max(x, lo), hi)` elementwise (`lo`/`hi` of `x`'s shape, or rank 0).
    fn clamp(&self, lo: TensorRead<'_>, x: TensorRead<'_>, hi: TensorRead<'_>) -> Result<Tensor>;
    /// `out = clamp(lo, x, hi)`.
    fn clamp_into(&self, lo: TensorRead<'_>, x: TensorRead<'_>, hi: TensorRead<'_>, out: TensorWrite<'_>)
    -> Result<()>;

    /// `a + b`.
    fn add(&self, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
        self.binary(BinaryOp::Add, a, b)
    }
    /// `a - b`.
    fn sub(&self, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
        self.binary(BinaryOp::Sub, a, b)
    }
    /// `a * b`.
    fn mul(&self, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
        self.binary(BinaryOp::Mul, a, b)
    }
    /// `a / b` (integers truncate; `x / 0 = -1`).
    fn div(&self, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
        self.binary(BinaryOp::Div, a, b)
    }
    /// Remainder with the dividend's sign.
    fn rem(&self, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
        self.binary(BinaryOp::Rem, a, b)
    }
    /// Elementwise maximum (NaN propagates).
    fn maximum(&self, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
        self.binary(BinaryOp::Max, a, b)
    }
    /// Elementwise minimum (NaN propagates).
    fn minimum(&self, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
        self.binary(BinaryOp::Min, a, b)
    }
    /// `-x`.
    fn neg(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Neg, x)
    }
    /// Complex conjugate; a real float gives its complex counterpart with imaginary part
    /// `+0` (as `lax.conj`); integers and bool are `Unsupported`.
    fn conj(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Conj, x)
    }
    /// `|x|` (real for complex input).
    fn abs(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Abs, x)
    }
    /// Sign of `x`.
    fn sign(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Sign, x)
    }
}

/// Transcendental functions on float and complex tensors (integers: Unsupported). All
/// provided over [`ElementwiseOps`]: implementing it is `impl AnalyticOps for B {}`.
pub trait AnalyticOps: ElementwiseOps {
    /// `e^x`.
    fn exp(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Exp, x)
    }
    /// Natural logarithm.
    fn log(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Log, x)
    }
    /// Sine.
    fn sin(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Sin, x)
    }
    /// Cosine.
    fn cos(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Cos, x)
    }
    /// Hyperbolic tangent.
    fn tanh(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Tanh, x)
    }
    /// Square root.
    fn sqrt(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Sqrt, x)
    }
    /// `1 / sqrt(x)`.
    fn rsqrt(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Rsqrt, x)
    }
    /// `e^x - 1`.
    fn expm1(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Expm1, x)
    }
    /// `ln(1 + x)`.
    fn log1p(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.unary(UnaryOp::Log1p, x)
    }
    /// `a ** b` elementwise, on floats and complex (`lax.pow` rejects integers).
    fn pow(&self, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
        self.binary(BinaryOp::Pow, a, b)
    }
}

/// Reductions over any set of axes (the reduced axes are removed; no axes is a copy).
pub trait ReductionOps {
    /// `op` over `axes` of `x`.
    fn reduce(&self, op: ReduceOp, x: TensorRead<'_>, axes: &[usize]) -> Result<Tensor>;
    /// `out = op over axes of x`.
    fn reduce_into(&self, op: ReduceOp, x: TensorRead<'_>, axes: &[usize], out: TensorWrite<'_>) -> Result<()>;

    /// Sum over `axes`.
    fn sum(&self, x: TensorRead<'_>, axes: &[usize]) -> Result<Tensor> {
        self.reduce(ReduceOp::Sum, x, axes)
    }
    /// Sum of `|x|^2` over `axes` (real for complex input).
    fn sum_squares(&self, x: TensorRead<'_>, axes: &[usize]) -> Result<Tensor> {
        self.reduce(ReduceOp::SumSquares, x, axes)
    }
    /// Product over `axes`.
    fn prod(&self, x: TensorRead<'_>, axes: &[usize]) -> Result<Tensor> {
        self.reduce(ReduceOp::Prod, x, axes)
    }
    /// Maximum over `axes`.
    fn max(&self, x: TensorRead<'_>, axes: &[usize]) -> Result<Tensor> {
        self.reduce(ReduceOp::Max, x, axes)
    }
    /// Minimum over `axes`.
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
    fn transpose(&self, x: TensorRead<'_>, perm: &[usize]) -> Result<Tensor>;

    /// A compact row-major copy of `x` (any strides).
    fn to_contiguous(&self, x: TensorRead<'_>) -> Result<Tensor>;

    /// Copies `src` into `dst` (same dtype and shape; `dst` may be a strided view).
    fn copy_into(&self, src: TensorRead<'_>, dst: TensorWrite<'_>) -> Result<()>;

    /// `x` converted to `dtype` (XLA convert: truncating, saturating float to int; NaN
    /// to 0; `x != 0` to Bool; the real part of complex).
    fn cast(&self, x: TensorRead<'_>, dtype: DType) -> Result<Tensor>;

    /// `x` converted into `out`'s dtype.
    fn cast_into(&self, x: TensorRead<'_>, out: TensorWrite<'_>) -> Result<()>;

    /// `x` read in row-major order into `shape` (same element count).
    fn reshape(&self, x: TensorRead<'_>, shape: &[usize]) -> Result<Tensor>;

    /// `x` broadcast into `out_shape`: input axis `k` becomes output axis `dims[k]`
    /// (extent equal or 1).
    fn broadcast_in_dim(&self, x: TensorRead<'_>, out_shape: &[usize], dims: &[usize]) -> Result<Tensor>;

    /// The diagonal of axes `a` and `b`, appended as the last axis (numpy's convention).
    fn extract_diagonal(&self, x: TensorRead<'_>, a: usize, b: usize) -> Result<Tensor>;

    /// The inverse of [`StructuralOps::extract_diagonal`]: the last axis becomes the
    /// diagonal of output axes `a` and `b`, zeros elsewhere.
    fn embed_diagonal(&self, x: TensorRead<'_>, a: usize, b: usize) -> Result<Tensor>;

    /// Zeroes the elements above diagonal `k` of the last two axes.
    fn tril(&self, x: TensorRead<'_>, k: isize) -> Result<Tensor>;

    /// Zeroes the elements below diagonal `k` of the last two axes.
    fn triu(&self, x: TensorRead<'_>, k: isize) -> Result<Tensor>;
}

/// Contractions: `dot_general` and its relatives.
pub trait ContractionOps {
    /// XLA `dot_general`: output axes are batch, then lhs free, then rhs free. The
    /// conjugation flags conjugate complex operands on the fly (ignored for reals).
    /// The analysis is cached per domain.
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
    fn grouped_gemm(
        &self,
        lhs: &[TensorRead<'_>],
        rhs: &[TensorRead<'_>],
        config: &GroupedGemmConfig,
    ) -> Result<Vec<Tensor>>;

    /// `sum(conj(x) * y)` over all elements, as a rank-0 tensor.
    fn vdot(&self, x: TensorRead<'_>, y: TensorRead<'_>) -> Result<Tensor>;

    /// `sum(|x|^2)` as a rank-0 tensor of the real dtype.
    fn norm_squared(&self, x: TensorRead<'_>) -> Result<Tensor>;

    /// `y = a * x + b * y`.
    fn axpby_into(&self, a: c64, x: TensorRead<'_>, b: c64, y: TensorWrite<'_>) -> Result<()>;

    /// Matrix product of two rank-2 tensors (`dot_general` contracting lhs axis 1 with
    /// rhs axis 0).
    fn matmul(&self, lhs: TensorRead<'_>, rhs: TensorRead<'_>) -> Result<Tensor> {
        self.dot_general(lhs, rhs, &DotGeneralConfig::matmul(), false, false)
    }
}

/// Indexing ops with StableHLO semantics.
pub trait IndexingOps {
    /// StableHLO `gather` (start indices clamped into range).
    fn gather(&self, operand: TensorRead<'_>, indices: TensorRead<'_>, config: &GatherConfig) -> Result<Tensor>;

    /// StableHLO `scatter` with the config's combiner (out-of-range windows skipped).
    fn scatter(
        &self,
        operand: TensorRead<'_>,
        indices: TensorRead<'_>,
        updates: TensorRead<'_>,
        config: &ScatterConfig,
    ) -> Result<Tensor>;

    /// Static strided slice.
    fn slice(&self, operand: TensorRead<'_>, config: &SliceConfig) -> Result<Tensor>;

    /// A window of `sizes` starting at `starts` (one per axis, clamped into range).
    fn dynamic_slice(&self, operand: TensorRead<'_>, starts: &[i64], sizes: &[usize]) -> Result<Tensor>;

    /// `operand` with `update` written at `starts` (clamped into range).
    fn dynamic_update_slice(&self, operand: TensorRead<'_>, update: TensorRead<'_>, starts: &[i64]) -> Result<Tensor>;

    /// Edge and interior padding with a rank-0 `padding_value` (negative edges crop).
    fn pad(&self, operand: TensorRead<'_>, padding_value: TensorRead<'_>, config: &PadConfig) -> Result<Tensor>;

    /// Joins `operands` along `axis`.
    fn concatenate(&self, operands: &[TensorRead<'_>], axis: usize) -> Result<Tensor>;

    /// `operand` with each of `axes` reversed.
    fn reverse(&self, operand: TensorRead<'_>, axes: &[usize]) -> Result<Tensor>;
}

/// Fused elementwise work: one pass over memory for many ops.
pub trait FusionOps {
    /// Runs `plan` over `inputs` (one shape) and returns one tensor per plan output.
    fn execute_fusion(&self, plan: &ElementwiseFusionPlan, inputs: &[TensorRead<'_>]) -> Result<Vec<Tensor>>;

    /// `a * b` with both broadcast into `out_shape` (`a`'s axis `k` becomes output axis
    /// `a_dims[k]`, likewise `b`) without materialising the broadcasts.
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
    fn recycle(&self, tensor: Tensor);

    /// The tensor as host data.
    fn download(&self, tensor: Tensor) -> Result<Tensor>;

    /// Host data as a backend tensor.
    fn upload(&self, tensor: Tensor) -> Result<Tensor>;
}
