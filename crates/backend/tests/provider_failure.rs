//! A provider that fails (or panics) in the middle of a GEMM: the `_into` op returns a
//! typed error that says the destination was partly written
//! (`Error::destination_clobbered`), and the destination indeed holds neither its old
//! contents nor the result. strata reports rather than restores: keeping a copy of every
//! destination to restore on failure would cost each `dot_general_into` (the
//! accumulating step of every tensor-network sweep) a second pass over its output.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use strata_backend::prelude::*;
use strata_provider::{
    BatchedGemm, CpuProviderBundle, FaerGemmProvider, GemmError, GemmMatrix, GemmMatrixMut, GemmProvider,
    NaiveGemmProvider, ProviderCapabilities, ProviderParallelism, SequentialParallelism,
};
use strata_tensor::c64;
use strata_tensor::config::DotGeneralConfig;

/// How the double fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Failure {
    /// Computes the first half of the rows of its first matrix, then reports an error.
    ErrorHalfway,
    /// The same, then panics.
    PanicHalfway,
    /// Computes the first `n` matrices of the batch, then reports an error.
    ErrorAfterItems(usize),
}

#[derive(Debug)]
struct FailingProvider {
    failure: Failure,
    calls: AtomicUsize,
}

impl GemmProvider for FailingProvider {
    fn capabilities(&self) -> ProviderCapabilities {
        ProviderCapabilities { name: "failing-provider".into(), ..FaerGemmProvider.capabilities() }
    }

    fn gemm_f64(&self, job: &mut BatchedGemm<'_, f64>, par: &dyn ProviderParallelism) -> Result<(), GemmError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let _ = par;
        let fail = || GemmError::ProviderFailure {
            provider: "failing-provider".into(),
            message: "the device went away".into(),
        };
        let (batch, m) = match self.failure {
            Failure::ErrorAfterItems(n) => (n.min(job.batch), job.m),
            Failure::ErrorHalfway | Failure::PanicHalfway => (1, job.m / 2),
        };
        {
            let c = &mut job.c;
            let mut part = BatchedGemm {
                batch,
                m,
                n: job.n,
                k: job.k,
                alpha: job.alpha,
                a: GemmMatrix::new(job.a.data, job.a.offset, job.a.row_stride, job.a.col_stride, job.a.batch_stride),
                conj_a: job.conj_a,
                b: GemmMatrix::new(job.b.data, job.b.offset, job.b.row_stride, job.b.col_stride, job.b.batch_stride),
                conj_b: job.conj_b,
                beta: job.beta,
                c: GemmMatrixMut::new(c.data, c.offset, c.row_stride, c.col_stride, c.batch_stride),
            };
            NaiveGemmProvider::new().gemm_f64(&mut part, &SequentialParallelism)?;
        }
        assert!(self.failure != Failure::PanicHalfway, "the provider's kernel crashed");
        Err(fail())
    }
}

fn backend_with(failure: Failure) -> CpuBackend {
    let provider = Arc::new(FailingProvider { failure, calls: AtomicUsize::new(0) });
    let bundle = CpuProviderBundle::builder(strata_provider::ProviderKind::Injected)
        .provider_for(DType::F64, provider as Arc<dyn GemmProvider>)
        .build()
        .unwrap();
    CpuBackend::with_threads(1).unwrap().with_provider_bundle(bundle).unwrap()
}

fn f64_tensor(shape: &[usize], f: impl Fn(usize) -> f64) -> TypedTensor<f64> {
    TypedTensor::from_vec((0..shape.iter().product()).map(f).collect(), shape).unwrap()
}

/// The naive reference of `a · b` for `[m, k] x [k, n]`.
fn reference(a: &TypedTensor<f64>, b: &TypedTensor<f64>) -> Vec<f64> {
    let (m, k, n) = (a.shape()[0], a.shape()[1], b.shape()[1]);
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|p| a.data()[i * k + p] * b.data()[p * n + j]).sum();
        }
    }
    c
}

#[test]
fn a_provider_failing_mid_gemm_reports_the_destination_clobbered() {
    // Large enough for the provider route (not the tiny loop).
    let a = f64_tensor(&[96, 64], |i| (i % 7) as f64 - 3.0);
    let b = f64_tensor(&[64, 80], |i| (i % 5) as f64 - 2.0);
    let want = reference(&a, &b);
    let one = c64::new(1.0, 0.0);
    for failure in [Failure::ErrorHalfway, Failure::PanicHalfway] {
        let backend = backend_with(failure);
        let sentinel = -1234.5;
        let mut dest = f64_tensor(&[96, 80], |_| sentinel);
        let err = ContractionOps::dot_general_into(
            &backend,
            (&a).into(),
            (&b).into(),
            &DotGeneralConfig::matmul(),
            false,
            false,
            one,
            c64::new(0.0, 0.0),
            (&mut dest).into(),
        )
        .unwrap_err();
        assert_eq!(err.op(), "dot_general_into", "{failure:?}: {err}");
        assert_eq!(err.kind(), ErrorKind::BackendFailure, "{failure:?}: {err}");
        assert!(err.destination_clobbered(), "{failure:?}: {err}");
        assert!(err.message().contains("failing-provider") && err.message().contains("unspecified"), "{err}");
        if failure == Failure::PanicHalfway {
            assert!(err.message().contains("panicked") && err.message().contains("crashed"), "{err}");
        }
        // It really is clobbered: the first rows hold the result, the rest the old values.
        let got = dest.data();
        assert_eq!(&got[..48 * 80], &want[..48 * 80], "{failure:?}");
        assert!(got[48 * 80..].iter().all(|&x| x == sentinel), "{failure:?}");
        // And the backend stays usable.
        let ok = CpuBackend::with_threads(1).unwrap().matmul(&a, &b).unwrap();
        assert_eq!(ok.as_typed::<f64>().unwrap().data(), &want[..]);
    }
}

#[test]
fn a_failure_on_a_later_batch_item_reports_the_earlier_items_written() {
    // Batched: item 0 is computed, then the provider fails; beta = 1 accumulates. Items
    // of 96x80x112 multiply-adds are above the register-tile engine's size, so the
    // provider runs them.
    let a = f64_tensor(&[3, 96, 80], |i| (i % 3) as f64);
    let b = f64_tensor(&[3, 80, 112], |i| (i % 4) as f64 - 1.0);
    let cfg = DotGeneralConfig::new(vec![0], vec![0], vec![2], vec![1]);
    let backend = backend_with(Failure::ErrorAfterItems(1));
    let before = f64_tensor(&[3, 96, 112], |i| i as f64);
    let mut dest = before.clone();
    let one = c64::new(1.0, 0.0);
    let result = ContractionOps::dot_general_into(
        &backend,
        (&a).into(),
        (&b).into(),
        &cfg,
        false,
        false,
        one,
        one,
        (&mut dest).into(),
    );
    let err = result.unwrap_err();
    assert!(err.destination_clobbered() && err.op() == "dot_general_into", "{err}");
    let item = 96 * 112;
    assert_ne!(&dest.data()[..item], &before.data()[..item], "item 0 was accumulated");
    assert_eq!(&dest.data()[item..], &before.data()[item..], "items 1 and 2 untouched");
    // Errors before any write (validation) never claim a clobbered destination.
    let wrong = DotGeneralConfig::new(vec![0], vec![0], vec![1], vec![1]);
    let err = ContractionOps::dot_general_into(
        &backend,
        (&a).into(),
        (&b).into(),
        &wrong,
        false,
        false,
        one,
        one,
        (&mut dest).into(),
    )
    .unwrap_err();
    assert!(!err.destination_clobbered(), "{err}");
}
