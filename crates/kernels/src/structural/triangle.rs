//! `tril` and `triu` on the last two axes (numpy's convention for the diagonal offset).

use strata_tensor::{Error, Result, Scalar, Tensor, TensorRead, dispatch_dtype};

use crate::alloc::fill_output;
use crate::context::KernelContext;
use crate::strided::{GRAIN, par_chunks_mut};

use super::copy_view_to_slice;

/// Copies `x` keeping elements with `j - i <= k` (row `i`, column `j` of the last two
/// axes), zero elsewhere: the lower triangle, `k` diagonals above the main one.
///
/// ```
/// use strata_kernels::{KernelContext, structural};
/// use strata_tensor::Tensor;
/// let m = Tensor::from_vec(vec![1, 2, 3, 4, 5, 6, 7, 8, 9], &[3, 3]).unwrap();
/// let l = structural::tril(&KernelContext::sequential(), (&m).into(), 0).unwrap();
/// assert_eq!(l.as_typed::<i32>().unwrap().data(), &[1, 0, 0, 4, 5, 0, 7, 8, 9]);
/// ```
pub fn tril(ctx: &KernelContext<'_>, x: TensorRead<'_>, k: isize) -> Result<Tensor> {
    triangle(ctx, "tril", x, move |i, j| j - i <= k)
}

/// Copies `x` keeping elements with `j - i >= k`, zero elsewhere: the upper triangle from
/// the `k`-th diagonal.
///
/// ```
/// use strata_kernels::{KernelContext, structural};
/// use strata_tensor::Tensor;
/// let m = Tensor::from_vec(vec![1, 2, 3, 4, 5, 6, 7, 8, 9], &[3, 3]).unwrap();
/// let u = structural::triu(&KernelContext::sequential(), (&m).into(), 1).unwrap();
/// assert_eq!(u.as_typed::<i32>().unwrap().data(), &[0, 2, 3, 0, 0, 6, 0, 0, 0]);
/// ```
pub fn triu(ctx: &KernelContext<'_>, x: TensorRead<'_>, k: isize) -> Result<Tensor> {
    triangle(ctx, "triu", x, move |i, j| j - i >= k)
}

fn triangle(
    ctx: &KernelContext<'_>,
    op: &'static str,
    x: TensorRead<'_>,
    keep: impl Fn(isize, isize) -> bool + Sync,
) -> Result<Tensor> {
    let rank = x.rank();
    if rank < 2 {
        return Err(Error::invalid_argument(
            op,
            format!("needs rank >= 2 (acts on the last two axes), got rank {rank}"),
        ));
    }
    let (rows, cols) = (x.shape()[rank - 2], x.shape()[rank - 1]);
    dispatch_dtype!(x.dtype(), T => {
        let v = x.typed_view::<T>()?;
        fill_output::<T>(ctx, op, v.shape(), |out| {
            copy_view_to_slice(ctx.par(), &v, out);
            if cols == 0 {
                return;
            }
            par_chunks_mut(ctx.par(), out, GRAIN, cols, |start, chunk| {
                for (r, row) in chunk.chunks_mut(cols).enumerate() {
                    let i = ((start / cols + r) % rows.max(1)) as isize;
                    for (j, e) in row.iter_mut().enumerate() {
                        if !keep(i, j as isize) {
                            *e = T::zero();
                        }
                    }
                }
            });
        })
        .map(Tensor::from)
    })
}
