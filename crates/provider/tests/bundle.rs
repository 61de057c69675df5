//! Provider bundles: defaults per kind, overrides, identity, and validation against
//! domain contracts.
#![cfg(feature = "faer")]

use std::sync::Arc;

use strata_provider::{
    BatchedGemm, BundleError, CpuProviderBundle, DomainAdmission, DomainContract, DomainPlacement, GemmDTypes,
    GemmError, GemmProvider, NaiveGemmProvider, PlacementControl, ProviderCapabilities, ProviderKind, ThreadControl,
};
use strata_tensor::{DType, ErrorKind};

/// A provider declaring given capabilities; computes `f64` only.
#[derive(Debug)]
struct Declared(ProviderCapabilities);

impl Declared {
    fn new(threads: ThreadControl, placement: PlacementControl, dtypes: GemmDTypes) -> Arc<Self> {
        Arc::new(Declared(ProviderCapabilities {
            name: "declared-double".into(),
            threads,
            placement,
            dtypes,
            needs_unit_stride: true,
        }))
    }
}

impl GemmProvider for Declared {
    fn capabilities(&self) -> ProviderCapabilities {
        self.0.clone()
    }
    fn gemm_f64(
        &self,
        job: &mut BatchedGemm<'_, f64>,
        _par: &dyn strata_provider::ProviderParallelism,
    ) -> Result<(), GemmError> {
        strata_provider::reference::gemm(job)
    }
}

fn contract(budget: usize, placement: DomainPlacement, admission: DomainAdmission) -> DomainContract {
    DomainContract { label: "numa-1".into(), thread_budget: budget, placement, admission }
}

#[test]
fn faer_kind_serves_every_dtype_with_faer() {
    let bundle = CpuProviderBundle::new(ProviderKind::Faer).unwrap();
    assert_eq!(bundle.kind(), ProviderKind::Faer);
    for dtype in GemmDTypes::ORDER {
        let caps = bundle.capabilities(dtype).unwrap();
        assert_eq!(caps.name, "faer");
        assert_eq!(caps.threads, ThreadControl::PerCall);
        assert_eq!(caps.placement, PlacementControl::EngineWorkers);
        assert!(!caps.needs_unit_stride);
    }
    assert!(bundle.provider(DType::I32).is_none());
    assert!(bundle.capabilities(DType::Bool).is_none());
}

#[test]
fn injected_kind_overrides_and_falls_back_to_faer() {
    let naive = Arc::new(NaiveGemmProvider::new());
    let bundle =
        CpuProviderBundle::builder(ProviderKind::Injected).provider_for(DType::C32, naive.clone()).build().unwrap();
    assert_eq!(bundle.capabilities(DType::C32).unwrap().name, "naive-reference");
    assert_eq!(bundle.capabilities(DType::F64).unwrap().name, "faer");
    let all = CpuProviderBundle::builder(ProviderKind::Injected).provider(naive).build().unwrap();
    assert!(GemmDTypes::ORDER.iter().all(|&d| all.capabilities(d).unwrap().name == "naive-reference"));
}

#[test]
fn identity_is_shared_by_clones_only() {
    let a = CpuProviderBundle::new(ProviderKind::Faer).unwrap();
    let b = CpuProviderBundle::new(ProviderKind::Faer).unwrap();
    assert!(a.shares_identity_with(&a.clone()));
    assert!(!a.shares_identity_with(&b));
    // Same providers, still distinct bundles.
    assert_eq!(a.capabilities(DType::F64), b.capabilities(DType::F64));
}

#[test]
fn undeclared_dtypes_are_rejected() {
    let f64_only =
        Declared::new(ThreadControl::Sequential, PlacementControl::CallingThread, GemmDTypes::NONE.with(DType::F64));
    let err =
        CpuProviderBundle::builder(ProviderKind::Faer).provider_for(DType::C64, f64_only.clone()).build().unwrap_err();
    assert_eq!(err, BundleError::DTypeNotDeclared { provider: "declared-double".into(), dtype: DType::C64 });
    let err = CpuProviderBundle::builder(ProviderKind::Faer).provider_for(DType::I64, f64_only).build().unwrap_err();
    assert_eq!(err, BundleError::DTypeNotDeclared { provider: "declared-double".into(), dtype: DType::I64 });
    let converted: strata_tensor::Error = err.into();
    assert_eq!(converted.kind(), ErrorKind::InvalidArgument);
    assert!(converted.message().contains("I64"), "{converted}");
}

#[cfg(not(feature = "blas-openblas"))]
#[test]
fn blas_kind_needs_its_feature() {
    let err = CpuProviderBundle::new(ProviderKind::Blas).unwrap_err();
    assert_eq!(err, BundleError::FeatureNotCompiled { kind: ProviderKind::Blas, feature: "blas-openblas" });
    assert_eq!(strata_tensor::Error::from(err).kind(), ErrorKind::Unsupported);
}

#[cfg(feature = "blas-openblas")]
#[test]
fn blas_kind_is_single_threaded_openblas() {
    let bundle = CpuProviderBundle::new(ProviderKind::Blas).unwrap();
    // Building the default BLAS bundle puts the process-wide team at one thread.
    assert_eq!(strata_provider::OpenBlasProvider::global_threads(), 1);
    for dtype in GemmDTypes::ORDER {
        let caps = bundle.capabilities(dtype).unwrap();
        assert_eq!(caps.name, "openblas");
        assert_eq!(caps.threads, ThreadControl::Sequential);
        assert!(caps.needs_unit_stride);
    }
    let exact = contract(8, DomainPlacement::ExactPinned, DomainAdmission::CooperativeCpuSet);
    bundle.validate_for_domain(&exact).unwrap();
    // The team-sized OpenBLAS cannot serve the same domain without an Exclusive permit.
    let team = CpuProviderBundle::builder(ProviderKind::Blas)
        .provider(Arc::new(strata_provider::OpenBlasProvider::process_team()))
        .build()
        .unwrap();
    assert!(matches!(team.validate_for_domain(&exact), Err(BundleError::CannotHonourDomain { .. })));
    team.validate_for_domain(&contract(8, DomainPlacement::ExactPinned, DomainAdmission::ExclusivePermit)).unwrap();
}

#[test]
fn global_team_cannot_serve_an_exact_domain_above_budget_one() {
    let team = Declared::new(ThreadControl::GlobalOnly, PlacementControl::OwnWorkers, GemmDTypes::ALL);
    let bundle = CpuProviderBundle::builder(ProviderKind::Injected).provider(team).build().unwrap();
    let err = bundle
        .validate_for_domain(&contract(4, DomainPlacement::ExactPinned, DomainAdmission::CooperativeCpuSet))
        .unwrap_err();
    match &err {
        BundleError::CannotHonourDomain { domain, provider, dtype, reason } => {
            assert_eq!((domain.as_str(), provider.as_str(), *dtype), ("numa-1", "declared-double", DType::F32));
            assert!(reason.contains("4 threads") && reason.contains("pinned"), "{reason}");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(strata_tensor::Error::from(err).kind(), ErrorKind::Unsupported);
    // Acceptable: budget 1 (it runs single-threaded) or an Exclusive permit.
    bundle.validate_for_domain(&contract(1, DomainPlacement::ExactPinned, DomainAdmission::CooperativeCpuSet)).unwrap();
    bundle.validate_for_domain(&contract(4, DomainPlacement::ExactPinned, DomainAdmission::ExclusivePermit)).unwrap();
    // Advisory or caller-managed domains cannot bound it either.
    for (placement, admission, needle) in [
        (DomainPlacement::Advisory, DomainAdmission::CooperativeCpuSet, "oversubscribe"),
        (DomainPlacement::CallerManaged, DomainAdmission::CallerManaged, "caller manages admission"),
    ] {
        match bundle.validate_for_domain(&contract(2, placement, admission)) {
            Err(BundleError::CannotHonourDomain { reason, .. }) => {
                assert!(reason.contains(needle), "{reason}")
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[test]
fn engine_worker_and_sequential_providers_serve_any_domain() {
    let faer = CpuProviderBundle::new(ProviderKind::Faer).unwrap();
    let seq = Declared::new(ThreadControl::Sequential, PlacementControl::CallingThread, GemmDTypes::ALL);
    let seq = CpuProviderBundle::builder(ProviderKind::Injected).provider(seq).build().unwrap();
    for placement in [DomainPlacement::ExactPinned, DomainPlacement::Advisory, DomainPlacement::CallerManaged] {
        for admission in
            [DomainAdmission::CooperativeCpuSet, DomainAdmission::ExclusivePermit, DomainAdmission::CallerManaged]
        {
            for budget in [1, 2, 64] {
                faer.validate_for_domain(&contract(budget, placement, admission)).unwrap();
                seq.validate_for_domain(&contract(budget, placement, admission)).unwrap();
            }
        }
    }
}

#[test]
fn zero_budget_contract_is_invalid() {
    let faer = CpuProviderBundle::new(ProviderKind::Faer).unwrap();
    let err = faer
        .validate_for_domain(&contract(0, DomainPlacement::Advisory, DomainAdmission::CooperativeCpuSet))
        .unwrap_err();
    assert!(matches!(&err, BundleError::InvalidContract { domain, .. } if domain == "numa-1"));
    assert_eq!(strata_tensor::Error::from(err).kind(), ErrorKind::InvalidArgument);
}

#[test]
fn bundle_reports_the_parallelism_owner() {
    use strata_provider::ParallelismOwner;
    let faer = CpuProviderBundle::new(ProviderKind::Faer).unwrap();
    assert_eq!(
        faer.parallelism_owner(DType::F32, 2),
        Some(ParallelismOwner::Provider { threads: 2, exclusive_permit: false })
    );
    assert_eq!(faer.parallelism_owner(DType::I32, 2), None);
}
