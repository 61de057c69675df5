//! The backend op traits: one object-safe trait per op family of SPEC §8.
//!
//! A backend (the CPU facade, a session of it, a test double) implements these so that
//! code written against `&dyn ContractionOps` and friends runs on any of them. Every
//! input is a [`TensorRead`] (an owned tensor or a view, so one method serves both) and
//! every caller-provided output a [`TensorWrite`]. Methods return fresh tensors; `_into`
//! forms write into the caller's output and return nothing. Provided methods are thin
//! conveniences over the required ones, never a second code path.
//!
//! The families whose kernels are still being written (elementwise, analytic, reduction,
//! fusion and the remaining structural ops) get their traits with their op enums.

use crate::config::{DotGeneralConfig, GatherConfig, GroupedGemmConfig, PadConfig, ScatterConfig, SliceConfig};
use crate::{Result, Tensor, TensorRead, TensorWrite, c64};

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
