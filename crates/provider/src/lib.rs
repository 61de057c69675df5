//! # strata-provider: GEMM and contraction providers
//!
//! The seam between strata's kernels and the libraries that multiply matrices. A
//! [`GemmProvider`] computes a strided batched GEMM ([`BatchedGemm`]:
//! `C[b] = alpha · op(A[b]) · op(B[b]) + beta · C[b]`) for `f32`, `f64`, `c32` and `c64`,
//! into a caller-allocated output, and declares how it uses threads and CPUs
//! ([`ProviderCapabilities`]). A [`CpuProviderBundle`] fixes which provider serves each
//! dtype and is checked against the contract of every domain it serves.
//!
//! Built in: [`FaerGemmProvider`] (feature `faer`, default), the system OpenBLAS
//! (feature `blas-openblas`, `OpenBlasProvider`), and injected providers: any `Arc<dyn GemmProvider>`, or
//! CBLAS / Fortran `?gemm` function pointers registered at run time
//! ([`BlasGemmProvider`]). [`reference::gemm`] is the naive check for all of them.
//!
//! **Promises.** Every built-in provider validates a request ([`BatchedGemm::validate`])
//! and refuses with a typed [`GemmError`] before writing anything; `beta == 0` never reads
//! `C`; a provider that cannot run a request answers [`GemmError::Unsupported`] and the
//! caller falls back. Exactly one party owns the parallelism of an operation
//! ([`parallelism_owner`]): the provider (under an `Exclusive` permit when its threads
//! are process-wide) or the engine's pool, with the provider told to run single-threaded.
//!
//! **Does not.** Plan contractions (strata-kernels does), start threads of its own, or
//! touch the global Rayon pool: a parallel call forks only through the
//! [`ProviderParallelism`] its caller hands in (strata's kernels: the domain's executor).
//!
//! ```
//! use strata_provider::{BatchedGemm, CpuProviderBundle, GemmMatrix, GemmMatrixMut, ProviderKind};
//! use strata_tensor::c64;
//! let bundle = CpuProviderBundle::new(ProviderKind::Faer).unwrap();
//! let a = [c64::new(0.0, 1.0), c64::new(2.0, 0.0)]; // 1 × 2
//! let mut c = [c64::new(f64::NAN, 0.0)];            // 1 × 1, not read (beta = 0)
//! let mut job = BatchedGemm {
//!     batch: 1, m: 1, n: 1, k: 2, alpha: c64::new(1.0, 0.0),
//!     a: GemmMatrix::row_major(&a, 1, 2), conj_a: true,
//!     b: GemmMatrix::row_major(&a, 1, 2).transposed(), conj_b: false, // a · aᴴ
//!     beta: c64::new(0.0, 0.0), c: GemmMatrixMut::row_major(&mut c, 1, 1),
//! };
//! bundle.gemm(&mut job, &strata_provider::SequentialParallelism).unwrap();
//! assert_eq!(c[0], c64::new(5.0, 0.0));
//! ```
#![deny(missing_docs)]

#[cfg(feature = "blas-openblas")]
extern crate blas_src;

mod blas_abi;
mod bundle;
mod error;
#[cfg(feature = "faer")]
mod faer_provider;
mod job;
#[cfg(feature = "blas-openblas")]
mod openblas;
mod parallelism;
mod provider;
pub mod reference;
mod scalar;

pub use blas_abi::{
    BlasGemmProvider, BlasThreading, CblasComplexGemm, CblasGemmFns, CblasRealGemm, FortranGemm, FortranGemmFns,
};
pub use bundle::{
    CpuProviderBundle, CpuProviderBundleBuilder, DomainAdmission, DomainContract, DomainPlacement, ProviderKind,
};
pub use error::{BundleError, GemmError, Operand};
#[cfg(feature = "faer")]
pub use faer_provider::FaerGemmProvider;
pub use job::{BatchedGemm, GemmMatrix, GemmMatrixMut};
#[cfg(feature = "blas-openblas")]
pub use openblas::{OpenBlasProvider, OpenBlasThreading};
pub use parallelism::{ProviderParallelism, ScheduleError, ScopedThreadParallelism, SequentialParallelism};
pub use provider::{
    GemmDTypes, GemmProvider, ParallelismOwner, PlacementControl, ProviderCapabilities, ThreadControl,
    parallelism_owner,
};
pub use reference::NaiveGemmProvider;
pub use scalar::GemmScalar;
