//! Structural kernels: moving elements without arithmetic.
//!
//! Transpose (a blocked, parallel tensor permutation), reshape, broadcast_in_dim, cast
//! between all seven dtypes, extract/embed diagonal, tril/triu, to_contiguous and copy
//! into a mutable view. Every entry validates its arguments before writing anything.
//!
//! ```
//! use strata_kernels::{KernelContext, structural};
//! use strata_tensor::{Tensor, TypedTensor};
//! let ctx = KernelContext::sequential();
//! let a = Tensor::from(TypedTensor::from_fn(&[2, 3], |i| (3 * i[0] + i[1]) as i32).unwrap());
//! let t = structural::transpose(&ctx, (&a).into(), &[1, 0]).unwrap();
//! assert_eq!(t.shape(), &[3, 2]);
//! assert_eq!(t.as_typed::<i32>().unwrap().data(), &[0, 3, 1, 4, 2, 5]);
//! ```

mod cast;
mod diagonal;
mod output_rows;
mod permute;
#[cfg(target_arch = "x86_64")]
mod register_tile;
mod reshape;
mod stream_store;
mod tile_walk;
mod triangle;

pub use cast::{CastScalar, WideValue, cast, cast_into};
pub use diagonal::{embed_diagonal, extract_diagonal};
pub use reshape::{broadcast_in_dim, reshape, reshape_view};
pub use triangle::{tril, triu};

use strata_tensor::{
    DType, Error, Result, Scalar, Tensor, TensorRead, TensorWrite, TypedTensor, TypedView, TypedViewMut,
    dispatch_dtype, shape::check_permutation,
};

use crate::alloc::fill_output;
use crate::context::KernelContext;
use crate::strided::StridedPlan;

pub(crate) use cast::cast_slices;
pub(crate) use permute::copy_view_to_slice;

/// The permuted view `view.permute(perm)` copied into a new row-major tensor (axis `k`
/// of the result is axis `perm[k]` of `view`). The typed entry the contraction planner
/// uses to bring operands into GEMM order.
///
/// ```
/// use strata_kernels::{KernelContext, structural};
/// use strata_tensor::TypedTensor;
/// let a = TypedTensor::from_fn(&[2, 3, 4], |i| (100 * i[0] + 10 * i[1] + i[2]) as f64).unwrap();
/// let p = structural::permute_to_vec(&KernelContext::sequential(), &a.view(), &[2, 0, 1]).unwrap();
/// assert_eq!(p.shape(), &[4, 2, 3]);
/// assert_eq!(p.get(&[3, 1, 2]), Some(&123.0));
/// ```
pub fn permute_to_vec<T: Scalar>(
    ctx: &KernelContext<'_>,
    view: &TypedView<'_, T>,
    perm: &[usize],
) -> Result<TypedTensor<T>> {
    const OP: &str = "transpose";
    check_permutation(OP, perm, view.rank())?;
    let permuted = view.clone().permute(perm).map_err(|e| e.in_op(OP))?;
    to_contiguous_typed(ctx, &permuted)
}

/// Copies `view` into a new row-major tensor of the same shape.
pub fn to_contiguous_typed<T: Scalar>(ctx: &KernelContext<'_>, view: &TypedView<'_, T>) -> Result<TypedTensor<T>> {
    fill_output(ctx, "to_contiguous", view.shape(), |out| copy_view_to_slice(ctx.par(), view, out))
}

/// Copies `view` into `out` in row-major order of the view's shape; `out` must hold
/// exactly `view.len()` elements.
///
/// ```
/// use strata_kernels::{KernelContext, structural};
/// use strata_tensor::TypedView;
/// let data = [1, 2, 3, 4, 5, 6];
/// let cols = TypedView::new(&data, &[3, 2], &[1, 3], 0).unwrap();
/// let mut out = [0; 6];
/// structural::copy_into_slice(&KernelContext::sequential(), &cols, &mut out).unwrap();
/// assert_eq!(out, [1, 4, 2, 5, 3, 6]);
/// ```
pub fn copy_into_slice<T: Scalar>(ctx: &KernelContext<'_>, view: &TypedView<'_, T>, out: &mut [T]) -> Result<()> {
    if out.len() != view.len() {
        return Err(Error::shape_mismatch(
            "copy_into",
            format!("the view {:?} has {} elements, the destination slice {}", view.shape(), view.len(), out.len()),
        ));
    }
    copy_view_to_slice(ctx.par(), view, out);
    Ok(())
}

/// Copies any input into a new row-major tensor of the same dtype and shape.
pub fn to_contiguous(ctx: &KernelContext<'_>, x: TensorRead<'_>) -> Result<Tensor> {
    dispatch_dtype!(x.dtype(), T => to_contiguous_typed(ctx, &x.typed_view::<T>()?).map(Tensor::from))
}

/// A row-major tensor of `dtype` and `shape` from the context's buffer pool (or the
/// allocator), for the caller to overwrite: its elements are valid values of the dtype
/// but otherwise unspecified (zeros from fresh pages, or what an earlier output of the
/// pool held). Saves the fill pass of a zeroed tensor where every element is written
/// next, and reuses mapped pages where a zeroed `Vec` would fault fresh ones.
pub fn empty(ctx: &KernelContext<'_>, dtype: DType, shape: &[usize]) -> Result<Tensor> {
    dispatch_dtype!(dtype, T => fill_output::<T>(ctx, "empty", shape, |_| ()).map(Tensor::from))
}

/// `transpose`: axis `k` of the result is axis `perm[k]` of `x`, in a new row-major
/// tensor. `perm` must be a permutation of `0..rank`.
pub fn transpose(ctx: &KernelContext<'_>, x: TensorRead<'_>, perm: &[usize]) -> Result<Tensor> {
    dispatch_dtype!(x.dtype(), T => permute_to_vec(ctx, &x.typed_view::<T>()?, perm).map(Tensor::from))
}

/// Copies `src` into the destination, which must have the same dtype and shape. A
/// strided destination is written through its layout; nothing is written on error.
pub fn copy_into(ctx: &KernelContext<'_>, src: TensorRead<'_>, mut dst: TensorWrite<'_>) -> Result<()> {
    const OP: &str = "copy_into";
    dst.expect(OP, src.dtype(), src.shape())?;
    dispatch_dtype!(src.dtype(), T => {
        let view = src.typed_view::<T>()?;
        write_into::<T>(ctx, &mut dst, |out| copy_view_to_slice(ctx.par(), &view, out))
    })
}

/// Runs `fill` (which overwrites a row-major buffer of the destination's shape) straight
/// into the destination when it is compact, otherwise into a scratch buffer that is then
/// copied through the destination's layout. The caller validated dtype and shape.
pub(crate) fn write_into<T: Scalar>(
    ctx: &KernelContext<'_>,
    dst: &mut TensorWrite<'_>,
    fill: impl FnOnce(&mut [T]),
) -> Result<()> {
    if let Some(out) = dst.contiguous_mut::<T>() {
        fill(out);
        return Ok(());
    }
    let shape = dst.shape().to_vec();
    let scratch = fill_output(ctx, "write_into", &shape, fill)?;
    let mut view = dst.typed_view_mut::<T>()?;
    copy_view_to_view_mut(&scratch.view(), &mut view);
    Ok(())
}

/// Sequential strided copy between two views of one shape (used for strided
/// destinations, which cannot be cut into disjoint slices without unsafe code).
pub(crate) fn copy_view_to_view_mut<T: Scalar>(src: &TypedView<'_, T>, dst: &mut TypedViewMut<'_, T>) {
    let src_buf = src.buffer();
    let (dst_buf, dst_layout) = dst.buffer_and_layout();
    let plan = StridedPlan::new(src.shape(), [src.layout(), dst_layout]);
    let [si, di] = plan.inner_strides();
    plan.for_each_run(0, plan.len(), |_, [so, d], len| {
        for i in 0..len as isize {
            dst_buf[(d + i * di) as usize] = src_buf[(so + i * si) as usize];
        }
    });
}
