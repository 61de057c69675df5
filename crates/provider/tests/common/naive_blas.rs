//! Naive column-major BLAS entry points with the CBLAS and Fortran ABIs, counting their
//! calls: the independent double behind injected function-pointer providers.

use std::ffi::{c_char, c_int};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use strata_provider::{BlasGemmProvider, BlasThreading, CblasGemmFns, FortranGemmFns, GemmScalar};
use strata_tensor::{c32, c64};

pub static CBLAS_CALLS: AtomicUsize = AtomicUsize::new(0);
pub static FORTRAN_CALLS: AtomicUsize = AtomicUsize::new(0);
/// Set when a call used a layout or transpose code other than the column-major ones.
pub static BAD_ARGUMENT: AtomicBool = AtomicBool::new(false);

/// `op(X)(i, p)` for a column-major X with leading dimension `ld`.
unsafe fn at<T: GemmScalar>(x: *const T, trans: u8, ld: usize, i: usize, p: usize) -> T {
    // SAFETY: the caller passes indices inside the matrix BLAS describes.
    unsafe {
        match trans {
            b'N' => *x.add(i + p * ld),
            b'T' => *x.add(p + i * ld),
            _ => (*x.add(p + i * ld)).conj(),
        }
    }
}

#[allow(clippy::too_many_arguments)]
unsafe fn col_major<T: GemmScalar>(
    ta: u8,
    tb: u8,
    m: c_int,
    n: c_int,
    k: c_int,
    alpha: T,
    a: *const T,
    lda: c_int,
    b: *const T,
    ldb: c_int,
    beta: T,
    c: *mut T,
    ldc: c_int,
) {
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let (lda, ldb, ldc) = (lda as usize, ldb as usize, ldc as usize);
    for j in 0..n {
        for i in 0..m {
            let mut acc = c64::new(0.0, 0.0);
            for p in 0..k {
                // SAFETY: indices inside the described matrices.
                let (x, y) = unsafe { (at(a, ta, lda, i, p), at(b, tb, ldb, p, j)) };
                acc += x.to_c64() * y.to_c64();
            }
            // SAFETY: (i, j) is inside C.
            let slot = unsafe { &mut *c.add(i + j * ldc) };
            let old = if beta == T::zero() { c64::new(0.0, 0.0) } else { beta.to_c64() * slot.to_c64() };
            *slot = T::from_c64(alpha.to_c64() * acc + old);
        }
    }
}

fn cblas_trans(t: c_int) -> u8 {
    match t {
        111 => b'N',
        112 => b'T',
        113 => b'C',
        _ => {
            BAD_ARGUMENT.store(true, Ordering::SeqCst);
            b'N'
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cblas_real<T: GemmScalar>(
    layout: c_int,
    ta: c_int,
    tb: c_int,
    m: c_int,
    n: c_int,
    k: c_int,
    alpha: T,
    a: *const T,
    lda: c_int,
    b: *const T,
    ldb: c_int,
    beta: T,
    c: *mut T,
    ldc: c_int,
) {
    CBLAS_CALLS.fetch_add(1, Ordering::SeqCst);
    if layout != 102 {
        BAD_ARGUMENT.store(true, Ordering::SeqCst);
        return;
    }
    // SAFETY: forwarded from the caller's contract.
    unsafe { col_major(cblas_trans(ta), cblas_trans(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) }
}

#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cblas_complex<T: GemmScalar>(
    layout: c_int,
    ta: c_int,
    tb: c_int,
    m: c_int,
    n: c_int,
    k: c_int,
    alpha: *const T,
    a: *const T,
    lda: c_int,
    b: *const T,
    ldb: c_int,
    beta: *const T,
    c: *mut T,
    ldc: c_int,
) {
    CBLAS_CALLS.fetch_add(1, Ordering::SeqCst);
    if layout != 102 {
        BAD_ARGUMENT.store(true, Ordering::SeqCst);
        return;
    }
    // SAFETY: forwarded from the caller's contract; alpha and beta are valid pointers.
    unsafe { col_major(cblas_trans(ta), cblas_trans(tb), m, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc) }
}

#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fortran<T: GemmScalar>(
    ta: *const c_char,
    tb: *const c_char,
    m: *const c_int,
    n: *const c_int,
    k: *const c_int,
    alpha: *const T,
    a: *const T,
    lda: *const c_int,
    b: *const T,
    ldb: *const c_int,
    beta: *const T,
    c: *mut T,
    ldc: *const c_int,
) {
    FORTRAN_CALLS.fetch_add(1, Ordering::SeqCst);
    // SAFETY: every argument is a valid pointer (Fortran ABI), forwarded contract.
    unsafe {
        let (ta, tb) = (*ta as u8, *tb as u8);
        if ![b'N', b'T', b'C'].contains(&ta) || ![b'N', b'T', b'C'].contains(&tb) {
            BAD_ARGUMENT.store(true, Ordering::SeqCst);
            return;
        }
        col_major(ta, tb, *m, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c, *ldc)
    }
}

pub fn naive_cblas_fns() -> CblasGemmFns {
    CblasGemmFns {
        sgemm: Some(cblas_real::<f32>),
        dgemm: Some(cblas_real::<f64>),
        cgemm: Some(cblas_complex::<c32>),
        zgemm: Some(cblas_complex::<c64>),
    }
}

pub fn naive_fortran_fns() -> FortranGemmFns {
    FortranGemmFns {
        sgemm: Some(fortran::<f32>),
        dgemm: Some(fortran::<f64>),
        cgemm: Some(fortran::<c32>),
        zgemm: Some(fortran::<c64>),
    }
}

pub fn naive_cblas_provider() -> BlasGemmProvider {
    // SAFETY: the naive entry points implement column-major CBLAS ?gemm, are reentrant
    // and touch only the described matrices.
    unsafe { BlasGemmProvider::from_cblas("naive-cblas", naive_cblas_fns(), BlasThreading::SEQUENTIAL) }
}

pub fn naive_fortran_provider() -> BlasGemmProvider {
    // SAFETY: as for `naive_cblas_provider`, with the Fortran ABI.
    unsafe { BlasGemmProvider::from_fortran("naive-fortran", naive_fortran_fns(), BlasThreading::SEQUENTIAL) }
}
