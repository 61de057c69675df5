//! ndarray interop (feature `ndarray`): zero-copy views both ways, owned conversions
//! both ways, and `&Array` / `&mut Array` straight into ops.
//!
//! ```
//! use ndarray::{Array2, ArrayD, s};
//! use strata_tensor::{TensorRead, TypedTensor, TypedView};
//!
//! let a = Array2::from_shape_fn((3, 4), |(i, j)| (10 * i + j) as f64);
//! // An owned array lends a view of any layout, here transposed and reversed.
//! let t = a.t();
//! let v = TypedView::try_from(t.slice(s![..;-1, ..]))?;
//! assert_eq!(v.shape(), &[4, 3]);
//! assert_eq!(v.get(&[0, 1]), Some(&13.0));
//! // Ops take `&Array` directly (`backend.add(&a, &a)?`).
//! let input: TensorRead<'_> = (&a).into();
//! assert_eq!(input.shape(), &[3, 4]);
//! // Owned both ways: the row-major buffer moves, no copy.
//! let tensor = TypedTensor::try_from(a.clone())?;
//! let back: ArrayD<f64> = tensor.into();
//! assert_eq!(back, a.into_dyn());
//! # Ok::<(), strata_tensor::Error>(())
//! ```

use ndarray::{
    Array, ArrayD, ArrayView, ArrayViewD, ArrayViewMut, ArrayViewMutD, Axis, Dimension, IxDyn, ShapeBuilder,
};

use super::{fills_span, gapped, reach};
use crate::access::{TensorRead, TensorWrite};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::tensor::{Tensor, TypedTensor};
use crate::view::{TypedView, TypedViewMut};

const FROM_VIEW: &str = "TypedView::try_from(ArrayView)";
const FROM_VIEW_MUT: &str = "TypedViewMut::try_from(ArrayViewMut)";
const INSTEAD: &str = "Borrow the owning array instead (`TypedView::from(&array)` takes any layout) and slice the \
                       strata view, or copy with `TypedTensor::try_from(view.to_owned())`.";

/// The strata view of `len` elements starting `lo` elements before `ptr`, read-only.
///
/// # Safety
/// The `len` elements from `ptr - lo` must be initialised and readable for `'a`, with no
/// writes to them during `'a`.
unsafe fn span_view<'a, T: Scalar>(
    op: &'static str,
    ptr: *const T,
    shape: &[usize],
    strides: &[isize],
) -> Result<TypedView<'a, T>> {
    match reach(op, shape, strides)? {
        None => TypedView::new(&[], shape, strides, 0),
        Some((lo, hi)) => {
            let len = (hi - lo) as usize + 1;
            // SAFETY: the caller guarantees the span [ptr + lo, ptr + hi] is initialised,
            // readable and unwritten for 'a; `lo <= 0 <= hi` keep the offsets inside it.
            let data = unsafe { std::slice::from_raw_parts(ptr.offset(lo), len) };
            TypedView::new(data, shape, strides, lo.unsigned_abs())
        }
    }
}

/// As [`span_view`], mutably.
///
/// # Safety
/// The `len` elements from `ptr - lo` must be initialised and borrowed uniquely for `'a`.
unsafe fn span_view_mut<'a, T: Scalar>(
    op: &'static str,
    ptr: *mut T,
    shape: &[usize],
    strides: &[isize],
) -> Result<TypedViewMut<'a, T>> {
    match reach(op, shape, strides)? {
        None => TypedViewMut::new(&mut [], shape, strides, 0),
        Some((lo, hi)) => {
            let len = (hi - lo) as usize + 1;
            // SAFETY: as above, with the span borrowed uniquely for 'a.
            let data = unsafe { std::slice::from_raw_parts_mut(ptr.offset(lo), len) };
            TypedViewMut::new(data, shape, strides, lo.unsigned_abs())
        }
    }
}

impl<'a, T: Scalar, D: Dimension> TryFrom<ArrayView<'a, T, D>> for TypedView<'a, T> {
    type Error = Error;

    /// A zero-copy view of an ndarray view whose elements fill their span (any axis order
    /// and stride signs, broadcast axes too); a view with gaps (a column block of a
    /// row-major array, a stepped slice) is an `Unsupported` error, since the gaps may
    /// belong to a live mutable view elsewhere.
    fn try_from(view: ArrayView<'a, T, D>) -> Result<Self> {
        let (shape, strides) = (view.shape(), view.strides());
        if !fills_span(shape, strides) {
            return Err(gapped(FROM_VIEW, "the ndarray view", shape, strides, INSTEAD));
        }
        // SAFETY: the view's elements fill the span, so the span holds only elements the
        // view borrows shared for 'a.
        unsafe { span_view(FROM_VIEW, view.as_ptr(), shape, strides) }
    }
}

impl<'a, T: Scalar, D: Dimension> TryFrom<ArrayViewMut<'a, T, D>> for TypedViewMut<'a, T> {
    type Error = Error;

    /// A zero-copy mutable view of an ndarray view whose elements fill their span; a view
    /// with gaps is an `Unsupported` error (the gaps may belong to another mutable view).
    fn try_from(mut view: ArrayViewMut<'a, T, D>) -> Result<Self> {
        let (shape, strides) = (view.shape().to_vec(), view.strides().to_vec());
        if !fills_span(&shape, &strides) {
            return Err(gapped(FROM_VIEW_MUT, "the ndarray view", &shape, &strides, INSTEAD));
        }
        let ptr = view.as_mut_ptr();
        // SAFETY: the elements fill the span and the view (consumed here) borrowed them
        // uniquely for 'a.
        unsafe { span_view_mut(FROM_VIEW_MUT, ptr, &shape, &strides) }
    }
}

impl<'a, T: Scalar, D: Dimension> From<&'a Array<T, D>> for TypedView<'a, T> {
    /// A zero-copy view of an owned array under any layout (the whole buffer is borrowed,
    /// so gaps between its elements are the array's own, initialised memory).
    fn from(array: &'a Array<T, D>) -> Self {
        // SAFETY: every element between the lowest and highest one the array addresses
        // lies in its own initialised buffer, which `&'a Array` keeps unwritten for 'a.
        let view = unsafe { span_view("TypedView::from(&Array)", array.as_ptr(), array.shape(), array.strides()) };
        match view {
            Ok(v) => v,
            // INVARIANT: an owned array's layout stays inside its buffer and within isize.
            Err(_) => unreachable!("an owned ndarray addresses only its own buffer"),
        }
    }
}

impl<'a, T: Scalar, D: Dimension> From<&'a mut Array<T, D>> for TypedViewMut<'a, T> {
    /// A zero-copy mutable view of an owned array under any layout.
    fn from(array: &'a mut Array<T, D>) -> Self {
        let (shape, strides) = (array.shape().to_vec(), array.strides().to_vec());
        let ptr = array.as_mut_ptr();
        // SAFETY: the span lies in the array's own initialised buffer, borrowed uniquely.
        let view = unsafe { span_view_mut("TypedViewMut::from(&mut Array)", ptr, &shape, &strides) };
        match view {
            Ok(v) => v,
            // INVARIANT: an owned array is in bounds and never aliases its elements.
            Err(_) => unreachable!("an owned ndarray addresses distinct elements of its own buffer"),
        }
    }
}

impl<'a, T: Scalar, D: Dimension> From<&'a Array<T, D>> for TensorRead<'a> {
    fn from(array: &'a Array<T, D>) -> Self {
        TypedView::from(array).into()
    }
}

impl<'a, T: Scalar, D: Dimension> From<&'a mut Array<T, D>> for TensorWrite<'a> {
    fn from(array: &'a mut Array<T, D>) -> Self {
        TypedViewMut::from(array).into()
    }
}

impl<'a, T: Scalar> TypedView<'a, T> {
    /// The same elements as an ndarray view, without a copy (any strides).
    ///
    /// ```
    /// use strata_tensor::TypedTensor;
    /// let t = TypedTensor::from_fn(&[2, 3], |i| (3 * i[0] + i[1]) as f32)?;
    /// let nd = t.view().reverse(&[1])?.as_ndarray();
    /// assert_eq!(nd[[0, 0]], 2.0);
    /// # Ok::<(), strata_tensor::Error>(())
    /// ```
    pub fn as_ndarray(&self) -> ArrayViewD<'a, T> {
        let shape = self.shape();
        let Some((lo, _)) = self.layout().span() else {
            return empty_view(shape);
        };
        let abs: Vec<usize> = self.strides().iter().map(|s| s.unsigned_abs()).collect();
        // INVARIANT: a view's span is inside its buffer, so `lo` is a valid index.
        let base = self.buffer()[lo as usize..].as_ptr();
        // SAFETY: with absolute strides from the lowest addressed element, every element
        // reached is one the view addresses: inside the buffer borrowed for 'a and never
        // written through this shared view. Broadcast (zero) strides are allowed for
        // read-only ndarray views.
        let mut view = unsafe { ArrayView::from_shape_ptr(IxDyn(shape).strides(IxDyn(&abs)), base) };
        for (k, s) in self.strides().iter().enumerate() {
            if *s < 0 {
                view.invert_axis(Axis(k));
            }
        }
        view
    }
}

fn empty_view<'a, T>(shape: &[usize]) -> ArrayViewD<'a, T> {
    match ArrayView::from_shape(IxDyn(shape), &[]) {
        Ok(v) => v,
        // INVARIANT: a shape with a zero extent needs no elements.
        Err(_) => unreachable!("an empty shape fits an empty slice"),
    }
}

impl<'a, T: Scalar> TypedViewMut<'a, T> {
    /// The same elements as a mutable ndarray view, without a copy (any strides).
    pub fn into_ndarray(mut self) -> ArrayViewMutD<'a, T> {
        let shape = self.shape().to_vec();
        let strides = self.strides().to_vec();
        let span = self.layout().span();
        let (data, _) = self.buffer_and_layout();
        let Some((lo, _)) = span else {
            return match ArrayViewMut::from_shape(IxDyn(&shape), &mut []) {
                Ok(v) => v,
                // INVARIANT: a shape with a zero extent needs no elements.
                Err(_) => unreachable!("an empty shape fits an empty slice"),
            };
        };
        let abs: Vec<usize> = strides.iter().map(|s| s.unsigned_abs()).collect();
        let base = data[lo as usize..].as_mut_ptr();
        // SAFETY: every element reached from the lowest addressed one with absolute
        // strides is one the view addresses, distinct (the view refused aliasing strides
        // at construction) and borrowed uniquely for 'a (the view is consumed).
        let mut view = unsafe { ArrayViewMut::from_shape_ptr(IxDyn(&shape).strides(IxDyn(&abs)), base) };
        for (k, s) in strides.iter().enumerate() {
            if *s < 0 {
                view.invert_axis(Axis(k));
            }
        }
        view
    }
}

impl<T: Scalar> TypedTensor<T> {
    /// The tensor's elements as an ndarray view (row-major, no copy).
    pub fn as_ndarray(&self) -> ArrayViewD<'_, T> {
        self.view().as_ndarray()
    }
}

impl<T: Scalar> From<TypedTensor<T>> for ArrayD<T> {
    /// Moves the row-major buffer into an ndarray array (no copy).
    fn from(t: TypedTensor<T>) -> Self {
        let (data, shape) = t.into_parts();
        match ArrayD::from_shape_vec(IxDyn(&shape), data) {
            Ok(a) => a,
            // INVARIANT: a tensor's buffer holds exactly the product of its shape, which a
            // Vec already proved addressable.
            Err(_) => unreachable!("a tensor's buffer matches its shape"),
        }
    }
}

impl<T: Scalar, D: Dimension> TryFrom<Array<T, D>> for TypedTensor<T> {
    type Error = Error;

    /// Takes over the array's buffer when it is compact row-major from its start (no
    /// copy); copies in row-major order otherwise. Errors only when a copy cannot be
    /// allocated.
    fn try_from(array: Array<T, D>) -> Result<Self> {
        const OP: &str = "TypedTensor::try_from(Array)";
        let shape = array.shape().to_vec();
        let len = array.len();
        if array.is_standard_layout() {
            let (mut data, offset) = array.into_raw_vec_and_offset();
            let start = offset.unwrap_or(0);
            if start == 0 && data.len() == len {
                return TypedTensor::from_vec(data, &shape);
            }
            data.truncate(start + len);
            data.drain(..start);
            return TypedTensor::from_vec(data, &shape);
        }
        let mut data = Vec::new();
        data.try_reserve_exact(len)
            .map_err(|e| Error::backend_failure(OP, format!("cannot allocate {len} elements")).with_source(e))?;
        data.extend(array.iter().copied());
        TypedTensor::from_vec(data, &shape)
    }
}

impl<T: Scalar, D: Dimension> TryFrom<Array<T, D>> for Tensor {
    type Error = Error;

    /// As `TypedTensor::try_from`, into the dtype-erased tensor.
    fn try_from(array: Array<T, D>) -> Result<Self> {
        TypedTensor::try_from(array).map(Tensor::from)
    }
}
