//! Random expressions against a naive reference: 1-4 operands over five labels, with
//! repeated labels (diagonals), labels summed by one operand only, size-1 broadcasting,
//! zero extents, implicit and explicit outputs, every operand in a random memory layout
//! (row-major, reversed, column-major, strided), on f64, c64 and i64. The reference loops
//! over every assignment of the labels and accumulates in f64 (exact for the integers).

mod common;

use common::{Arrangement, FixtureScalar, LAYOUTS, Laid, operand_data};
use proptest::prelude::*;
use strata_backend::CpuBackend;
use strata_einsum::{EinsumOptions, PathStrategy};
use strata_tensor::{TensorRead, c64};

const LETTERS: [char; 5] = ['a', 'b', 'c', 'd', 'e'];

#[derive(Clone, Debug)]
struct Expr {
    /// Label indices of each operand's axes.
    operands: Vec<Vec<usize>>,
    /// Each operand axis broadcasts (extent 1 instead of the label's).
    broadcast: Vec<Vec<bool>>,
    /// `None`: implicit output.
    output: Option<Vec<usize>>,
    extents: [usize; 5],
    layouts: Vec<Arrangement>,
    greedy: bool,
}

impl Expr {
    fn spec(&self) -> String {
        let term = |t: &[usize]| t.iter().map(|&l| LETTERS[l]).collect::<String>();
        let inputs: Vec<String> = self.operands.iter().map(|t| term(t)).collect();
        match &self.output {
            Some(o) => format!("{}->{}", inputs.join(","), term(o)),
            None => inputs.join(","),
        }
    }

    /// numpy's implicit rule, written out independently: letters used exactly once.
    fn output_labels(&self) -> Vec<usize> {
        self.output.clone().unwrap_or_else(|| {
            (0..5).filter(|&l| self.operands.iter().flatten().filter(|&&m| m == l).count() == 1).collect()
        })
    }

    fn shape(&self, k: usize) -> Vec<usize> {
        self.operands[k].iter().zip(&self.broadcast[k]).map(|(&l, &b)| if b { 1 } else { self.extents[l] }).collect()
    }
}

fn expr() -> impl Strategy<Value = Expr> {
    let operand = proptest::collection::vec(0usize..5, 0..4);
    (
        proptest::collection::vec(operand, 1..=4),
        proptest::array::uniform5(prop_oneof![6 => 1usize..5, 1 => Just(0usize)]),
        proptest::collection::vec(any::<bool>(), 16),
        proptest::option::weighted(0.7, proptest::collection::vec(0usize..5, 0..4)),
        proptest::collection::vec(0usize..4, 4),
        any::<bool>(),
    )
        .prop_map(|(operands, extents, coins, output, layouts, greedy)| {
            // Broadcast an axis (extent 1) now and then, never inside a diagonal.
            let mut coin = coins.into_iter().cycle();
            let broadcast = operands
                .iter()
                .map(|t| {
                    t.iter()
                        .map(|&l| {
                            let flip = coin.next().unwrap_or(false) && coin.next().unwrap_or(false);
                            flip && t.iter().filter(|&&m| m == l).count() == 1
                        })
                        .collect()
                })
                .collect();
            // A valid explicit output: distinct labels that some operand has.
            let used: Vec<usize> = (0..5).filter(|l| operands.iter().flatten().any(|m| m == l)).collect();
            let output = output.map(|o| {
                let mut seen = Vec::new();
                for l in o {
                    if used.contains(&l) && !seen.contains(&l) {
                        seen.push(l);
                    }
                }
                seen
            });
            let layouts = layouts.into_iter().map(|i| LAYOUTS[i]).collect();
            Expr { operands, broadcast, output, extents, layouts, greedy }
        })
}

/// The reference result and the per-case scale (the same sum over magnitudes).
fn reference<T: FixtureScalar>(e: &Expr, data: &[Vec<T>]) -> (Vec<c64>, Vec<usize>, f64) {
    let out = e.output_labels();
    // A label's extent is the largest among its axes (1 broadcasts).
    let mut ext = [1usize; 5];
    let mut seen = [false; 5];
    for (k, t) in e.operands.iter().enumerate() {
        for (&l, &d) in t.iter().zip(&e.shape(k)) {
            if !seen[l] || ext[l] == 1 {
                ext[l] = d;
            }
            seen[l] = true;
        }
    }
    let out_shape: Vec<usize> = out.iter().map(|&l| ext[l]).collect();
    let out_len: usize = out_shape.iter().product();
    let mut sum = vec![c64::new(0.0, 0.0); out_len];
    let mut scale = vec![0.0f64; out_len];
    let used: Vec<usize> = (0..5).filter(|&l| seen[l]).collect();
    let total: usize = used.iter().map(|&l| ext[l]).product();
    let mut value = [0usize; 5];
    for flat in 0..total {
        let mut rest = flat;
        for &l in used.iter().rev() {
            value[l] = rest % ext[l];
            rest /= ext[l];
        }
        let mut term = c64::new(1.0, 0.0);
        let mut magnitude = 1.0;
        for (k, t) in e.operands.iter().enumerate() {
            let shape = e.shape(k);
            let mut at = 0usize;
            for (a, &l) in t.iter().enumerate() {
                let i = if shape[a] == 1 { 0 } else { value[l] };
                at = at * shape[a] + i;
            }
            let x = data[k][at].as_c64();
            term *= x;
            magnitude *= x.norm();
        }
        let o = out.iter().fold(0usize, |acc, &l| acc * ext[l] + value[l]);
        sum[o] += term;
        scale[o] += magnitude;
    }
    let scale = scale.iter().copied().fold(0.0, f64::max);
    (sum, out_shape, scale)
}

fn check<T: FixtureScalar>(backend: &CpuBackend, e: &Expr) -> Result<(), TestCaseError> {
    let shapes: Vec<Vec<usize>> = (0..e.operands.len()).map(|k| e.shape(k)).collect();
    let data: Vec<Vec<T>> = shapes.iter().enumerate().map(|(k, s)| operand_data::<T>(k as u64, s)).collect();
    let laid: Vec<Laid<T>> = data.iter().zip(&shapes).zip(&e.layouts).map(|((d, s), &l)| Laid::new(d, s, l)).collect();
    let operands: Vec<TensorRead<'_>> = laid.iter().map(|l| l.view().into()).collect();
    let options = if e.greedy { EinsumOptions::new().strategy(PathStrategy::Greedy) } else { EinsumOptions::new() };
    let got =
        backend.einsum_with(&e.spec(), &operands, &options).map_err(|err| TestCaseError::fail(err.to_string()))?;
    let (want, shape, scale) = reference(e, &data);
    prop_assert_eq!(got.shape(), shape.as_slice());
    let got = got.as_typed::<T>().unwrap().data().to_vec();
    let terms: usize = (0..5)
        .filter(|l| !e.output_labels().contains(l) && e.operands.iter().flatten().any(|m| m == l))
        .map(|l| e.extents[l].max(1))
        .product();
    let tol = 4.0 * (terms + e.operands.len()) as f64 * T::EPS * scale;
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let err = (g.as_c64() - *w).norm();
        prop_assert!(err <= tol, "{}: element {} is {:?}, reference {:?} (tol {:e})", e.spec(), i, g, w, tol);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_expressions_match_the_naive_reference(e in expr()) {
        static BACKEND: std::sync::OnceLock<CpuBackend> = std::sync::OnceLock::new();
        let backend = BACKEND.get_or_init(|| CpuBackend::with_threads(1).unwrap());
        check::<f64>(backend, &e)?;
        check::<c64>(backend, &e)?;
        check::<i64>(backend, &e)?;
    }
}
