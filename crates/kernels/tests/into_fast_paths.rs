//! The `_into` forms of binary, unary and compare, whose small compact operands and
//! destinations take a direct slice loop, against the naive reference: every op × every
//! dtype × every operand layout × rank 0 and empty shapes, into compact destinations
//! (the fast path) and strided ones (the general path). Also the allocating `compare`,
//! which has the same fast path, and that bad inputs leave the destination untouched.

mod common;

use common::reference::{Reference, close_c64};
use common::{LAYOUTS, LayoutKind, Operand, SHAPES, ctx, wide_view};
use strata_kernels::elementwise;
use strata_tensor::config::{BinaryOp, CompareDir, UnaryOp};
use strata_tensor::{ErrorKind, Scalar, Tensor, TypedTensor, TypedViewMut, c64};

/// A destination of `shape` filled with `fill`: compact, or a column-major view (strided).
fn run_into<T: Scalar>(
    shape: &[usize],
    fill: T,
    compact: bool,
    write: impl FnOnce(strata_tensor::TensorWrite<'_>),
) -> Vec<T> {
    let len: usize = shape.iter().product();
    if compact {
        let mut out = TypedTensor::<T>::filled(shape, fill).unwrap();
        write((&mut out).into());
        out.into_vec()
    } else {
        let mut buf = vec![fill; len];
        let view = TypedViewMut::column_major(&mut buf, shape).unwrap();
        write(view.into());
        // Read back in row-major order of the logical shape.
        let col = common::column_major_strides(shape);
        common::indices(shape)
            .iter()
            .map(|i| buf[i.iter().zip(&col).map(|(&x, &s)| x as isize * s).sum::<isize>() as usize])
            .collect()
    }
}

fn check<T: Reference>() {
    for shape in SHAPES {
        for kind in LAYOUTS {
            let a = Operand::<T>::new(shape, kind, T::test_value);
            let b =
                Operand::<T>::new(shape, LayoutKind::Contiguous, |i| T::test_value(if i % 2 == 0 { i } else { i + 7 }));
            let (av, bv) = (wide_view(&a.view()), wide_view(&b.view()));
            let fill = T::test_value(999);
            for compact in [true, false] {
                for op in BinaryOp::ALL {
                    let b_op = Operand::<T>::new(shape, LayoutKind::Contiguous, |i| {
                        if op == BinaryOp::Pow { T::exponent(i + 77) } else { T::test_value(i + 1000) }
                    });
                    let bw = wide_view(&b_op.view());
                    let mut err = None;
                    let got = run_into(shape, fill, compact, |out| {
                        err = elementwise::binary_into(&ctx(1), op, a.view().into(), b_op.view().into(), out).err();
                    });
                    if !op.supports(T::DTYPE) {
                        let e = err.expect("unsupported op refused");
                        assert_eq!((e.kind(), e.op()), (ErrorKind::Unsupported, op.name()));
                        assert!(got.iter().all(|&g| g == fill), "{op:?}: destination written on error");
                        continue;
                    }
                    assert!(err.is_none(), "{op:?} {:?}: {err:?}", T::DTYPE);
                    for ((g, &x), &y) in got.iter().zip(&av).zip(&bw) {
                        let want = T::ref_binary(op, x, y).expect("supported");
                        assert!(
                            T::close(*g, want),
                            "{op:?} {:?} {kind:?} {shape:?} compact={compact}: {g:?} vs {want:?}",
                            T::DTYPE
                        );
                    }
                }
                for op in UnaryOp::ALL {
                    if op.result_dtype(T::DTYPE) != T::DTYPE {
                        continue; // abs of complex: the real destination is another dtype
                    }
                    let mut err = None;
                    let got = run_into(shape, fill, compact, |out| {
                        err = elementwise::unary_into(&ctx(1), op, a.view().into(), out).err();
                    });
                    if !op.supports(T::DTYPE) {
                        assert_eq!(err.expect("unsupported op refused").kind(), ErrorKind::Unsupported);
                        assert!(got.iter().all(|&g| g == fill), "{op:?}: destination written on error");
                        continue;
                    }
                    assert!(err.is_none(), "{op:?} {:?}: {err:?}", T::DTYPE);
                    let tol = if matches!(T::DTYPE, strata_tensor::DType::F32 | strata_tensor::DType::C32) {
                        1e-5
                    } else {
                        1e-9
                    };
                    for (g, &x) in got.iter().zip(&av) {
                        let want: c64 = T::ref_unary(op, x).expect("supported");
                        assert!(close_c64(g.wide(), want, tol), "{op:?} {:?} {kind:?}: {g:?} vs {want}", T::DTYPE);
                    }
                }
                for dir in CompareDir::ALL {
                    let mut err = None;
                    let got = run_into(shape, true, compact, |out| {
                        err = elementwise::compare_into(&ctx(1), dir, a.view().into(), b.view().into(), out).err();
                    });
                    let alloc = elementwise::compare(&ctx(1), dir, a.view().into(), b.view().into());
                    match T::ref_compare(dir, T::test_value(0), T::test_value(1)) {
                        None => {
                            assert_eq!(err.expect("unsupported compare refused").kind(), ErrorKind::Unsupported);
                            assert!(got.iter().all(|&g| g), "{dir:?}: destination written on error");
                            assert_eq!(alloc.unwrap_err().kind(), ErrorKind::Unsupported);
                        }
                        Some(_) => {
                            assert!(err.is_none(), "{dir:?} {:?}: {err:?}", T::DTYPE);
                            let want: Vec<bool> = av
                                .iter()
                                .zip(&bv)
                                .map(|(&x, &y)| T::ref_compare(dir, x, y).expect("defined"))
                                .collect();
                            assert_eq!(got, want, "{dir:?} {:?} {kind:?} {shape:?} compact={compact}", T::DTYPE);
                            let alloc = alloc.unwrap();
                            assert_eq!(alloc.shape(), shape);
                            assert_eq!(alloc.as_typed::<bool>().unwrap().data(), &want[..]);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn into_forms_match_reference_for_every_dtype_layout_and_destination() {
    for_each_dtype!(check);
}

#[test]
fn compact_bad_inputs_leave_the_destination_untouched() {
    let a = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap();
    let a2 = Tensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
    let a32 = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
    let mut out = Tensor::from_vec(vec![7.0f64; 3], &[3]).unwrap();
    let mut flags = Tensor::from_vec(vec![true; 3], &[3]).unwrap();
    let kinds = [
        elementwise::binary_into(&ctx(1), BinaryOp::Add, (&a).into(), (&a2).into(), (&mut out).into()),
        elementwise::binary_into(&ctx(1), BinaryOp::Add, (&a).into(), (&a32).into(), (&mut out).into()),
        elementwise::binary_into(&ctx(1), BinaryOp::Add, (&a).into(), (&a).into(), (&mut flags).into()),
        elementwise::unary_into(&ctx(1), UnaryOp::Neg, (&a2).into(), (&mut out).into()),
        elementwise::compare_into(&ctx(1), CompareDir::Lt, (&a).into(), (&a).into(), (&mut out).into()),
        elementwise::compare_into(&ctx(1), CompareDir::Lt, (&a).into(), (&a2).into(), (&mut flags).into()),
    ]
    .map(|r| r.unwrap_err().kind());
    assert_eq!(
        kinds,
        [
            ErrorKind::ShapeMismatch,
            ErrorKind::DTypeMismatch,
            ErrorKind::DTypeMismatch,
            ErrorKind::ShapeMismatch,
            ErrorKind::DTypeMismatch,
            ErrorKind::ShapeMismatch,
        ]
    );
    assert_eq!(out.as_typed::<f64>().unwrap().data(), &[7.0; 3]);
    assert_eq!(flags.as_typed::<bool>().unwrap().data(), &[true; 3]);
}
