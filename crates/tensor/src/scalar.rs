//! The scalar trait: per-dtype facts, and the bridge between typed and dtype-erased data.

use std::fmt::Debug;

use num_complex::Complex;

use crate::dtype::DType;
use crate::tensor::{Tensor, TypedTensor};
use crate::value::ScalarValue;
use crate::view::{TensorView, TensorViewMut, TypedView, TypedViewMut};

/// Complex number of two `f32` (`DType::C32`).
#[allow(non_camel_case_types)]
pub type c32 = Complex<f32>;
/// Complex number of two `f64` (`DType::C64`).
#[allow(non_camel_case_types)]
pub type c64 = Complex<f64>;

mod sealed {
    pub trait Sealed {}
}

/// An element type of strata: exactly `f32`, `f64`, `i32`, `i64`, `bool`, [`c32`], [`c64`].
///
/// The trait carries the facts generic code needs (its [`DType`], its real counterpart,
/// zero and one) and the conversions between typed values and the erased [`Tensor`] /
/// [`TensorView`] enums, so that dtype dispatch is written once ([`crate::dispatch_dtype`])
/// and typed code never matches on the enum itself.
///
/// ```
/// use strata_tensor::{DType, Scalar, c64};
/// assert_eq!(<c64 as Scalar>::DTYPE, DType::C64);
/// assert_eq!(<c64 as Scalar>::Real::DTYPE, DType::F64);
/// assert_eq!(i32::one(), 1);
/// ```
pub trait Scalar: Copy + Send + Sync + Debug + PartialEq + Default + 'static + sealed::Sealed {
    /// The dtype tag of this type.
    const DTYPE: DType;
    /// The real counterpart (`c64 → f64`); real types map to themselves.
    type Real: Scalar;

    /// The additive identity (`false` for bool).
    fn zero() -> Self {
        Self::default()
    }
    /// The multiplicative identity (`true` for bool).
    fn one() -> Self;

    /// Wraps a typed tensor into the erased enum.
    fn into_tensor(t: TypedTensor<Self>) -> Tensor;
    /// Unwraps the erased enum, giving it back unchanged when the dtype differs.
    fn from_tensor(t: Tensor) -> Result<TypedTensor<Self>, Tensor>;
    /// Borrows the typed tensor inside the erased enum, if the dtype matches.
    fn tensor_ref(t: &Tensor) -> Option<&TypedTensor<Self>>;
    /// Mutably borrows the typed tensor inside the erased enum, if the dtype matches.
    fn tensor_mut(t: &mut Tensor) -> Option<&mut TypedTensor<Self>>;
    /// Wraps a typed view into the erased enum.
    fn into_view(v: TypedView<'_, Self>) -> TensorView<'_>;
    /// Unwraps an erased view, giving it back unchanged when the dtype differs.
    fn from_view(v: TensorView<'_>) -> Result<TypedView<'_, Self>, TensorView<'_>>;
    /// Wraps a typed mutable view into the erased enum.
    fn into_view_mut(v: TypedViewMut<'_, Self>) -> TensorViewMut<'_>;
    /// Unwraps an erased mutable view, giving it back unchanged when the dtype differs.
    fn from_view_mut(v: TensorViewMut<'_>) -> Result<TypedViewMut<'_, Self>, TensorViewMut<'_>>;
    /// Borrows the typed view inside an erased view, if the dtype matches (no clone of
    /// its layout).
    fn view_ref<'v, 'a>(v: &'v TensorView<'a>) -> Option<&'v TypedView<'a, Self>>;
    /// Mutably borrows the typed view inside an erased mutable view, if the dtype matches.
    fn view_mut_ref<'v, 'a>(v: &'v mut TensorViewMut<'a>) -> Option<&'v mut TypedViewMut<'a, Self>>;
    /// Wraps the value into the erased [`ScalarValue`].
    fn into_value(self) -> ScalarValue;
}

macro_rules! impl_scalar {
    ($t:ty, $variant:ident, $real:ty, $one:expr) => {
        impl sealed::Sealed for $t {}
        impl Scalar for $t {
            const DTYPE: DType = DType::$variant;
            type Real = $real;
            #[inline]
            fn one() -> Self {
                $one
            }
            #[inline]
            fn into_tensor(t: TypedTensor<Self>) -> Tensor {
                Tensor::$variant(t)
            }
            #[inline]
            fn from_tensor(t: Tensor) -> Result<TypedTensor<Self>, Tensor> {
                match t {
                    Tensor::$variant(t) => Ok(t),
                    other => Err(other),
                }
            }
            #[inline]
            fn tensor_ref(t: &Tensor) -> Option<&TypedTensor<Self>> {
                match t {
                    Tensor::$variant(t) => Some(t),
                    _ => None,
                }
            }
            #[inline]
            fn tensor_mut(t: &mut Tensor) -> Option<&mut TypedTensor<Self>> {
                match t {
                    Tensor::$variant(t) => Some(t),
                    _ => None,
                }
            }
            #[inline]
            fn into_view(v: TypedView<'_, Self>) -> TensorView<'_> {
                TensorView::$variant(v)
            }
            #[inline]
            fn from_view(v: TensorView<'_>) -> Result<TypedView<'_, Self>, TensorView<'_>> {
                match v {
                    TensorView::$variant(v) => Ok(v),
                    other => Err(other),
                }
            }
            #[inline]
            fn into_view_mut(v: TypedViewMut<'_, Self>) -> TensorViewMut<'_> {
                TensorViewMut::$variant(v)
            }
            #[inline]
            fn from_view_mut(v: TensorViewMut<'_>) -> Result<TypedViewMut<'_, Self>, TensorViewMut<'_>> {
                match v {
                    TensorViewMut::$variant(v) => Ok(v),
                    other => Err(other),
                }
            }
            #[inline]
            fn view_ref<'v, 'a>(v: &'v TensorView<'a>) -> Option<&'v TypedView<'a, Self>> {
                match v {
                    TensorView::$variant(v) => Some(v),
                    _ => None,
                }
            }
            #[inline]
            fn view_mut_ref<'v, 'a>(v: &'v mut TensorViewMut<'a>) -> Option<&'v mut TypedViewMut<'a, Self>> {
                match v {
                    TensorViewMut::$variant(v) => Some(v),
                    _ => None,
                }
            }
            #[inline]
            fn into_value(self) -> ScalarValue {
                ScalarValue::$variant(self)
            }
        }
    };
}

impl_scalar!(f32, F32, f32, 1.0);
impl_scalar!(f64, F64, f64, 1.0);
impl_scalar!(i32, I32, i32, 1);
impl_scalar!(i64, I64, i64, 1);
impl_scalar!(bool, Bool, bool, true);
impl_scalar!(c32, C32, f32, Complex::new(1.0, 0.0));
impl_scalar!(c64, C64, f64, Complex::new(1.0, 0.0));

/// Runs a block once with a type alias bound to the Rust type of a runtime [`DType`]:
/// the one place where an erased dtype becomes a type parameter.
///
/// ```
/// use strata_tensor::{dispatch_dtype, DType, Scalar};
/// fn size_of_dtype(d: DType) -> usize {
///     dispatch_dtype!(d, T => std::mem::size_of::<T>())
/// }
/// assert_eq!(size_of_dtype(DType::C32), 8);
/// assert_eq!(size_of_dtype(DType::Bool), 1);
/// ```
#[macro_export]
macro_rules! dispatch_dtype {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::DType::F32 => {
                #[allow(unused)]
                type $T = f32;
                $body
            }
            $crate::DType::F64 => {
                #[allow(unused)]
                type $T = f64;
                $body
            }
            $crate::DType::I32 => {
                #[allow(unused)]
                type $T = i32;
                $body
            }
            $crate::DType::I64 => {
                #[allow(unused)]
                type $T = i64;
                $body
            }
            $crate::DType::Bool => {
                #[allow(unused)]
                type $T = bool;
                $body
            }
            $crate::DType::C32 => {
                #[allow(unused)]
                type $T = $crate::c32;
                $body
            }
            $crate::DType::C64 => {
                #[allow(unused)]
                type $T = $crate::c64;
                $body
            }
        }
    };
}
