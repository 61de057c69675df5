//! Borrowed strided views: typed (`TypedView`, `TypedViewMut`) and dtype-erased
//! (`TensorView`, `TensorViewMut`). Construction checks bounds (and, for mutable views,
//! aliasing) once; metadata operations only rewrite the [`Layout`].

use crate::config::SliceConfig;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::scalar::{Scalar, c32, c64};
use crate::tensor::TypedTensor;

/// A read-only strided view of `T` elements in a borrowed buffer.
///
/// ```
/// use strata_tensor::TypedView;
/// let data = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
/// // A 2x3 row-major matrix seen transposed, without copying.
/// let v = TypedView::new(&data, &[2, 3], &[3, 1], 0).unwrap().permute(&[1, 0]).unwrap();
/// assert_eq!(v.shape(), &[3, 2]);
/// assert_eq!(v.get(&[2, 1]), Some(&5.0));
/// assert_eq!(v.to_tensor().data(), &[0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
/// // Strides that leave the buffer are refused.
/// assert!(TypedView::new(&data, &[2, 3], &[4, 1], 0).is_err());
/// ```
#[derive(Clone, Debug)]
pub struct TypedView<'a, T> {
    data: &'a [T],
    layout: Layout,
}

/// A mutable strided view whose elements are pairwise distinct memory locations.
///
/// ```
/// use strata_tensor::TypedViewMut;
/// let mut data = [0i32; 6];
/// let mut v = TypedViewMut::new(&mut data, &[3, 2], &[1, 3], 0).unwrap(); // column-major
/// *v.get_mut(&[2, 1]).unwrap() = 7;
/// assert_eq!(data[5], 7);
/// // Stride 0 would make two indices share an element: refused.
/// let mut data = [0i32; 6];
/// assert!(TypedViewMut::new(&mut data, &[2, 3], &[0, 1], 0).is_err());
/// ```
#[derive(Debug)]
pub struct TypedViewMut<'a, T> {
    data: &'a mut [T],
    layout: Layout,
}

impl<'a, T: Scalar> TypedView<'a, T> {
    /// A view of `data` with the given shape, element strides and offset; errors when an
    /// addressed element falls outside `data` or the arithmetic overflows.
    pub fn new(data: &'a [T], shape: &[usize], strides: &[isize], offset: usize) -> Result<Self> {
        let layout = Layout::new("TypedView::new", data.len(), shape.to_vec(), strides.to_vec(), offset)?;
        Ok(TypedView { data, layout })
    }

    /// A view of `data` under an already built layout, checked against the buffer.
    pub fn with_layout(data: &'a [T], layout: Layout) -> Result<Self> {
        let layout = Layout::new(
            "TypedView::with_layout",
            data.len(),
            layout.shape().to_vec(),
            layout.strides().to_vec(),
            layout.offset(),
        )?;
        Ok(TypedView { data, layout })
    }

    /// A compact row-major view of `data`.
    pub fn row_major(data: &'a [T], shape: &[usize]) -> Result<Self> {
        Self::check_len("TypedView::row_major", data.len(), shape)?;
        Ok(TypedView { data, layout: Layout::row_major(shape) })
    }

    /// A view of compact column-major (Fortran order) data, indexed like any other view.
    pub fn column_major(data: &'a [T], shape: &[usize]) -> Result<Self> {
        Self::check_len("TypedView::column_major", data.len(), shape)?;
        Ok(TypedView { data, layout: Layout::column_major(shape) })
    }

    fn check_len(op: &'static str, len: usize, shape: &[usize]) -> Result<()> {
        let need = crate::shape::checked_len(op, shape)?;
        if need != len {
            return Err(Error::shape_mismatch(
                op,
                format!("shape {shape:?} needs {need} elements, the buffer has {len}"),
            ));
        }
        Ok(())
    }

    /// A view over `data` with a layout the caller has checked against it.
    #[inline]
    pub(crate) fn from_layout_unchecked(data: &'a [T], layout: Layout) -> Self {
        TypedView { data, layout }
    }

    /// The layout (shape, strides, offset).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    /// The extents.
    #[inline]
    pub fn shape(&self) -> &[usize] {
        self.layout.shape()
    }
    /// The signed element strides.
    pub fn strides(&self) -> &[isize] {
        self.layout.strides()
    }
    /// Buffer index of element zero.
    pub fn offset(&self) -> usize {
        self.layout.offset()
    }
    /// Number of axes.
    pub fn rank(&self) -> usize {
        self.layout.rank()
    }
    /// Number of addressed elements.
    pub fn len(&self) -> usize {
        self.layout.len()
    }
    /// True when no element is addressed.
    pub fn is_empty(&self) -> bool {
        self.layout.is_empty()
    }
    /// The whole underlying buffer (the layout says which elements belong to the view).
    #[inline]
    pub fn buffer(&self) -> &'a [T] {
        self.data
    }

    /// The elements as one row-major slice, when the layout is compact row-major.
    #[inline]
    pub fn as_contiguous(&self) -> Option<&'a [T]> {
        if self.layout.is_row_major_contiguous() {
            let start = self.layout.offset().min(self.data.len());
            Some(&self.data[start..start + self.len()])
        } else {
            None
        }
    }

    /// The element at a multi-index, or `None` when out of range.
    pub fn get(&self, index: &[usize]) -> Option<&'a T> {
        if index.len() != self.rank() || index.iter().zip(self.shape()).any(|(&i, &d)| i >= d) {
            return None;
        }
        self.data.get(self.layout.offset_of(index))
    }

    /// Copies the viewed elements into a new row-major tensor (a simple reference copy;
    /// the kernels crate has the fast one).
    pub fn to_tensor(&self) -> TypedTensor<T> {
        let shape = self.shape().to_vec();
        // INVARIANT: the view's shape was length-checked at construction.
        match TypedTensor::from_fn(&shape, |i| self.data[self.layout.offset_of(i)]) {
            Ok(t) => t,
            Err(_) => unreachable!("a view's shape always has a countable length"),
        }
    }

    fn map_layout(self, f: impl FnOnce(&Layout) -> Result<Layout>) -> Result<Self> {
        let layout = f(&self.layout)?;
        Ok(TypedView { data: self.data, layout })
    }

    /// Reorders the axes (axis `k` of the result is axis `perm[k]`).
    pub fn permute(self, perm: &[usize]) -> Result<Self> {
        self.map_layout(|l| l.permute(perm))
    }
    /// Keeps `start, start + step, ...` below `limit` along `axis`.
    pub fn slice_axis(self, axis: usize, start: usize, limit: usize, step: usize) -> Result<Self> {
        self.map_layout(|l| l.slice_axis(axis, start, limit, step))
    }
    /// Reverses `axis`.
    pub fn reverse_axis(self, axis: usize) -> Result<Self> {
        self.map_layout(|l| l.reverse_axis(axis))
    }
    /// Broadcasts into `out_shape`, operand axis `k` becoming axis `dims[k]` (stride 0 elsewhere).
    pub fn broadcast_in_dim(self, out_shape: &[usize], dims: &[usize]) -> Result<Self> {
        self.map_layout(|l| l.broadcast_in_dim(out_shape, dims))
    }
    /// Inserts a unit axis at `axis`.
    pub fn insert_axis(self, axis: usize) -> Result<Self> {
        self.map_layout(|l| l.insert_axis(axis))
    }
    /// Removes a unit axis.
    pub fn remove_axis(self, axis: usize) -> Result<Self> {
        self.map_layout(|l| l.remove_axis(axis))
    }

    /// Reorders the axes: axis `k` of the result is axis `perm[k]` (numpy/lax
    /// `transpose`; the backend's [`crate::StructuralOps::transpose`] copies, this does not).
    pub fn transpose(&self, perm: &[usize]) -> Result<Self> {
        self.clone().map_layout(|l| l.permute(perm).map_err(|e| e.in_op("transpose")))
    }
    /// The strided box of a [`SliceConfig`] (the backend's `slice`, without a copy).
    pub fn slice(&self, config: &SliceConfig) -> Result<Self> {
        self.clone().map_layout(|l| l.slice(config))
    }
    /// Reverses each of `axes` (the backend's `reverse`, without a copy).
    pub fn reverse(&self, axes: &[usize]) -> Result<Self> {
        self.clone().map_layout(|l| l.reverse(axes))
    }
    /// The diagonal `offset` of axes 0 and 1, appended as the last axis: numpy's
    /// `diagonal(a, offset)`, without a copy.
    pub fn diagonal(&self, offset: isize) -> Result<Self> {
        self.clone().map_layout(|l| l.diagonal(offset, 0, 1))
    }
    /// The diagonal `offset` of `axis1` and `axis2`, appended as the last axis (numpy's
    /// `diagonal(a, offset, axis1, axis2)`), without a copy.
    pub fn diagonal_axes(&self, offset: isize, axis1: usize, axis2: usize) -> Result<Self> {
        self.clone().map_layout(|l| l.diagonal(offset, axis1, axis2))
    }
}

impl<'a, T: Scalar> TypedViewMut<'a, T> {
    /// A mutable view; errors when an element falls outside `data` or two indices alias.
    pub fn new(data: &'a mut [T], shape: &[usize], strides: &[isize], offset: usize) -> Result<Self> {
        const OP: &str = "TypedViewMut::new";
        let layout = Layout::new(OP, data.len(), shape.to_vec(), strides.to_vec(), offset)?;
        layout.check_no_alias(OP)?;
        Ok(TypedViewMut { data, layout })
    }

    /// A mutable view of compact column-major data.
    pub fn column_major(data: &'a mut [T], shape: &[usize]) -> Result<Self> {
        TypedView::<T>::check_len("TypedViewMut::column_major", data.len(), shape)?;
        Ok(TypedViewMut { data, layout: Layout::column_major(shape) })
    }

    /// A mutable view over `data` with a layout the caller has checked against it
    /// (in bounds and alias-free).
    #[inline]
    pub(crate) fn from_layout_unchecked(data: &'a mut [T], layout: Layout) -> Self {
        TypedViewMut { data, layout }
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    /// The extents.
    #[inline]
    pub fn shape(&self) -> &[usize] {
        self.layout.shape()
    }
    /// The signed element strides.
    pub fn strides(&self) -> &[isize] {
        self.layout.strides()
    }
    /// Number of addressed elements.
    pub fn len(&self) -> usize {
        self.layout.len()
    }
    /// True when no element is addressed.
    pub fn is_empty(&self) -> bool {
        self.layout.is_empty()
    }
    /// Number of axes.
    pub fn rank(&self) -> usize {
        self.layout.rank()
    }

    /// A read-only view of the same elements.
    pub fn as_view(&self) -> TypedView<'_, T> {
        TypedView { data: self.data, layout: self.layout.clone() }
    }

    /// A shorter-lived mutable view of the same elements.
    pub fn reborrow(&mut self) -> TypedViewMut<'_, T> {
        TypedViewMut { data: self.data, layout: self.layout.clone() }
    }

    /// The buffer and layout, for kernels that write through the layout themselves.
    /// Writing only to indices the layout addresses keeps the view's contract.
    pub fn buffer_and_layout(&mut self) -> (&mut [T], &Layout) {
        (self.data, &self.layout)
    }

    /// The elements as one row-major slice, when the layout is compact row-major.
    #[inline]
    pub fn as_contiguous_mut(&mut self) -> Option<&mut [T]> {
        if self.layout.is_row_major_contiguous() {
            let start = self.layout.offset().min(self.data.len());
            let len = self.len();
            Some(&mut self.data[start..start + len])
        } else {
            None
        }
    }

    /// Converts into one mutable row-major slice, when the layout is compact row-major.
    #[inline]
    pub fn into_contiguous_mut(self) -> Option<&'a mut [T]> {
        if self.layout.is_row_major_contiguous() {
            let start = self.layout.offset().min(self.data.len());
            let len = self.len();
            Some(&mut self.data[start..start + len])
        } else {
            None
        }
    }

    /// The element at a multi-index, mutably.
    pub fn get_mut(&mut self, index: &[usize]) -> Option<&mut T> {
        if index.len() != self.rank() || index.iter().zip(self.shape()).any(|(&i, &d)| i >= d) {
            return None;
        }
        let at = self.layout.offset_of(index);
        self.data.get_mut(at)
    }

    fn map_layout(self, f: impl FnOnce(&Layout) -> Result<Layout>) -> Result<Self> {
        let layout = f(&self.layout)?;
        Ok(TypedViewMut { data: self.data, layout })
    }

    /// Reorders the axes.
    pub fn permute(self, perm: &[usize]) -> Result<Self> {
        self.map_layout(|l| l.permute(perm))
    }
    /// Keeps `start, start + step, ...` below `limit` along `axis`.
    pub fn slice_axis(self, axis: usize, start: usize, limit: usize, step: usize) -> Result<Self> {
        self.map_layout(|l| l.slice_axis(axis, start, limit, step))
    }
    /// Reverses `axis`.
    pub fn reverse_axis(self, axis: usize) -> Result<Self> {
        self.map_layout(|l| l.reverse_axis(axis))
    }
    /// Inserts a unit axis at `axis`.
    pub fn insert_axis(self, axis: usize) -> Result<Self> {
        self.map_layout(|l| l.insert_axis(axis))
    }
    /// Removes a unit axis.
    pub fn remove_axis(self, axis: usize) -> Result<Self> {
        self.map_layout(|l| l.remove_axis(axis))
    }

    /// Reorders the axes: axis `k` of the result is axis `perm[k]` (numpy/lax
    /// `transpose`; the backend's [`crate::StructuralOps::transpose`] copies, this does not).
    pub fn transpose(self, perm: &[usize]) -> Result<Self> {
        self.map_layout(|l| l.permute(perm).map_err(|e| e.in_op("transpose")))
    }
    /// The strided box of a [`SliceConfig`] (the backend's `slice`, without a copy).
    pub fn slice(self, config: &SliceConfig) -> Result<Self> {
        self.map_layout(|l| l.slice(config))
    }
    /// Reverses each of `axes` (the backend's `reverse`, without a copy).
    pub fn reverse(self, axes: &[usize]) -> Result<Self> {
        self.map_layout(|l| l.reverse(axes))
    }
    /// The diagonal `offset` of axes 0 and 1, appended as the last axis: numpy's
    /// `diagonal(a, offset)`, without a copy.
    pub fn diagonal(self, offset: isize) -> Result<Self> {
        self.map_layout(|l| l.diagonal(offset, 0, 1))
    }
    /// The diagonal `offset` of `axis1` and `axis2`, appended as the last axis (numpy's
    /// `diagonal(a, offset, axis1, axis2)`), without a copy.
    pub fn diagonal_axes(self, offset: isize, axis1: usize, axis2: usize) -> Result<Self> {
        self.map_layout(|l| l.diagonal(offset, axis1, axis2))
    }
}

/// A dtype-erased read-only view: one variant per [`DType`].
#[derive(Clone, Debug)]
pub enum TensorView<'a> {
    /// `f32` elements.
    F32(TypedView<'a, f32>),
    /// `f64` elements.
    F64(TypedView<'a, f64>),
    /// `i32` elements.
    I32(TypedView<'a, i32>),
    /// `i64` elements.
    I64(TypedView<'a, i64>),
    /// `bool` elements.
    Bool(TypedView<'a, bool>),
    /// `c32` elements.
    C32(TypedView<'a, c32>),
    /// `c64` elements.
    C64(TypedView<'a, c64>),
}

/// A dtype-erased mutable view: one variant per [`DType`].
#[derive(Debug)]
pub enum TensorViewMut<'a> {
    /// `f32` elements.
    F32(TypedViewMut<'a, f32>),
    /// `f64` elements.
    F64(TypedViewMut<'a, f64>),
    /// `i32` elements.
    I32(TypedViewMut<'a, i32>),
    /// `i64` elements.
    I64(TypedViewMut<'a, i64>),
    /// `bool` elements.
    Bool(TypedViewMut<'a, bool>),
    /// `c32` elements.
    C32(TypedViewMut<'a, c32>),
    /// `c64` elements.
    C64(TypedViewMut<'a, c64>),
}

macro_rules! each_view {
    ($enum:ident, $value:expr, $v:ident => $body:expr) => {
        match $value {
            $enum::F32($v) => $body,
            $enum::F64($v) => $body,
            $enum::I32($v) => $body,
            $enum::I64($v) => $body,
            $enum::Bool($v) => $body,
            $enum::C32($v) => $body,
            $enum::C64($v) => $body,
        }
    };
}

impl<'a> TensorView<'a> {
    /// The element type.
    pub fn dtype(&self) -> DType {
        each_view!(TensorView, self, v => dtype_of(v))
    }
    /// The layout.
    pub fn layout(&self) -> &Layout {
        each_view!(TensorView, self, v => v.layout())
    }
    /// The extents.
    #[inline]
    pub fn shape(&self) -> &[usize] {
        self.layout().shape()
    }
    /// Number of axes.
    pub fn rank(&self) -> usize {
        self.layout().rank()
    }
    /// Number of addressed elements.
    pub fn len(&self) -> usize {
        self.layout().len()
    }
    /// True when no element is addressed.
    pub fn is_empty(&self) -> bool {
        self.layout().is_empty()
    }
    /// The typed view, or a dtype-mismatch error.
    pub fn into_typed<T: Scalar>(self) -> Result<TypedView<'a, T>> {
        T::from_view(self).map_err(|v| {
            Error::dtype_mismatch(
                "TensorView::into_typed",
                format!("asked for {}, the view holds {}", T::DTYPE, v.dtype()),
            )
        })
    }
    /// Copies the viewed elements into a new row-major tensor.
    pub fn to_tensor(&self) -> crate::Tensor {
        each_view!(TensorView, self, v => v.to_tensor().into())
    }
    /// Reorders the axes.
    pub fn permute(self, perm: &[usize]) -> Result<Self> {
        each_view!(TensorView, self, v => v.permute(perm).map(Scalar::into_view))
    }
    /// Keeps `start, start + step, ...` below `limit` along `axis`.
    pub fn slice_axis(self, axis: usize, start: usize, limit: usize, step: usize) -> Result<Self> {
        each_view!(TensorView, self, v => v.slice_axis(axis, start, limit, step).map(Scalar::into_view))
    }
    /// Reverses `axis`.
    pub fn reverse_axis(self, axis: usize) -> Result<Self> {
        each_view!(TensorView, self, v => v.reverse_axis(axis).map(Scalar::into_view))
    }
    /// Broadcasts into `out_shape` (operand axis `k` → axis `dims[k]`).
    pub fn broadcast_in_dim(self, out_shape: &[usize], dims: &[usize]) -> Result<Self> {
        each_view!(TensorView, self, v => v.broadcast_in_dim(out_shape, dims).map(Scalar::into_view))
    }
    /// Inserts a unit axis.
    pub fn insert_axis(self, axis: usize) -> Result<Self> {
        each_view!(TensorView, self, v => v.insert_axis(axis).map(Scalar::into_view))
    }
    /// Removes a unit axis.
    pub fn remove_axis(self, axis: usize) -> Result<Self> {
        each_view!(TensorView, self, v => v.remove_axis(axis).map(Scalar::into_view))
    }
    /// Reorders the axes (numpy/lax `transpose`, without a copy).
    pub fn transpose(&self, perm: &[usize]) -> Result<Self> {
        each_view!(TensorView, self, v => v.transpose(perm).map(Scalar::into_view))
    }
    /// The strided box of a [`SliceConfig`], without a copy.
    pub fn slice(&self, config: &SliceConfig) -> Result<Self> {
        each_view!(TensorView, self, v => v.slice(config).map(Scalar::into_view))
    }
    /// Reverses each of `axes`, without a copy.
    pub fn reverse(&self, axes: &[usize]) -> Result<Self> {
        each_view!(TensorView, self, v => v.reverse(axes).map(Scalar::into_view))
    }
    /// The diagonal `offset` of axes 0 and 1, appended as the last axis (numpy's
    /// `diagonal`), without a copy.
    pub fn diagonal(&self, offset: isize) -> Result<Self> {
        each_view!(TensorView, self, v => v.diagonal(offset).map(Scalar::into_view))
    }
    /// The diagonal `offset` of `axis1` and `axis2`, appended as the last axis.
    pub fn diagonal_axes(&self, offset: isize, axis1: usize, axis2: usize) -> Result<Self> {
        each_view!(TensorView, self, v => v.diagonal_axes(offset, axis1, axis2).map(Scalar::into_view))
    }
}

impl<'a> TensorViewMut<'a> {
    /// The element type.
    pub fn dtype(&self) -> DType {
        each_view!(TensorViewMut, self, v => dtype_of_mut(v))
    }
    /// The layout.
    pub fn layout(&self) -> &Layout {
        each_view!(TensorViewMut, self, v => v.layout())
    }
    /// The extents.
    #[inline]
    pub fn shape(&self) -> &[usize] {
        self.layout().shape()
    }
    /// Number of addressed elements.
    pub fn len(&self) -> usize {
        self.layout().len()
    }
    /// True when no element is addressed.
    pub fn is_empty(&self) -> bool {
        self.layout().is_empty()
    }
    /// A read-only view of the same elements.
    pub fn as_view(&self) -> TensorView<'_> {
        each_view!(TensorViewMut, self, v => Scalar::into_view(v.as_view()))
    }
    /// A shorter-lived mutable view of the same elements.
    pub fn reborrow(&mut self) -> TensorViewMut<'_> {
        each_view!(TensorViewMut, self, v => Scalar::into_view_mut(v.reborrow()))
    }
    /// The typed mutable view, or a dtype-mismatch error.
    pub fn into_typed<T: Scalar>(self) -> Result<TypedViewMut<'a, T>> {
        T::from_view_mut(self).map_err(|v| {
            Error::dtype_mismatch(
                "TensorViewMut::into_typed",
                format!("asked for {}, the view holds {}", T::DTYPE, v.dtype()),
            )
        })
    }
    /// Reorders the axes.
    pub fn permute(self, perm: &[usize]) -> Result<Self> {
        each_view!(TensorViewMut, self, v => v.permute(perm).map(Scalar::into_view_mut))
    }
    /// Keeps `start, start + step, ...` below `limit` along `axis`.
    pub fn slice_axis(self, axis: usize, start: usize, limit: usize, step: usize) -> Result<Self> {
        each_view!(TensorViewMut, self, v => v.slice_axis(axis, start, limit, step).map(Scalar::into_view_mut))
    }
    /// Reverses `axis`.
    pub fn reverse_axis(self, axis: usize) -> Result<Self> {
        each_view!(TensorViewMut, self, v => v.reverse_axis(axis).map(Scalar::into_view_mut))
    }
    /// Reorders the axes (numpy/lax `transpose`, without a copy).
    pub fn transpose(self, perm: &[usize]) -> Result<Self> {
        each_view!(TensorViewMut, self, v => v.transpose(perm).map(Scalar::into_view_mut))
    }
    /// The strided box of a [`SliceConfig`], without a copy.
    pub fn slice(self, config: &SliceConfig) -> Result<Self> {
        each_view!(TensorViewMut, self, v => v.slice(config).map(Scalar::into_view_mut))
    }
    /// Reverses each of `axes`, without a copy.
    pub fn reverse(self, axes: &[usize]) -> Result<Self> {
        each_view!(TensorViewMut, self, v => v.reverse(axes).map(Scalar::into_view_mut))
    }
    /// The diagonal `offset` of axes 0 and 1, appended as the last axis (numpy's
    /// `diagonal`), without a copy.
    pub fn diagonal(self, offset: isize) -> Result<Self> {
        each_view!(TensorViewMut, self, v => v.diagonal(offset).map(Scalar::into_view_mut))
    }
    /// The diagonal `offset` of `axis1` and `axis2`, appended as the last axis.
    pub fn diagonal_axes(self, offset: isize, axis1: usize, axis2: usize) -> Result<Self> {
        each_view!(TensorViewMut, self, v => v.diagonal_axes(offset, axis1, axis2).map(Scalar::into_view_mut))
    }
}

fn dtype_of<T: Scalar>(_: &TypedView<'_, T>) -> DType {
    T::DTYPE
}

fn dtype_of_mut<T: Scalar>(_: &TypedViewMut<'_, T>) -> DType {
    T::DTYPE
}

impl<'a, T: Scalar> From<TypedView<'a, T>> for TensorView<'a> {
    fn from(v: TypedView<'a, T>) -> Self {
        T::into_view(v)
    }
}

impl<'a, T: Scalar> From<TypedViewMut<'a, T>> for TensorViewMut<'a> {
    fn from(v: TypedViewMut<'a, T>) -> Self {
        T::into_view_mut(v)
    }
}
