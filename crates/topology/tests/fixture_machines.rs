//! Fake machines described as sysfs-shaped folders (tests/fixtures/*).

mod common;

use common::{TempMachine, cpus, load_fixture};
use strata_topology::{CpuId, NumaNodeId, TopologyError};

fn core_lists(topo: &strata_topology::CpuTopology) -> Vec<String> {
    topo.cores().iter().map(|c| c.cpus().to_string()).collect()
}

fn node_lists(topo: &strata_topology::CpuTopology) -> Vec<(u32, String)> {
    topo.nodes().iter().map(|n| (n.id().0, n.cpus().to_string())).collect()
}

#[test]
fn two_nodes_of_four_cpus_with_smt_pairs() {
    let topo = load_fixture("two-nodes-smt").unwrap();
    assert_eq!(topo.source(), "fixture");
    assert!(!topo.is_pinnable(), "fixture ids are not this machine's");
    assert_eq!(topo.allowed_cpus(), &cpus("0-7"));
    assert_eq!(node_lists(&topo), vec![(0, "0-3".to_string()), (1, "4-7".to_string())]);
    assert_eq!(core_lists(&topo), vec!["0-1", "2-3", "4-5", "6-7"]);
    let packages: Vec<Option<u32>> = topo.cores().iter().map(|c| c.package()).collect();
    assert_eq!(packages, vec![Some(0), Some(0), Some(1), Some(1)]);
    assert_eq!(topo.smt_siblings(CpuId(5)), Some(&cpus("4-5")));
    // The L3 (level 3, 16384K) is the last level; the instruction cache is ignored.
    let llc: Vec<(u8, Option<u64>, String)> =
        topo.llc_groups().iter().map(|g| (g.level(), g.size_bytes(), g.cpus().to_string())).collect();
    assert_eq!(llc, vec![(3, Some(16384 * 1024), "0-3".to_string()), (3, Some(16384 * 1024), "4-7".to_string())]);
    let (n0, n1) = (NumaNodeId(0), NumaNodeId(1));
    assert_eq!(
        [topo.distance(n0, n0), topo.distance(n0, n1), topo.distance(n1, n0), topo.distance(n1, n1)],
        [Some(10), Some(21), Some(21), Some(10)]
    );
    assert_eq!(topo.node_of(CpuId(6)), Some(n1));
    // cgroup v2 root: no cpu.max, so no quota.
    assert_eq!(topo.cpu_quota(), None);
    assert_eq!(topo.thread_budget(None).unwrap().get(), 8);
    assert_eq!(topo.thread_budget(Some("3")).unwrap().get(), 3);
}

#[test]
fn affinity_that_excludes_a_whole_node() {
    let machine = TempMachine::copy_of("two-nodes-smt");
    machine.write("proc/self/status", "Cpus_allowed_list:\t0-3\n");
    let topo = machine.load().unwrap();
    assert_eq!(node_lists(&topo), vec![(0, "0-3".to_string())]);
    assert_eq!(core_lists(&topo), vec!["0-1", "2-3"]);
    assert_eq!(topo.llc_groups().len(), 1);
    assert_eq!(topo.distance(NumaNodeId(0), NumaNodeId(0)), Some(10));
    assert_eq!(topo.distance(NumaNodeId(0), NumaNodeId(1)), None);
    assert!(matches!(topo.node(NumaNodeId(1)), Err(TopologyError::UnknownNode { node: NumaNodeId(1), .. })));
    assert_eq!(topo.node_of(CpuId(4)), None);
    assert_eq!(topo.hardware_thread_budget().get(), 4);
}

#[test]
fn affinity_that_splits_cores_and_nodes() {
    let machine = TempMachine::copy_of("two-nodes-smt");
    machine.write("proc/self/status", "Cpus_allowed_list:\t1-4,7\n");
    let topo = machine.load().unwrap();
    assert_eq!(node_lists(&topo), vec![(0, "1-3".to_string()), (1, "4,7".to_string())]);
    assert_eq!(core_lists(&topo), vec!["1", "2-3", "4", "7"]);
    let llc: Vec<String> = topo.llc_groups().iter().map(|g| g.cpus().to_string()).collect();
    assert_eq!(llc, vec!["1-3", "4,7"]);
    assert_eq!(topo.hardware_thread_budget().get(), 5);
}

#[test]
fn sparse_ids_are_kept() {
    let topo = load_fixture("sparse-ids").unwrap();
    assert_eq!(topo.allowed_cpus(), &cpus("0,2,4,6"));
    assert_eq!(node_lists(&topo), vec![(0, "0,2".to_string()), (2, "4,6".to_string())]);
    assert_eq!(core_lists(&topo), vec!["0", "2", "4", "6"]);
    assert_eq!(topo.distance(NumaNodeId(0), NumaNodeId(2)), Some(20));
    assert_eq!(topo.node_of(CpuId(4)), Some(NumaNodeId(2)));
    assert!(topo.node(NumaNodeId(1)).is_err());
    // No cache folders: no cache groups (documented fallback).
    assert!(topo.llc_groups().is_empty());
    assert_eq!(topo.cpu_quota(), None);
    assert_eq!(topo.hardware_thread_budget().get(), 4);
}

#[test]
fn container_v2_with_one_and_a_half_cpus() {
    let topo = load_fixture("container-v2").unwrap();
    assert_eq!(topo.allowed_cpus().len(), 8);
    let quota = topo.cpu_quota().unwrap();
    assert_eq!((quota.quota_us(), quota.period_us()), (150_000, 100_000));
    assert_eq!(quota.cpus(), 1.5);
    assert_eq!(topo.thread_budget(None).unwrap().get(), 2);
    // No topology files: every CPU is a core of its own (documented fallback).
    assert_eq!(topo.cores().len(), 8);
}

#[test]
fn container_v2_half_cpu_on_an_ancestor_wins() {
    let machine = TempMachine::copy_of("container-v2");
    machine.write("sys/fs/cgroup/kubepods/pod1/cpu.max", "50000 100000\n");
    let topo = machine.load().unwrap();
    assert_eq!(topo.cpu_quota().unwrap().cpus(), 0.5);
    assert_eq!(topo.thread_budget(None).unwrap().get(), 1);
}

#[test]
fn container_v2_quota_max_means_unlimited() {
    let machine = TempMachine::copy_of("container-v2");
    machine.write("sys/fs/cgroup/kubepods/pod1/cpu.max", "max 100000\n");
    machine.write("sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", "max 100000\n");
    let topo = machine.load().unwrap();
    assert_eq!(topo.cpu_quota(), None);
    assert_eq!(topo.thread_budget(None).unwrap().get(), 8);
}

#[test]
fn container_v2_quota_above_the_cpu_count_does_not_raise_the_budget() {
    let machine = TempMachine::copy_of("container-v2");
    machine.write("proc/self/status", "Cpus_allowed_list:\t0-2\n");
    machine.write("sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", "350000 100000\n");
    let topo = machine.load().unwrap();
    assert_eq!(topo.thread_budget(None).unwrap().get(), 3);
}

#[test]
fn container_v1_with_half_a_cpu() {
    let topo = load_fixture("container-v1").unwrap();
    let quota = topo.cpu_quota().unwrap();
    assert_eq!((quota.quota_us(), quota.period_us()), (50_000, 100_000));
    assert_eq!(topo.thread_budget(None).unwrap().get(), 1);
    assert_eq!(topo.allowed_cpus().len(), 8);
}

#[test]
fn container_v1_unlimited_and_fifteen_tenths() {
    let machine = TempMachine::copy_of("container-v1");
    machine.write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
    assert_eq!(machine.load().unwrap().thread_budget(None).unwrap().get(), 8);
    machine.write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "150000\n");
    assert_eq!(machine.load().unwrap().thread_budget(None).unwrap().get(), 2);
}

#[test]
fn cgroup_outside_its_mount_gives_no_quota() {
    // Another cgroup namespace: the process's path is not under the mount's root.
    let machine = TempMachine::copy_of("container-v1");
    machine.write("proc/self/cgroup", "4:cpu,cpuacct:/elsewhere\n");
    assert_eq!(machine.load().unwrap().cpu_quota(), None);
}

#[test]
fn missing_proc_self_cgroup_gives_no_quota() {
    let machine = TempMachine::copy_of("container-v1");
    machine.remove("proc/self/cgroup");
    assert_eq!(machine.load().unwrap().cpu_quota(), None);
}

#[test]
fn machine_without_node_folders_is_one_node() {
    let topo = load_fixture("no-node-folders").unwrap();
    assert_eq!(node_lists(&topo), vec![(0, "0-3".to_string())]);
    assert_eq!(topo.distance(NumaNodeId(0), NumaNodeId(0)), None);
    assert_eq!(core_lists(&topo), vec!["0", "1", "2", "3"]);
    assert_eq!(topo.hardware_thread_budget().get(), 4);
}

#[test]
fn memory_only_nodes_and_offline_cpus_are_not_usable() {
    let machine = TempMachine::copy_of("two-nodes-smt");
    machine.write("sys/devices/system/node/node0/distance", "10 21 17\n");
    machine.write("sys/devices/system/node/node1/distance", "21 10 28\n");
    machine.write("sys/devices/system/node/node3/cpulist", "\n");
    machine.write("sys/devices/system/node/node3/distance", "17 28 10\n");
    machine.write("sys/devices/system/cpu/online", "0-6\n");
    let topo = machine.load().unwrap();
    assert_eq!(node_lists(&topo), vec![(0, "0-3".to_string()), (1, "4-6".to_string())]);
    assert_eq!(topo.distance(NumaNodeId(0), NumaNodeId(1)), Some(21));
    assert_eq!(topo.allowed_cpus(), &cpus("0-6"));
    assert_eq!(core_lists(&topo), vec!["0-1", "2-3", "4-5", "6"]);
}

#[test]
fn example_prints_fixture_in_both_forms() {
    let root = common::fixture("container-v2");
    // `cargo test` builds the examples next to the test binaries' folder.
    let exe = std::env::current_exe().unwrap();
    let example = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(|profile| profile.join("examples").join(format!("topology{}", std::env::consts::EXE_SUFFIX)))
        .unwrap();
    assert!(example.exists(), "example not built at {}", example.display());
    let run = |extra: &[&str]| {
        let out = std::process::Command::new(&example)
            .arg("--fixture")
            .arg(&root)
            .args(extra)
            .env_remove("RAYON_NUM_THREADS")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let text = run(&[]);
    assert!(text.contains("allowed CPUs:  0-7 (8 CPUs)"), "{text}");
    assert!(text.contains("CPU quota:     1.5 CPUs"), "{text}");
    let json = run(&["--json"]);
    assert!(json.starts_with('{') && json.trim_end().ends_with('}'), "{json}");
    assert!(json.contains(r#""allowed_cpus":[0,1,2,3,4,5,6,7]"#), "{json}");
    assert!(json.contains(r#""nodes":[{"id":0,"cpus":[0,1,2,3,4,5,6,7]}]"#), "{json}");
    assert!(json.contains(r#""cpu_quota":1.5"#), "{json}");
    assert!(json.contains(r#""default_thread_budget":2"#), "{json}");
}
