//! Provider bundles: which provider serves each dtype, fixed once built, and checked
//! against the contract of every domain it may serve.

use std::sync::Arc;

use strata_tensor::DType;

use crate::error::{BundleError, GemmError};
use crate::job::BatchedGemm;
use crate::parallelism::ProviderParallelism;
use crate::provider::{
    GemmDTypes, GemmProvider, ParallelismOwner, PlacementControl, ProviderCapabilities, parallelism_owner,
};
use crate::scalar::GemmScalar;

/// The family a bundle's defaults come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// faer for every dtype (feature `faer`, on by default).
    Faer,
    /// The system OpenBLAS for every dtype, single-threaded so the engine owns the
    /// parallelism (feature `blas-openblas`).
    Blas,
    /// Caller-supplied providers; dtypes left uncovered fall back to faer when the
    /// `faer` feature is on.
    Injected,
}

/// How a domain places its workers, as far as providers are concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DomainPlacement {
    /// Workers pinned to the domain's CPU set and verified (an exact NUMA or CPU-set
    /// placement).
    ExactPinned,
    /// CPUs declared by the caller, not enforced.
    Advisory,
    /// The caller manages threads and CPUs; the domain has no CPU set.
    CallerManaged,
}

/// How operations on a domain are admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DomainAdmission {
    /// A permit for the domain's CPU set; disjoint domains run at once.
    CooperativeCpuSet,
    /// An `Exclusive` permit (conflicting with all other work) for operations whose
    /// provider owns the parallelism with threads the engine cannot confine.
    ExclusivePermit,
    /// The caller admits work itself.
    CallerManaged,
}

/// What a domain promises, as far as the providers serving it need to know. The engine
/// builds one per domain and checks it with [`CpuProviderBundle::validate_for_domain`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DomainContract {
    /// Name of the domain for error messages.
    pub label: String,
    /// Number of workers one operation may use (≥ 1).
    pub thread_budget: usize,
    /// How the domain's workers are placed.
    pub placement: DomainPlacement,
    /// How its operations are admitted.
    pub admission: DomainAdmission,
}

#[derive(Debug)]
struct Slot {
    provider: Arc<dyn GemmProvider>,
    caps: ProviderCapabilities,
}

#[derive(Debug)]
struct BundleInner {
    kind: ProviderKind,
    slots: [Slot; 4],
}

/// The GEMM provider for each of `f32`, `f64`, `c32`, `c64`, fixed once built. Cloning
/// is cheap and keeps the identity ([`CpuProviderBundle::shares_identity_with`]), which
/// is what caches keyed by bundle compare.
///
/// ```
/// use std::sync::Arc;
/// use strata_provider::{CpuProviderBundle, DomainAdmission, DomainContract, DomainPlacement,
///     NaiveGemmProvider, ProviderKind};
/// use strata_tensor::DType;
/// let faer = CpuProviderBundle::new(ProviderKind::Faer).unwrap();
/// let mixed = CpuProviderBundle::builder(ProviderKind::Injected)
///     .provider_for(DType::F64, Arc::new(NaiveGemmProvider::new()))
///     .build()
///     .unwrap();
/// assert_eq!(mixed.capabilities(DType::F64).unwrap().name, "naive-reference");
/// assert_eq!(mixed.capabilities(DType::C64).unwrap().name, "faer");
/// assert!(faer.shares_identity_with(&faer.clone()) && !faer.shares_identity_with(&mixed));
/// let numa0 = DomainContract { label: "numa-0".into(), thread_budget: 4,
///     placement: DomainPlacement::ExactPinned, admission: DomainAdmission::CooperativeCpuSet };
/// faer.validate_for_domain(&numa0).unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct CpuProviderBundle {
    inner: Arc<BundleInner>,
}

impl CpuProviderBundle {
    /// A builder starting from the defaults of `kind`.
    pub fn builder(kind: ProviderKind) -> CpuProviderBundleBuilder {
        CpuProviderBundleBuilder { kind, chosen: [None, None, None, None], rejected: None }
    }

    /// The defaults of `kind`, built.
    pub fn new(kind: ProviderKind) -> Result<Self, BundleError> {
        Self::builder(kind).build()
    }

    /// The kind the defaults came from.
    pub fn kind(&self) -> ProviderKind {
        self.inner.kind
    }

    /// The provider serving `dtype`; `None` for integer and bool dtypes.
    pub fn provider(&self, dtype: DType) -> Option<&Arc<dyn GemmProvider>> {
        GemmDTypes::slot(dtype).map(|s| &self.inner.slots[s].provider)
    }

    /// The capabilities that provider declared when the bundle was built.
    pub fn capabilities(&self, dtype: DType) -> Option<&ProviderCapabilities> {
        GemmDTypes::slot(dtype).map(|s| &self.inner.slots[s].caps)
    }

    /// Runs `job` on the provider for `T`. An `Unsupported` answer is returned as is
    /// (nothing written) so that the caller can fall back.
    pub fn gemm<T: GemmScalar>(
        &self,
        job: &mut BatchedGemm<'_, T>,
        par: &dyn ProviderParallelism,
    ) -> Result<(), GemmError> {
        let slot = GemmDTypes::slot(T::DTYPE);
        // INVARIANT: GemmScalar is sealed to the four GEMM dtypes, which all have a slot.
        let slot = slot.unwrap_or(0);
        T::gemm(self.inner.slots[slot].provider.as_ref(), job, par)
    }

    /// Who owns the parallelism of a `dtype` operation on a domain of `budget` workers.
    pub fn parallelism_owner(&self, dtype: DType, budget: usize) -> Option<ParallelismOwner> {
        self.capabilities(dtype).map(|caps| parallelism_owner(caps, budget))
    }

    /// Whether both handles are clones of one built bundle.
    pub fn shares_identity_with(&self, other: &CpuProviderBundle) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Checks that every provider of the bundle can honour `domain`'s contract.
    ///
    /// The rule: when [`parallelism_owner`] says a provider's own threads would run an
    /// operation needing an `Exclusive` permit (a process-wide BLAS team on a domain of
    /// budget > 1), the domain must admit with [`DomainAdmission::ExclusivePermit`];
    /// otherwise those threads would escape an exact pinning, or oversubscribe CPUs
    /// admitted to other work. Run such a provider single-threaded (it then declares
    /// `Sequential`) to serve any domain.
    pub fn validate_for_domain(&self, domain: &DomainContract) -> Result<(), BundleError> {
        if domain.thread_budget == 0 {
            return Err(BundleError::InvalidContract {
                domain: domain.label.clone(),
                reason: "thread budget is 0; it must be at least 1".into(),
            });
        }
        for (dtype, slot) in GemmDTypes::ORDER.into_iter().zip(&self.inner.slots) {
            let owner = parallelism_owner(&slot.caps, domain.thread_budget);
            let ParallelismOwner::Provider { exclusive_permit: true, threads } = owner else {
                continue;
            };
            if domain.admission == DomainAdmission::ExclusivePermit {
                continue;
            }
            let escape = match (domain.placement, slot.caps.placement) {
                (DomainPlacement::ExactPinned, PlacementControl::OwnWorkers) => {
                    "its own threads cannot be confined to the domain's pinned CPUs"
                }
                (DomainPlacement::ExactPinned, _) => {
                    "its process-wide thread setting cannot be bounded to the domain's pinned CPUs"
                }
                (DomainPlacement::Advisory, _) => "its threads would oversubscribe CPUs admitted to other work",
                (DomainPlacement::CallerManaged, _) => {
                    "the caller manages admission, so no Exclusive permit can cover its threads"
                }
            };
            return Err(BundleError::CannotHonourDomain {
                domain: domain.label.clone(),
                provider: slot.caps.name.to_string(),
                dtype,
                reason: format!(
                    "it would own the parallelism with {threads} threads and {escape}; run it single-threaded or admit the domain with an Exclusive permit"
                ),
            });
        }
        Ok(())
    }
}

/// Builds a [`CpuProviderBundle`]: start from a kind's defaults, override dtypes, build.
#[derive(Debug)]
pub struct CpuProviderBundleBuilder {
    kind: ProviderKind,
    chosen: [Option<Arc<dyn GemmProvider>>; 4],
    /// A provider assigned to a dtype GEMM does not compute (reported by `build`).
    rejected: Option<(DType, String)>,
}

impl CpuProviderBundleBuilder {
    /// Uses `provider` for every dtype its capabilities declare.
    pub fn provider(mut self, provider: Arc<dyn GemmProvider>) -> Self {
        let declared = provider.capabilities().dtypes;
        for dtype in declared.iter() {
            if let Some(s) = GemmDTypes::slot(dtype) {
                self.chosen[s] = Some(provider.clone());
            }
        }
        self
    }

    /// Uses `provider` for `dtype` (checked at [`CpuProviderBundleBuilder::build`]).
    pub fn provider_for(mut self, dtype: DType, provider: Arc<dyn GemmProvider>) -> Self {
        match GemmDTypes::slot(dtype) {
            Some(s) => self.chosen[s] = Some(provider),
            None => {
                self.rejected.get_or_insert((dtype, provider.capabilities().name.into_owned()));
            }
        }
        self
    }

    /// Fills the remaining dtypes with the kind's defaults and freezes the bundle.
    pub fn build(self) -> Result<CpuProviderBundle, BundleError> {
        if let Some((dtype, provider)) = self.rejected {
            return Err(BundleError::DTypeNotDeclared { provider, dtype });
        }
        let defaults = default_provider(self.kind)?;
        let mut slots = Vec::with_capacity(4);
        for (dtype, chosen) in GemmDTypes::ORDER.into_iter().zip(self.chosen) {
            let provider = match chosen.or_else(|| defaults.clone()) {
                Some(p) => p,
                None => {
                    return Err(BundleError::MissingProvider { dtype, kind: self.kind });
                }
            };
            let caps = provider.capabilities();
            if !caps.dtypes.contains(dtype) {
                return Err(BundleError::DTypeNotDeclared { provider: caps.name.into_owned(), dtype });
            }
            slots.push(Slot { provider, caps });
        }
        let slots: [Slot; 4] = match slots.try_into() {
            Ok(s) => s,
            // INVARIANT: the loop pushes exactly one slot per entry of ORDER (4).
            Err(_) => unreachable!("four GEMM dtypes give four slots"),
        };
        Ok(CpuProviderBundle { inner: Arc::new(BundleInner { kind: self.kind, slots }) })
    }
}

/// The provider a kind uses for dtypes nobody chose (`None`: the kind has none).
fn default_provider(kind: ProviderKind) -> Result<Option<Arc<dyn GemmProvider>>, BundleError> {
    match kind {
        ProviderKind::Faer => faer_default().map(Some).ok_or(BundleError::FeatureNotCompiled { kind, feature: "faer" }),
        ProviderKind::Injected => Ok(faer_default()),
        ProviderKind::Blas => blas_default(),
    }
}

#[cfg(feature = "faer")]
fn faer_default() -> Option<Arc<dyn GemmProvider>> {
    Some(Arc::new(crate::FaerGemmProvider))
}

#[cfg(not(feature = "faer"))]
fn faer_default() -> Option<Arc<dyn GemmProvider>> {
    None
}

#[cfg(feature = "blas-openblas")]
fn blas_default() -> Result<Option<Arc<dyn GemmProvider>>, BundleError> {
    Ok(Some(Arc::new(crate::OpenBlasProvider::single_threaded())))
}

#[cfg(not(feature = "blas-openblas"))]
fn blas_default() -> Result<Option<Arc<dyn GemmProvider>>, BundleError> {
    Err(BundleError::FeatureNotCompiled { kind: ProviderKind::Blas, feature: "blas-openblas" })
}
