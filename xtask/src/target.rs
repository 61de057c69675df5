//! Targets: what an issue asks of a case, written once beside the case as a short spec,
//! stated in words in the table and the plot, and checked (never asserted in tests).
//!
//! A spec is one or more clauses joined by `&`:
//! - `best:faer+openblas:0.97`: strata at least 0.97 × the best of these peers (`*` for
//!   every peer of the case);
//! - `ref:rust_loop:0.9`: strata at least 0.9 × this party (a reference or a peer);
//! - `max:250`, `min:1.8`: strata's own figure at most / at least this.
//!
//! "At least F ×" follows the case's direction: for times it means strata's time is at
//! most 1/F of the other's.

use std::collections::BTreeMap;

use crate::groups::spoken;

/// One clause of a target.
#[derive(Clone, Debug, PartialEq)]
pub enum Clause {
    /// At least `factor` × the best of these peers (empty: all of the case's peers).
    Best(Vec<String>, f64),
    /// At least `factor` × this party.
    Ref(String, f64),
    /// strata's figure at most this.
    Max(f64),
    /// strata's figure at least this.
    Min(f64),
}

/// Whether a target was reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Every clause holds.
    Met,
    /// Some clause fails.
    Missed,
    /// A figure a clause needs was not measured (a peer absent, a case failed).
    Unknown,
}

impl Status {
    /// The word shown in the table.
    pub fn word(self) -> &'static str {
        match self {
            Status::Met => "met",
            Status::Missed => "MISSED",
            Status::Unknown => "not judged (a figure is missing)",
        }
    }
}

/// Parses a spec.
pub fn parse(spec: &str) -> Result<Vec<Clause>, String> {
    spec.split('&')
        .map(|c| {
            let parts: Vec<&str> = c.split(':').collect();
            let num = |s: &str| s.parse::<f64>().map_err(|_| format!("target `{spec}`: `{s}` is not a number"));
            match parts.as_slice() {
                ["best", peers, f] => {
                    let list = if *peers == "*" { Vec::new() } else { peers.split('+').map(str::to_string).collect() };
                    Ok(Clause::Best(list, num(f)?))
                }
                ["ref", who, f] => Ok(Clause::Ref(who.to_string(), num(f)?)),
                ["max", v] => Ok(Clause::Max(num(v)?)),
                ["min", v] => Ok(Clause::Min(num(v)?)),
                _ => Err(format!("target `{spec}`: `{c}` is not best:PEERS:F, ref:WHO:F, max:V or min:V")),
            }
        })
        .collect()
}

fn factor_words(f: f64) -> String {
    if f == 1.0 { "at least as fast as".to_string() } else { format!("at least {f}x") }
}

fn join_and(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The target in words, e.g. "at least 0.97x the best of faer and OpenBLAS".
pub fn words(clauses: &[Clause], unit: &str) -> String {
    let unit_suffix = match unit {
        "ns" => " ns per call".to_string(),
        "x" => String::new(),
        u => format!(" {u}"),
    };
    let parts: Vec<String> = clauses
        .iter()
        .map(|c| match c {
            Clause::Best(peers, f) if peers.is_empty() => format!("{} the best peer", factor_words(*f)),
            Clause::Best(peers, f) if peers.len() == 1 => format!("{} {}", factor_words(*f), spoken(&peers[0])),
            Clause::Best(peers, f) => {
                let names: Vec<&str> = peers.iter().map(|p| spoken(p)).collect();
                format!("{} the best of {}", factor_words(*f), join_and(&names))
            }
            Clause::Ref(who, f) if *f == 1.0 => format!("no slower than {}", spoken(who)),
            Clause::Ref(who, f) => format!("{} {}", factor_words(*f), spoken(who)),
            Clause::Max(v) => format!("at most {v}{unit_suffix}"),
            Clause::Min(v) => format!("at least {v}{unit_suffix}"),
        })
        .collect();
    parts.join(" and ")
}

/// The figures a target is judged on.
pub struct Figures<'a> {
    /// strata's median.
    pub strata: Option<f64>,
    /// Every other party's median.
    pub others: &'a BTreeMap<String, f64>,
    /// The case's peers (for `best:*`).
    pub peers: &'a [String],
    /// Whether larger is better.
    pub higher_is_better: bool,
}

/// Judges the target on the figures.
pub fn judge(clauses: &[Clause], fig: &Figures<'_>) -> Status {
    let mut status = Status::Met;
    for c in clauses {
        let ok = match c {
            Clause::Best(peers, f) => {
                let names = if peers.is_empty() { fig.peers } else { peers.as_slice() };
                let values = names.iter().filter_map(|p| fig.others.get(p).copied());
                let best = if fig.higher_is_better {
                    values.fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
                } else {
                    values.fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.min(v))))
                };
                at_least(fig, best, *f)
            }
            Clause::Ref(who, f) => at_least(fig, fig.others.get(who).copied(), *f),
            Clause::Max(v) => fig.strata.map(|s| s <= *v),
            Clause::Min(v) => fig.strata.map(|s| s >= *v),
        };
        match ok {
            Some(true) => {}
            Some(false) => return Status::Missed,
            None => status = Status::Unknown,
        }
    }
    status
}

fn at_least(fig: &Figures<'_>, base: Option<f64>, factor: f64) -> Option<bool> {
    let (s, b) = (fig.strata?, base?);
    Some(if fig.higher_is_better { s >= factor * b } else { s * factor <= b })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures<'a>(strata: f64, others: &'a BTreeMap<String, f64>, peers: &'a [String], hib: bool) -> Figures<'a> {
        Figures { strata: Some(strata), others, peers, higher_is_better: hib }
    }

    #[test]
    fn specs_read_as_sentences() {
        let w = |s: &str, u: &str| words(&parse(s).unwrap(), u);
        assert_eq!(w("best:faer+openblas:0.97", "GFLOP/s"), "at least 0.97x the best of faer and OpenBLAS");
        assert_eq!(w("best:*:1", "GFLOP/s"), "at least as fast as the best peer");
        assert_eq!(w("ref:memcpy:0.6", "GB/s"), "at least 0.6x memcpy");
        assert_eq!(
            w("ref:rust_loop:0.95&ref:strata_1t:1", "GB/s"),
            "at least 0.95x the plain Rust loop and no slower than strata at 1 thread"
        );
        assert_eq!(w("max:250", "ns"), "at most 250 ns per call");
        assert_eq!(w("min:1.8", "x"), "at least 1.8");
        assert_eq!(w("best:numpy:1.5", "GFLOP/s"), "at least 1.5x numpy");
        assert!(parse("best:faer").is_err());
        assert!(parse("ref:numpy:fast").unwrap_err().contains("`fast` is not a number"));
    }

    #[test]
    fn judging_follows_the_direction_of_the_case() {
        let mut others = BTreeMap::new();
        others.insert("faer".to_string(), 100.0);
        others.insert("numpy".to_string(), 200.0);
        let peers = vec!["faer".to_string(), "numpy".to_string()];
        let t = parse("best:faer+openblas:0.97").unwrap();
        assert_eq!(judge(&t, &figures(97.0, &others, &peers, true)), Status::Met);
        assert_eq!(judge(&t, &figures(96.9, &others, &peers, true)), Status::Missed);
        let all = parse("best:*:1").unwrap();
        assert_eq!(judge(&all, &figures(150.0, &others, &peers, true)), Status::Missed);
        // Times: 0.5x numpy's 200 ns means at most 400 ns.
        let t = parse("ref:numpy:0.5").unwrap();
        assert_eq!(judge(&t, &figures(400.0, &others, &peers, false)), Status::Met);
        assert_eq!(judge(&t, &figures(401.0, &others, &peers, false)), Status::Missed);
        // A missing figure leaves it unjudged, unless another clause already failed.
        let t = parse("ref:jax:1&max:10").unwrap();
        assert_eq!(judge(&t, &figures(5.0, &others, &peers, false)), Status::Unknown);
        assert_eq!(judge(&t, &figures(50.0, &others, &peers, false)), Status::Missed);
        let none = Figures { strata: None, others: &others, peers: &peers, higher_is_better: true };
        assert_eq!(judge(&parse("min:1").unwrap(), &none), Status::Unknown);
    }
}
