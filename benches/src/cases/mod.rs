//! The case families of the suite, one module each. Every family lists its cases
//! (`cases(threads, quick)`), each measuring strata beside its peers in the same process
//! and checking once, untimed, that they compute the same result.
//!
//! Adding a case: add a [`Case`] to its family's list (name, group, unit, threads, peers,
//! references, target, limit, and the closure that measures it). Adding a family: a
//! module here with a `cases` function, called from [`all`]. Adding a group: an entry in
//! `xtask::groups::GROUPS`. [`check_declarations`] refuses a case whose group, peers or
//! target the table would not understand.

pub mod analytic;
pub mod bandwidth;
pub mod concurrency;
pub mod contraction;
pub mod distributed;
pub mod einsum;
pub(crate) mod flat;
pub mod gemm;
pub mod in_cache;
pub mod overhead;
pub mod streaming;
pub mod structural;
pub mod tn;

use std::collections::HashSet;

use crate::suite::Case;

/// Every case at `threads` threads for the multi-threaded ones, in run order, and the
/// notes of families that have nothing to run here.
pub fn all(threads: usize, quick: bool) -> (Vec<Case>, Vec<String>) {
    let mut cases = Vec::new();
    let mut notes = Vec::new();
    cases.extend(overhead::cases(threads));
    cases.extend(concurrency::cases());
    cases.extend(bandwidth::cases(threads));
    cases.extend(streaming::cases(threads));
    cases.extend(in_cache::cases(threads));
    cases.extend(analytic::cases(threads));
    cases.extend(structural::cases(threads));
    cases.extend(gemm::cases(threads, quick));
    cases.extend(contraction::cases(threads));
    cases.extend(tn::cases(threads));
    cases.extend(einsum::cases(threads));
    let (c, n) = distributed::cases(threads, quick);
    cases.extend(c);
    notes.extend(n);
    (cases, notes)
}

/// Refuses declarations the report would misread: unknown groups or parties, a target
/// that does not parse, a limit that names no bandwidth case, duplicate names.
pub fn check_declarations(cases: &[Case]) -> Result<(), String> {
    let mut seen = HashSet::new();
    let names: HashSet<&str> = cases.iter().map(|c| c.decl.name.as_str()).collect();
    for c in cases {
        let d = &c.decl;
        if !seen.insert(d.name.as_str()) {
            return Err(format!("two cases are named `{}`", d.name));
        }
        if xtask::groups::group(&d.group).is_none() {
            return Err(format!("case `{}`: group `{}` is not in xtask::groups::GROUPS", d.name, d.group));
        }
        for p in d.peers.iter().chain(&d.references) {
            if !xtask::groups::PARTIES.iter().any(|q| q.0 == p) {
                return Err(format!("case `{}`: party `{p}` is not in xtask::groups::PARTIES", d.name));
            }
        }
        if let Some(t) = &d.target {
            xtask::target::parse(t).map_err(|e| format!("case `{}`: {e}", d.name))?;
        }
        if let Some(l) = &d.limit
            && !names.contains(l.as_str())
        {
            return Err(format!("case `{}`: its limit `{l}` is not a case", d.name));
        }
        if d.name.contains(['\t', ',', ' ']) {
            return Err(format!("case `{}`: names may not contain tabs, commas or spaces", d.name));
        }
    }
    Ok(())
}

/// Consumes one timed call's outcome: keeps the value alive until here (so the work is
/// not optimised away) and remembers the first error.
pub(crate) fn consume<T>(failure: &mut Option<String>, outcome: Result<T, strata_tensor::Error>) {
    match outcome {
        Ok(v) => drop(std::hint::black_box(v)),
        Err(e) => drop(failure.get_or_insert(e.to_string())),
    }
}

/// A thread-count suffix: `t1` for one thread, `tmax` for the run's count.
pub(crate) fn suffix(threads: usize) -> &'static str {
    if threads == 1 { "t1" } else { "tmax" }
}

/// The thread counts a case family runs at: 1, and the run's count when it is larger.
pub(crate) fn thread_counts(tmax: usize) -> Vec<usize> {
    if tmax > 1 { vec![1, tmax] } else { vec![1] }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_declaration_is_one_the_report_understands() {
        for (threads, quick) in [(1, true), (2, false), (8, true)] {
            let (cases, notes) = all(threads, quick);
            check_declarations(&cases).unwrap();
            assert!(cases.len() > 60, "{}", cases.len());
            let per_workload = if threads > 1 { 2 } else { 1 };
            assert!(cases.iter().filter(|c| c.decl.group == "tn").count() >= 12 * per_workload);
            let tn = cases.iter().filter(|c| c.decl.group == "tn").count();
            assert_eq!(cases.iter().filter(|c| c.decl.group == "einsum").count(), tn);
            assert!(notes.iter().any(|n| n.contains("distributed")));
        }
    }

    #[test]
    fn bad_declarations_are_refused() {
        let bad = |c: Case| check_declarations(&[c]).unwrap_err();
        use crate::suite::Unit;
        assert!(bad(Case::new("x", "nope", Unit::Times, 1)).contains("group `nope`"));
        assert!(bad(Case::new("x", "gemm", Unit::Times, 1).peers(&["torch"])).contains("party `torch`"));
        assert!(bad(Case::new("x", "gemm", Unit::Times, 1).target("best:faer")).contains("target"));
        assert!(bad(Case::new("x", "gemm", Unit::Times, 1).limit("stream_q")).contains("limit"));
        assert!(bad(Case::new("a,b", "gemm", Unit::Times, 1)).contains("commas"));
        let two = [Case::new("x", "gemm", Unit::Times, 1), Case::new("x", "gemm", Unit::Times, 1)];
        assert!(check_declarations(&two).unwrap_err().contains("two cases"));
    }
}
