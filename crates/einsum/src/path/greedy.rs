//! The greedy search for networks too large for the exact one (opt_einsum's `greedy`
//! idea): repeatedly contract the pair of tensors sharing a label whose result shrinks
//! memory the most (`size(result) - size(a) - size(b)`, then fewest flops), and when no
//! two tensors share a label, take outer products of the smallest tensors first.
//!
//! A candidate's result does not change while the tensors it joins are alive: a label of
//! `a` or `b` is kept when another tensor or the output has it, and contracting other
//! tensors never removes a label that `a` or `b` still shares with them. So candidates
//! wait in a heap and are only dropped when one of their tensors is gone: `O(E log E)`
//! for `E` sharing pairs.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::label::{LabelSet, MAX_LABELS};

use super::{Problem, SsaPath, StepCost};

/// Heap entry: smallest (memory change, flops, ids) first.
type Candidate = Reverse<(i128, u128, usize, usize)>;

/// A greedy contraction order whose intermediates have at most `limit` elements (the
/// final result excluded), or `Err(needed)`: the smallest intermediate the search would
/// have had to form next.
pub(crate) fn greedy(p: &Problem<'_>, limit: Option<u128>) -> Result<SsaPath, u128> {
    let n = p.sets.len();
    let mut legs: Vec<LabelSet> = p.sets.to_vec();
    let mut alive: Vec<bool> = vec![true; n];
    let mut live = n;
    // How many alive tensors carry each label.
    let mut count = [0usize; MAX_LABELS];
    for s in p.sets {
        for l in s.iter() {
            count[l as usize] += 1;
        }
    }
    let result_of = |a: LabelSet, b: LabelSet, count: &[usize; MAX_LABELS]| {
        let either = a.union(b);
        let mut kept = either.intersect(p.output);
        for l in either.minus(p.output).iter() {
            let held = usize::from(a.contains(l)) + usize::from(b.contains(l));
            if count[l as usize] > held {
                kept = kept.with(l);
            }
        }
        kept
    };
    let candidate = |i: usize, j: usize, legs: &[LabelSet], count: &[usize; MAX_LABELS]| {
        let (a, b) = (legs[i], legs[j]);
        let r = result_of(a, b, count);
        let size = r.size(p.extents);
        let delta = size as i128 - a.size(p.extents) as i128 - b.size(p.extents) as i128;
        let flops = StepCost::of(a, b, r, size, p.extents).flops;
        (Reverse((delta, flops, i.min(j), i.max(j))), size)
    };

    let mut heap: BinaryHeap<Candidate> = BinaryHeap::new();
    let mut needed = u128::MAX;
    let push = |heap: &mut BinaryHeap<Candidate>, needed: &mut u128, c: (Candidate, u128), last: bool| {
        if !last && limit.is_some_and(|l| c.1 > l) {
            *needed = (*needed).min(c.1);
        } else {
            heap.push(c.0);
        }
    };
    for i in 0..n {
        for j in i + 1..n {
            if !legs[i].intersect(legs[j]).is_empty() {
                push(&mut heap, &mut needed, candidate(i, j, &legs, &count), n == 2);
            }
        }
    }
    let mut path = SsaPath::with_capacity(n.saturating_sub(1));
    while live > 1 {
        let (i, j) = match heap.pop() {
            Some(Reverse((_, _, i, j))) if alive[i] && alive[j] => (i, j),
            Some(_) => continue,
            None => match smallest_pair(&legs, &alive, p.extents) {
                Some(pair) => {
                    let r = result_of(legs[pair.0], legs[pair.1], &count);
                    let size = r.size(p.extents);
                    if live > 2 && limit.is_some_and(|l| size > l) {
                        return Err(needed.min(size));
                    }
                    pair
                }
                None => break,
            },
        };
        let r = result_of(legs[i], legs[j], &count);
        for l in legs[i].iter() {
            count[l as usize] -= 1;
        }
        for l in legs[j].iter() {
            count[l as usize] -= 1;
        }
        for l in r.iter() {
            count[l as usize] += 1;
        }
        alive[i] = false;
        alive[j] = false;
        let k = legs.len();
        legs.push(r);
        alive.push(true);
        live -= 1;
        path.push((i, j));
        for m in 0..k {
            if alive[m] && !legs[m].intersect(r).is_empty() {
                push(&mut heap, &mut needed, candidate(m, k, &legs, &count), live == 2);
            }
        }
    }
    if live > 1 {
        return Err(needed);
    }
    Ok(path)
}

/// The two smallest alive tensors (by size, then id), for outer products.
fn smallest_pair(legs: &[LabelSet], alive: &[bool], extents: &[usize]) -> Option<(usize, usize)> {
    let mut by_size: Vec<(u128, usize)> =
        (0..legs.len()).filter(|&i| alive[i]).map(|i| (legs[i].size(extents), i)).collect();
    if by_size.len() < 2 {
        return None;
    }
    by_size.sort_unstable();
    let (a, b) = (by_size[0].1, by_size[1].1);
    Some((a.min(b), a.max(b)))
}
