//! `extract_diagonal` and `embed_diagonal` (numpy.diagonal's axis convention).

use strata_tensor::{
    Error, Result, Scalar, Tensor, TensorRead, TypedView, TypedViewMut, dispatch_dtype, shape::check_axis,
};

use crate::alloc::fill_output;
use crate::context::KernelContext;

use super::{copy_view_to_view_mut, to_contiguous_typed};

fn check_pair(op: &'static str, a: usize, b: usize, rank: usize) -> Result<()> {
    check_axis(op, "axis a", a, rank)?;
    check_axis(op, "axis b", b, rank)?;
    if a == b {
        return Err(Error::invalid_argument(op, format!("axes a and b are both {a}; they must differ")));
    }
    Ok(())
}

/// The diagonal of axes `a` and `b`: both axes are removed and the diagonal (of length
/// `min(extent a, extent b)`) is appended as the last axis, as numpy.diagonal does.
///
/// ```
/// use strata_kernels::{KernelContext, structural};
/// use strata_tensor::Tensor;
/// let m = Tensor::from_vec((0..6).collect::<Vec<i64>>(), &[2, 3]).unwrap();
/// let d = structural::extract_diagonal(&KernelContext::sequential(), (&m).into(), 0, 1).unwrap();
/// assert_eq!(d.as_typed::<i64>().unwrap().data(), &[0, 4]);
/// ```
pub fn extract_diagonal(ctx: &KernelContext<'_>, x: TensorRead<'_>, a: usize, b: usize) -> Result<Tensor> {
    const OP: &str = "extract_diagonal";
    check_pair(OP, a, b, x.rank())?;
    dispatch_dtype!(x.dtype(), T => {
        let v = x.typed_view::<T>()?;
        let (mut shape, mut strides) = (Vec::new(), Vec::new());
        for k in (0..v.rank()).filter(|&k| k != a && k != b) {
            shape.push(v.shape()[k]);
            strides.push(v.strides()[k]);
        }
        let len = v.shape()[a].min(v.shape()[b]);
        shape.push(len);
        // A diagonal of two or more elements of a non-empty view addresses element (1, 1),
        // so the sum fits; otherwise it never steps (and the strides may be anything).
        strides.push(if len > 1 && !v.is_empty() { v.strides()[a] + v.strides()[b] } else { 0 });
        let diag = TypedView::new(v.buffer(), &shape, &strides, v.offset()).map_err(|e| e.in_op(OP))?;
        to_contiguous_typed(ctx, &diag).map(Tensor::from)
    })
}

/// The inverse of [`extract_diagonal`]: `x`'s last axis (length `n`) becomes the diagonal
/// of two new axes `a` and `b` (positions in the result, each of extent `n`); the
/// remaining axes of `x` fill the other positions in order; off-diagonal elements are 0.
///
/// ```
/// use strata_kernels::{KernelContext, structural};
/// use strata_tensor::Tensor;
/// let d = Tensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
/// let m = structural::embed_diagonal(&KernelContext::sequential(), (&d).into(), 0, 1).unwrap();
/// assert_eq!(m.as_typed::<f64>().unwrap().data(), &[1.0, 0.0, 0.0, 2.0]);
/// ```
pub fn embed_diagonal(ctx: &KernelContext<'_>, x: TensorRead<'_>, a: usize, b: usize) -> Result<Tensor> {
    const OP: &str = "embed_diagonal";
    if x.rank() == 0 {
        return Err(Error::invalid_argument(OP, "the input has rank 0; its last axis holds the diagonal"));
    }
    let out_rank = x.rank() + 1;
    check_pair(OP, a, b, out_rank)?;
    let n = x.shape()[x.rank() - 1];
    let mut rest = x.shape()[..x.rank() - 1].iter();
    let out_shape: Vec<usize> =
        (0..out_rank).map(|k| if k == a || k == b { n } else { rest.next().copied().unwrap_or(1) }).collect();
    dispatch_dtype!(x.dtype(), T => {
        let v = x.typed_view::<T>()?;
        fill_output::<T>(ctx, OP, &out_shape, |out| write_diagonal(out, &out_shape, a, b, &v)).map(Tensor::from)
    })
}

fn write_diagonal<T: Scalar>(out: &mut [T], out_shape: &[usize], a: usize, b: usize, src: &TypedView<'_, T>) {
    if out.is_empty() {
        return;
    }
    out.fill(T::zero());
    let full = strata_tensor::shape::row_major_strides(out_shape);
    let (mut shape, mut strides) = (Vec::new(), Vec::new());
    for k in (0..out_shape.len()).filter(|&k| k != a && k != b) {
        shape.push(out_shape[k]);
        strides.push(full[k]);
    }
    shape.push(out_shape[a]);
    strides.push(full[a] + full[b]);
    // INVARIANT: the diagonal of a row-major buffer of `out_shape` is in bounds and
    // alias-free (its stride exceeds the reach of every other axis it is combined with).
    if let Ok(mut diag) = TypedViewMut::new(out, &shape, &strides, 0) {
        copy_view_to_view_mut(src, &mut diag);
    }
}
