//! Strong scaling on one node: P ranks x 1 thread (SUMMA) against 1 rank x P threads
//! (the single-node `dot_general`), interleaved in one run, for a 4096³ f64 GEMM and a
//! large tensor-network contraction, with the words each rank received against SUMMA's
//! model and the lower bound, and the distributed result checked against the single-node
//! one.
//!
//! ```text
//! cargo run --release --example distributed_scaling -p strata-mpi --features mpi
//! ```
//! Started outside `mpirun`, it launches itself as `mpirun --bind-to none -np 2` (set
//! `STRATA_MPI_RANKS` for another count, `STRATA_MPI_REPS` for repetitions, default 3,
//! `STRATA_MPI_N` for the GEMM size, default 4096). Run it without `nice` on a quiet
//! machine: the two variants alternate within each repetition and the medians are
//! compared.
//!
//! Arguments: `--case gemm` or `--case bond` runs one of the two cases (default both);
//! `--records` prints, instead of the table, one machine-readable line per case for
//! `cargo xtask bench` (group `distributed`): `strata-mpi-scaling` followed by
//! space-separated `key=value` pairs (see [`record_line`]).

use std::process::Command;
use std::time::Instant;

use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::point_to_point::{Destination, Source};
use mpi::topology::Communicator;
use strata_backend::{ContractionOps, CpuBackend};
use strata_mpi::{MpiContext, PlacementOptions, SummaOptions, SummaPlan, SummaReport};
use strata_tensor::config::DotGeneralConfig;
use strata_tensor::{Tensor, TypedTensor};

/// Relative difference above which the distributed result is wrong: both results are
/// the same sums of products in different orders, within a few hundred ulps of each
/// other; an indexing error would be O(1).
const TOLERANCE: f64 = 1e-10;

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

fn best(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

/// Largest difference between two results relative to the largest element of `want`.
fn relative_difference(got: &Tensor, want: &Tensor) -> Result<f64, strata_tensor::Error> {
    let (got, want) = (got.as_typed::<f64>()?.data(), want.as_typed::<f64>()?.data());
    if got.len() != want.len() {
        return Ok(f64::INFINITY);
    }
    let scale = want.iter().map(|x| x.abs()).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let err = got.iter().zip(want).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max) / scale;
    Ok(if err.is_nan() { f64::INFINITY } else { err })
}

/// One measured product: the bench's `--case` word, its case id, the table's name, the
/// operand shapes and the contraction.
struct Workload {
    kind: &'static str,
    id: String,
    name: String,
    lhs: Vec<usize>,
    rhs: Vec<usize>,
    config: DotGeneralConfig,
}

/// What one case measured, as rank 0 reports it.
struct Outcome {
    /// The case's id in the bench (`dist_<kind>_f64_<size>`).
    id: String,
    /// Seconds of the single-node product at every repetition.
    single: Vec<f64>,
    /// Seconds of the distributed product (slowest rank) at every repetition.
    dist: Vec<f64>,
    /// Seconds waiting for broadcasts at every repetition (rank 0).
    wait: Vec<f64>,
    /// Floating-point operations of one product.
    flops: f64,
    /// The most elements any rank received in one product.
    max_words: u64,
    /// Rank 0's SUMMA report of the last product.
    report: SummaReport,
    /// The distributed result against the single-node one.
    rel_err: f64,
}

/// The machine-readable line of one case: `strata-mpi-scaling` and `key=value` pairs.
/// Times in seconds (medians and bests over the repetitions), words in f64 elements per
/// rank; `efficiency` is the single-node median over the distributed median.
fn record_line(o: &mut Outcome, ranks: usize) -> String {
    let (ts, td) = (median(&mut o.single), median(&mut o.dist));
    format!(
        "strata-mpi-scaling case={} ranks={ranks} reps={} single_s={ts} single_best_s={} dist_s={td} \
         dist_best_s={} efficiency={} efficiency_best={} flops={} recv_words={} model_words={} \
         lower_bound_words={} wait_s={} rel_err={:e} tol={TOLERANCE:e}",
        o.id,
        o.dist.len(),
        best(&o.single),
        best(&o.dist),
        ts / td,
        best(&o.single) / best(&o.dist),
        o.flops,
        o.max_words,
        o.report.max_words_model,
        o.report.lower_bound_words,
        median(&mut o.wait),
        o.rel_err,
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if std::env::var_os("OMPI_COMM_WORLD_SIZE").is_none() {
        let ranks = env("STRATA_MPI_RANKS", 2);
        let status = Command::new("mpirun")
            .args(["--bind-to", "none", "-np", &ranks.to_string()])
            .arg(std::env::current_exe()?)
            .args(&args)
            .status()?;
        std::process::exit(status.code().unwrap_or(1));
    }
    let records = args.iter().any(|a| a == "--records");
    let only = args.iter().position(|a| a == "--case").map(|i| args.get(i + 1).cloned().unwrap_or_default());
    if let Some(c) = only.as_deref()
        && c != "gemm"
        && c != "bond"
    {
        return Err(format!("--case takes `gemm` or `bond`, not `{c}`").into());
    }
    // The baseline backend first, on every allowed CPU (before MPI pins this thread).
    let world_size: usize = std::env::var("OMPI_COMM_WORLD_SIZE")?.parse()?;
    let baseline = CpuBackend::with_threads(world_size)?;
    let ctx = MpiContext::init_with(&PlacementOptions { threads: Some(1), ..PlacementOptions::default() })?;
    let (rank, p) = (ctx.rank(), ctx.size());
    let reps = env("STRATA_MPI_REPS", 3).max(1);
    let n = env("STRATA_MPI_N", 4096);
    if rank == 0 && !records {
        print!("{}", ctx.placement_map());
        println!(
            "baseline: 1 rank x {} threads; distributed: {p} ranks x 1 thread; {reps} interleaved repetitions",
            baseline.num_threads()
        );
    }
    let (chi, d) = (n / 4, 4);
    let cases = [
        Workload {
            kind: "gemm",
            id: format!("dist_gemm_f64_{n}"),
            name: format!("gemm {n}^3 f64"),
            lhs: vec![n, n],
            rhs: vec![n, n],
            config: DotGeneralConfig::matmul(),
        },
        Workload {
            kind: "bond",
            id: format!("dist_mps_bond_f64_chi{chi}"),
            name: format!("mps bond [{chi},{d},{chi}]x[{chi},{d},{chi}] f64"),
            lhs: vec![chi, d, chi],
            rhs: vec![chi, d, chi],
            config: DotGeneralConfig::new(vec![], vec![], vec![2], vec![0]),
        },
    ];
    if rank == 0 && !records {
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
    let mut checks = Vec::new();
    for Workload { kind, id, name, lhs: ls, rhs: rs, config } in &cases {
        if only.as_deref().is_some_and(|c| c != *kind) {
            continue;
        }
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
        let mut gathered = None;
        let mut rel_err = f64::INFINITY;
        for rep in 0..reps {
            // Distributed: every rank, timed from a common start to the last rank's end.
            ctx.world().barrier();
            let t0 = Instant::now();
            let (c, r) = ctx.dot_general_with(&a, &b, config, &options)?;
            let mine = t0.elapsed().as_secs_f64();
            if std::env::var_os("STRATA_MPI_TRACE").is_some() {
                eprintln!(
                    "rank {rank} rep {rep}: total {mine:.4} summa {:.4} compute {:.4} wait {:.4}",
                    r.seconds, r.compute_seconds, r.wait_seconds
                );
            }
            let mut slowest = 0.0f64;
            ctx.world().all_reduce_into(&mine, &mut slowest, SystemOperation::max());
            dist.push(slowest);
            wait.push(r.wait_seconds);
            words = words.max(r.words_received);
            // The first result goes to rank 0 (untimed) to be checked against one node's.
            if rep == 0 {
                gathered = ctx.gather(&c, 0)?;
            }
            drop(c);
            report = Some(r);
            // Single node: rank 0 alone with every CPU; the others sleep until it is done
            // (a blocking MPI wait would spin on a CPU the baseline needs).
            if let (Some(wa), Some(wb)) = (&wa, &wb) {
                let t0 = Instant::now();
                let c = ContractionOps::dot_general(&baseline, wa.into(), wb.into(), config, false, false)?;
                single.push(t0.elapsed().as_secs_f64());
                if let Some(got) = gathered.take() {
                    rel_err = relative_difference(&got, &c)?;
                }
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
            let mut o = Outcome { id: id.clone(), single, dist, wait, flops, max_words, report, rel_err };
            if records {
                println!("{}", record_line(&mut o, p));
            } else {
                let (ts, td) = (median(&mut o.single), median(&mut o.dist));
                println!(
                    "{:<40} {:>10.3} {:>10.3} {:>7.3} {:>9.1} {:>9.1} {:>12} {:>12} {:>12.0} {:>7.3}",
                    name,
                    ts,
                    td,
                    ts / td,
                    flops / ts * 1e-9,
                    flops / td * 1e-9,
                    o.max_words,
                    o.report.max_words_model,
                    o.report.lower_bound_words,
                    median(&mut o.wait)
                );
            }
            checks.push((name.clone(), o.rel_err));
        }
    }
    if rank == 0 && !records {
        println!("eff = (1 rank x {p} threads time) / ({p} ranks x 1 thread time); words are f64 elements");
        for (name, err) in &checks {
            println!("{name}: distributed result within {err:.2e} of the single-node one (tolerance {TOLERANCE:.0e})");
        }
        if let Some((name, err)) = checks.iter().find(|(_, e)| e.is_nan() || *e > TOLERANCE) {
            return Err(format!("{name}: the distributed result differs by {err:e} > {TOLERANCE:e}").into());
        }
    }
    Ok(())
}
