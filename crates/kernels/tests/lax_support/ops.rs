//! Every op of the golden files, run through strata's kernels from a case's fields, and the
//! tolerance each is compared with.

use strata_kernels::{KernelContext, contraction, elementwise, indexing, reduction, structural};
use strata_tensor::config::{
    BinaryOp, CompareDir, DotGeneralConfig, GatherConfig, PadConfig, ReduceOp, ScatterCombiner, ScatterConfig,
    SliceConfig, UnaryOp,
};
use strata_tensor::{DType, ErrorKind, Tensor, TensorRead};

use super::compare::{EXACT, Tol, max_abs, sum_abs, ulps};
use super::data::{Case, Want, parse_dtype};
use super::layout::{Layout, Operand, into_reversed};

pub fn binary_op(name: &str) -> Option<BinaryOp> {
    BinaryOp::ALL.iter().copied().find(|op| op.name() == name)
}

pub fn unary_op(name: &str) -> Option<UnaryOp> {
    UnaryOp::ALL.iter().copied().find(|op| op.name() == name)
}

fn compare_dir(name: &str) -> CompareDir {
    *CompareDir::ALL.iter().find(|d| d.name() == name).unwrap_or_else(|| panic!("unknown direction {name}"))
}

fn reduce_op(name: &str) -> Option<ReduceOp> {
    Some(match name {
        "reduce_sum" => ReduceOp::Sum,
        "reduce_sumsq" => ReduceOp::SumSquares,
        "reduce_prod" => ReduceOp::Prod,
        "reduce_max" => ReduceOp::Max,
        "reduce_min" => ReduceOp::Min,
        _ => return None,
    })
}

/// Ops whose output element `i` depends only on input elements `i` (so a broadcast of the
/// inputs broadcasts the output).
pub fn is_elementwise(op: &str) -> bool {
    binary_op(op).is_some() || unary_op(op).is_some() || matches!(op, "compare" | "select" | "clamp" | "convert")
}

/// Ops with an `_into` form the runner exercises.
pub fn has_into(op: &str) -> bool {
    is_elementwise(op) || reduce_op(op).is_some()
}

/// The result's dtype and shape for the `_into` destination, from what the case expects.
fn out_meta(want: &Want) -> (DType, Vec<usize>) {
    match want {
        Want::Tensor(t) => (t.dtype(), t.shape().to_vec()),
        Want::Digest { dtype, shape, .. } => (*dtype, shape.clone()),
    }
}

/// Runs the case's op on its inputs laid out as `layout`. `out_shape` is the shape of the
/// result (operands of that shape are the ones a `Broadcast` layout broadcasts).
pub fn eval(
    case: &Case,
    layout: Layout,
    ctx: &KernelContext<'_>,
    want: Option<&Want>,
) -> strata_tensor::Result<Tensor> {
    let out_shape: Vec<usize> = want.map(|w| out_meta(w).1).unwrap_or_default();
    let opnd = |key: &str| Operand::new(&case.tensor(key), layout, &out_shape);
    let op = case.op.as_str();
    if layout == Layout::IntoReversed {
        let (dtype, shape) = out_meta(want.expect("an _into run knows its result"));
        return into_reversed(dtype, &shape, |out| eval_into(case, ctx, out));
    }
    if let Some(b) = binary_op(op) {
        let (a, bb) = (opnd("a"), opnd("b"));
        return elementwise::binary(ctx, b, a.read(), bb.read());
    }
    if let Some(u) = unary_op(op) {
        let x = opnd("x");
        return elementwise::unary(ctx, u, x.read());
    }
    if let Some(r) = reduce_op(op) {
        let x = opnd("x");
        return reduction::reduce(ctx, r, x.read(), &case.usizes("axes"));
    }
    match op {
        "compare" => {
            let (a, b) = (opnd("a"), opnd("b"));
            elementwise::compare(ctx, compare_dir(case.field("dir")), a.read(), b.read())
        }
        "select" => {
            let (p, a, b) = (opnd("pred"), opnd("a"), opnd("b"));
            elementwise::select(ctx, p.read(), a.read(), b.read())
        }
        "clamp" => {
            let (lo, x, hi) = (opnd("lo"), opnd("x"), opnd("hi"));
            elementwise::clamp(ctx, lo.read(), x.read(), hi.read())
        }
        "convert" => {
            let x = opnd("x");
            structural::cast(ctx, x.read(), parse_dtype(case.field("to")))
        }
        "transpose" => structural::transpose(ctx, opnd("x").read(), &case.usizes("perm")),
        "broadcast_in_dim" => {
            structural::broadcast_in_dim(ctx, opnd("x").read(), &case.usizes("shape"), &case.usizes("dims"))
        }
        "reshape" => structural::reshape(ctx, opnd("x").read(), &case.usizes("shape")),
        "rev" => indexing::reverse(ctx, &opnd("x").read(), &case.usizes("axes")),
        "diagonal" => structural::extract_diagonal(ctx, opnd("x").read(), case.usize("axis1"), case.usize("axis2")),
        "tril" | "triu" => {
            let k = case.field("k").parse::<isize>().expect("k");
            let x = opnd("x");
            if op == "tril" { structural::tril(ctx, x.read(), k) } else { structural::triu(ctx, x.read(), k) }
        }
        "slice" => {
            let cfg = SliceConfig::new(case.usizes("start"), case.usizes("limit"), case.usizes("strides"));
            indexing::slice(ctx, &opnd("x").read(), &cfg)
        }
        "pad" => {
            let (x, pv) = (opnd("x"), opnd("pv"));
            let cfg = PadConfig::new(case.ints("low"), case.ints("high"), case.ints("interior"));
            indexing::pad(ctx, &x.read(), &pv.read(), &cfg)
        }
        "concatenate" => {
            let parts: Vec<Operand> = (0..case.usize("n")).map(|i| opnd(&format!("x{i}"))).collect();
            let reads: Vec<TensorRead<'_>> = parts.iter().map(Operand::read).collect();
            indexing::concatenate(ctx, &reads, case.usize("axis"))
        }
        "dynamic_slice" => {
            let starts = case.ints("starts");
            indexing::dynamic_slice(
                ctx,
                &opnd("x").read(),
                indexing::StartIndices::Values(&starts),
                &case.usizes("sizes"),
                None,
            )
        }
        "dynamic_update_slice" => {
            let starts = case.ints("starts");
            let (x, u) = (opnd("x"), opnd("u"));
            indexing::dynamic_update_slice(ctx, &x.read(), &u.read(), indexing::StartIndices::Values(&starts), None)
        }
        "gather" => {
            let cfg = GatherConfig {
                offset_dims: case.usizes("offset_dims"),
                collapsed_slice_dims: case.usizes("collapsed"),
                operand_batching_dims: case.usizes("obatch"),
                start_indices_batching_dims: case.usizes("ibatch"),
                start_index_map: case.usizes("start_index_map"),
                index_vector_dim: case.usize("ivd"),
                slice_sizes: case.usizes("slice_sizes"),
            };
            let (x, idx) = (opnd("x"), opnd("idx"));
            indexing::gather(ctx, &x.read(), &idx.read(), &cfg, None)
        }
        "scatter" => {
            let combiner = match case.field("combiner") {
                "replace" => ScatterCombiner::Replace,
                "add" => ScatterCombiner::Add,
                "mul" => ScatterCombiner::Multiply,
                "max" => ScatterCombiner::Max,
                "min" => ScatterCombiner::Min,
                other => panic!("unknown combiner {other}"),
            };
            let cfg = ScatterConfig {
                update_window_dims: case.usizes("update_window_dims"),
                inserted_window_dims: case.usizes("inserted"),
                input_batching_dims: case.usizes("obatch"),
                scatter_indices_batching_dims: case.usizes("ibatch"),
                scatter_dims_to_operand_dims: case.usizes("sdod"),
                index_vector_dim: case.usize("ivd"),
                combiner,
            };
            let (x, idx, u) = (opnd("x"), opnd("idx"), opnd("u"));
            indexing::scatter(ctx, &x.read(), &idx.read(), &u.read(), &cfg, None)
        }
        "dot_general" => {
            let cfg = DotGeneralConfig::new(case.usizes("lb"), case.usizes("rb"), case.usizes("lc"), case.usizes("rc"));
            let (a, b) = (opnd("a"), opnd("b"));
            contraction::dot_general(
                ctx,
                a.read(),
                b.read(),
                &cfg,
                false,
                false,
                &strata_provider::FaerGemmProvider,
                None,
            )
        }
        other => panic!("{}: no runner for op {other}", case.at()),
    }
}

/// The `_into` form of an elementwise op or reduction, on contiguous inputs.
fn eval_into(case: &Case, ctx: &KernelContext<'_>, out: strata_tensor::TensorWrite<'_>) -> strata_tensor::Result<()> {
    let t = |key: &str| case.tensor(key);
    let op = case.op.as_str();
    if let Some(b) = binary_op(op) {
        return elementwise::binary_into(ctx, b, (&t("a")).into(), (&t("b")).into(), out);
    }
    if let Some(u) = unary_op(op) {
        return elementwise::unary_into(ctx, u, (&t("x")).into(), out);
    }
    if let Some(r) = reduce_op(op) {
        return reduction::reduce_into(ctx, r, (&t("x")).into(), &case.usizes("axes"), out);
    }
    match op {
        "compare" => {
            elementwise::compare_into(ctx, compare_dir(case.field("dir")), (&t("a")).into(), (&t("b")).into(), out)
        }
        "select" => elementwise::select_into(ctx, (&t("pred")).into(), (&t("a")).into(), (&t("b")).into(), out),
        "clamp" => elementwise::clamp_into(ctx, (&t("lo")).into(), (&t("x")).into(), (&t("hi")).into(), out),
        "convert" => structural::cast_into(ctx, (&t("x")).into(), out),
        other => panic!("{}: no _into runner for op {other}", case.at()),
    }
}

/// The tolerance of a case: exact for everything IEEE rounds correctly or that only moves
/// values; otherwise a few units of the dtype's epsilon (see the crate's SEMANTICS.md).
pub fn tolerance(case: &Case) -> Tol {
    let op = case.op.as_str();
    if let Some(b) = binary_op(op) {
        let complex = case.field("a").trim_start_matches('@').starts_with('c');
        return match (b, complex) {
            // Complex products and quotients are not correctly rounded (and XLA's compiled
            // code may contract them into fused multiply-adds); the error is measured
            // against the modulus of the exact result.
            (BinaryOp::Mul, true) => ulps(4.0),
            (BinaryOp::Div, true) => ulps(8.0),
            (BinaryOp::Pow, false) => ulps(4.0),
            (BinaryOp::Pow, true) => ulps(64.0),
            _ => EXACT,
        };
    }
    if let Some(u) = unary_op(op) {
        let x = case.field("x").trim_start_matches('@');
        let dtype = parse_dtype(x.split(';').next().expect("dtype"));
        return unary_tol(u, dtype);
    }
    if let Some(r) = reduce_op(op) {
        let x = case.tensor("x");
        let axes = case.usizes("axes");
        let terms: usize = axes.iter().map(|&a| x.shape()[a]).product();
        let n = terms as f64 + 1.0;
        let dtype = ReduceOp::Sum.result_dtype(x.dtype()).real_counterpart();
        // Summation order is strata's fixed tree, not XLA's: bound the error by the number
        // of terms times the sum of magnitudes (of squares for sum of squares).
        return match r {
            ReduceOp::Sum => Tol { ulps: 2.0, floor: 0.0, abs: 0.0 }.with_abs(n, sum_abs(&x, 1), dtype),
            ReduceOp::SumSquares => Tol { ulps: 2.0, floor: 0.0, abs: 0.0 }.with_abs(n, sum_abs(&x, 2), dtype),
            ReduceOp::Prod => ulps(2.0 * n),
            ReduceOp::Max | ReduceOp::Min => EXACT,
        };
    }
    if op == "dot_general" {
        let (a, b) = (case.tensor("a"), case.tensor("b"));
        let k: usize = case.usizes("lc").iter().map(|&d| a.shape()[d]).product();
        // Each output is a sum of k products: (k + 1) roundings of the largest possible
        // term per term (×2 for the complex product's own rounding).
        let complex = a.dtype().is_complex();
        let per_term = max_abs(&a) * max_abs(&b) * if complex { 2.0 } else { 1.0 };
        return Tol { ulps: 0.0, floor: 0.0, abs: 0.0 }.with_abs(2.0 * (k as f64 + 1.0), per_term, a.dtype());
    }
    EXACT
}

pub fn unary_tol(op: UnaryOp, input: DType) -> Tol {
    let complex = input.is_complex();
    match op {
        UnaryOp::Neg | UnaryOp::Conj => EXACT,
        UnaryOp::Abs | UnaryOp::Sign if !complex => EXACT,
        // |z| is a hypot; sign(z) = z / |z|.
        UnaryOp::Abs => ulps(2.0),
        UnaryOp::Sign => ulps(4.0),
        // Argument reduction of sin/cos loses absolute, not relative, accuracy near zeros.
        UnaryOp::Sin | UnaryOp::Cos if !complex => Tol { ulps: 4.0, floor: 1.0, abs: 0.0 },
        // The reference's own error: XLA's f64 log1p is off by up to ~80 ulp on
        // [-0.41, -0.37] (strata agrees with glibc and Python's math.log1p there), and
        // XLA's complex log loses ~30 ulp in the real part when |z| is near 1.
        UnaryOp::Log1p if input == DType::F64 => ulps(128.0),
        UnaryOp::Log if complex => ulps(64.0),
        _ if complex => ulps(16.0),
        _ => ulps(4.0),
    }
}

/// The error kind a case of the errors family expects.
pub fn expected_kind(case: &Case) -> ErrorKind {
    match case.field("kind") {
        "unsupported" => ErrorKind::Unsupported,
        "dtype_mismatch" => ErrorKind::DTypeMismatch,
        "shape_mismatch" => ErrorKind::ShapeMismatch,
        "invalid_argument" => ErrorKind::InvalidArgument,
        other => panic!("{}: unknown error kind {other}", case.at()),
    }
}
