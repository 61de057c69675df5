//! Structural kernels against naive index loops: cast (every dtype pair, by the rules of
//! SPEC §3), reshape, broadcast_in_dim, extract/embed diagonal, tril/triu, copy_into;
//! bad inputs.

mod common;

use common::{LAYOUTS, Operand, SHAPES, TestValue, at, ctx, indices, wide_data, wide_view};
use strata_kernels::structural;
use strata_tensor::{DType, ErrorKind, Tensor, TypedTensor, TypedViewMut, c32, c64};

/// A source value in exact form, for the reference cast.
#[derive(Clone, Copy, Debug)]
enum Exact {
    Int(i128),
    Float(f64, f64),
    Bool(bool),
}

trait CastRef: TestValue {
    fn exact(self) -> Exact;
    fn expected(v: Exact) -> Self;
    fn specials() -> Vec<Self>;
}

fn to_int(v: Exact, bits: u32) -> i128 {
    let (min, max) = (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1);
    match v {
        Exact::Int(i) => {
            let m = 1i128 << bits;
            let r = i.rem_euclid(m);
            if r > max { r - m } else { r }
        }
        Exact::Float(re, _) => {
            if re.is_nan() {
                0
            } else if re >= max as f64 {
                max
            } else if re <= min as f64 {
                min
            } else {
                re.trunc() as i128
            }
        }
        Exact::Bool(b) => b as i128,
    }
}

macro_rules! int_cast_ref {
    ($t:ty, $bits:expr) => {
        impl CastRef for $t {
            fn exact(self) -> Exact {
                Exact::Int(self as i128)
            }
            fn expected(v: Exact) -> Self {
                to_int(v, $bits) as $t
            }
            fn specials() -> Vec<Self> {
                vec![<$t>::MIN, <$t>::MAX, 0, -1, 1, 1 << 24 | 1, -(1 << 30) - 7]
            }
        }
    };
}
int_cast_ref!(i32, 32);
int_cast_ref!(i64, 64);

macro_rules! float_cast_ref {
    ($t:ty) => {
        impl CastRef for $t {
            fn exact(self) -> Exact {
                Exact::Float(self as f64, 0.0)
            }
            fn expected(v: Exact) -> Self {
                match v {
                    Exact::Int(i) => i as $t,
                    Exact::Float(re, _) => re as $t,
                    Exact::Bool(b) => {
                        if b {
                            1.0
                        } else {
                            0.0
                        }
                    }
                }
            }
            fn specials() -> Vec<Self> {
                vec![<$t>::NAN, <$t>::INFINITY, <$t>::NEG_INFINITY, -0.0, 2.5, -2.5, -0.9, 3e9, -3e9, 1e19, -1e19, 0.3]
            }
        }
    };
}
float_cast_ref!(f32);
float_cast_ref!(f64);

impl CastRef for bool {
    fn exact(self) -> Exact {
        Exact::Bool(self)
    }
    fn expected(v: Exact) -> Self {
        match v {
            Exact::Int(i) => i != 0,
            Exact::Float(re, _) => re.is_nan() || re != 0.0,
            Exact::Bool(b) => b,
        }
    }
    fn specials() -> Vec<Self> {
        vec![true, false]
    }
}

macro_rules! complex_cast_ref {
    ($t:ty, $r:ty) => {
        impl CastRef for $t {
            fn exact(self) -> Exact {
                Exact::Float(self.re as f64, self.im as f64)
            }
            fn expected(v: Exact) -> Self {
                match v {
                    Exact::Int(i) => <$t>::new(i as $r, 0.0),
                    Exact::Float(re, im) => <$t>::new(re as $r, im as $r),
                    Exact::Bool(b) => <$t>::new(if b { 1.0 } else { 0.0 }, 0.0),
                }
            }
            fn specials() -> Vec<Self> {
                vec![<$t>::new(2.7, -9.0), <$t>::new(-0.0, 1.0), <$t>::new(<$r>::NAN, 0.0), <$t>::new(1e12, 5.0)]
            }
        }
    };
}
complex_cast_ref!(c32, f32);
complex_cast_ref!(c64, f64);

fn same<T: TestValue>(a: T, b: T) -> bool {
    let (x, y) = (a.wide(), b.wide());
    x == y || (x.re.is_nan() && y.re.is_nan() && (x.im == y.im || (x.im.is_nan() && y.im.is_nan())))
}

fn cast_from<S: CastRef>() {
    fn to<S: CastRef, D: CastRef>() {
        for shape in SHAPES {
            for kind in LAYOUTS {
                let x = Operand::<S>::new(shape, kind, S::test_value);
                let got = structural::cast(&ctx(1), x.view().into(), D::DTYPE).unwrap();
                assert_eq!(got.dtype(), D::DTYPE);
                let got = got.as_typed::<D>().unwrap().data().to_vec();
                for (g, s) in got.iter().zip(wide_view(&x.view())) {
                    assert!(same(*g, D::expected(s.exact())), "{:?} -> {:?}: {s:?} gave {g:?}", S::DTYPE, D::DTYPE);
                }
            }
        }
        let specials = S::specials();
        let t = Tensor::from_vec(specials.clone(), &[specials.len()]).unwrap();
        let got = structural::cast(&ctx(1), (&t).into(), D::DTYPE).unwrap();
        for (g, s) in got.as_typed::<D>().unwrap().data().iter().zip(&specials) {
            assert!(same(*g, D::expected(s.exact())), "{:?} -> {:?}: {s:?} gave {g:?}", S::DTYPE, D::DTYPE);
        }
    }
    to::<S, f32>();
    to::<S, f64>();
    to::<S, i32>();
    to::<S, i64>();
    to::<S, bool>();
    to::<S, c32>();
    to::<S, c64>();
}

#[test]
fn cast_follows_the_rules_for_every_dtype_pair_and_layout() {
    cast_from::<f32>();
    cast_from::<f64>();
    cast_from::<i32>();
    cast_from::<i64>();
    cast_from::<bool>();
    cast_from::<c32>();
    cast_from::<c64>();
}

#[test]
fn cast_spot_values_by_hand() {
    let f = Tensor::from_vec(vec![-1.9f64, 1.9, f64::NAN, 1e300, -1e300, -0.0], &[6]).unwrap();
    let i = structural::cast(&ctx(1), (&f).into(), DType::I32).unwrap();
    assert_eq!(i.as_typed::<i32>().unwrap().data(), &[-1, 1, 0, i32::MAX, i32::MIN, 0]);
    let b = structural::cast(&ctx(1), (&f).into(), DType::Bool).unwrap();
    assert_eq!(b.as_typed::<bool>().unwrap().data(), &[true, true, true, true, true, false]);
    let big = Tensor::from_vec(vec![(1i64 << 32) + 5, -1], &[2]).unwrap();
    let n = structural::cast(&ctx(1), (&big).into(), DType::I32).unwrap();
    assert_eq!(n.as_typed::<i32>().unwrap().data(), &[5, -1]);
    let z = Tensor::from_vec(vec![c64::new(0.0, 3.0), c64::new(-2.5, 1.0)], &[2]).unwrap();
    let zb = structural::cast(&ctx(1), (&z).into(), DType::Bool).unwrap();
    assert_eq!(zb.as_typed::<bool>().unwrap().data(), &[false, true]);
    let zi = structural::cast(&ctx(1), (&z).into(), DType::I64).unwrap();
    assert_eq!(zi.as_typed::<i64>().unwrap().data(), &[0, -2]);
}

#[test]
fn reshape_reads_row_major_and_views_contiguous_input_without_copying() {
    let t = TypedTensor::from_fn(&[2, 3, 4], |i| (i[0] * 12 + i[1] * 4 + i[2]) as i32).unwrap();
    let tt: Tensor = t.clone().into();
    let v = structural::reshape_view((&tt).into(), &[6, 4]).unwrap().unwrap();
    let typed = v.into_typed::<i32>().unwrap();
    assert_eq!(typed.buffer().as_ptr(), tt.as_typed::<i32>().unwrap().data().as_ptr());
    // A transposed input is read in its own row-major order.
    let tr = tt.view().permute(&[2, 1, 0]).unwrap();
    let r = structural::reshape(&ctx(2), tr.clone().into(), &[4, 6]).unwrap();
    let expect: Vec<i32> = indices(&[4, 3, 2]).iter().map(|i| (i[2] * 12 + i[1] * 4 + i[0]) as i32).collect();
    assert_eq!(r.as_typed::<i32>().unwrap().data(), &expect[..]);
    assert!(structural::reshape_view(tr.clone().into(), &[24]).unwrap().is_none());
    let e = structural::reshape(&ctx(1), tr.into(), &[5, 5]).unwrap_err();
    assert_eq!((e.kind(), e.op()), (ErrorKind::ShapeMismatch, "reshape"));
    let s = Tensor::scalar(3.5f64);
    let r = structural::reshape(&ctx(1), (&s).into(), &[1, 1]).unwrap();
    assert_eq!(r.shape(), &[1, 1]);
}

#[test]
fn broadcast_in_dim_matches_naive_and_rejects_bad_dims() {
    let x = TypedTensor::from_fn(&[3, 1], |i| i[0] as f32 + 0.5).unwrap();
    let b = structural::broadcast_in_dim(&ctx(1), (&x).into(), &[2, 3, 4], &[1, 2]).unwrap();
    for idx in indices(&[2, 3, 4]) {
        assert_eq!(b.as_typed::<f32>().unwrap().get(&idx), Some(&(idx[1] as f32 + 0.5)));
    }
    // lax accepts broadcast_dimensions in any order: [3, 1] -> [4, 2, 3] with dims [2, 0]
    // puts operand axis 0 on output axis 2 (and broadcasts axis 1 onto output axis 0).
    let p = structural::broadcast_in_dim(&ctx(1), (&x).into(), &[4, 2, 3], &[2, 0]).unwrap();
    for idx in indices(&[4, 2, 3]) {
        assert_eq!(p.as_typed::<f32>().unwrap().get(&idx), Some(&(idx[2] as f32 + 0.5)));
    }
    for (shape, dims, kind) in [
        (&[2usize, 3, 4][..], &[0usize, 1][..], ErrorKind::ShapeMismatch),
        // Operand axis 0 (extent 3) onto output axis 1 (extent 4): a shape error in lax.
        (&[3, 4], &[1, 0], ErrorKind::ShapeMismatch),
        (&[3, 4], &[0, 0], ErrorKind::InvalidArgument),
        (&[3, 4], &[0], ErrorKind::InvalidArgument),
        (&[3, 4], &[0, 2], ErrorKind::InvalidArgument),
    ] {
        let e = structural::broadcast_in_dim(&ctx(1), (&x).into(), shape, dims).unwrap_err();
        assert_eq!((e.kind(), e.op()), (kind, "broadcast_in_dim"), "{shape:?} {dims:?}");
    }
}

fn check_diagonal<T: TestValue>() {
    for kind in LAYOUTS {
        let x = Operand::<T>::new(&[3, 2, 4], kind, T::test_value);
        for (a, b) in [(0usize, 2usize), (2, 0), (1, 2), (0, 1)] {
            let d = structural::extract_diagonal(&ctx(1), x.view().into(), a, b).unwrap();
            let rest: Vec<usize> = (0..3).filter(|&k| k != a && k != b).collect();
            let n = x.shape[a].min(x.shape[b]);
            assert_eq!(d.shape(), &[x.shape[rest[0]], n]);
            let got = d.as_typed::<T>().unwrap();
            for r in 0..x.shape[rest[0]] {
                for i in 0..n {
                    let mut idx = [0; 3];
                    idx[rest[0]] = r;
                    idx[a] = i;
                    idx[b] = i;
                    assert_eq!(got.get(&[r, i]), Some(&at(&x.view(), &idx)));
                }
            }
            // embed is the inverse on the diagonal and zero elsewhere.
            let e = structural::embed_diagonal(&ctx(1), (&d).into(), a, b).unwrap();
            let mut expect_shape = [0; 3];
            expect_shape[rest[0]] = x.shape[rest[0]];
            expect_shape[a] = n;
            expect_shape[b] = n;
            assert_eq!(e.shape(), &expect_shape);
            let et = e.as_typed::<T>().unwrap();
            for idx in indices(&expect_shape) {
                let want = if idx[a] == idx[b] { *got.get(&[idx[rest[0]], idx[a]]).unwrap() } else { T::zero() };
                assert_eq!(et.get(&idx), Some(&want));
            }
        }
    }
}

#[test]
fn diagonals_extract_and_embed_for_every_dtype() {
    for_each_dtype!(check_diagonal);
    let m = Tensor::zeros(DType::F32, &[2, 2]).unwrap();
    for (a, b, kind) in [(0, 0, ErrorKind::InvalidArgument), (0, 2, ErrorKind::InvalidArgument)] {
        let e = structural::extract_diagonal(&ctx(1), (&m).into(), a, b).unwrap_err();
        assert_eq!((e.kind(), e.op()), (kind, "extract_diagonal"));
    }
    let e = structural::embed_diagonal(&ctx(1), (&m).into(), 1, 3).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = structural::embed_diagonal(&ctx(1), (&Tensor::scalar(1.0f32)).into(), 0, 1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

fn check_triangles<T: TestValue>() {
    for kind in LAYOUTS {
        let x = Operand::<T>::new(&[2, 3, 5], kind, T::test_value);
        for k in [-2isize, -1, 0, 1, 4] {
            let lo = structural::tril(&ctx(2), x.view().into(), k).unwrap();
            let hi = structural::triu(&ctx(2), x.view().into(), k).unwrap();
            for idx in indices(&[2, 3, 5]) {
                let (i, j) = (idx[1] as isize, idx[2] as isize);
                let v = at(&x.view(), &idx);
                assert_eq!(lo.as_typed::<T>().unwrap().get(&idx), Some(&if j - i <= k { v } else { T::zero() }));
                assert_eq!(hi.as_typed::<T>().unwrap().get(&idx), Some(&if j - i >= k { v } else { T::zero() }));
            }
        }
    }
}

#[test]
fn tril_triu_for_every_dtype_and_layout() {
    for_each_dtype!(check_triangles);
    let v = Tensor::zeros(DType::I32, &[4]).unwrap();
    let e = structural::tril(&ctx(1), (&v).into(), 0).unwrap_err();
    assert_eq!((e.kind(), e.op()), (ErrorKind::InvalidArgument, "tril"));
    let empty = Tensor::zeros(DType::F64, &[0, 3]).unwrap();
    assert_eq!(structural::triu(&ctx(1), (&empty).into(), 0).unwrap().shape(), &[0, 3]);
}

fn check_copy_into<T: TestValue>() {
    for shape in SHAPES {
        for kind in LAYOUTS {
            let x = Operand::<T>::new(shape, kind, T::test_value);
            // Destination: column-major, then reversed on its first axis.
            let len: usize = shape.iter().product();
            let mut buf = vec![T::zero(); len];
            let mut dst = TypedViewMut::column_major(&mut buf, shape).unwrap();
            if !shape.is_empty() {
                dst = dst.reverse_axis(0).unwrap();
            }
            structural::copy_into(&ctx(2), x.view().into(), dst.into()).unwrap();
            let check = {
                let v = strata_tensor::TypedView::column_major(&buf, shape).unwrap();
                if shape.is_empty() { v } else { v.reverse_axis(0).unwrap() }
            };
            assert_eq!(wide_data(&check.to_tensor().into()), wide_data(&x.view().to_tensor().into()));
        }
    }
}

#[test]
fn copy_into_strided_destinations_for_every_dtype() {
    for_each_dtype!(check_copy_into);
    let src = Tensor::zeros(DType::F32, &[2, 3]).unwrap();
    let mut dst = Tensor::from_vec(vec![1.0f32; 6], &[3, 2]).unwrap();
    let e = structural::copy_into(&ctx(1), (&src).into(), (&mut dst).into()).unwrap_err();
    assert_eq!((e.kind(), e.op()), (ErrorKind::ShapeMismatch, "copy_into"));
    let mut wrong = Tensor::from_vec(vec![1i32; 6], &[2, 3]).unwrap();
    let e = structural::copy_into(&ctx(1), (&src).into(), (&mut wrong).into()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DTypeMismatch);
    assert_eq!(wrong.as_typed::<i32>().unwrap().data(), &[1; 6]);
    let mut f = Tensor::from_vec(vec![1.0f32; 6], &[2, 3]).unwrap();
    let e = structural::cast_into(&ctx(1), (&src).into(), (&mut dst).into()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    structural::cast_into(&ctx(1), (&wrong).into(), (&mut f).into()).unwrap();
    assert_eq!(f.as_typed::<f32>().unwrap().data(), &[1.0; 6]);
}
