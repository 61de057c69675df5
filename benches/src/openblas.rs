//! OpenBLAS called directly through CBLAS (feature `openblas`: the system library via
//! `openblas-src`). Without the feature, [`AVAILABLE`] is false and the suite leaves the
//! column empty with a note.

/// Whether the runner was built with the OpenBLAS peer.
pub const AVAILABLE: bool = cfg!(feature = "openblas");

#[cfg(feature = "openblas")]
mod ffi {
    // Links libopenblas (system) into the binary.
    extern crate blas_src;

    use std::ffi::{c_int, c_void};

    pub const ROW_MAJOR: c_int = 101;
    pub const NO_TRANS: c_int = 111;

    unsafe extern "C" {
        pub fn openblas_set_num_threads(n: c_int);
        pub fn cblas_sgemm(
            order: c_int,
            ta: c_int,
            tb: c_int,
            m: c_int,
            n: c_int,
            k: c_int,
            alpha: f32,
            a: *const f32,
            lda: c_int,
            b: *const f32,
            ldb: c_int,
            beta: f32,
            c: *mut f32,
            ldc: c_int,
        );
        pub fn cblas_dgemm(
            order: c_int,
            ta: c_int,
            tb: c_int,
            m: c_int,
            n: c_int,
            k: c_int,
            alpha: f64,
            a: *const f64,
            lda: c_int,
            b: *const f64,
            ldb: c_int,
            beta: f64,
            c: *mut f64,
            ldc: c_int,
        );
        pub fn cblas_zgemm(
            order: c_int,
            ta: c_int,
            tb: c_int,
            m: c_int,
            n: c_int,
            k: c_int,
            alpha: *const c_void,
            a: *const c_void,
            lda: c_int,
            b: *const c_void,
            ldb: c_int,
            beta: *const c_void,
            c: *mut c_void,
            ldc: c_int,
        );
    }
}

/// An element type OpenBLAS multiplies (f32, f64, c64).
pub trait BlasGemm: Copy {
    /// Row-major `c = a · b` for `n × n` matrices. Without the feature this does nothing.
    /// Errors when a buffer is shorter than `n × n` or `n` does not fit a C int.
    fn blas_gemm(n: usize, a: &[Self], b: &[Self], c: &mut [Self]) -> Result<(), String>;
}

#[cfg(feature = "openblas")]
fn dims(n: usize, a: usize, b: usize, c: usize) -> Result<std::ffi::c_int, String> {
    if a < n * n || b < n * n || c < n * n {
        return Err(format!("openblas gemm: a buffer is shorter than {n} × {n}"));
    }
    std::ffi::c_int::try_from(n).map_err(|_| format!("openblas gemm: {n} does not fit a C int"))
}

#[cfg(feature = "openblas")]
mod imp {
    use super::ffi::*;
    use super::{BlasGemm, dims};
    use num_complex::Complex;

    impl BlasGemm for f32 {
        fn blas_gemm(n: usize, a: &[f32], b: &[f32], c: &mut [f32]) -> Result<(), String> {
            let d = dims(n, a.len(), b.len(), c.len())?;
            // SAFETY: the three buffers hold at least n × n elements (checked in `dims`),
            // row-major with leading dimension n; c does not alias a or b (&mut).
            unsafe {
                cblas_sgemm(
                    ROW_MAJOR,
                    NO_TRANS,
                    NO_TRANS,
                    d,
                    d,
                    d,
                    1.0,
                    a.as_ptr(),
                    d,
                    b.as_ptr(),
                    d,
                    0.0,
                    c.as_mut_ptr(),
                    d,
                )
            }
            Ok(())
        }
    }
    impl BlasGemm for f64 {
        fn blas_gemm(n: usize, a: &[f64], b: &[f64], c: &mut [f64]) -> Result<(), String> {
            let d = dims(n, a.len(), b.len(), c.len())?;
            // SAFETY: as for f32.
            unsafe {
                cblas_dgemm(
                    ROW_MAJOR,
                    NO_TRANS,
                    NO_TRANS,
                    d,
                    d,
                    d,
                    1.0,
                    a.as_ptr(),
                    d,
                    b.as_ptr(),
                    d,
                    0.0,
                    c.as_mut_ptr(),
                    d,
                )
            }
            Ok(())
        }
    }
    impl BlasGemm for Complex<f64> {
        fn blas_gemm(n: usize, a: &[Self], b: &[Self], c: &mut [Self]) -> Result<(), String> {
            let d = dims(n, a.len(), b.len(), c.len())?;
            let (one, zero) = (Complex::new(1.0f64, 0.0), Complex::new(0.0f64, 0.0));
            // SAFETY: as for f32; Complex<f64> is repr(C) {re, im}, CBLAS's layout of a
            // double complex, and alpha/beta point at live values.
            unsafe {
                cblas_zgemm(
                    ROW_MAJOR,
                    NO_TRANS,
                    NO_TRANS,
                    d,
                    d,
                    d,
                    (&raw const one).cast(),
                    a.as_ptr().cast(),
                    d,
                    b.as_ptr().cast(),
                    d,
                    (&raw const zero).cast(),
                    c.as_mut_ptr().cast(),
                    d,
                )
            }
            Ok(())
        }
    }
}

#[cfg(not(feature = "openblas"))]
mod imp {
    use super::BlasGemm;
    use num_complex::Complex;

    impl BlasGemm for f32 {
        fn blas_gemm(_: usize, _: &[f32], _: &[f32], _: &mut [f32]) -> Result<(), String> {
            Ok(())
        }
    }
    impl BlasGemm for f64 {
        fn blas_gemm(_: usize, _: &[f64], _: &[f64], _: &mut [f64]) -> Result<(), String> {
            Ok(())
        }
    }
    impl BlasGemm for Complex<f64> {
        fn blas_gemm(_: usize, _: &[Self], _: &[Self], _: &mut [Self]) -> Result<(), String> {
            Ok(())
        }
    }
}

/// Sets OpenBLAS's process-wide thread team (no-op without the feature).
pub fn set_threads(threads: usize) {
    #[cfg(feature = "openblas")]
    {
        let n = std::ffi::c_int::try_from(threads.max(1)).unwrap_or(std::ffi::c_int::MAX);
        // SAFETY: a plain setter of the library's thread count.
        unsafe { ffi::openblas_set_num_threads(n) }
    }
    #[cfg(not(feature = "openblas"))]
    let _ = threads;
}
