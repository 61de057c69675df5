//! `reshape` (row-major read order) and `broadcast_in_dim`.

use strata_tensor::{Error, Result, Tensor, TensorRead, TensorView, TypedView, dispatch_dtype, shape::checked_len};

use crate::context::KernelContext;

use super::to_contiguous_typed;

fn check_reshape(x: &TensorRead<'_>, shape: &[usize]) -> Result<()> {
    let len = checked_len("reshape", shape)?;
    if len != x.len() {
        return Err(Error::shape_mismatch(
            "reshape",
            format!("cannot reshape {:?} ({} elements) into {shape:?} ({len} elements)", x.shape(), x.len()),
        ));
    }
    Ok(())
}

/// The elements of `x` read in row-major order, under `shape` (same element count), in a
/// new tensor. See [`reshape_view`] for the copy-free form.
pub fn reshape(ctx: &KernelContext<'_>, x: TensorRead<'_>, shape: &[usize]) -> Result<Tensor> {
    check_reshape(&x, shape)?;
    dispatch_dtype!(x.dtype(), T => {
        let t = to_contiguous_typed(ctx, &x.typed_view::<T>()?)?;
        t.reshape(shape).map(Tensor::from)
    })
}

/// `x` under `shape` without copying, when `x` is compact row-major (`Ok(None)` when it
/// is not: then [`reshape`] copies). Errors when the element counts differ.
///
/// ```
/// use strata_kernels::structural;
/// use strata_tensor::Tensor;
/// let t = Tensor::from_vec(vec![1, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
/// let v = structural::reshape_view((&t).into(), &[3, 2]).unwrap().unwrap();
/// assert_eq!(v.shape(), &[3, 2]);
/// let transposed = t.view().permute(&[1, 0]).unwrap();
/// assert!(structural::reshape_view(transposed.into(), &[6]).unwrap().is_none());
/// ```
pub fn reshape_view<'a>(x: TensorRead<'a>, shape: &[usize]) -> Result<Option<TensorView<'a>>> {
    check_reshape(&x, shape)?;
    dispatch_dtype!(x.dtype(), T => match x.contiguous::<T>() {
        Some(data) => TypedView::row_major(data, shape).map(|v| Some(TensorView::from(v))),
        None => Ok(None),
    })
}

/// `broadcast_in_dim`: operand axis `k` becomes axis `dims[k]` of a new tensor of
/// `out_shape`; each operand extent equals its target extent or is 1. `dims` are distinct
/// and in range, in any order (as in jax.lax: a non-increasing order also permutes the
/// operand's axes). (A broadcast *view* costs nothing: `TensorView::broadcast_in_dim`.)
///
/// ```
/// use strata_kernels::{KernelContext, structural};
/// use strata_tensor::Tensor;
/// let ctx = KernelContext::sequential();
/// let row = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
/// let m = structural::broadcast_in_dim(&ctx, (&row).into(), &[2, 3], &[1]).unwrap();
/// assert_eq!(m.as_typed::<f32>().unwrap().data(), &[1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
/// // dims [1, 0]: operand axis 0 (extent 2) becomes output axis 1, a transpose.
/// let x = Tensor::from_vec(vec![1i32, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
/// let t = structural::broadcast_in_dim(&ctx, (&x).into(), &[3, 2], &[1, 0]).unwrap();
/// assert_eq!(t.as_typed::<i32>().unwrap().data(), &[1, 4, 2, 5, 3, 6]);
/// ```
pub fn broadcast_in_dim(
    ctx: &KernelContext<'_>,
    x: TensorRead<'_>,
    out_shape: &[usize],
    dims: &[usize],
) -> Result<Tensor> {
    dispatch_dtype!(x.dtype(), T => {
        let v = x.typed_view::<T>()?.broadcast_in_dim(out_shape, dims)?;
        to_contiguous_typed(ctx, &v).map(Tensor::from)
    })
}
