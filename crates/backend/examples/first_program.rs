//! A first program, written from the README: create, add, exp, sum over an axis,
//! zero-copy transpose and slice, a matrix product through dot_general, gather, read
//! back, save and load `.npy`, and a round trip through ndarray.
//!
//! `cargo run -p strata-backend --features ndarray,npy --example first_program`

use ndarray::ArrayD;
use strata_backend::npy;
use strata_backend::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let backend = CpuBackend::new()?;
    let a = TypedTensor::from_fn(&[2, 3], |i| (3 * i[0] + i[1]) as f64)?;

    let e = backend.exp(&backend.add(&a, &a)?)?; // exp(a + a)
    let col_sums = backend.sum(&e, &[0])?; // over axis 0: shape [3]

    let at = a.view().transpose(&[1, 0])?; // [3, 2], no copy
    let tail = at.slice(&SliceConfig::ranges([1..3, 0..2]))?; // rows 1..3, no copy
    let c = backend.dot_general(&a, &at, &DotGeneral::matmul())?; // a · aᵀ: [2, 2]

    // Rows 1, 0, 1 of c (numpy's take).
    let idx = TypedTensor::from_vec(vec![1i64, 0, 1], &[3])?;
    let rows = backend.gather(&c, &idx, &GatherConfig::take(c.shape(), idx.shape(), 0))?;
    let values: Vec<f64> = rows.to_vec()?;

    let path = std::env::temp_dir().join("strata_first_program.npy");
    npy::save(&path, &rows)?;
    let loaded = npy::load(&path)?;

    let nd: ArrayD<f64> = loaded.into_typed::<f64>()?.into(); // to ndarray, no copy
    let doubled = backend.add(&nd, &nd)?; // ndarray arrays go straight in

    println!("col_sums = {col_sums}\ntail =\n{tail}\nc =\n{c}\nrows = {values:?}\ndoubled =\n{doubled}");
    assert_eq!(values, [14.0, 50.0, 5.0, 14.0, 14.0, 50.0]);
    assert_eq!(doubled.to_vec::<f64>()?, [28.0, 100.0, 10.0, 28.0, 28.0, 100.0]);
    std::fs::remove_file(path)?;
    Ok(())
}
