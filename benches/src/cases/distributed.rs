//! The `distributed` group (issue 18): strong scaling of a 4096³ f64 GEMM and one large
//! contraction over MPI, 1 rank × 2 threads against 2 ranks × 1 thread, with the
//! communication volume per rank against the SUMMA lower bound.
//!
//! Empty until the `strata-mpi` crate is part of the workspace, and skipped with a note
//! when no MPI is installed (`mpirun` not on PATH). To fill it: a [`Case`] per
//! measurement in group `distributed` (unit `x` for the parallel efficiency, target
//! `min:0.9`) whose closure starts `mpirun -np R` on the strata-mpi bench binary and
//! records what it reports; [`mpirun_present`] decides whether to declare them.

use crate::suite::Case;

/// Whether `mpirun` can be started.
pub fn mpirun_present() -> bool {
    std::process::Command::new("mpirun")
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The distributed cases (none yet) and a note saying why.
pub fn cases(_threads: usize) -> (Vec<Case>, Vec<String>) {
    let why = if mpirun_present() {
        "distributed: group empty until strata-mpi lands (issue 18)"
    } else {
        "distributed: skipped, no MPI on this machine (Debian: apt install libopenmpi-dev openmpi-bin)"
    };
    (Vec::new(), vec![why.into()])
}
