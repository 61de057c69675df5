//! The arithmetic contraction kernels need, written once for the four inexact dtypes.

use std::ops::{Add, Mul, Sub};

use strata_tensor::{DType, Error, Result, Scalar, c32, c64};

/// An element type contractions are defined for: `f32`, `f64`, [`c32`], [`c64`].
///
/// ```
/// use strata_kernels::contraction::ContractScalar;
/// use strata_tensor::c64;
/// assert_eq!(c64::new(1.0, 2.0).conj(), c64::new(1.0, -2.0));
/// assert_eq!(c64::new(3.0, 4.0).abs2(), 25.0);
/// assert_eq!(2.0f32.conj(), 2.0);
/// ```
pub trait ContractScalar: Scalar + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> {
    /// The complex conjugate (identity for real types).
    fn conj(self) -> Self;
    /// `|x|²`, as the real type.
    fn abs2(self) -> Self::Real;
    /// The real value `r` as this type.
    fn from_real(r: Self::Real) -> Self;
    /// `v` as this type, or `None` when a real type would lose an imaginary part.
    fn from_c64(v: c64) -> Option<Self>;
}

macro_rules! impl_real {
    ($t:ty) => {
        impl ContractScalar for $t {
            #[inline]
            fn conj(self) -> Self {
                self
            }
            #[inline]
            fn abs2(self) -> Self {
                self * self
            }
            #[inline]
            fn from_real(r: Self) -> Self {
                r
            }
            fn from_c64(v: c64) -> Option<Self> {
                (v.im == 0.0).then_some(v.re as $t)
            }
        }
    };
}

macro_rules! impl_complex {
    ($t:ty, $r:ty) => {
        impl ContractScalar for $t {
            #[inline]
            fn conj(self) -> Self {
                <$t>::new(self.re, -self.im)
            }
            #[inline]
            fn abs2(self) -> $r {
                self.re * self.re + self.im * self.im
            }
            #[inline]
            fn from_real(r: $r) -> Self {
                <$t>::new(r, 0.0)
            }
            fn from_c64(v: c64) -> Option<Self> {
                Some(<$t>::new(v.re as $r, v.im as $r))
            }
        }
    };
}

impl_real!(f32);
impl_real!(f64);
impl_complex!(c32, f32);
impl_complex!(c64, f64);

/// Errors unless `dtype` is one contractions support, naming `op` and suggesting a cast.
pub(crate) fn check_dtype(op: &'static str, dtype: DType) -> Result<()> {
    match dtype {
        DType::F32 | DType::F64 | DType::C32 | DType::C64 => Ok(()),
        other => Err(Error::unsupported(
            op,
            format!("{op} is defined for f32, f64, c32 and c64, not {other}; cast the operands to a float dtype first"),
        )),
    }
}

/// Runs `$body` with `$T` bound to the contraction type of `$dtype`; other dtypes must
/// have been refused by [`check_dtype`] (they reach the `Internal` arm only through a bug).
macro_rules! dispatch_contract {
    ($op:expr, $dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            strata_tensor::DType::F32 => {
                type $T = f32;
                $body
            }
            strata_tensor::DType::F64 => {
                type $T = f64;
                $body
            }
            strata_tensor::DType::C32 => {
                type $T = strata_tensor::c32;
                $body
            }
            strata_tensor::DType::C64 => {
                type $T = strata_tensor::c64;
                $body
            }
            other => Err(strata_tensor::Error::internal($op, format!("dtype {other} reached a contraction kernel"))),
        }
    };
}
pub(crate) use dispatch_contract;

/// Applies the conjugation flag.
#[inline(always)]
pub(crate) fn maybe_conj<T: ContractScalar>(x: T, conj: bool) -> T {
    if conj { x.conj() } else { x }
}
