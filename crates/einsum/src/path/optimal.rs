//! The exact search: dynamic programming over subsets of operands.
//!
//! Every contraction tree of a set of operands splits, at its root, into the trees of two
//! complementary subsets, and the cost of the root step depends only on which subsets
//! they are (the legs of a subset are its labels that appear outside it or in the
//! output). So the cheapest tree of every subset follows from the cheapest trees of its
//! parts: visiting subsets in increasing numeric order (every part of a mask is a smaller
//! number) and all their splits gives the optimum over all trees, outer products included,
//! in `3^n` split visits. Unlike a depth-first search over pair orders the running time
//! does not depend on the sizes, so 12 operands take milliseconds.

use crate::label::LabelSet;

use super::{Problem, SsaPath, StepCost};

/// What the search minimises, lexicographically: flops first, then the elements written
/// into intermediates (fewer bytes moved among equally cheap orders).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Cost {
    flops: u128,
    written: u128,
}

const UNREACHABLE: Cost = Cost { flops: u128::MAX, written: u128::MAX };

/// The cheapest contraction of all operands whose intermediates (every subset but the
/// whole) have at most `limit` elements, or `None` when no tree stays within it.
pub(crate) fn optimal(p: &Problem<'_>, limit: Option<u128>) -> Option<SsaPath> {
    let n = p.sets.len();
    let legs = subset_legs(p);
    let sizes: Vec<u128> = legs.iter().map(|l| l.size(p.extents)).collect();
    let full = (1usize << n) - 1;
    let mut best = vec![UNREACHABLE; full + 1];
    let mut split = vec![0usize; full + 1];
    for k in 0..n {
        best[1 << k] = Cost { flops: 0, written: 0 };
    }
    for mask in 1..=full {
        if mask.count_ones() < 2 || (mask != full && limit.is_some_and(|l| sizes[mask] > l)) {
            continue;
        }
        // Each unordered split once: the part `a` holds the lowest operand of `mask`.
        let low = mask & mask.wrapping_neg();
        let rest = mask ^ low;
        let mut sub = rest;
        loop {
            let a = sub | low;
            let b = mask ^ a;
            if b != 0 && best[a] != UNREACHABLE && best[b] != UNREACHABLE {
                let step = StepCost::of(legs[a], legs[b], legs[mask], sizes[mask], p.extents);
                let cost = Cost {
                    flops: best[a].flops.saturating_add(best[b].flops).saturating_add(step.flops),
                    written: best[a].written.saturating_add(best[b].written).saturating_add(sizes[mask]),
                };
                if cost < best[mask] {
                    best[mask] = cost;
                    split[mask] = a;
                }
            }
            if sub == 0 {
                break;
            }
            sub = (sub - 1) & rest;
        }
    }
    if best[full] == UNREACHABLE {
        return None;
    }
    let mut path = Vec::with_capacity(n.saturating_sub(1));
    emit(full, &split, n, &mut path);
    Some(path)
}

/// The smallest largest intermediate any contraction tree needs (the whole result
/// excluded): what a memory limit must allow at least.
pub(crate) fn smallest_peak(p: &Problem<'_>) -> u128 {
    let n = p.sets.len();
    let legs = subset_legs(p);
    let full = (1usize << n) - 1;
    let mut peak = vec![u128::MAX; full + 1];
    for k in 0..n {
        peak[1 << k] = 0;
    }
    for mask in 1..=full {
        if mask.count_ones() < 2 {
            continue;
        }
        let own = if mask == full { 0 } else { legs[mask].size(p.extents) };
        let low = mask & mask.wrapping_neg();
        let rest = mask ^ low;
        let mut sub = rest;
        loop {
            let a = sub | low;
            let b = mask ^ a;
            if b != 0 {
                let candidate = peak[a].max(peak[b]).max(own);
                peak[mask] = peak[mask].min(candidate);
            }
            if sub == 0 {
                break;
            }
            sub = (sub - 1) & rest;
        }
    }
    peak[full]
}

/// The legs of every subset: its labels that appear outside it or in the output. A
/// single operand keeps all its labels (it is an input as given; a label only it has is
/// summed by its first step, and counted there, as opt_einsum counts it).
fn subset_legs(p: &Problem<'_>) -> Vec<LabelSet> {
    let n = p.sets.len();
    let full = (1usize << n) - 1;
    let mut labels = vec![LabelSet::EMPTY; full + 1];
    for mask in 1..=full {
        let low = mask.trailing_zeros() as usize;
        labels[mask] = labels[mask & (mask - 1)].union(p.sets[low]);
    }
    let mut legs: Vec<LabelSet> =
        (0..=full).map(|mask| labels[mask].intersect(labels[full ^ mask].union(p.output))).collect();
    for (k, s) in p.sets.iter().enumerate() {
        legs[1 << k] = *s;
    }
    legs
}

/// Appends the steps of the tree rooted at `mask` in post order; returns the SSA id of
/// its result (operands are `0..n`, step `s` produces `n + s`).
fn emit(mask: usize, split: &[usize], n: usize, path: &mut SsaPath) -> usize {
    if mask.count_ones() == 1 {
        return mask.trailing_zeros() as usize;
    }
    let a = split[mask];
    let left = emit(a, split, n, path);
    let right = emit(mask ^ a, split, n, path);
    path.push((left, right));
    n + path.len() - 1
}
