//! Shape arithmetic shared by tensors, views and configs: checked element counts,
//! row-major strides and axis validation, each reporting errors under the caller's op name.

use crate::error::{Error, Result};

/// Number of elements of `shape`, or an error naming `op` when the product overflows `usize`.
///
/// ```
/// use strata_tensor::shape::checked_len;
/// assert_eq!(checked_len("zeros", &[2, 3, 4]).unwrap(), 24);
/// assert_eq!(checked_len("zeros", &[]).unwrap(), 1);
/// assert!(checked_len("zeros", &[usize::MAX, 2]).is_err());
/// ```
#[inline]
pub fn checked_len(op: &'static str, shape: &[usize]) -> Result<usize> {
    let mut len: usize = 1;
    for &d in shape {
        len = len.checked_mul(d).ok_or_else(|| {
            Error::invalid_argument(op, format!("shape {shape:?} has more elements than usize can count"))
        })?;
    }
    // Zero-size tensors may have huge other extents; the product above is still exact
    // only when no factor is zero, so recheck that the non-zero extents alone fit.
    if len == 0 {
        let mut nonzero: usize = 1;
        for &d in shape.iter().filter(|&&d| d != 0) {
            nonzero = nonzero.checked_mul(d).ok_or_else(|| {
                Error::invalid_argument(op, format!("shape {shape:?} has extents whose product overflows usize"))
            })?;
        }
    }
    Ok(len)
}

/// Row-major (C order) element strides of `shape`. Assumes the shape's length fits
/// (established by [`checked_len`]).
///
/// ```
/// assert_eq!(strata_tensor::shape::row_major_strides(&[2, 3, 4]), vec![12, 4, 1]);
/// ```
pub fn row_major_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut acc: isize = 1;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.wrapping_mul(d.max(1) as isize);
    }
    strides
}

/// Checks that `axis < rank`, naming `op` and `what` (e.g. "transpose permutation entry").
pub fn check_axis(op: &'static str, what: &str, axis: usize, rank: usize) -> Result<()> {
    if axis < rank {
        Ok(())
    } else {
        Err(Error::invalid_argument(op, format!("{what} {axis} is out of range for rank {rank}")))
    }
}

/// Checks that `axes` are in range and pairwise distinct.
///
/// ```
/// use strata_tensor::shape::check_unique_axes;
/// assert!(check_unique_axes("sum", "axis", &[0, 2], 3).is_ok());
/// assert!(check_unique_axes("sum", "axis", &[1, 1], 3).is_err());
/// assert!(check_unique_axes("sum", "axis", &[3], 3).is_err());
/// ```
pub fn check_unique_axes(op: &'static str, what: &str, axes: &[usize], rank: usize) -> Result<()> {
    let mut seen = vec![false; rank];
    for &a in axes {
        check_axis(op, what, a, rank)?;
        if seen[a] {
            return Err(Error::invalid_argument(op, format!("{what} {a} appears more than once in {axes:?}")));
        }
        seen[a] = true;
    }
    Ok(())
}

/// Checks that `perm` is a permutation of `0..rank`.
///
/// ```
/// use strata_tensor::shape::check_permutation;
/// assert!(check_permutation("transpose", &[2, 0, 1], 3).is_ok());
/// assert!(check_permutation("transpose", &[0, 0, 1], 3).is_err());
/// assert!(check_permutation("transpose", &[0, 1], 3).is_err());
/// ```
pub fn check_permutation(op: &'static str, perm: &[usize], rank: usize) -> Result<()> {
    if perm.len() != rank {
        return Err(Error::invalid_argument(
            op,
            format!("permutation {perm:?} has {} entries, the tensor has rank {rank}", perm.len()),
        ));
    }
    check_unique_axes(op, "permutation entry", perm, rank)
}
