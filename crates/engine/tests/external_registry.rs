//! Validation of external-domain registries: one typed error per violation.

mod common;

use std::sync::Arc;

use common::CountingExecutor;
use strata_engine::{
    CpuDomainExecutor, CpuPlacement, CpuPlacementGuarantee, DomainAdmission, DomainOwnership, EngineError,
    ExternalCpuDomain, ExternalDomainRegistry, InlineExecutor, ResolvedCpuPlacement,
};
use strata_topology::{CpuSet, NumaNodeId};

fn set(list: &str) -> CpuSet {
    list.parse().unwrap()
}

fn exec() -> Arc<dyn CpuDomainExecutor> {
    Arc::new(InlineExecutor)
}

fn node(n: u32, cpus: &str) -> ExternalCpuDomain {
    ExternalCpuDomain::cooperative(
        format!("node{n}").as_str(),
        CpuPlacement::NumaNode(NumaNodeId(n)),
        set(cpus),
        CpuPlacementGuarantee::Exact,
        exec(),
    )
}

/// A synthetic two-node machine: node 0 = CPUs 0-3, node 1 = CPUs 4-7.
fn mask() -> CpuSet {
    set("0-7")
}

#[test]
fn a_valid_registry_serves_each_placement_and_defaults_auto() {
    let reg = ExternalDomainRegistry::builder(mask())
        .domain(node(0, "0-3"))
        .domain(node(1, "4-7"))
        .domain(ExternalCpuDomain::cooperative(
            "all",
            CpuPlacement::AllAllowed,
            mask(),
            CpuPlacementGuarantee::Exact,
            CountingExecutor::new(8),
        ))
        .default_domain("all")
        .build()
        .unwrap();
    assert_eq!(reg.domains().len(), 3);
    let n1 = reg.domain_for(&CpuPlacement::NumaNode(NumaNodeId(1))).unwrap();
    assert_eq!(n1.id().as_str(), "node1");
    assert_eq!(n1.cpus(), Some(&set("4-7")));
    assert_eq!(n1.resolved_placement(), Some(&ResolvedCpuPlacement::NumaNode { id: NumaNodeId(1), cpus: set("4-7") }));
    assert_eq!(n1.ownership(), DomainOwnership::External);
    assert_eq!(n1.admission(), DomainAdmission::CooperativeCpuSet);
    assert_eq!(n1.guarantee(), CpuPlacementGuarantee::Exact);
    assert_eq!(n1.budget(), 1, "an inline executor has one worker");
    let auto = reg.domain_for(&CpuPlacement::Auto).unwrap();
    assert_eq!(auto.id().as_str(), "all");
    assert_eq!(auto.budget(), 8, "default budget: the executor's workers, capped by the CPUs");
    assert!(matches!(
        reg.domain_for(&CpuPlacement::NumaNode(NumaNodeId(5))),
        Err(EngineError::NoDomainForPlacement { .. })
    ));
    assert_eq!(reg.domain(&"node0".into()).unwrap().id().as_str(), "node0");
    assert!(reg.domain(&"nope".into()).is_none());
}

#[test]
fn caller_managed_domains_have_no_cpu_set_and_are_advisory() {
    let reg = ExternalDomainRegistry::builder(mask())
        .domain(ExternalCpuDomain::caller_managed("mine", CpuPlacement::Auto, CountingExecutor::new(3)))
        .default_domain("mine")
        .build()
        .unwrap();
    let d = reg.default_domain();
    assert_eq!(d.cpus(), None);
    assert_eq!(d.resolved_placement(), None);
    assert_eq!(d.admission(), DomainAdmission::CallerManaged);
    assert_eq!(d.guarantee(), CpuPlacementGuarantee::Advisory);
    assert_eq!(d.budget(), 3);
}

#[test]
fn an_empty_registry_is_refused() {
    assert!(matches!(ExternalDomainRegistry::builder(mask()).build(), Err(EngineError::EmptyRegistry)));
}

#[test]
fn a_duplicate_id_is_refused() {
    let dup =
        ExternalCpuDomain::cooperative("node0", CpuPlacement::AllAllowed, mask(), CpuPlacementGuarantee::Exact, exec());
    let err =
        ExternalDomainRegistry::builder(mask()).domain(node(0, "0-3")).domain(dup).default_domain("node0").build();
    match err {
        Err(EngineError::DuplicateDomainId { id }) => assert_eq!(id.as_str(), "node0"),
        other => panic!("expected DuplicateDomainId, got {other:?}"),
    }
}

#[test]
fn a_duplicate_placement_is_refused() {
    let again = ExternalCpuDomain::cooperative(
        "other",
        CpuPlacement::NumaNode(NumaNodeId(0)),
        set("0-1"),
        CpuPlacementGuarantee::Advisory,
        exec(),
    );
    let err =
        ExternalDomainRegistry::builder(mask()).domain(node(0, "0-3")).domain(again).default_domain("node0").build();
    match err {
        Err(EngineError::DuplicatePlacement { first, second, placement }) => {
            assert_eq!((first.as_str(), second.as_str()), ("node0", "other"));
            assert_eq!(placement, "numa-node 0");
        }
        other => panic!("expected DuplicatePlacement, got {other:?}"),
    }
}

#[test]
fn cpus_outside_the_mask_are_refused_and_named() {
    let err = ExternalDomainRegistry::builder(mask()).domain(node(1, "6-9")).default_domain("node1").build();
    match err {
        Err(EngineError::CpusOutsideMask { outside, mask: m }) => {
            assert_eq!(outside, set("8-9"));
            assert_eq!(m, mask());
        }
        other => panic!("expected CpusOutsideMask, got {other:?}"),
    }
}

#[test]
fn a_missing_default_is_refused() {
    let none = ExternalDomainRegistry::builder(mask()).domain(node(0, "0-3")).build();
    assert!(matches!(none, Err(EngineError::MissingDefault { requested: None })));
    let unknown = ExternalDomainRegistry::builder(mask()).domain(node(0, "0-3")).default_domain("ghost").build();
    match unknown {
        Err(EngineError::MissingDefault { requested: Some(id) }) => assert_eq!(id.as_str(), "ghost"),
        other => panic!("expected MissingDefault, got {other:?}"),
    }
}

#[test]
fn an_exact_all_allowed_domain_must_cover_the_mask() {
    let partial = ExternalCpuDomain::cooperative(
        "all",
        CpuPlacement::AllAllowed,
        set("0-5"),
        CpuPlacementGuarantee::Exact,
        exec(),
    );
    match ExternalDomainRegistry::builder(mask()).domain(partial).default_domain("all").build() {
        Err(EngineError::ExactAllAllowedMismatch { declared, mask: m, .. }) => {
            assert_eq!(declared, set("0-5"));
            assert_eq!(m, mask());
        }
        other => panic!("expected ExactAllAllowedMismatch, got {other:?}"),
    }
    // Advisory may declare a subset.
    let advisory = ExternalCpuDomain::cooperative(
        "all",
        CpuPlacement::AllAllowed,
        set("0-5"),
        CpuPlacementGuarantee::Advisory,
        exec(),
    );
    assert!(ExternalDomainRegistry::builder(mask()).domain(advisory).default_domain("all").build().is_ok());
}

#[test]
fn bad_budgets_are_refused() {
    let zero = node(0, "0-3").with_budget(0);
    assert!(matches!(
        ExternalDomainRegistry::builder(mask()).domain(zero).default_domain("node0").build(),
        Err(EngineError::ZeroBudget)
    ));
    let big = node(0, "0-3").with_budget(5);
    match ExternalDomainRegistry::builder(mask()).domain(big).default_domain("node0").build() {
        Err(EngineError::BudgetExceedsCpus { budget, cpus }) => assert_eq!((budget, cpus), (5, 4)),
        other => panic!("expected BudgetExceedsCpus, got {other:?}"),
    }
}

#[test]
fn registry_errors_convert_to_invalid_argument() {
    let e: strata_tensor::Error = EngineError::EmptyRegistry.into();
    assert_eq!(e.kind(), strata_tensor::ErrorKind::InvalidArgument);
    assert_eq!(e.op(), "domain_registry");
    assert!(e.message().contains("at least one domain"));
}

/// A provider double owning a process-wide thread team (like OpenBLAS).
#[derive(Debug)]
struct TeamProvider;

impl strata_provider::GemmProvider for TeamProvider {
    fn capabilities(&self) -> strata_provider::ProviderCapabilities {
        strata_provider::ProviderCapabilities {
            name: "team".into(),
            threads: strata_provider::ThreadControl::GlobalOnly,
            placement: strata_provider::PlacementControl::OwnWorkers,
            dtypes: strata_provider::GemmDTypes::ALL,
            needs_unit_stride: true,
        }
    }
}

#[test]
fn domains_describe_their_contract_to_provider_bundles() {
    use strata_provider::{CpuProviderBundle, DomainAdmission as PA, DomainPlacement as PP, ProviderKind};
    let reg = ExternalDomainRegistry::builder(mask())
        .domain(node(0, "0-3").with_budget(4))
        .domain(node(1, "4-7").with_budget(1))
        .domain(ExternalCpuDomain::caller_managed("mine", CpuPlacement::Auto, CountingExecutor::new(2)))
        .default_domain("mine")
        .build()
        .unwrap();
    let n0 = reg.domain(&"node0".into()).unwrap();
    let c = n0.provider_contract();
    assert_eq!(
        (c.label.as_str(), c.thread_budget, c.placement, c.admission),
        ("node0", 4, PP::ExactPinned, PA::CooperativeCpuSet)
    );
    let mine = reg.domain(&"mine".into()).unwrap().provider_contract();
    assert_eq!((mine.placement, mine.admission), (PP::CallerManaged, PA::CallerManaged));

    let team = CpuProviderBundle::builder(ProviderKind::Injected).provider(Arc::new(TeamProvider)).build().unwrap();
    match n0.validate_provider_bundle(&team) {
        Err(EngineError::ProviderBundle { domain, .. }) => assert_eq!(domain.as_str(), "node0"),
        other => panic!("expected ProviderBundle, got {other:?}"),
    }
    // Budget 1: the team provider is told to run single-threaded, which any domain allows.
    assert!(reg.domain(&"node1".into()).unwrap().validate_provider_bundle(&team).is_ok());
}

#[test]
fn an_empty_cpu_set_cannot_reach_the_engine() {
    // Every engine entry point takes a `CpuSet`, which cannot be empty: the bad input is
    // refused where the set is made, before any domain or executor sees it.
    assert!(CpuSet::new(Vec::new()).is_err());
    assert!("".parse::<CpuSet>().is_err());
    assert!(" ".parse::<CpuSet>().is_err());
}

#[test]
fn against_a_topology_node_domains_must_match_their_node() {
    use strata_topology::{SyntheticTopology, TopologySource};
    let topo = SyntheticTopology::new(2, 4, 1).unwrap().load().unwrap();
    let ok = ExternalDomainRegistry::builder_for_topology(&topo)
        .domain(node(0, "0-3"))
        .domain(node(1, "4-7"))
        .default_domain("node0")
        .build();
    assert!(ok.is_ok(), "{ok:?}");
    match ExternalDomainRegistry::builder_for_topology(&topo).domain(node(1, "4-6")).default_domain("node1").build() {
        Err(EngineError::ExactNodeMismatch { node, declared, node_cpus, .. }) => {
            assert_eq!(node, NumaNodeId(1));
            assert_eq!((declared, node_cpus), (set("4-6"), set("4-7")));
        }
        other => panic!("expected ExactNodeMismatch, got {other:?}"),
    }
    match ExternalDomainRegistry::builder_for_topology(&topo).domain(node(3, "0-1")).default_domain("node3").build() {
        Err(EngineError::UnknownNumaNode { node, available }) => {
            assert_eq!(node, NumaNodeId(3));
            assert_eq!(available, "0, 1");
        }
        other => panic!("expected UnknownNumaNode, got {other:?}"),
    }
    // The topology's allowed CPUs are the mask.
    let outside = ExternalCpuDomain::cooperative(
        "x",
        CpuPlacement::AllAllowed,
        set("0-8"),
        CpuPlacementGuarantee::Advisory,
        exec(),
    );
    assert!(matches!(
        ExternalDomainRegistry::builder_for_topology(&topo).domain(outside).default_domain("x").build(),
        Err(EngineError::CpusOutsideMask { .. })
    ));
}
