//! Differential conformance against jax.lax: every case in `tests/lax/*.txt` was run through
//! jax.lax (jax 0.10.2, x64 enabled, CPU) by `tests/lax/gen_cases.py` and `gen_edge.py`;
//! here the same inputs go through strata's kernels and the outputs must match. Each small
//! case runs in six layouts (contiguous, reversed, column-major, strided with gaps,
//! broadcast along a stride-0 axis for elementwise ops, and `_into` a reversed
//! destination); large cases (past the parallel, SIMD and block thresholds) run on a
//! threaded context in three.
//!
//! Tolerances (`lax_support::ops::tolerance`): exact (bit-for-bit, any NaN matching any NaN)
//! for everything IEEE defines as correctly rounded, that moves values, or that strata
//! computes with XLA's own sequence of operations (complex mul and div); a few units of
//! the dtype's epsilon for transcendental functions and complex pow; for sums and dot
//! products an error bound proportional to the number of terms times the sum of the
//! magnitudes, since the summation order is not jax's. A subnormal result matches a jax
//! zero of its sign (XLA flushes subnormals on CPU).
//!
//! One test per family and op class, so a kernel bug shows up as exactly that test failing.

mod common;
mod lax_support;

use strata_kernels::KernelContext;

use lax_support::data::Case;
use lax_support::layout::Layout;
use lax_support::ops::{binary_op, is_elementwise};
use lax_support::{ALL_LAYOUTS, run_errors, run_family, run_inaccurate};

fn small(family: &str, cases: &[Case]) {
    let ctx = KernelContext::sequential();
    let runs: Vec<(Layout, &KernelContext<'_>)> = ALL_LAYOUTS.iter().map(|&l| (l, &ctx)).collect();
    run_family(family, cases, &runs);
}

fn only(cases: Vec<Case>, keep: impl Fn(&Case) -> bool) -> Vec<Case> {
    cases.into_iter().filter(|c| keep(c)).collect()
}

fn is_complex(c: &Case, key: &str) -> bool {
    c.field(key).trim_start_matches('@').starts_with('c')
}

#[test]
fn lax_binary() {
    let cases = only(cases!("binary.txt"), |c| !(is_complex(c, "a") && matches!(c.op.as_str(), "div" | "max" | "min")));
    small("binary (all but complex div, max, min)", &cases);
}

/// Complex max/min with NaN parts: XLA selects `b` unless `a > b` (NaN compares false).
#[test]
fn lax_binary_complex_max_min() {
    let cases = only(cases!("binary.txt"), |c| is_complex(c, "a") && matches!(c.op.as_str(), "max" | "min"));
    small("binary complex max/min", &cases);
}

/// Complex division, including division by zero (XLA: each part divided by zero).
#[test]
fn lax_binary_complex_div() {
    small("binary complex div", &only(cases!("binary.txt"), |c| is_complex(c, "a") && c.op == "div"));
}

#[test]
fn lax_unary() {
    small("unary", &cases!("unary.txt"));
}

#[test]
fn lax_compare_select_clamp() {
    small("compare/select/clamp", &cases!("compare.txt"));
}

#[test]
fn lax_convert_element_type() {
    small("convert", &cases!("convert.txt"));
}

#[test]
fn lax_reduce() {
    small("reduce", &cases!("reduce.txt"));
}

#[test]
fn lax_structural() {
    let cases = only(cases!("structural.txt"), |c| {
        matches!(c.op.as_str(), "transpose" | "broadcast_in_dim" | "reshape" | "rev")
    });
    small("structural (transpose, broadcast_in_dim, reshape, rev)", &cases);
}

#[test]
fn lax_diagonal_tril_triu() {
    let cases = only(cases!("structural.txt"), |c| matches!(c.op.as_str(), "diagonal" | "tril" | "triu"));
    small("structural (diagonal as jnp.diagonal, tril, triu)", &cases);
}

#[test]
fn lax_slice_pad_concatenate_dynamic() {
    small("indexing (slice, pad, concatenate, dynamic_slice, dynamic_update_slice)", &cases!("indexing.txt"));
}

#[test]
fn lax_gather() {
    small("gather", &only(cases!("gather_scatter.txt"), |c| c.op == "gather"));
}

/// The data keeps every partial result an exactly representable small integer.
#[test]
fn lax_scatter() {
    small("scatter", &only(cases!("gather_scatter.txt"), |c| c.op == "scatter"));
}

#[test]
fn lax_dot_general() {
    small("dot_general", &cases!("dot_general.txt"));
}

// ---------------------------------------------------------------- second draws

#[test]
fn lax_second_draw_elementwise() {
    for (name, cases) in [
        ("binary_b", cases!("binary_b.txt")),
        ("unary_b", cases!("unary_b.txt")),
        ("compare_b", cases!("compare_b.txt")),
    ] {
        small(name, &cases);
    }
}

#[test]
fn lax_second_draw_reduce_structural_indexing() {
    for (name, cases) in [
        ("reduce_b", cases!("reduce_b.txt")),
        ("structural_b", cases!("structural_b.txt")),
        ("indexing_b", cases!("indexing_b.txt")),
        ("gather_scatter_b", cases!("gather_scatter_b.txt")),
        ("broadcast_b", cases!("broadcast_b.txt")),
    ] {
        small(name, &cases);
    }
}

// ---------------------------------------------------------------- edge values

/// Signed zeros, infinities, NaN and the extremes of every dtype through every binary op.
#[test]
fn lax_special_binary() {
    small("special binary", &only(cases!("special.txt"), |c| binary_op(&c.op).is_some()));
}

/// ... through every unary and analytic function (complex parts from the same values).
#[test]
fn lax_special_unary() {
    small("special unary", &only(cases!("special.txt"), |c| is_elementwise(&c.op) && c.has("x") && c.op != "convert"));
}

#[test]
fn lax_special_compare_select_clamp_convert() {
    let cases = only(cases!("special.txt"), |c| matches!(c.op.as_str(), "compare" | "select" | "clamp" | "convert"));
    small("special compare/select/clamp/convert", &cases);
}

/// The analytic functions over wide ranges and near their cancellation points.
#[test]
fn lax_analytic_domains() {
    small("domain", &cases!("domain.txt"));
}

/// Where jax.lax is itself inaccurate (its result farther from the exact value than the
/// tolerance: near the poles of its tanh, near 2πki for its expm1, its f64 log1p on
/// [-0.41, -0.37], intermediate underflow in its log1p near -1, float32 intermediates of
/// complex64 functions), strata is held to the exact value instead.
#[test]
fn lax_where_jax_is_inaccurate() {
    run_inaccurate(&cases!("xla_inaccurate.txt"), &KernelContext::sequential());
}

#[test]
fn lax_reduce_special() {
    small("reduce_special", &cases!("reduce_special.txt"));
}

// ---------------------------------------------------------------- large tensors

fn large(family: &str, keep: impl Fn(&Case) -> bool) {
    let cases = only(cases!("large.txt"), keep);
    let (two, four) = (common::ctx(2), common::ctx(4));
    let seq = KernelContext::sequential();
    run_family(family, &cases, &[(Layout::Contiguous, &two), (Layout::Strided, &four), (Layout::Reversed, &seq)]);
}

/// Elementwise ops and casts on 33K-70K elements (parallel split, SIMD analytic cores).
#[test]
fn lax_large_elementwise() {
    large("large elementwise", |c| is_elementwise(&c.op));
}

/// Reductions of 33K-130K elements (several 4096-element blocks, split across workers).
#[test]
fn lax_large_reduce() {
    large("large reduce", |c| c.op.starts_with("reduce_"));
}

/// Transposes (tiled), reversals, broadcasts, diagonals, triangles, slices, pads,
/// concatenation, dynamic slices, gathers and scatters of 60K-960K elements.
#[test]
fn lax_large_moves() {
    large("large moves", |c| !is_elementwise(&c.op) && !c.op.starts_with("reduce_"));
}

// ---------------------------------------------------------------- rejections

/// Inputs jax.lax rejects get a typed error of the recorded kind, naming the op.
#[test]
fn lax_rejections() {
    run_errors(&cases!("errors.txt"), &KernelContext::sequential());
}
