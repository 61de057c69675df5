//! Elementwise and reduction op kinds, the dtypes each is defined on, and their
//! validation. Kernels take these enums, so "which dtype supports what" is answered here
//! once, before any output is written.

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::check_unique_axes;

/// A binary elementwise op with `jax.lax` semantics (see each variant).
///
/// ```
/// use strata_tensor::{DType, config::BinaryOp};
/// assert!(BinaryOp::Rem.supports(DType::I32));
/// assert!(!BinaryOp::Rem.supports(DType::C64));
/// assert!(BinaryOp::Max.supports(DType::Bool));
/// assert!(BinaryOp::Add.validate(DType::F32, &[2, 3], DType::F32, &[3, 2]).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `a + b`; integers wrap.
    Add,
    /// `a - b`; integers wrap.
    Sub,
    /// `a * b`; integers wrap.
    Mul,
    /// `a / b`; integers truncate toward zero, `x / 0 = -1`, `MIN / -1 = MIN`.
    Div,
    /// Remainder with the sign of the dividend (C `fmod` for floats); integers:
    /// `x % 0 = x`, `MIN % -1 = 0`. Not defined on complex.
    Rem,
    /// `a ** b` on floats and complex (`lax.pow` rejects integer bases: for integers the
    /// op is `Unsupported`).
    Pow,
    /// Maximum: NaN from either side propagates, `-0 < +0`; complex compares by real
    /// part, then imaginary part; bool is logical or.
    Max,
    /// Minimum, the mirror of [`BinaryOp::Max`]; bool is logical and.
    Min,
}

impl BinaryOp {
    /// Every binary op.
    pub const ALL: [BinaryOp; 8] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Rem,
        BinaryOp::Pow,
        BinaryOp::Max,
        BinaryOp::Min,
    ];

    /// The op's name as jax.lax spells it.
    pub const fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::Rem => "rem",
            BinaryOp::Pow => "pow",
            BinaryOp::Max => "max",
            BinaryOp::Min => "min",
        }
    }

    /// True when the op is defined on `dtype` (jax.lax's dtype rules): arithmetic on every
    /// numeric dtype (not bool), `pow` on floats and complex, `rem` on reals only,
    /// `max`/`min` on every dtype.
    pub const fn supports(self, dtype: DType) -> bool {
        match self {
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div => !dtype.is_bool(),
            BinaryOp::Pow => dtype.is_inexact(),
            BinaryOp::Rem => dtype.is_float() || dtype.is_integer(),
            BinaryOp::Max | BinaryOp::Min => true,
        }
    }

    /// Checks both operands: one dtype, exactly one shape (no implicit broadcasting),
    /// and the op defined on the dtype.
    #[inline]
    pub fn validate(self, lhs: DType, lhs_shape: &[usize], rhs: DType, rhs_shape: &[usize]) -> Result<()> {
        if lhs != rhs {
            return Err(Error::dtype_mismatch(self.name(), format!("lhs has dtype {lhs}, rhs has dtype {rhs}")));
        }
        if lhs_shape != rhs_shape {
            return Err(Error::shape_mismatch(
                self.name(),
                format!("lhs has shape {lhs_shape:?}, rhs has shape {rhs_shape:?}; use broadcast_in_dim first"),
            ));
        }
        if !self.supports(lhs) {
            return Err(Error::unsupported(self.name(), format!("not defined for dtype {lhs}")));
        }
        Ok(())
    }
}

/// A unary elementwise op. The analytic ones (`exp` .. `log1p`) and `conj` are defined on
/// floats and complex only (as in jax.lax); `neg`, `abs` and `sign` on every numeric dtype
/// (not bool).
///
/// ```
/// use strata_tensor::{DType, config::UnaryOp};
/// assert_eq!(UnaryOp::Abs.result_dtype(DType::C64), DType::F64);
/// assert_eq!(UnaryOp::Neg.validate(DType::I32).unwrap(), DType::I32);
/// // lax.conj of a real float is complex; of an integer, a type error.
/// assert_eq!(UnaryOp::Conj.validate(DType::F32).unwrap(), DType::C32);
/// assert!(UnaryOp::Conj.validate(DType::I32).is_err());
/// assert!(UnaryOp::Exp.validate(DType::I64).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x`; integers wrap (`-MIN = MIN`).
    Neg,
    /// Complex conjugate. A real float gives its complex counterpart with imaginary part
    /// `+0` (`lax.conj` of float32 is complex64); integers and bool are not supported.
    Conj,
    /// `|x|`; complex gives the real modulus; integers wrap (`|MIN| = MIN`).
    Abs,
    /// `-1`, `0` or `1` (NaN stays NaN, `±0` stays `±0`); complex gives `z / |z|`, 0 for 0.
    Sign,
    /// `e^x`.
    Exp,
    /// Natural logarithm (principal branch for complex).
    Log,
    /// Sine.
    Sin,
    /// Cosine.
    Cos,
    /// Hyperbolic tangent.
    Tanh,
    /// Square root (principal branch for complex).
    Sqrt,
    /// `1 / sqrt(x)`.
    Rsqrt,
    /// `e^x - 1`, accurate near 0.
    Expm1,
    /// `ln(1 + x)`, accurate near 0.
    Log1p,
}

impl UnaryOp {
    /// Every unary op.
    pub const ALL: [UnaryOp; 13] = [
        UnaryOp::Neg,
        UnaryOp::Conj,
        UnaryOp::Abs,
        UnaryOp::Sign,
        UnaryOp::Exp,
        UnaryOp::Log,
        UnaryOp::Sin,
        UnaryOp::Cos,
        UnaryOp::Tanh,
        UnaryOp::Sqrt,
        UnaryOp::Rsqrt,
        UnaryOp::Expm1,
        UnaryOp::Log1p,
    ];

    /// The op's name as jax.lax spells it.
    pub const fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "neg",
            UnaryOp::Conj => "conj",
            UnaryOp::Abs => "abs",
            UnaryOp::Sign => "sign",
            UnaryOp::Exp => "exp",
            UnaryOp::Log => "log",
            UnaryOp::Sin => "sin",
            UnaryOp::Cos => "cos",
            UnaryOp::Tanh => "tanh",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Rsqrt => "rsqrt",
            UnaryOp::Expm1 => "expm1",
            UnaryOp::Log1p => "log1p",
        }
    }

    /// True for the transcendental ops defined only on floats and complex.
    pub const fn is_analytic(self) -> bool {
        !matches!(self, UnaryOp::Neg | UnaryOp::Conj | UnaryOp::Abs | UnaryOp::Sign)
    }

    /// True when the op is defined on `dtype`.
    pub const fn supports(self, dtype: DType) -> bool {
        if self.is_analytic() || matches!(self, UnaryOp::Conj) { dtype.is_inexact() } else { !dtype.is_bool() }
    }

    /// The dtype of the result: the real counterpart for `abs` of complex, the complex
    /// counterpart for `conj` of a real float, else `dtype`.
    pub const fn result_dtype(self, dtype: DType) -> DType {
        match self {
            UnaryOp::Abs => dtype.real_counterpart(),
            UnaryOp::Conj => dtype.complex_counterpart(),
            _ => dtype,
        }
    }

    /// Checks that the op is defined on `dtype` and gives the result dtype.
    #[inline]
    pub fn validate(self, dtype: DType) -> Result<DType> {
        if self.supports(dtype) {
            Ok(self.result_dtype(dtype))
        } else {
            Err(Error::unsupported(self.name(), format!("not defined for dtype {dtype}")))
        }
    }
}

/// A reduction over a set of axes. Over no elements each gives its identity: sum 0,
/// prod 1, max -inf (integer MIN, `false` for bool), min +inf (integer MAX, `true`).
///
/// ```
/// use strata_tensor::{DType, config::ReduceOp};
/// assert_eq!(ReduceOp::SumSquares.result_dtype(DType::C32), DType::F32);
/// assert_eq!(ReduceOp::Sum.validate(DType::F32, &[2, 3, 4], &[2, 0]).unwrap(), vec![3]);
/// assert!(ReduceOp::Sum.validate(DType::Bool, &[2], &[0]).is_err());
/// assert!(ReduceOp::Max.validate(DType::F32, &[2], &[0, 0]).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// Sum (wrapping for integers).
    Sum,
    /// Sum of `|x|²`; real result for complex input.
    SumSquares,
    /// Product (wrapping for integers).
    Prod,
    /// Maximum, with [`BinaryOp::Max`]'s NaN and complex rules.
    Max,
    /// Minimum, with [`BinaryOp::Min`]'s NaN and complex rules.
    Min,
}

impl ReduceOp {
    /// Every reduction.
    pub const ALL: [ReduceOp; 5] = [ReduceOp::Sum, ReduceOp::SumSquares, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min];

    /// The op's name.
    pub const fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "reduce_sum",
            ReduceOp::SumSquares => "reduce_sum_squares",
            ReduceOp::Prod => "reduce_prod",
            ReduceOp::Max => "reduce_max",
            ReduceOp::Min => "reduce_min",
        }
    }

    /// True when the reduction is defined on `dtype`: sums and products on numeric
    /// dtypes (not bool), max and min on every dtype.
    pub const fn supports(self, dtype: DType) -> bool {
        match self {
            ReduceOp::Sum | ReduceOp::SumSquares | ReduceOp::Prod => !dtype.is_bool(),
            ReduceOp::Max | ReduceOp::Min => true,
        }
    }

    /// The result dtype: real for the sum of squares of complex, else `dtype`.
    pub const fn result_dtype(self, dtype: DType) -> DType {
        match self {
            ReduceOp::SumSquares => dtype.real_counterpart(),
            _ => dtype,
        }
    }

    /// Checks the dtype and the axes (in range, distinct) and gives the result shape:
    /// the input shape without the reduced axes.
    pub fn validate(self, dtype: DType, shape: &[usize], axes: &[usize]) -> Result<Vec<usize>> {
        if !self.supports(dtype) {
            return Err(Error::unsupported(self.name(), format!("not defined for dtype {dtype}")));
        }
        check_unique_axes(self.name(), "reduction axis", axes, shape.len())?;
        Ok(shape.iter().enumerate().filter(|(k, _)| !axes.contains(k)).map(|(_, &d)| d).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn support_table_follows_lax() {
        for d in DType::ALL {
            assert_eq!(BinaryOp::Add.supports(d), d != DType::Bool);
            assert_eq!(BinaryOp::Rem.supports(d), !d.is_complex() && !d.is_bool());
            assert_eq!(BinaryOp::Pow.supports(d), d.is_inexact());
            assert!(BinaryOp::Min.supports(d));
            assert_eq!(UnaryOp::Sin.supports(d), d.is_inexact());
            assert_eq!(UnaryOp::Abs.supports(d), !d.is_bool());
            assert_eq!(UnaryOp::Conj.supports(d), d.is_inexact());
            assert_eq!(ReduceOp::Prod.supports(d), !d.is_bool());
            assert!(ReduceOp::Max.supports(d));
        }
    }

    #[test]
    fn bad_operands_get_typed_errors_naming_the_op() {
        let e = BinaryOp::Mul.validate(DType::F32, &[2], DType::F64, &[2]).unwrap_err();
        assert_eq!((e.kind(), e.op()), (ErrorKind::DTypeMismatch, "mul"));
        let e = BinaryOp::Mul.validate(DType::F32, &[2], DType::F32, &[]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
        let e = BinaryOp::Rem.validate(DType::C32, &[2], DType::C32, &[2]).unwrap_err();
        assert_eq!((e.kind(), e.op()), (ErrorKind::Unsupported, "rem"));
        // jax.lax.pow: "pow does not accept dtype int32".
        let e = BinaryOp::Pow.validate(DType::I32, &[2], DType::I32, &[2]).unwrap_err();
        assert_eq!((e.kind(), e.op()), (ErrorKind::Unsupported, "pow"));
        let e = UnaryOp::Log.validate(DType::I32).unwrap_err();
        assert_eq!((e.kind(), e.op()), (ErrorKind::Unsupported, "log"));
        // lax.conj rejects integer and bool operands (a type error in jax).
        for d in [DType::I32, DType::I64, DType::Bool] {
            let e = UnaryOp::Conj.validate(d).unwrap_err();
            assert_eq!((e.kind(), e.op()), (ErrorKind::Unsupported, "conj"));
        }
        let e = ReduceOp::Min.validate(DType::F32, &[2, 3], &[2]).unwrap_err();
        assert_eq!((e.kind(), e.op()), (ErrorKind::InvalidArgument, "reduce_min"));
    }

    #[test]
    fn conj_follows_lax_dtypes() {
        // lax.conj(float32) is complex64 (imaginary part +0); complex stays complex.
        assert_eq!(UnaryOp::Conj.validate(DType::F32).unwrap(), DType::C32);
        assert_eq!(UnaryOp::Conj.validate(DType::F64).unwrap(), DType::C64);
        assert_eq!(UnaryOp::Conj.validate(DType::C32).unwrap(), DType::C32);
        assert_eq!(UnaryOp::Conj.validate(DType::C64).unwrap(), DType::C64);
    }

    #[test]
    fn reduction_shapes_drop_the_reduced_axes() {
        assert_eq!(ReduceOp::Sum.validate(DType::F64, &[2, 3, 4], &[1]).unwrap(), vec![2, 4]);
        assert_eq!(ReduceOp::Sum.validate(DType::F64, &[2, 3], &[]).unwrap(), vec![2, 3]);
        assert_eq!(ReduceOp::Sum.validate(DType::F64, &[2, 3], &[0, 1]).unwrap(), Vec::<usize>::new());
    }
}
