//! The case families of the suite, one module each. Every family measures strata beside
//! its peers in the same run and checks once, untimed, that they compute the same result.

pub mod concurrency;
pub mod contraction;
pub mod elementwise;
pub mod gemm;
pub mod overhead;
pub mod structural;

use crate::suite::Suite;

/// One case of a family: measures it into the suite, or says why it could not.
pub(crate) type CaseFn = fn(&mut Suite, &str) -> Result<(), String>;

/// Runs every family (each skips the cases the filter excludes).
pub fn run_all(suite: &mut Suite) {
    overhead::run(suite);
    concurrency::run(suite);
    elementwise::run(suite);
    structural::run(suite);
    contraction::run(suite);
    gemm::run(suite);
}

/// Consumes one timed call's outcome: keeps the value alive until here (so the work is
/// not optimised away) and remembers the first error.
pub(crate) fn consume<T>(failure: &mut Option<String>, outcome: Result<T, strata_tensor::Error>) {
    match outcome {
        Ok(v) => drop(std::hint::black_box(v)),
        Err(e) => drop(failure.get_or_insert(e.to_string())),
    }
}
