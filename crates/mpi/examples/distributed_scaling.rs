//! Strong scaling on one node: P ranks x 1 thread (SUMMA) against 1 rank x P threads
//! (the single-node `dot_general`), interleaved in one run, for a 4096³ f64 GEMM and a
//! large tensor-network contraction, with the words each rank received against SUMMA's
//! model and the lower bound.
//!
//! ```text
//! cargo run --release --example distributed_scaling -p strata-mpi --features mpi
//! ```
//! Started outside `mpirun`, it launches itself as `mpirun --bind-to none -np 2` (set
//! `STRATA_MPI_RANKS` for another count, `STRATA_MPI_REPS` for repetitions, default 3,
//! `STRATA_MPI_N` for the GEMM size, default 4096). Run it without `nice` on a quiet
//! machine: the two variants alternate within each repetition and the medians are
//! compared.

use std::process::Command;
use std::time::Instant;

use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::point_to_point::{Destination, Source};
use mpi::topology::Communicator;
use strata_backend::{ContractionOps, CpuBackend};
use strata_mpi::{MpiContext, PlacementOptions, SummaOptions, SummaPlan};
use strata_tensor::config::DotGeneralConfig;
use strata_tensor::{Tensor, TypedTensor};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn entry(seed: u64, ix: &[usize]) -> f64 {
    let mut h = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for &i in ix {
        h = (h ^ i as u64).wrapping_mul(0xff51_afd7_ed55_8ccd).rotate_left(29);
    }
    ((h >> 11) % 10_007) as f64 / 10_006.0 - 0.5
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::var_os("OMPI_COMM_WORLD_SIZE").is_none() {
        let ranks = env("STRATA_MPI_RANKS", 2);
        let status = Command::new("mpirun")
            .args(["--bind-to", "none", "-np", &ranks.to_string()])
            .arg(std::env::current_exe()?)
            .status()?;
        std::process::exit(status.code().unwrap_or(1));
    }
    // The baseline backend first, on every allowed CPU (before MPI pins this thread).
    let world_size: usize = std::env::var("OMPI_COMM_WORLD_SIZE")?.parse()?;
    let baseline = CpuBackend::with_threads(world_size)?;
    let ctx = MpiContext::init_with(&PlacementOptions { threads: Some(1), ..PlacementOptions::default() })?;
    let (rank, p) = (ctx.rank(), ctx.size());
    let reps = env("STRATA_MPI_REPS", 3);
    let n = env("STRATA_MPI_N", 4096);
    if rank == 0 {
        print!("{}", ctx.placement_map());
        println!(
            "baseline: 1 rank x {} threads; distributed: {p} ranks x 1 thread; {reps} interleaved repetitions",
            baseline.num_threads()
        );
    }
    let (chi, d) = (n / 4, 4);
    let cases: Vec<(String, Vec<usize>, Vec<usize>, DotGeneralConfig)> = vec![
        (format!("gemm {n}^3 f64"), vec![n, n], vec![n, n], DotGeneralConfig::matmul()),
        (
            format!("mps bond [{chi},{d},{chi}]x[{chi},{d},{chi}] f64"),
            vec![chi, d, chi],
            vec![chi, d, chi],
            DotGeneralConfig::new(vec![], vec![], vec![2], vec![0]),
        ),
    ];
    if rank == 0 {
        println!(
            "{:<40} {:>10} {:>10} {:>7} {:>9} {:>9} {:>12} {:>12} {:>12} {:>7}",
            "case",
            "1x2 s",
            "2x1 s",
            "eff",
            "GF/s 1x2",
            "GF/s 2x1",
            "recv/rank",
            "SUMMA model",
            "lower bound",
            "wait s"
        );
    }
    for (name, ls, rs, config) in &cases {
        let options = SummaOptions::default();
        let plan = SummaPlan::new(ls, rs, config, p, &options)?;
        let a = ctx.from_fn(ls, plan.lhs.clone(), |ix| entry(1, ix))?;
        let b = ctx.from_fn(rs, plan.rhs.clone(), |ix| entry(2, ix))?;
        let whole = |shape: &[usize], seed| TypedTensor::from_fn(shape, |ix| entry(seed, ix)).map(Tensor::F64);
        let (wa, wb) = if rank == 0 { (Some(whole(ls, 1)?), Some(whole(rs, 2)?)) } else { (None, None) };
        let (_, _, _, k) = plan.matrix_form(config);
        let flops = 2.0 * (ls.iter().product::<usize>() as f64) * (rs.iter().product::<usize>() as f64) / k as f64;
        let (mut single, mut dist, mut wait) = (Vec::new(), Vec::new(), Vec::new());
        let mut words = 0u64;
        let mut report = None;
        for _ in 0..reps {
            // Distributed: every rank, timed from a common start to the last rank's end.
            ctx.world().barrier();
            let t0 = Instant::now();
            let (c, r) = ctx.dot_general_with(&a, &b, config, &options)?;
            let mine = t0.elapsed().as_secs_f64();
            let mut slowest = 0.0f64;
            ctx.world().all_reduce_into(&mine, &mut slowest, SystemOperation::max());
            dist.push(slowest);
            wait.push(r.wait_seconds);
            words = words.max(r.words_received);
            drop(c);
            report = Some(r);
            // Single node: rank 0 alone with every CPU; the others sleep until it is done
            // (a blocking MPI wait would spin on a CPU the baseline needs).
            if let (Some(wa), Some(wb)) = (&wa, &wb) {
                let t0 = Instant::now();
                let c = ContractionOps::dot_general(&baseline, wa.into(), wb.into(), config, false, false)?;
                single.push(t0.elapsed().as_secs_f64());
                drop(c);
                for other in 1..p {
                    ctx.world().process_at_rank(other as i32).send(&1u8);
                }
            } else {
                while ctx.world().process_at_rank(0).immediate_probe().is_none() {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                let (_token, _status) = ctx.world().process_at_rank(0).receive::<u8>();
            }
        }
        let mut max_words = 0u64;
        ctx.world().all_reduce_into(&words, &mut max_words, SystemOperation::max());
        if let (0, Some(report)) = (rank, report) {
            let (ts, td) = (median(&mut single), median(&mut dist));
            println!(
                "{:<40} {:>10.3} {:>10.3} {:>7.3} {:>9.1} {:>9.1} {:>12} {:>12} {:>12.0} {:>7.3}",
                name,
                ts,
                td,
                ts / td,
                flops / ts * 1e-9,
                flops / td * 1e-9,
                max_words,
                report.max_words_model,
                report.lower_bound_words,
                median(&mut wait)
            );
        }
    }
    if rank == 0 {
        println!("eff = (1 rank x {p} threads time) / ({p} ranks x 1 thread time); words are f64 elements");
    }
    Ok(())
}
