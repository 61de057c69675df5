//! `ScalarValue`: one element of any dtype, for the arguments that are a number rather
//! than a tensor (a pad value, `alpha`/`beta` of an accumulating contraction).

use std::fmt;

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::scalar::{Scalar, c32, c64};
use crate::tensor::Tensor;

/// A single value of one of the seven dtypes.
///
/// Every [`Scalar`] converts into it, so an API taking `impl Into<ScalarValue>` accepts
/// `0.0`, `1.5f32`, `7i64`, `true` or `c64::new(0.0, 1.0)` as written.
///
/// ```
/// use strata_tensor::{DType, ScalarValue, c64};
/// let v: ScalarValue = 2.5f32.into();
/// assert_eq!(v.dtype(), DType::F32);
/// assert_eq!(v.to_c64("example")?, c64::new(2.5, 0.0));
/// assert_eq!(ScalarValue::from(true).to_tensor().dtype(), DType::Bool);
/// # Ok::<(), strata_tensor::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScalarValue {
    /// An `f32`.
    F32(f32),
    /// An `f64`.
    F64(f64),
    /// An `i32`.
    I32(i32),
    /// An `i64`.
    I64(i64),
    /// A `bool`.
    Bool(bool),
    /// A [`c32`].
    C32(c32),
    /// A [`c64`].
    C64(c64),
}

impl ScalarValue {
    /// The dtype of the value.
    pub fn dtype(&self) -> DType {
        match self {
            ScalarValue::F32(_) => DType::F32,
            ScalarValue::F64(_) => DType::F64,
            ScalarValue::I32(_) => DType::I32,
            ScalarValue::I64(_) => DType::I64,
            ScalarValue::Bool(_) => DType::Bool,
            ScalarValue::C32(_) => DType::C32,
            ScalarValue::C64(_) => DType::C64,
        }
    }

    /// The value as a rank-0 tensor of its own dtype.
    pub fn to_tensor(&self) -> Tensor {
        match *self {
            ScalarValue::F32(v) => Tensor::scalar(v),
            ScalarValue::F64(v) => Tensor::scalar(v),
            ScalarValue::I32(v) => Tensor::scalar(v),
            ScalarValue::I64(v) => Tensor::scalar(v),
            ScalarValue::Bool(v) => Tensor::scalar(v),
            ScalarValue::C32(v) => Tensor::scalar(v),
            ScalarValue::C64(v) => Tensor::scalar(v),
        }
    }

    /// The value as a complex `f64`, the form the contraction kernels take coefficients
    /// in. Integers convert exactly up to 2^53; `Bool` is refused (a coefficient is a
    /// number), naming `op`.
    pub fn to_c64(&self, op: &'static str) -> Result<c64> {
        Ok(match *self {
            ScalarValue::F32(v) => c64::new(f64::from(v), 0.0),
            ScalarValue::F64(v) => c64::new(v, 0.0),
            ScalarValue::I32(v) => c64::new(f64::from(v), 0.0),
            // Exact for |v| <= 2^53; the kernels check representability in the dtype.
            ScalarValue::I64(v) => c64::new(v as f64, 0.0),
            ScalarValue::C32(v) => c64::new(f64::from(v.re), f64::from(v.im)),
            ScalarValue::C64(v) => v,
            ScalarValue::Bool(_) => {
                return Err(Error::dtype_mismatch(op, "a coefficient must be a number, not a bool"));
            }
        })
    }
}

impl<T: Scalar> From<T> for ScalarValue {
    #[inline]
    fn from(value: T) -> Self {
        value.into_value()
    }
}

impl fmt::Display for ScalarValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScalarValue::F32(v) => write!(f, "{v}"),
            ScalarValue::F64(v) => write!(f, "{v}"),
            ScalarValue::I32(v) => write!(f, "{v}"),
            ScalarValue::I64(v) => write!(f, "{v}"),
            ScalarValue::Bool(v) => write!(f, "{v}"),
            ScalarValue::C32(v) => write!(f, "{v}"),
            ScalarValue::C64(v) => write!(f, "{v}"),
        }
    }
}
