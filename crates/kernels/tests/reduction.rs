//! Reductions against a naive f64/c64 accumulation over every dtype, layout and axis
//! set; identities of empty reductions; NaN; bit-identical results for 1, 2 and 7
//! workers; bad axes and dtypes.

mod common;

use common::reference::close_c64;
use common::{LAYOUTS, Operand, SHAPES, TestValue, ctx, indices, wide_data};
use strata_kernels::reduction::{self, REDUCE_BLOCK};
use strata_tensor::config::ReduceOp;
use strata_tensor::{DType, ErrorKind, Tensor, TypedTensor, c32, c64};

/// Every subset of `0..rank`, in a few orders.
fn axis_sets(rank: usize) -> Vec<Vec<usize>> {
    let mut sets: Vec<Vec<usize>> =
        (0..1usize << rank).map(|m| (0..rank).filter(|k| m >> k & 1 == 1).collect()).collect();
    if rank >= 2 {
        sets.push((0..rank).rev().collect());
    }
    sets
}

/// The naive reduction in wide arithmetic (wrapping integer semantics are checked
/// separately; the test values here keep integer sums and products exact in i128).
fn naive<T: TestValue>(op: ReduceOp, x: &Operand<T>, axes: &[usize]) -> Vec<c64> {
    let v = x.view();
    let shape = v.shape().to_vec();
    let kept: Vec<usize> = (0..shape.len()).filter(|k| !axes.contains(k)).collect();
    let out_shape: Vec<usize> = kept.iter().map(|&k| shape[k]).collect();
    let red_shape: Vec<usize> = axes.iter().map(|&k| shape[k]).collect();
    indices(&out_shape)
        .iter()
        .map(|o| {
            let vals: Vec<c64> = indices(&red_shape)
                .iter()
                .map(|r| {
                    let mut idx = vec![0; shape.len()];
                    for (j, &k) in kept.iter().enumerate() {
                        idx[k] = o[j];
                    }
                    for (j, &k) in axes.iter().enumerate() {
                        idx[k] = r[j];
                    }
                    v.get(&idx).unwrap().wide()
                })
                .collect();
            let lex = |a: c64, b: c64| (a.re, a.im) > (b.re, b.im);
            match op {
                ReduceOp::Sum => vals.iter().sum(),
                ReduceOp::SumSquares => c64::new(vals.iter().map(|z| z.norm_sqr()).sum(), 0.0),
                ReduceOp::Prod => vals.iter().product(),
                ReduceOp::Max | ReduceOp::Min => {
                    let max = op == ReduceOp::Max;
                    let init = if T::DTYPE.is_integer() {
                        let (lo, hi) = if T::DTYPE == DType::I32 {
                            (i32::MIN as f64, i32::MAX as f64)
                        } else {
                            (i64::MIN as f64, i64::MAX as f64)
                        };
                        c64::new(if max { lo } else { hi }, 0.0)
                    } else if T::DTYPE.is_bool() {
                        c64::new(if max { 0.0 } else { 1.0 }, 0.0)
                    } else {
                        // lax's initial values: -inf (+inf) and -inf + 0i (+inf + 0i).
                        c64::new(if max { f64::NEG_INFINITY } else { f64::INFINITY }, 0.0)
                    };
                    if let [only] = vals[..] {
                        // XLA gives a single reduced element as it is.
                        return only;
                    }
                    vals.iter().fold(init, |a, &b| if lex(b, a) == max && b != a { b } else { a })
                }
            }
        })
        .collect()
}

fn check<T: TestValue>() {
    let tol = if matches!(T::DTYPE, DType::F32 | DType::C32) { 1e-4 } else { 1e-10 };
    for op in ReduceOp::ALL {
        for shape in SHAPES {
            for kind in LAYOUTS {
                let x = Operand::<T>::new(shape, kind, T::small);
                for axes in axis_sets(shape.len()) {
                    let got = reduction::reduce(&ctx(2), op, x.view().into(), &axes);
                    if !op.supports(T::DTYPE) {
                        assert_eq!(got.unwrap_err().kind(), ErrorKind::Unsupported);
                        continue;
                    }
                    let got = got.unwrap();
                    assert_eq!(got.dtype(), op.result_dtype(T::DTYPE));
                    let expect = naive(op, &x, &axes);
                    let got = wide_data(&got);
                    assert_eq!(got.len(), expect.len());
                    for (g, e) in got.iter().zip(&expect) {
                        assert!(
                            close_c64(*g, *e, tol),
                            "{op:?} {:?} {kind:?} {shape:?} axes {axes:?}: {g} vs {e}",
                            T::DTYPE
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn every_reduction_matches_naive_for_every_dtype_layout_and_axis_set() {
    for_each_dtype!(check);
}

#[test]
fn empty_reductions_give_identities() {
    let f = Tensor::from_vec(Vec::<f64>::new(), &[2, 0]).unwrap();
    let r = |op, t: &Tensor| wide_data(&reduction::reduce(&ctx(1), op, t.into(), &[1]).unwrap());
    assert_eq!(r(ReduceOp::Sum, &f), vec![c64::new(0.0, 0.0); 2]);
    assert_eq!(r(ReduceOp::Prod, &f), vec![c64::new(1.0, 0.0); 2]);
    assert_eq!(r(ReduceOp::Max, &f)[0].re, f64::NEG_INFINITY);
    assert_eq!(r(ReduceOp::Min, &f)[0].re, f64::INFINITY);
    let i = Tensor::from_vec(Vec::<i32>::new(), &[2, 0]).unwrap();
    assert_eq!(r(ReduceOp::Max, &i)[0].re, i32::MIN as f64);
    assert_eq!(r(ReduceOp::Min, &i)[0].re, i32::MAX as f64);
    let b = Tensor::from_vec(Vec::<bool>::new(), &[2, 0]).unwrap();
    assert_eq!(r(ReduceOp::Max, &b)[0].re, 0.0);
    assert_eq!(r(ReduceOp::Min, &b)[0].re, 1.0);
    // jax.lax.reduce_max / reduce_min of no complex elements: -inf+0j / inf+0j.
    for z in
        [Tensor::from_vec(Vec::<c64>::new(), &[2, 0]).unwrap(), Tensor::from_vec(Vec::<c32>::new(), &[2, 0]).unwrap()]
    {
        assert_eq!(r(ReduceOp::Max, &z), vec![c64::new(f64::NEG_INFINITY, 0.0); 2]);
        assert_eq!(r(ReduceOp::Min, &z), vec![c64::new(f64::INFINITY, 0.0); 2]);
    }
}

#[test]
fn the_initial_value_joins_every_reduction_of_two_or_more_elements() {
    // lax.reduce_max([-inf-1j, -inf-0.5j]) = -inf+0j: the initial value -inf+0j is the
    // lexicographic maximum. Over one element XLA returns the element itself.
    let r = |op, v: Vec<c64>| {
        let n = v.len();
        let t = Tensor::from_vec(v, &[n]).unwrap();
        wide_data(&reduction::reduce(&ctx(1), op, (&t).into(), &[0]).unwrap())[0]
    };
    let ninf = f64::NEG_INFINITY;
    assert_eq!(r(ReduceOp::Max, vec![c64::new(ninf, -1.0), c64::new(ninf, -0.5)]), c64::new(ninf, 0.0));
    assert_eq!(r(ReduceOp::Max, vec![c64::new(ninf, -0.5)]), c64::new(ninf, -0.5));
    assert_eq!(r(ReduceOp::Min, vec![c64::new(-ninf, 1.0), c64::new(-ninf, 0.5)]), c64::new(-ninf, 0.0));
    assert_eq!(r(ReduceOp::Min, vec![c64::new(-ninf, 0.5)]), c64::new(-ninf, 0.5));
    // The sum of [-0.0] is -0.0 (the element); of [-0.0, -0.0] it is 0 + -0 + -0 = +0.
    let sum = |v: Vec<f64>, shape: &[usize], axes: &[usize]| {
        let t = Tensor::from_vec(v, shape).unwrap();
        reduction::reduce(&ctx(1), ReduceOp::Sum, (&t).into(), axes).unwrap().as_typed::<f64>().unwrap().data().to_vec()
    };
    assert!(sum(vec![-0.0], &[1], &[0])[0].is_sign_negative());
    assert!(sum(vec![-0.0; 3], &[3, 1], &[1]).iter().all(|v| v.is_sign_negative()));
    assert!(sum(vec![-0.0], &[1, 1], &[0, 1])[0].is_sign_negative());
    assert!(sum(vec![-0.0; 2], &[2], &[0])[0].is_sign_positive());
}

#[test]
fn integer_sums_wrap_and_nan_propagates() {
    let i = Tensor::from_vec(vec![i32::MAX, 1, 1], &[3]).unwrap();
    let s = reduction::reduce(&ctx(1), ReduceOp::Sum, (&i).into(), &[0]).unwrap();
    assert_eq!(s.as_typed::<i32>().unwrap().data(), &[i32::MIN + 1]);
    let f = Tensor::from_vec(vec![1.0f32, f32::NAN, 3.0, f32::INFINITY], &[4]).unwrap();
    for op in [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod] {
        let r = reduction::reduce(&ctx(1), op, (&f).into(), &[0]).unwrap();
        assert!(r.as_typed::<f32>().unwrap().data()[0].is_nan(), "{op:?}");
    }
    let inf = Tensor::from_vec(vec![1.0f64, f64::INFINITY, -5.0], &[3]).unwrap();
    let m = reduction::reduce(&ctx(1), ReduceOp::Max, (&inf).into(), &[0]).unwrap();
    assert_eq!(m.as_typed::<f64>().unwrap().data(), &[f64::INFINITY]);
}

#[test]
fn results_are_bit_identical_for_1_2_and_7_workers() {
    let n = 7 * REDUCE_BLOCK + 123;
    let big = TypedTensor::from_fn(&[n], |i| ((i[0] * 7919) % 10007) as f32 * 1e-3 + 0.1).unwrap();
    let m =
        TypedTensor::from_fn(&[97, 3 * REDUCE_BLOCK + 5], |i| ((i[0] * 31 + i[1] * 17) % 1009) as f64 * 0.77).unwrap();
    let cases: Vec<(strata_tensor::TensorRead<'_>, Vec<usize>)> = vec![
        ((&big).into(), vec![0]),
        ((&m).into(), vec![1]),
        ((&m).into(), vec![0]),
        ((&m).into(), vec![1, 0]),
        (m.view().permute(&[1, 0]).unwrap().into(), vec![0]),
    ];
    for (x, axes) in cases {
        for op in [ReduceOp::Sum, ReduceOp::SumSquares, ReduceOp::Max] {
            let reference = reduction::reduce(&ctx(1), op, x.clone(), &axes).unwrap();
            for budget in [2, 7] {
                let got = reduction::reduce(&ctx(budget), op, x.clone(), &axes).unwrap();
                assert_eq!(got, reference, "{op:?} axes {axes:?} budget {budget}");
            }
        }
    }
    // And the blocked sum is accurate against an f64 accumulation.
    let s = reduction::reduce(&ctx(7), ReduceOp::Sum, (&big).into(), &[0]).unwrap();
    let exact: f64 = big.data().iter().map(|&x| x as f64).sum();
    let got = s.as_typed::<f32>().unwrap().data()[0] as f64;
    assert!((got - exact).abs() <= 1e-5 * exact, "{got} vs {exact}");
}

#[test]
fn bad_axes_and_dtypes_are_rejected_before_writing() {
    let x = Tensor::from_vec(vec![1.0f32; 6], &[2, 3]).unwrap();
    let mut out = Tensor::from_vec(vec![9.0f32; 2], &[2]).unwrap();
    for (axes, kind) in [(&[2usize][..], ErrorKind::InvalidArgument), (&[1, 1], ErrorKind::InvalidArgument)] {
        let e = reduction::reduce_into(&ctx(1), ReduceOp::Sum, (&x).into(), axes, (&mut out).into()).unwrap_err();
        assert_eq!((e.kind(), e.op()), (kind, "reduce_sum"));
    }
    let e = reduction::reduce_into(&ctx(1), ReduceOp::Sum, (&x).into(), &[0], (&mut out).into()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    let z = Tensor::from_vec(vec![strata_tensor::c32::new(3.0, 4.0)], &[1]).unwrap();
    let mut zout = Tensor::scalar(strata_tensor::c32::new(0.0, 0.0));
    let e = reduction::reduce_into(&ctx(1), ReduceOp::SumSquares, (&z).into(), &[0], (&mut zout).into()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DTypeMismatch);
    assert_eq!(out.as_typed::<f32>().unwrap().data(), &[9.0, 9.0]);
    let b = Tensor::from_vec(vec![true], &[1]).unwrap();
    let e = reduction::reduce(&ctx(1), ReduceOp::Prod, (&b).into(), &[0]).unwrap_err();
    assert_eq!((e.kind(), e.op()), (ErrorKind::Unsupported, "reduce_prod"));
    // reduce_into a strided destination.
    let mut col = vec![0.0f32; 3];
    let dst = strata_tensor::TypedViewMut::new(&mut col, &[3], &[-1], 2).unwrap();
    reduction::reduce_into(&ctx(1), ReduceOp::Sum, (&x).into(), &[0], dst.into()).unwrap();
    assert_eq!(col, vec![2.0; 3]);
}

fn random_case() -> impl proptest::strategy::Strategy<Value = (Vec<usize>, Vec<usize>, Vec<bool>, Vec<bool>, usize)> {
    use proptest::prelude::*;
    (0usize..=6).prop_flat_map(|rank| {
        (
            proptest::collection::vec(0usize..5, rank),
            Just((0..rank).collect::<Vec<_>>()).prop_shuffle(),
            proptest::collection::vec(any::<bool>(), rank),
            proptest::collection::vec(any::<bool>(), rank),
            1usize..=7,
        )
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(100))]
    #[test]
    fn random_layouts_and_axes_match_naive((shape, perm, reversed, reduced, budget) in random_case()) {
        let base = TypedTensor::from_fn(&shape, |i| i.iter().fold(0.25, |a, &x| a * 1.5 + x as f64 - 1.0)).unwrap();
        let mut v = base.view().permute(&perm).unwrap();
        for (axis, &r) in reversed.iter().enumerate() {
            if r { v = v.reverse_axis(axis).unwrap(); }
        }
        let axes: Vec<usize> = (0..shape.len()).filter(|&k| reduced[k]).collect();
        let x = Operand { buf: base.data().to_vec(), shape: v.shape().to_vec(), strides: v.strides().to_vec(), offset: v.offset() };
        for op in [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Prod] {
            let got = wide_data(&reduction::reduce(&ctx(budget), op, v.clone().into(), &axes).unwrap());
            let expect = naive(op, &x, &axes);
            proptest::prop_assert_eq!(got.len(), expect.len());
            for (g, e) in got.iter().zip(&expect) {
                proptest::prop_assert!(close_c64(*g, *e, 1e-9), "{:?} axes {:?}: {} vs {}", op, axes, g, e);
            }
        }
    }
}
