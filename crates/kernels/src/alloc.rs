//! The one place kernels obtain output buffers. Every kernel that produces a fresh
//! tensor goes through [`fill_output`], so switching the source of memory (the domain's
//! buffer pool) changes one function.

use strata_tensor::{Result, Scalar, TypedTensor, shape::checked_len};

use crate::context::KernelContext;

/// Allocates a row-major output of `shape` and lets `write` fill it. `write` must
/// overwrite every element: the buffer's prior contents are unspecified (valid values,
/// but possibly stale ones from an earlier loan).
pub(crate) fn fill_output<T: Scalar>(
    _ctx: &KernelContext<'_>,
    op: &'static str,
    shape: &[usize],
    write: impl FnOnce(&mut [T]),
) -> Result<TypedTensor<T>> {
    let len = checked_len(op, shape)?;
    let mut data = vec![T::zero(); len];
    write(&mut data);
    TypedTensor::from_vec(data, shape).map_err(|e| e.in_op(op))
}
