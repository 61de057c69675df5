//! `concatenate`: operands laid side by side along one axis.

use strata_tensor::shape::{check_axis, row_major_strides};
use strata_tensor::{Error, Result, Scalar, Tensor, TensorRead, dispatch_dtype};

use super::copy::{Strided, copy_strided, copy_to_contiguous};
use super::parallel::{for_each_piece, parts_for};
use crate::alloc::fill_output;
use crate::context::KernelContext;

const OP: &str = "concatenate";

/// The operands joined along `axis`: all must share one dtype, one rank (at least 1) and
/// every extent except along `axis`. Views of any strides are accepted.
///
/// ```
/// use strata_kernels::{KernelContext, indexing::concatenate};
/// use strata_tensor::Tensor;
/// let a = Tensor::from_vec(vec![1, 2, 3, 4], &[2, 2]).unwrap();
/// let b = Tensor::from_vec(vec![5, 6], &[2, 1]).unwrap();
/// let out = concatenate(&KernelContext::sequential(), &[(&a).into(), (&b).into()], 1).unwrap();
/// assert_eq!(out.shape(), &[2, 3]);
/// assert_eq!(out.as_typed::<i32>().unwrap().data(), &[1, 2, 5, 3, 4, 6]);
/// ```
pub fn concatenate(ctx: &KernelContext<'_>, operands: &[TensorRead<'_>], axis: usize) -> Result<Tensor> {
    let Some(first) = operands.first() else {
        return Err(Error::invalid_argument(OP, "no operands were given; need at least one"));
    };
    check_axis(OP, "axis", axis, first.rank())?;
    let mut out_shape = first.shape().to_vec();
    out_shape[axis] = 0;
    for (i, op) in operands.iter().enumerate() {
        if op.dtype() != first.dtype() {
            return Err(Error::dtype_mismatch(
                OP,
                format!("operand 0 has dtype {}, operand {i} has dtype {}", first.dtype(), op.dtype()),
            ));
        }
        let same_rank = op.rank() == first.rank();
        if !same_rank || op.shape().iter().zip(first.shape()).enumerate().any(|(d, (a, b))| d != axis && a != b) {
            return Err(Error::shape_mismatch(
                OP,
                format!(
                    "operand 0 has shape {:?}, operand {i} has shape {:?}; all extents except axis {axis} must match",
                    first.shape(),
                    op.shape()
                ),
            ));
        }
        out_shape[axis] = out_shape[axis].checked_add(op.shape()[axis]).ok_or_else(|| {
            Error::invalid_argument(OP, format!("the concatenated extent along axis {axis} overflows"))
        })?;
    }
    dispatch_dtype!(first.dtype(), T => run::<T>(ctx, operands, axis, &out_shape))
}

fn run<T: Scalar>(
    ctx: &KernelContext<'_>,
    operands: &[TensorRead<'_>],
    axis: usize,
    out_shape: &[usize],
) -> Result<Tensor> {
    let views = operands.iter().map(|op| op.typed_view::<T>().map_err(|e| e.in_op(OP))).collect::<Result<Vec<_>>>()?;
    let out_strides = row_major_strides(out_shape);
    let out = fill_output(ctx, OP, out_shape, |out: &mut [T]| {
        if out.is_empty() {
            return;
        }
        if axis == 0 {
            // Each operand fills one contiguous block of the output.
            let mut at = 0;
            for v in &views {
                copy_to_contiguous(ctx, v, &mut out[at..at + v.len()]);
                at += v.len();
            }
            return;
        }
        // Otherwise every output row (axis 0) holds a part of every operand: split the rows.
        let rows = out_shape[0];
        let row_len = out.len() / rows;
        for_each_piece(ctx, out, row_len, parts_for(ctx, out.len()).min(rows), &|first, piece| {
            let (r0, count) = (first / row_len, piece.len() / row_len);
            let mut at = 0isize;
            for v in &views {
                let mut shape = v.shape().to_vec();
                shape[0] = count;
                let from = Strided { offset: v.offset() as isize + r0 as isize * v.strides()[0], strides: v.strides() };
                copy_strided(&shape, v.buffer(), from, piece, Strided { offset: at, strides: &out_strides });
                at += v.shape()[axis] as isize * out_strides[axis];
            }
        });
    })?;
    Ok(out.into())
}
