//! The hwloc source (feature `hwloc`): the two-package, two-node XML in tests/data, and
//! agreement with the sysfs source on the live machine.
#![cfg(feature = "hwloc")]

use std::path::PathBuf;

use strata_topology::{CpuSet, HwlocSource, NumaNodeId, SysfsSource, TopologyError, TopologySource};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn cpus(list: &str) -> CpuSet {
    list.parse().unwrap()
}

#[test]
fn loads_two_packages_two_numa_nodes_from_xml() {
    let topo = HwlocSource::from_xml_file(data("hwloc-2pkg-2numa.xml")).load().unwrap();
    assert_eq!(topo.source(), "hwloc-xml");
    assert!(!topo.is_pinnable());
    assert_eq!(topo.allowed_cpus(), &cpus("0-3"));
    let nodes: Vec<(NumaNodeId, CpuSet)> = topo.nodes().iter().map(|n| (n.id(), n.cpus().clone())).collect();
    assert_eq!(nodes, vec![(NumaNodeId(0), cpus("0-1")), (NumaNodeId(1), cpus("2-3"))]);
    // Four single-thread cores, two per package.
    let cores: Vec<(Option<u32>, String)> = topo.cores().iter().map(|c| (c.package(), c.cpus().to_string())).collect();
    assert_eq!(
        cores,
        vec![
            (Some(0), "0".to_string()),
            (Some(0), "1".to_string()),
            (Some(1), "2".to_string()),
            (Some(1), "3".to_string())
        ]
    );
    // One 16 MiB L3 per package.
    let llc: Vec<(u8, Option<u64>, String)> =
        topo.llc_groups().iter().map(|g| (g.level(), g.size_bytes(), g.cpus().to_string())).collect();
    assert_eq!(llc, vec![(3, Some(16 << 20), "0-1".to_string()), (3, Some(16 << 20), "2-3".to_string())]);
    assert_eq!(topo.cpu_quota(), None);
    assert_eq!(topo.hardware_thread_budget().get(), 4);
}

#[test]
fn missing_and_garbage_xml_are_errors() {
    let missing = HwlocSource::from_xml_file(data("no-such-file.xml")).load();
    assert!(matches!(missing, Err(TopologyError::Io { .. })), "{missing:?}");

    let garbage = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("garbage-hwloc.xml");
    std::fs::write(&garbage, "<not hwloc").unwrap();
    let result = HwlocSource::from_xml_file(&garbage).load();
    let _ = std::fs::remove_file(&garbage);
    assert!(matches!(result, Err(TopologyError::Hwloc { .. })), "{result:?}");
}

#[cfg(target_os = "linux")]
#[test]
fn agrees_with_sysfs_on_the_live_machine() {
    let hw = HwlocSource::live().load().unwrap();
    let fs = SysfsSource::live().load().unwrap();
    assert_eq!(hw.source(), "hwloc");
    assert!(hw.is_pinnable());
    assert_eq!(hw.allowed_cpus(), fs.allowed_cpus());
    assert_eq!(hw.nodes(), fs.nodes());
    let core_sets =
        |t: &strata_topology::CpuTopology| -> Vec<CpuSet> { t.cores().iter().map(|c| c.cpus().clone()).collect() };
    assert_eq!(core_sets(&hw), core_sets(&fs));
    let llc_sets = |t: &strata_topology::CpuTopology| -> Vec<(u8, CpuSet)> {
        t.llc_groups().iter().map(|g| (g.level(), g.cpus().clone())).collect()
    };
    assert_eq!(llc_sets(&hw), llc_sets(&fs));
    for a in fs.nodes() {
        for b in fs.nodes() {
            // hwloc omits the matrix on single-node machines; compare when both know it.
            if let (Some(x), Some(y)) = (hw.distance(a.id(), b.id()), fs.distance(a.id(), b.id())) {
                assert_eq!(x, y);
            }
        }
    }
    assert_eq!(hw.cpu_quota(), fs.cpu_quota());
    assert_eq!(hw.hardware_thread_budget(), fs.hardware_thread_budget());
}
