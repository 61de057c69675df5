//! The machinery of `cargo xtask bench` (std only): the one option parser, the record
//! format the measuring processes write, the run summary, the table, the plot, the
//! Python environment of the numpy/JAX peers and the run loop that survives a crashing
//! case. The `strata-bench` runner (package strata-benches) uses the parser, the record
//! format and the progress line from here, so both sides speak one language.
//!
//! # How a run goes
//! 1. `cargo xtask bench [options]` parses its options ([`options`]) and refuses bad ones
//!    before anything is built or written (`--threads` above the CPUs this process may
//!    use, unknown options).
//! 2. It finds the target directory through `cargo metadata` (so `CARGO_TARGET_DIR` and
//!    cargo config are honoured), sets up the Python peers ([`pyenv`]) while cargo builds
//!    the runner in release mode (with OpenBLAS when pkg-config finds it).
//! 3. `strata-bench --list` declares the cases the options select; a filter that selects
//!    nothing is an error, and the previous results stay as they were.
//! 4. The runner measures strata and the Rust peers, case by case ([`run`]: a case that
//!    kills the process is recorded as failed and a new process continues after it); then
//!    `xtask/py/peers.py` measures numpy and JAX on the same cases, the 1-thread cases
//!    pinned to one CPU, the rest at the run's thread count.
//! 5. The records fold into a [`summary::Summary`], written as `summary.json`, printed as a
//!    table ([`table`]) and drawn as `summary.svg`/`.png` ([`plot`]).
//!
//! # Adding a case
//! In `benches/src/cases/<family>.rs`, add a [`record::CaseDecl`]-producing entry to the
//! family's `cases()` list (name, group, unit, threads, peers, target) with the closure
//! that measures it; if numpy or JAX should run it too, add the same name to
//! `xtask/py/peers.py`'s `CASES`. A tensor-network workload is one block in
//! `benches/tn/workloads.tn`, read by both sides. Nothing else changes: the table, the
//! plot and summary.json pick it up.
//!
//! # Adding a group
//! One entry in [`groups::GROUPS`] (id, title, one line on what it measures), and cases
//! that name it. The `distributed` group's cases run
//! strata-mpi's `distributed_scaling` example under `mpirun`: when the plan holds one,
//! `cargo xtask bench` builds that example (release, `--features mpi`) and names it to
//! the runner in [`machine::MPI_SCALING_VAR`].
#![deny(missing_docs)]

pub mod groups;
pub mod json;
pub mod machine;
pub mod options;
pub mod plot;
pub mod progress;
pub mod pyenv;
pub mod record;
pub mod run;
pub mod summary;
pub mod table;
pub mod target;
