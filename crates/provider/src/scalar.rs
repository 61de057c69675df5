//! The four GEMM dtypes as one trait, so callers write generic code once.

use std::ops::{Add, Mul};

use strata_tensor::{Scalar, c32, c64};

use crate::error::GemmError;
use crate::job::BatchedGemm;
use crate::parallelism::ProviderParallelism;
use crate::provider::GemmProvider;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for strata_tensor::c32 {}
    impl Sealed for strata_tensor::c64 {}
}

/// `f32`, `f64`, [`c32`] and [`c64`]: the element types GEMM providers compute with.
///
/// [`GemmScalar::gemm`] is the single place where a typed job meets the per-dtype
/// methods of the object-safe [`GemmProvider`].
///
/// ```
/// use strata_provider::{BatchedGemm, GemmMatrix, GemmMatrixMut, GemmScalar, NaiveGemmProvider, SequentialParallelism};
/// fn square<T: GemmScalar>(x: &[T], out: &mut [T]) {
///     let mut job = BatchedGemm {
///         batch: 1, m: 2, n: 2, k: 2, alpha: T::one(),
///         a: GemmMatrix::row_major(x, 2, 2), conj_a: false,
///         b: GemmMatrix::row_major(x, 2, 2), conj_b: false,
///         beta: T::zero(), c: GemmMatrixMut::row_major(out, 2, 2),
///     };
///     T::gemm(&NaiveGemmProvider::new(), &mut job, &SequentialParallelism).unwrap();
/// }
/// let mut out = [0.0f32; 4];
/// square(&[1.0, 1.0, 0.0, 1.0], &mut out);
/// assert_eq!(out, [1.0, 2.0, 0.0, 1.0]);
/// ```
pub trait GemmScalar: Scalar + Add<Output = Self> + Mul<Output = Self> + sealed::Sealed {
    /// The complex conjugate (identity for real types).
    fn conj(self) -> Self;
    /// The value widened to `c64` (imaginary part zero for real types).
    fn to_c64(self) -> c64;
    /// The value narrowed from `c64` (imaginary part dropped for real types).
    fn from_c64(v: c64) -> Self;
    /// Runs `job` through the provider's method for this dtype.
    fn gemm(
        provider: &dyn GemmProvider,
        job: &mut BatchedGemm<'_, Self>,
        par: &dyn ProviderParallelism,
    ) -> Result<(), GemmError>;
}

impl GemmScalar for f32 {
    #[inline]
    fn conj(self) -> Self {
        self
    }
    #[inline]
    fn to_c64(self) -> c64 {
        c64::new(self as f64, 0.0)
    }
    #[inline]
    fn from_c64(v: c64) -> Self {
        v.re as f32
    }
    fn gemm(
        provider: &dyn GemmProvider,
        job: &mut BatchedGemm<'_, Self>,
        par: &dyn ProviderParallelism,
    ) -> Result<(), GemmError> {
        provider.gemm_f32(job, par)
    }
}

impl GemmScalar for f64 {
    #[inline]
    fn conj(self) -> Self {
        self
    }
    #[inline]
    fn to_c64(self) -> c64 {
        c64::new(self, 0.0)
    }
    #[inline]
    fn from_c64(v: c64) -> Self {
        v.re
    }
    fn gemm(
        provider: &dyn GemmProvider,
        job: &mut BatchedGemm<'_, Self>,
        par: &dyn ProviderParallelism,
    ) -> Result<(), GemmError> {
        provider.gemm_f64(job, par)
    }
}

impl GemmScalar for c32 {
    #[inline]
    fn conj(self) -> Self {
        Self::new(self.re, -self.im)
    }
    #[inline]
    fn to_c64(self) -> c64 {
        c64::new(self.re as f64, self.im as f64)
    }
    #[inline]
    fn from_c64(v: c64) -> Self {
        c32::new(v.re as f32, v.im as f32)
    }
    fn gemm(
        provider: &dyn GemmProvider,
        job: &mut BatchedGemm<'_, Self>,
        par: &dyn ProviderParallelism,
    ) -> Result<(), GemmError> {
        provider.gemm_c32(job, par)
    }
}

impl GemmScalar for c64 {
    #[inline]
    fn conj(self) -> Self {
        Self::new(self.re, -self.im)
    }
    #[inline]
    fn to_c64(self) -> c64 {
        self
    }
    #[inline]
    fn from_c64(v: c64) -> Self {
        v
    }
    fn gemm(
        provider: &dyn GemmProvider,
        job: &mut BatchedGemm<'_, Self>,
        par: &dyn ProviderParallelism,
    ) -> Result<(), GemmError> {
        provider.gemm_c64(job, par)
    }
}
