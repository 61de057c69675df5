//! The built-in OpenBLAS provider (feature `blas-openblas`): the system library's CBLAS
//! through blas-src / openblas-src, with its process-wide thread team under control.

use std::ffi::c_int;

use strata_tensor::{c32, c64};

use crate::blas_abi::{BlasGemmProvider, BlasThreading, CblasComplexGemm, CblasGemmFns, CblasRealGemm};
use crate::error::GemmError;
use crate::job::BatchedGemm;
use crate::parallelism::ProviderParallelism;
use crate::provider::{GemmProvider, ProviderCapabilities};

// SAFETY: these are the documented CBLAS and OpenBLAS symbols of libopenblas, linked by
// openblas-src (`system`); the signatures follow cblas.h with LP64 (32-bit) integers.
unsafe extern "C" {
    fn cblas_sgemm(
        layout: c_int,
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
    fn cblas_dgemm(
        layout: c_int,
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
    fn cblas_cgemm(
        layout: c_int,
        ta: c_int,
        tb: c_int,
        m: c_int,
        n: c_int,
        k: c_int,
        alpha: *const c32,
        a: *const c32,
        lda: c_int,
        b: *const c32,
        ldb: c_int,
        beta: *const c32,
        c: *mut c32,
        ldc: c_int,
    );
    fn cblas_zgemm(
        layout: c_int,
        ta: c_int,
        tb: c_int,
        m: c_int,
        n: c_int,
        k: c_int,
        alpha: *const c64,
        a: *const c64,
        lda: c_int,
        b: *const c64,
        ldb: c_int,
        beta: *const c64,
        c: *mut c64,
        ldc: c_int,
    );
    fn openblas_set_num_threads(n: c_int);
    fn openblas_get_num_threads() -> c_int;
}

/// How the OpenBLAS provider treats the library's process-wide thread team.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpenBlasThreading {
    /// The team is kept at one thread: every call runs on the calling thread and strata's
    /// pool owns the parallelism (declares `Sequential`). Serves any domain.
    SingleThreaded,
    /// Each call sets the team to its `threads` argument (declares `GlobalOnly` on its
    /// own workers): only sound under an `Exclusive` admission permit.
    ProcessTeam,
}

/// GEMM through the system OpenBLAS's CBLAS interface.
///
/// ```
/// use strata_provider::{BatchedGemm, GemmMatrix, GemmMatrixMut, GemmScalar, OpenBlasProvider};
/// let blas = OpenBlasProvider::single_threaded();
/// let (a, b, mut c) = ([1.0f64, 2.0], [3.0f64, 4.0], [0.0f64]);
/// let mut job = BatchedGemm {
///     batch: 1, m: 1, n: 1, k: 2, alpha: 1.0,
///     a: GemmMatrix::row_major(&a, 1, 2), conj_a: false,
///     b: GemmMatrix::row_major(&b, 2, 1), conj_b: false,
///     beta: 0.0, c: GemmMatrixMut::row_major(&mut c, 1, 1),
/// };
/// f64::gemm(&blas, &mut job, &strata_provider::SequentialParallelism).unwrap();
/// assert_eq!(c[0], 11.0);
/// assert_eq!(OpenBlasProvider::global_threads(), 1);
/// ```
#[derive(Clone, Debug)]
pub struct OpenBlasProvider {
    inner: BlasGemmProvider,
    threading: OpenBlasThreading,
}

impl OpenBlasProvider {
    /// The provider with the team held at one thread (sets it to one now).
    pub fn single_threaded() -> Self {
        Self::set_global_threads(1);
        Self::with_threading(OpenBlasThreading::SingleThreaded)
    }

    /// The provider that lets each call size the process-wide team.
    pub fn process_team() -> Self {
        Self::with_threading(OpenBlasThreading::ProcessTeam)
    }

    fn with_threading(threading: OpenBlasThreading) -> Self {
        let declared = match threading {
            OpenBlasThreading::SingleThreaded => BlasThreading::SEQUENTIAL,
            OpenBlasThreading::ProcessTeam => BlasThreading::PROCESS_TEAM,
        };
        // SAFETY: OpenBLAS's cblas_?gemm are the standard CBLAS routines, thread-safe
        // (pthreads build) and access only the matrices they are given.
        let inner = unsafe { BlasGemmProvider::from_cblas("openblas", Self::cblas_entry_points(), declared) };
        OpenBlasProvider { inner, threading }
    }

    /// The library's own `cblas_?gemm` entry points, e.g. to register them elsewhere.
    pub fn cblas_entry_points() -> CblasGemmFns {
        CblasGemmFns {
            sgemm: Some(cblas_sgemm as CblasRealGemm<f32>),
            dgemm: Some(cblas_dgemm as CblasRealGemm<f64>),
            cgemm: Some(cblas_cgemm as CblasComplexGemm<c32>),
            zgemm: Some(cblas_zgemm as CblasComplexGemm<c64>),
        }
    }

    /// How this provider treats the team.
    pub fn threading(&self) -> OpenBlasThreading {
        self.threading
    }

    /// Sets the process-wide OpenBLAS team size (`openblas_set_num_threads`), clamped to
    /// at least 1. `set_global_threads(1)` is the "strata's pool owns parallelism" mode.
    pub fn set_global_threads(threads: usize) {
        let n = c_int::try_from(threads.max(1)).unwrap_or(c_int::MAX);
        // SAFETY: a plain setter of the library's thread count.
        unsafe { openblas_set_num_threads(n) }
    }

    /// The process-wide OpenBLAS team size (`openblas_get_num_threads`).
    pub fn global_threads() -> usize {
        // SAFETY: a plain getter of the library's thread count.
        let n = unsafe { openblas_get_num_threads() };
        usize::try_from(n).unwrap_or(1).max(1)
    }

    fn run<T: crate::blas_abi::BlasScalar>(
        &self,
        job: &mut BatchedGemm<'_, T>,
        par: &dyn ProviderParallelism,
    ) -> Result<(), GemmError> {
        // The library's own team, sized by the call's thread count: sound only under the
        // Exclusive permit that `parallelism_owner` demands for this provider.
        let want = match self.threading {
            OpenBlasThreading::SingleThreaded => 1,
            OpenBlasThreading::ProcessTeam => par.threads().max(1),
        };
        if Self::global_threads() != want {
            Self::set_global_threads(want);
        }
        self.inner.run(job, par)
    }
}

impl GemmProvider for OpenBlasProvider {
    fn capabilities(&self) -> ProviderCapabilities {
        self.inner.capabilities()
    }
    fn gemm_f32(&self, job: &mut BatchedGemm<'_, f32>, par: &dyn ProviderParallelism) -> Result<(), GemmError> {
        self.run(job, par)
    }
    fn gemm_f64(&self, job: &mut BatchedGemm<'_, f64>, par: &dyn ProviderParallelism) -> Result<(), GemmError> {
        self.run(job, par)
    }
    fn gemm_c32(&self, job: &mut BatchedGemm<'_, c32>, par: &dyn ProviderParallelism) -> Result<(), GemmError> {
        self.run(job, par)
    }
    fn gemm_c64(&self, job: &mut BatchedGemm<'_, c64>, par: &dyn ProviderParallelism) -> Result<(), GemmError> {
        self.run(job, par)
    }
}
