//! Dense GEMM, 1024 × 1024 × 1024: strata (the facade's `dot_general_into`, which runs
//! its provider inside its CPU domain) beside faer called directly (inside a Rayon pool of
//! the same size) and OpenBLAS's CBLAS, at one thread and at tmax.

use faer::linalg::matmul::matmul;
use faer::traits::ComplexField;
use faer::{Accum, MatMut, MatRef, Par};
use num_complex::Complex;
use strata_provider::GemmScalar;
use strata_tensor::{Tensor, TypedTensor, c64};

use crate::check::{Parts, close};
use crate::openblas::{self, BlasGemm};
use crate::subject::Strata;
use crate::suite::{Suite, Unit, gflops};
use crate::{Party, random_f64};

/// Matrix size of every GEMM case.
const N: usize = 1024;

/// An element type the GEMM cases run for.
trait GemmCase: GemmScalar + BlasGemm + ComplexField + Parts + Send + Sync {
    /// Real flops per multiply-add (2 for real, 8 for complex).
    const FLOPS_PER_MAC: f64;
    /// Tolerance of the result check, relative to the largest element.
    const TOL: f64;
}
impl GemmCase for f64 {
    const FLOPS_PER_MAC: f64 = 2.0;
    const TOL: f64 = 1e-10;
}
impl GemmCase for f32 {
    const FLOPS_PER_MAC: f64 = 2.0;
    const TOL: f64 = 1e-4;
}
impl GemmCase for Complex<f64> {
    const FLOPS_PER_MAC: f64 = 8.0;
    const TOL: f64 = 1e-10;
}

/// Runs the GEMM cases that pass the filter.
pub fn run(suite: &mut Suite) {
    let tmax = suite.threads;
    for (case, threads) in [("gemm_f64_1024_t1", 1), ("gemm_f64_1024_tmax", tmax)] {
        one::<f64>(suite, case, threads);
    }
    one::<f32>(suite, "gemm_f32_1024_tmax", tmax);
    one::<c64>(suite, "gemm_c64_1024_tmax", tmax);
}

fn inputs<T: GemmScalar>(seed: u64) -> Vec<T> {
    let re = random_f64(N * N, seed);
    let im = random_f64(N * N, seed + 1);
    re.into_iter().zip(im).map(|(r, i)| T::from_c64(c64::new(r, i))).collect()
}

fn faer_gemm<T: GemmCase>(a: &[T], b: &[T], c: &mut [T], par: Par) {
    let am = MatRef::from_row_major_slice(a, N, N);
    let bm = MatRef::from_row_major_slice(b, N, N);
    let cm = MatMut::from_row_major_slice_mut(c, N, N);
    matmul(cm, Accum::Replace, am, bm, T::one(), par);
}

fn one<T: GemmCase>(suite: &mut Suite, case: &str, threads: usize) {
    if !suite.wants(case) {
        return;
    }
    if let Err(e) = measure::<T>(suite, case, threads) {
        suite.fail(case, e);
    }
}

fn measure<T: GemmCase>(suite: &mut Suite, case: &str, threads: usize) -> Result<(), String> {
    let strata = Strata::with_threads(threads)?;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| format!("rayon pool: {e}"))?;
    let par = if threads == 1 { Par::Seq } else { Par::rayon(threads) };
    openblas::set_threads(threads);
    let (a, b) = (inputs::<T>(1), inputs::<T>(3));
    let zero = T::from_c64(c64::new(0.0, 0.0));

    // One untimed check: all parties agree with faer's sequential result.
    let mut want = vec![zero; N * N];
    faer_gemm(&a, &b, &mut want, Par::Seq);
    let tensor = |v: &[T]| TypedTensor::from_vec(v.to_vec(), &[N, N]).map(Tensor::from).map_err(|e| e.to_string());
    let (ta, tb, mut tc) = (tensor(&a)?, tensor(&b)?, tensor(&[zero; 1].repeat(N * N))?);
    strata.matmul_into(&ta, &tb, &mut tc)?;
    close("strata", tc.as_typed::<T>().map_err(|e| e.to_string())?.data(), &want, T::TOL)?;
    let mut got = vec![zero; N * N];
    if openblas::AVAILABLE {
        T::blas_gemm(N, &a, &b, &mut got)?;
        close("openblas", &got, &want, T::TOL)?;
    }

    let (mut c_faer, mut c_blas) = (vec![zero; N * N], vec![zero; N * N]);
    let mut failure = None;
    let mut parties = vec![
        Party::new("strata", || {
            if let Err(e) = strata.matmul_into(&ta, &tb, &mut tc) {
                failure.get_or_insert(e);
            }
        }),
        Party::new("faer", || pool.install(|| faer_gemm(&a, &b, &mut c_faer, par))),
    ];
    if openblas::AVAILABLE {
        parties.push(Party::new("openblas", || {
            let _ = T::blas_gemm(N, &a, &b, &mut c_blas);
        }));
    }
    let flops = T::FLOPS_PER_MAC * (N * N * N) as f64;
    suite.measure(case, Unit::GflopPerSecond, &mut parties, gflops(flops));
    drop(parties);
    failure.map_or(Ok(()), Err)
}
