//! The distributed test suite: every collective, every dtype, several distributions and
//! grids, the SUMMA `dot_general` against the single-node result, and bad input on some
//! ranks failing every rank with a typed error and no hang.
//!
//! Built without the `mpi` feature it only says it skipped. With it, started by `cargo
//! test` (not under `mpirun`), it launches itself under `mpirun -np 2` and `mpirun -np 4
//! --oversubscribe` (override with `STRATA_MPI_TEST_RANKS=2,3`) and fails if any run
//! fails; started under `mpirun` it runs the suite on the job's ranks.

#[cfg(not(feature = "mpi"))]
fn main() {
    println!(
        "strata-mpi distributed tests SKIPPED: built without the `mpi` feature, which needs the system MPI \
         (Debian: libopenmpi-dev openmpi-bin libclang-dev). Run them with \
         `cargo test -p strata-mpi --features mpi --test distributed` (the MPI step of .ci/run)."
    );
}

#[cfg(feature = "mpi")]
#[path = "mpi_suite/mod.rs"]
mod suite;

#[cfg(feature = "mpi")]
fn main() {
    suite::main();
}
