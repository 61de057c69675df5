//! The object-safe provider interface and what a provider declares about itself.

use std::borrow::Cow;
use std::fmt::Debug;

use strata_tensor::{DType, c32, c64};

use crate::error::GemmError;
use crate::job::BatchedGemm;
use crate::parallelism::ProviderParallelism;

/// How a provider's thread count can be controlled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ThreadControl {
    /// Always runs on the calling thread, whatever `threads` says.
    Sequential,
    /// Uses the workers of each call's [`ProviderParallelism`] (faer).
    PerCall,
    /// Only a process-wide setting exists (OpenBLAS's thread team): a call with
    /// `threads > 1` changes it for the whole process, so it is only sound under an
    /// `Exclusive` admission permit.
    GlobalOnly,
}

/// Where a provider's threads run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PlacementControl {
    /// Only through the fork-join of each call's [`ProviderParallelism`], i.e. on the
    /// domain's executor (faer).
    EngineWorkers,
    /// Only on the calling thread.
    CallingThread,
    /// On threads the provider started itself, which the engine neither pins nor bounds.
    OwnWorkers,
}

/// A set of the four GEMM dtypes.
///
/// ```
/// use strata_provider::GemmDTypes;
/// use strata_tensor::DType;
/// let s = GemmDTypes::NONE.with(DType::F64);
/// assert!(s.contains(DType::F64) && !s.contains(DType::C64));
/// assert_eq!(GemmDTypes::ALL.iter().count(), 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GemmDTypes(u8);

impl GemmDTypes {
    /// The GEMM dtypes in slot order.
    pub const ORDER: [DType; 4] = [DType::F32, DType::F64, DType::C32, DType::C64];
    /// No dtype.
    pub const NONE: GemmDTypes = GemmDTypes(0);
    /// `f32`, `f64`, `c32` and `c64`.
    pub const ALL: GemmDTypes = GemmDTypes(0b1111);

    /// Slot of a GEMM dtype in [`GemmDTypes::ORDER`]; `None` for integer and bool dtypes.
    pub fn slot(dtype: DType) -> Option<usize> {
        Self::ORDER.iter().position(|&d| d == dtype)
    }

    /// This set plus `dtype` (unchanged when `dtype` is not a GEMM dtype).
    pub fn with(self, dtype: DType) -> Self {
        match Self::slot(dtype) {
            Some(s) => GemmDTypes(self.0 | (1 << s)),
            None => self,
        }
    }

    /// Whether `dtype` is in the set.
    pub fn contains(self, dtype: DType) -> bool {
        Self::slot(dtype).is_some_and(|s| self.0 & (1 << s) != 0)
    }

    /// The dtypes in the set, in [`GemmDTypes::ORDER`].
    pub fn iter(self) -> impl Iterator<Item = DType> {
        Self::ORDER.into_iter().filter(move |&d| self.contains(d))
    }
}

/// What a provider declares about itself; the engine and bundles decide from this alone.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProviderCapabilities {
    /// Diagnostic name (appears in errors and diagnostics).
    pub name: Cow<'static, str>,
    /// How its thread count is controlled.
    pub threads: ThreadControl,
    /// Where its threads run.
    pub placement: PlacementControl,
    /// The dtypes it computes.
    pub dtypes: GemmDTypes,
    /// It needs one unit stride per matrix (BLAS): other requests answer
    /// [`GemmError::Unsupported`] and the caller falls back.
    pub needs_unit_stride: bool,
}

/// A batched strided GEMM implementation. Object-safe: bundles hold
/// `Arc<dyn GemmProvider>`.
///
/// # Contract
/// * `par` is the parallelism this call may use: [`ProviderParallelism::threads`] workers
///   (≥ 1) and a fork-join on them. A provider whose [`PlacementControl`] is
///   `EngineWorkers` forks *only* through `par.for_each_index`, so its work runs on the
///   threads the caller handed it (strata's kernels hand it the domain's executor); it
///   never starts threads and never uses a global pool. With one thread it runs on the
///   calling thread. A fork-join that fails ([`crate::ScheduleError`]) is reported as
///   [`GemmError::Schedule`], with `C` possibly partly written.
/// * A `GlobalOnly` provider may be passed more than one thread only by a caller that
///   holds an `Exclusive` admission permit (see [`crate::parallelism_owner`]).
/// * Built-in providers validate the job ([`BatchedGemm::validate`]) and refuse
///   (`Unsupported`) before writing anything, so a caller can fall back with the same job.
/// * `beta == 0` overwrites `C` without reading it; `alpha == 0` or `k == 0` does not read
///   `A` or `B`.
///
/// Every dtype method defaults to `Unsupported`: implement the ones you declare.
pub trait GemmProvider: Send + Sync + Debug {
    /// What this provider declares about itself.
    fn capabilities(&self) -> ProviderCapabilities;

    /// `f32` GEMM.
    fn gemm_f32(&self, job: &mut BatchedGemm<'_, f32>, par: &dyn ProviderParallelism) -> Result<(), GemmError> {
        let _ = (job, par);
        Err(dtype_unsupported(self.capabilities(), DType::F32))
    }

    /// `f64` GEMM.
    fn gemm_f64(&self, job: &mut BatchedGemm<'_, f64>, par: &dyn ProviderParallelism) -> Result<(), GemmError> {
        let _ = (job, par);
        Err(dtype_unsupported(self.capabilities(), DType::F64))
    }

    /// `c32` GEMM.
    fn gemm_c32(&self, job: &mut BatchedGemm<'_, c32>, par: &dyn ProviderParallelism) -> Result<(), GemmError> {
        let _ = (job, par);
        Err(dtype_unsupported(self.capabilities(), DType::C32))
    }

    /// `c64` GEMM.
    fn gemm_c64(&self, job: &mut BatchedGemm<'_, c64>, par: &dyn ProviderParallelism) -> Result<(), GemmError> {
        let _ = (job, par);
        Err(dtype_unsupported(self.capabilities(), DType::C64))
    }
}

fn dtype_unsupported(caps: ProviderCapabilities, dtype: DType) -> GemmError {
    GemmError::unsupported(caps.name, format!("no {} GEMM", dtype.name()))
}

/// Who parallelises one GEMM operation: exactly one party, never both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParallelismOwner {
    /// The provider parallelises each call with `threads` threads. When
    /// `exclusive_permit` is set its threads are outside the engine's control (a
    /// process-wide team), so the call must run under an `Exclusive` admission permit
    /// and the engine must not split the work further.
    Provider {
        /// Threads passed to each provider call.
        threads: usize,
        /// The call needs an `Exclusive` permit.
        exclusive_permit: bool,
    },
    /// The engine's pool owns the parallelism (it splits batches or blocks over its
    /// workers) and every provider call gets `threads = 1`.
    Engine,
}

/// Decides who owns the parallelism of an operation on a domain of `budget` workers,
/// from the provider's declared capabilities alone (a pure function).
///
/// * budget 1, or a `Sequential` provider: the engine (the provider runs single-threaded);
/// * `PerCall` on the engine's workers or the calling thread: the provider, with the
///   whole budget, no exclusive permit (its threads *are* the domain's workers);
/// * `PerCall` on its own workers, or `GlobalOnly`: the provider under an `Exclusive`
///   permit, since its threads cannot be confined to the domain.
///
/// Callers that prefer outer parallelism (many small batched products) may always choose
/// [`ParallelismOwner::Engine`] instead and pass `threads = 1`.
///
/// ```
/// use strata_provider::{parallelism_owner, ParallelismOwner, ProviderCapabilities,
///     ThreadControl, PlacementControl, GemmDTypes};
/// let blas = ProviderCapabilities {
///     name: "blas".into(), threads: ThreadControl::GlobalOnly,
///     placement: PlacementControl::OwnWorkers, dtypes: GemmDTypes::ALL, needs_unit_stride: true,
/// };
/// assert_eq!(parallelism_owner(&blas, 1), ParallelismOwner::Engine);
/// assert_eq!(parallelism_owner(&blas, 4),
///     ParallelismOwner::Provider { threads: 4, exclusive_permit: true });
/// ```
pub fn parallelism_owner(caps: &ProviderCapabilities, budget: usize) -> ParallelismOwner {
    if budget <= 1 {
        return ParallelismOwner::Engine;
    }
    match (caps.threads, caps.placement) {
        (ThreadControl::Sequential, _) => ParallelismOwner::Engine,
        (ThreadControl::PerCall, PlacementControl::EngineWorkers | PlacementControl::CallingThread) => {
            ParallelismOwner::Provider { threads: budget, exclusive_permit: false }
        }
        (ThreadControl::PerCall, PlacementControl::OwnWorkers) | (ThreadControl::GlobalOnly, _) => {
            ParallelismOwner::Provider { threads: budget, exclusive_permit: true }
        }
    }
}

/// Implements the four per-dtype [`GemmProvider`] methods by forwarding to the
/// implementing type's generic `run(job, par)`: the object-safe trait needs one method
/// per dtype, a provider needs one generic body.
macro_rules! forward_gemm_dtypes_to_run {
    () => {
        fn gemm_f32(
            &self,
            job: &mut $crate::BatchedGemm<'_, f32>,
            par: &dyn $crate::ProviderParallelism,
        ) -> Result<(), $crate::GemmError> {
            self.run(job, par)
        }
        fn gemm_f64(
            &self,
            job: &mut $crate::BatchedGemm<'_, f64>,
            par: &dyn $crate::ProviderParallelism,
        ) -> Result<(), $crate::GemmError> {
            self.run(job, par)
        }
        fn gemm_c32(
            &self,
            job: &mut $crate::BatchedGemm<'_, strata_tensor::c32>,
            par: &dyn $crate::ProviderParallelism,
        ) -> Result<(), $crate::GemmError> {
            self.run(job, par)
        }
        fn gemm_c64(
            &self,
            job: &mut $crate::BatchedGemm<'_, strata_tensor::c64>,
            par: &dyn $crate::ProviderParallelism,
        ) -> Result<(), $crate::GemmError> {
            self.run(job, par)
        }
    };
}
pub(crate) use forward_gemm_dtypes_to_run;
