//! Differential tests against numpy.einsum (fixtures from tests/data/generate.py): every
//! case on every dtype numpy computed it for, with operands in four memory layouts
//! (row-major, reversed through negative strides, column-major, strided), through the
//! backend's cached `einsum` and through a prepared expression.
//!
//! Tolerance per element, from the accumulation error bound: each output element is a sum
//! of `N` products of `n` operands, so any summation order lies within `(N + n)·eps`
//! times the sum of the terms' magnitudes (`scale`, the same einsum over absolute values)
//! of the exact value; two such results lie within twice that. Complex products add a
//! factor of at most 2. Integers are exact.

mod common;

use common::{FixtureScalar, LAYOUTS, Laid, operand_data, parse_shape, parse_shapes};
use strata_backend::CpuBackend;
use strata_tensor::{TensorRead, c32, c64};

struct Case {
    name: String,
    spec: String,
    shapes: Vec<Vec<usize>>,
    dtype: String,
    out: Vec<usize>,
    scale: f64,
    terms: f64,
    values: Vec<String>,
}

fn cases() -> Vec<Case> {
    let text = include_str!("data/numpy_cases.txt");
    let mut cases = Vec::new();
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    while let Some(first) = lines.next() {
        let field = |line: Option<&str>, key: &str| -> String {
            let line = line.unwrap_or_else(|| panic!("fixture ends before {key}"));
            let rest = line.strip_prefix(key).unwrap_or_else(|| panic!("expected {key}, found {line}"));
            rest.strip_prefix(' ').unwrap_or(rest).to_string()
        };
        let name = field(Some(first), "case");
        let spec = field(lines.next(), "spec");
        let shapes = parse_shapes(&field(lines.next(), "shapes"));
        let dtype = field(lines.next(), "dtype");
        let out = parse_shape(&field(lines.next(), "out"));
        let scale = field(lines.next(), "scale").parse().unwrap();
        let terms = field(lines.next(), "terms").parse().unwrap();
        let values = field(lines.next(), "values").split_whitespace().map(str::to_string).collect();
        cases.push(Case { name, spec, shapes, dtype, out, scale, terms, values });
    }
    cases
}

fn check<T: FixtureScalar>(backend: &CpuBackend, case: &Case) {
    let want: Vec<T> =
        case.values.chunks(T::PARTS).map(|p| T::parse(&p.iter().map(String::as_str).collect::<Vec<_>>())).collect();
    let n_operands = case.shapes.len() as f64;
    let complex_factor = if T::PARTS == 2 { 2.0 } else { 1.0 };
    let tol = 2.0 * complex_factor * (case.terms + n_operands) * T::EPS * case.scale;
    let logical: Vec<Vec<T>> = case.shapes.iter().enumerate().map(|(k, s)| operand_data::<T>(k as u64, s)).collect();
    let shapes: Vec<&[usize]> = case.shapes.iter().map(Vec::as_slice).collect();
    let prepared = backend.einsum_prepare(&case.spec, &shapes).unwrap();
    for layout in LAYOUTS {
        let laid: Vec<Laid<T>> = logical.iter().zip(&case.shapes).map(|(d, s)| Laid::new(d, s, layout)).collect();
        let operands: Vec<TensorRead<'_>> = laid.iter().map(|l| l.view().into()).collect();
        let runs =
            [("einsum", backend.einsum(&case.spec, &operands)), ("prepared", prepared.execute(backend, &operands))];
        for (how, got) in runs {
            let got = got.unwrap_or_else(|e| panic!("{} [{}] {how} {layout:?}: {e}", case.name, case.dtype));
            assert_eq!(got.shape(), case.out.as_slice(), "{} [{}] {how} {layout:?}", case.name, case.dtype);
            let got = got.as_typed::<T>().unwrap().data().to_vec();
            assert_eq!(got.len(), want.len());
            for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                let err = (g.as_c64() - w.as_c64()).norm();
                assert!(
                    err <= tol,
                    "{} [{}] {how} {layout:?}: element {i} is {:?}, numpy {:?} (|diff| {err:e} > tol {tol:e})",
                    case.name,
                    case.dtype,
                    g,
                    w
                );
            }
        }
    }
}

#[test]
fn every_fixture_case_matches_numpy_on_every_layout() {
    let backend = CpuBackend::with_threads(1).unwrap();
    let cases = cases();
    assert!(cases.len() > 200, "the fixture holds {} cases", cases.len());
    for case in &cases {
        match case.dtype.as_str() {
            "f32" => check::<f32>(&backend, case),
            "f64" => check::<f64>(&backend, case),
            "c32" => check::<c32>(&backend, case),
            "c64" => check::<c64>(&backend, case),
            "i32" => check::<i32>(&backend, case),
            "i64" => check::<i64>(&backend, case),
            other => panic!("unknown dtype {other}"),
        }
    }
    // Every distinct spec and shape set was planned once and then served from the cache.
    let stats = backend.einsum_cache_stats();
    assert!(stats.hits > stats.misses, "{stats:?}");
}

#[test]
fn two_threads_give_the_same_results() {
    let backend = CpuBackend::with_threads(2).unwrap();
    for case in cases().iter().filter(|c| c.dtype == "f64") {
        check::<f64>(&backend, case);
    }
}
