//! The naive reference GEMM: triple loops accumulating in `c64` (so `f32`/`c32` results
//! are rounded once, at the end). Every provider is checked against it; it is also
//! wrapped as [`NaiveGemmProvider`], a sequential fallback that counts its calls.

use std::sync::atomic::{AtomicUsize, Ordering};

use strata_tensor::c64;

use crate::error::GemmError;
use crate::job::{BatchedGemm, element_index, prepare};
use crate::parallelism::ProviderParallelism;
use crate::provider::{GemmDTypes, GemmProvider, PlacementControl, ProviderCapabilities, ThreadControl};
use crate::scalar::GemmScalar;

/// Computes `job` with naive loops, accumulating every dot product in `c64`.
/// Validates first (same errors as every provider); honours the shared semantics of
/// [`BatchedGemm`] (`beta == 0` does not read `C`, `alpha == 0` does not read `A`, `B`).
pub fn gemm<T: GemmScalar>(job: &mut BatchedGemm<'_, T>) -> Result<(), GemmError> {
    prepare(job, 1)?;
    if job.finish_trivial() {
        return Ok(());
    }
    let (a, b) = (job.a, job.b);
    let (alpha, beta) = (job.alpha.to_c64(), job.beta.to_c64());
    let beta_reads_c = job.beta != T::zero();
    let c = &mut job.c;
    for bi in 0..job.batch {
        for i in 0..job.m {
            for j in 0..job.n {
                let mut acc = c64::new(0.0, 0.0);
                for p in 0..job.k {
                    let x = a.data[element_index(a.offset, a.batch_stride, a.row_stride, a.col_stride, bi, i, p)];
                    let y = b.data[element_index(b.offset, b.batch_stride, b.row_stride, b.col_stride, bi, p, j)];
                    let x = if job.conj_a { x.conj() } else { x };
                    let y = if job.conj_b { y.conj() } else { y };
                    acc += x.to_c64() * y.to_c64();
                }
                let idx = element_index(c.offset, c.batch_stride, c.row_stride, c.col_stride, bi, i, j);
                let old = if beta_reads_c { beta * c.data[idx].to_c64() } else { c64::new(0.0, 0.0) };
                c.data[idx] = T::from_c64(alpha * acc + old);
            }
        }
    }
    Ok(())
}

/// The reference GEMM as a provider: sequential, on the calling thread, every dtype,
/// any strides. It counts its calls, which makes it the test double of injection and
/// of the parallelism-owner rule.
///
/// ```
/// use std::sync::Arc;
/// use strata_provider::{CpuProviderBundle, NaiveGemmProvider, ProviderKind};
/// let naive = Arc::new(NaiveGemmProvider::new());
/// let bundle = CpuProviderBundle::builder(ProviderKind::Injected).provider(naive.clone()).build().unwrap();
/// let (a, b, mut c) = ([2.0f64], [3.0f64], [0.0f64]);
/// let mut job = strata_provider::BatchedGemm {
///     batch: 1, m: 1, n: 1, k: 1, alpha: 1.0,
///     a: strata_provider::GemmMatrix::row_major(&a, 1, 1), conj_a: false,
///     b: strata_provider::GemmMatrix::row_major(&b, 1, 1), conj_b: false,
///     beta: 0.0, c: strata_provider::GemmMatrixMut::row_major(&mut c, 1, 1),
/// };
/// bundle.gemm(&mut job, &strata_provider::SequentialParallelism).unwrap();
/// assert_eq!((c[0], naive.calls()), (6.0, 1));
/// ```
#[derive(Debug, Default)]
pub struct NaiveGemmProvider {
    calls: AtomicUsize,
    max_threads_seen: AtomicUsize,
}

impl NaiveGemmProvider {
    /// A provider with its counters at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of GEMM calls received so far (including refused ones).
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// The largest thread count ([`ProviderParallelism::threads`]) received so far.
    pub fn max_threads_seen(&self) -> usize {
        self.max_threads_seen.load(Ordering::SeqCst)
    }

    fn run<T: GemmScalar>(&self, job: &mut BatchedGemm<'_, T>, par: &dyn ProviderParallelism) -> Result<(), GemmError> {
        let threads = par.threads();
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.max_threads_seen.fetch_max(threads, Ordering::SeqCst);
        prepare(job, threads)?;
        gemm(job)
    }
}

impl GemmProvider for NaiveGemmProvider {
    fn capabilities(&self) -> ProviderCapabilities {
        ProviderCapabilities {
            name: "naive-reference".into(),
            threads: ThreadControl::Sequential,
            placement: PlacementControl::CallingThread,
            dtypes: GemmDTypes::ALL,
            needs_unit_stride: false,
        }
    }
    crate::provider::forward_gemm_dtypes_to_run!();
}
