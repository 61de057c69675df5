//! The runner of the lax conformance suite: reads the golden cases (`data`), lays the
//! operands out in every layout (`layout`), runs the op (`ops`) and compares the result
//! with jax's (`compare`).

pub mod compare;
pub mod data;
pub mod layout;
pub mod ops;

use strata_kernels::KernelContext;

use compare::{Flat, check_want, close, eps_of, flatten};
use data::{Case, Want};
use layout::{Layout, stacked};
use ops::{eval, expected_kind, has_into, is_elementwise, tolerance};

/// Every layout, for small cases.
pub const ALL_LAYOUTS: [Layout; 6] = [
    Layout::Contiguous,
    Layout::Reversed,
    Layout::ColumnMajor,
    Layout::Strided,
    Layout::Broadcast,
    Layout::IntoReversed,
];

/// Runs one case in one layout; `Ok(false)` when the layout does not apply to the op.
fn run_case(case: &Case, layout: Layout, ctx: &KernelContext<'_>) -> Result<bool, String> {
    let want = case.want();
    let got = match (layout, &want) {
        (Layout::Broadcast, Want::Tensor(_)) if is_elementwise(&case.op) => eval(case, layout, ctx, Some(&want)),
        (Layout::Broadcast, _) => return Ok(false),
        (Layout::IntoReversed, _) if !has_into(&case.op) => return Ok(false),
        _ => eval(case, layout, ctx, Some(&want)),
    }
    .map_err(|e| format!("kernel error: {e}"))?;
    let want = match (layout, want) {
        (Layout::Broadcast, Want::Tensor(w)) => Want::Tensor(stacked(&w)),
        (_, want) => want,
    };
    check_want(&got, &want, tolerance(case)).map(|()| true)
}

/// Runs every case of a family in each `(layout, context)`; panics listing the failures
/// after printing the pass count.
pub fn run_family(family: &str, cases: &[Case], runs: &[(Layout, &KernelContext<'_>)]) {
    let mut failures = Vec::new();
    let mut checks = 0usize;
    for case in cases {
        for &(layout, ctx) in runs {
            match run_case(case, layout, ctx) {
                Ok(ran) => checks += usize::from(ran),
                Err(e) => {
                    failures.push(format!("{} [{layout:?}]: {e}", case.at()));
                    break;
                }
            }
        }
    }
    eprintln!(
        "lax conformance {family}: {}/{} cases pass ({checks} case-layout runs)",
        cases.len() - failures.len(),
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{family}: {} of {} cases differ from jax.lax:\n{}",
        failures.len(),
        cases.len(),
        failures.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
    );
}

/// Runs cases jax.lax rejects: each must give a typed error of the recorded kind.
pub fn run_errors(cases: &[Case], ctx: &KernelContext<'_>) {
    let mut failures = Vec::new();
    for case in cases {
        let want = expected_kind(case);
        match eval(case, Layout::Contiguous, ctx, None) {
            Ok(t) => {
                failures.push(format!("{}: accepted (gave {} {:?}), want {want:?}", case.at(), t.dtype(), t.shape()))
            }
            Err(e) if e.kind() != want => {
                failures.push(format!("{}: {:?} error `{e}`, want {want:?}", case.at(), e.kind()))
            }
            Err(e) if e.op().is_empty() => failures.push(format!("{}: error `{e}` names no op", case.at())),
            Err(_) => {}
        }
    }
    eprintln!("lax conformance errors: {}/{} cases pass", cases.len() - failures.len(), cases.len());
    assert!(failures.is_empty(), "{} of {} rejections differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

/// Runs the elements where jax's result is off by more than the tolerance from the exact
/// value (or, for complex64 special values, from jax's own complex128 result): strata must
/// meet that reference instead, and jax must indeed miss it.
pub fn run_inaccurate(cases: &[Case], ctx: &KernelContext<'_>) {
    let mut failures = Vec::new();
    for case in cases {
        let tol = tolerance(case);
        let got = match eval(case, Layout::Contiguous, ctx, None) {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("{}: kernel error {e}", case.at()));
                continue;
            }
        };
        let (want, xla) = (case.tensor("want"), case.tensor("xla"));
        let eps = eps_of(got.dtype());
        let tiny = if eps > 1e-10 { f64::from(f32::MIN_POSITIVE) } else { f64::MIN_POSITIVE };
        let (Flat::Inexact(g, ..), Flat::Inexact(w, ..), Flat::Inexact(x, ..)) =
            (flatten(&got), flatten(&want), flatten(&xla))
        else {
            panic!("{}: inexact values expected", case.at());
        };
        // The reference rounded to the result's precision (an overflow becomes infinite).
        let w0 = if eps > 1e-10 { (f64::from(w[0].0 as f32), f64::from(w[0].1 as f32)) } else { w[0] };
        if !close(g[0], w0, eps, tiny, tol) {
            failures.push(format!(
                "{}: strata {:?}, reference {:?} ({}), jax {:?}",
                case.at(),
                g[0],
                w[0],
                case.field("basis"),
                x[0]
            ));
        }
        if close(x[0], w0, eps, tiny, tol) {
            failures.push(format!("{}: jax's {:?} meets the reference {:?} after all", case.at(), x[0], w[0]));
        }
    }
    eprintln!("lax conformance xla_inaccurate: {}/{} elements pass", cases.len() - failures.len(), cases.len());
    assert!(failures.is_empty(), "{} elements fail:\n{}", failures.len(), failures.join("\n"));
}
