//! Placement resolution against synthetic two-node topologies, and registry validation of
//! managed domains on them (nothing is built: resolution and budgets only).

use std::sync::Arc;

use strata_engine::{
    CpuPlacement, CpuPlacementGuarantee, EngineError, ManagedDomainRegistry, ResolvedCpuPlacement, resolve_placement,
};
use strata_provider::{GemmDTypes, PlacementControl, ProviderCapabilities, ThreadControl};
use strata_topology::{CpuSet, CpuTopology, NumaNodeId, ParallelismSource, SyntheticTopology, TopologySource};

/// Two nodes of four cores with SMT pairs: node 0 = CPUs 0-3,8-11, node 1 = 4-7,12-15.
fn two_nodes() -> CpuTopology {
    SyntheticTopology::new(2, 4, 2).unwrap().load().unwrap()
}

fn set(list: &str) -> CpuSet {
    list.parse().unwrap()
}

#[test]
fn node_placement_resolves_to_the_nodes_cpus() {
    let topo = two_nodes();
    for (node, cpus) in [(0, "0-3,8-11"), (1, "4-7,12-15")] {
        let r = resolve_placement(&topo, &CpuPlacement::NumaNode(NumaNodeId(node)), true).unwrap();
        assert_eq!(r.requested, CpuPlacement::NumaNode(NumaNodeId(node)));
        assert_eq!(r.resolved, ResolvedCpuPlacement::NumaNode { id: NumaNodeId(node), cpus: set(cpus) });
        assert_eq!(r.resolved.numa_node(), Some(NumaNodeId(node)));
        assert_eq!(r.guarantee, CpuPlacementGuarantee::Exact);
    }
}

#[test]
fn all_allowed_and_auto_resolve_to_the_mask() {
    let topo = two_nodes();
    let all = resolve_placement(&topo, &CpuPlacement::AllAllowed, true).unwrap();
    assert_eq!(all.resolved, ResolvedCpuPlacement::AllAllowed { cpus: set("0-15") });
    assert_eq!(all.guarantee, CpuPlacementGuarantee::Exact);
    let auto = resolve_placement(&topo, &CpuPlacement::Auto, true).unwrap();
    assert_eq!(auto.requested, CpuPlacement::Auto);
    assert_eq!(auto.resolved.cpus(), &set("0-15"));
    assert_eq!(auto.resolved.as_request(), CpuPlacement::AllAllowed);
}

#[test]
fn a_restricted_affinity_shrinks_nodes_and_drops_empty_ones() {
    // Allowed: CPUs 2-5 -> node 0 keeps 2-3, node 1 keeps 4-5.
    let topo = SyntheticTopology::new(2, 4, 1).unwrap().with_affinity(set("2-5")).load().unwrap();
    let n0 = resolve_placement(&topo, &CpuPlacement::NumaNode(NumaNodeId(0)), true).unwrap();
    assert_eq!(n0.resolved.cpus(), &set("2-3"));
    let all = resolve_placement(&topo, &CpuPlacement::AllAllowed, true).unwrap();
    assert_eq!(all.resolved.cpus(), &set("2-5"));
    // Only node 0 allowed: node 1 is unknown to this process.
    let topo = SyntheticTopology::new(2, 4, 1).unwrap().with_affinity(set("0-3")).load().unwrap();
    match resolve_placement(&topo, &CpuPlacement::NumaNode(NumaNodeId(1)), true) {
        Err(EngineError::UnknownNumaNode { node, available }) => {
            assert_eq!(node, NumaNodeId(1));
            assert_eq!(available, "0");
        }
        other => panic!("expected UnknownNumaNode, got {other:?}"),
    }
}

#[test]
fn an_unknown_node_is_a_typed_error() {
    let err = resolve_placement(&two_nodes(), &CpuPlacement::NumaNode(NumaNodeId(7)), true).unwrap_err();
    assert!(matches!(err, EngineError::UnknownNumaNode { node: NumaNodeId(7), .. }));
    assert!(err.to_string().contains("0, 1"), "{err}");
    let e: strata_tensor::Error = err.into();
    assert_eq!(e.kind(), strata_tensor::ErrorKind::InvalidArgument);
    assert_eq!(e.op(), "resolve_placement");
}

#[test]
fn without_pinning_only_auto_resolves_and_it_is_advisory() {
    let topo = two_nodes();
    let auto = resolve_placement(&topo, &CpuPlacement::Auto, false).unwrap();
    assert_eq!(auto.guarantee, CpuPlacementGuarantee::Advisory);
    for p in [CpuPlacement::AllAllowed, CpuPlacement::NumaNode(NumaNodeId(0))] {
        let err = resolve_placement(&topo, &p, false).unwrap_err();
        assert!(matches!(err, EngineError::AffinityUnavailable { .. }), "{p}: {err:?}");
        let e: strata_tensor::Error = err.into();
        assert_eq!(e.kind(), strata_tensor::ErrorKind::Unsupported);
    }
}

#[test]
fn a_topology_without_numa_information_refuses_node_placement() {
    let topo = ParallelismSource.load().unwrap();
    let err = resolve_placement(&topo, &CpuPlacement::NumaNode(NumaNodeId(0)), true).unwrap_err();
    assert!(matches!(err, EngineError::NumaUnavailable { .. }), "{err:?}");
    assert!(resolve_placement(&topo, &CpuPlacement::AllAllowed, true).is_ok());
}

#[test]
fn managed_registry_validates_its_budget_against_the_mask() {
    let topo = Arc::new(two_nodes());
    assert!(matches!(
        ManagedDomainRegistry::builder(Arc::clone(&topo)).thread_budget(0).build(),
        Err(EngineError::ZeroBudget)
    ));
    match ManagedDomainRegistry::builder(Arc::clone(&topo)).thread_budget(17).build() {
        Err(EngineError::BudgetExceedsCpus { budget, cpus }) => assert_eq!((budget, cpus), (17, 16)),
        other => panic!("expected BudgetExceedsCpus, got {other:?}"),
    }
    let reg = ManagedDomainRegistry::builder(Arc::clone(&topo)).thread_budget(16).build().unwrap();
    assert_eq!(reg.thread_budget(), 16);
    let r = reg.resolve(&CpuPlacement::NumaNode(NumaNodeId(1))).unwrap();
    assert_eq!(r.resolved.cpus(), &set("4-7,12-15"));
    assert!(matches!(reg.domain(&CpuPlacement::NumaNode(NumaNodeId(2))), Err(EngineError::UnknownNumaNode { .. })));
    assert!(reg.built_domains().is_empty(), "resolution alone builds nothing");
}

fn caps(threads: ThreadControl, placement: PlacementControl) -> ProviderCapabilities {
    ProviderCapabilities {
        name: "double".into(),
        threads,
        placement,
        dtypes: GemmDTypes::ALL,
        needs_unit_stride: false,
    }
}

#[test]
fn a_provider_with_its_own_threads_cannot_honour_an_exact_node() {
    let topo = two_nodes();
    let node = resolve_placement(&topo, &CpuPlacement::NumaNode(NumaNodeId(0)), true).unwrap();
    let all = resolve_placement(&topo, &CpuPlacement::AllAllowed, true).unwrap();
    let blas_team = caps(ThreadControl::GlobalOnly, PlacementControl::OwnWorkers);
    match node.check_provider(&blas_team, 4) {
        Err(EngineError::ProviderCannotHonour { provider, placement, .. }) => {
            assert_eq!(provider, "double");
            assert!(placement.contains("numa-node 0"), "{placement}");
        }
        other => panic!("expected ProviderCannotHonour, got {other:?}"),
    }
    // Budget 1: the provider runs sequentially on our pinned worker.
    assert!(node.check_provider(&blas_team, 1).is_ok());
    // All-allowed: an exclusive entry covers its threads.
    assert!(all.check_provider(&blas_team, 4).is_ok());
    // Providers on our workers or the calling thread inherit the pinning.
    for ok in [
        caps(ThreadControl::PerCall, PlacementControl::EngineWorkers),
        caps(ThreadControl::Sequential, PlacementControl::CallingThread),
        caps(ThreadControl::GlobalOnly, PlacementControl::CallingThread),
    ] {
        assert!(node.check_provider(&ok, 4).is_ok(), "{ok:?}");
    }
    let reg = ManagedDomainRegistry::builder(Arc::new(topo)).thread_budget(8).build().unwrap();
    let err = reg.resolve_for_provider(&CpuPlacement::NumaNode(NumaNodeId(1)), &blas_team).unwrap_err();
    let e: strata_tensor::Error = err.into();
    assert_eq!(e.kind(), strata_tensor::ErrorKind::Unsupported);
    assert!(reg.resolve_for_provider(&CpuPlacement::Auto, &blas_team).is_ok());
}
