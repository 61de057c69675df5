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

impl ScalarValue {
    /// The same number in `dtype`, as a literal in numpy or jax code is taken: floats
    /// round to the nearest `f32` when narrowed; a whole number in range converts to an
    /// integer dtype; a complex value converts to a real dtype only with a zero imaginary
    /// part; `Bool` converts only to `Bool`. Anything else is an error naming `op`.
    ///
    /// ```
    /// use strata_tensor::{DType, ScalarValue};
    /// assert_eq!(ScalarValue::from(0.5).to_dtype(DType::F32, "pad")?, ScalarValue::F32(0.5));
    /// assert_eq!(ScalarValue::from(3.0).to_dtype(DType::I32, "pad")?, ScalarValue::I32(3));
    /// assert!(ScalarValue::from(3.5).to_dtype(DType::I32, "pad").is_err());
    /// # Ok::<(), strata_tensor::Error>(())
    /// ```
    pub fn to_dtype(&self, dtype: DType, op: &'static str) -> Result<ScalarValue> {
        if self.dtype() == dtype {
            return Ok(*self);
        }
        let refuse =
            || Error::dtype_mismatch(op, format!("the value {self} ({}) cannot be written as {dtype}", self.dtype()));
        if let ScalarValue::Bool(_) = self {
            return Err(refuse());
        }
        let c = self.to_c64(op)?;
        // A whole real number below `bound` in magnitude.
        let whole = |bound: f64| c.im == 0.0 && c.re.fract() == 0.0 && c.re.abs() < bound;
        const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
        Ok(match dtype {
            DType::F32 if c.im == 0.0 => ScalarValue::F32(c.re as f32),
            DType::F64 if c.im == 0.0 => ScalarValue::F64(c.re),
            DType::C32 => ScalarValue::C32(c32::new(c.re as f32, c.im as f32)),
            DType::C64 => ScalarValue::C64(c),
            DType::I32 if whole(2_147_483_648.0) => ScalarValue::I32(c.re as i32),
            // An i32 keeps its exact value; a float must be whole and below 2^63.
            DType::I64 => match *self {
                ScalarValue::I32(v) => ScalarValue::I64(i64::from(v)),
                _ if whole(TWO_POW_63) => ScalarValue::I64(c.re as i64),
                _ => return Err(refuse()),
            },
            _ => return Err(refuse()),
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
