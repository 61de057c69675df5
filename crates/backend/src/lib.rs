//! # strata-backend: the facade
//!
//! [`CpuBackend`] is what users hold: a cheap clone handle onto CPU domains (pinned pools
//! strata manages, or executors the caller owns), a GEMM provider bundle, per-domain
//! buffer pools and plan caches. It implements the op traits of strata-tensor
//! ([`ElementwiseOps`], [`AnalyticOps`], [`StructuralOps`], [`ReductionOps`],
//! [`ContractionOps`], [`IndexingOps`], [`FusionOps`], [`BufferOps`]) and
//! re-exports what a program needs, so a quickstart depends on this crate alone
//! (`use strata_backend::prelude::*`).
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
//!
//! ```
//! use strata_backend::prelude::*;
//! let backend = CpuBackend::new()?;
//! let a = TypedTensor::from_fn(&[2, 3], |i| (i[0] * 3 + i[1]) as f64)?;
//! let b = TypedTensor::from_fn(&[3, 2], |i| (i[0] + i[1]) as f64)?;
//! let c = backend.matmul((&a).into(), (&b).into())?;
//! assert_eq!(c.shape(), &[2, 2]);
//! assert_eq!(c.as_typed::<f64>()?.data()[0], 0.0 * 0.0 + 1.0 * 1.0 + 2.0 * 2.0);
//! println!("{}", backend.execution_info());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

mod backend;
mod controls;
pub mod einsum;
mod error;
mod info;
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
    IndexingOps, ReductionOps, Result, StructuralOps, Tensor, TensorRead, TensorView, TensorViewMut, TensorWrite,
    TypedTensor, TypedView, TypedViewMut, c32, c64, config,
};
pub use strata_topology::{CpuSet, CpuTopology, NumaNodeId};

/// Everything a typical program needs: `use strata_backend::prelude::*;`.
pub mod prelude {
    pub use crate::{
        AnalyticOps, BufferOps, ContractionOps, CpuBackend, CpuBackendError, CpuPlacement, DType, ElementwiseOps,
        Error, ErrorKind, ExecutionInfo, FusionOps, IndexingOps, NumaNodeId, ProviderKind, ReductionOps, StructuralOps,
        Tensor, TensorRead, TensorWrite, TypedTensor, c32, c64,
    };
    pub use strata_tensor::config::{
        BinaryOp, CompareDir, DotGeneralConfig, ElementwiseFusionPlan, FusionInstr, GatherConfig, GroupedGemmConfig,
        PadConfig, ReduceOp, ScatterCombiner, ScatterConfig, SliceConfig, UnaryOp,
    };
}

/// The README's quickstart, compiled and run as a doc test so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeQuickstart;
