//! Accuracy of every analytic function (exp, log, log1p, expm1, sin, cos, tanh, sqrt,
//! rsqrt) in every float dtype, real and complex, against references correctly rounded
//! from 120-digit decimal arithmetic (`tests/accuracy/gen_reference.py`, no third-party
//! package; the fixture is committed so CI needs no Python).
//!
//! The inputs are adversarial (see the generator): near each function's cancellation
//! points — the unit circle for log, `z = -1` (|1 + z| from 1e-3 to 0.3) and the circle
//! `|1 + z| = 1` for log1p, the poles of tanh, `2πki` for expm1, the overflow thresholds of
//! exp and cosh/sinh, multiples of π/2 for sin and cos, the negative real axis for sqrt —
//! plus huge and tiny magnitudes and random values. Each function's inputs run as one
//! tensor repeated past the parallel threshold (so the SIMD cores and the parallel split
//! both run), contiguous and through a reversed strided view, which must agree bit for bit.
//!
//! Bounds, in units of the result dtype's epsilon: the error relative to the modulus of the
//! exact result (`|got − want| / |want|`), and each part's own relative error wherever that
//! part is at least 2⁻¹⁰ of the modulus (a smaller part may carry an error of a few ulps of
//! the modulus: `cos(π/2 + δ)·e^x` inherits the rounding of its argument).

mod common;

use std::collections::BTreeMap;

use strata_kernels::elementwise;
use strata_tensor::config::UnaryOp;
use strata_tensor::{DType, Tensor, c32, c64, dispatch_dtype};

struct Reference {
    x: (f64, f64),
    want: (f64, f64),
}

fn op_named(name: &str) -> UnaryOp {
    *UnaryOp::ALL.iter().find(|op| op.name() == name).expect("known op")
}

fn parse_dtype(s: &str) -> DType {
    match s {
        "f32" => DType::F32,
        "f64" => DType::F64,
        "c32" => DType::C32,
        "c64" => DType::C64,
        other => panic!("dtype {other}"),
    }
}

/// The fixture grouped by (function, dtype). Inputs are parsed in their own dtype (the
/// shortest representation of an f32 parses back to it exactly).
fn references() -> BTreeMap<(String, DType), Vec<Reference>> {
    let mut out: BTreeMap<(String, DType), Vec<Reference>> = BTreeMap::new();
    for line in include_str!("accuracy/reference.txt").lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split('\t').collect();
        let dtype = parse_dtype(f[1]);
        let narrow = matches!(dtype, DType::F32 | DType::C32);
        let parse_in =
            |s: &str| if narrow { f64::from(s.parse::<f32>().expect("f32")) } else { s.parse().expect("f64") };
        let pair = |s: &str, p: &dyn Fn(&str) -> f64| match s.split_once(',') {
            Some((a, b)) => (p(a), p(b)),
            None => (p(s), 0.0),
        };
        let x = pair(f[2], &parse_in);
        let want = pair(f[3], &|s: &str| s.parse::<f64>().expect("f64"));
        out.entry((f[0].to_string(), dtype)).or_default().push(Reference { x, want });
    }
    out
}

/// The inputs as one tensor of `dtype`, repeated `copies` times.
fn input_tensor(dtype: DType, refs: &[Reference], copies: usize) -> Tensor {
    let n = refs.len() * copies;
    let xs = || refs.iter().cycle().take(n).map(|r| r.x);
    match dtype {
        DType::F32 => Tensor::from_vec(xs().map(|x| x.0 as f32).collect::<Vec<_>>(), &[n]),
        DType::F64 => Tensor::from_vec(xs().map(|x| x.0).collect::<Vec<_>>(), &[n]),
        DType::C32 => Tensor::from_vec(xs().map(|x| c32::new(x.0 as f32, x.1 as f32)).collect::<Vec<_>>(), &[n]),
        DType::C64 => Tensor::from_vec(xs().map(|x| c64::new(x.0, x.1)).collect::<Vec<_>>(), &[n]),
        other => panic!("{other}"),
    }
    .expect("shape")
}

fn pairs(t: &Tensor) -> Vec<(f64, f64)> {
    match t.dtype() {
        DType::F32 => t.as_typed::<f32>().unwrap().data().iter().map(|&v| (f64::from(v), 0.0)).collect(),
        DType::F64 => t.as_typed::<f64>().unwrap().data().iter().map(|&v| (v, 0.0)).collect(),
        DType::C32 => t.as_typed::<c32>().unwrap().data().iter().map(|v| (f64::from(v.re), f64::from(v.im))).collect(),
        DType::C64 => t.as_typed::<c64>().unwrap().data().iter().map(|v| (v.re, v.im)).collect(),
        other => panic!("{other}"),
    }
}

/// The same elements through a view with a negative stride (reversed storage).
fn reversed_run(op: UnaryOp, x: &Tensor) -> Tensor {
    let rev = dispatch_dtype!(x.dtype(), T => {
        let mut v = x.as_typed::<T>().unwrap().data().to_vec();
        v.reverse();
        Tensor::from_vec(v, x.shape()).unwrap()
    });
    let view = rev.view().reverse_axis(0).unwrap();
    elementwise::unary(&common::ctx(3), op, view.into()).unwrap()
}

/// Errors in units of `eps`: relative to the modulus, and per significant part.
fn errors(got: (f64, f64), want: (f64, f64), eps: f64) -> (f64, f64) {
    let modulus = want.0.hypot(want.1);
    let modular = (got.0 - want.0).hypot(got.1 - want.1) / (eps * modulus);
    let part = |g: f64, w: f64| {
        if w.abs() < modulus / 1024.0 { 0.0 } else { (g - w).abs() / (eps * w.abs()) }
    };
    (modular, part(got.0, want.0).max(part(got.1, want.1)))
}

/// The bounds each function meets, in units of the dtype's epsilon: (modulus, part).
fn bounds(op: UnaryOp, dtype: DType) -> (f64, f64) {
    let complex = dtype.is_complex();
    let narrow = matches!(dtype, DType::F32 | DType::C32);
    if narrow {
        // Real float32 tanh has a native f32 core (16 lanes per AVX-512 register): within
        // 2 ulps like the f64 one. Everything else is computed in f64 and rounded once, or
        // by a native core that the references find correctly rounded: half an ulp, plus
        // the f64 error scaled down.
        if op == UnaryOp::Tanh && !complex {
            return (2.0, 2.0);
        }
        return (0.51, 0.51);
    }
    match (op, complex) {
        (UnaryOp::Sqrt, false) => (0.5, 0.5),
        (UnaryOp::Rsqrt, false) => (1.0, 1.0),
        (UnaryOp::Tanh | UnaryOp::Sin | UnaryOp::Cos, false) => (2.0, 2.0),
        (_, false) => (1.0, 1.0),
        (UnaryOp::Sqrt | UnaryOp::Rsqrt, true) => (3.0, 4.0),
        (UnaryOp::Log | UnaryOp::Log1p, true) => (2.0, 3.0),
        (_, true) => (4.0, 4.0),
    }
}

#[test]
fn analytic_functions_meet_their_bounds_against_exact_references() {
    let mut report = Vec::new();
    let mut failures = Vec::new();
    for ((name, dtype), refs) in references() {
        let op = op_named(&name);
        let eps = if matches!(dtype, DType::F32 | DType::C32) { f64::from(f32::EPSILON) } else { f64::EPSILON };
        // Past the parallel grain (32K elements) on three workers.
        let copies = 40_000usize.div_ceil(refs.len());
        let x = input_tensor(dtype, &refs, copies);
        let got = elementwise::unary(&common::ctx(3), op, (&x).into()).unwrap();
        let got_rev = reversed_run(op, &x);
        let (g, gr) = (pairs(&got), pairs(&got_rev));
        assert!(
            g.iter().zip(&gr).all(|(a, b)| a.0.to_bits() == b.0.to_bits() && a.1.to_bits() == b.1.to_bits()),
            "{name} {dtype}: the strided view gave other bits than the contiguous tensor"
        );
        let (max_mod, max_part) = bounds(op, dtype);
        let (mut worst_mod, mut worst_part) = (0.0f64, 0.0f64);
        for (i, got) in g.iter().enumerate() {
            let r = &refs[i % refs.len()];
            if i >= refs.len() {
                // Every copy gives the first copy's bits (no position-dependent path).
                let first = g[i % refs.len()];
                assert!(first.0.to_bits() == got.0.to_bits() && first.1.to_bits() == got.1.to_bits());
                continue;
            }
            let (m, p) = errors(*got, r.want, eps);
            worst_mod = worst_mod.max(m);
            worst_part = worst_part.max(p);
            if m > max_mod || p > max_part {
                failures.push(format!(
                    "{name} {dtype} at {:?}: got {:?}, exact {:?} ({m:.2} ulp of |want|, {p:.2} ulp of a part)",
                    r.x, got, r.want
                ));
            }
        }
        report.push(format!(
            "{name:>6} {dtype:<10} {:>4} inputs: worst {worst_mod:.2} ulp of the modulus, {worst_part:.2} ulp of a part (bounds {max_mod}, {max_part})",
            refs.len()
        ));
    }
    eprintln!("{}", report.join("\n"));
    assert!(failures.is_empty(), "{} results exceed their bounds:\n{}", failures.len(), failures.join("\n"));
}
