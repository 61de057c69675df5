//! The op traits, implemented once for the backend and its sessions. Each method is the
//! same few lines: name the op, estimate its work (elements touched, for the inline
//! rule; contractions add their multiply-adds, see `contraction::dot_general_work`), call
//! one kernel function with the context and the domain's caches.

use strata_kernels::contraction::{self, PlanCache};
use strata_kernels::{elementwise, fusion, indexing, reduction, structural};
use strata_tensor::config::{
    BinaryOp, CompareDir, DotGeneralConfig, ElementwiseFusionPlan, GatherConfig, GroupedGemmConfig, PadConfig,
    ReduceOp, ScatterConfig, SliceConfig, UnaryOp,
};
use strata_tensor::{
    AnalyticOps, BufferOps, ContractionOps, DType, ElementwiseOps, FusionOps, IndexingOps, ReductionOps, Result,
    StructuralOps, Tensor, TensorRead, TensorWrite, c64,
};

use crate::backend::CpuBackend;
use crate::session::CpuSession;

// Work estimates only steer the inline rule, and may be asked of shapes whose element
// count does not fit a usize (the kernel then refuses them): they saturate, never overflow.

fn total(xs: &[TensorRead<'_>]) -> usize {
    xs.iter().fold(0, |sum, x| sum.saturating_add(x.len()))
}

fn elements(shape: &[usize]) -> usize {
    // Zero extents first: a zero-size shape is no work whatever its other extents.
    if shape.contains(&0) { 0 } else { shape.iter().fold(1, |n, &d| n.saturating_mul(d)) }
}

/// Implements the op traits for a type with
/// `fn run<R>(&self, op, work, impl FnOnce(&KernelContext, &Inner) -> Result<R>) -> Result<R>`.
macro_rules! impl_op_traits {
    ($ty:ty) => {
        impl ElementwiseOps for $ty {
            fn binary(&self, op: BinaryOp, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
                self.run(op.name(), a.len(), |ctx, _| elementwise::binary(ctx, op, a, b))
            }

            fn binary_into(
                &self,
                op: BinaryOp,
                a: TensorRead<'_>,
                b: TensorRead<'_>,
                out: TensorWrite<'_>,
            ) -> Result<()> {
                self.run(op.name(), a.len(), |ctx, _| elementwise::binary_into(ctx, op, a, b, out))
            }

            fn unary(&self, op: UnaryOp, x: TensorRead<'_>) -> Result<Tensor> {
                self.run(op.name(), x.len(), |ctx, _| elementwise::unary(ctx, op, x))
            }

            fn unary_into(&self, op: UnaryOp, x: TensorRead<'_>, out: TensorWrite<'_>) -> Result<()> {
                self.run(op.name(), x.len(), |ctx, _| elementwise::unary_into(ctx, op, x, out))
            }

            fn compare(&self, dir: CompareDir, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
                self.run("compare", a.len(), |ctx, _| elementwise::compare(ctx, dir, a, b))
            }

            fn compare_into(
                &self,
                dir: CompareDir,
                a: TensorRead<'_>,
                b: TensorRead<'_>,
                out: TensorWrite<'_>,
            ) -> Result<()> {
                self.run("compare", a.len(), |ctx, _| elementwise::compare_into(ctx, dir, a, b, out))
            }

            fn select(
                &self,
                pred: TensorRead<'_>,
                on_true: TensorRead<'_>,
                on_false: TensorRead<'_>,
            ) -> Result<Tensor> {
                self.run("select", pred.len(), |ctx, _| elementwise::select(ctx, pred, on_true, on_false))
            }

            fn select_into(
                &self,
                pred: TensorRead<'_>,
                on_true: TensorRead<'_>,
                on_false: TensorRead<'_>,
                out: TensorWrite<'_>,
            ) -> Result<()> {
                self.run("select", pred.len(), |ctx, _| elementwise::select_into(ctx, pred, on_true, on_false, out))
            }

            fn clamp(&self, lo: TensorRead<'_>, x: TensorRead<'_>, hi: TensorRead<'_>) -> Result<Tensor> {
                self.run("clamp", x.len(), |ctx, _| elementwise::clamp(ctx, lo, x, hi))
            }

            fn clamp_into(
                &self,
                lo: TensorRead<'_>,
                x: TensorRead<'_>,
                hi: TensorRead<'_>,
                out: TensorWrite<'_>,
            ) -> Result<()> {
                self.run("clamp", x.len(), |ctx, _| elementwise::clamp_into(ctx, lo, x, hi, out))
            }
        }

        impl AnalyticOps for $ty {}

        impl ReductionOps for $ty {
            fn reduce(&self, op: ReduceOp, x: TensorRead<'_>, axes: &[usize]) -> Result<Tensor> {
                self.run(op.name(), x.len(), |ctx, _| reduction::reduce(ctx, op, x, axes))
            }

            fn reduce_into(&self, op: ReduceOp, x: TensorRead<'_>, axes: &[usize], out: TensorWrite<'_>) -> Result<()> {
                self.run(op.name(), x.len(), |ctx, _| reduction::reduce_into(ctx, op, x, axes, out))
            }
        }

        impl StructuralOps for $ty {
            fn cast(&self, x: TensorRead<'_>, dtype: DType) -> Result<Tensor> {
                self.run("cast", x.len(), |ctx, _| structural::cast(ctx, x, dtype))
            }

            fn cast_into(&self, x: TensorRead<'_>, out: TensorWrite<'_>) -> Result<()> {
                self.run("cast", x.len(), |ctx, _| structural::cast_into(ctx, x, out))
            }

            fn reshape(&self, x: TensorRead<'_>, shape: &[usize]) -> Result<Tensor> {
                self.run("reshape", x.len(), |ctx, _| structural::reshape(ctx, x, shape))
            }

            fn broadcast_in_dim(&self, x: TensorRead<'_>, out_shape: &[usize], dims: &[usize]) -> Result<Tensor> {
                self.run("broadcast_in_dim", elements(out_shape), |ctx, _| {
                    structural::broadcast_in_dim(ctx, x, out_shape, dims)
                })
            }

            fn extract_diagonal(&self, x: TensorRead<'_>, a: usize, b: usize) -> Result<Tensor> {
                self.run("extract_diagonal", x.len(), |ctx, _| structural::extract_diagonal(ctx, x, a, b))
            }

            fn embed_diagonal(&self, x: TensorRead<'_>, a: usize, b: usize) -> Result<Tensor> {
                self.run("embed_diagonal", x.len(), |ctx, _| structural::embed_diagonal(ctx, x, a, b))
            }

            fn tril(&self, x: TensorRead<'_>, k: isize) -> Result<Tensor> {
                self.run("tril", x.len(), |ctx, _| structural::tril(ctx, x, k))
            }

            fn triu(&self, x: TensorRead<'_>, k: isize) -> Result<Tensor> {
                self.run("triu", x.len(), |ctx, _| structural::triu(ctx, x, k))
            }

            fn transpose(&self, x: TensorRead<'_>, perm: &[usize]) -> Result<Tensor> {
                self.run("transpose", x.len(), |ctx, _| structural::transpose(ctx, x, perm))
            }

            fn to_contiguous(&self, x: TensorRead<'_>) -> Result<Tensor> {
                self.run("to_contiguous", x.len(), |ctx, _| structural::to_contiguous(ctx, x))
            }

            fn copy_into(&self, src: TensorRead<'_>, dst: TensorWrite<'_>) -> Result<()> {
                self.run("copy_into", src.len(), |ctx, _| structural::copy_into(ctx, src, dst))
            }
        }

        impl ContractionOps for $ty {
            fn dot_general(
                &self,
                lhs: TensorRead<'_>,
                rhs: TensorRead<'_>,
                config: &DotGeneralConfig,
                conj_lhs: bool,
                conj_rhs: bool,
            ) -> Result<Tensor> {
                let work = contraction::dot_general_work(lhs.shape(), rhs.shape(), config);
                self.run("dot_general", work, |ctx, res| {
                    let cache = PlanCache::Domain(res.contraction_cache());
                    let provider = res.provider(lhs.dtype());
                    contraction::dot_general(ctx, lhs, rhs, config, conj_lhs, conj_rhs, provider, Some(&cache))
                })
            }

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
            ) -> Result<()> {
                let work = contraction::dot_general_work(lhs.shape(), rhs.shape(), config);
                self.run("dot_general_into", work, |ctx, res| {
                    let cache = PlanCache::Domain(res.contraction_cache());
                    let provider = res.provider(lhs.dtype());
                    contraction::dot_general_into(
                        ctx,
                        lhs,
                        rhs,
                        config,
                        conj_lhs,
                        conj_rhs,
                        alpha,
                        beta,
                        out,
                        provider,
                        Some(&cache),
                    )
                })
            }

            fn grouped_gemm(
                &self,
                lhs: &[TensorRead<'_>],
                rhs: &[TensorRead<'_>],
                config: &GroupedGemmConfig,
            ) -> Result<Vec<Tensor>> {
                let work = contraction::grouped_gemm_work(lhs, rhs);
                self.run("grouped_gemm", work, |ctx, res| {
                    let dtype = lhs.first().map_or(DType::F64, |t| t.dtype());
                    contraction::grouped_gemm(ctx, lhs, rhs, config, res.provider(dtype))
                })
            }

            fn vdot(&self, x: TensorRead<'_>, y: TensorRead<'_>) -> Result<Tensor> {
                self.run("vdot", x.len().saturating_add(y.len()), |ctx, _| contraction::vdot(ctx, x, y))
            }

            fn norm_squared(&self, x: TensorRead<'_>) -> Result<Tensor> {
                self.run("norm_squared", x.len(), |ctx, _| contraction::norm_squared(ctx, x))
            }

            fn axpby_into(&self, a: c64, x: TensorRead<'_>, b: c64, y: TensorWrite<'_>) -> Result<()> {
                self.run("axpby_into", x.len(), |ctx, _| contraction::axpby_into(ctx, a, x, b, y))
            }
        }

        impl IndexingOps for $ty {
            fn gather(
                &self,
                operand: TensorRead<'_>,
                indices: TensorRead<'_>,
                config: &GatherConfig,
            ) -> Result<Tensor> {
                self.run("gather", operand.len().saturating_add(indices.len()), |ctx, res| {
                    indexing::gather(ctx, &operand, &indices, config, Some(res.indexed_cache()))
                })
            }

            fn scatter(
                &self,
                operand: TensorRead<'_>,
                indices: TensorRead<'_>,
                updates: TensorRead<'_>,
                config: &ScatterConfig,
            ) -> Result<Tensor> {
                self.run("scatter", operand.len().saturating_add(updates.len()), |ctx, res| {
                    indexing::scatter(ctx, &operand, &indices, &updates, config, Some(res.indexed_cache()))
                })
            }

            fn slice(&self, operand: TensorRead<'_>, config: &SliceConfig) -> Result<Tensor> {
                self.run("slice", operand.len(), |ctx, _| indexing::slice(ctx, &operand, config))
            }

            fn dynamic_slice(&self, operand: TensorRead<'_>, starts: &[i64], sizes: &[usize]) -> Result<Tensor> {
                self.run("dynamic_slice", elements(sizes), |ctx, res| {
                    let starts = indexing::StartIndices::Values(starts);
                    indexing::dynamic_slice(ctx, &operand, starts, sizes, Some(res.indexed_cache()))
                })
            }

            fn dynamic_update_slice(
                &self,
                operand: TensorRead<'_>,
                update: TensorRead<'_>,
                starts: &[i64],
            ) -> Result<Tensor> {
                self.run("dynamic_update_slice", operand.len(), |ctx, res| {
                    let starts = indexing::StartIndices::Values(starts);
                    indexing::dynamic_update_slice(ctx, &operand, &update, starts, Some(res.indexed_cache()))
                })
            }

            fn pad(
                &self,
                operand: TensorRead<'_>,
                padding_value: TensorRead<'_>,
                config: &PadConfig,
            ) -> Result<Tensor> {
                self.run("pad", operand.len(), |ctx, _| indexing::pad(ctx, &operand, &padding_value, config))
            }

            fn concatenate(&self, operands: &[TensorRead<'_>], axis: usize) -> Result<Tensor> {
                self.run("concatenate", total(operands), |ctx, _| indexing::concatenate(ctx, operands, axis))
            }

            fn reverse(&self, operand: TensorRead<'_>, axes: &[usize]) -> Result<Tensor> {
                self.run("reverse", operand.len(), |ctx, _| indexing::reverse(ctx, &operand, axes))
            }
        }

        impl FusionOps for $ty {
            fn execute_fusion(&self, plan: &ElementwiseFusionPlan, inputs: &[TensorRead<'_>]) -> Result<Vec<Tensor>> {
                self.run("execute_fusion", total(inputs), |ctx, _| fusion::execute(ctx, plan, inputs))
            }

            fn broadcast_multiply(
                &self,
                a: TensorRead<'_>,
                a_dims: &[usize],
                b: TensorRead<'_>,
                b_dims: &[usize],
                out_shape: &[usize],
            ) -> Result<Tensor> {
                self.run("broadcast_multiply", elements(out_shape), |ctx, _| {
                    fusion::broadcast_multiply(ctx, a, a_dims, b, b_dims, out_shape)
                })
            }
        }

        impl BufferOps for $ty {
            fn recycle(&self, tensor: Tensor) {
                self.allocation_pool().recycle_tensor(tensor)
            }

            fn empty(&self, dtype: DType, shape: &[usize]) -> Result<Tensor> {
                self.run("empty", 0, |ctx, _| structural::empty(ctx, dtype, shape))
            }

            fn download(&self, tensor: Tensor) -> Result<Tensor> {
                Ok(tensor)
            }

            fn upload(&self, tensor: Tensor) -> Result<Tensor> {
                Ok(tensor)
            }
        }
    };
}

impl_op_traits!(CpuBackend);
impl_op_traits!(CpuSession<'_>);

impl CpuBackend {
    fn allocation_pool(&self) -> &strata_pool::BufferPool {
        self.inner.allocation.resources().buffer_pool()
    }
}

impl CpuSession<'_> {
    fn allocation_pool(&self) -> &strata_pool::BufferPool {
        self.inner_ref().allocation.resources().buffer_pool()
    }
}
