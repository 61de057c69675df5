//! Criterion view of the suite's key cases, strata beside its peers in one group each:
//! a one-element add, a 2 × 2 matrix product, an 8 Mi f64 add into a destination, and a
//! 256³ GEMM. The full side-by-side table comes from `cargo xtask bench`.
//!
//! Run: `cargo bench -p strata-benches --bench suite`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use ndarray::{Array1, Array2, Zip};
use strata_backend::prelude::*;
use strata_benches::random_f64;
use strata_benches::subject::Strata;

fn tensor(data: Vec<f64>, shape: &[usize]) -> Tensor {
    Tensor::from(TypedTensor::from_vec(data, shape).expect("bench input shape"))
}

fn tiny(c: &mut Criterion) {
    let strata = Strata::with_threads(1).expect("strata handle");
    let mut g = c.benchmark_group("tiny_add");
    let (a, b) = (tensor(vec![1.5], &[1]), tensor(vec![2.25], &[1]));
    g.bench_function("strata", |bn| bn.iter(|| strata.backend().binary(BinaryOp::Add, &a, &b)));
    let (na, nb) = (Array1::from_vec(vec![1.5]), Array1::from_vec(vec![2.25]));
    g.bench_function("ndarray", |bn| bn.iter(|| black_box(&na + &nb)));
    g.finish();

    let mut g = c.benchmark_group("tiny_add_session");
    strata
        .backend()
        .with_session(|s| {
            g.bench_function("strata", |bn| bn.iter(|| s.binary(BinaryOp::Add, &a, &b)));
        })
        .expect("session");
    g.finish();

    let mut g = c.benchmark_group("matmul_2x2");
    let (a, b) = (tensor(vec![1.0, 2.0, 3.0, 4.0], &[2, 2]), tensor(vec![5.0, 6.0, 7.0, 8.0], &[2, 2]));
    let cfg = DotGeneral::matmul();
    g.bench_function("strata", |bn| bn.iter(|| strata.backend().dot_general(&a, &b, &cfg)));
    let (fa, fb) =
        (faer::Mat::from_fn(2, 2, |i, j| (2 * i + j) as f64), faer::Mat::from_fn(2, 2, |i, j| (i + j) as f64));
    g.bench_function("faer", |bn| bn.iter(|| black_box(&fa * &fb)));
    let (na, nb) = (Array2::<f64>::ones((2, 2)), Array2::<f64>::ones((2, 2)));
    g.bench_function("ndarray", |bn| bn.iter(|| black_box(na.dot(&nb))));
    g.finish();
}

fn streaming(c: &mut Criterion) {
    const LEN: usize = 8 << 20;
    let strata = Strata::with_threads(Strata::default_threads().expect("budget")).expect("strata handle");
    let mut g = c.benchmark_group("add_f64_8m_into");
    g.sample_size(10);
    let (va, vb) = (random_f64(LEN, 1), random_f64(LEN, 2));
    let (a, b) =
        (TypedTensor::from_vec(va.clone(), &[LEN]).expect("a"), TypedTensor::from_vec(vb.clone(), &[LEN]).expect("b"));
    let mut out = TypedTensor::<f64>::zeros(&[LEN]).expect("out");
    g.bench_function("strata", |bn| bn.iter(|| strata.backend().binary_into(BinaryOp::Add, &a, &b, &mut out)));
    let (na, nb, mut nc) = (Array1::from_vec(va.clone()), Array1::from_vec(vb.clone()), Array1::<f64>::zeros(LEN));
    g.bench_function("ndarray", |bn| bn.iter(|| Zip::from(&mut nc).and(&na).and(&nb).for_each(|c, &a, &b| *c = a + b)));
    let mut c2 = vec![0.0; LEN];
    g.bench_function("rust_loop", |bn| {
        bn.iter(|| {
            for ((c, a), b) in c2.iter_mut().zip(&va).zip(&vb) {
                *c = a + b;
            }
            black_box(&c2);
        })
    });
    g.finish();
}

fn gemm(c: &mut Criterion) {
    const N: usize = 256;
    let strata = Strata::with_threads(1).expect("strata handle");
    let mut g = c.benchmark_group("gemm_f64_256_t1");
    let (a, b) = (random_f64(N * N, 1), random_f64(N * N, 2));
    let (ta, tb) = (tensor(a.clone(), &[N, N]), tensor(b.clone(), &[N, N]));
    let mut tc = tensor(vec![0.0; N * N], &[N, N]);
    g.bench_function("strata", |bn| bn.iter(|| strata.matmul_into(&ta, &tb, &mut tc).expect("gemm")));
    let mut out = vec![0.0; N * N];
    g.bench_function("faer", |bn| {
        bn.iter(|| {
            let cm = MatMut::from_row_major_slice_mut(&mut out, N, N);
            matmul(
                cm,
                Accum::Replace,
                MatRef::from_row_major_slice(&a, N, N),
                MatRef::from_row_major_slice(&b, N, N),
                1.0,
                Par::Seq,
            )
        })
    });
    g.finish();
}

criterion_group!(benches, tiny, streaming, gemm);
criterion_main!(benches);
