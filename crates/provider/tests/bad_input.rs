//! Malformed GEMM requests: every provider answers with the same typed error and leaves
//! C untouched.
#![cfg(feature = "faer")]

mod common;

use strata_provider::{
    BatchedGemm, FaerGemmProvider, GemmError, GemmMatrix, GemmMatrixMut, GemmProvider, GemmScalar, NaiveGemmProvider,
    Operand, reference,
};
use strata_tensor::{ErrorKind, c64};

fn providers() -> Vec<Box<dyn GemmProvider>> {
    #[cfg_attr(not(feature = "blas-openblas"), allow(unused_mut))]
    let mut v: Vec<Box<dyn GemmProvider>> = vec![
        Box::new(FaerGemmProvider),
        Box::new(NaiveGemmProvider::new()),
        Box::new(common::naive_blas::naive_cblas_provider()),
        Box::new(common::naive_blas::naive_fortran_provider()),
    ];
    #[cfg(feature = "blas-openblas")]
    v.push(Box::new(strata_provider::OpenBlasProvider::single_threaded()));
    v
}

/// A 2 × 3 · 3 × 4 row-major product over a buffer layout the caller then breaks.
struct Bufs {
    a: Vec<c64>,
    b: Vec<c64>,
    c: Vec<c64>,
}

fn bufs() -> Bufs {
    Bufs {
        a: (0..6).map(|i| c64::new(i as f64, 1.0)).collect(),
        b: (0..12).map(|i| c64::new(1.0, i as f64)).collect(),
        c: vec![c64::new(7.0, -7.0); 8],
    }
}

fn job<'a>(bufs: &'a Bufs, c: &'a mut [c64]) -> BatchedGemm<'a, c64> {
    BatchedGemm {
        batch: 1,
        m: 2,
        n: 4,
        k: 3,
        alpha: c64::new(1.0, 0.0),
        a: GemmMatrix::row_major(&bufs.a, 2, 3),
        conj_a: false,
        b: GemmMatrix::row_major(&bufs.b, 3, 4),
        conj_b: false,
        beta: c64::new(0.5, 0.0),
        c: GemmMatrixMut::row_major(c, 2, 4),
    }
}

/// Runs the broken job through every provider and the reference: each must refuse with
/// `check`'s error before writing.
fn expect_refusal(edit: impl Fn(&mut BatchedGemm<'_, c64>), threads: usize, check: impl Fn(&GemmError)) {
    let b = bufs();
    let run_one = |run: &dyn Fn(&mut BatchedGemm<'_, c64>) -> Result<(), GemmError>| {
        let mut c = b.c.clone();
        let mut j = job(&b, &mut c);
        edit(&mut j);
        let err = run(&mut j).expect_err("malformed request accepted");
        check(&err);
        assert_eq!(c, b.c, "C was written before the refusal");
        let converted: strata_tensor::Error = err.into();
        assert_eq!(converted.op(), "gemm");
    };
    for p in providers() {
        run_one(&|j| c64::gemm(p.as_ref(), j, &*common::par(threads)));
    }
    if threads > 0 {
        run_one(&|j| reference::gemm(j));
    }
}

#[test]
fn a_reaching_past_its_buffer() {
    expect_refusal(
        |j| j.k = 4,
        1,
        |e| match e {
            GemmError::OutOfBounds { operand: Operand::A, highest, len, .. } => {
                assert_eq!((*highest, *len), (6, 6));
            }
            other => panic!("unexpected {other:?}"),
        },
    );
}

#[test]
fn b_reaching_below_index_zero() {
    expect_refusal(
        |j| j.b.row_stride = -4,
        1,
        |e| match e {
            GemmError::OutOfBounds { operand: Operand::B, lowest, .. } => assert_eq!(*lowest, -8),
            other => panic!("unexpected {other:?}"),
        },
    );
}

#[test]
fn c_batch_past_its_buffer() {
    // Dimensions that disagree with the buffers show up as out-of-bounds operands.
    expect_refusal(
        |j| {
            j.batch = 2;
            j.a.batch_stride = 0;
            j.b.batch_stride = 0;
        },
        1,
        |e| assert!(matches!(e, GemmError::OutOfBounds { operand: Operand::C, len: 8, .. }), "{e:?}"),
    );
}

#[test]
fn offset_past_the_end() {
    expect_refusal(
        |j| j.c.offset = 1,
        1,
        |e| assert!(matches!(e, GemmError::OutOfBounds { operand: Operand::C, offset: 1, highest: 8, .. }), "{e:?}"),
    );
}

#[test]
fn overflowing_strides() {
    expect_refusal(
        |j| {
            j.m = usize::MAX;
            j.a.row_stride = isize::MAX;
            j.a.batch_stride = isize::MAX;
            j.batch = usize::MAX;
        },
        1,
        |e| {
            assert!(
                matches!(e, GemmError::IndexOverflow { operand: Operand::A, .. } | GemmError::OutOfBounds { .. }),
                "{e:?}"
            )
        },
    );
}

#[test]
fn output_rows_sharing_memory() {
    expect_refusal(
        |j| {
            j.c.row_stride = 0;
        },
        1,
        |e| {
            assert_eq!(*e, GemmError::OutputAliasing { extents: [1, 2, 4], strides: [8, 0, 1] });
            assert_eq!(strata_tensor::Error::from(e.clone()).kind(), ErrorKind::InvalidArgument);
        },
    );
}

#[test]
fn output_rows_interleaving() {
    // Row stride 2 with 4 columns of stride 1: row 1 starts inside row 0.
    expect_refusal(|j| j.c.row_stride = 2, 1, |e| assert!(matches!(e, GemmError::OutputAliasing { .. }), "{e:?}"));
}

#[test]
fn zero_threads() {
    expect_refusal(|_| {}, 0, |e| assert_eq!(*e, GemmError::ZeroThreads));
}

#[test]
fn unsupported_dtype_of_an_injected_provider_is_a_refusal() {
    let fns =
        strata_provider::CblasGemmFns { dgemm: common::naive_blas::naive_cblas_fns().dgemm, ..Default::default() };
    // SAFETY: the naive entry point implements column-major CBLAS dgemm.
    let p = unsafe {
        strata_provider::BlasGemmProvider::from_cblas("dgemm-only", fns, strata_provider::BlasThreading::SEQUENTIAL)
    };
    let b = bufs();
    let mut c = b.c.clone();
    let err = c64::gemm(&p, &mut job(&b, &mut c), &*common::par(1)).unwrap_err();
    assert!(err.is_unsupported(), "{err:?}");
    assert_eq!(c, b.c);
    assert_eq!(strata_tensor::Error::from(err).kind(), ErrorKind::Unsupported);
}

#[test]
fn blas_style_refusals_name_the_operand() {
    let p = common::naive_blas::naive_cblas_provider();
    let b = bufs();
    let mut c = b.c.clone();
    let mut j = job(&b, &mut c);
    // A is 2 × 2 with strides (3, 2): in bounds, but no unit stride.
    j.a.col_stride = 2;
    j.a.row_stride = 3;
    j.k = 2;
    match c64::gemm(&p, &mut j, &*common::par(1)) {
        Err(GemmError::Unsupported { provider, reason }) => {
            assert_eq!(provider, "naive-cblas");
            assert!(reason.contains("operand A"), "{reason}");
        }
        other => panic!("unexpected {other:?}"),
    }
    // ... while faer computes the same request.
    let mut c2 = b.c.clone();
    let mut j2 = job(&b, &mut c2);
    j2.a.col_stride = 2;
    j2.a.row_stride = 3;
    j2.k = 2;
    c64::gemm(&FaerGemmProvider, &mut j2, &*common::par(1)).unwrap();
    assert_ne!(c2, b.c);
}
