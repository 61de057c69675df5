//! The searches against an exhaustive reference over every pairwise order.

use proptest::prelude::*;

use super::*;
use crate::label::{Label, MAX_LABELS};

/// opt_einsum's pair cost, written out from its definition: `size(a | b)`, doubled when
/// a label both share is summed away.
fn reference_pair_cost(a: LabelSet, b: LabelSet, keep: LabelSet, extents: &[usize]) -> (LabelSet, u128) {
    let either = a.union(b);
    let result = either.intersect(keep);
    let mut size = 1u128;
    for l in either.iter() {
        size *= extents[l as usize] as u128;
    }
    let inner = !a.intersect(b).minus(keep).is_empty();
    (result, size * if inner { 2 } else { 1 })
}

/// The cheapest total over every order of pairwise contractions (all trees, every
/// sequence), by plain recursion.
fn brute_force(tensors: &[LabelSet], output: LabelSet, extents: &[usize]) -> u128 {
    if tensors.len() <= 1 {
        return 0;
    }
    let mut best = u128::MAX;
    for i in 0..tensors.len() {
        for j in i + 1..tensors.len() {
            let others: Vec<LabelSet> = (0..tensors.len()).filter(|&k| k != i && k != j).map(|k| tensors[k]).collect();
            let keep = others.iter().fold(output, |s, t| s.union(*t));
            let (result, cost) = reference_pair_cost(tensors[i], tensors[j], keep, extents);
            let mut next = others;
            next.push(result);
            best = best.min(cost + brute_force(&next, output, extents));
        }
    }
    best
}

/// The total cost of an SSA path, recomputed independently of the search.
fn cost_of(path: &SsaPath, sets: &[LabelSet], output: LabelSet, extents: &[usize]) -> (u128, u128) {
    let mut live: Vec<Option<LabelSet>> = sets.iter().copied().map(Some).collect();
    let mut total = 0u128;
    let mut peak = 0u128;
    for (s, &(a, b)) in path.iter().enumerate() {
        let (ta, tb) = (live[a].take().expect("operand alive"), live[b].take().expect("operand alive"));
        let keep = live.iter().flatten().fold(output, |acc, t| acc.union(*t));
        let (result, cost) = reference_pair_cost(ta, tb, keep, extents);
        total += cost;
        if s + 1 < path.len() {
            peak = peak.max(result.size(extents));
        }
        live.push(Some(result));
    }
    assert_eq!(live.iter().flatten().count(), 1.min(sets.len()), "the path contracts everything");
    (total, peak)
}

fn network() -> impl Strategy<Value = (Vec<LabelSet>, LabelSet, Vec<usize>)> {
    (1usize..=6, proptest::collection::vec(1usize..5, 7))
        .prop_flat_map(|(n, ext)| {
            let operand = proptest::collection::vec(0u8..7, 0..4).prop_map(|ls| LabelSet::of(&ls));
            (proptest::collection::vec(operand, n), proptest::collection::vec(0u8..7, 0..3), Just(ext))
        })
        .prop_map(|(sets, out, ext)| {
            let all = sets.iter().fold(LabelSet::EMPTY, |a, s| a.union(*s));
            let output = LabelSet::of(&out).intersect(all);
            let mut extents = vec![1usize; MAX_LABELS];
            extents[..7].copy_from_slice(&ext);
            (sets, output, extents)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The exact search's cost equals the cheapest of all pairwise orders.
    #[test]
    fn optimal_matches_brute_force((sets, output, extents) in network()) {
        let p = Problem { sets: &sets, output, extents: &extents };
        let path = search(&p, &EinsumOptions::new().strategy(PathStrategy::Optimal)).unwrap();
        prop_assert_eq!(path.len(), sets.len() - 1);
        let (cost, _) = cost_of(&path, &sets, output, &extents);
        prop_assert_eq!(cost, brute_force(&sets, output, &extents));
    }

    /// Greedy paths are valid contraction orders, never cheaper than the optimum.
    #[test]
    fn greedy_is_a_valid_path((sets, output, extents) in network()) {
        let p = Problem { sets: &sets, output, extents: &extents };
        let path = search(&p, &EinsumOptions::new().strategy(PathStrategy::Greedy)).unwrap();
        prop_assert_eq!(path.len(), sets.len() - 1);
        let (cost, _) = cost_of(&path, &sets, output, &extents);
        prop_assert!(cost >= brute_force(&sets, output, &extents));
    }

    /// Under a memory limit the exact search keeps every intermediate within it, or
    /// reports exactly the least any order needs.
    #[test]
    fn memory_limits_hold_or_name_the_minimum((sets, output, extents) in network(), limit in 1usize..80) {
        let p = Problem { sets: &sets, output, extents: &extents };
        let opts = EinsumOptions::new().strategy(PathStrategy::Optimal).memory_limit(limit);
        match search(&p, &opts) {
            Ok(path) => {
                let (_, peak) = cost_of(&path, &sets, output, &extents);
                prop_assert!(peak <= limit as u128);
            }
            Err(e) => {
                let typed = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<EinsumError>()).cloned();
                let Some(EinsumError::MemoryLimit { needed, .. }) = typed else {
                    return Err(TestCaseError::fail(format!("unexpected error {e}")));
                };
                prop_assert!(needed > limit as u128);
                prop_assert_eq!(needed, optimal::smallest_peak(&p));
            }
        }
    }
}

fn set(s: &str) -> LabelSet {
    LabelSet::of(&s.bytes().map(|b| (b - b'a' + 26) as Label).collect::<Vec<_>>())
}

fn extents_of(pairs: &[(char, usize)]) -> Vec<usize> {
    let mut e = vec![1usize; MAX_LABELS];
    for &(c, d) in pairs {
        e[(c as u8 - b'a' + 26) as usize] = d;
    }
    e
}

#[test]
fn matrix_chain_picks_the_cheap_end() {
    // ij,jk,kl->il with i = 2, j = 3, k = 4, l = 5: opt_einsum counts 128 flops (numpy
    // prints 129: it adds one).
    let ext = extents_of(&[('i', 2), ('j', 3), ('k', 4), ('l', 5)]);
    let sets = [set("ij"), set("jk"), set("kl")];
    let p = Problem { sets: &sets, output: set("il"), extents: &ext };
    let path = search(&p, &EinsumOptions::new()).unwrap();
    assert_eq!(path, vec![(0, 1), (3, 2)]);
    assert_eq!(cost_of(&path, &sets, set("il"), &ext).0, 128);
}

#[test]
fn outer_products_are_considered_when_they_pay() {
    // Two tiny vectors and a large matrix: the outer product of the vectors first is cheapest.
    let ext = extents_of(&[('i', 100), ('j', 100)]);
    let sets = [set("i"), set("j"), set("ij")];
    let p = Problem { sets: &sets, output: LabelSet::EMPTY, extents: &ext };
    let path = search(&p, &EinsumOptions::new().strategy(PathStrategy::Optimal)).unwrap();
    assert_eq!(cost_of(&path, &sets, LabelSet::EMPTY, &ext).0, brute_force(&sets, LabelSet::EMPTY, &ext));
}

#[test]
fn greedy_handles_large_networks_and_disconnected_parts() {
    // A ring of 40 matrices plus two scalars-to-be: greedy contracts it all.
    let n = 40;
    let mut ext = vec![1usize; MAX_LABELS];
    let sets: Vec<LabelSet> = (0..n)
        .map(|k| LabelSet::EMPTY.with(k as Label).with(((k + 1) % n) as Label))
        .chain([LabelSet::of(&[100]), LabelSet::of(&[100, 101])])
        .collect();
    for e in ext.iter_mut().take(n) {
        *e = 3;
    }
    ext[100] = 2;
    ext[101] = 2;
    let p = Problem { sets: &sets, output: LabelSet::of(&[101]), extents: &ext };
    let path = search(&p, &EinsumOptions::new()).unwrap();
    assert_eq!(path.len(), sets.len() - 1);
    let (cost, _) = cost_of(&path, &sets, LabelSet::of(&[101]), &ext);
    assert!(cost < 40 * 2 * 27 + 100, "a ring contracts in O(n) steps of 2·3^3 flops, got {cost}");
}

#[test]
fn strategy_limits_and_explicit_paths() {
    let ext = extents_of(&[('a', 2)]);
    let sets = vec![set("a"); 17];
    let p = Problem { sets: &sets, output: LabelSet::EMPTY, extents: &ext };
    let e = search(&p, &EinsumOptions::new().strategy(PathStrategy::Optimal)).unwrap_err();
    assert_eq!(
        e.message(),
        "the optimal path search handles at most 16 operands, the expression has 17; use PathStrategy::Greedy"
    );
    assert_eq!(search(&p, &EinsumOptions::new()).unwrap().len(), 16);

    let sets = [set("ij"), set("jk"), set("kl")];
    let p = Problem { sets: &sets, output: set("il"), extents: &ext };
    let explicit = |v: Vec<(usize, usize)>| search(&p, &EinsumOptions::new().strategy(PathStrategy::Explicit(v)));
    assert_eq!(explicit(vec![(1, 2), (0, 1)]).unwrap(), vec![(1, 2), (0, 3)]);
    let bad = explicit(vec![(1, 3)]).unwrap_err();
    assert_eq!(bad.message(), "the given path is invalid: step 0 names positions (1, 3) of a list of 3 operand(s)");
    let bad = explicit(vec![(1, 1)]).unwrap_err();
    assert!(bad.message().contains("step 0 names positions (1, 1)"));
    let short = explicit(vec![(0, 1)]).unwrap_err();
    assert_eq!(
        short.message(),
        "the given path is invalid: it leaves 2 operands uncontracted; a path contracts them to one"
    );
}

#[test]
fn greedy_memory_limit_failure_names_what_it_needed() {
    let ext = extents_of(&[('i', 10), ('j', 10), ('k', 10)]);
    let sets = [set("ij"), set("jk"), set("ki")];
    let p = Problem { sets: &sets, output: set("ijk"), extents: &ext };
    let e = search(&p, &EinsumOptions::new().strategy(PathStrategy::Greedy).memory_limit(50)).unwrap_err();
    let typed = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<EinsumError>()).cloned();
    assert_eq!(typed, Some(EinsumError::MemoryLimit { limit: 50, needed: 1000 }));
}
