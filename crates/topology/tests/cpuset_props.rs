//! Property tests: CpuSet against a BTreeSet reference on random sets.

use std::collections::BTreeSet;

use proptest::prelude::*;
use strata_topology::{CpuId, CpuSet};

fn reference(ids: &BTreeSet<u32>) -> Option<CpuSet> {
    CpuSet::new(ids.iter().copied().map(CpuId)).ok()
}

fn as_ids(set: &Option<CpuSet>) -> BTreeSet<u32> {
    set.iter().flat_map(|s| s.iter()).map(|c| c.0).collect()
}

/// Cpulist printed by the simplest rule: each id alone, comma separated.
fn plain_list(ids: &BTreeSet<u32>) -> String {
    ids.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(",")
}

proptest! {
    #[test]
    fn print_parse_round_trip(ids in prop::collection::btree_set(0u32..300, 1..60)) {
        let set = reference(&ids).unwrap();
        let text = set.to_string();
        let parsed: CpuSet = text.parse().unwrap();
        prop_assert_eq!(&parsed, &set);
        // The plain form parses to the same set, and the canonical form is never longer.
        let plain = plain_list(&ids);
        prop_assert_eq!(plain.parse::<CpuSet>().unwrap(), set.clone());
        prop_assert!(text.len() <= plain.len());
        // Canonical: ranges only for runs, ascending, no repeats.
        prop_assert_eq!(as_ids(&Some(parsed)), ids);
    }

    #[test]
    fn algebra_matches_btreeset(
        a in prop::collection::btree_set(0u32..64, 1..40),
        b in prop::collection::btree_set(0u32..64, 1..40),
    ) {
        let (sa, sb) = (reference(&a).unwrap(), reference(&b).unwrap());
        let inter: BTreeSet<u32> = a.intersection(&b).copied().collect();
        let union: BTreeSet<u32> = a.union(&b).copied().collect();
        let diff: BTreeSet<u32> = a.difference(&b).copied().collect();
        prop_assert_eq!(as_ids(&sa.intersection(&sb)), inter.clone());
        prop_assert_eq!(sa.intersection(&sb).is_none(), inter.is_empty());
        prop_assert_eq!(as_ids(&Some(sa.union(&sb))), union);
        prop_assert_eq!(as_ids(&sa.difference(&sb)), diff.clone());
        prop_assert_eq!(sa.difference(&sb).is_none(), diff.is_empty());
        prop_assert_eq!(sa.overlaps(&sb), !inter.is_empty());
        prop_assert_eq!(sa.is_subset(&sb), a.is_subset(&b));
        prop_assert_eq!(sa.len(), a.len());
        prop_assert_eq!(sa.first().0, *a.first().unwrap());
        prop_assert_eq!(sa.last().0, *a.last().unwrap());
        for i in 0..64 {
            prop_assert_eq!(sa.contains(CpuId(i)), a.contains(&i));
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in "[0-9,\\- a-z:]{0,24}") {
        // Either a set whose canonical form re-parses to itself, or a typed error.
        if let Ok(set) = text.parse::<CpuSet>() {
            prop_assert_eq!(set.to_string().parse::<CpuSet>().unwrap(), set);
        }
    }
}
