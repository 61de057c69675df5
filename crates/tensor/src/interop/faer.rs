//! faer interop (feature `faer`): rank-2 strata views as `MatRef`/`MatMut` and back,
//! without a copy.
//!
//! ```
//! use faer::MatRef;
//! use strata_tensor::{TypedTensor, TypedView};
//!
//! let t = TypedTensor::from_fn(&[2, 3], |i| (3 * i[0] + i[1]) as f64)?;
//! // Any strided rank-2 view is a MatRef, here the transpose.
//! let m: MatRef<'_, f64> = t.view().transpose(&[1, 0])?.as_faer()?;
//! assert_eq!((m.nrows(), m.ncols()), (3, 2));
//! assert_eq!(m[(2, 1)], 5.0);
//! // And back, as long as the matrix's elements fill their span.
//! let v = TypedView::try_from(m)?;
//! assert_eq!(v.shape(), &[3, 2]);
//! assert_eq!(v.get(&[2, 1]), Some(&5.0));
//! # Ok::<(), strata_tensor::Error>(())
//! ```

use faer::{MatMut, MatRef};

use super::{fills_span, gapped, reach};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::tensor::TypedTensor;
use crate::view::{TypedView, TypedViewMut};

const INSTEAD: &str = "A faer `Mat` pads its columns (the padding is not initialised); copy with \
                       `TypedTensor::try_from(mat.as_ref())`.";

fn need_matrix(op: &'static str, shape: &[usize]) -> Result<(usize, usize)> {
    match *shape {
        [rows, cols] => Ok((rows, cols)),
        _ => {
            Err(Error::invalid_argument(op, format!("a faer matrix needs a rank-2 view, this one has shape {shape:?}")))
        }
    }
}

impl<'a, T: Scalar> TypedView<'a, T> {
    /// A rank-2 view as a faer `MatRef`, without a copy (any strides, negative and zero
    /// included); other ranks are an `InvalidArgument` error.
    pub fn as_faer(&self) -> Result<MatRef<'a, T>> {
        let (rows, cols) = need_matrix("TypedView::as_faer", self.shape())?;
        let (rs, cs) = (self.strides()[0], self.strides()[1]);
        // An empty view may sit at any offset; faer only needs an aligned pointer then.
        let ptr = if self.is_empty() { self.buffer().as_ptr() } else { self.buffer()[self.offset()..].as_ptr() };
        // SAFETY: every element (i, j) at offset + i*rs + j*cs lies inside the buffer (the
        // view's layout was checked against it), which is borrowed shared for 'a.
        Ok(unsafe { MatRef::from_raw_parts(ptr, rows, cols, rs, cs) })
    }
}

impl<'a, T: Scalar> TypedViewMut<'a, T> {
    /// A rank-2 mutable view as a faer `MatMut`, without a copy.
    pub fn into_faer(mut self) -> Result<MatMut<'a, T>> {
        let (rows, cols) = need_matrix("TypedViewMut::into_faer", self.shape())?;
        let (rs, cs) = (self.strides()[0], self.strides()[1]);
        let empty = self.is_empty();
        let (data, layout) = self.buffer_and_layout();
        let ptr = if empty { data.as_mut_ptr() } else { data[layout.offset()..].as_mut_ptr() };
        // SAFETY: every element is inside the buffer, pairwise distinct (the view refused
        // aliasing strides), and borrowed uniquely for 'a: the view is consumed.
        Ok(unsafe { MatMut::from_raw_parts_mut(ptr, rows, cols, rs, cs) })
    }
}

impl<T: Scalar> TypedTensor<T> {
    /// The tensor as a faer `MatRef` (rank 2 only), without a copy.
    pub fn as_faer(&self) -> Result<MatRef<'_, T>> {
        self.view().as_faer()
    }
}

impl<'a, T: Scalar> TryFrom<MatRef<'a, T>> for TypedView<'a, T> {
    type Error = Error;

    /// A zero-copy view of a faer matrix whose elements fill their span (row- or
    /// column-major, reversed, transposed); a matrix with gaps (a faer `Mat` with padded
    /// columns, a submatrix) is an `Unsupported` error.
    fn try_from(m: MatRef<'a, T>) -> Result<Self> {
        const OP: &str = "TypedView::try_from(MatRef)";
        let shape = [m.nrows(), m.ncols()];
        let strides = [m.row_stride(), m.col_stride()];
        if !fills_span(&shape, &strides) {
            return Err(gapped(OP, "the faer matrix", &shape, &strides, INSTEAD));
        }
        let Some((lo, hi)) = reach(OP, &shape, &strides)? else {
            return TypedView::new(&[], &shape, &strides, 0);
        };
        // SAFETY: the matrix's elements fill [lo, hi] around its first element, so the
        // slice holds only elements the MatRef borrows shared for 'a.
        let data = unsafe { std::slice::from_raw_parts(m.as_ptr().offset(lo), (hi - lo) as usize + 1) };
        TypedView::new(data, &shape, &strides, lo.unsigned_abs())
    }
}

impl<'a, T: Scalar> TryFrom<MatMut<'a, T>> for TypedViewMut<'a, T> {
    type Error = Error;

    /// A zero-copy mutable view of a faer matrix whose elements fill their span.
    fn try_from(m: MatMut<'a, T>) -> Result<Self> {
        const OP: &str = "TypedViewMut::try_from(MatMut)";
        let shape = [m.nrows(), m.ncols()];
        let strides = [m.row_stride(), m.col_stride()];
        if !fills_span(&shape, &strides) {
            return Err(gapped(OP, "the faer matrix", &shape, &strides, INSTEAD));
        }
        let Some((lo, hi)) = reach(OP, &shape, &strides)? else {
            return TypedViewMut::new(&mut [], &shape, &strides, 0);
        };
        let ptr = m.as_ptr_mut();
        // SAFETY: the elements fill the span and the MatMut (consumed) borrowed them
        // uniquely for 'a.
        let data = unsafe { std::slice::from_raw_parts_mut(ptr.offset(lo), (hi - lo) as usize + 1) };
        TypedViewMut::new(data, &shape, &strides, lo.unsigned_abs())
    }
}

impl<T: Scalar> TryFrom<MatRef<'_, T>> for TypedTensor<T> {
    type Error = Error;

    /// A row-major copy of any faer matrix (padded `Mat`s and submatrices included);
    /// errors only when the copy cannot be allocated.
    fn try_from(m: MatRef<'_, T>) -> Result<Self> {
        TypedTensor::from_fn(&[m.nrows(), m.ncols()], |i| m[(i[0], i[1])])
    }
}
