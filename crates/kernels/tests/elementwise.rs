//! Elementwise kernels against the naive reference: every op × every dtype × every
//! layout (contiguous, transposed, negative strides, broadcast) × rank 0 and empty
//! shapes; lax edge cases by hand; bad inputs; parallel determinism.

mod common;

use common::reference::{Reference, close_c64};
use common::{LAYOUTS, LayoutKind, Operand, SHAPES, ctx, wide_data, wide_view};
use proptest::prelude::*;
use strata_kernels::elementwise::{self, ElementwiseOp};
use strata_tensor::config::{BinaryOp, CompareDir, UnaryOp};
use strata_tensor::{DType, ErrorKind, Scalar, Tensor, TensorRead, TypedTensor, TypedViewMut, c32, c64};

fn data<T: Scalar>(t: &Tensor) -> Vec<T> {
    t.as_typed::<T>().expect("result dtype").data().to_vec()
}

fn check_binary<T: Reference>() {
    for op in BinaryOp::ALL {
        for shape in SHAPES {
            for kind in LAYOUTS {
                let a = Operand::<T>::new(shape, kind, T::test_value);
                let b = Operand::<T>::new(shape, LayoutKind::Contiguous, |i| {
                    if op == BinaryOp::Pow { T::exponent(i + 77) } else { T::test_value(i + 1000) }
                });
                let got = elementwise::binary(&ctx(2), op, a.view().into(), b.view().into());
                if !op.supports(T::DTYPE) {
                    let e = got.unwrap_err();
                    assert_eq!((e.kind(), e.op()), (ErrorKind::Unsupported, op.name()));
                    continue;
                }
                let got = data::<T>(&got.unwrap());
                assert_eq!(got.len(), a.view().len());
                for ((g, x), y) in got.iter().zip(wide_view(&a.view())).zip(wide_view(&b.view())) {
                    let expect = T::ref_binary(op, x, y).expect("supported");
                    assert!(
                        T::close(*g, expect),
                        "{op:?} {:?} {kind:?} {shape:?}: {x:?}, {y:?} gave {g:?}, expected {expect:?}",
                        T::DTYPE
                    );
                }
            }
        }
    }
}

#[test]
fn binary_ops_match_reference_for_every_dtype_and_layout() {
    for_each_dtype!(check_binary);
}

fn unary_tol(d: DType) -> f64 {
    match d {
        DType::F32 | DType::C32 => 1e-5,
        _ => 1e-9,
    }
}

fn check_unary<T: Reference>() {
    for op in UnaryOp::ALL {
        for shape in SHAPES {
            for kind in LAYOUTS {
                let a = Operand::<T>::new(shape, kind, T::test_value);
                let got = elementwise::unary(&ctx(1), op, a.view().into());
                if !op.supports(T::DTYPE) {
                    let e = got.unwrap_err();
                    assert_eq!((e.kind(), e.op()), (ErrorKind::Unsupported, op.name()));
                    assert!(T::ref_unary(op, T::test_value(0)).is_none() || !T::DTYPE.is_bool());
                    continue;
                }
                let got = got.unwrap();
                assert_eq!(got.dtype(), op.result_dtype(T::DTYPE));
                for (g, x) in wide_data(&got).iter().zip(wide_view(&a.view())) {
                    let expect = T::ref_unary(op, x).expect("supported");
                    assert!(
                        close_c64(*g, expect, unary_tol(T::DTYPE)),
                        "{op:?} {:?} {kind:?}: {x:?} gave {g}, expected {expect}",
                        T::DTYPE
                    );
                }
            }
        }
    }
}

#[test]
fn unary_and_analytic_ops_match_reference_for_every_dtype_and_layout() {
    for_each_dtype!(check_unary);
}

fn check_compare_select_clamp<T: Reference>() {
    for shape in SHAPES {
        for kind in LAYOUTS {
            let a = Operand::<T>::new(shape, kind, T::test_value);
            // Half of b's elements equal a's, so eq/le/ge see both outcomes.
            let b =
                Operand::<T>::new(shape, LayoutKind::Contiguous, |i| T::test_value(if i % 2 == 0 { i } else { i + 5 }));
            let a_vals = wide_view(&a.view());
            let b_vals = wide_view(&b.view());
            for dir in CompareDir::ALL {
                let got = elementwise::compare(&ctx(1), dir, a.view().into(), b.view().into());
                match T::ref_compare(dir, T::test_value(0), T::test_value(1)) {
                    None => assert_eq!(got.unwrap_err().kind(), ErrorKind::Unsupported),
                    Some(_) => {
                        let got = data::<bool>(&got.unwrap());
                        let expect: Vec<bool> = a_vals
                            .iter()
                            .zip(&b_vals)
                            .map(|(&x, &y)| T::ref_compare(dir, x, y).expect("defined"))
                            .collect();
                        assert_eq!(got, expect, "{dir:?} {:?} {kind:?} {shape:?}", T::DTYPE);
                    }
                }
            }
            let pred = Operand::<bool>::new(shape, kind, |i| i % 3 == 0);
            let sel =
                data::<T>(&elementwise::select(&ctx(1), pred.view().into(), a.view().into(), b.view().into()).unwrap());
            for (i, s) in sel.iter().enumerate() {
                let p = wide_view(&pred.view())[i];
                assert_eq!(*s, if p { a_vals[i] } else { b_vals[i] });
            }
            let lo = Operand::<T>::new(shape, kind, |i| T::test_value(i + 31));
            let hi = Operand::<T>::new(shape, LayoutKind::Contiguous, |i| T::test_value(i + 63));
            let clamped =
                data::<T>(&elementwise::clamp(&ctx(1), lo.view().into(), a.view().into(), hi.view().into()).unwrap());
            for (i, c) in clamped.iter().enumerate() {
                let (l, h) = (wide_view(&lo.view())[i], wide_view(&hi.view())[i]);
                let expect =
                    T::ref_binary(BinaryOp::Min, T::ref_binary(BinaryOp::Max, a_vals[i], l).unwrap(), h).unwrap();
                assert!(T::close(*c, expect), "clamp {:?}: {c:?} vs {expect:?}", T::DTYPE);
            }
        }
    }
}

#[test]
fn compare_select_clamp_match_reference_for_every_dtype_and_layout() {
    for_each_dtype!(check_compare_select_clamp);
}

#[test]
fn integer_division_follows_xla() {
    let a = Tensor::from_vec(vec![7i32, -7, 7, -7, i32::MIN, i32::MIN, 5, -5, 0], &[9]).unwrap();
    let b = Tensor::from_vec(vec![2i32, 2, -2, -2, -1, 0, 0, 0, 0], &[9]).unwrap();
    let q = elementwise::div(&ctx(1), (&a).into(), (&b).into()).unwrap();
    assert_eq!(data::<i32>(&q), vec![3, -3, -3, 3, i32::MIN, -1, -1, -1, -1]);
    let r = elementwise::rem(&ctx(1), (&a).into(), (&b).into()).unwrap();
    assert_eq!(data::<i32>(&r), vec![1, -1, 1, -1, 0, i32::MIN, 5, -5, 0]);
    let n = elementwise::neg(&ctx(1), (&a).into()).unwrap();
    assert_eq!(data::<i32>(&n)[4], i32::MIN);
    let m = elementwise::abs(&ctx(1), (&a).into()).unwrap();
    assert_eq!(data::<i32>(&m)[4], i32::MIN);
    let s = elementwise::add(&ctx(1), (&a).into(), (&a).into()).unwrap();
    assert_eq!(data::<i32>(&s)[4], 0);
}

#[test]
fn integer_pow_is_unsupported_as_in_lax() {
    // jax.lax.pow: "pow does not accept dtype int32 at position 0".
    for a in [Tensor::from_vec(vec![2i64, 3], &[2]).unwrap(), Tensor::from_vec(vec![2i32, 3], &[2]).unwrap()] {
        let e = strata_kernels::analytic::pow(&ctx(1), (&a).into(), (&a).into()).unwrap_err();
        assert_eq!((e.kind(), e.op()), (ErrorKind::Unsupported, "pow"));
    }
}

#[test]
fn float_rem_is_fmod_and_max_min_propagate_nan_and_order_signed_zeros() {
    let a = Tensor::from_vec(vec![5.5f64, -5.5, 5.5, f64::NAN, 1.0, -0.0, 0.0, f64::INFINITY], &[8]).unwrap();
    let b = Tensor::from_vec(vec![2.0f64, 2.0, -2.0, 1.0, f64::NAN, 0.0, -0.0, 1.0], &[8]).unwrap();
    let r = data::<f64>(&elementwise::rem(&ctx(1), (&a).into(), (&b).into()).unwrap());
    assert_eq!(&r[..3], &[1.5, -1.5, 1.5]);
    assert!(r[3].is_nan() && r[4].is_nan() && r[7].is_nan());
    let mx = data::<f64>(&elementwise::maximum(&ctx(1), (&a).into(), (&b).into()).unwrap());
    let mn = data::<f64>(&elementwise::minimum(&ctx(1), (&a).into(), (&b).into()).unwrap());
    assert!(mx[3].is_nan() && mx[4].is_nan() && mn[3].is_nan() && mn[4].is_nan());
    // -0 < +0 in both argument orders.
    assert!(mx[5] == 0.0 && mx[5].is_sign_positive() && mx[6].is_sign_positive());
    assert!(mn[5] == 0.0 && mn[5].is_sign_negative() && mn[6].is_sign_negative());
    let s = data::<f64>(&elementwise::sign(&ctx(1), (&a).into()).unwrap());
    assert_eq!(&s[..3], &[1.0, -1.0, 1.0]);
    assert!(s[3].is_nan() && s[5].is_sign_negative() && s[5] == 0.0);
}

#[test]
fn complex_max_min_are_lexicographic_and_abs_sign_follow_lax() {
    let a = Tensor::from_vec(vec![c64::new(1.0, 5.0), c64::new(2.0, -1.0), c64::new(0.0, 0.0)], &[3]).unwrap();
    let b = Tensor::from_vec(vec![c64::new(1.0, 6.0), c64::new(1.0, 9.0), c64::new(-3.0, 4.0)], &[3]).unwrap();
    let mx = data::<c64>(&elementwise::maximum(&ctx(1), (&a).into(), (&b).into()).unwrap());
    assert_eq!(mx, vec![c64::new(1.0, 6.0), c64::new(2.0, -1.0), c64::new(0.0, 0.0)]);
    let mn = data::<c64>(&elementwise::minimum(&ctx(1), (&a).into(), (&b).into()).unwrap());
    assert_eq!(mn, vec![c64::new(1.0, 5.0), c64::new(1.0, 9.0), c64::new(-3.0, 4.0)]);
    let ab = elementwise::abs(&ctx(1), (&b).into()).unwrap();
    assert_eq!(ab.dtype(), DType::F64);
    assert_eq!(data::<f64>(&ab)[2], 5.0);
    let sg = data::<c64>(&elementwise::sign(&ctx(1), (&a).into()).unwrap());
    assert_eq!(sg[2], c64::new(0.0, 0.0));
    let sb = data::<c64>(&elementwise::sign(&ctx(1), (&b).into()).unwrap());
    assert_eq!(sb[2], c64::new(-0.6, 0.8));
    let lt = elementwise::compare(&ctx(1), CompareDir::Lt, (&a).into(), (&b).into()).unwrap_err();
    assert_eq!(lt.kind(), ErrorKind::Unsupported);
    let c = Tensor::from_vec(vec![c32::new(3.0, -4.0)], &[1]).unwrap();
    assert_eq!(elementwise::abs(&ctx(1), (&c).into()).unwrap().as_typed::<f32>().unwrap().data(), &[5.0]);
}

#[test]
fn clamp_accepts_rank_zero_bounds() {
    let x = Tensor::from_vec(vec![-3i32, 0, 4, 9], &[2, 2]).unwrap();
    let (lo, hi) = (Tensor::scalar(-1i32), Tensor::scalar(5i32));
    let c = elementwise::clamp(&ctx(1), (&lo).into(), (&x).into(), (&hi).into()).unwrap();
    assert_eq!(data::<i32>(&c), vec![-1, 0, 4, 5]);
    let bad = Tensor::from_vec(vec![0i32, 1], &[2]).unwrap();
    let e = elementwise::clamp(&ctx(1), (&bad).into(), (&x).into(), (&hi).into()).unwrap_err();
    assert_eq!((e.kind(), e.op()), (ErrorKind::ShapeMismatch, "clamp"));
}

#[test]
fn into_forms_write_strided_destinations() {
    let a = TypedTensor::from_fn(&[3, 4], |i| (i[0] * 4 + i[1]) as f64).unwrap();
    let b = TypedTensor::from_fn(&[3, 4], |i| (i[1] * 10) as f64).unwrap();
    // Destination: a column-major buffer seen as [3, 4].
    let mut buf = vec![0.0f64; 12];
    let dst = TypedViewMut::column_major(&mut buf, &[3, 4]).unwrap();
    elementwise::add_into(&ctx(1), (&a).into(), (&b).into(), dst.into()).unwrap();
    for i in 0..3 {
        for j in 0..4 {
            assert_eq!(buf[j * 3 + i], (i * 4 + j) as f64 + (j * 10) as f64);
        }
    }
    let mut out = Tensor::zeros(DType::Bool, &[3, 4]).unwrap();
    elementwise::elementwise_into(
        &ctx(1),
        ElementwiseOp::Compare(CompareDir::Gt),
        &[(&a).into(), (&b).into()],
        (&mut out).into(),
    )
    .unwrap();
    assert!(!data::<bool>(&out)[1]);
    assert!(data::<bool>(&out)[4]);
}

#[test]
fn bad_inputs_are_rejected_before_the_destination_is_written() {
    let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
    let b64 = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap();
    let b2 = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    let sentinel = vec![7.0f32; 3];
    let mut out = Tensor::from_vec(sentinel.clone(), &[3]).unwrap();
    let cases: Vec<(TensorRead<'_>, ErrorKind)> =
        vec![((&b64).into(), ErrorKind::DTypeMismatch), ((&b2).into(), ErrorKind::ShapeMismatch)];
    for (b, kind) in cases {
        let e = elementwise::mul_into(&ctx(1), (&a).into(), b, (&mut out).into()).unwrap_err();
        assert_eq!((e.kind(), e.op()), (kind, "mul"));
        assert_eq!(data::<f32>(&out), sentinel);
    }
    // Destination of the wrong dtype or shape.
    let mut wrong_dtype = Tensor::from_vec(vec![7.0f64; 3], &[3]).unwrap();
    let e = elementwise::add_into(&ctx(1), (&a).into(), (&a).into(), (&mut wrong_dtype).into()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DTypeMismatch);
    assert_eq!(data::<f64>(&wrong_dtype), vec![7.0; 3]);
    let mut wrong_shape = Tensor::from_vec(vec![7.0f32; 3], &[3, 1]).unwrap();
    let e = elementwise::add_into(&ctx(1), (&a).into(), (&a).into(), (&mut wrong_shape).into()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    // An op undefined for the dtype, with an otherwise valid destination.
    let flags = Tensor::from_vec(vec![true, false], &[2]).unwrap();
    let mut bool_out = Tensor::from_vec(vec![true, true], &[2]).unwrap();
    let e = elementwise::add_into(&ctx(1), (&flags).into(), (&flags).into(), (&mut bool_out).into()).unwrap_err();
    assert_eq!((e.kind(), e.op()), (ErrorKind::Unsupported, "add"));
    assert_eq!(data::<bool>(&bool_out), vec![true, true]);
    let e = elementwise::unary_into(&ctx(1), UnaryOp::Exp, (&flags).into(), (&mut bool_out).into()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    // Select with a non-Bool predicate; abs of complex into a complex destination.
    let e = elementwise::select(&ctx(1), (&a).into(), (&a).into(), (&a).into()).unwrap_err();
    assert_eq!((e.kind(), e.op()), (ErrorKind::DTypeMismatch, "select"));
    let z = Tensor::from_vec(vec![c32::new(1.0, 1.0)], &[1]).unwrap();
    let mut zout = Tensor::from_vec(vec![c32::new(9.0, 9.0)], &[1]).unwrap();
    let e = elementwise::abs_into(&ctx(1), (&z).into(), (&mut zout).into()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DTypeMismatch);
    assert_eq!(data::<c32>(&zout), vec![c32::new(9.0, 9.0)]);
    let e =
        elementwise::elementwise_into(&ctx(1), ElementwiseOp::Select, &[(&a).into()], (&mut out).into()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn large_strided_work_is_identical_for_any_worker_count() {
    let base = TypedTensor::from_fn(&[300, 257], |i| ((i[0] * 257 + i[1]) % 1013) as f64 * 0.37 - 50.0).unwrap();
    let row = TypedTensor::from_fn(&[300], |i| i[0] as f64 * 0.5).unwrap();
    let t = base.view().permute(&[1, 0]).unwrap().reverse_axis(0).unwrap();
    let r = row.view().broadcast_in_dim(&[257, 300], &[1]).unwrap();
    let expect: Vec<f64> = wide_view(&t).iter().zip(wide_view(&r)).map(|(x, y)| x * y).collect();
    for budget in [1, 2, 7] {
        let got = elementwise::mul(&ctx(budget), t.clone().into(), r.clone().into()).unwrap();
        assert_eq!(data::<f64>(&got), expect, "budget {budget}");
    }
}

fn layout_case() -> impl Strategy<Value = (Vec<usize>, Vec<usize>, Vec<bool>, usize)> {
    (0usize..=6).prop_flat_map(|rank| {
        (
            proptest::collection::vec(0usize..5, rank),
            Just((0..rank).collect::<Vec<_>>()).prop_shuffle(),
            proptest::collection::vec(any::<bool>(), rank),
            1usize..=7,
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]
    #[test]
    fn random_layouts_match_naive((shape, perm, reversed, budget) in layout_case()) {
        // `a` is a permuted, partly reversed view whose shape is `shape` permuted.
        let src_shape: Vec<usize> = {
            let mut s = vec![0; shape.len()];
            for (k, &p) in perm.iter().enumerate() { s[p] = shape[k]; }
            s
        };
        let base = TypedTensor::from_fn(&src_shape, |i| i.iter().fold(0.5, |a, &x| a * 3.0 + x as f64)).unwrap();
        let mut a = base.view().permute(&perm).unwrap();
        for (axis, &r) in reversed.iter().enumerate() {
            if r { a = a.reverse_axis(axis).unwrap(); }
        }
        let b = TypedTensor::from_fn(&shape, |i| i.iter().fold(-1.0, |a, &x| a * 2.0 - x as f64)).unwrap();
        for op in [BinaryOp::Sub, BinaryOp::Max] {
            let got = elementwise::binary(&ctx(budget), op, a.clone().into(), (&b).into()).unwrap();
            let expect: Vec<f64> = wide_view(&a).iter().zip(b.data()).map(|(&x, &y)| <f64 as Reference>::ref_binary(op, x, y).unwrap()).collect();
            prop_assert_eq!(data::<f64>(&got), expect);
        }
    }
}
