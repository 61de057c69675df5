//! Reductions on adversarial inputs (one value repeated, alternating signs, huge and tiny
//! values mixed, wide exponent spreads) at sizes that take the SIMD and parallel paths,
//! against wider references: f64 for f32, double-double for f64, exact integers.
//!
//! Float sums must stay within `γ(rounding_depth(n)) · Σ|x|` (γ(d) = d·u / (1 - d·u),
//! u = eps / 2: the bound of a tree whose paths have at most d roundings; it grows like
//! log n), products within their n - 1 relative roundings (a product rounds at every
//! multiplication, whatever the tree), max/min and integer folds must be exact.
//! Every result must be bit-identical for budgets 1, 2, 3 and 7 and for every layout of
//! the same logical values (contiguous, reversed, strided, broadcast, transposed).

mod common;

use common::ctx;
use proptest::prelude::*;
use strata_kernels::reduction::{self, REDUCE_BLOCK, rounding_depth};
use strata_tensor::config::ReduceOp;
use strata_tensor::{Scalar, Tensor, TypedTensor, TypedView, c32, c64};

const BUDGETS: [usize; 4] = [1, 2, 3, 7];

/// Lengths around the tree's edges (lanes, leaves, blocks) and past the parallel split.
const LENGTHS: [usize; 12] = [1, 7, 32, 33, 511, 513, 4095, 4097, 3 * REDUCE_BLOCK + 1, 65_537, 158_535, 300_000];

// ---------------------------------------------------------------- references

/// `a + b` as the rounded sum and its exact error.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// A double-double number `hi + lo`.
#[derive(Clone, Copy, Debug, Default)]
struct Dd {
    hi: f64,
    lo: f64,
}

impl Dd {
    fn new(x: f64) -> Dd {
        Dd { hi: x, lo: 0.0 }
    }
    fn add(self, x: f64) -> Dd {
        let (s, e) = two_sum(self.hi, x);
        let (hi, lo) = two_sum(s, e + self.lo);
        Dd { hi, lo }
    }
    fn mul(self, x: f64) -> Dd {
        let p = self.hi * x;
        let e = self.hi.mul_add(x, -p) + self.lo * x;
        let (hi, lo) = two_sum(p, e);
        Dd { hi, lo }
    }
    fn value(self) -> f64 {
        self.hi + self.lo
    }
}

/// The sum of `xs` to about 2^-100 relative to Σ|x|.
fn exact_sum(xs: impl Iterator<Item = f64>) -> f64 {
    xs.fold(Dd::default(), Dd::add).value()
}

/// `γ_d = d·u / (1 - d·u)`: the relative bound after `d` roundings of unit roundoff `u`.
fn gamma(d: usize, u: f64) -> f64 {
    d as f64 * u / (1.0 - d as f64 * u)
}

/// The real float types under test.
trait Float: Scalar + PartialOrd {
    const U: f64;
    fn of(x: f64) -> Self;
    fn wide(self) -> f64;
    fn is_nan(self) -> bool;
}

impl Float for f32 {
    const U: f64 = f32::EPSILON as f64 / 2.0;
    fn of(x: f64) -> Self {
        x as f32
    }
    fn wide(self) -> f64 {
        self as f64
    }
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
}

impl Float for f64 {
    const U: f64 = f64::EPSILON / 2.0;
    fn of(x: f64) -> Self {
        x
    }
    fn wide(self) -> f64 {
        self
    }
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
}

// ---------------------------------------------------------------- inputs

fn mix(i: u64) -> u64 {
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(0xD1B5_4A32_D192_ED03);
    x ^= x >> 31;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^ (x >> 29)
}

/// Uniform in [-1, 1).
fn unit(i: u64) -> f64 {
    (mix(i) >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// The adversarial families, as f64 values (rounded to the type under test).
#[derive(Clone, Copy, Debug)]
enum Family {
    /// One value, n times (the issue's broadcast case).
    Repeated,
    /// Alternating signs of nearly equal magnitudes, plus a small drift.
    Alternating,
    /// Huge values that cancel in pairs among values near 1 and tiny ones.
    HugeTiny,
    /// Powers of two over a wide exponent range with random signs.
    Spread,
    /// Uniform in [0, 1).
    Positive,
}

const FAMILIES: [Family; 5] =
    [Family::Repeated, Family::Alternating, Family::HugeTiny, Family::Spread, Family::Positive];

fn family_value<T: Float>(family: Family, seed: u64, i: usize) -> T {
    let i = i as u64;
    let huge = if T::U > 1e-10 { 1e15 } else { 1e100 };
    let spread = if T::U > 1e-10 { 40.0 } else { 300.0 };
    T::of(match family {
        Family::Repeated => 0.1 + 0.8 * unit(seed).abs(),
        Family::Alternating => (if i.is_multiple_of(2) { 1.0 } else { -1.0 }) * (3.0 + 1e-3 * unit(seed ^ i)),
        Family::HugeTiny => match i % 4 {
            0 => huge * (1.0 + unit(seed ^ (i / 4))),
            2 => -huge * (1.0 + unit(seed ^ (i / 4))),
            1 => unit(seed ^ i),
            _ => 1e-20 * unit(seed ^ i),
        },
        Family::Spread => (unit(seed ^ i) * spread).round().exp2() * unit(seed ^ i ^ 77).signum(),
        Family::Positive => 0.5 + 0.5 * unit(seed ^ i),
    })
}

/// Values near 1 whose product stays far from overflow for the lengths used.
fn product_value<T: Float>(family: Family, seed: u64, i: usize) -> T {
    let i = i as u64;
    let step = if T::U > 1e-10 { 1.0 / 64.0 } else { 1.0 / 16.0 };
    T::of(match family {
        Family::Repeated => 1.0 + (1.0 / 16384.0) * unit(seed).abs(),
        // Signs alternate; magnitudes stay near 1 so that no order of multiplication
        // overflows (any reordering can overflow a product whose partial products are
        // huge, and that is not what is tested here).
        Family::Alternating => (if i.is_multiple_of(2) { 1.0 } else { -1.0 }) * (1.0 + step * unit(seed ^ i)),
        _ => 1.0 + step * unit(seed ^ i),
    })
}

/// The logical values `xs` laid out in several ways, each a view over its own buffer.
struct Layouts<T> {
    contiguous: Vec<T>,
    reversed: Vec<T>,
    strided: Vec<T>,
    broadcast: Option<Vec<T>>,
}

impl<T: Scalar> Layouts<T> {
    fn new(xs: &[T]) -> Self {
        let reversed: Vec<T> = xs.iter().rev().copied().collect();
        let mut strided = vec![T::zero(); 3 * xs.len() + 2];
        for (i, &x) in xs.iter().enumerate() {
            strided[2 + 3 * i] = x;
        }
        // Only where every value has the first one's bits (+0 and -0 compare equal, so
        // zeros are told apart by their printed form).
        let first = xs.first().map(|x| format!("{x:?}"));
        let same = |x: &T| *x == xs[0] && (xs[0] != T::zero() || Some(format!("{x:?}")) == first);
        let repeated = xs.iter().all(same);
        let broadcast = (!xs.is_empty() && repeated).then(|| vec![xs[0]]);
        Layouts { contiguous: xs.to_vec(), reversed, strided, broadcast }
    }

    fn views(&self) -> Vec<(&'static str, TypedView<'_, T>)> {
        let n = self.contiguous.len();
        let mut v = vec![
            ("contiguous", TypedView::new(&self.contiguous, &[n], &[1], 0).unwrap()),
            ("reversed", TypedView::new(&self.reversed, &[n], &[-1], n.saturating_sub(1)).unwrap()),
            ("strided", TypedView::new(&self.strided, &[n], &[3], 2).unwrap()),
        ];
        if let Some(b) = &self.broadcast {
            v.push(("broadcast", TypedView::new(b, &[n], &[0], 0).unwrap()));
        }
        v
    }
}

/// Reduces every layout at every budget; asserts all results have the same bits and
/// gives the one result.
fn reduce_everywhere<T: Scalar, R: Scalar>(op: ReduceOp, xs: &[T]) -> R {
    let layouts = Layouts::new(xs);
    let mut first: Option<Tensor> = None;
    for (name, view) in layouts.views() {
        for budget in BUDGETS {
            let got = reduction::reduce(&ctx(budget), op, view.clone().into(), &[0]).unwrap();
            match &first {
                None => first = Some(got),
                Some(want) => assert!(
                    same_bits(&got, want),
                    "{op:?} of {} {:?}: {name} at budget {budget} differs",
                    xs.len(),
                    T::DTYPE
                ),
            }
        }
    }
    // INVARIANT: at least one layout and budget ran.
    first.unwrap().as_typed::<R>().unwrap().data()[0]
}

/// Equal element by element, telling -0 from +0 (`Debug` prints the shortest form that
/// reads back to the same bits; every NaN prints as `NaN`).
fn same_bits(a: &Tensor, b: &Tensor) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

// ---------------------------------------------------------------- real floats

fn check_real_sums<T: Float>(family: Family, seed: u64, n: usize) {
    let xs: Vec<T> = (0..n).map(|i| family_value::<T>(family, seed, i)).collect();
    let wide: Vec<f64> = xs.iter().map(|x| x.wide()).collect();
    let abs: f64 = wide.iter().map(|x| x.abs()).sum();
    let depth = rounding_depth(n);
    let slack = 4.0 * f64::EPSILON * f64::EPSILON * abs + f64::MIN_POSITIVE;

    let got: T = reduce_everywhere(ReduceOp::Sum, &xs);
    let want = exact_sum(wide.iter().copied());
    let bound = gamma(depth, T::U) * abs + f64::EPSILON * want.abs() + slack;
    let err = (got.wide() - want).abs();
    assert!(
        err <= bound,
        "sum {family:?} n={n} {:?}: {} vs {want}, error {err:e} > bound {bound:e}",
        T::DTYPE,
        got.wide()
    );

    // Σ x²: each square adds one rounding; the reference squares exactly (two-product).
    let got: T = reduce_everywhere(ReduceOp::SumSquares, &xs);
    let want = wide
        .iter()
        .fold(Dd::default(), |acc, &x| {
            let p = x * x;
            acc.add(p).add(x.mul_add(x, -p))
        })
        .value();
    let bound = gamma(depth + 1, T::U) * want + f64::EPSILON * want + slack;
    let err = (got.wide() - want).abs();
    assert!(err <= bound, "sumsq {family:?} n={n} {:?}: error {err:e} > bound {bound:e}", T::DTYPE);
}

fn check_real_product<T: Float>(family: Family, seed: u64, n: usize) {
    let xs: Vec<T> = (0..n).map(|i| product_value::<T>(family, seed, i)).collect();
    let got: T = reduce_everywhere(ReduceOp::Prod, &xs);
    let want = xs.iter().fold(Dd::new(1.0), |acc, x| acc.mul(x.wide())).value();
    // A product rounds once per multiplication, whatever the tree: n - 1 roundings.
    let bound = gamma(n.saturating_sub(1), T::U) * want.abs() * 1.000_001 + f64::EPSILON * want.abs();
    let err = (got.wide() - want).abs();
    assert!(err <= bound, "prod {family:?} n={n} {:?}: {} vs {want}, error {err:e} > {bound:e}", T::DTYPE, got.wide());
}

#[test]
fn float_sums_and_products_stay_within_the_log_bound_on_every_layout_and_budget() {
    for n in LENGTHS {
        for (k, family) in FAMILIES.into_iter().enumerate() {
            let seed = 1000 * n as u64 + k as u64;
            check_real_sums::<f32>(family, seed, n);
            check_real_sums::<f64>(family, seed, n);
            check_real_product::<f32>(family, seed, n);
            check_real_product::<f64>(family, seed, n);
        }
    }
}

#[test]
fn the_issues_broadcast_sum_is_accurate() {
    // 158 535 copies of one f32 through a stride-0 view: a running chain of 512 additions
    // per lane was 50+ eps off; the tree is within a few.
    let n = 158_535;
    for value in [0.1f32, 1.0 / 3.0, 0.7, 1.1, 123.456] {
        let one = [value];
        let view = TypedView::new(&one, &[n], &[0], 0).unwrap();
        for budget in BUDGETS {
            let s = reduction::reduce(&ctx(budget), ReduceOp::Sum, view.clone().into(), &[0]).unwrap();
            let got = s.as_typed::<f32>().unwrap().data()[0] as f64;
            let want = value as f64 * n as f64;
            let eps_off = (got - want).abs() / (want * f32::EPSILON as f64);
            assert!(eps_off <= 4.0, "{value}: {got} vs {want}: {eps_off:.1} eps off (budget {budget})");
        }
    }
}

// ---------------------------------------------------------------- complex

fn check_complex<C: Scalar, T: Float>(
    n: usize,
    seed: u64,
    make: impl Fn(f64, f64) -> C,
    parts: impl Fn(C) -> (f64, f64),
) {
    for family in FAMILIES {
        let xs: Vec<C> = (0..n)
            .map(|i| make(family_value::<T>(family, seed, i).wide(), family_value::<T>(family, seed ^ 0x55, i).wide()))
            .collect();
        let depth = rounding_depth(n);
        let wide: Vec<(f64, f64)> = xs.iter().map(|&z| parts(z)).collect();
        let got: C = reduce_everywhere(ReduceOp::Sum, &xs);
        let (gr, gi) = parts(got);
        for (g, part) in [(gr, 0), (gi, 1)] {
            let vals = || wide.iter().map(|p| if part == 0 { p.0 } else { p.1 });
            let want = exact_sum(vals());
            let abs: f64 = vals().map(f64::abs).sum();
            let bound = gamma(depth, T::U) * abs + f64::EPSILON * (want.abs() + abs * f64::EPSILON) + f64::MIN_POSITIVE;
            assert!((g - want).abs() <= bound, "complex sum {family:?} n={n} part {part}: {g} vs {want}");
        }
        // |z|² = re² + im²: two more roundings per term.
        let got: T = reduce_everywhere(ReduceOp::SumSquares, &xs);
        let want = wide
            .iter()
            .fold(Dd::default(), |acc, &(r, i)| {
                let (pr, pi) = (r * r, i * i);
                acc.add(pr).add(r.mul_add(r, -pr)).add(pi).add(i.mul_add(i, -pi))
            })
            .value();
        let bound = gamma(depth + 2, T::U) * want + f64::EPSILON * want + f64::MIN_POSITIVE;
        assert!((got.wide() - want).abs() <= bound, "complex sumsq {family:?} n={n}: {} vs {want}", got.wide());
    }
    // Products of unit-modulus-ish factors: normwise, each complex product rounds by at
    // most √2·γ₂ of |a||b|.
    let xs: Vec<C> = (0..n)
        .map(|i| {
            let t = 0.7 * unit(seed ^ i as u64);
            let r = product_value::<T>(Family::Positive, seed, i).wide();
            make(r * t.cos(), r * t.sin())
        })
        .collect();
    let got: C = reduce_everywhere(ReduceOp::Prod, &xs);
    let (mut re, mut im) = (Dd::new(1.0), Dd::new(0.0));
    let mut modulus = Dd::new(1.0);
    for &z in &xs {
        let (a, b) = parts(z);
        // (re + i im)(a + i b), each part in double-double.
        let new_re = re.mul(a).add(-im.mul(b).hi).add(-im.mul(b).lo);
        let new_im = re.mul(b).add(im.mul(a).hi).add(im.mul(a).lo);
        (re, im) = (new_re, new_im);
        modulus = modulus.mul(a.hypot(b));
    }
    let per_step = std::f64::consts::SQRT_2 * gamma(2, T::U);
    let bound = ((1.0 + per_step).powi(n.saturating_sub(1) as i32) - 1.0) * modulus.value() * 1.000_001
        + 4.0 * f64::EPSILON * modulus.value();
    let (gr, gi) = parts(got);
    let err = (gr - re.value()).hypot(gi - im.value());
    assert!(err <= bound, "complex prod n={n}: error {err:e} > {bound:e}");
}

#[test]
fn complex_sums_and_products_stay_within_the_log_bound() {
    for n in LENGTHS {
        let seed = 77 * n as u64;
        check_complex::<c32, f32>(n, seed, |r, i| c32::new(r as f32, i as f32), |z| (z.re as f64, z.im as f64));
        check_complex::<c64, f64>(n, seed, c64::new, |z| (z.re, z.im));
    }
}

// ---------------------------------------------------------------- exact folds

/// lax's maximum written out: NaN wins, then the larger, and +0 above -0.
fn lax_max<T: Float>(a: T, b: T) -> T {
    if a.is_nan() {
        return a;
    }
    if b.is_nan() {
        return b;
    }
    if a == b {
        return if a.wide().is_sign_negative() { b } else { a };
    }
    if a > b { a } else { b }
}

fn lax_min<T: Float>(a: T, b: T) -> T {
    if a.is_nan() {
        return a;
    }
    if b.is_nan() {
        return b;
    }
    if a == b {
        return if a.wide().is_sign_negative() { a } else { b };
    }
    if a < b { a } else { b }
}

fn check_float_extremes<T: Float>(n: usize, seed: u64) {
    let mut xs: Vec<T> = (0..n).map(|i| family_value::<T>(Family::Spread, seed, i)).collect();
    // Zeros of both signs where the extremes are zero.
    let zeros: Vec<T> =
        (0..n).map(|i| T::of(if mix(seed ^ i as u64).is_multiple_of(2) { 0.0 } else { -0.0 })).collect();
    for values in [&xs, &zeros] {
        let max: T = reduce_everywhere(ReduceOp::Max, values);
        let min: T = reduce_everywhere(ReduceOp::Min, values);
        let want_max = values.iter().copied().fold(T::of(f64::NEG_INFINITY), lax_max);
        let want_min = values.iter().copied().fold(T::of(f64::INFINITY), lax_min);
        assert_eq!(max.wide().to_bits(), want_max.wide().to_bits(), "max n={n} {:?}", T::DTYPE);
        assert_eq!(min.wide().to_bits(), want_min.wide().to_bits(), "min n={n} {:?}", T::DTYPE);
    }
    // One NaN anywhere wins every fold but the sum of squares too.
    let at = mix(seed) as usize % n;
    xs[at] = T::of(f64::NAN);
    for op in ReduceOp::ALL {
        let r: T = reduce_everywhere(op, &xs);
        assert!(r.is_nan(), "{op:?} n={n} with a NaN at {at}");
    }
}

#[test]
fn float_max_and_min_are_exact_and_nan_propagates() {
    for n in LENGTHS {
        check_float_extremes::<f32>(n, 5 * n as u64);
        check_float_extremes::<f64>(n, 9 * n as u64);
    }
}

fn check_integers<T>(n: usize, seed: u64, of: impl Fn(u64) -> T, wrap: impl Fn(i128) -> T)
where
    T: Scalar + Ord + std::ops::Mul<Output = T>,
    i128: From<T>,
{
    // Values over the whole range: sums and products wrap.
    let xs: Vec<T> = (0..n).map(|i| of(mix(seed ^ i as u64))).collect();
    let sum: T = reduce_everywhere(ReduceOp::Sum, &xs);
    assert_eq!(sum, wrap(xs.iter().map(|&x| i128::from(x)).fold(0i128, i128::wrapping_add)));
    let prod: T = reduce_everywhere(ReduceOp::Prod, &xs);
    // Wrapping multiplication is exact modulo 2^bits: any order gives the same result.
    let want = xs.iter().fold(1i128, |acc, &x| i128::from(wrap(acc.wrapping_mul(i128::from(x)))));
    assert_eq!(prod, wrap(want));
    let max: T = reduce_everywhere(ReduceOp::Max, &xs);
    let min: T = reduce_everywhere(ReduceOp::Min, &xs);
    assert_eq!((max, min), (*xs.iter().max().unwrap(), *xs.iter().min().unwrap()));
}

#[test]
fn integer_and_bool_folds_are_exact() {
    for n in LENGTHS {
        let seed = 31 * n as u64;
        check_integers::<i32>(n, seed, |r| r as i32, |w| w as i32);
        check_integers::<i64>(n, seed, |r| r as i64, |w| w as i64);
        for ones in [0, 1, n / 2, n] {
            let mut xs = vec![false; n];
            for i in 0..ones {
                xs[(mix(seed ^ i as u64) as usize) % n] = true;
            }
            let any: bool = reduce_everywhere(ReduceOp::Max, &xs);
            let all: bool = reduce_everywhere(ReduceOp::Min, &xs);
            assert_eq!((any, all), (xs.iter().any(|&b| b), xs.iter().all(|&b| b)), "n={n} ones={ones}");
        }
    }
}

// ---------------------------------------------------------------- several axes

/// `[rows, cols]` values reduced over each axis and both, through a row-major matrix,
/// its transpose's transpose (column-major storage) and a reversed view: every form gives
/// the same bits, at every budget, and sums stay within the bound per output.
fn check_matrix<T: Float>(rows: usize, cols: usize, family: Family) {
    let value = |r: usize, c: usize| family_value::<T>(family, 17 + c as u64, r);
    let row_major = TypedTensor::from_fn(&[rows, cols], |i| value(i[0], i[1])).unwrap();
    let col_major = TypedTensor::from_fn(&[cols, rows], |i| value(i[1], i[0])).unwrap();
    let transposed = col_major.view().permute(&[1, 0]).unwrap();
    let reversed_store = TypedTensor::from_fn(&[rows, cols], |i| value(rows - 1 - i[0], cols - 1 - i[1])).unwrap();
    let reversed = reversed_store.view().reverse_axis(0).unwrap().reverse_axis(1).unwrap();
    for axes in [vec![0], vec![1], vec![0, 1], vec![1, 0]] {
        for op in ReduceOp::ALL {
            let want = reduction::reduce(&ctx(1), op, row_major.view().into(), &axes).unwrap();
            // Every budget for the sum; two for the other folds (their trees are the same).
            let budgets: &[usize] = if op == ReduceOp::Sum { &BUDGETS } else { &[2, 7] };
            for view in [row_major.view(), transposed.clone(), reversed.clone()] {
                for &budget in budgets {
                    let got = reduction::reduce(&ctx(budget), op, view.clone().into(), &axes).unwrap();
                    assert!(same_bits(&got, &want), "{op:?} [{rows},{cols}] axes {axes:?} budget {budget}");
                }
            }
            if op == ReduceOp::Sum {
                let outs = want.as_typed::<T>().unwrap().data().to_vec();
                let reduced_len = axes.iter().map(|&a| [rows, cols][a]).product::<usize>();
                let depth = rounding_depth(reduced_len);
                for (o, got) in outs.iter().enumerate() {
                    let terms: Vec<f64> = match axes.as_slice() {
                        [0] => (0..rows).map(|r| value(r, o).wide()).collect(),
                        [1] => (0..cols).map(|c| value(o, c).wide()).collect(),
                        _ => (0..rows * cols).map(|k| value(k / cols, k % cols).wide()).collect(),
                    };
                    let want = exact_sum(terms.iter().copied());
                    let abs: f64 = terms.iter().map(|x| x.abs()).sum();
                    let bound = gamma(depth, T::U) * abs + f64::EPSILON * want.abs() + f64::MIN_POSITIVE;
                    assert!((got.wide() - want).abs() <= bound, "sum [{rows},{cols}] axes {axes:?} output {o}");
                }
            }
        }
    }
}

#[test]
fn matrix_reductions_over_any_axes_are_accurate_and_layout_independent() {
    for (rows, cols) in [(1, 1), (3, 5000), (5000, 3), (40, 4100), (257, 257), (9000, 17)] {
        check_matrix::<f32>(rows, cols, Family::HugeTiny);
        check_matrix::<f32>(rows, cols, Family::Repeated);
        check_matrix::<f64>(rows, cols, Family::Spread);
    }
}

// ---------------------------------------------------------------- random cases

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    #[test]
    fn random_lengths_and_families_stay_within_the_bound(n in 1usize..120_000, family in 0usize..5, seed in any::<u64>()) {
        check_real_sums::<f32>(FAMILIES[family], seed, n);
        check_real_sums::<f64>(FAMILIES[family], seed, n);
        check_real_product::<f64>(FAMILIES[family], seed, n);
    }
}
