//! Every op family through the facade (and a session), checked against naive references;
//! bad configs; object safety of the op traits.

mod common;

use common::{Rng, naive_matmul};
use strata_backend::prelude::*;
use strata_backend::{AnalyticOps, ReductionOps};

fn f64s(t: &Tensor) -> Vec<f64> {
    t.as_typed::<f64>().unwrap().data().to_vec()
}

fn tensor(data: Vec<f64>, shape: &[usize]) -> Tensor {
    Tensor::from(TypedTensor::from_vec(data, shape).unwrap())
}

fn backend() -> CpuBackend {
    CpuBackend::with_threads(1).unwrap()
}

#[test]
fn elementwise_family_matches_naive_loops() {
    let b = backend();
    let mut rng = Rng::new(1);
    let (x, y) = (rng.vec(12), rng.vec(12).into_iter().map(|v| if v == 0.0 { 3.0 } else { v }).collect::<Vec<_>>());
    let (tx, ty) = (tensor(x.clone(), &[3, 4]), tensor(y.clone(), &[3, 4]));
    type Reference = fn(f64, f64) -> f64;
    let cases: [(&str, Reference); 6] = [
        ("add", |a, b| a + b),
        ("sub", |a, b| a - b),
        ("mul", |a, b| a * b),
        ("div", |a, b| a / b),
        ("maximum", f64::max),
        ("minimum", f64::min),
    ];
    for (name, f) in cases {
        let got = match name {
            "add" => b.add(&tx, &ty),
            "sub" => b.sub(&tx, &ty),
            "mul" => b.mul(&tx, &ty),
            "div" => b.div(&tx, &ty),
            "maximum" => b.maximum(&tx, &ty),
            _ => b.minimum(&tx, &ty),
        }
        .unwrap();
        let want: Vec<f64> = x.iter().zip(&y).map(|(&a, &c)| f(a, c)).collect();
        assert_eq!(f64s(&got), want, "{name}");
    }
    // A transposed view as input: element (i, j) of x^T is x[j, i].
    let xt = tx.view().permute(&[1, 0]).unwrap();
    let twice = b.add(xt.clone(), xt).unwrap();
    assert_eq!(twice.shape(), &[4, 3]);
    let want: Vec<f64> = (0..12).map(|k| 2.0 * x[(k % 3) * 4 + k / 3]).collect();
    assert_eq!(f64s(&twice), want);

    let neg = b.neg(&tx).unwrap();
    assert_eq!(f64s(&neg), x.iter().map(|v| -v).collect::<Vec<_>>());
    let lt = b.compare(CompareDir::Lt, &tx, &ty).unwrap();
    let lt_want: Vec<bool> = x.iter().zip(&y).map(|(a, c)| a < c).collect();
    assert_eq!(lt.as_typed::<bool>().unwrap().data(), &lt_want[..]);
    let sel = b.select(&lt, &tx, &ty).unwrap();
    assert_eq!(f64s(&sel), x.iter().zip(&y).map(|(&a, &c)| if a < c { a } else { c }).collect::<Vec<_>>());
    let (lo, hi) = (tensor(vec![-2.0], &[]), tensor(vec![2.0], &[]));
    let cl = b.clamp(&lo, &tx, &hi).unwrap();
    assert_eq!(f64s(&cl), x.iter().map(|v| v.clamp(-2.0, 2.0)).collect::<Vec<_>>());

    // abs of complex is real.
    let z = Tensor::from(TypedTensor::from_vec(vec![c64::new(3.0, 4.0), c64::new(0.0, -1.0)], &[2]).unwrap());
    let az = b.abs(&z).unwrap();
    assert_eq!(f64s(&az), vec![5.0, 1.0]);

    // _into writes into a caller's strided view.
    let mut out = TypedTensor::<f64>::zeros(&[4, 3]).unwrap();
    b.binary_into(BinaryOp::Add, &tx, &ty, out.view_mut().permute(&[1, 0]).unwrap()).unwrap();
    for i in 0..3 {
        for j in 0..4 {
            assert_eq!(out.data()[j * 3 + i], x[i * 4 + j] + y[i * 4 + j]);
        }
    }
}

#[test]
fn analytic_family_matches_std() {
    let b = backend();
    let xs = vec![0.25, 0.5, 1.0, 2.0];
    let t = tensor(xs.clone(), &[4]);
    let close = |got: Vec<f64>, f: fn(f64) -> f64| {
        for (g, &x) in got.iter().zip(&xs) {
            assert!((g - f(x)).abs() <= 1e-12 * f(x).abs().max(1.0), "{g} vs {}", f(x));
        }
    };
    close(f64s(&b.exp(&t).unwrap()), f64::exp);
    close(f64s(&b.log(&t).unwrap()), f64::ln);
    close(f64s(&b.sin(&t).unwrap()), f64::sin);
    close(f64s(&b.cos(&t).unwrap()), f64::cos);
    close(f64s(&b.tanh(&t).unwrap()), f64::tanh);
    close(f64s(&b.sqrt(&t).unwrap()), f64::sqrt);
    close(f64s(&b.rsqrt(&t).unwrap()), |x| 1.0 / x.sqrt());
    close(f64s(&b.expm1(&t).unwrap()), f64::exp_m1);
    close(f64s(&b.log1p(&t).unwrap()), f64::ln_1p);
    close(f64s(&b.pow(&t, &t).unwrap()), |x| x.powf(x));
    let ints = Tensor::from(TypedTensor::from_vec(vec![1i32, 2], &[2]).unwrap());
    let err = b.exp(&ints).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported);
}

#[test]
fn reductions_match_naive_sums() {
    let b = backend();
    let mut rng = Rng::new(2);
    let x = rng.vec(24);
    let t = tensor(x.clone(), &[2, 3, 4]);
    let s = b.sum(&t, &[0, 2]).unwrap();
    let want: Vec<f64> = (0..3)
        .map(|j| (0..2).flat_map(|i| (0..4).map(move |k| (i, k))).map(|(i, k)| x[i * 12 + j * 4 + k]).sum())
        .collect();
    assert_eq!(s.shape(), &[3]);
    assert_eq!(f64s(&s), want);
    let ss = b.sum_squares(&t, &[0, 1, 2]).unwrap();
    assert_eq!(f64s(&ss), vec![x.iter().map(|v| v * v).sum::<f64>()]);
    let mx = b.max(&t, &[1]).unwrap();
    let want: Vec<f64> = (0..2)
        .flat_map(|i| (0..4).map(move |k| (i, k)))
        .map(|(i, k)| (0..3).map(|j| x[i * 12 + j * 4 + k]).fold(f64::NEG_INFINITY, f64::max))
        .collect();
    assert_eq!(f64s(&mx), want);
    let p = b.prod(&tensor(vec![2.0, 3.0, 4.0], &[3]), &[0]).unwrap();
    assert_eq!(f64s(&p), vec![24.0]);
    let empty = tensor(vec![], &[0, 2]);
    assert_eq!(f64s(&b.min(&empty, &[0]).unwrap()), vec![f64::INFINITY; 2]);
    let err = b.sum(&t, &[3]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn structural_family() {
    let b = backend();
    let x: Vec<f64> = (0..24).map(f64::from).collect();
    let t = tensor(x.clone(), &[2, 3, 4]);
    let tr = b.transpose(&t, &[2, 0, 1]).unwrap();
    assert_eq!(tr.shape(), &[4, 2, 3]);
    let tv = f64s(&tr);
    for k in 0..4 {
        for i in 0..2 {
            for j in 0..3 {
                assert_eq!(tv[k * 6 + i * 3 + j], x[i * 12 + j * 4 + k]);
            }
        }
    }
    let rev = t.view().reverse_axis(2).unwrap();
    let c = b.to_contiguous(rev).unwrap();
    assert_eq!(f64s(&c)[..4], [3.0, 2.0, 1.0, 0.0]);
    let mut dst = Tensor::from(TypedTensor::<f64>::zeros(&[2, 3, 4]).unwrap());
    b.copy_into(&t, &mut dst).unwrap();
    assert_eq!(f64s(&dst), x);
    let cast = b.cast(&tensor(vec![1.9, -2.7, f64::NAN], &[3]), DType::I32).unwrap();
    assert_eq!(cast.as_typed::<i32>().unwrap().data(), &[1, -2, 0]);
    assert_eq!(b.transpose(&t, &[0, 0, 1]).unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn contraction_family_matches_naive_products() {
    let b = backend();
    let mut rng = Rng::new(3);
    let (m, k, n) = (3, 5, 2);
    let (a, c) = (rng.vec(m * k), rng.vec(k * n));
    let (ta, tc) = (tensor(a.clone(), &[m, k]), tensor(c.clone(), &[k, n]));
    let want = naive_matmul(&a, &c, m, k, n);
    assert_eq!(f64s(&b.matmul(&ta, &tc).unwrap()), want);

    // Batched dot_general: [2, m, k] x [2, k, n].
    let (ba, bc) = (rng.vec(2 * m * k), rng.vec(2 * k * n));
    let cfg = DotGeneralConfig::new(vec![0], vec![0], vec![2], vec![1]);
    let got = b
        .dot_general(&tensor(ba.clone(), &[2, m, k]), &tensor(bc.clone(), &[2, k, n]), &DotGeneral::from(&cfg))
        .unwrap();
    let mut bw = naive_matmul(&ba[..m * k], &bc[..k * n], m, k, n);
    bw.extend(naive_matmul(&ba[m * k..], &bc[k * n..], m, k, n));
    assert_eq!(f64s(&got), bw);

    // out = 2 * a·c + 3 * out.
    let init = rng.vec(m * n);
    let mut out = tensor(init.clone(), &[m, n]);
    b.dot_general_into(&ta, &tc, &DotGeneral::matmul().alpha(2.0).beta(3.0), &mut out).unwrap();
    let want_into: Vec<f64> = want.iter().zip(&init).map(|(p, o)| 2.0 * p + 3.0 * o).collect();
    assert_eq!(f64s(&out), want_into);

    let grouped =
        b.grouped_gemm(&[&ta, &tc], &[&tc, &tensor(vec![1.0; n * 4], &[n, 4])], &GroupedGemmConfig::default()).unwrap();
    assert_eq!(f64s(&grouped[0]), want);
    let g1: Vec<f64> = (0..k)
        .flat_map(|i| {
            let row: f64 = c[i * n..(i + 1) * n].iter().sum();
            vec![row; 4]
        })
        .collect();
    assert_eq!(f64s(&grouped[1]), g1);

    let z1 = vec![c64::new(1.0, 2.0), c64::new(-1.0, 0.5)];
    let z2 = vec![c64::new(0.5, -1.0), c64::new(2.0, 3.0)];
    let (t1, t2) = (
        Tensor::from(TypedTensor::from_vec(z1.clone(), &[2]).unwrap()),
        Tensor::from(TypedTensor::from_vec(z2.clone(), &[2]).unwrap()),
    );
    let v = b.vdot(&t1, &t2).unwrap();
    let want_v: c64 = z1.iter().zip(&z2).map(|(a, c)| a.conj() * c).sum();
    assert_eq!(v.as_typed::<c64>().unwrap().data(), &[want_v]);
    let ns = b.norm_squared(&t1).unwrap();
    assert_eq!(f64s(&ns), vec![1.0 + 4.0 + 1.0 + 0.25]);
    let mut y = tensor(vec![1.0, 2.0], &[2]);
    b.axpby_into(c64::new(2.0, 0.0), &tensor(vec![10.0, 20.0], &[2]), c64::new(-1.0, 0.0), &mut y).unwrap();
    assert_eq!(f64s(&y), vec![19.0, 38.0]);

    // Bad configs are typed errors naming the op; nothing is written.
    let bad = DotGeneralConfig::new(vec![], vec![], vec![1], vec![1]);
    let err = b.dot_general(&ta, &tc, &DotGeneral::from(&bad)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ShapeMismatch);
    let mut untouched = tensor(init.clone(), &[m, n]);
    assert!(b.dot_general_into(&ta, &tc, &DotGeneral::from(&bad), &mut untouched).is_err());
    assert_eq!(f64s(&untouched), init);
    assert!(b.contraction_cache_stats().lookups() > 0);
}

#[test]
fn indexing_family() {
    let b = backend();
    let x: Vec<f64> = (0..12).map(f64::from).collect();
    let t = tensor(x.clone(), &[3, 4]);
    let s = b.slice(&t, &SliceConfig::new(vec![0, 1], vec![3, 4], vec![2, 2])).unwrap();
    assert_eq!(f64s(&s), vec![1.0, 3.0, 9.0, 11.0]);
    // Starts are clamped into range: (5, 3) -> (1, 2) for a [2, 2] window.
    let ds = b.dynamic_slice(&t, &[5, 3], &[2, 2]).unwrap();
    assert_eq!(f64s(&ds), vec![6.0, 7.0, 10.0, 11.0]);
    let upd = tensor(vec![-1.0, -2.0], &[1, 2]);
    let dus = b.dynamic_update_slice(&t, &upd, &[1, 1]).unwrap();
    let mut want = x.clone();
    want[5] = -1.0;
    want[6] = -2.0;
    assert_eq!(f64s(&dus), want);
    let row = tensor(vec![1.0, 2.0], &[2]);
    let padded = b.pad(&row, &tensor(vec![0.0], &[]), &PadConfig::new(vec![1], vec![2], vec![1])).unwrap();
    assert_eq!(f64s(&padded), vec![0.0, 1.0, 0.0, 2.0, 0.0, 0.0]);
    let cat = b.concatenate(&[&t, &t], 0).unwrap();
    assert_eq!(cat.shape(), &[6, 4]);
    assert_eq!(f64s(&cat), [x.clone(), x.clone()].concat());
    let rev = b.reverse(&t, &[0, 1]).unwrap();
    assert_eq!(f64s(&rev), x.iter().rev().copied().collect::<Vec<_>>());
    let idx = Tensor::from(TypedTensor::from_vec(vec![2i64, 0], &[2, 1]).unwrap());
    let g = b.gather(&t, &idx, &GatherConfig::rows(2, 4)).unwrap();
    assert_eq!(f64s(&g), [&x[8..12], &x[0..4]].concat());
    let updates = tensor(vec![1.0; 8], &[2, 4]);
    let sc = b.scatter(&t, &idx, &updates, &ScatterConfig::rows(2, ScatterCombiner::Add)).unwrap();
    let want_sc: Vec<f64> =
        x.iter().enumerate().map(|(i, v)| if !(4..8).contains(&i) { v + 1.0 } else { *v }).collect();
    assert_eq!(f64s(&sc), want_sc);
    assert!(b.indexed_plan_cache_stats().lookups() > 0);
    let err = b.slice(&t, &SliceConfig::new(vec![0, 0], vec![3, 4], vec![0, 1])).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    let bad_gather = b.gather(&t, &idx, &GatherConfig::rows(2, 9)).unwrap_err();
    assert_eq!(bad_gather.op(), "gather");
}

#[test]
fn buffers_and_transfer_are_identity_on_cpu() {
    let b = backend();
    b.set_buffer_pool_limit(1 << 20);
    let t = tensor(vec![1.0, 2.0], &[2]);
    let down = b.download(t).unwrap();
    assert_eq!(f64s(&down), vec![1.0, 2.0]);
    let up = b.upload(down).unwrap();
    let before = b.buffer_pool_stats().buffers;
    b.recycle(up);
    assert_eq!(b.buffer_pool_stats().buffers, before + 1);
}

#[test]
fn sessions_run_the_same_ops() {
    let b = backend();
    let t = tensor(vec![1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let (sum, prod, mm) = b
        .with_session(|s| {
            assert!(s.runs_inline());
            assert_eq!(s.num_threads(), 1);
            assert_eq!(s.producing_domain(), b.producing_domain());
            let sum = s.add(&t, &t).unwrap();
            let prod = s.reduce(ReduceOp::Prod, &t, &[0, 1]).unwrap();
            let mm = s.matmul(&t, &t).unwrap();
            (sum, prod, mm)
        })
        .unwrap();
    assert_eq!(f64s(&sum), vec![2.0, 4.0, 6.0, 8.0]);
    assert_eq!(f64s(&prod), vec![24.0]);
    assert_eq!(f64s(&mm), naive_matmul(&[1.0, 2.0, 3.0, 4.0], &[1.0, 2.0, 3.0, 4.0], 2, 2, 2));
}

#[test]
fn op_traits_are_object_safe() {
    let b = backend();
    let t = tensor(vec![1.0, 2.0], &[2]);
    let ew: &dyn ElementwiseOps = &b;
    let an: &dyn AnalyticOps = &b;
    let st: &dyn StructuralOps = &b;
    let rd: &dyn ReductionOps = &b;
    let ct: &dyn ContractionOps = &b;
    let ix: &dyn IndexingOps = &b;
    let bf: &dyn BufferOps = &b;
    let fu: &dyn FusionOps = &b;
    let outer = fu.broadcast_multiply((&t).into(), &[0], (&t).into(), &[1], &[2, 2]).unwrap();
    assert_eq!(f64s(&outer), vec![1.0, 2.0, 2.0, 4.0]);
    assert_eq!(f64s(&ew.add((&t).into(), (&t).into()).unwrap()), vec![2.0, 4.0]);
    assert_eq!(f64s(&an.sqrt((&tensor(vec![4.0], &[1])).into()).unwrap()), vec![2.0]);
    assert_eq!(f64s(&st.to_contiguous((&t).into()).unwrap()), vec![1.0, 2.0]);
    assert_eq!(f64s(&rd.sum((&t).into(), &[0]).unwrap()), vec![3.0]);
    assert_eq!(f64s(&ct.vdot((&t).into(), (&t).into()).unwrap()), vec![5.0]);
    assert_eq!(f64s(&ix.reverse((&t).into(), &[0]).unwrap()), vec![2.0, 1.0]);
    assert_eq!(f64s(&bf.download(t).unwrap()), vec![1.0, 2.0]);
    // A session behind the same traits.
    b.with_session(|s| {
        let ew: &dyn ElementwiseOps = s;
        let x = tensor(vec![3.0], &[1]);
        assert_eq!(f64s(&ew.mul((&x).into(), (&x).into()).unwrap()), vec![9.0]);
    })
    .unwrap();
}

#[test]
fn bad_elementwise_inputs_are_typed_errors() {
    let b = backend();
    let (a, c) = (tensor(vec![1.0, 2.0], &[2]), tensor(vec![1.0, 2.0, 3.0], &[3]));
    assert_eq!(b.add(&a, &c).unwrap_err().kind(), ErrorKind::ShapeMismatch);
    let i = Tensor::from(TypedTensor::from_vec(vec![1i32, 2], &[2]).unwrap());
    assert_eq!(b.add(&a, &i).unwrap_err().kind(), ErrorKind::DTypeMismatch);
    let z = Tensor::from(TypedTensor::from_vec(vec![c64::new(1.0, 0.0)], &[1]).unwrap());
    assert_eq!(b.compare(CompareDir::Lt, &z, &z).unwrap_err().kind(), ErrorKind::Unsupported);
}

#[test]
fn remaining_structural_ops_and_fusion() {
    let b = backend();
    let x: Vec<f64> = (0..6).map(f64::from).collect();
    let t = tensor(x.clone(), &[2, 3]);
    let r = b.reshape(&t, &[3, 2]).unwrap();
    assert_eq!((r.shape(), f64s(&r)), (&[3usize, 2][..], x.clone()));
    // Reshape of a transposed view reads it in row-major order.
    let rt = b.reshape(t.view().permute(&[1, 0]).unwrap(), &[6]).unwrap();
    assert_eq!(f64s(&rt), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    assert_eq!(b.reshape(&t, &[4]).unwrap_err().kind(), ErrorKind::ShapeMismatch);
    let row = tensor(vec![1.0, 2.0, 3.0], &[3]);
    let bc = b.broadcast_in_dim(&row, &[2, 3], &[1]).unwrap();
    assert_eq!(f64s(&bc), vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
    let sq = tensor((0..9).map(f64::from).collect(), &[3, 3]);
    let d = b.extract_diagonal(&sq, 0, 1).unwrap();
    assert_eq!(f64s(&d), vec![0.0, 4.0, 8.0]);
    let e = b.embed_diagonal(&d, 0, 1).unwrap();
    let want_e: Vec<f64> = (0..9).map(|i| if i % 4 == 0 { i as f64 } else { 0.0 }).collect();
    assert_eq!(f64s(&e), want_e);
    let lower = b.tril(&sq, 0).unwrap();
    let upper = b.triu(&sq, 1).unwrap();
    for i in 0..3 {
        for j in 0..3 {
            let v = (i * 3 + j) as f64;
            assert_eq!(f64s(&lower)[i * 3 + j], if j <= i { v } else { 0.0 });
            assert_eq!(f64s(&upper)[i * 3 + j], if j > i { v } else { 0.0 });
        }
    }

    // (a + b) * a in one pass.
    let mut plan = ElementwiseFusionPlan::default();
    let a = plan.push(FusionInstr::Input(0));
    let c = plan.push(FusionInstr::Input(1));
    let s = plan.push(FusionInstr::Binary(BinaryOp::Add, a, c));
    let p = plan.push(FusionInstr::Binary(BinaryOp::Mul, s, a));
    plan.add_output(p);
    let other = tensor(vec![1.0; 6], &[2, 3]);
    let out = b.execute_fusion(&plan, &[&t, &other]).unwrap();
    assert_eq!(f64s(&out[0]), x.iter().map(|v| (v + 1.0) * v).collect::<Vec<_>>());
    let col = tensor(vec![1.0, 2.0], &[2]);
    let outer = b.broadcast_multiply(&col, &[0], &row, &[1], &[2, 3]).unwrap();
    assert_eq!(f64s(&outer), vec![1.0, 2.0, 3.0, 2.0, 4.0, 6.0]);
}
