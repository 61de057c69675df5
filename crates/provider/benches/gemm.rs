//! GEMM through the provider interface against calling the library directly (f64, one
//! thread): the cost of validation and dispatch should vanish at these sizes.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, Par};
use strata_provider::{BatchedGemm, FaerGemmProvider, GemmMatrix, GemmMatrixMut, GemmScalar};

const SIZES: [usize; 3] = [256, 512, 1024];

fn inputs(n: usize) -> (Vec<f64>, Vec<f64>) {
    let a = (0..n * n).map(|i| ((i * 7 + 3) % 17) as f64 / 17.0 - 0.5).collect();
    let b = (0..n * n).map(|i| ((i * 5 + 1) % 13) as f64 / 13.0 - 0.5).collect();
    (a, b)
}

fn provider_call(p: &dyn strata_provider::GemmProvider, n: usize, a: &[f64], b: &[f64], c: &mut [f64]) {
    let mut job = BatchedGemm {
        batch: 1,
        m: n,
        n,
        k: n,
        alpha: 1.0,
        a: GemmMatrix::row_major(a, n, n),
        conj_a: false,
        b: GemmMatrix::row_major(b, n, n),
        conj_b: false,
        beta: 0.0,
        c: GemmMatrixMut::row_major(c, n, n),
    };
    f64::gemm(p, &mut job, &strata_provider::SequentialParallelism).expect("valid job");
}

fn bench_faer(crit: &mut Criterion) {
    let mut group = crit.benchmark_group("gemm_f64_1t/faer");
    group.sample_size(10);
    for n in SIZES {
        group.throughput(Throughput::Elements((2 * n * n * n) as u64));
        let (a, b) = inputs(n);
        let mut c = vec![0.0; n * n];
        group.bench_with_input(BenchmarkId::new("provider", n), &n, |bch, &n| {
            bch.iter(|| provider_call(&FaerGemmProvider, n, &a, &b, &mut c))
        });
        // The same row-major product straight into faer (transposed views of col-major
        // matrices are row-major), no validation.
        let fa = Mat::<f64>::from_fn(n, n, |i, j| a[i * n + j]);
        let fb = Mat::<f64>::from_fn(n, n, |i, j| b[i * n + j]);
        let mut fc = Mat::<f64>::zeros(n, n);
        group.bench_with_input(BenchmarkId::new("direct", n), &n, |bch, _| {
            bch.iter(|| matmul(fc.as_mut(), Accum::Replace, fa.as_ref(), fb.as_ref(), 1.0, Par::Seq))
        });
    }
    group.finish();
}

#[cfg(feature = "blas-openblas")]
fn bench_openblas(crit: &mut Criterion) {
    use strata_provider::OpenBlasProvider;
    let blas = OpenBlasProvider::single_threaded();
    let Some(dgemm) = OpenBlasProvider::cblas_entry_points().dgemm else { return };
    let mut group = crit.benchmark_group("gemm_f64_1t/openblas");
    group.sample_size(10);
    for n in SIZES {
        group.throughput(Throughput::Elements((2 * n * n * n) as u64));
        let (a, b) = inputs(n);
        let mut c = vec![0.0; n * n];
        group.bench_with_input(BenchmarkId::new("provider", n), &n, |bch, &n| {
            bch.iter(|| provider_call(&blas, n, &a, &b, &mut c))
        });
        let ni = n as i32;
        group.bench_with_input(BenchmarkId::new("direct", n), &n, |bch, _| {
            // SAFETY: row-major n × n buffers of n² elements each (CblasRowMajor = 101,
            // CblasNoTrans = 111), as cblas_dgemm documents.
            bch.iter(|| unsafe {
                dgemm(101, 111, 111, ni, ni, ni, 1.0, a.as_ptr(), ni, b.as_ptr(), ni, 0.0, c.as_mut_ptr(), ni)
            })
        });
    }
    group.finish();
}

#[cfg(not(feature = "blas-openblas"))]
fn bench_openblas(_: &mut Criterion) {}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = bench_faer, bench_openblas
}
criterion_main!(benches);
