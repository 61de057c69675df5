//! CPU ids, NUMA node ids and non-empty CPU sets with the Linux cpulist text form.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::error::{CpuListError, TopologyError};

/// An operating-system CPU number, exactly as the kernel numbers it.
///
/// Ids are never renumbered: on a machine whose CPUs are 0, 2, 4 and 6, those are the ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CpuId(pub u32);

impl CpuId {
    /// The largest id accepted from text and by pinning (65 535).
    ///
    /// Linux kernels are built for at most 8 192 CPUs; the bound leaves room and keeps a
    /// malicious cpulist such as `0-4000000000` from allocating gigabytes.
    pub const MAX: CpuId = CpuId(65_535);

    /// The id as an index (for tables indexed by CPU).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for CpuId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl From<u32> for CpuId {
    fn from(id: u32) -> Self {
        CpuId(id)
    }
}

/// An operating-system NUMA node number, exactly as the kernel numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NumaNodeId(pub u32);

impl fmt::Display for NumaNodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl From<u32> for NumaNodeId {
    fn from(id: u32) -> Self {
        NumaNodeId(id)
    }
}

/// A non-empty, sorted, deduplicated set of CPUs. Cloning is a reference-count increment.
///
/// Text form is the Linux cpulist (`0-3,8,10-11`): [`FromStr`] parses it, [`fmt::Display`]
/// prints the canonical form (ascending, runs of two or more consecutive ids as ranges).
///
/// ```
/// use strata_topology::{CpuId, CpuSet};
///
/// let a: CpuSet = "0-3,8".parse()?;
/// let b: CpuSet = "3-5".parse()?;
/// assert!(a.contains(CpuId(8)));
/// assert_eq!(a.intersection(&b).map(|s| s.to_string()), Some("3".to_string()));
/// assert_eq!(a.union(&b).to_string(), "0-5,8");
/// assert_eq!(a.difference(&b).map(|s| s.to_string()), Some("0-2,8".to_string()));
/// assert!("5-2".parse::<CpuSet>().is_err());
/// # Ok::<(), strata_topology::TopologyError>(())
/// ```
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CpuSet {
    // INVARIANT: non-empty, strictly ascending.
    cpus: Arc<[CpuId]>,
}

// A CPU set is never empty, so an `is_empty` would always answer false.
#[allow(clippy::len_without_is_empty)]
impl CpuSet {
    /// Builds a set from any ids, in any order, with repeats; errors if there are none.
    pub fn new(cpus: impl IntoIterator<Item = CpuId>) -> Result<CpuSet, TopologyError> {
        let mut ids: Vec<CpuId> = cpus.into_iter().collect();
        ids.sort_unstable();
        ids.dedup();
        Self::from_sorted_vec(ids, "CpuSet::new")
    }

    /// The set holding one CPU.
    pub fn single(cpu: CpuId) -> CpuSet {
        CpuSet { cpus: Arc::from([cpu]) }
    }

    /// The CPUs `first..=last`; errors if the range is reversed or `last` exceeds
    /// [`CpuId::MAX`].
    pub fn range(first: CpuId, last: CpuId) -> Result<CpuSet, TopologyError> {
        if last > CpuId::MAX {
            return Err(TopologyError::CpuIdTooLarge { context: "CpuSet::range", id: last.0 });
        }
        if last < first {
            return Err(TopologyError::CpuList {
                input: format!("{first}-{last}"),
                reason: CpuListError::ReversedRange { start: first.0, end: last.0 },
            });
        }
        Ok(CpuSet { cpus: (first.0..=last.0).map(CpuId).collect() })
    }

    /// Parses a cpulist that may be empty (as sysfs prints for a node without CPUs).
    ///
    /// `Ok(None)` for an empty or all-whitespace list; otherwise as [`FromStr`].
    pub fn parse_possibly_empty(text: &str) -> Result<Option<CpuSet>, TopologyError> {
        if text.trim().is_empty() {
            return Ok(None);
        }
        text.parse().map(Some)
    }

    pub(crate) fn from_sorted_vec(ids: Vec<CpuId>, context: &'static str) -> Result<CpuSet, TopologyError> {
        debug_assert!(ids.windows(2).all(|w| w[0] < w[1]));
        if ids.is_empty() {
            return Err(TopologyError::EmptyCpuSet { context });
        }
        Ok(CpuSet { cpus: ids.into() })
    }

    /// Whether `cpu` is in the set.
    pub fn contains(&self, cpu: CpuId) -> bool {
        self.cpus.binary_search(&cpu).is_ok()
    }

    /// Whether the two sets share at least one CPU.
    pub fn overlaps(&self, other: &CpuSet) -> bool {
        let (mut i, mut j) = (0, 0);
        let (a, b) = (&*self.cpus, &*other.cpus);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => return true,
            }
        }
        false
    }

    /// Whether every CPU of `self` is in `other`.
    pub fn is_subset(&self, other: &CpuSet) -> bool {
        self.len() <= other.len() && self.cpus.iter().all(|&c| other.contains(c))
    }

    /// The CPUs in both sets, or `None` if they are disjoint.
    pub fn intersection(&self, other: &CpuSet) -> Option<CpuSet> {
        let ids: Vec<CpuId> = self.cpus.iter().copied().filter(|&c| other.contains(c)).collect();
        Self::from_sorted_vec(ids, "CpuSet::intersection").ok()
    }

    /// The CPUs in either set.
    pub fn union(&self, other: &CpuSet) -> CpuSet {
        let (a, b) = (&*self.cpus, &*other.cpus);
        let mut ids = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => {
                    ids.push(a[i]);
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    ids.push(b[j]);
                    j += 1;
                }
                std::cmp::Ordering::Equal => {
                    ids.push(a[i]);
                    i += 1;
                    j += 1;
                }
            }
        }
        ids.extend_from_slice(&a[i..]);
        ids.extend_from_slice(&b[j..]);
        CpuSet { cpus: ids.into() }
    }

    /// The CPUs of `self` not in `other`, or `None` if nothing remains.
    pub fn difference(&self, other: &CpuSet) -> Option<CpuSet> {
        let ids: Vec<CpuId> = self.cpus.iter().copied().filter(|&c| !other.contains(c)).collect();
        Self::from_sorted_vec(ids, "CpuSet::difference").ok()
    }

    /// The CPUs in ascending order.
    pub fn iter(&self) -> std::iter::Copied<std::slice::Iter<'_, CpuId>> {
        self.cpus.iter().copied()
    }

    /// The CPUs in ascending order, as a slice.
    pub fn as_slice(&self) -> &[CpuId] {
        &self.cpus
    }

    /// Number of CPUs (at least one).
    pub fn len(&self) -> usize {
        self.cpus.len()
    }

    /// The lowest CPU.
    pub fn first(&self) -> CpuId {
        // INVARIANT: a CpuSet is never empty.
        self.cpus[0]
    }

    /// The highest CPU.
    pub fn last(&self) -> CpuId {
        // INVARIANT: a CpuSet is never empty.
        self.cpus[self.cpus.len() - 1]
    }
}

impl<'a> IntoIterator for &'a CpuSet {
    type Item = CpuId;
    type IntoIter = std::iter::Copied<std::slice::Iter<'a, CpuId>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ids = &*self.cpus;
        let mut start = 0;
        let mut first_item = true;
        while start < ids.len() {
            let mut end = start;
            while end + 1 < ids.len() && ids[end + 1].0 == ids[end].0 + 1 {
                end += 1;
            }
            if !first_item {
                f.write_str(",")?;
            }
            first_item = false;
            if end == start {
                write!(f, "{}", ids[start])?;
            } else {
                write!(f, "{}-{}", ids[start], ids[end])?;
            }
            start = end + 1;
        }
        Ok(())
    }
}

impl fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CpuSet({self})")
    }
}

impl FromStr for CpuSet {
    type Err = TopologyError;

    /// Parses a Linux cpulist: comma-separated ids (`5`) and inclusive ranges (`0-3`),
    /// surrounding whitespace (such as sysfs's trailing newline) ignored. The kernel's
    /// strided form (`0-7:2/4`) is not accepted.
    fn from_str(text: &str) -> Result<CpuSet, TopologyError> {
        parse_cpulist(text).map_err(|reason| TopologyError::CpuList { input: text.chars().take(200).collect(), reason })
    }
}

fn parse_cpulist(text: &str) -> Result<CpuSet, CpuListError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(CpuListError::Empty);
    }
    let mut ids = Vec::new();
    for (index, item) in text.split(',').enumerate() {
        let item = item.trim();
        if item.is_empty() {
            return Err(CpuListError::EmptyItem { index });
        }
        match item.split_once('-') {
            None => ids.push(CpuId(parse_id(item)?)),
            Some((start, end)) => {
                let (start, end) = (parse_id(start.trim())?, parse_id(end.trim())?);
                if end < start {
                    return Err(CpuListError::ReversedRange { start, end });
                }
                ids.extend((start..=end).map(CpuId));
            }
        }
    }
    ids.sort_unstable();
    ids.dedup();
    // INVARIANT: at least one non-empty item was parsed, so `ids` is non-empty.
    Ok(CpuSet { cpus: ids.into() })
}

fn parse_id(token: &str) -> Result<u32, CpuListError> {
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_digit()) {
        return Err(CpuListError::NotANumber { token: token.chars().take(40).collect() });
    }
    let value: u64 = match token.parse() {
        Ok(v) => v,
        Err(_) => {
            return Err(CpuListError::Overflow { token: token.chars().take(40).collect() });
        }
    };
    if value > u64::from(u32::MAX) {
        return Err(CpuListError::Overflow { token: token.to_string() });
    }
    if value > u64::from(CpuId::MAX.0) {
        return Err(CpuListError::IdTooLarge { id: value });
    }
    // The two checks above bound `value` by CpuId::MAX, which fits in u32.
    Ok(value as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(ids: &[u32]) -> CpuSet {
        CpuSet::new(ids.iter().copied().map(CpuId)).unwrap()
    }

    fn reason(text: &str) -> CpuListError {
        match text.parse::<CpuSet>() {
            Err(TopologyError::CpuList { reason, .. }) => reason,
            other => panic!("expected a cpulist error for {text:?}, got {other:?}"),
        }
    }

    #[test]
    fn parses_and_prints_canonical_lists() {
        let s: CpuSet = "0-3,8,10-11".parse().unwrap();
        assert_eq!(s.iter().map(|c| c.0).collect::<Vec<_>>(), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(s.to_string(), "0-3,8,10-11");
        // Unsorted, overlapping and whitespace-padded input normalises.
        let s: CpuSet = " 9,1-2, 2-3 ,0\n".parse().unwrap();
        assert_eq!(s.to_string(), "0-3,9");
        assert_eq!("5-5".parse::<CpuSet>().unwrap().to_string(), "5");
        assert_eq!("4,5".parse::<CpuSet>().unwrap().to_string(), "4-5");
        assert_eq!(format!("{s:?}"), "CpuSet(0-3,9)");
    }

    #[test]
    fn rejects_malformed_lists_with_typed_reasons() {
        assert_eq!(reason(""), CpuListError::Empty);
        assert_eq!(reason(" \n"), CpuListError::Empty);
        assert_eq!(reason("0,,2"), CpuListError::EmptyItem { index: 1 });
        assert_eq!(reason(",1"), CpuListError::EmptyItem { index: 0 });
        assert_eq!(reason("1,"), CpuListError::EmptyItem { index: 1 });
        assert_eq!(reason("7-3"), CpuListError::ReversedRange { start: 7, end: 3 });
        assert!(matches!(reason("abc"), CpuListError::NotANumber { .. }));
        assert!(matches!(reason("1-"), CpuListError::NotANumber { .. }));
        assert!(matches!(reason("-1"), CpuListError::NotANumber { .. }));
        assert!(matches!(reason("+1"), CpuListError::NotANumber { .. }));
        assert!(matches!(reason("1-2-3"), CpuListError::NotANumber { .. }));
        assert!(matches!(reason("0-7:2/4"), CpuListError::NotANumber { .. }));
        assert!(matches!(reason("0x3"), CpuListError::NotANumber { .. }));
        assert!(matches!(reason("99999999999999999999999"), CpuListError::Overflow { .. }));
        assert!(matches!(reason("4294967296"), CpuListError::Overflow { .. }));
        assert_eq!(reason("65536"), CpuListError::IdTooLarge { id: 65536 });
        assert_eq!(reason("0-4000000000"), CpuListError::IdTooLarge { id: 4_000_000_000 });
        // The largest allowed id is accepted.
        assert_eq!("65535".parse::<CpuSet>().unwrap().first(), CpuId::MAX);
        let err = "7-3".parse::<CpuSet>().unwrap_err().to_string();
        assert!(err.contains("7-3") && err.contains("reversed"), "{err}");
    }

    #[test]
    fn possibly_empty_lists() {
        assert_eq!(CpuSet::parse_possibly_empty("\n").unwrap(), None);
        assert_eq!(CpuSet::parse_possibly_empty("2-3\n").unwrap(), Some(set(&[2, 3])));
        assert!(CpuSet::parse_possibly_empty("x").is_err());
    }

    #[test]
    fn construction() {
        assert!(matches!(CpuSet::new(std::iter::empty()), Err(TopologyError::EmptyCpuSet { .. })));
        assert_eq!(set(&[3, 1, 3, 2]).as_slice(), &[CpuId(1), CpuId(2), CpuId(3)]);
        assert_eq!(CpuSet::single(CpuId(7)).to_string(), "7");
        assert_eq!(CpuSet::range(CpuId(2), CpuId(4)).unwrap(), set(&[2, 3, 4]));
        assert!(CpuSet::range(CpuId(4), CpuId(2)).is_err());
        assert!(matches!(CpuSet::range(CpuId(0), CpuId(u32::MAX)), Err(TopologyError::CpuIdTooLarge { .. })));
        let s = set(&[4, 9]);
        assert_eq!((s.first(), s.last(), s.len()), (CpuId(4), CpuId(9), 2));
    }

    #[test]
    fn set_algebra_matches_naive_membership() {
        // Compare every operation against membership over a small universe.
        let samples = [
            set(&[0]),
            set(&[0, 1, 2, 3]),
            set(&[2, 3, 4, 5]),
            set(&[1, 3, 5, 7]),
            set(&[6, 7]),
            set(&[0, 2, 4, 6, 8]),
        ];
        for a in &samples {
            for b in &samples {
                let universe = (0..10).map(CpuId);
                let both: Vec<CpuId> = universe.clone().filter(|&c| a.contains(c) && b.contains(c)).collect();
                let either: Vec<CpuId> = universe.clone().filter(|&c| a.contains(c) || b.contains(c)).collect();
                let only_a: Vec<CpuId> = universe.filter(|&c| a.contains(c) && !b.contains(c)).collect();
                assert_eq!(
                    a.intersection(b).map(|s| s.as_slice().to_vec()),
                    (!both.is_empty()).then_some(both.clone())
                );
                assert_eq!(a.overlaps(b), !both.is_empty());
                assert_eq!(a.union(b).as_slice(), &either[..]);
                assert_eq!(
                    a.difference(b).map(|s| s.as_slice().to_vec()),
                    (!only_a.is_empty()).then_some(only_a.clone())
                );
                assert_eq!(a.is_subset(b), only_a.is_empty());
            }
        }
    }
}
