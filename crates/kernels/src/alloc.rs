//! The one place kernels obtain output buffers. Every kernel that produces a fresh
//! tensor goes through [`fill_output`], so the source of memory (the domain's buffer
//! pool, or a fresh zeroed vector without one) is decided in one function.

use strata_tensor::{Result, Scalar, TypedTensor, shape::checked_len};

use crate::context::KernelContext;

/// Allocates a row-major output of `shape` and lets `write` fill it. `write` must
/// overwrite every element: the buffer's prior contents are unspecified (valid values,
/// but possibly stale ones from an earlier loan of the pool).
pub(crate) fn fill_output<T: Scalar>(
    ctx: &KernelContext<'_>,
    op: &'static str,
    shape: &[usize],
    write: impl FnOnce(&mut [T]),
) -> Result<TypedTensor<T>> {
    let len = checked_len(op, shape)?;
    match ctx.pool() {
        Some(pool) => {
            let loan = pool.acquire_for_overwrite::<T>(len).map_err(|e| e.in_op(op))?;
            let (filled, ()) = loan.write_with(write);
            filled.into_tensor(shape).map_err(|e| e.in_op(op))
        }
        None => {
            let mut data = vec![T::zero(); len];
            write(&mut data);
            TypedTensor::from_vec(data, shape).map_err(|e| e.in_op(op))
        }
    }
}
