//! Owned tensors: a compact row-major buffer plus its shape, typed and dtype-erased.

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::extents::Extents;
use crate::layout::Layout;
use crate::scalar::{Scalar, c32, c64};
use crate::shape::checked_len;
use crate::view::{TensorView, TensorViewMut, TypedView, TypedViewMut};

/// An owned tensor of element type `T`: a compact row-major buffer and its shape.
///
/// Invariant: `data.len()` equals the product of `shape` (1 for rank 0).
///
/// ```
/// use strata_tensor::TypedTensor;
/// let t = TypedTensor::from_fn(&[2, 3], |i| (10 * i[0] + i[1]) as f64).unwrap();
/// assert_eq!(t.shape(), &[2, 3]);
/// assert_eq!(t.data(), &[0.0, 1.0, 2.0, 10.0, 11.0, 12.0]);
/// assert_eq!(t.get(&[1, 2]), Some(&12.0));
/// let s = TypedTensor::scalar(7i32);
/// assert_eq!(s.rank(), 0);
/// assert_eq!(s.into_vec(), vec![7]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TypedTensor<T> {
    data: Vec<T>,
    shape: Extents,
}

impl<T: Scalar> TypedTensor<T> {
    /// A tensor over `data` in row-major order; errors when the length disagrees with `shape`.
    #[inline]
    pub fn from_vec(data: Vec<T>, shape: &[usize]) -> Result<Self> {
        let len = checked_len("TypedTensor::from_vec", shape)?;
        if data.len() != len {
            return Err(Error::shape_mismatch(
                "TypedTensor::from_vec",
                format!("shape {shape:?} needs {len} elements, the buffer has {}", data.len()),
            ));
        }
        Ok(TypedTensor { data, shape: Extents::from_slice(shape) })
    }

    /// A tensor of zeros (`false` for bool).
    pub fn zeros(shape: &[usize]) -> Result<Self> {
        Self::filled(shape, T::zero())
    }

    /// A tensor with every element equal to `value`.
    pub fn filled(shape: &[usize], value: T) -> Result<Self> {
        let len = checked_len("TypedTensor::filled", shape)?;
        let data = try_vec_filled("TypedTensor::filled", len, value)?;
        Ok(TypedTensor { data, shape: Extents::from_slice(shape) })
    }

    /// A tensor whose element at multi-index `i` is `f(i)`, visited in row-major order.
    pub fn from_fn(shape: &[usize], mut f: impl FnMut(&[usize]) -> T) -> Result<Self> {
        let len = checked_len("TypedTensor::from_fn", shape)?;
        let mut data = Vec::new();
        data.try_reserve_exact(len).map_err(|e| {
            Error::backend_failure("TypedTensor::from_fn", format!("cannot allocate {len} elements")).with_source(e)
        })?;
        let mut index = vec![0usize; shape.len()];
        for _ in 0..len {
            data.push(f(&index));
            for axis in (0..shape.len()).rev() {
                index[axis] += 1;
                if index[axis] < shape[axis] {
                    break;
                }
                index[axis] = 0;
            }
        }
        Ok(TypedTensor { data, shape: Extents::from_slice(shape) })
    }

    /// A rank-0 tensor holding `value`.
    pub fn scalar(value: T) -> Self {
        TypedTensor { data: vec![value], shape: Extents::from_slice(&[]) }
    }

    /// The extents, outermost first.
    #[inline]
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Number of axes.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// True when the tensor has no elements (some extent is zero).
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The elements in row-major order.
    #[inline]
    pub fn data(&self) -> &[T] {
        &self.data
    }

    /// The elements in row-major order, mutably (the shape cannot change).
    pub fn data_mut(&mut self) -> &mut [T] {
        &mut self.data
    }

    /// The element at a multi-index, or `None` when the index is out of range.
    pub fn get(&self, index: &[usize]) -> Option<&T> {
        if index.len() != self.shape.len() {
            return None;
        }
        let mut flat = 0usize;
        for (&i, &d) in index.iter().zip(self.shape.iter()) {
            if i >= d {
                return None;
            }
            flat = flat * d + i;
        }
        self.data.get(flat)
    }

    /// Consumes the tensor, giving its row-major buffer.
    pub fn into_vec(self) -> Vec<T> {
        self.data
    }

    /// Consumes the tensor, giving its buffer and shape.
    pub fn into_parts(self) -> (Vec<T>, Vec<usize>) {
        (self.data, self.shape.into_vec())
    }

    /// Reinterprets the same row-major buffer under another shape of equal element count.
    pub fn reshape(self, shape: &[usize]) -> Result<Self> {
        let len = checked_len("reshape", shape)?;
        if len != self.data.len() {
            return Err(Error::shape_mismatch(
                "reshape",
                format!(
                    "cannot reshape {:?} ({} elements) into {shape:?} ({len} elements)",
                    self.shape,
                    self.data.len()
                ),
            ));
        }
        Ok(TypedTensor { data: self.data, shape: Extents::from_slice(shape) })
    }

    /// A view of the whole tensor (row-major strides, offset 0).
    pub fn view(&self) -> TypedView<'_, T> {
        // INVARIANT: data.len() == product(shape), so the row-major layout is in bounds.
        TypedView::from_layout_unchecked(&self.data, Layout::row_major(&self.shape))
    }

    /// A mutable view of the whole tensor.
    pub fn view_mut(&mut self) -> TypedViewMut<'_, T> {
        let layout = Layout::row_major(&self.shape);
        // INVARIANT: a row-major layout of a tensor's own shape is in bounds and alias-free.
        TypedViewMut::from_layout_unchecked(&mut self.data, layout)
    }
}

fn try_vec_filled<T: Clone>(op: &'static str, len: usize, value: T) -> Result<Vec<T>> {
    let mut data = Vec::new();
    data.try_reserve_exact(len)
        .map_err(|e| Error::backend_failure(op, format!("cannot allocate {len} elements")).with_source(e))?;
    data.resize(len, value);
    Ok(data)
}

impl<T: Scalar> From<TypedTensor<T>> for Tensor {
    fn from(t: TypedTensor<T>) -> Self {
        T::into_tensor(t)
    }
}

/// A dtype-erased owned tensor: one variant per [`DType`].
///
/// ```
/// use strata_tensor::{DType, Tensor, TypedTensor};
/// let t: Tensor = TypedTensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap().into();
/// assert_eq!(t.dtype(), DType::F32);
/// assert_eq!(t.shape(), &[2]);
/// assert!(t.as_typed::<f64>().is_err());
/// let back = t.into_typed::<f32>().unwrap();
/// assert_eq!(back.data(), &[1.0, 2.0]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Tensor {
    /// `f32` elements.
    F32(TypedTensor<f32>),
    /// `f64` elements.
    F64(TypedTensor<f64>),
    /// `i32` elements.
    I32(TypedTensor<i32>),
    /// `i64` elements.
    I64(TypedTensor<i64>),
    /// `bool` elements.
    Bool(TypedTensor<bool>),
    /// `c32` elements.
    C32(TypedTensor<c32>),
    /// `c64` elements.
    C64(TypedTensor<c64>),
}

/// Applies the same expression to whichever typed tensor the enum holds.
macro_rules! each_variant {
    ($value:expr, $t:ident => $body:expr) => {
        match $value {
            Tensor::F32($t) => $body,
            Tensor::F64($t) => $body,
            Tensor::I32($t) => $body,
            Tensor::I64($t) => $body,
            Tensor::Bool($t) => $body,
            Tensor::C32($t) => $body,
            Tensor::C64($t) => $body,
        }
    };
}

impl Tensor {
    /// A zero-filled tensor of any dtype.
    pub fn zeros(dtype: DType, shape: &[usize]) -> Result<Tensor> {
        crate::dispatch_dtype!(dtype, T => TypedTensor::<T>::zeros(shape).map(Tensor::from))
    }

    /// A rank-0 tensor.
    pub fn scalar<T: Scalar>(value: T) -> Tensor {
        TypedTensor::scalar(value).into()
    }

    /// A tensor from a row-major buffer and shape.
    pub fn from_vec<T: Scalar>(data: Vec<T>, shape: &[usize]) -> Result<Tensor> {
        TypedTensor::from_vec(data, shape).map(Tensor::from)
    }

    /// The element type.
    #[inline]
    pub fn dtype(&self) -> DType {
        match self {
            Tensor::F32(_) => DType::F32,
            Tensor::F64(_) => DType::F64,
            Tensor::I32(_) => DType::I32,
            Tensor::I64(_) => DType::I64,
            Tensor::Bool(_) => DType::Bool,
            Tensor::C32(_) => DType::C32,
            Tensor::C64(_) => DType::C64,
        }
    }

    /// The extents, outermost first.
    #[inline]
    pub fn shape(&self) -> &[usize] {
        each_variant!(self, t => t.shape())
    }

    /// Number of axes.
    pub fn rank(&self) -> usize {
        self.shape().len()
    }

    /// Number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        each_variant!(self, t => t.len())
    }

    /// True when the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Size of the element buffer in bytes.
    pub fn size_bytes(&self) -> usize {
        self.len() * self.dtype().size_bytes()
    }

    /// Borrows the typed tensor, or a [`crate::ErrorKind::DTypeMismatch`] error.
    pub fn as_typed<T: Scalar>(&self) -> Result<&TypedTensor<T>> {
        T::tensor_ref(self).ok_or_else(|| wrong_dtype::<T>(self.dtype()))
    }

    /// Mutably borrows the typed tensor, or a dtype-mismatch error.
    pub fn as_typed_mut<T: Scalar>(&mut self) -> Result<&mut TypedTensor<T>> {
        let dtype = self.dtype();
        T::tensor_mut(self).ok_or_else(|| wrong_dtype::<T>(dtype))
    }

    /// Converts into the typed tensor, or a dtype-mismatch error.
    pub fn into_typed<T: Scalar>(self) -> Result<TypedTensor<T>> {
        T::from_tensor(self).map_err(|t| wrong_dtype::<T>(t.dtype()))
    }

    /// A view of the whole tensor.
    pub fn view(&self) -> TensorView<'_> {
        each_variant!(self, t => Scalar::into_view(t.view()))
    }

    /// A mutable view of the whole tensor.
    pub fn view_mut(&mut self) -> TensorViewMut<'_> {
        each_variant!(self, t => Scalar::into_view_mut(t.view_mut()))
    }

    /// Reinterprets the row-major buffer under another shape of equal element count.
    pub fn reshape(self, shape: &[usize]) -> Result<Tensor> {
        each_variant!(self, t => t.reshape(shape).map(Tensor::from))
    }

    /// The elements in row-major order as a `Vec<T>`, or a dtype-mismatch error.
    ///
    /// ```
    /// use strata_tensor::Tensor;
    /// let t = Tensor::from_vec(vec![1i64, 2, 3], &[3])?;
    /// assert_eq!(t.to_vec::<i64>()?, vec![1, 2, 3]);
    /// assert!(t.to_vec::<f64>().is_err());
    /// # Ok::<(), strata_tensor::Error>(())
    /// ```
    pub fn to_vec<T: Scalar>(&self) -> Result<Vec<T>> {
        Ok(self.as_typed::<T>()?.data().to_vec())
    }

    /// The single element of a tensor holding exactly one (rank 0, or every extent 1),
    /// as numpy's `item()`; errors on another element count or dtype.
    ///
    /// ```
    /// use strata_tensor::Tensor;
    /// assert_eq!(Tensor::scalar(2.5f64).to_scalar::<f64>()?, 2.5);
    /// assert!(Tensor::from_vec(vec![1.0f64, 2.0], &[2])?.to_scalar::<f64>().is_err());
    /// # Ok::<(), strata_tensor::Error>(())
    /// ```
    pub fn to_scalar<T: Scalar>(&self) -> Result<T> {
        self.as_typed::<T>()?.to_scalar()
    }
}

impl<T: Scalar> TryFrom<Tensor> for TypedTensor<T> {
    type Error = Error;

    /// The typed tensor inside, or a dtype-mismatch error (the same as
    /// [`Tensor::into_typed`]).
    fn try_from(t: Tensor) -> Result<Self> {
        t.into_typed()
    }
}

impl<T: Scalar> TypedTensor<T> {
    /// The single element of a tensor holding exactly one, or an error.
    pub fn to_scalar(&self) -> Result<T> {
        match self.data() {
            [only] => Ok(*only),
            data => Err(Error::shape_mismatch(
                "to_scalar",
                format!("a tensor of shape {:?} holds {} elements, not one", self.shape(), data.len()),
            )),
        }
    }
}

fn wrong_dtype<T: Scalar>(actual: DType) -> Error {
    Error::dtype_mismatch("Tensor::as_typed", format!("asked for {}, the tensor holds {actual}", T::DTYPE))
}
