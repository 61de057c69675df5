//! CpuTopology::from_description and the synthetic source, on hand-built machines.

use strata_topology::{
    CacheDescription, CoreDescription, CpuId, CpuQuota, CpuSet, CpuTopology, MachineDescription, NodeDescription,
    NumaNodeId, ParallelismSource, SyntheticTopology, TopologyError, TopologySource,
};

fn cpus(list: &str) -> CpuSet {
    list.parse().unwrap()
}

fn node(id: u32, list: &str) -> NodeDescription {
    NodeDescription::new(NumaNodeId(id), Some(cpus(list)))
}

#[test]
fn synthetic_two_nodes_four_cores_two_threads() {
    let topo = SyntheticTopology::new(2, 4, 2).unwrap().load().unwrap();
    assert_eq!(topo.source(), "synthetic");
    assert!(!topo.is_pinnable());
    assert_eq!(topo.allowed_cpus(), &cpus("0-15"));
    // Independent enumeration of the documented numbering: thread t of core c on node n
    // is t * 8 + n * 4 + c.
    for n in 0..2u32 {
        let expected: Vec<u32> = {
            let mut v: Vec<u32> = (0..4).flat_map(|c| (0..2).map(move |t| t * 8 + n * 4 + c)).collect();
            v.sort();
            v
        };
        let got: Vec<u32> = topo.nodes()[n as usize].cpus().iter().map(|c| c.0).collect();
        assert_eq!(got, expected);
        for c in 0..4 {
            let core = topo.smt_siblings(CpuId(n * 4 + c)).unwrap();
            assert_eq!(core, &CpuSet::new([CpuId(n * 4 + c), CpuId(8 + n * 4 + c)]).unwrap());
        }
    }
    assert_eq!(topo.cores().len(), 8);
    assert!(topo.cores().iter().all(|c| c.cpus().len() == 2));
    assert_eq!(topo.llc_groups().len(), 2);
    assert_eq!(topo.distance(NumaNodeId(1), NumaNodeId(0)), Some(20));
    assert_eq!(topo.hardware_thread_budget().get(), 16);
}

#[test]
fn synthetic_rejects_impossible_machines() {
    for (n, c, t) in [(0, 4, 2), (2, 0, 2), (2, 4, 0), (1024, 1024, 1), (u32::MAX, u32::MAX, 2)] {
        assert!(
            matches!(SyntheticTopology::new(n, c, t), Err(TopologyError::InvalidDescription { .. })),
            "{n}x{c}x{t}"
        );
    }
    // The largest allowed machine works.
    assert!(SyntheticTopology::new(1, 65_536, 1).is_ok());
}

#[test]
fn synthetic_with_affinity_and_quota() {
    let topo = SyntheticTopology::new(2, 4, 1)
        .unwrap()
        .with_affinity(cpus("0-7"))
        .with_quota(CpuQuota::new(50_000, 100_000).unwrap())
        .load()
        .unwrap();
    assert_eq!(topo.thread_budget(None).unwrap().get(), 1);
    let disjoint = SyntheticTopology::new(1, 2, 1).unwrap().with_affinity(cpus("5")).load();
    assert!(matches!(disjoint, Err(TopologyError::NoAllowedCpus { .. })));
}

#[test]
fn description_without_nodes_is_one_node_of_allowed_cpus() {
    let mut desc = MachineDescription::new(cpus("0-5"), "test");
    desc.online = Some(cpus("0-3"));
    let topo = CpuTopology::from_description(desc).unwrap();
    assert_eq!(topo.allowed_cpus(), &cpus("0-3"));
    assert_eq!(topo.nodes().len(), 1);
    assert_eq!(topo.nodes()[0].id(), NumaNodeId(0));
    assert_eq!(topo.nodes()[0].cpus(), &cpus("0-3"));
}

#[test]
fn description_errors() {
    let base = || {
        let mut d = MachineDescription::new(cpus("0-7"), "test");
        d.nodes = vec![node(0, "0-3"), node(1, "4-7")];
        d
    };
    let mut d = base();
    d.nodes.push(node(1, "8"));
    assert!(matches!(CpuTopology::from_description(d), Err(TopologyError::DuplicateNode { node: NumaNodeId(1) })));

    let mut d = base();
    d.nodes[1] = node(1, "2-7");
    assert!(matches!(CpuTopology::from_description(d), Err(TopologyError::OverlappingNodes { cpu: CpuId(2), .. })));

    // Node CPUs that are all offline.
    let mut d = base();
    d.online = Some(cpus("8-9"));
    assert!(matches!(CpuTopology::from_description(d), Err(TopologyError::NoAllowedCpus { .. })));

    // A distance table that misses a pair.
    let mut d = base();
    d.nodes[0].distances = vec![(NumaNodeId(0), 10), (NumaNodeId(1), 20)];
    d.nodes[1].distances = vec![(NumaNodeId(1), 10)];
    assert!(matches!(CpuTopology::from_description(d), Err(TopologyError::InvalidDescription { .. })));

    // Caches that overlap without being equal.
    let mut d = base();
    d.last_level_caches =
        vec![CacheDescription::new(3, None, cpus("0-3")), CacheDescription::new(3, None, cpus("3-5"))];
    assert!(matches!(CpuTopology::from_description(d), Err(TopologyError::InvalidDescription { .. })));

    // Repeated identical cores are merged, not rejected.
    let mut d = base();
    d.cores = vec![CoreDescription::new(Some(0), cpus("0-1")), CoreDescription::new(Some(0), cpus("0-1"))];
    let topo = CpuTopology::from_description(d).unwrap();
    assert_eq!(topo.cores().len(), 7); // one pair + six single-thread cores
    assert_eq!(topo.cores()[0].cpus(), &cpus("0-1"));
}

#[test]
fn cores_cover_exactly_the_allowed_cpus() {
    let topo = SyntheticTopology::new(2, 3, 2).unwrap().with_affinity(cpus("1-4,9")).load().unwrap();
    let covered = topo
        .cores()
        .iter()
        .map(|c| c.cpus().clone())
        .reduce(|a, b| {
            assert!(!a.overlaps(&b));
            a.union(&b)
        })
        .unwrap();
    assert_eq!(&covered, topo.allowed_cpus());
    for node in topo.nodes() {
        assert!(node.cpus().is_subset(topo.allowed_cpus()));
    }
}

#[test]
fn parallelism_source_is_all_allowed_one_node() {
    let topo = ParallelismSource.load().unwrap();
    let n = std::thread::available_parallelism().unwrap().get();
    assert_eq!(topo.allowed_cpus().len(), n);
    assert_eq!(topo.allowed_cpus().first(), CpuId(0));
    assert_eq!(topo.nodes().len(), 1);
    assert_eq!(topo.source(), "available_parallelism");
    assert!(!topo.is_pinnable());
    assert_eq!(topo.cpu_quota(), None);
}

#[test]
fn sources_are_object_safe() {
    let sources: Vec<Box<dyn TopologySource>> = vec![
        Box::new(SyntheticTopology::new(1, 2, 1).unwrap()),
        Box::new(ParallelismSource),
        strata_topology::live_source(),
    ];
    for source in &sources {
        let topo = source.load().unwrap();
        assert!(topo.hardware_thread_budget().get() <= topo.allowed_cpus().len());
    }
}
