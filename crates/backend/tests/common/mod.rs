//! Shared test support: an affinity double for fixture machines, naive references, and a
//! small deterministic generator.
#![allow(dead_code)]

use std::cell::RefCell;
use std::sync::{Arc, Mutex};

use strata_arbiter::ResourceArbiter;
use strata_backend::CpuBackend;
use strata_engine::ThreadAffinity;
use strata_topology::{CpuSet, SyntheticTopology, TopologySource};

thread_local! {
    static PINNED: RefCell<Option<CpuSet>> = const { RefCell::new(None) };
}

/// Pretends to pin: remembers the set per thread and reports it back, so managed pools
/// can be built for fixture CPUs that do not exist on this machine.
#[derive(Debug, Default)]
pub struct FakeAffinity {
    pinned: Mutex<Vec<CpuSet>>,
}

impl FakeAffinity {
    pub fn pinned_sets(&self) -> Vec<CpuSet> {
        self.pinned.lock().unwrap().clone()
    }
}

impl ThreadAffinity for FakeAffinity {
    fn pin_current_thread(&self, cpus: &CpuSet) -> Result<(), String> {
        PINNED.with(|p| *p.borrow_mut() = Some(cpus.clone()));
        self.pinned.lock().unwrap().push(cpus.clone());
        Ok(())
    }

    fn current_thread_affinity(&self) -> Result<CpuSet, String> {
        PINNED.with(|p| p.borrow().clone()).ok_or_else(|| "this thread was never pinned".to_string())
    }
}

/// A backend over a synthetic machine (`nodes` x `cores` x `threads`), budget 2, pinned
/// through the double, admitted by a private arbiter.
pub fn fixture_backend(nodes: u32, cores: u32, threads: u32) -> (CpuBackend, Arc<FakeAffinity>) {
    let topo = Arc::new(SyntheticTopology::new(nodes, cores, threads).unwrap().load().unwrap());
    let affinity = Arc::new(FakeAffinity::default());
    let backend = CpuBackend::builder()
        .topology(topo)
        .threads(2)
        .pinning(true)
        .thread_affinity(Arc::clone(&affinity) as Arc<dyn ThreadAffinity>)
        .arbiter(Arc::new(ResourceArbiter::new()))
        .build()
        .unwrap();
    (backend, affinity)
}

/// SplitMix64.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as usize
    }
    /// Small integers as f64 so that sums are exact.
    pub fn small(&mut self) -> f64 {
        (self.next_u64() % 17) as f64 - 8.0
    }
    pub fn vec(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.small()).collect()
    }
}

/// Naive row-major matrix product of `[m, k] x [k, n]`.
pub fn naive_matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut s = 0.0;
            for p in 0..k {
                s += a[i * k + p] * b[p * n + j];
            }
            c[i * n + j] = s;
        }
    }
    c
}
