//! `TensorRead` and `TensorWrite`: what every op reads from and writes into, so owned
//! tensors and views share one code path and one public method per op.

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::tensor::{Tensor, TypedTensor};
use crate::view::{TensorView, TensorViewMut, TypedView, TypedViewMut};

/// An op's input: a borrowed owned tensor or a strided view.
///
/// ```
/// use strata_tensor::{Tensor, TensorRead, TypedTensor};
/// let t = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
/// let whole: TensorRead<'_> = (&t).into();
/// let transposed: TensorRead<'_> = t.view().permute(&[1, 0]).unwrap().into();
/// assert_eq!(whole.shape(), transposed.shape());
/// assert!(whole.contiguous::<f64>().is_some());
/// assert!(transposed.contiguous::<f64>().is_none());
/// ```
#[derive(Clone, Debug)]
pub enum TensorRead<'a> {
    /// A whole owned tensor (compact row-major).
    Tensor(&'a Tensor),
    /// A strided view.
    View(TensorView<'a>),
}

impl<'a> TensorRead<'a> {
    /// The element type.
    #[inline]
    pub fn dtype(&self) -> DType {
        match self {
            TensorRead::Tensor(t) => t.dtype(),
            TensorRead::View(v) => v.dtype(),
        }
    }

    /// The extents.
    #[inline]
    pub fn shape(&self) -> &[usize] {
        match self {
            TensorRead::Tensor(t) => t.shape(),
            TensorRead::View(v) => v.shape(),
        }
    }

    /// Number of axes.
    pub fn rank(&self) -> usize {
        self.shape().len()
    }

    /// Number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            TensorRead::Tensor(t) => t.len(),
            TensorRead::View(v) => v.len(),
        }
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A strided view of the input (for an owned tensor, its row-major view).
    pub fn view(&self) -> TensorView<'a> {
        match self {
            TensorRead::Tensor(t) => t.view(),
            TensorRead::View(v) => v.clone(),
        }
    }

    /// The typed strided view, or a dtype-mismatch error.
    pub fn typed_view<T: Scalar>(&self) -> Result<TypedView<'a, T>> {
        self.view().into_typed::<T>()
    }

    /// The elements as one row-major slice when the input is of type `T` and compact
    /// row-major; the fast path every kernel tries first.
    #[inline]
    pub fn contiguous<T: Scalar>(&self) -> Option<&'a [T]> {
        match self {
            TensorRead::Tensor(t) => T::tensor_ref(t).map(|t| t.data()),
            TensorRead::View(v) => T::view_ref(v).and_then(|v| v.as_contiguous()),
        }
    }
}

impl<'a> From<&'a Tensor> for TensorRead<'a> {
    fn from(t: &'a Tensor) -> Self {
        TensorRead::Tensor(t)
    }
}

impl<'a> From<TensorView<'a>> for TensorRead<'a> {
    fn from(v: TensorView<'a>) -> Self {
        TensorRead::View(v)
    }
}

impl<'a, T: Scalar> From<&'a TypedTensor<T>> for TensorRead<'a> {
    fn from(t: &'a TypedTensor<T>) -> Self {
        TensorRead::View(T::into_view(t.view()))
    }
}

impl<'a, T: Scalar> From<TypedView<'a, T>> for TensorRead<'a> {
    fn from(v: TypedView<'a, T>) -> Self {
        TensorRead::View(T::into_view(v))
    }
}

/// An op's destination: a borrowed owned tensor or a mutable strided view. Its shape
/// and dtype must equal the op's result exactly; `_into` ops check before writing.
#[derive(Debug)]
pub enum TensorWrite<'a> {
    /// A whole owned tensor, overwritten in place (its shape does not change).
    Tensor(&'a mut Tensor),
    /// A mutable strided view.
    View(TensorViewMut<'a>),
}

impl<'a> TensorWrite<'a> {
    /// The element type.
    #[inline]
    pub fn dtype(&self) -> DType {
        match self {
            TensorWrite::Tensor(t) => t.dtype(),
            TensorWrite::View(v) => v.dtype(),
        }
    }

    /// The extents.
    #[inline]
    pub fn shape(&self) -> &[usize] {
        match self {
            TensorWrite::Tensor(t) => t.shape(),
            TensorWrite::View(v) => v.shape(),
        }
    }

    /// Number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            TensorWrite::Tensor(t) => t.len(),
            TensorWrite::View(v) => v.len(),
        }
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A mutable strided view of the destination.
    pub fn view_mut(&mut self) -> TensorViewMut<'_> {
        match self {
            TensorWrite::Tensor(t) => t.view_mut(),
            TensorWrite::View(v) => v.reborrow(),
        }
    }

    /// A read-only view of the destination's current contents (for beta accumulation).
    pub fn view(&self) -> TensorView<'_> {
        match self {
            TensorWrite::Tensor(t) => t.view(),
            TensorWrite::View(v) => v.as_view(),
        }
    }

    /// The typed mutable view, or a dtype-mismatch error.
    pub fn typed_view_mut<T: Scalar>(&mut self) -> Result<TypedViewMut<'_, T>> {
        self.view_mut().into_typed::<T>()
    }

    /// The elements as one mutable row-major slice when of type `T` and compact row-major.
    #[inline]
    pub fn contiguous_mut<T: Scalar>(&mut self) -> Option<&mut [T]> {
        match self {
            TensorWrite::Tensor(t) => T::tensor_mut(t).map(|t| t.data_mut()),
            TensorWrite::View(v) => T::view_mut_ref(v).and_then(|v| v.as_contiguous_mut()),
        }
    }

    /// Checks that the destination has exactly `dtype` and `shape`, naming `op` otherwise.
    #[inline]
    pub fn expect(&self, op: &'static str, dtype: DType, shape: &[usize]) -> Result<()> {
        if self.dtype() != dtype {
            return Err(Error::dtype_mismatch(
                op,
                format!("the result has dtype {dtype}, the destination holds {}", self.dtype()),
            ));
        }
        if self.shape() != shape {
            return Err(Error::shape_mismatch(
                op,
                format!("the result has shape {shape:?}, the destination has shape {:?}", self.shape()),
            ));
        }
        Ok(())
    }
}

impl<'a> From<&'a mut Tensor> for TensorWrite<'a> {
    fn from(t: &'a mut Tensor) -> Self {
        TensorWrite::Tensor(t)
    }
}

impl<'a> From<TensorViewMut<'a>> for TensorWrite<'a> {
    fn from(v: TensorViewMut<'a>) -> Self {
        TensorWrite::View(v)
    }
}

impl<'a, T: Scalar> From<&'a mut TypedTensor<T>> for TensorWrite<'a> {
    fn from(t: &'a mut TypedTensor<T>) -> Self {
        TensorWrite::View(T::into_view_mut(t.view_mut()))
    }
}

impl<'a, T: Scalar> From<TypedViewMut<'a, T>> for TensorWrite<'a> {
    fn from(v: TypedViewMut<'a, T>) -> Self {
        TensorWrite::View(T::into_view_mut(v))
    }
}

impl<'a, 'b: 'a> From<&'a TensorRead<'b>> for TensorRead<'a> {
    #[inline]
    fn from(r: &'a TensorRead<'b>) -> Self {
        r.clone()
    }
}

impl<'a, 'b: 'a> From<&'a TensorView<'b>> for TensorRead<'a> {
    #[inline]
    fn from(v: &'a TensorView<'b>) -> Self {
        TensorRead::View(v.clone())
    }
}

impl<'a, 'b: 'a, T: Scalar> From<&'a TypedView<'b, T>> for TensorRead<'a> {
    #[inline]
    fn from(v: &'a TypedView<'b, T>) -> Self {
        TensorRead::View(T::into_view(v.clone()))
    }
}
