//! # strata-backend: a CPU tensor backend that knows the machine it runs on
//!
//! ```toml
//! [dependencies]
//! strata-backend = "0.1"
//! # optional: features = ["ndarray", "faer", "npy", "hwloc", "blas-openblas"]
//! ```
//!
//! ```
//! use strata_backend::prelude::*;
//!
//! let backend = CpuBackend::new()?; // the CPUs and cgroup quota this process may use
//! let a = TypedTensor::from_fn(&[2, 3], |i| (3 * i[0] + i[1]) as f64)?;
//! let b = backend.exp(&backend.add(&a, &a)?)?;
//! let s = backend.sum(&b, &[0])?; // over axis 0
//! let at = a.view().transpose(&[1, 0])?; // a view, no copy
//! let c = backend.dot_general(&a, &at, &DotGeneral::matmul())?;
//! assert_eq!(c.to_vec::<f64>()?, [5.0, 14.0, 14.0, 50.0]);
//! println!("{s}\n{c}"); // printed as numpy prints
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Ops are methods of [`CpuBackend`] (and of a [`CpuSession`], which holds the admission
//! for many ops: [`CpuBackend::session`]). Every input is anything that converts into a
//! [`TensorRead`] — `&Tensor`, `&TypedTensor<T>`, a view, with the `ndarray` feature an
//! `&ndarray::Array` — and every result a [`Tensor`] (read it with
//! [`Tensor::to_vec`], [`Tensor::to_scalar`], [`Tensor::into_typed`] or
//! `TypedTensor::try_from`). Semantics follow `jax.lax` (shapes match exactly, one dtype
//! per op; see docs/SEMANTICS.md). The op families, each also an object-safe trait of
//! strata-tensor for code written against any backend:
//!
//! | family | methods | trait |
//! |---|---|---|
//! | elementwise | [`add`](CpuBackend::add), [`sub`](CpuBackend::sub), [`mul`](CpuBackend::mul), [`div`](CpuBackend::div), [`rem`](CpuBackend::rem), [`maximum`](CpuBackend::maximum), [`minimum`](CpuBackend::minimum), [`neg`](CpuBackend::neg), [`conj`](CpuBackend::conj), [`abs`](CpuBackend::abs), [`sign`](CpuBackend::sign), [`compare`](CpuBackend::compare), [`select`](CpuBackend::select), [`clamp`](CpuBackend::clamp), [`binary`](CpuBackend::binary), [`unary`](CpuBackend::unary), `_into` forms | [`ElementwiseOps`] |
//! | analytic | [`exp`](CpuBackend::exp), [`log`](CpuBackend::log), [`sin`](CpuBackend::sin), [`cos`](CpuBackend::cos), [`tanh`](CpuBackend::tanh), [`sqrt`](CpuBackend::sqrt), [`rsqrt`](CpuBackend::rsqrt), [`pow`](CpuBackend::pow), [`expm1`](CpuBackend::expm1), [`log1p`](CpuBackend::log1p) | [`AnalyticOps`] |
//! | structural | [`transpose`](CpuBackend::transpose), [`reshape`](CpuBackend::reshape), [`broadcast_in_dim`](CpuBackend::broadcast_in_dim), [`cast`](CpuBackend::cast), [`diagonal`](CpuBackend::diagonal), [`extract_diagonal`](CpuBackend::extract_diagonal), [`embed_diagonal`](CpuBackend::embed_diagonal), [`tril`](CpuBackend::tril), [`triu`](CpuBackend::triu), [`to_contiguous`](CpuBackend::to_contiguous), [`copy_into`](CpuBackend::copy_into) | [`StructuralOps`] |
//! | reduction | [`sum`](CpuBackend::sum), [`sum_squares`](CpuBackend::sum_squares), [`prod`](CpuBackend::prod), [`max`](CpuBackend::max), [`min`](CpuBackend::min), [`reduce`](CpuBackend::reduce) | [`ReductionOps`] |
//! | contraction | [`dot_general`](CpuBackend::dot_general) with a [`DotGeneral`](config::DotGeneral), [`dot_general_into`](CpuBackend::dot_general_into), [`matmul`](CpuBackend::matmul), [`grouped_gemm`](CpuBackend::grouped_gemm), [`vdot`](CpuBackend::vdot), [`norm_squared`](CpuBackend::norm_squared), [`axpby_into`](CpuBackend::axpby_into) | [`ContractionOps`] |
//! | indexing | [`gather`](CpuBackend::gather), [`scatter`](CpuBackend::scatter), [`slice`](CpuBackend::slice), [`dynamic_slice`](CpuBackend::dynamic_slice), [`dynamic_update_slice`](CpuBackend::dynamic_update_slice), [`pad`](CpuBackend::pad), [`concatenate`](CpuBackend::concatenate), [`reverse`](CpuBackend::reverse) | [`IndexingOps`] |
//! | fusion | [`execute_fusion`](CpuBackend::execute_fusion), [`broadcast_multiply`](CpuBackend::broadcast_multiply) | [`FusionOps`] |
//! | buffers | [`recycle`](BufferOps::recycle), [`download`](BufferOps::download), [`upload`](BufferOps::upload) | [`BufferOps`] |
//!
//! Views ([`TypedView`], [`TensorView`]) transpose, slice, reverse, broadcast and take
//! diagonals without copying, under the same names and configs as the ops. Optional
//! features: `ndarray` and `faer` (zero-copy views both ways), `npy` (`strata_backend::npy`:
//! `.npy`/`.npz` of every dtype), `hwloc` (the hwloc topology source), `blas-openblas`
//! (the OpenBLAS GEMM provider).
//!
//! ## The machinery, for those who need it
//!
//! [`CpuBackend`] is a cheap clone handle onto CPU domains (pinned pools strata manages,
//! or executors the caller owns), a GEMM provider bundle, per-domain buffer pools and
//! plan caches. Constructors take a thread count ([`CpuBackend::with_threads`]), a
//! provider ([`CpuBackend::with_kind`]), a caller's Rayon pool
//! ([`CpuBackend::from_rayon_pool`]) or a registry of external domains;
//! [`CpuBackend::for_placement`] gives a handle placed on a NUMA node, and
//! [`CpuBackend::execution_info`] says where work runs.
//!
//! **The path of one op.** A facade method names the op and estimates its work, enters
//! the handle's domain (for `Auto` placement and small work or a budget of 1, inline on
//! the calling thread with no permit; otherwise with the domain's arbiter permit and
//! executor), builds a [`strata_kernels::KernelContext`] from the entry's executor and
//! budget, calls one kernel function with the domain's caches, and returns the kernel's
//! output unchanged. [`CpuBackend::with_session`] takes the entry once for many ops.
//!
//! **Promises.** Bad input is a typed [`strata_tensor::Error`] naming the op, before
//! anything is written. Entering the backend from inside its own execution (an op, a
//! session, `install`) is a `RuntimeState` error, never a deadlock. A panic inside
//! `install` or a session leaves the backend usable. Outputs are plain tensors; the
//! domain that produced them is [`CpuBackend::producing_domain`] (fixed per handle).
//!
//! **Does not.** Implement kernels (strata-kernels), discover the machine
//! (strata-topology) or admit work itself (strata-arbiter via strata-engine). On
//! platforms without thread affinity it runs in a compatibility mode: unpinned pools and
//! only `Auto` placement ([`ExecutionMode::Compatibility`]).
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod backend;
mod controls;
pub mod einsum;
mod error;
mod info;
mod op_methods;
mod ops;
pub mod profile;
mod session;

pub use backend::{CpuBackend, CpuBackendBuilder};
pub use error::CpuBackendError;
pub use info::{ExecutionInfo, ExecutionMode};
pub use profile::{ProfileReport, STRATA_PROFILE};
pub use session::CpuSession;

pub use strata_engine::{
    AffinityClaim, CpuDomainExecutor, CpuDomainId, CpuPlacement, CpuPlacementGuarantee, DomainAdmission,
    DomainOwnership, ExternalCpuDomain, ResolvedCpuPlacement, ShutdownOwner,
};
pub use strata_kernels::contraction::ContractionCache;
pub use strata_kernels::lru::CacheLimits;
pub use strata_pool::PoolStats;
pub use strata_provider::{CpuProviderBundle, ProviderKind};
pub use strata_tensor::{
    AnalyticOps, BufferOps, CacheStats, ContractionOps, DType, ElementwiseOps, Error, ErrorKind, FusionOps,
    IndexingOps, ReductionOps, Result, Scalar, ScalarValue, StructuralOps, Tensor, TensorRead, TensorView,
    TensorViewMut, TensorWrite, TypedTensor, TypedView, TypedViewMut, c32, c64, config,
};
pub use strata_topology::{CpuSet, CpuTopology, NumaNodeId};

#[cfg(feature = "npy")]
pub use strata_tensor::npy;

/// Everything a typical program needs: `use strata_backend::prelude::*;`.
pub mod prelude {
    pub use crate::{
        AnalyticOps, BufferOps, ContractionOps, CpuBackend, CpuBackendError, CpuPlacement, CpuSession, DType,
        ElementwiseOps, Error, ErrorKind, ExecutionInfo, FusionOps, IndexingOps, NumaNodeId, ProviderKind,
        ReductionOps, Scalar, ScalarValue, StructuralOps, Tensor, TensorRead, TensorView, TensorViewMut, TensorWrite,
        TypedTensor, TypedView, TypedViewMut, c32, c64,
    };
    pub use strata_tensor::config::{
        BinaryOp, CompareDir, DotGeneral, DotGeneralConfig, ElementwiseFusionPlan, FusionInstr, GatherConfig,
        GroupedGemmConfig, PadConfig, PadValue, ReduceOp, ScatterCombiner, ScatterConfig, SliceConfig, UnaryOp,
    };
}

/// The README's code blocks, compiled and run as doc tests so they stay true (they use
/// the `ndarray` and `npy` features; CI runs them with `--features ndarray,npy`).
#[cfg(all(doctest, feature = "ndarray", feature = "npy"))]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeQuickstart;
