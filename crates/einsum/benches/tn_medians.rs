//! Median time per call of every workload of benches/workloads.txt through the facade's
//! cached `einsum`, as JSON lines on stdout, for side-by-side runs with benches/peers.py
//! (benches/compare.py alternates the two).
//!
//! `cargo bench -p strata-einsum --bench tn_medians -- --threads 1 [--filter name]`

use std::hint::black_box;
use std::time::{Duration, Instant};

use strata_backend::CpuBackend;
use strata_tensor::TensorRead;

#[path = "workloads.rs"]
mod workloads;
use workloads::{operands, workloads};

/// Calls timed until both limits are met, then the median is reported.
const MIN_CALLS: usize = 7;
const MIN_TIME: Duration = Duration::from_millis(400);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let threads: usize = arg("--threads").map_or(1, |t| t.parse().expect("--threads takes a number"));
    let filter = arg("--filter").unwrap_or_default();
    let backend = CpuBackend::with_threads(threads).expect("a backend with that many threads");
    for w in workloads().into_iter().filter(|w| w.name.contains(&filter)) {
        let tensors = operands(&w);
        let ops: Vec<TensorRead<'_>> = tensors.iter().map(Into::into).collect();
        let shapes: Vec<&[usize]> = w.shapes.iter().map(Vec::as_slice).collect();
        let flops = backend.einsum_prepare(&w.spec, &shapes).expect("the workload plans").path().flops();
        black_box(backend.einsum(&w.spec, &ops).expect("the workload runs"));
        let mut times = Vec::new();
        let start = Instant::now();
        while times.len() < MIN_CALLS || start.elapsed() < MIN_TIME {
            let t = Instant::now();
            black_box(backend.einsum(&w.spec, &ops).expect("the workload runs"));
            times.push(t.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        println!(
            "{{\"name\": \"{}\", \"threads\": {threads}, \"peer\": \"strata\", \"median_s\": {median:e}, \"flops\": {flops}}}",
            w.name
        );
    }
}
