//! Every malformed, missing or unreadable input gives a typed error (or the documented
//! fallback), never a panic. Each test edits a private copy of a fixture machine.

mod common;

use std::path::Path;

use common::TempMachine;
use strata_topology::{CpuId, NumaNodeId, TopologyError};

fn ends_with(path: &Path, suffix: &str) -> bool {
    path.ends_with(suffix)
}

#[track_caller]
fn expect_io(machine: &TempMachine, suffix: &str) {
    match machine.load() {
        Err(TopologyError::Io { path, .. }) if ends_with(&path, suffix) => {}
        other => panic!("expected an I/O error on {suffix}, got {other:?}"),
    }
}

#[track_caller]
fn expect_malformed(machine: &TempMachine, suffix: &str) {
    match machine.load() {
        Err(TopologyError::Malformed { path, .. }) if ends_with(&path, suffix) => {}
        other => panic!("expected a malformed-file error on {suffix}, got {other:?}"),
    }
}

#[track_caller]
fn expect_invalid_quota(machine: &TempMachine, suffix: &str) {
    match machine.load() {
        Err(TopologyError::InvalidQuota { path, .. }) if ends_with(&path, suffix) => {}
        other => panic!("expected an invalid-quota error on {suffix}, got {other:?}"),
    }
}

#[test]
fn missing_online_file_means_every_affinity_cpu_is_online() {
    let m = TempMachine::copy_of("two-nodes-smt");
    m.remove("sys/devices/system/cpu/online");
    m.write("proc/self/status", "Cpus_allowed_list:\t2-5\n");
    let topo = m.load().unwrap();
    assert_eq!(topo.allowed_cpus(), &common::cpus("2-5"));
    assert_eq!(topo.nodes().len(), 2);
}

#[test]
fn no_sysfs_at_all_is_one_node_of_the_affinity() {
    let m = TempMachine::copy_of("no-node-folders");
    m.remove("sys");
    let topo = m.load().unwrap();
    assert_eq!(topo.allowed_cpus(), &common::cpus("0-3"));
    assert_eq!(topo.nodes().len(), 1);
    assert_eq!(topo.cores().len(), 4);
}

#[test]
fn unreadable_files() {
    for rel in [
        "sys/devices/system/cpu/online",
        "sys/devices/system/node/node1/cpulist",
        "sys/devices/system/node/node0/distance",
        "sys/devices/system/cpu/cpu2/topology/thread_siblings_list",
        "sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_list",
        "proc/self/status",
        "proc/self/cgroup",
        "proc/self/mountinfo",
    ] {
        let m = TempMachine::copy_of("two-nodes-smt");
        m.make_unreadable(rel);
        expect_io(&m, rel);
    }
    let m = TempMachine::copy_of("container-v2");
    m.make_unreadable("sys/fs/cgroup/kubepods/pod1/cpu.max");
    expect_io(&m, "sys/fs/cgroup/kubepods/pod1/cpu.max");
}

#[test]
fn node_folder_without_its_files() {
    let m = TempMachine::copy_of("two-nodes-smt");
    m.remove("sys/devices/system/node/node1/cpulist");
    expect_io(&m, "node1/cpulist");
    let m = TempMachine::copy_of("two-nodes-smt");
    m.remove("sys/devices/system/node/node0/distance");
    expect_io(&m, "node0/distance");
}

#[test]
fn malformed_cpulists_in_files() {
    for list in ["0-x", "3-0", "0-99999999", "4294967296", "0,,1", "garbage"] {
        let m = TempMachine::copy_of("two-nodes-smt");
        m.write("sys/devices/system/node/node1/cpulist", list);
        expect_malformed(&m, "node1/cpulist");
    }
    let m = TempMachine::copy_of("two-nodes-smt");
    m.write("sys/devices/system/cpu/online", "\n");
    expect_malformed(&m, "cpu/online");
    let m = TempMachine::copy_of("two-nodes-smt");
    m.write("sys/devices/system/cpu/cpu2/topology/thread_siblings_list", "3-2");
    expect_malformed(&m, "cpu2/topology/thread_siblings_list");
    let m = TempMachine::copy_of("two-nodes-smt");
    m.write("proc/self/status", "Cpus_allowed_list:\t7-0\n");
    expect_malformed(&m, "proc/self/status");
}

#[test]
fn duplicate_node_ids() {
    // `node01` and `node1` both name node 1.
    let m = TempMachine::copy_of("two-nodes-smt");
    m.write("sys/devices/system/node/node01/cpulist", "\n");
    m.write("sys/devices/system/node/node01/distance", "10 21 21\n");
    m.write("sys/devices/system/node/node0/distance", "10 21 21\n");
    m.write("sys/devices/system/node/node1/distance", "21 10 10\n");
    match m.load() {
        Err(TopologyError::DuplicateNode { node }) => assert_eq!(node, NumaNodeId(1)),
        other => panic!("expected a duplicate-node error, got {other:?}"),
    }
}

#[test]
fn overlapping_nodes() {
    let m = TempMachine::copy_of("two-nodes-smt");
    m.write("sys/devices/system/node/node1/cpulist", "3-7\n");
    match m.load() {
        Err(TopologyError::OverlappingNodes { cpu, first, second }) => {
            assert_eq!((cpu, first, second), (CpuId(3), NumaNodeId(0), NumaNodeId(1)));
        }
        other => panic!("expected an overlapping-nodes error, got {other:?}"),
    }
}

#[test]
fn malformed_distances() {
    for text in ["10\n", "10 21 30\n", "10 x\n", "10 -21\n", ""] {
        let m = TempMachine::copy_of("two-nodes-smt");
        m.write("sys/devices/system/node/node0/distance", text);
        expect_malformed(&m, "node0/distance");
    }
}

#[test]
fn huge_node_number() {
    let m = TempMachine::copy_of("two-nodes-smt");
    m.write("sys/devices/system/node/node99999999999/cpulist", "\n");
    expect_malformed(&m, "node99999999999");
}

#[test]
fn affinity_problems() {
    let m = TempMachine::copy_of("two-nodes-smt");
    m.remove("proc/self/status");
    expect_io(&m, "proc/self/status");
    let m = TempMachine::copy_of("two-nodes-smt");
    m.write("proc/self/status", "Name:\ttest\n");
    expect_malformed(&m, "proc/self/status");
    let m = TempMachine::copy_of("two-nodes-smt");
    m.write("proc/self/status", "Cpus_allowed_list:\t100-101\n");
    match m.load() {
        Err(TopologyError::NoAllowedCpus { allowed, present }) => {
            assert_eq!((allowed.as_str(), present.as_str()), ("100-101", "0-7"));
        }
        other => panic!("expected no allowed CPUs, got {other:?}"),
    }
}

#[test]
fn malformed_cache_and_package_files() {
    let m = TempMachine::copy_of("two-nodes-smt");
    m.write("sys/devices/system/cpu/cpu0/cache/index3/level", "three\n");
    expect_malformed(&m, "cpu0/cache/index3/level");
    let m = TempMachine::copy_of("two-nodes-smt");
    m.write("sys/devices/system/cpu/cpu0/cache/index3/size", "big\n");
    expect_malformed(&m, "cpu0/cache/index3/size");
    let m = TempMachine::copy_of("two-nodes-smt");
    m.write("sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_list", "4-7\n");
    expect_malformed(&m, "cpu0/cache/index3/shared_cpu_list");
    let m = TempMachine::copy_of("two-nodes-smt");
    m.write("sys/devices/system/cpu/cpu0/topology/physical_package_id", "zero\n");
    expect_malformed(&m, "cpu0/topology/physical_package_id");
    // -1 is how firmware says "unknown": a documented fallback, not an error.
    let m = TempMachine::copy_of("two-nodes-smt");
    m.write("sys/devices/system/cpu/cpu0/topology/physical_package_id", "-1\n");
    assert_eq!(m.load().unwrap().cores()[0].package(), None);
}

#[test]
fn overlapping_cores_are_rejected() {
    let m = TempMachine::copy_of("two-nodes-smt");
    m.write("sys/devices/system/cpu/cpu2/topology/thread_siblings_list", "1-2\n");
    match m.load() {
        Err(TopologyError::InvalidDescription { reason }) => {
            assert!(reason.contains("cores"), "{reason}");
        }
        other => panic!("expected an invalid description, got {other:?}"),
    }
}

#[test]
fn bad_v2_quotas() {
    for text in
        ["150000 0\n", "150000 -100000\n", "max 0\n", "0 100000\n", "-1 100000\n", "lots 100000\n", "150000\n", "\n"]
    {
        let m = TempMachine::copy_of("container-v2");
        m.write("sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", text);
        expect_invalid_quota(&m, "ctr/cpu.max");
    }
}

#[test]
fn bad_v1_quotas() {
    for (quota, period, bad_file) in [
        ("50000", "0", "cpu.cfs_period_us"),
        ("50000", "-100000", "cpu.cfs_period_us"),
        ("50000", "x", "cpu.cfs_period_us"),
        ("0", "100000", "cpu.cfs_quota_us"),
        ("-7", "100000", "cpu.cfs_quota_us"),
        ("1e5", "100000", "cpu.cfs_quota_us"),
    ] {
        let m = TempMachine::copy_of("container-v1");
        m.write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", quota);
        m.write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", period);
        expect_invalid_quota(&m, bad_file);
    }
    let m = TempMachine::copy_of("container-v1");
    m.remove("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us");
    expect_io(&m, "cpu.cfs_period_us");
}

#[test]
fn bad_cgroup_bookkeeping_files() {
    let m = TempMachine::copy_of("container-v1");
    m.remove("proc/self/mountinfo");
    expect_io(&m, "proc/self/mountinfo");
    let m = TempMachine::copy_of("container-v1");
    m.write("proc/self/mountinfo", "not a mount line\n");
    expect_malformed(&m, "proc/self/mountinfo");
    let m = TempMachine::copy_of("container-v1");
    m.write("proc/self/cgroup", "no colons here\n");
    expect_malformed(&m, "proc/self/cgroup");
}

#[test]
fn nonsense_thread_counts() {
    let topo = common::load_fixture("container-v2").unwrap();
    // Zero means "the default", as in Rayon; everything else here is nonsense.
    for zero in ["0", " 00\n"] {
        assert_eq!(topo.thread_budget(Some(zero)).unwrap(), topo.hardware_thread_budget(), "{zero:?}");
    }
    for value in ["-2", "abc", "", "2.5", "1e3", "99999999999999999999", "70000", "-0"] {
        match topo.thread_budget(Some(value)) {
            Err(TopologyError::InvalidThreadCount { origin, .. }) => {
                assert_eq!(origin, "RAYON_NUM_THREADS");
            }
            other => panic!("{value:?}: expected an invalid thread count, got {other:?}"),
        }
    }
}
