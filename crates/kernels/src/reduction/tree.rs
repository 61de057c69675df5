//! The fixed reduction tree of one block, and the folds it runs.
//!
//! **The tree.** A block holds at most [`REDUCE_BLOCK`] consecutive reduced elements of
//! one output, `x[0..n]`, in the logical (row-major) order of the reduced axes, whatever
//! their strides. Element `j` belongs to lane `j % LANES` of row `j / LANES`; rows are
//! grouped into leaves of `LEAF_ROWS` rows. Inside a leaf each lane folds its elements
//! sequentially, starting from the identity (at most `LEAF_ROWS` steps). The leaves'
//! lane vectors are combined pairwise, neighbours first (leaf 0 with 1, 2 with 3, then
//! those pairs, ...; an unpaired last one moves up a level as it is). The block's lanes
//! are then combined in halves (lane `i` with lane `i + w` for w = 16, 8, 4, 2, 1; lanes
//! that hold no element are skipped). Blocks are combined by the caller, pairwise in
//! block order.
//!
//! So the longest chain of roundings any element goes through is
//! `LEAF_ROWS + log2(REDUCE_BLOCK / LEAF) + log2(LANES) + ceil(log2(blocks))` operations
//! ([`rounding_depth`]): the error of a float sum grows like `log n`, not `n`. The tree
//! depends only on `n`, never on the thread count, the strides or the SIMD level.
//!
//! **Skipping is exact.** A lane that holds no element holds the identity, and combining
//! with it is skipped. For sums and products that changes no bit: every lane starts as
//! `identity ⊕ x`, so a sum lane is never `-0` (with round-to-nearest, `a + b = -0` needs
//! `a = b = -0`) and `v + 0 = v`, `v · 1 = v` exactly; max and min are associative and
//! already include the identity through each lane's start.

use std::marker::PhantomData;

use strata_tensor::Scalar;

use crate::elementwise::ElementwiseScalar;
use crate::simd::{self, SimdTask};

use super::REDUCE_BLOCK;

/// Lanes of one row: 32 accumulators (four AVX-512 registers of f64) keep enough
/// independent additions in flight to hide the adder's latency.
pub(crate) const LANES: usize = 32;
/// Rows one lane folds sequentially before its leaf is combined with others.
pub(crate) const LEAF_ROWS: usize = 16;
/// Elements of one leaf.
const LEAF: usize = LANES * LEAF_ROWS;
/// Leaves of a full block.
const LEAVES: usize = REDUCE_BLOCK / LEAF;

/// One reduction: how an input element enters (`map`) and how two partial results
/// combine, with the identity of `combine`. Every method is `#[inline(always)]`, so
/// that a fold compiled inside a [`crate::simd`] task is vectorised at that task's level.
pub(crate) trait Fold {
    /// The input element type.
    type In: Scalar;
    /// The result type.
    type Acc: Scalar;
    /// The identity of [`combine`](Self::combine): the result over no elements.
    fn identity() -> Self::Acc;
    /// An element as a partial result.
    fn map(x: Self::In) -> Self::Acc;
    /// Two partial results combined.
    fn combine(a: Self::Acc, b: Self::Acc) -> Self::Acc;
}

macro_rules! folds {
    ($($(#[$doc:meta])* $name:ident => $acc:ty, $identity:expr, $map:expr, $combine:expr;)*) => {$(
        $(#[$doc])*
        pub(crate) struct $name<T>(PhantomData<T>);

        impl<T: ElementwiseScalar> Fold for $name<T> {
            type In = T;
            type Acc = $acc;
            #[inline(always)]
            fn identity() -> $acc {
                $identity
            }
            #[inline(always)]
            fn map(x: T) -> $acc {
                $map(x)
            }
            #[inline(always)]
            fn combine(a: $acc, b: $acc) -> $acc {
                $combine(a, b)
            }
        }
    )*};
}

/// An element as it is (a function, not a closure: see [`block_lanes`]).
#[inline(always)]
fn same<T>(x: T) -> T {
    x
}

folds! {
    /// `Σ x` (wrapping for integers).
    SumOf => T, T::zero(), same, T::add;
    /// `Σ |x|²`, real-valued.
    SumSquaresOf => T::RealPart, <T::RealPart as Scalar>::zero(), T::abs_sq, <T::RealPart as ElementwiseScalar>::add;
    /// `Π x` (wrapping for integers).
    ProdOf => T, T::one(), same, T::mul;
    /// NaN-propagating maximum.
    MaxOf => T, T::max_identity(), same, T::max;
    /// NaN-propagating minimum.
    MinOf => T, T::min_identity(), same, T::min;
}

/// Lane vectors combined lane by lane.
#[inline(always)]
fn combine_lanes<F: Fold>(mut a: [F::Acc; LANES], b: &[F::Acc; LANES]) -> [F::Acc; LANES] {
    for (x, &y) in a.iter_mut().zip(b) {
        *x = F::combine(*x, y);
    }
    a
}

/// One leaf (at most [`LEAF`] elements): each lane folds its elements in order.
#[inline(always)]
fn fold_leaf<F: Fold>(xs: &[F::In]) -> [F::Acc; LANES] {
    let mut acc = [F::identity(); LANES];
    let (rows, rest) = xs.as_chunks::<LANES>();
    for row in rows {
        for (a, &x) in acc.iter_mut().zip(row) {
            *a = F::combine(*a, F::map(x));
        }
    }
    for (a, &x) in acc.iter_mut().zip(rest) {
        *a = F::combine(*a, F::map(x));
    }
    acc
}

/// Two neighbouring full leaves, `k` and `k + 1`, combined.
#[inline(always)]
fn leaf_pair<F: Fold>(xs: &[F::In], k: usize) -> [F::Acc; LANES] {
    let low = fold_leaf::<F>(&xs[k * LEAF..(k + 1) * LEAF]);
    combine_lanes::<F>(low, &fold_leaf::<F>(&xs[(k + 1) * LEAF..(k + 2) * LEAF]))
}

/// The first `used` lanes combined in halves (lane `i` with `i + w`, w = 16 … 1).
#[inline(always)]
fn combine_halves<F: Fold>(mut v: [F::Acc; LANES], used: usize) -> F::Acc {
    let mut active = used.min(LANES);
    let mut w = LANES;
    while w > 1 {
        w /= 2;
        for i in 0..w {
            if i + w < active {
                v[i] = F::combine(v[i], v[i + w]);
            }
        }
        active = active.min(w);
    }
    v[0]
}

/// The lanes, all of them used (more than [`LANES`] elements), combined in halves.
#[inline(always)]
fn combine_all_halves<F: Fold>(mut v: [F::Acc; LANES]) -> F::Acc {
    let mut w = LANES;
    while w > 1 {
        w /= 2;
        for i in 0..w {
            v[i] = F::combine(v[i], v[i + w]);
        }
    }
    v[0]
}

/// Blocks of at least this many elements fold their lanes at the widest SIMD level;
/// shorter ones at the baseline, where the dispatch would cost more than it saves (both
/// give the same bits).
const SIMD_MIN: usize = 4 * LANES;

/// The fold of one block of at most [`REDUCE_BLOCK`] elements, by the module's tree.
#[inline(always)]
pub(crate) fn fold_block<F: Fold>(xs: &[F::In]) -> F::Acc {
    let n = xs.len();
    if n <= LANES {
        // One partial row: each used lane holds `identity ⊕ x`.
        let mut v = [F::identity(); LANES];
        for (a, &x) in v.iter_mut().zip(xs) {
            *a = F::combine(*a, F::map(x));
        }
        return combine_halves::<F>(v, n);
    }
    // More than one row: every lane holds at least one element. The lanes are combined
    // outside the SIMD task: with that horizontal step inside, the compiler vectorised
    // the leaves two lanes wide even at AVX-512 (measured in the generated code).
    let lanes = if n >= SIMD_MIN { simd::run(BlockLanes::<F>(xs)) } else { block_lanes::<F>(xs) };
    combine_all_halves::<F>(lanes)
}

/// [`block_lanes`] as a SIMD task.
struct BlockLanes<'a, F: Fold>(&'a [F::In]);

impl<F: Fold> SimdTask for BlockLanes<'_, F> {
    type Output = [F::Acc; LANES];
    #[inline(always)]
    fn run(self) -> [F::Acc; LANES] {
        block_lanes::<F>(self.0)
    }
}

/// The lanes of a block of more than [`LANES`] elements: leaves, then leaves combined
/// neighbours first. No closures here: a closure is compiled once, at the baseline,
/// whichever SIMD copy calls it, unless it happens to be inlined.
#[inline(always)]
fn block_lanes<F: Fold>(xs: &[F::In]) -> [F::Acc; LANES] {
    if xs.len() == REDUCE_BLOCK {
        // A full block, streamed: ((0 1)(2 3))((4 5)(6 7)).
        let low = combine_lanes::<F>(leaf_pair::<F>(xs, 0), &leaf_pair::<F>(xs, 2));
        let high = combine_lanes::<F>(leaf_pair::<F>(xs, 4), &leaf_pair::<F>(xs, 6));
        return combine_lanes::<F>(low, &high);
    }
    // A partial block: its leaves (the last one short), neighbours first.
    let mut leaves = [[F::identity(); LANES]; LEAVES];
    let mut count = 0;
    for (dst, leaf) in leaves.iter_mut().zip(xs.chunks(LEAF)) {
        *dst = fold_leaf::<F>(leaf);
        count += 1;
    }
    while count > 1 {
        for i in 0..count / 2 {
            leaves[i] = combine_lanes::<F>(leaves[2 * i], &leaves[2 * i + 1]);
        }
        if count % 2 == 1 {
            leaves[count / 2] = leaves[count - 1];
        }
        count = count.div_ceil(2);
    }
    leaves[0]
}

/// Pairwise combination of block results in block order (split at the middle): the same
/// tree for the same count, always.
pub(crate) fn combine_blocks<R: Copy>(v: &[R], combine: &impl Fn(R, R) -> R) -> R {
    if v.len() == 1 {
        v[0]
    } else {
        let (a, b) = v.split_at(v.len() / 2);
        combine(combine_blocks(a, combine), combine_blocks(b, combine))
    }
}

/// The most roundings on any element's path to the result of reducing `n` elements:
/// a float sum of `n` elements is within `rounding_depth(n) · eps · Σ|x|` of the exact
/// sum (`eps` of the result's dtype). It grows like `log2 n`.
///
/// ```
/// use strata_kernels::reduction::rounding_depth;
/// assert_eq!(rounding_depth(1), 1);
/// assert_eq!(rounding_depth(4096), 24);
/// assert_eq!(rounding_depth(1 << 26), 38); // 64 Mi elements; a running sum: 67 108 864
/// ```
pub fn rounding_depth(n: usize) -> usize {
    let ceil_log2 = |k: usize| k.max(1).next_power_of_two().trailing_zeros() as usize;
    let in_block = n.min(REDUCE_BLOCK);
    let rows = in_block.div_ceil(LANES).min(LEAF_ROWS);
    let leaves = in_block.div_ceil(LEAF);
    rows + ceil_log2(leaves) + ceil_log2(in_block.min(LANES)) + ceil_log2(n.div_ceil(REDUCE_BLOCK))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::SimdLevel;

    /// The tree, written as plainly as possible from the module doc: lanes, leaves,
    /// neighbour pairs, halves, with no shortcut.
    fn reference_block(xs: &[f64]) -> f64 {
        if xs.is_empty() {
            return 0.0;
        }
        let rows: Vec<Vec<Option<f64>>> =
            xs.chunks(LANES).map(|r| (0..LANES).map(|l| r.get(l).copied()).collect()).collect();
        let mut leaves: Vec<Vec<Option<f64>>> = rows
            .chunks(LEAF_ROWS)
            .map(|leaf| {
                (0..LANES)
                    .map(|l| {
                        let vals: Vec<f64> = leaf.iter().filter_map(|r| r[l]).collect();
                        (!vals.is_empty()).then(|| vals.iter().fold(0.0, |a, &x| a + x))
                    })
                    .collect()
            })
            .collect();
        let add = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a + b),
            (a, None) => a,
            (None, b) => b,
        };
        while leaves.len() > 1 {
            leaves = leaves
                .chunks(2)
                .map(|p| if p.len() == 2 { (0..LANES).map(|l| add(p[0][l], p[1][l])).collect() } else { p[0].clone() })
                .collect();
        }
        let mut v = leaves.pop().unwrap_or_default();
        let mut w = LANES;
        while w > 1 {
            w /= 2;
            for i in 0..w {
                v[i] = add(v[i], v[i + w]);
            }
        }
        v[0].unwrap_or(0.0)
    }

    #[test]
    fn the_block_tree_is_the_documented_one_at_every_length_and_level() {
        // Values whose sums round differently in different orders.
        let xs: Vec<f64> =
            (0..REDUCE_BLOCK).map(|i| ((i * 7919) % 1009) as f64 * 1.1e-3 + 1e8 * ((i % 3) as f64)).collect();
        for n in (0..=LANES + 1).chain([63, 64, 65, 511, 512, 513, 1000, 2047, 3073, 4095, REDUCE_BLOCK]) {
            let want = reference_block(&xs[..n]);
            assert_eq!(fold_block::<SumOf<f64>>(&xs[..n]).to_bits(), want.to_bits(), "n = {n}");
            if n > LANES {
                for level in SimdLevel::ALL {
                    let lanes = simd::run_at(level, BlockLanes::<SumOf<f64>>(&xs[..n]));
                    let got = combine_all_halves::<SumOf<f64>>(lanes);
                    assert_eq!(got.to_bits(), want.to_bits(), "n = {n} at {level:?}");
                }
            }
        }
    }

    #[test]
    fn rounding_depth_grows_like_log_n() {
        assert_eq!(rounding_depth(1), 1);
        assert_eq!(rounding_depth(LANES), 1 + 5);
        assert_eq!(rounding_depth(REDUCE_BLOCK), LEAF_ROWS + 3 + 5);
        assert_eq!(rounding_depth(64 << 20), LEAF_ROWS + 3 + 5 + 14);
    }
}
