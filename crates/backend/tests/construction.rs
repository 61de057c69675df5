//! Constructors, placement, queries, runtime identity, execution info and error conversions.

mod common;

use std::sync::Arc;

use common::fixture_backend;
use strata_backend::prelude::*;
use strata_backend::{
    AffinityClaim, CpuBackendBuilder, CpuDomainId, CpuPlacementGuarantee, CpuProviderBundle, DomainAdmission,
    DomainOwnership, ExecutionMode, ExternalCpuDomain, ResolvedCpuPlacement, ShutdownOwner,
};
use strata_engine::{EngineError, InlineExecutor};
use strata_topology::{CpuSet, SyntheticTopology, TopologySource};

fn live_cpus() -> usize {
    strata_topology::discover().unwrap().allowed_cpus().len()
}

#[test]
fn default_backend_uses_the_topology_budget() {
    let b = CpuBackend::new().unwrap();
    let expected = if std::env::var("RAYON_NUM_THREADS").is_ok() {
        b.num_threads()
    } else {
        b.topology().default_thread_budget().unwrap().get().min(live_cpus())
    };
    assert_eq!(b.num_threads(), expected);
    assert_eq!(b.placement(), CpuPlacement::Auto);
    assert_eq!(b.kind(), ProviderKind::Faer);
    assert!(b.resolved_placement().is_some());
    let t = CpuBackend::try_new().unwrap();
    assert_eq!(t.num_threads(), b.num_threads());
    assert_ne!(t.runtime_identity(), b.runtime_identity());
}

#[test]
fn with_threads_sets_the_budget_and_refuses_bad_counts() {
    let b = CpuBackend::with_threads(1).unwrap();
    assert_eq!(b.num_threads(), 1);
    assert_eq!(b.execution_info().thread_budget, 1);

    let zero = CpuBackend::with_threads(0).unwrap_err();
    assert!(matches!(zero, CpuBackendError::Placement { source: EngineError::ZeroBudget }), "{zero:?}");
    let too_many = CpuBackend::with_threads(live_cpus() + 1).unwrap_err();
    assert!(
        matches!(too_many, CpuBackendError::Placement { source: EngineError::BudgetExceedsCpus { .. } }),
        "{too_many:?}"
    );
    let e: strata_tensor::Error = too_many.into();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn with_kind_and_threads_and_kind() {
    let b = CpuBackend::with_kind(ProviderKind::Faer).unwrap();
    assert_eq!(b.kind(), ProviderKind::Faer);
    let b = CpuBackend::with_threads_and_kind(1, ProviderKind::Faer).unwrap();
    assert_eq!((b.kind(), b.num_threads()), (ProviderKind::Faer, 1));
    assert!(b.execution_info().provider.contains("F64"));
    assert!(CpuBackend::with_threads_and_kind(0, ProviderKind::Faer).is_err());
    #[cfg(not(feature = "blas-openblas"))]
    {
        let err = CpuBackend::with_kind(ProviderKind::Blas).unwrap_err();
        assert!(matches!(err, CpuBackendError::Provider { .. }), "{err:?}");
        let e: strata_tensor::Error = err.into();
        assert_eq!(e.op(), "provider_bundle");
    }
}

#[test]
fn from_rayon_pool_is_an_external_caller_managed_domain() {
    let pool = Arc::new(rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap());
    let b = CpuBackend::from_rayon_pool(Arc::clone(&pool)).unwrap();
    let info = b.execution_info();
    assert_eq!(info.execution_mode, ExecutionMode::ExternalExecutor);
    assert_eq!(info.ownership, DomainOwnership::External);
    assert_eq!(info.admission, DomainAdmission::CallerManaged);
    assert_eq!(info.shutdown_owner, ShutdownOwner::Caller);
    assert_eq!(info.workers, 2);
    assert_eq!(info.thread_budget, 2);
    assert_eq!(info.domain_id, CpuDomainId::new("rayon"));
    assert!(info.domain_cpus.is_none());
    assert!(b.resolved_placement().is_none());
    // Work runs on the caller's pool.
    let on_pool = b.install(|| rayon::current_thread_index().is_some()).unwrap();
    assert!(on_pool);
    drop(b);
    // The pool still works after the backend is gone: strata does not own it.
    assert_eq!(pool.install(|| 7), 7);
}

fn inline_domain(id: &str, placement: CpuPlacement, cpus: &str) -> ExternalCpuDomain {
    ExternalCpuDomain::cooperative(
        id,
        placement,
        cpus.parse().unwrap(),
        CpuPlacementGuarantee::Advisory,
        Arc::new(InlineExecutor),
    )
}

fn fixture_topology() -> Arc<strata_topology::CpuTopology> {
    Arc::new(SyntheticTopology::new(2, 2, 1).unwrap().load().unwrap())
}

#[test]
fn external_domains_serve_their_placements() {
    let topo = fixture_topology();
    let domains = vec![
        inline_domain("all", CpuPlacement::AllAllowed, "0-3"),
        inline_domain("n1", CpuPlacement::NumaNode(NumaNodeId(1)), "2-3"),
    ];
    let bundle = CpuProviderBundle::new(ProviderKind::Faer).unwrap();
    let b = CpuBackend::from_external_domains_on(Arc::clone(&topo), CpuDomainId::new("all"), domains, bundle).unwrap();
    assert_eq!(b.producing_domain().as_str(), "all");
    assert!(b.supports_placement(&CpuPlacement::NumaNode(NumaNodeId(1))));
    assert!(!b.supports_placement(&CpuPlacement::NumaNode(NumaNodeId(0))));
    let n1 = b.for_placement(CpuPlacement::NumaNode(NumaNodeId(1))).unwrap();
    assert_eq!(n1.producing_domain().as_str(), "n1");
    assert_eq!(n1.resolved_placement().unwrap().cpus().to_string(), "2-3");
    assert_ne!(n1.runtime_identity(), b.runtime_identity());
    let by_id = b.for_domain(&CpuDomainId::new("n1")).unwrap();
    assert_eq!(by_id.placement(), CpuPlacement::NumaNode(NumaNodeId(1)));
    let unknown = b.for_placement(CpuPlacement::NumaNode(NumaNodeId(0))).unwrap_err();
    assert!(matches!(unknown, CpuBackendError::Placement { source: EngineError::NoDomainForPlacement { .. } }));
    assert!(b.for_domain(&CpuDomainId::new("nope")).is_err());
}

#[test]
fn invalid_external_registries_are_typed_errors() {
    let topo = fixture_topology();
    let bundle = || CpuProviderBundle::new(ProviderKind::Faer).unwrap();
    let check = |domains: Vec<ExternalCpuDomain>, default: &str, want: fn(&EngineError) -> bool| {
        let err = CpuBackend::from_external_domains_on(Arc::clone(&topo), CpuDomainId::new(default), domains, bundle())
            .unwrap_err();
        match &err {
            CpuBackendError::ExternalRegistry { source } => assert!(want(source), "{source:?}"),
            other => panic!("expected ExternalRegistry, got {other:?}"),
        }
        let e: strata_tensor::Error = err.into();
        assert_eq!(e.op(), "external_domain_registry");
    };
    check(vec![], "a", |e| matches!(e, EngineError::EmptyRegistry));
    check(
        vec![inline_domain("a", CpuPlacement::AllAllowed, "0-3"), inline_domain("a", CpuPlacement::Auto, "0-1")],
        "a",
        |e| matches!(e, EngineError::DuplicateDomainId { .. }),
    );
    check(
        vec![inline_domain("a", CpuPlacement::AllAllowed, "0-3"), inline_domain("b", CpuPlacement::AllAllowed, "0-1")],
        "a",
        |e| matches!(e, EngineError::DuplicatePlacement { .. }),
    );
    check(vec![inline_domain("a", CpuPlacement::AllAllowed, "0-9")], "a", |e| {
        matches!(e, EngineError::CpusOutsideMask { .. })
    });
    check(vec![inline_domain("a", CpuPlacement::AllAllowed, "0-3")], "missing", |e| {
        matches!(e, EngineError::MissingDefault { .. })
    });
}

#[test]
fn managed_placement_on_a_two_node_fixture() {
    let (b, affinity) = fixture_backend(2, 2, 1);
    assert_eq!(b.execution_info().execution_mode, ExecutionMode::PinnedPool);
    for node in [0u32, 1] {
        let p = CpuPlacement::NumaNode(NumaNodeId(node));
        assert!(b.supports_placement(&p));
        let nb = b.for_placement(p).unwrap();
        let info = nb.execution_info();
        let expected: CpuSet = if node == 0 { "0-1" } else { "2-3" }.parse().unwrap();
        assert_eq!(info.domain_cpus.as_ref(), Some(&expected));
        assert_eq!(info.domain_id.as_str(), format!("numa{node}"));
        assert_eq!(info.guarantee, CpuPlacementGuarantee::Exact);
        assert_eq!(info.executor_affinity, AffinityClaim::PinnedVerified);
        assert_eq!(info.shutdown_owner, ShutdownOwner::Strata);
        assert!(matches!(nb.resolved_placement(), Some(ResolvedCpuPlacement::NumaNode { .. })));
        // Ops on the node run on its workers (explicit placement never runs inline).
        let x = TypedTensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
        let s = nb.sum(&x, &[0]).unwrap();
        assert_eq!(s.as_typed::<f64>().unwrap().data(), &[3.0]);
        // The workers were pinned to the node's CPUs.
        assert!(affinity.pinned_sets().contains(&expected));
    }
    let unknown = b.for_placement(CpuPlacement::NumaNode(NumaNodeId(5))).unwrap_err();
    assert!(matches!(unknown, CpuBackendError::Placement { source: EngineError::UnknownNumaNode { .. } }));
    assert!(!b.supports_placement(&CpuPlacement::NumaNode(NumaNodeId(5))));
    let all = b.for_placement(CpuPlacement::AllAllowed).unwrap();
    assert_eq!(all.producing_domain().as_str(), "all-allowed");
    // Auto and AllAllowed share the all-allowed domain, so the identity is kept.
    assert_eq!(all.runtime_identity(), b.runtime_identity());
}

#[test]
fn compatibility_mode_only_serves_auto() {
    let b = CpuBackendBuilder::default().topology(fixture_topology()).threads(1).pinning(false).build().unwrap();
    let info = b.execution_info();
    assert_eq!(info.execution_mode, ExecutionMode::Compatibility);
    assert_eq!(info.guarantee, CpuPlacementGuarantee::Advisory);
    assert!(b.supports_placement(&CpuPlacement::Auto));
    assert!(!b.supports_placement(&CpuPlacement::AllAllowed));
    let err = b.for_placement(CpuPlacement::NumaNode(NumaNodeId(0))).unwrap_err();
    assert!(matches!(err, CpuBackendError::Placement { source: EngineError::AffinityUnavailable { .. } }), "{err:?}");
}

#[test]
fn runtime_identity_rules() {
    let b = CpuBackend::with_threads(1).unwrap();
    let c = b.clone();
    assert_eq!(b.runtime_identity(), c.runtime_identity());
    let same_domain = b.for_placement(CpuPlacement::Auto).unwrap();
    assert_eq!(same_domain.runtime_identity(), b.runtime_identity());
    let other = CpuBackend::with_threads(1).unwrap();
    assert_ne!(other.runtime_identity(), b.runtime_identity());
    let rebundled = b.with_provider_bundle(CpuProviderBundle::new(ProviderKind::Faer).unwrap()).unwrap();
    assert_ne!(rebundled.runtime_identity(), b.runtime_identity());
    assert_eq!(rebundled.clone().runtime_identity(), rebundled.runtime_identity());
    assert_eq!(b.execution_info().runtime_identity, b.runtime_identity());
}

#[test]
fn execution_info_describes_the_default_domain() {
    let b = CpuBackend::with_threads(1).unwrap();
    let info = b.execution_info();
    assert_eq!(info.kind, ProviderKind::Faer);
    assert_eq!(info.requested_placement, CpuPlacement::Auto);
    assert_eq!(info.domain_id.as_str(), "all-allowed");
    assert_eq!(info.domain_cpus.as_ref(), Some(b.topology().allowed_cpus()));
    assert_eq!(info.ownership, DomainOwnership::Managed);
    assert_eq!(info.admission, DomainAdmission::CooperativeCpuSet);
    assert_eq!(info.workers, 1);
    assert_eq!(info.allocation_domain, info.domain_id);
    assert!(!info.topology.is_empty());
    let text = info.to_string();
    for needle in ["kind:", "placement:", "domain:", "provider:", "all-allowed"] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
}

#[test]
fn allocation_domain_binding_routes_recycled_buffers() {
    let (b, _) = fixture_backend(2, 2, 1);
    let n1 = b.for_placement(CpuPlacement::NumaNode(NumaNodeId(1))).unwrap();
    let bound = b.with_allocation_domain(n1.producing_domain()).unwrap();
    assert_eq!(bound.allocation_domain().as_str(), "numa1");
    assert_eq!(bound.producing_domain().as_str(), "all-allowed");
    let before = n1.buffer_pool_stats().buffers;
    bound.recycle(Tensor::from(TypedTensor::<f32>::zeros(&[256]).unwrap()));
    assert_eq!(n1.buffer_pool_stats().buffers, before + 1);
    assert!(b.with_allocation_domain(&CpuDomainId::new("numa9")).is_err());
}

#[test]
fn error_conversions_keep_kind_and_source() {
    use std::error::Error as _;
    let tensor = || strata_tensor::Error::shape_mismatch("add", "lhs [2] vs rhs [3]");
    let wrapped: CpuBackendError = tensor().into();
    assert!(matches!(wrapped, CpuBackendError::Tensor { .. }));
    let back: strata_tensor::Error = wrapped.into();
    assert_eq!((back.kind(), back.op(), back.message()), (tensor().kind(), tensor().op(), tensor().message()));

    let placement: CpuBackendError = EngineError::ZeroBudget.into();
    assert!(placement.source().is_some());
    let e: strata_tensor::Error = placement.into();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.source().is_some());
}
