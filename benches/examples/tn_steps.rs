//! Per-step times of the tensor-network workloads (`benches/tn/workloads.tn`) through the
//! `CpuBackend` facade, as the `tn` group of `cargo xtask bench` runs them (fresh outputs),
//! at 1 thread and at 2, the two backends alternated within every repetition.
//!
//! ```sh
//! cargo run --release -p strata-benches --example tn_steps -- ctmrg_corner [REPS]
//! ```
//!
//! For each step of each workload whose name contains the filter: the median time of the
//! step alone (its operands prepared by the earlier steps, untimed) and its GFLOP/s at
//! 1 and 2 threads, then the whole workload's.

use std::time::Instant;

use strata_backend::ContractionOps;
use strata_backend::prelude::*;
use strata_benches::cases::tn::inputs;
use strata_benches::tn::{TnDType, Workload, workloads};
use strata_tensor::{TypedTensor, c64};

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn run<T: strata_benches::cases::tn::TnScalar>(w: &Workload, reps: usize) {
    let backends = [CpuBackend::with_threads(1).expect("backend"), CpuBackend::with_threads(2).expect("backend")];
    let data = inputs::<T>(w);
    let mut named: Vec<(String, Tensor)> = data
        .iter()
        .zip(&w.inputs)
        .map(|(d, (n, s))| (n.clone(), Tensor::from(TypedTensor::from_vec(d.clone(), s).expect("input"))))
        .collect();
    let get = |named: &[(String, Tensor)], n: &str| named.iter().position(|(m, _)| m == n).expect("operand");
    let macs = w.step_macs();
    let per_mac = w.dtype.flops_per_mac();
    let mut total = [0.0f64; 2];
    for (i, s) in w.steps.iter().enumerate() {
        let (l, r) = (get(&named, &s.lhs.name), get(&named, &s.rhs.name));
        let mut times = [Vec::new(), Vec::new()];
        for _ in 0..reps {
            for (b, backend) in backends.iter().enumerate() {
                let t0 = Instant::now();
                let out = ContractionOps::dot_general(
                    backend,
                    (&named[l].1).into(),
                    (&named[r].1).into(),
                    &s.config,
                    s.lhs.conj,
                    s.rhs.conj,
                )
                .expect("step");
                drop(std::hint::black_box(out));
                times[b].push(t0.elapsed().as_secs_f64());
            }
        }
        let out = ContractionOps::dot_general(
            &backends[0],
            (&named[l].1).into(),
            (&named[r].1).into(),
            &s.config,
            s.lhs.conj,
            s.rhs.conj,
        )
        .expect("step");
        let lhs_shape = named[l].1.shape().to_vec();
        let rhs_shape = named[r].1.shape().to_vec();
        let [t1, t2] = [median(&mut times[0]), median(&mut times[1])];
        total[0] += t1;
        total[1] += t2;
        println!(
            "{:<24} {:<3} {:?} x {:?} -> {:?}  {:>5.2} Mmac  1T {:>8.1} us {:>6.1} GF/s  2T {:>8.1} us {:>6.1} GF/s",
            w.name,
            s.out,
            lhs_shape,
            rhs_shape,
            out.shape(),
            macs[i] / 1e6,
            t1 * 1e6,
            macs[i] * per_mac / t1 / 1e9,
            t2 * 1e6,
            macs[i] * per_mac / t2 / 1e9
        );
        named.push((s.out.clone(), out));
    }
    println!(
        "{:<24} sum of steps: 1T {:>8.1} us {:>6.1} GF/s  2T {:>8.1} us {:>6.1} GF/s",
        w.name,
        total[0] * 1e6,
        w.flops() / total[0] / 1e9,
        total[1] * 1e6,
        w.flops() / total[1] / 1e9
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let filter = args.get(1).cloned().unwrap_or_default();
    let reps = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(41);
    let _ = c64::new(0.0, 0.0);
    for w in workloads().expect("workloads").iter().filter(|w| w.name.contains(&filter)) {
        match w.dtype {
            TnDType::F64 => run::<f64>(w, reps),
            TnDType::F32 => run::<f32>(w, reps),
            TnDType::C64 => run::<c64>(w, reps),
        }
    }
}
