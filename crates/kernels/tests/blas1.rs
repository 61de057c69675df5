//! vdot, norm_squared and axpby_into against reference loops in c64 on random strided
//! tensors of all four dtypes, and their bad inputs.

mod contraction_support;

use contraction_support::{Kind, Rng, Strided, get_c64, indices};
use strata_kernels::KernelContext;
use strata_kernels::contraction::{axpby_into, norm_squared, vdot};
use strata_tensor::{DType, ErrorKind, Tensor, c64};

fn random_shape(rng: &mut Rng) -> Vec<usize> {
    let rank = rng.range(0, 4);
    (0..rank).map(|_| if rng.chance(0.05) { 0 } else { rng.range(1, 6) }).collect()
}

fn close(kind: Kind, got: c64, want: c64, scale: f64, terms: usize, what: &str) {
    let tol = kind.eps() * (terms as f64 + 4.0) * 4.0 * scale.max(1e-30);
    assert!((got - want).norm() <= tol, "{what}: got {got}, want {want}");
}

#[test]
fn vdot_and_norm_squared_match_reference() {
    let ctx = KernelContext::sequential();
    for seed in 0..150u64 {
        let mut rng = Rng::new(1000 + seed);
        let kind = Kind::ALL[rng.range(0, 3)];
        let shape = random_shape(&mut rng);
        let plain_x = rng.chance(0.3);
        let x = Strided::random(&mut rng, kind, &shape, plain_x);
        let y = Strided::random(&mut rng, kind, &shape, false);
        let (xv, yv) = (x.view(), y.view());
        let (mut want, mut mag, mut norm) = (c64::new(0.0, 0.0), 0.0, 0.0);
        for i in indices(&shape) {
            let (a, b) = (get_c64(&xv, &i), get_c64(&yv, &i));
            want += a.conj() * b;
            mag += a.norm() * b.norm();
            norm += a.norm_sqr();
        }
        let terms = shape.iter().product();
        let d = vdot(&ctx, xv.clone().into(), yv.clone().into()).unwrap();
        assert_eq!(d.shape(), &[] as &[usize]);
        close(kind, get_c64(&d.view(), &[]), want, mag, terms, &format!("vdot seed {seed}"));
        let n = norm_squared(&ctx, xv.clone().into()).unwrap();
        assert_eq!(n.dtype(), kind_dtype(kind).real_counterpart(), "norm_squared is real");
        close(kind, get_c64(&n.view(), &[]), c64::new(norm, 0.0), norm, terms, &format!("norm seed {seed}"));
    }
}

fn kind_dtype(kind: Kind) -> DType {
    match kind {
        Kind::F32 => DType::F32,
        Kind::F64 => DType::F64,
        Kind::C32 => DType::C32,
        Kind::C64 => DType::C64,
    }
}

#[test]
fn axpby_matches_reference_and_ignores_nan_when_b_is_zero() {
    let ctx = KernelContext::sequential();
    for seed in 0..150u64 {
        let mut rng = Rng::new(5000 + seed);
        let kind = Kind::ALL[rng.range(0, 3)];
        let shape = random_shape(&mut rng);
        let plain_x = rng.chance(0.3);
        let x = Strided::random(&mut rng, kind, &shape, plain_x);
        let plain = rng.chance(0.4);
        let mut y = Strided::random(&mut rng, kind, &shape, plain);
        let a = kind.random_scalar(&mut rng);
        let b_zero = rng.chance(0.3);
        let b = if b_zero { c64::new(0.0, 0.0) } else { kind.random_scalar(&mut rng) };
        if b_zero {
            // A destination full of NaN must be overwritten, not propagated.
            y.base = Tensor::zeros(kind_dtype(kind), y.base.shape()).unwrap();
            fill_nan(&mut y.base);
        }
        let before = y.base.clone();
        let old: Vec<c64> = indices(&shape).iter().map(|i| get_c64(&y.view(), i)).collect();
        axpby_into(&ctx, a, x.view().into(), b, y.view_mut().into()).unwrap();
        let (xv, yv) = (x.view(), y.view());
        let addressed: std::collections::HashSet<usize> =
            indices(&shape).iter().map(|i| yv.layout().offset_of(i)).collect();
        for (j, i) in indices(&shape).iter().enumerate() {
            let want = a * get_c64(&xv, i) + if b_zero { c64::new(0.0, 0.0) } else { b * old[j] };
            let scale = a.norm() * get_c64(&xv, i).norm() + if b_zero { 0.0 } else { b.norm() * old[j].norm() };
            close(kind, get_c64(&yv, i), want, scale, 1, &format!("axpby seed {seed}"));
        }
        for (flat, i) in indices(before.shape()).iter().enumerate() {
            if !addressed.contains(&flat) {
                let (was, now) = (get_c64(&before.view(), i), get_c64(&y.base.view(), i));
                assert!(was == now || (was.re.is_nan() && now.re.is_nan()), "seed {seed}: wrote outside the view");
            }
        }
    }
}

fn fill_nan(t: &mut Tensor) {
    match t {
        Tensor::F32(t) => t.data_mut().fill(f32::NAN),
        Tensor::F64(t) => t.data_mut().fill(f64::NAN),
        Tensor::C32(t) => t.data_mut().fill(strata_tensor::c32::new(f32::NAN, f32::NAN)),
        Tensor::C64(t) => t.data_mut().fill(c64::new(f64::NAN, f64::NAN)),
        _ => unreachable!("contraction dtypes only"),
    }
}

#[test]
fn bad_inputs_are_typed_errors_and_leave_y_untouched() {
    let ctx = KernelContext::sequential();
    let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap();
    let xi = Tensor::from_vec(vec![1i32, 2, 3], &[3]).unwrap();
    let xf = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
    let x2 = Tensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
    let one = c64::new(1.0, 0.0);

    let e = vdot(&ctx, (&xi).into(), (&xi).into()).unwrap_err();
    assert_eq!((e.kind(), e.op()), (ErrorKind::Unsupported, "vdot"));
    assert!(e.message().contains("cast"), "{e}");
    assert_eq!(vdot(&ctx, (&x).into(), (&xf).into()).unwrap_err().kind(), ErrorKind::DTypeMismatch);
    assert_eq!(vdot(&ctx, (&x).into(), (&x2).into()).unwrap_err().kind(), ErrorKind::ShapeMismatch);
    let e = norm_squared(&ctx, (&xi).into()).unwrap_err();
    assert_eq!((e.kind(), e.op()), (ErrorKind::Unsupported, "norm_squared"));

    let mut y = Tensor::from_vec(vec![7.0f64, 8.0, 9.0], &[3]).unwrap();
    let snapshot = y.clone();
    let cases: Vec<(Tensor, c64, ErrorKind)> = vec![
        (x2.clone(), one, ErrorKind::ShapeMismatch),
        (xf.clone(), one, ErrorKind::DTypeMismatch),
        (x.clone(), c64::new(1.0, 1.0), ErrorKind::InvalidArgument),
    ];
    for (xx, a, kind) in cases {
        let e = axpby_into(&ctx, a, (&xx).into(), one, (&mut y).into()).unwrap_err();
        assert_eq!((e.kind(), e.op()), (kind, "axpby_into"), "{e}");
        assert_eq!(y.as_typed::<f64>().unwrap().data(), snapshot.as_typed::<f64>().unwrap().data());
    }
    let mut yi = xi.clone();
    let e = axpby_into(&ctx, one, (&xi).into(), one, (&mut yi).into()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert_eq!(yi.as_typed::<i32>().unwrap().data(), &[1, 2, 3]);
}
