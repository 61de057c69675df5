//! Differential conformance against jax.lax: every case in `tests/lax/*.txt` was run through
//! jax.lax (jax 0.10.2, x64 enabled) by `tests/lax/gen_cases.py`; here the same inputs go
//! through strata's kernels and the outputs must match. Each case runs twice: on contiguous
//! operands and on operands that are views with negative strides over reversed storage.
//!
//! Tolerances: exact (bit-for-bit, any NaN matching any NaN) for everything IEEE defines as
//! correctly rounded or that moves values (add, sub, mul, div, rem, max, min, neg, abs of
//! reals, compare, select, clamp, casts, structural and indexing ops); a few units of the
//! dtype's epsilon for transcendental functions and complex arithmetic (whose rounding is
//! not fixed by IEEE); for sums and dot products an error bound proportional to the number
//! of terms times the sum of the magnitudes, since the summation order is not jax's.
//!
//! One test per family, so a kernel bug in one family shows up as exactly that test failing.

use std::collections::HashMap;

use strata_kernels::{KernelContext, contraction, elementwise, indexing, reduction, structural};
use strata_tensor::config::{
    BinaryOp, CompareDir, DotGeneralConfig, GatherConfig, PadConfig, ReduceOp, ScatterCombiner, ScatterConfig,
    SliceConfig, UnaryOp,
};
use strata_tensor::{DType, Tensor, TensorRead, TensorView, c32, c64, dispatch_dtype};

// ---------------------------------------------------------------- case files

/// One golden case: the op name and its `key=value` fields.
struct Case {
    file: &'static str,
    line: usize,
    op: String,
    fields: HashMap<String, String>,
}

fn load(file: &'static str, text: &'static str) -> Vec<Case> {
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.split('\t');
        let op = parts.next().expect("case line has an op").to_string();
        let fields = parts
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or_else(|| panic!("{file}:{}: field without '='", i + 1));
                (k.to_string(), v.to_string())
            })
            .collect();
        cases.push(Case { file, line: i + 1, op, fields });
    }
    assert!(!cases.is_empty(), "{file} holds no cases");
    cases
}

macro_rules! cases {
    ($name:literal) => {
        load($name, include_str!(concat!("lax/", $name)))
    };
}

impl Case {
    fn field(&self, key: &str) -> &str {
        self.fields.get(key).unwrap_or_else(|| panic!("{}:{}: missing field {key}", self.file, self.line))
    }

    fn tensor(&self, key: &str) -> Tensor {
        parse_tensor(self.field(key)).unwrap_or_else(|e| panic!("{}:{}: field {key}: {e}", self.file, self.line))
    }

    fn ints(&self, key: &str) -> Vec<i64> {
        let s = self.field(key);
        if s.is_empty() {
            return Vec::new();
        }
        s.split(',').map(|v| v.parse().expect("integer list")).collect()
    }

    fn usizes(&self, key: &str) -> Vec<usize> {
        self.ints(key).into_iter().map(|v| usize::try_from(v).expect("non-negative")).collect()
    }

    fn usize(&self, key: &str) -> usize {
        self.field(key).parse().expect("non-negative integer")
    }

    fn at(&self) -> String {
        format!("{}:{} ({})", self.file, self.line, self.op)
    }
}

fn parse_dtype(s: &str) -> DType {
    match s {
        "f32" => DType::F32,
        "f64" => DType::F64,
        "i32" => DType::I32,
        "i64" => DType::I64,
        "bool" => DType::Bool,
        "c32" => DType::C32,
        "c64" => DType::C64,
        other => panic!("unknown dtype {other}"),
    }
}

fn parse_tensor(s: &str) -> Result<Tensor, String> {
    let mut parts = s.splitn(3, ';');
    let (dtype, shape, values) = match (parts.next(), parts.next(), parts.next()) {
        (Some(d), Some(s), Some(v)) => (parse_dtype(d), s, v),
        _ => return Err(format!("malformed tensor {s:?}")),
    };
    let shape: Vec<usize> =
        if shape.is_empty() { Vec::new() } else { shape.split('x').map(|d| d.parse().expect("dim")).collect() };
    let raw: Vec<&str> = if values.is_empty() { Vec::new() } else { values.split(',').collect() };
    let float = |v: &str| v.parse::<f64>().map_err(|e| format!("{v:?}: {e}"));
    let t = match dtype {
        DType::F32 => Tensor::from_vec(
            raw.iter().map(|v| v.parse::<f32>()).collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())?,
            &shape,
        ),
        DType::F64 => Tensor::from_vec(raw.iter().map(|v| float(v)).collect::<Result<Vec<_>, _>>()?, &shape),
        DType::I32 => Tensor::from_vec(
            raw.iter().map(|v| v.parse::<i32>()).collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())?,
            &shape,
        ),
        DType::I64 => Tensor::from_vec(
            raw.iter().map(|v| v.parse::<i64>()).collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())?,
            &shape,
        ),
        DType::Bool => Tensor::from_vec(raw.iter().map(|v| *v == "1").collect::<Vec<bool>>(), &shape),
        DType::C32 => {
            let p = raw.iter().map(|v| v.parse::<f32>()).collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())?;
            Tensor::from_vec(p.chunks(2).map(|c| c32::new(c[0], c[1])).collect::<Vec<_>>(), &shape)
        }
        DType::C64 => {
            let p = raw.iter().map(|v| float(v)).collect::<Result<Vec<_>, _>>()?;
            Tensor::from_vec(p.chunks(2).map(|c| c64::new(c[0], c[1])).collect::<Vec<_>>(), &shape)
        }
    };
    t.map_err(|e| e.to_string())
}

// ---------------------------------------------------------------- operands in two layouts

/// How the case's operands are handed to the kernel.
#[derive(Clone, Copy, Debug)]
enum Layout {
    /// Owned row-major tensors.
    Contiguous,
    /// Views with every axis reversed over storage holding the elements in reverse order:
    /// the same logical values, negative strides and a non-zero offset.
    Reversed,
}

const LAYOUTS: [Layout; 2] = [Layout::Contiguous, Layout::Reversed];

/// Storage for one operand in a [`Layout`].
struct Operand(Tensor, Layout);

impl Operand {
    fn new(t: Tensor, layout: Layout) -> Operand {
        match layout {
            Layout::Contiguous => Operand(t, layout),
            Layout::Reversed => {
                let shape = t.shape().to_vec();
                let rev = dispatch_dtype!(t.dtype(), T => {
                    let mut v = t.as_typed::<T>().expect("dtype").data().to_vec();
                    v.reverse();
                    Tensor::from_vec(v, &shape).expect("shape")
                });
                Operand(rev, layout)
            }
        }
    }

    fn view(&self) -> TensorView<'_> {
        let mut v = self.0.view();
        if let Layout::Reversed = self.1 {
            for axis in 0..v.rank() {
                v = v.reverse_axis(axis).expect("axis in range");
            }
        }
        v
    }

    fn read(&self) -> TensorRead<'_> {
        match self.1 {
            Layout::Contiguous => (&self.0).into(),
            Layout::Reversed => self.view().into(),
        }
    }
}

// ---------------------------------------------------------------- comparison

/// Allowed error: `ulps * eps * max(|want|, floor) + abs`, with `eps` the dtype's epsilon.
/// All zero means exact.
#[derive(Clone, Copy, Debug, Default)]
struct Tol {
    ulps: f64,
    floor: f64,
    abs: f64,
}

const EXACT: Tol = Tol { ulps: 0.0, floor: 0.0, abs: 0.0 };

fn ulps(n: f64) -> Tol {
    Tol { ulps: n, floor: f64::from(f32::MIN_POSITIVE), abs: 0.0 }
}

/// Elements as pairs of f64 (imaginary part 0 for reals), or integers.
enum Flat {
    Inexact(Vec<(f64, f64)>, f64),
    Integer(Vec<i64>),
}

fn flatten(t: &Tensor) -> Flat {
    fn get<T: strata_tensor::Scalar>(t: &Tensor) -> &[T] {
        t.as_typed::<T>().expect("dtype").data()
    }
    match t.dtype() {
        DType::F32 => {
            Flat::Inexact(get::<f32>(t).iter().map(|&v| (f64::from(v), 0.0)).collect(), f64::from(f32::EPSILON))
        }
        DType::F64 => Flat::Inexact(get::<f64>(t).iter().map(|&v| (v, 0.0)).collect(), f64::EPSILON),
        DType::C32 => Flat::Inexact(
            get::<c32>(t).iter().map(|v| (f64::from(v.re), f64::from(v.im))).collect(),
            f64::from(f32::EPSILON),
        ),
        DType::C64 => Flat::Inexact(get::<c64>(t).iter().map(|v| (v.re, v.im)).collect(), f64::EPSILON),
        DType::I32 => Flat::Integer(get::<i32>(t).iter().map(|&v| i64::from(v)).collect()),
        DType::I64 => Flat::Integer(get::<i64>(t).to_vec()),
        DType::Bool => Flat::Integer(get::<bool>(t).iter().map(|&v| i64::from(v)).collect()),
    }
}

fn same_exact(g: f64, w: f64) -> bool {
    (g.is_nan() && w.is_nan()) || g.to_bits() == w.to_bits()
}

fn close(g: (f64, f64), w: (f64, f64), eps: f64, tol: Tol) -> bool {
    let exact = same_exact(g.0, w.0) && same_exact(g.1, w.1);
    let finite = w.0.is_finite() && w.1.is_finite();
    if exact || (tol.ulps == 0.0 && tol.abs == 0.0) || !finite {
        return exact;
    }
    let err = (g.0 - w.0).hypot(g.1 - w.1);
    err <= tol.ulps * eps * w.0.hypot(w.1).max(tol.floor) + tol.abs
}

/// Compares dtype, shape and every element; the message names the first mismatch.
fn check(got: &Tensor, want: &Tensor, tol: Tol) -> Result<(), String> {
    if got.dtype() != want.dtype() || got.shape() != want.shape() {
        return Err(format!("got {} {:?}, want {} {:?}", got.dtype(), got.shape(), want.dtype(), want.shape()));
    }
    match (flatten(got), flatten(want)) {
        (Flat::Integer(g), Flat::Integer(w)) => match g.iter().zip(&w).position(|(a, b)| a != b) {
            None => Ok(()),
            Some(i) => Err(format!("element {i}: got {}, want {} (got {g:?}, want {w:?})", g[i], w[i])),
        },
        (Flat::Inexact(g, eps), Flat::Inexact(w, _)) => {
            match g.iter().zip(&w).position(|(&a, &b)| !close(a, b, eps, tol)) {
                None => Ok(()),
                Some(i) => Err(format!("element {i}: got {:?}, want {:?} (tol {tol:?})", g[i], w[i])),
            }
        }
        _ => unreachable!("dtypes were compared"),
    }
}

/// Largest |x| over a tensor's elements (complex modulus), for error bounds.
fn max_abs(t: &Tensor) -> f64 {
    match flatten(t) {
        Flat::Inexact(v, _) => v.iter().map(|c| c.0.hypot(c.1)).fold(0.0, f64::max),
        Flat::Integer(v) => v.iter().map(|&x| (x as f64).abs()).fold(0.0, f64::max),
    }
}

fn sum_abs(t: &Tensor, power: i32) -> f64 {
    match flatten(t) {
        // Non-finite inputs make their outputs non-finite, which are compared exactly.
        Flat::Inexact(v, _) => v.iter().map(|c| c.0.hypot(c.1).powi(power)).filter(|m| m.is_finite()).sum(),
        Flat::Integer(_) => 0.0,
    }
}

// ---------------------------------------------------------------- the runner

/// Runs every case of a family in both layouts; panics listing each failure after
/// printing the pass count.
fn run_family(family: &str, cases: &[Case], run: impl Fn(&Case, Layout) -> Result<(), String>) {
    let mut failures = Vec::new();
    for case in cases {
        for layout in LAYOUTS {
            if let Err(e) = run(case, layout) {
                failures.push(format!("{} [{layout:?}]: {e}", case.at()));
                break;
            }
        }
    }
    eprintln!("lax conformance {family}: {}/{} cases pass", cases.len() - failures.len(), cases.len());
    assert!(
        failures.is_empty(),
        "{family}: {} of {} cases differ from jax.lax:\n{}",
        failures.len(),
        cases.len(),
        failures.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
    );
}

fn ctx() -> KernelContext<'static> {
    KernelContext::sequential()
}

fn kernel<T>(r: strata_tensor::Result<T>) -> Result<T, String> {
    r.map_err(|e| format!("kernel error: {e}"))
}

// ---------------------------------------------------------------- elementwise

fn binary_op(name: &str) -> BinaryOp {
    *BinaryOp::ALL.iter().find(|op| op.name() == name).unwrap_or_else(|| panic!("unknown binary op {name}"))
}

fn binary_tol(op: BinaryOp, dtype: DType) -> Tol {
    match (op, dtype.is_complex()) {
        // Complex products and quotients are not correctly rounded; the error is measured
        // against the modulus of the exact result.
        (BinaryOp::Mul, true) => ulps(4.0),
        (BinaryOp::Div, true) => ulps(8.0),
        (BinaryOp::Pow, false) => ulps(4.0),
        (BinaryOp::Pow, true) => ulps(64.0),
        _ => EXACT,
    }
}

fn is_complex_case(c: &Case, key: &str) -> bool {
    c.field(key).starts_with('c')
}

fn run_binary(family: &str, keep: impl Fn(&Case) -> bool) {
    let cases: Vec<Case> = cases!("binary.txt").into_iter().filter(|c| keep(c)).collect();
    run_family(family, &cases, |c, layout| {
        let op = binary_op(&c.op);
        let (a, b, want) = (c.tensor("a"), c.tensor("b"), c.tensor("out"));
        let (a, b) = (Operand::new(a, layout), Operand::new(b, layout));
        let got = kernel(elementwise::binary(&ctx(), op, a.read(), b.read()))?;
        check(&got, &want, binary_tol(op, want.dtype()))
    });
}

#[test]
fn lax_binary() {
    run_binary("binary (all but complex div, max, min)", |c| {
        !(is_complex_case(c, "a") && matches!(c.op.as_str(), "div" | "max" | "min"))
    });
}

/// Complex max/min with NaN parts: XLA selects `b` unless `a > b` (NaN compares false).
#[test]
fn lax_binary_complex_max_min() {
    run_binary("binary complex max/min", |c| is_complex_case(c, "a") && matches!(c.op.as_str(), "max" | "min"));
}

/// Complex division, including division by zero (XLA: each part divided by zero).
#[test]
fn lax_binary_complex_div() {
    run_binary("binary complex div", |c| is_complex_case(c, "a") && c.op == "div");
}

fn unary_op(name: &str) -> UnaryOp {
    *UnaryOp::ALL.iter().find(|op| op.name() == name).unwrap_or_else(|| panic!("unknown unary op {name}"))
}

fn unary_tol(op: UnaryOp, input: DType) -> Tol {
    let complex = input.is_complex();
    match op {
        UnaryOp::Neg | UnaryOp::Conj => EXACT,
        UnaryOp::Abs | UnaryOp::Sign if !complex => EXACT,
        // |z| is a hypot; sign(z) = z / |z|.
        UnaryOp::Abs => ulps(2.0),
        UnaryOp::Sign => ulps(4.0),
        // Argument reduction of sin/cos loses absolute, not relative, accuracy near zeros.
        UnaryOp::Sin | UnaryOp::Cos => Tol { ulps: 4.0, floor: 1.0, abs: 0.0 },
        // The reference's own error: XLA's f64 log1p is off by up to ~80 ulp on
        // [-0.41, -0.37] (strata agrees with glibc and Python's math.log1p there), and
        // XLA's complex log loses ~30 ulp in the real part when |z| is near 1.
        UnaryOp::Log1p if input == DType::F64 => ulps(128.0),
        UnaryOp::Log if complex => ulps(64.0),
        _ if complex => ulps(16.0),
        _ => ulps(4.0),
    }
}

fn run_unary(family: &str, keep: impl Fn(&Case) -> bool) {
    let cases: Vec<Case> = cases!("unary.txt").into_iter().filter(|c| keep(c)).collect();
    run_family(family, &cases, |c, layout| {
        let op = unary_op(&c.op);
        let (x, want) = (c.tensor("x"), c.tensor("out"));
        let tol = unary_tol(op, x.dtype());
        let x = Operand::new(x, layout);
        let got = kernel(elementwise::unary(&ctx(), op, x.read()))?;
        check(&got, &want, tol)
    });
}

#[test]
fn lax_unary() {
    run_unary("unary (all but complex abs)", |c| !(is_complex_case(c, "x") && c.op == "abs"));
}

/// |z| of complex values with infinite and NaN parts (XLA: NaN whenever a part is NaN).
#[test]
fn lax_unary_complex_abs() {
    run_unary("unary complex abs", |c| is_complex_case(c, "x") && c.op == "abs");
}

fn compare_dir(name: &str) -> CompareDir {
    *CompareDir::ALL.iter().find(|d| d.name() == name).unwrap_or_else(|| panic!("unknown direction {name}"))
}

#[test]
fn lax_compare_select_clamp() {
    run_family("compare/select/clamp", &cases!("compare.txt"), |c, layout| {
        let want = c.tensor("out");
        let got = match c.op.as_str() {
            "compare" => {
                let (a, b) = (Operand::new(c.tensor("a"), layout), Operand::new(c.tensor("b"), layout));
                kernel(elementwise::compare(&ctx(), compare_dir(c.field("dir")), a.read(), b.read()))?
            }
            "select" => {
                let p = Operand::new(c.tensor("pred"), layout);
                let (a, b) = (Operand::new(c.tensor("a"), layout), Operand::new(c.tensor("b"), layout));
                kernel(elementwise::select(&ctx(), p.read(), a.read(), b.read()))?
            }
            "clamp" => {
                let lo = Operand::new(c.tensor("lo"), layout);
                let x = Operand::new(c.tensor("x"), layout);
                let hi = Operand::new(c.tensor("hi"), layout);
                kernel(elementwise::clamp(&ctx(), lo.read(), x.read(), hi.read()))?
            }
            other => panic!("unknown op {other}"),
        };
        check(&got, &want, EXACT)
    });
}

#[test]
fn lax_convert_element_type() {
    run_family("convert", &cases!("convert.txt"), |c, layout| {
        let x = Operand::new(c.tensor("x"), layout);
        let got = kernel(structural::cast(&ctx(), x.read(), parse_dtype(c.field("to"))))?;
        check(&got, &c.tensor("out"), EXACT)
    });
}

// ---------------------------------------------------------------- reductions

#[test]
fn lax_reduce() {
    run_family("reduce", &cases!("reduce.txt"), |c, layout| {
        let op = match c.op.as_str() {
            "reduce_sum" => ReduceOp::Sum,
            "reduce_sumsq" => ReduceOp::SumSquares,
            "reduce_prod" => ReduceOp::Prod,
            "reduce_max" => ReduceOp::Max,
            "reduce_min" => ReduceOp::Min,
            other => panic!("unknown op {other}"),
        };
        let (x, axes, want) = (c.tensor("x"), c.usizes("axes"), c.tensor("out"));
        let terms: usize = axes.iter().map(|&a| x.shape()[a]).product();
        let n = terms as f64 + 1.0;
        // Summation order is strata's fixed tree, not XLA's: bound the error by the number
        // of terms times the sum of magnitudes (of squares for sum of squares).
        let tol = match op {
            ReduceOp::Sum => Tol { ulps: 2.0, floor: 0.0, abs: 0.0 }.with_abs(n, sum_abs(&x, 1), want.dtype()),
            ReduceOp::SumSquares => Tol { ulps: 2.0, floor: 0.0, abs: 0.0 }.with_abs(n, sum_abs(&x, 2), want.dtype()),
            ReduceOp::Prod => ulps(2.0 * n),
            ReduceOp::Max | ReduceOp::Min => EXACT,
        };
        let x = Operand::new(x, layout);
        let got = kernel(reduction::reduce(&ctx(), op, x.read(), &axes))?;
        check(&got, &want, tol)
    });
}

impl Tol {
    fn with_abs(mut self, n: f64, magnitude: f64, dtype: DType) -> Tol {
        let eps = match dtype {
            DType::F32 | DType::C32 => f64::from(f32::EPSILON),
            _ => f64::EPSILON,
        };
        self.abs = n * eps * magnitude;
        self
    }
}

// ---------------------------------------------------------------- structural

#[test]
fn lax_structural() {
    let cases: Vec<Case> = cases!("structural.txt")
        .into_iter()
        .filter(|c| matches!(c.op.as_str(), "transpose" | "broadcast_in_dim" | "reshape" | "rev"))
        .collect();
    run_family("structural (transpose, broadcast_in_dim, reshape, rev)", &cases, |c, layout| {
        let x = Operand::new(c.tensor("x"), layout);
        let got = match c.op.as_str() {
            "transpose" => kernel(structural::transpose(&ctx(), x.read(), &c.usizes("perm")))?,
            "broadcast_in_dim" => {
                kernel(structural::broadcast_in_dim(&ctx(), x.read(), &c.usizes("shape"), &c.usizes("dims")))?
            }
            "reshape" => kernel(structural::reshape(&ctx(), x.read(), &c.usizes("shape")))?,
            "rev" => kernel(indexing::reverse(&ctx(), &x.read(), &c.usizes("axes")))?,
            other => panic!("unknown op {other}"),
        };
        check(&got, &c.tensor("out"), EXACT)
    });
}

#[test]
fn lax_diagonal_tril_triu() {
    let cases: Vec<Case> = cases!("structural.txt")
        .into_iter()
        .filter(|c| matches!(c.op.as_str(), "diagonal" | "tril" | "triu"))
        .collect();
    run_family("structural (diagonal as jnp.diagonal, tril, triu)", &cases, |c, layout| {
        let x = Operand::new(c.tensor("x"), layout);
        let k = || c.field("k").parse::<isize>().expect("k");
        let got = match c.op.as_str() {
            "diagonal" => kernel(structural::extract_diagonal(&ctx(), x.read(), c.usize("axis1"), c.usize("axis2")))?,
            "tril" => kernel(structural::tril(&ctx(), x.read(), k()))?,
            "triu" => kernel(structural::triu(&ctx(), x.read(), k()))?,
            other => panic!("unknown op {other}"),
        };
        check(&got, &c.tensor("out"), EXACT)
    });
}

// ---------------------------------------------------------------- indexing

#[test]
fn lax_slice_pad_concatenate_dynamic() {
    run_family(
        "indexing (slice, pad, concatenate, dynamic_slice, dynamic_update_slice)",
        &cases!("indexing.txt"),
        |c, layout| {
            let got = match c.op.as_str() {
                "slice" => {
                    let x = Operand::new(c.tensor("x"), layout);
                    let cfg = SliceConfig::new(c.usizes("start"), c.usizes("limit"), c.usizes("strides"));
                    kernel(indexing::slice(&ctx(), &x.read(), &cfg))?
                }
                "pad" => {
                    let x = Operand::new(c.tensor("x"), layout);
                    let pv = c.tensor("pv");
                    let cfg = PadConfig::new(c.ints("low"), c.ints("high"), c.ints("interior"));
                    kernel(indexing::pad(&ctx(), &x.read(), &(&pv).into(), &cfg))?
                }
                "concatenate" => {
                    let parts: Vec<Operand> =
                        (0..c.usize("n")).map(|i| Operand::new(c.tensor(&format!("x{i}")), layout)).collect();
                    let reads: Vec<TensorRead<'_>> = parts.iter().map(Operand::read).collect();
                    kernel(indexing::concatenate(&ctx(), &reads, c.usize("axis")))?
                }
                "dynamic_slice" => {
                    let x = Operand::new(c.tensor("x"), layout);
                    let starts = c.ints("starts");
                    kernel(indexing::dynamic_slice(
                        &ctx(),
                        &x.read(),
                        indexing::StartIndices::Values(&starts),
                        &c.usizes("sizes"),
                        None,
                    ))?
                }
                "dynamic_update_slice" => {
                    let x = Operand::new(c.tensor("x"), layout);
                    let u = Operand::new(c.tensor("u"), layout);
                    let starts = c.ints("starts");
                    kernel(indexing::dynamic_update_slice(
                        &ctx(),
                        &x.read(),
                        &u.read(),
                        indexing::StartIndices::Values(&starts),
                        None,
                    ))?
                }
                other => panic!("unknown op {other}"),
            };
            check(&got, &c.tensor("out"), EXACT)
        },
    );
}

fn gather_cases() -> Vec<Case> {
    cases!("gather_scatter.txt").into_iter().filter(|c| c.op == "gather").collect()
}

fn scatter_cases() -> Vec<Case> {
    cases!("gather_scatter.txt").into_iter().filter(|c| c.op == "scatter").collect()
}

#[test]
fn lax_gather() {
    run_family("gather", &gather_cases(), |c, layout| {
        let cfg = GatherConfig {
            offset_dims: c.usizes("offset_dims"),
            collapsed_slice_dims: c.usizes("collapsed"),
            operand_batching_dims: c.usizes("obatch"),
            start_indices_batching_dims: c.usizes("ibatch"),
            start_index_map: c.usizes("start_index_map"),
            index_vector_dim: c.usize("ivd"),
            slice_sizes: c.usizes("slice_sizes"),
        };
        let x = Operand::new(c.tensor("x"), layout);
        let idx = Operand::new(c.tensor("idx"), layout);
        let got = kernel(indexing::gather(&ctx(), &x.read(), &idx.read(), &cfg, None))?;
        check(&got, &c.tensor("out"), EXACT)
    });
}

#[test]
fn lax_scatter() {
    run_family("scatter", &scatter_cases(), |c, layout| {
        let combiner = match c.field("combiner") {
            "replace" => ScatterCombiner::Replace,
            "add" => ScatterCombiner::Add,
            "mul" => ScatterCombiner::Multiply,
            "max" => ScatterCombiner::Max,
            "min" => ScatterCombiner::Min,
            other => panic!("unknown combiner {other}"),
        };
        let cfg = ScatterConfig {
            update_window_dims: c.usizes("update_window_dims"),
            inserted_window_dims: c.usizes("inserted"),
            input_batching_dims: c.usizes("obatch"),
            scatter_indices_batching_dims: c.usizes("ibatch"),
            scatter_dims_to_operand_dims: c.usizes("sdod"),
            index_vector_dim: c.usize("ivd"),
            combiner,
        };
        let x = Operand::new(c.tensor("x"), layout);
        let idx = Operand::new(c.tensor("idx"), layout);
        let u = Operand::new(c.tensor("u"), layout);
        let got = kernel(indexing::scatter(&ctx(), &x.read(), &idx.read(), &u.read(), &cfg, None))?;
        // The data keeps every partial result an exactly representable small integer.
        check(&got, &c.tensor("out"), EXACT)
    });
}

// ---------------------------------------------------------------- contraction

#[test]
fn lax_dot_general() {
    run_family("dot_general", &cases!("dot_general.txt"), |c, layout| {
        let (a, b, want) = (c.tensor("a"), c.tensor("b"), c.tensor("out"));
        let cfg = DotGeneralConfig::new(c.usizes("lb"), c.usizes("rb"), c.usizes("lc"), c.usizes("rc"));
        let k: usize = cfg.lhs_contracting.iter().map(|&d| a.shape()[d]).product();
        // Each output is a sum of k products: bound its error by (k + 1) roundings of the
        // largest possible term per term (×2 for the complex product's own rounding).
        let per_term = max_abs(&a) * max_abs(&b) * if want.dtype().is_complex() { 2.0 } else { 1.0 };
        let tol = Tol { ulps: 0.0, floor: 0.0, abs: 0.0 }.with_abs(2.0 * (k as f64 + 1.0), per_term, want.dtype());
        let (a, b) = (Operand::new(a, layout), Operand::new(b, layout));
        let got = kernel(contraction::dot_general(
            &ctx(),
            a.read(),
            b.read(),
            &cfg,
            false,
            false,
            &strata_provider::FaerGemmProvider,
            None,
        ))?;
        check(&got, &want, tol)
    });
}
