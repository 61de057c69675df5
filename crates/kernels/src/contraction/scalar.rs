//! The arithmetic contraction kernels need, written once for the four inexact dtypes.

use std::ops::Sub;

use strata_provider::GemmScalar;
use strata_tensor::{DType, Error, Result, c32, c64};

/// An element type contractions are defined for: `f32`, `f64`, [`c32`], [`c64`]. The
/// provider's [`GemmScalar`] plus what our own loops need.
///
/// ```
/// use strata_kernels::contraction::ContractScalar;
/// use strata_provider::GemmScalar;
/// use strata_tensor::c64;
/// assert_eq!(c64::new(1.0, 2.0).conj(), c64::new(1.0, -2.0));
/// assert_eq!(c64::new(3.0, 4.0).abs2(), 25.0);
/// assert_eq!(2.0f32.abs2(), 4.0);
/// ```
pub trait ContractScalar: GemmScalar + Sub<Output = Self> + super::microkernel::MicroScalar {
    /// `|x|²`, as the real type.
    fn abs2(self) -> Self::Real;
}

macro_rules! impl_real {
    ($t:ty) => {
        impl ContractScalar for $t {
            #[inline]
            fn abs2(self) -> Self {
                self * self
            }
        }
    };
}

macro_rules! impl_complex {
    ($t:ty, $r:ty) => {
        impl ContractScalar for $t {
            #[inline]
            fn abs2(self) -> $r {
                self.re * self.re + self.im * self.im
            }
        }
    };
}

impl_real!(f32);
impl_real!(f64);
impl_complex!(c32, f32);
impl_complex!(c64, f64);

/// `v` as `T`, or `None` when a real `T` would lose an imaginary part.
pub(crate) fn exact_from_c64<T: ContractScalar>(v: c64) -> Option<T> {
    (T::DTYPE.is_complex() || v.im == 0.0).then(|| T::from_c64(v))
}

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
