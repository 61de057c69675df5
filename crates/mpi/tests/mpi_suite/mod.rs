//! The harness: a launcher outside `mpirun`, and a runner inside it that runs every
//! case on every rank, agrees on each case's outcome and prints cargo-style lines on
//! rank 0.

mod bad_input;
mod collectives;
mod contraction;
mod layouts;
mod reference;

use std::process::Command;

use mpi::collective::{CommunicatorCollectives, SystemOperation};
use strata_mpi::MpiContext;

/// One case: runs on every rank, `Err` names what was wrong on this rank.
pub type Case = fn(&MpiContext) -> Result<(), String>;

/// Fails the case with a message when `cond` is false.
#[macro_export]
macro_rules! check {
    ($cond:expr, $($msg:tt)+) => {
        let holds: bool = $cond;
        if !holds {
            return Err(format!($($msg)+));
        }
    };
}

fn cases() -> Vec<(&'static str, Case)> {
    let mut all: Vec<(&'static str, Case)> = Vec::new();
    all.extend(layouts::cases());
    all.extend(collectives::cases());
    all.extend(contraction::cases());
    all.extend(bad_input::cases());
    all
}

pub fn main() {
    if std::env::var_os("OMPI_COMM_WORLD_SIZE").is_none() && std::env::var_os("PMI_SIZE").is_none() {
        launch();
    } else {
        run();
    }
}

/// Outside `mpirun`: run this binary under `mpirun` for each rank count.
fn launch() {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let counts = std::env::var("STRATA_MPI_TEST_RANKS").unwrap_or_else(|_| "2,4".to_string());
    let (mut passed, mut failed) = (0, 0);
    for n in counts.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let n: usize = n.parse().expect("STRATA_MPI_TEST_RANKS lists rank counts, e.g. 2,4");
        // Rank counts the CPUs hold run as mpirun places them (bound to cores); more ranks
        // than CPUs need --oversubscribe, under which mpirun binds nothing and strata
        // splits the node itself: both placement paths get exercised.
        let cpus = std::thread::available_parallelism().map_or(1, |c| c.get());
        let mut cmd = Command::new("mpirun");
        cmd.arg("-np").arg(n.to_string());
        if n > cpus {
            cmd.arg("--oversubscribe");
        }
        cmd.arg(&exe);
        println!("== mpirun -np {n}{} {}", if n > cpus { " --oversubscribe" } else { "" }, exe.display());
        match cmd.status() {
            Ok(s) if s.success() => passed += 1,
            Ok(s) => {
                eprintln!("mpirun -np {n}: {s}");
                failed += 1;
            }
            Err(e) => {
                eprintln!(
                    "cannot start mpirun ({e}): the `mpi` feature needs an MPI launcher (Debian: openmpi-bin); \
                     as root, set OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
                );
                failed += 1;
            }
        }
    }
    println!("mpirun launches: {passed} passed, {failed} failed");
    if failed > 0 || passed == 0 {
        std::process::exit(1);
    }
}

/// Inside `mpirun`: every case on every rank.
fn run() {
    let ctx = match MpiContext::init() {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("MPI initialisation failed: {e}");
            std::process::exit(2);
        }
    };
    let rank = ctx.rank();
    if rank == 0 {
        println!("running {} distributed cases on {} ranks", cases().len(), ctx.size());
        print!("{}", ctx.placement_map());
    }
    let filter = std::env::args().nth(1);
    let (mut passed, mut failed) = (0, 0);
    for (name, case) in cases() {
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let outcome = case(&ctx);
        if let Err(msg) = &outcome {
            eprintln!("rank {rank}: {name}: {msg}");
        }
        let mine = i32::from(outcome.is_err());
        let mut any = 0i32;
        ctx.world().all_reduce_into(&mine, &mut any, SystemOperation::max());
        if any == 0 {
            passed += 1;
        } else {
            failed += 1;
        }
        if rank == 0 {
            println!("test {name} ... {}", if any == 0 { "ok" } else { "FAILED" });
        }
    }
    ctx.world().barrier();
    if rank == 0 {
        let verdict = if failed == 0 { "ok" } else { "FAILED" };
        println!(
            "test result: {verdict}. {passed} passed; {failed} failed; 0 ignored; 0 measured; 0 filtered out \
             ({} ranks)",
            ctx.size()
        );
    }
    drop(ctx);
    if failed > 0 {
        std::process::exit(1);
    }
}
