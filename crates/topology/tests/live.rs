//! The running machine: discovery agrees with `nproc` and /sys read independently, and
//! pinning a thread sticks. Only reads the live system; never writes to it.
#![cfg(target_os = "linux")]

use std::collections::BTreeSet;
use std::sync::mpsc;
use std::time::Duration;

use strata_topology::{
    CpuId, CpuSet, SysfsSource, TopologyError, TopologySource, current_thread_affinity, discover, pin_current_thread,
    process_affinity,
};

const WAIT: Duration = Duration::from_secs(30);

/// Runs `f` on a fresh thread (so pinning never leaks into the test harness), waiting at
/// most `WAIT` for it.
fn on_fresh_thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(WAIT).expect("worker thread finished in time")
}

/// Independent cpulist reader: the simplest possible loop over `a` and `a-b` items.
fn naive_cpulist(text: &str) -> BTreeSet<u32> {
    let mut out = BTreeSet::new();
    for item in text.trim().split(',').filter(|s| !s.is_empty()) {
        match item.split_once('-') {
            Some((a, b)) => out.extend(a.parse::<u32>().unwrap()..=b.parse::<u32>().unwrap()),
            None => {
                out.insert(item.parse().unwrap());
            }
        }
    }
    out
}

fn ids(set: &CpuSet) -> BTreeSet<u32> {
    set.iter().map(|c| c.0).collect()
}

fn status_allowed() -> BTreeSet<u32> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).unwrap();
    naive_cpulist(line)
}

#[test]
fn allowed_cpus_agree_with_nproc() {
    let topo = discover().unwrap();
    // nproc honours OMP_NUM_THREADS / OMP_THREAD_LIMIT; remove them for a pure CPU count.
    let out = std::process::Command::new("nproc")
        .env_remove("OMP_NUM_THREADS")
        .env_remove("OMP_THREAD_LIMIT")
        .output()
        .unwrap();
    let nproc: usize = String::from_utf8(out.stdout).unwrap().trim().parse().unwrap();
    assert_eq!(topo.allowed_cpus().len(), nproc);
}

#[test]
fn discovery_agrees_with_sys_and_proc() {
    let topo = discover().unwrap();
    let allowed = status_allowed();
    let online = naive_cpulist(&std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap());
    let expected: BTreeSet<u32> = allowed.intersection(&online).copied().collect();
    assert_eq!(ids(topo.allowed_cpus()), expected);

    let node_dir = std::path::Path::new("/sys/devices/system/node");
    let mut expected_nodes = Vec::new();
    if node_dir.exists() {
        let mut entries: Vec<(u32, BTreeSet<u32>)> = std::fs::read_dir(node_dir)
            .unwrap()
            .filter_map(|e| {
                let e = e.unwrap();
                let name = e.file_name().into_string().unwrap();
                let id: u32 = name.strip_prefix("node")?.parse().ok()?;
                let cpus = naive_cpulist(&std::fs::read_to_string(e.path().join("cpulist")).ok()?);
                Some((id, cpus.intersection(&expected).copied().collect()))
            })
            .filter(|(_, cpus): &(u32, BTreeSet<u32>)| !cpus.is_empty())
            .collect();
        entries.sort();
        expected_nodes = entries;
    }
    if expected_nodes.is_empty() {
        expected_nodes.push((0, expected.clone()));
    }
    let got: Vec<(u32, BTreeSet<u32>)> = topo.nodes().iter().map(|n| (n.id().0, ids(n.cpus()))).collect();
    assert_eq!(got, expected_nodes);

    // Every allowed CPU's core is its thread_siblings_list restricted to the allowed set.
    for cpu in &expected {
        let path = format!("/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list");
        let want: BTreeSet<u32> = match std::fs::read_to_string(path) {
            Ok(text) => naive_cpulist(&text).intersection(&expected).copied().collect(),
            Err(_) => BTreeSet::from([*cpu]),
        };
        assert_eq!(ids(topo.smt_siblings(CpuId(*cpu)).unwrap()), want, "cpu {cpu}");
    }
}

#[test]
fn live_and_fixture_sources_agree_on_the_live_files() {
    // Reading "/" as a fixture takes the affinity from /proc/self/status instead of the
    // scheduler; the rest must be identical.
    let live = SysfsSource::live().load().unwrap();
    let as_fixture = SysfsSource::fixture("/").load().unwrap();
    assert!(live.is_pinnable() && !as_fixture.is_pinnable());
    assert_eq!(live.allowed_cpus(), as_fixture.allowed_cpus());
    assert_eq!(live.nodes(), as_fixture.nodes());
    assert_eq!(live.cores(), as_fixture.cores());
    assert_eq!(live.llc_groups(), as_fixture.llc_groups());
    assert_eq!(live.cpu_quota(), as_fixture.cpu_quota());
    assert_eq!(ids(&process_affinity().unwrap()), status_allowed());
}

#[test]
fn budget_respects_allowed_cpus_and_quota() {
    let topo = discover().unwrap();
    let budget = topo.hardware_thread_budget().get();
    let quota_cap = topo.cpu_quota().map_or(usize::MAX, |q| q.ceil_cpus());
    assert_eq!(budget, topo.allowed_cpus().len().min(quota_cap));
    assert_eq!(topo.thread_budget(None).unwrap().get(), budget);
}

#[test]
fn pin_a_thread_to_each_allowed_cpu_and_read_it_back() {
    let allowed = discover().unwrap().allowed_cpus().clone();
    for cpu in allowed.iter() {
        let (read_back, ran_on) = on_fresh_thread(move || {
            pin_current_thread(&CpuSet::single(cpu)).unwrap();
            let read_back = current_thread_affinity().unwrap();
            // SAFETY: sched_getcpu has no preconditions.
            let ran_on = unsafe { libc::sched_getcpu() };
            (read_back, ran_on)
        });
        assert_eq!(read_back, CpuSet::single(cpu));
        assert_eq!(ran_on, cpu.0 as i32, "the scheduler honours the pin");
    }
}

#[test]
fn pinning_one_thread_leaves_the_process_affinity() {
    let before = process_affinity().unwrap();
    let first = before.first();
    let (thread_view, process_view) = on_fresh_thread(move || {
        pin_current_thread(&CpuSet::single(first)).unwrap();
        (current_thread_affinity().unwrap(), process_affinity().unwrap())
    });
    assert_eq!(thread_view, CpuSet::single(first));
    assert_eq!(process_view, before);
}

#[test]
fn pinning_to_impossible_cpus_is_an_error() {
    let online = naive_cpulist(&std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap());
    let absent = CpuId(online.last().unwrap() + 1);
    let result = on_fresh_thread(move || {
        let huge = pin_current_thread(&CpuSet::single(CpuId(70_000)));
        // A valid id, but not an online CPU.
        let offline = pin_current_thread(&CpuSet::single(absent));
        let still = current_thread_affinity().unwrap();
        (huge, offline, still)
    });
    assert!(matches!(result.0, Err(TopologyError::CpuIdTooLarge { id: 70_000, .. })));
    assert!(matches!(result.1, Err(TopologyError::Affinity { op: "sched_setaffinity", .. })));
    // A refused pin leaves the thread's affinity as it was.
    assert_eq!(result.2, process_affinity().unwrap());
}
