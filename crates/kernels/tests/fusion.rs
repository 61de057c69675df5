//! Fusion against the unfused sequence of standalone kernels (bit-identical, on every
//! layout), multiple outputs, every instruction kind, bad plans, worker counts; and
//! broadcast-multiply against a materialised broadcast.

mod common;

use common::{LAYOUTS, LayoutKind, Operand, SHAPES, ctx};
use strata_kernels::{analytic, elementwise, fusion, structural};
use strata_tensor::config::{BinaryOp, CompareDir, ElementwiseFusionPlan, FusionConstant, FusionInstr, UnaryOp};
use strata_tensor::{DType, ErrorKind, Tensor, TensorRead, TypedTensor, c64};

/// out0 = max(exp(x * 0.5) - y, 0); out1 = |x| > y as Bool; out2 = cast(select(..), i32).
fn plan() -> ElementwiseFusionPlan {
    use FusionInstr::*;
    let mut p = ElementwiseFusionPlan::default();
    let x = p.push(Input(0));
    let y = p.push(Input(1));
    let half = p.push(Constant(FusionConstant::F64(0.5)));
    let zero = p.push(Constant(FusionConstant::F64(0.0)));
    let xh = p.push(Binary(BinaryOp::Mul, x, half));
    let e = p.push(Unary(UnaryOp::Exp, xh));
    let d = p.push(Binary(BinaryOp::Sub, e, y));
    let m = p.push(Binary(BinaryOp::Max, d, zero));
    let ax = p.push(Unary(UnaryOp::Abs, x));
    let gt = p.push(Compare(CompareDir::Gt, ax, y));
    let s = p.push(Select { pred: gt, on_true: m, on_false: y });
    let c = p.push(Clamp { lo: zero, x: s, hi: half });
    let ci = p.push(Cast(c, DType::I32));
    p.add_output(m);
    p.add_output(gt);
    p.add_output(ci);
    p
}

fn unfused(x: TensorRead<'_>, y: TensorRead<'_>) -> Vec<Tensor> {
    let c = ctx(1);
    let shape = x.shape().to_vec();
    let scalar = |v: f64| Tensor::from(TypedTensor::filled(&shape, v).unwrap());
    let (half, zero) = (scalar(0.5), scalar(0.0));
    let xh = elementwise::mul(&c, x.clone(), (&half).into()).unwrap();
    let e = analytic::exp(&c, (&xh).into()).unwrap();
    let d = elementwise::sub(&c, (&e).into(), y.clone()).unwrap();
    let m = elementwise::maximum(&c, (&d).into(), (&zero).into()).unwrap();
    let ax = elementwise::abs(&c, x).unwrap();
    let gt = elementwise::compare(&c, CompareDir::Gt, (&ax).into(), y.clone()).unwrap();
    let s = elementwise::select(&c, (&gt).into(), (&m).into(), y).unwrap();
    let cl = elementwise::clamp(&c, (&zero).into(), (&s).into(), (&half).into()).unwrap();
    let ci = structural::cast(&c, (&cl).into(), DType::I32).unwrap();
    vec![m, gt, ci]
}

#[test]
fn fused_plan_equals_the_unfused_sequence_on_every_layout() {
    let p = plan();
    for shape in SHAPES {
        for kind in LAYOUTS {
            let x = Operand::<f64>::new(shape, kind, |i| ((i * 37) % 23) as f64 * 0.41 - 4.0);
            let y = Operand::<f64>::new(shape, LayoutKind::NegativeStride, |i| ((i * 11) % 7) as f64 * 0.5);
            let fused = fusion::execute(&ctx(2), &p, &[x.view().into(), y.view().into()]).unwrap();
            let expect = unfused(x.view().into(), y.view().into());
            assert_eq!(fused, expect, "{shape:?} {kind:?}");
        }
    }
}

#[test]
fn large_fusion_is_identical_for_any_worker_count() {
    let p = plan();
    let x = TypedTensor::from_fn(&[400, 333], |i| ((i[0] * 7 + i[1] * 3) % 101) as f64 * 0.07 - 3.0).unwrap();
    let y = TypedTensor::from_fn(&[333, 400], |i| ((i[0] + i[1]) % 13) as f64 * 0.3).unwrap();
    let yt = y.view().permute(&[1, 0]).unwrap();
    let expect = unfused((&x).into(), yt.clone().into());
    for budget in [1, 2, 7] {
        let got = fusion::execute(&ctx(budget), &p, &[(&x).into(), yt.clone().into()]).unwrap();
        assert_eq!(got, expect, "budget {budget}");
    }
}

#[test]
fn complex_abs_in_a_plan_gives_a_real_value() {
    use FusionInstr::*;
    let p = ElementwiseFusionPlan::new(vec![Input(0), Unary(UnaryOp::Abs, 0), Unary(UnaryOp::Sqrt, 1)], vec![2]);
    let z = Tensor::from_vec(vec![c64::new(3.0, 4.0), c64::new(0.0, -9.0)], &[2]).unwrap();
    let out = fusion::execute(&ctx(1), &p, &[(&z).into()]).unwrap();
    assert_eq!(out[0].as_typed::<f64>().unwrap().data(), &[5.0f64.sqrt(), 3.0]);
}

#[test]
fn bad_plans_and_inputs_are_rejected_before_running() {
    let p = plan();
    let x = Tensor::zeros(DType::F64, &[3]).unwrap();
    let y32 = Tensor::zeros(DType::F32, &[3]).unwrap();
    let y4 = Tensor::zeros(DType::F64, &[4]).unwrap();
    let e = fusion::execute(&ctx(1), &p, &[(&x).into(), (&y32).into()]).unwrap_err();
    assert_eq!((e.kind(), e.op()), (ErrorKind::DTypeMismatch, "fusion"));
    let e = fusion::execute(&ctx(1), &p, &[(&x).into(), (&y4).into()]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    let e = fusion::execute(&ctx(1), &p, &[(&x).into()]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let i = Tensor::zeros(DType::I32, &[3]).unwrap();
    let bad = ElementwiseFusionPlan::new(vec![FusionInstr::Input(0), FusionInstr::Unary(UnaryOp::Log, 0)], vec![1]);
    let e = fusion::execute(&ctx(1), &bad, &[(&i).into()]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
}

#[test]
fn broadcast_multiply_equals_multiplying_materialised_broadcasts() {
    let a = TypedTensor::from_fn(&[3, 5], |i| (i[0] * 5 + i[1]) as f32 - 7.0).unwrap();
    let b = TypedTensor::from_fn(&[4], |i| i[0] as f32 * 0.25 + 1.0).unwrap();
    let out_shape = [3, 4, 5];
    for budget in [1, 3] {
        let got =
            fusion::broadcast_multiply(&ctx(budget), (&a).into(), &[0, 2], (&b).into(), &[1], &out_shape).unwrap();
        let ab = structural::broadcast_in_dim(&ctx(1), (&a).into(), &out_shape, &[0, 2]).unwrap();
        let bb = structural::broadcast_in_dim(&ctx(1), (&b).into(), &out_shape, &[1]).unwrap();
        let expect = elementwise::mul(&ctx(1), (&ab).into(), (&bb).into()).unwrap();
        assert_eq!(got, expect);
    }
    let e = fusion::broadcast_multiply(&ctx(1), (&a).into(), &[0, 1], (&b).into(), &[1], &out_shape).unwrap_err();
    assert_eq!((e.kind(), e.op()), (ErrorKind::ShapeMismatch, "broadcast_multiply"));
    let i = TypedTensor::from_fn(&[4], |i| i[0] as i32).unwrap();
    let e = fusion::broadcast_multiply(&ctx(1), (&a).into(), &[0, 2], (&i).into(), &[1], &out_shape).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DTypeMismatch);
}
