//! The tensor-network workloads of benches/workloads.txt and their operands, shared by
//! the Criterion bench and the median runner (filled as benches/peers.py fills them).
#![allow(dead_code)]

use strata_tensor::{Tensor, TypedTensor, c64};

pub struct Workload {
    pub name: String,
    pub spec: String,
    pub shapes: Vec<Vec<usize>>,
    pub complex: bool,
}

pub fn workloads() -> Vec<Workload> {
    include_str!("workloads.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('|').collect();
            let shapes = f[2].split(';').map(|s| s.split(',').map(|d| d.parse().unwrap()).collect()).collect();
            Workload { name: f[0].into(), spec: f[1].into(), shapes, complex: f[3] == "c64" }
        })
        .collect()
}

/// peers.py's fill: element `i` of operand `k`.
fn value(k: usize, i: usize) -> f64 {
    ((i * 7919 + k * 104729 + 13) % 1999) as f64 / 1999.0 - 0.5
}

pub fn operands(w: &Workload) -> Vec<Tensor> {
    w.shapes
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let n: usize = s.iter().product();
            if w.complex {
                let data = (0..n).map(|i| c64::new(value(k, 2 * i), value(k, 2 * i + 1))).collect();
                TypedTensor::from_vec(data, s).unwrap().into()
            } else {
                TypedTensor::from_vec((0..n).map(|i| value(k, i)).collect(), s).unwrap().into()
            }
        })
        .collect()
}
