//! OpenBLAS called directly through CBLAS (feature `openblas`: the system library via
//! strata-provider's `blas-openblas` feature, whose CBLAS entry points are used here as
//! raw function pointers — no strata code runs between the peer and the library).
//! Without the feature, [`AVAILABLE`] is false and the suite leaves the column empty.

/// Whether the runner was built with the OpenBLAS peer.
pub const AVAILABLE: bool = cfg!(feature = "openblas");

/// An element type OpenBLAS multiplies (f32, f64, c64).
pub trait BlasGemm: Copy {
    /// Row-major `c = a · b` for `n × n` matrices. Without the feature this does nothing.
    /// Errors when a buffer is shorter than `n × n` or `n` does not fit a C int.
    fn blas_gemm(n: usize, a: &[Self], b: &[Self], c: &mut [Self]) -> Result<(), String>;
}

#[cfg(feature = "openblas")]
mod imp {
    use std::ffi::c_int;

    use num_complex::Complex;
    use strata_provider::{CblasComplexGemm, CblasGemmFns, CblasRealGemm, OpenBlasProvider};

    use super::BlasGemm;

    const ROW_MAJOR: c_int = 101;
    const NO_TRANS: c_int = 111;

    fn entry_points() -> CblasGemmFns {
        OpenBlasProvider::cblas_entry_points()
    }

    fn dims(n: usize, a: usize, b: usize, c: usize) -> Result<c_int, String> {
        if a < n * n || b < n * n || c < n * n {
            return Err(format!("openblas gemm: a buffer is shorter than {n} × {n}"));
        }
        c_int::try_from(n).map_err(|_| format!("openblas gemm: {n} does not fit a C int"))
    }

    fn real<T: Copy>(
        f: Option<CblasRealGemm<T>>,
        n: usize,
        a: &[T],
        b: &[T],
        c: &mut [T],
        one: T,
        zero: T,
    ) -> Result<(), String> {
        let d = dims(n, a.len(), b.len(), c.len())?;
        let f = f.ok_or("openblas gemm: no CBLAS entry point for this dtype")?;
        // SAFETY: the three buffers hold at least n × n elements (checked in `dims`),
        // row-major with leading dimension n; c does not alias a or b (&mut).
        unsafe {
            f(ROW_MAJOR, NO_TRANS, NO_TRANS, d, d, d, one, a.as_ptr(), d, b.as_ptr(), d, zero, c.as_mut_ptr(), d)
        };
        Ok(())
    }

    impl BlasGemm for f32 {
        fn blas_gemm(n: usize, a: &[f32], b: &[f32], c: &mut [f32]) -> Result<(), String> {
            real(entry_points().sgemm, n, a, b, c, 1.0, 0.0)
        }
    }

    impl BlasGemm for f64 {
        fn blas_gemm(n: usize, a: &[f64], b: &[f64], c: &mut [f64]) -> Result<(), String> {
            real(entry_points().dgemm, n, a, b, c, 1.0, 0.0)
        }
    }

    impl BlasGemm for Complex<f64> {
        fn blas_gemm(n: usize, a: &[Self], b: &[Self], c: &mut [Self]) -> Result<(), String> {
            let d = dims(n, a.len(), b.len(), c.len())?;
            let f: CblasComplexGemm<Complex<f64>> = entry_points().zgemm.ok_or("openblas gemm: no cblas_zgemm")?;
            let (one, zero) = (Complex::new(1.0f64, 0.0), Complex::new(0.0f64, 0.0));
            // SAFETY: as for the real types; alpha and beta point at live values.
            unsafe {
                f(ROW_MAJOR, NO_TRANS, NO_TRANS, d, d, d, &one, a.as_ptr(), d, b.as_ptr(), d, &zero, c.as_mut_ptr(), d)
            };
            Ok(())
        }
    }
}

#[cfg(not(feature = "openblas"))]
mod imp {
    use super::BlasGemm;

    impl<T: Copy> BlasGemm for T {
        fn blas_gemm(_: usize, _: &[T], _: &[T], _: &mut [T]) -> Result<(), String> {
            Ok(())
        }
    }
}

/// Sets OpenBLAS's process-wide thread team (no-op without the feature).
pub fn set_threads(threads: usize) {
    #[cfg(feature = "openblas")]
    strata_provider::OpenBlasProvider::set_global_threads(threads);
    #[cfg(not(feature = "openblas"))]
    let _ = threads;
}
