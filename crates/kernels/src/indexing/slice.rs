//! `slice` and `reverse`: metadata changes of the operand's view, then one strided copy.

use strata_tensor::config::SliceConfig;
use strata_tensor::shape::check_unique_axes;
use strata_tensor::{Result, Scalar, Tensor, TensorRead, TypedView, dispatch_dtype};

use super::copy::copy_to_contiguous;
use crate::alloc::fill_output;
use crate::context::KernelContext;

/// Copies a typed view into a fresh row-major tensor under `op`'s name.
fn materialize<T: Scalar>(ctx: &KernelContext<'_>, op: &'static str, view: TypedView<'_, T>) -> Result<Tensor> {
    let shape = view.shape().to_vec();
    let out = fill_output(ctx, op, &shape, |out: &mut [T]| copy_to_contiguous(ctx, &view, out))?;
    Ok(out.into())
}

/// The elements `start, start + stride, ...` below `limit` along every axis (StableHLO
/// `slice`), copied into a new row-major tensor.
///
/// ```
/// use strata_kernels::{KernelContext, indexing::slice};
/// use strata_tensor::{Tensor, config::SliceConfig};
/// let t = Tensor::from_vec((0..10).collect::<Vec<i64>>(), &[10]).unwrap();
/// let out = slice(&KernelContext::sequential(), &(&t).into(), &SliceConfig::new(vec![1], vec![8], vec![3])).unwrap();
/// assert_eq!(out.as_typed::<i64>().unwrap().data(), &[1, 4, 7]);
/// ```
pub fn slice(ctx: &KernelContext<'_>, operand: &TensorRead<'_>, config: &SliceConfig) -> Result<Tensor> {
    const OP: &str = "slice";
    config.validate(operand.shape())?;
    dispatch_dtype!(operand.dtype(), T => {
        let mut view = operand.typed_view::<T>().map_err(|e| e.in_op(OP))?;
        for axis in 0..operand.rank() {
            view = view
                .slice_axis(axis, config.start[axis], config.limit[axis], config.strides[axis])
                .map_err(|e| e.in_op(OP))?;
        }
        materialize(ctx, OP, view)
    })
}

/// The operand with the order of indices reversed along each of `axes` (distinct, in
/// range), copied into a new row-major tensor.
///
/// ```
/// use strata_kernels::{KernelContext, indexing::reverse};
/// use strata_tensor::Tensor;
/// let t = Tensor::from_vec(vec![1, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
/// let out = reverse(&KernelContext::sequential(), &(&t).into(), &[1]).unwrap();
/// assert_eq!(out.as_typed::<i32>().unwrap().data(), &[3, 2, 1, 6, 5, 4]);
/// ```
pub fn reverse(ctx: &KernelContext<'_>, operand: &TensorRead<'_>, axes: &[usize]) -> Result<Tensor> {
    const OP: &str = "reverse";
    check_unique_axes(OP, "axis", axes, operand.rank())?;
    dispatch_dtype!(operand.dtype(), T => {
        let mut view = operand.typed_view::<T>().map_err(|e| e.in_op(OP))?;
        for &axis in axes {
            view = view.reverse_axis(axis).map_err(|e| e.in_op(OP))?;
        }
        materialize(ctx, OP, view)
    })
}
