//! Dense GEMM, n × n × n for n from 64 to 4096 in f64, f32 and c64: strata (the
//! facade's `dot_general_into`, which runs its provider inside its CPU domain) beside
//! faer called directly (inside a Rayon pool of the same size) and OpenBLAS's CBLAS, at
//! one thread and at tmax.

use faer::linalg::matmul::matmul;
use faer::traits::ComplexField;
use faer::{Accum, MatMut, MatRef, Par};
use num_complex::Complex;
use strata_provider::GemmScalar;
use strata_tensor::{Tensor, TypedTensor, c64};

use super::{suffix, thread_counts};
use crate::check::Parts;
use crate::openblas::{self, BlasGemm};
use crate::subject::Strata;
use crate::suite::{Case, Suite, Unit, gflops};
use crate::{Party, random_f64};

/// An element type the GEMM cases run for.
trait GemmCase: GemmScalar + BlasGemm + ComplexField + Parts + Send + Sync {
    /// Real flops per multiply-add (2 for real, 8 for complex).
    const FLOPS_PER_MAC: f64;
    /// Tolerance of the result check, relative to the largest element.
    const TOL: f64;
    /// The dtype in case names.
    const NAME: &'static str;
}
impl GemmCase for f64 {
    const FLOPS_PER_MAC: f64 = 2.0;
    const TOL: f64 = 1e-10;
    const NAME: &'static str = "f64";
}
impl GemmCase for f32 {
    const FLOPS_PER_MAC: f64 = 2.0;
    const TOL: f64 = 1e-4;
    const NAME: &'static str = "f32";
}
impl GemmCase for Complex<f64> {
    const FLOPS_PER_MAC: f64 = 8.0;
    const TOL: f64 = 1e-10;
    const NAME: &'static str = "c64";
}

/// Sizes of the sweep: every power of two from 64 to 4096, or three of them in `--quick`.
fn sizes(quick: bool) -> &'static [usize] {
    if quick { &[64, 256, 1024] } else { &[64, 128, 256, 512, 1024, 2048, 4096] }
}

/// The GEMM sweep: f64, f32 and c64, n x n x n, at one thread and at the run's count.
pub fn cases(tmax: usize, quick: bool) -> Vec<Case> {
    let mut v = Vec::new();
    sweep::<f64>(&mut v, tmax, quick);
    sweep::<f32>(&mut v, tmax, quick);
    sweep::<c64>(&mut v, tmax, quick);
    v
}

fn sweep<T: GemmCase + 'static>(v: &mut Vec<Case>, tmax: usize, quick: bool) {
    for &n in sizes(quick) {
        for threads in thread_counts(tmax) {
            v.push(
                Case::new(format!("gemm_{}_{n}_{}", T::NAME, suffix(threads)), "gemm", Unit::GflopPerSecond, threads)
                    .peers(&["faer", "openblas", "numpy", "jax"])
                    .target("best:faer+openblas+numpy:1")
                    .run(move |s| measure::<T>(s, n, threads)),
            );
        }
    }
}

fn inputs<T: GemmScalar>(n: usize, seed: u64) -> Vec<T> {
    let re = random_f64(n * n, seed);
    let im = random_f64(n * n, seed + 1);
    re.into_iter().zip(im).map(|(r, i)| T::from_c64(c64::new(r, i))).collect()
}

fn faer_gemm<T: GemmCase>(n: usize, a: &[T], b: &[T], c: &mut [T], par: Par) {
    let am = MatRef::from_row_major_slice(a, n, n);
    let bm = MatRef::from_row_major_slice(b, n, n);
    let cm = MatMut::from_row_major_slice_mut(c, n, n);
    matmul(cm, Accum::Replace, am, bm, T::one(), par);
}

/// Freivalds' check: `c · x` against `a · (b · x)` for a pseudo-random `x`, in f64
/// complex arithmetic, relative to the largest element of `a · (b · x)`. O(n²), so it
/// checks every size, and it shares no code with any party.
fn freivalds<T: Parts>(n: usize, a: &[T], b: &[T], c: &[T]) -> f64 {
    let x: Vec<(f64, f64)> = random_f64(n, 77).into_iter().map(|v| (v, 0.0)).collect();
    let matvec = |m: &[T], v: &[(f64, f64)]| -> Vec<(f64, f64)> {
        m.chunks_exact(n)
            .map(|row| {
                row.iter().zip(v).fold((0.0, 0.0), |(sr, si), (e, (vr, vi))| {
                    let (er, ei) = e.parts();
                    (sr + er * vr - ei * vi, si + er * vi + ei * vr)
                })
            })
            .collect()
    };
    let want = matvec(a, &matvec(b, &x));
    let got = matvec(c, &x);
    let scale = want.iter().map(|(r, i)| r.hypot(*i)).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let err = want.iter().zip(&got).map(|(w, g)| (w.0 - g.0).hypot(w.1 - g.1)).fold(0.0, f64::max);
    if err.is_nan() { f64::INFINITY } else { err / scale }
}

fn measure<T: GemmCase>(suite: &mut Suite, n: usize, threads: usize) -> Result<(), String> {
    let strata = Strata::with_threads(threads)?;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| format!("rayon pool: {e}"))?;
    let par = if threads == 1 { Par::Seq } else { Par::rayon(threads) };
    openblas::set_threads(threads);
    let (a, b) = (inputs::<T>(n, 1), inputs::<T>(n, 3));
    let zero = T::from_c64(c64::new(0.0, 0.0));

    // One untimed check of every party (Freivalds), strata's recorded.
    let tensor = |v: &[T]| TypedTensor::from_vec(v.to_vec(), &[n, n]).map(Tensor::from).map_err(|e| e.to_string());
    let (ta, tb, mut tc) = (tensor(&a)?, tensor(&b)?, tensor(&[zero; 1].repeat(n * n))?);
    strata.matmul_into(&ta, &tb, &mut tc)?;
    let err = freivalds(n, &a, &b, tc.as_typed::<T>().map_err(|e| e.to_string())?.data());
    suite.check("strata", err, T::TOL);
    let (mut c_faer, mut c_blas) = (vec![zero; n * n], vec![zero; n * n]);
    pool.install(|| faer_gemm(n, &a, &b, &mut c_faer, par));
    if freivalds(n, &a, &b, &c_faer) > T::TOL {
        return Err("faer's product fails the check".into());
    }
    if openblas::AVAILABLE {
        T::blas_gemm(n, &a, &b, &mut c_blas)?;
        if freivalds(n, &a, &b, &c_blas) > T::TOL {
            return Err("OpenBLAS's product fails the check".into());
        }
    }

    let mut failure = None;
    let mut parties = vec![
        Party::new("strata", || {
            if let Err(e) = strata.matmul_into(&ta, &tb, &mut tc) {
                failure.get_or_insert(e);
            }
        }),
        Party::new("faer", || pool.install(|| faer_gemm(n, &a, &b, &mut c_faer, par))),
    ];
    if openblas::AVAILABLE {
        parties.push(Party::new("openblas", || {
            let _ = T::blas_gemm(n, &a, &b, &mut c_blas);
        }));
    }
    let flops = T::FLOPS_PER_MAC * (n * n * n) as f64;
    suite.measure(&mut parties, gflops(flops));
    drop(parties);
    failure.map_or(Ok(()), Err)
}
