//! Data movement: a full-reversal permutation of a 64 MiB rank-4 tensor, into a
//! preallocated destination against memcpy of the same bytes into one, and allocating its
//! result as users mostly call it; and a gather of 1 Mi rows.

use ndarray::{Array2, ArrayD, Axis, IxDyn};
use rayon::prelude::*;
use strata_tensor::config::GatherConfig;
use strata_tensor::{Tensor, TypedTensor};

use super::{CaseFn, consume};
use crate::check::close;
use crate::subject::Strata;
use crate::suite::{Suite, Unit, gbps};
use crate::{Party, random_f64};

const PERMUTE_SHAPE: [usize; 4] = [64, 64, 64, 32];
const PERM: [usize; 4] = [3, 2, 1, 0];
/// Rows of the gathered table, their length, and how many rows are gathered.
const TABLE_ROWS: usize = 1 << 16;
const ROW_LEN: usize = 8;
const GATHERED: usize = 1 << 20;

/// Runs the structural cases that pass the filter.
pub fn run(suite: &mut Suite) {
    let steps: [(&str, CaseFn); 3] = [
        ("permute_f64_64mib_3210", permute_into),
        ("permute_alloc_f64_64mib_3210", permute_alloc),
        ("gather_1m_rows", gather_rows),
    ];
    for (case, step) in steps {
        if suite.wants(case)
            && let Err(e) = step(suite, case)
        {
            suite.fail(case, e);
        }
    }
}

/// The naive reference of a permutation: out[j] = x[i] with j the permuted index.
fn permute_reference(x: &[f64]) -> Vec<f64> {
    let [d0, d1, d2, d3] = PERMUTE_SHAPE;
    let mut out = vec![0.0; x.len()];
    for i0 in 0..d0 {
        for i1 in 0..d1 {
            for i2 in 0..d2 {
                for i3 in 0..d3 {
                    out[((i3 * d2 + i2) * d1 + i1) * d0 + i0] = x[((i0 * d1 + i1) * d2 + i2) * d3 + i3];
                }
            }
        }
    }
    out
}

/// The source tensor, its ndarray twin and the expected result.
fn permute_inputs() -> Result<(Tensor, ArrayD<f64>, Vec<f64>), String> {
    let len: usize = PERMUTE_SHAPE.iter().product();
    let data = random_f64(len, 31);
    let x = Tensor::from(TypedTensor::from_vec(data.clone(), &PERMUTE_SHAPE).map_err(|e| e.to_string())?);
    let want = permute_reference(&data);
    let nd = ArrayD::from_shape_vec(IxDyn(&PERMUTE_SHAPE), data).map_err(|e| e.to_string())?;
    Ok((x, nd, want))
}

/// The permutation kernel against memcpy, both writing into memory that already exists.
fn permute_into(suite: &mut Suite, case: &str) -> Result<(), String> {
    let strata = Strata::with_threads(suite.threads)?;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(strata.budget()).build().map_err(|e| e.to_string())?;
    let (x, nd, want) = permute_inputs()?;
    let len = want.len();
    let out_shape: Vec<usize> = PERM.iter().map(|&p| PERMUTE_SHAPE[p]).collect();
    let mut out = Tensor::from(TypedTensor::<f64>::zeros(&out_shape).map_err(|e| e.to_string())?);
    let mut nd_out = ArrayD::<f64>::zeros(IxDyn(&out_shape));
    let view = x.view().permute(&PERM).map_err(|e| e.to_string())?;
    strata.backend().copy_into(view.clone(), &mut out).map_err(|e| e.to_string())?;
    close("strata", out.as_typed::<f64>().map_err(|e| e.to_string())?.data(), &want, 0.0)?;
    nd_out.assign(&nd.view().permuted_axes(IxDyn(&PERM)));
    close("ndarray", nd_out.as_slice().unwrap_or(&[]), &want, 0.0)?;

    // memcpy of the same bytes, split over the same thread count.
    let source = x.as_typed::<f64>().map_err(|e| e.to_string())?.data();
    let mut copy = vec![0.0; len];
    let mut failure = None;
    let mut parties = vec![
        Party::new("strata", || consume(&mut failure, strata.backend().copy_into(view.clone(), &mut out))),
        Party::new("ndarray", || nd_out.assign(&nd.view().permuted_axes(IxDyn(&PERM)))),
        Party::new("memcpy", || {
            pool.install(|| {
                copy.par_chunks_mut(1 << 16).zip(source.par_chunks(1 << 16)).for_each(|(d, s)| d.copy_from_slice(s))
            })
        }),
    ];
    suite.measure(case, Unit::GigabytePerSecond, &mut parties, gbps(16.0 * len as f64));
    drop(parties);
    failure.map_or(Ok(()), Err)
}

/// The permutation as users mostly call it: a fresh result each time (page faults of the
/// new output included, as for every peer here).
fn permute_alloc(suite: &mut Suite, case: &str) -> Result<(), String> {
    let strata = Strata::with_threads(suite.threads)?;
    let (x, nd, want) = permute_inputs()?;
    let strata_call = || strata.backend().transpose(&x, &PERM);
    let nd_call = || nd.view().permuted_axes(IxDyn(&PERM)).as_standard_layout().into_owned();
    let got = strata_call().map_err(|e| e.to_string())?;
    close("strata", got.as_typed::<f64>().map_err(|e| e.to_string())?.data(), &want, 0.0)?;
    drop(got);
    close("ndarray", nd_call().as_slice().unwrap_or(&[]), &want, 0.0)?;

    let mut failure = None;
    let mut parties = vec![
        Party::new("strata", || consume(&mut failure, strata_call())),
        Party::new("ndarray", || drop(std::hint::black_box(nd_call()))),
    ];
    suite.measure(case, Unit::GigabytePerSecond, &mut parties, gbps(16.0 * want.len() as f64));
    drop(parties);
    failure.map_or(Ok(()), Err)
}

fn gather_rows(suite: &mut Suite, case: &str) -> Result<(), String> {
    let strata = Strata::with_threads(suite.threads)?;
    let table_data = random_f64(TABLE_ROWS * ROW_LEN, 41);
    // Pseudo-random row numbers in range (no clamping involved).
    let rows: Vec<i64> =
        random_f64(GATHERED, 42).iter().map(|v| ((v + 1.0) * 0.5 * TABLE_ROWS as f64) as i64).collect();
    let rows: Vec<i64> = rows.into_iter().map(|r| r.clamp(0, TABLE_ROWS as i64 - 1)).collect();
    let table =
        Tensor::from(TypedTensor::from_vec(table_data.clone(), &[TABLE_ROWS, ROW_LEN]).map_err(|e| e.to_string())?);
    let indices = Tensor::from(TypedTensor::from_vec(rows.clone(), &[GATHERED, 1]).map_err(|e| e.to_string())?);
    let config = GatherConfig::rows(2, ROW_LEN);
    let strata_call = || strata.backend().gather(&table, &indices, &config);
    let nd_table = Array2::from_shape_vec((TABLE_ROWS, ROW_LEN), table_data.clone()).map_err(|e| e.to_string())?;
    let nd_rows: Vec<usize> = rows.iter().map(|&r| r as usize).collect();
    let loop_gather = |out: &mut [f64]| {
        for (o, &r) in out.chunks_exact_mut(ROW_LEN).zip(&nd_rows) {
            o.copy_from_slice(&table_data[r * ROW_LEN..(r + 1) * ROW_LEN]);
        }
    };

    let mut want = vec![0.0; GATHERED * ROW_LEN];
    loop_gather(&mut want);
    let got = strata_call().map_err(|e| e.to_string())?;
    close("strata", got.as_typed::<f64>().map_err(|e| e.to_string())?.data(), &want, 0.0)?;
    drop(got);
    close("ndarray", nd_table.select(Axis(0), &nd_rows).as_slice().unwrap_or(&[]), &want, 0.0)?;

    let mut failure = None;
    let mut parties = vec![
        Party::new("strata", || consume(&mut failure, strata_call())),
        Party::new("ndarray", || drop(std::hint::black_box(nd_table.select(Axis(0), &nd_rows)))),
        Party::new("rust_loop", || loop_gather(&mut want)),
    ];
    // Bytes: each gathered row read and written once, plus the index read.
    let bytes = (GATHERED * ROW_LEN * 16 + GATHERED * 8) as f64;
    suite.measure(case, Unit::GigabytePerSecond, &mut parties, gbps(bytes));
    drop(parties);
    failure.map_or(Ok(()), Err)
}
