//! Data in and out of the Rust numerics ecosystem, each behind its own feature: ndarray
//! arrays and views (`ndarray`), faer matrices (`faer`), and numpy's `.npy`/`.npz` files
//! (`npy`).
//!
//! **Zero-copy, and when it is sound.** A strata view borrows a slice that spans every
//! element it addresses. A foreign *view* only vouches for its own elements: the memory
//! between them may belong to another live mutable view (ndarray's `split_at` or
//! `multi_slice_mut`, faer's `split_at_mut`) or, in a faer `Mat`, be uninitialised
//! column padding. So a foreign view converts without a copy when its elements fill their
//! span (any order of axes, any signs of strides: transposed, reversed, Fortran-order,
//! broadcast), and with a typed `Unsupported` error otherwise; the error names the owned
//! route (an ndarray `&Array` converts without a copy under any layout, since the whole
//! buffer is borrowed with it) and the copying one. strata views convert into ndarray and
//! faer views without a copy under every layout.

#[cfg(feature = "faer")]
pub mod faer;
#[cfg(feature = "ndarray")]
pub mod ndarray;
#[cfg(feature = "npy")]
pub mod npy;

#[cfg(any(feature = "ndarray", feature = "faer"))]
pub(crate) use foreign::*;

#[cfg(any(feature = "ndarray", feature = "faer"))]
mod foreign {
    use crate::error::{Error, Result};

    /// Lowest and highest element offset (relative to element zero) a layout reaches,
    /// `None` when it addresses nothing. Errors when the reach does not fit in `isize`.
    pub(crate) fn reach(op: &'static str, shape: &[usize], strides: &[isize]) -> Result<Option<(isize, isize)>> {
        if shape.contains(&0) {
            return Ok(None);
        }
        let (mut lo, mut hi) = (0i128, 0i128);
        for (&d, &s) in shape.iter().zip(strides) {
            let r = (d as i128 - 1) * s as i128;
            if r < 0 {
                lo += r;
            } else {
                hi += r;
            }
        }
        let fit = |v: i128| {
            isize::try_from(v).map_err(|_| Error::invalid_argument(op, "the layout reaches beyond isize::MAX elements"))
        };
        Ok(Some((fit(lo)?, fit(hi)?)))
    }

    /// True when the elements of the layout fill its span: after dropping axes of
    /// extent 1 and stride 0 (repeats), sorted by |stride| the strides are 1, d0, d0*d1, ...
    pub(crate) fn fills_span(shape: &[usize], strides: &[isize]) -> bool {
        if shape.contains(&0) {
            return true; // addresses nothing, so borrows nothing
        }
        let mut axes: Vec<(usize, usize)> = shape
            .iter()
            .zip(strides)
            .filter(|&(&d, &s)| d > 1 && s != 0)
            .map(|(&d, &s)| (s.unsigned_abs(), d))
            .collect();
        axes.sort_unstable();
        let mut expected = 1usize;
        for (stride, extent) in axes {
            if stride != expected {
                return false;
            }
            expected = match expected.checked_mul(extent) {
                Some(e) => e,
                None => return false,
            };
        }
        true
    }

    /// The refusal of a foreign view whose elements leave gaps in their span.
    pub(crate) fn gapped(op: &'static str, what: &str, shape: &[usize], strides: &[isize], instead: &str) -> Error {
        Error::unsupported(
            op,
            format!(
                "{what} of shape {shape:?} with strides {strides:?} leaves gaps between its elements, which another view \
                 may own; a strata view cannot borrow them. {instead}"
            ),
        )
    }
}
