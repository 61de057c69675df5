//! Comparison directions and the dtypes each is defined on.

use crate::dtype::DType;
use crate::error::{Error, Result};

/// The direction of an elementwise comparison, giving a Bool tensor. Ordered directions
/// are not defined on complex; floats compare as IEEE (every comparison with NaN is false
/// except `Ne`); bool orders `false < true`.
///
/// ```
/// use strata_tensor::{DType, config::CompareDir};
/// assert!(CompareDir::Eq.supports(DType::C64));
/// assert!(!CompareDir::Lt.supports(DType::C64));
/// assert!(CompareDir::Ge.validate(DType::F32, &[2], DType::F32, &[2]).is_ok());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompareDir {
    /// `a == b`.
    Eq,
    /// `a != b`.
    Ne,
    /// `a < b`.
    Lt,
    /// `a <= b`.
    Le,
    /// `a > b`.
    Gt,
    /// `a >= b`.
    Ge,
}

impl CompareDir {
    /// Every direction.
    pub const ALL: [CompareDir; 6] =
        [CompareDir::Eq, CompareDir::Ne, CompareDir::Lt, CompareDir::Le, CompareDir::Gt, CompareDir::Ge];

    /// The direction's name as jax.lax spells it.
    pub const fn name(self) -> &'static str {
        match self {
            CompareDir::Eq => "eq",
            CompareDir::Ne => "ne",
            CompareDir::Lt => "lt",
            CompareDir::Le => "le",
            CompareDir::Gt => "gt",
            CompareDir::Ge => "ge",
        }
    }

    /// True for `Lt`, `Le`, `Gt`, `Ge`.
    pub const fn is_ordered(self) -> bool {
        !matches!(self, CompareDir::Eq | CompareDir::Ne)
    }

    /// True when the direction is defined on `dtype` (ordered ones not on complex).
    pub const fn supports(self, dtype: DType) -> bool {
        !(self.is_ordered() && dtype.is_complex())
    }

    /// Checks both operands (one dtype, one shape) and the direction's support.
    #[inline]
    pub fn validate(self, lhs: DType, lhs_shape: &[usize], rhs: DType, rhs_shape: &[usize]) -> Result<()> {
        const OP: &str = "compare";
        if lhs != rhs {
            return Err(Error::dtype_mismatch(OP, format!("lhs has dtype {lhs}, rhs has dtype {rhs}")));
        }
        if lhs_shape != rhs_shape {
            return Err(Error::shape_mismatch(OP, format!("lhs has shape {lhs_shape:?}, rhs has shape {rhs_shape:?}")));
        }
        if !self.supports(lhs) {
            return Err(Error::unsupported(OP, format!("direction {} is not defined for dtype {lhs}", self.name())));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn complex_supports_only_equality() {
        for dir in CompareDir::ALL {
            assert_eq!(dir.supports(DType::C32), !dir.is_ordered());
            assert!(dir.supports(DType::Bool) && dir.supports(DType::I64));
        }
        let e = CompareDir::Le.validate(DType::C64, &[1], DType::C64, &[1]).unwrap_err();
        assert_eq!((e.kind(), e.op()), (ErrorKind::Unsupported, "compare"));
        assert!(e.message().contains("le"));
        let e = CompareDir::Eq.validate(DType::I32, &[1], DType::I64, &[1]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DTypeMismatch);
        let e = CompareDir::Eq.validate(DType::I32, &[1], DType::I32, &[2]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    }
}
