//! Make a backend, run a contraction and a reduction, print where it ran.
//!
//! `cargo run -p strata-backend --example quickstart`

use strata_backend::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let backend = CpuBackend::new()?;

    // A [2, 3] x [3, 2] matrix product through dot_general.
    let a = TypedTensor::from_fn(&[2, 3], |i| (i[0] * 3 + i[1]) as f64)?;
    let b = TypedTensor::from_fn(&[3, 2], |i| (i[0] as f64) - (i[1] as f64))?;
    let c = backend.dot_general(&a, &b, &DotGeneral::matmul())?;
    println!("a · b = {:?} (shape {:?})", c.as_typed::<f64>()?.data(), c.shape());

    // Sum over the rows.
    let s = backend.sum(&c, &[0])?;
    println!("column sums = {:?}", s.as_typed::<f64>()?.data());

    println!("\n{}", backend.execution_info());
    Ok(())
}
