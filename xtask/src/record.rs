//! The records the measuring processes (the Rust runner and `xtask/py/peers.py`) write,
//! one per line, tab-separated, the first field naming the kind:
//!
//! ```text
//! case   NAME GROUP UNIT HIGHER THREADS TARGET PEERS REFERENCES LIMIT   a case and what it is compared to
//! value  NAME WHO MEDIAN BEST                                         one party's figure (in the unit)
//! fail   NAME WHO MESSAGE                                             a party could not be measured
//! check  NAME WHO REL_ERR TOL                                         untimed result agreement
//! done   NAME SECONDS                                                 the case is finished
//! info   KEY VALUE                                                    machine, versions, thread counts
//! note   TEXT                                                         something the reader must know
//! ```
//!
//! `HIGHER` is 1 when a larger figure is better; lists are comma-separated; `-` stands
//! for none. Each process appends records as it goes (flushing after every case), so a
//! process that dies keeps what it finished.

use std::fmt;

/// The declaration of one case.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseDecl {
    /// Unique name, e.g. `gemm_f64_1024_t1`.
    pub name: String,
    /// The group it is shown in (`gemm`, `tn`, ...; see [`crate::groups`]).
    pub group: String,
    /// `GFLOP/s`, `GB/s`, `ns` or `x`.
    pub unit: String,
    /// Whether a larger figure is better.
    pub higher_is_better: bool,
    /// Threads every party uses.
    pub threads: usize,
    /// The target (see [`crate::target`]), if the issue sets one.
    pub target: Option<String>,
    /// The peers strata is compared to (the ratio is against the best of them).
    pub peers: Vec<String>,
    /// Hardware references shown beside it, never part of the ratio.
    pub references: Vec<String>,
    /// The bandwidth case that bounds this one (memory-bound cases).
    pub limit: Option<String>,
}

/// One line of a measuring process's output.
#[derive(Clone, Debug, PartialEq)]
pub enum Record {
    /// A case and what it is compared to.
    Case(CaseDecl),
    /// One party's median and best figure, in the case's unit.
    Value {
        /// The case.
        case: String,
        /// `strata`, a peer or a reference.
        who: String,
        /// Median over the repetitions.
        median: f64,
        /// Best repetition (highest or lowest by the case's direction).
        best: f64,
    },
    /// A party of a case could not be measured (`who` is `strata` for the case itself).
    Fail {
        /// The case.
        case: String,
        /// Who failed.
        who: String,
        /// Why, as a person can act on it.
        message: String,
    },
    /// The untimed result check of one party against the reference.
    Check {
        /// The case.
        case: String,
        /// Whose result was compared.
        who: String,
        /// Largest difference relative to the reference's largest magnitude.
        rel_err: f64,
        /// The tolerance it had to stay within.
        tol: f64,
    },
    /// The case is finished after this many seconds of wall time.
    Done {
        /// The case.
        case: String,
        /// Wall time.
        seconds: f64,
    },
    /// A fact about the run: machine, versions, threads.
    Info {
        /// e.g. `cpu_model`, `version:numpy`.
        key: String,
        /// Its value.
        value: String,
    },
    /// A note to show under the table.
    Note(String),
}

/// Removes what would break the line format (tabs, newlines).
pub fn clean(text: &str) -> String {
    text.chars().map(|c| if c == '\t' || c == '\n' || c == '\r' { ' ' } else { c }).collect()
}

fn list(items: &[String]) -> String {
    if items.is_empty() { "-".into() } else { items.join(",") }
}

fn opt(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or("-")
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Record::Case(c) => write!(
                f,
                "case\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                c.name,
                c.group,
                c.unit,
                u8::from(c.higher_is_better),
                c.threads,
                opt(&c.target),
                list(&c.peers),
                list(&c.references),
                opt(&c.limit)
            ),
            Record::Value { case, who, median, best } => write!(f, "value\t{case}\t{who}\t{median}\t{best}"),
            Record::Fail { case, who, message } => write!(f, "fail\t{case}\t{who}\t{}", clean(message)),
            Record::Check { case, who, rel_err, tol } => write!(f, "check\t{case}\t{who}\t{rel_err}\t{tol}"),
            Record::Done { case, seconds } => write!(f, "done\t{case}\t{seconds}"),
            Record::Info { key, value } => write!(f, "info\t{key}\t{}", clean(value)),
            Record::Note(text) => write!(f, "note\t{}", clean(text)),
        }
    }
}

fn split_list(s: &str) -> Vec<String> {
    if s == "-" { Vec::new() } else { s.split(',').filter(|x| !x.is_empty()).map(str::to_string).collect() }
}

fn split_opt(s: &str) -> Option<String> {
    (s != "-").then(|| s.to_string())
}

impl Record {
    /// Parses one line.
    pub fn parse(line: &str) -> Result<Record, String> {
        let f: Vec<&str> = line.split('\t').collect();
        let want = |n: usize| {
            if f.len() == n {
                Ok(())
            } else {
                Err(format!("a `{}` record has {n} fields, this line has {}: `{line}`", f[0], f.len()))
            }
        };
        let num = |s: &str| s.parse::<f64>().map_err(|_| format!("`{s}` is not a number in `{line}`"));
        Ok(match f[0] {
            "case" => {
                want(10)?;
                Record::Case(CaseDecl {
                    name: f[1].into(),
                    group: f[2].into(),
                    unit: f[3].into(),
                    higher_is_better: f[4] == "1",
                    threads: f[5].parse().map_err(|_| format!("`{}` is not a thread count in `{line}`", f[5]))?,
                    target: split_opt(f[6]),
                    peers: split_list(f[7]),
                    references: split_list(f[8]),
                    limit: split_opt(f[9]),
                })
            }
            "value" => {
                want(5)?;
                Record::Value { case: f[1].into(), who: f[2].into(), median: num(f[3])?, best: num(f[4])? }
            }
            "fail" => {
                want(4)?;
                Record::Fail { case: f[1].into(), who: f[2].into(), message: f[3].into() }
            }
            "check" => {
                want(5)?;
                Record::Check { case: f[1].into(), who: f[2].into(), rel_err: num(f[3])?, tol: num(f[4])? }
            }
            "done" => {
                want(3)?;
                Record::Done { case: f[1].into(), seconds: num(f[2])? }
            }
            "info" => {
                want(3)?;
                Record::Info { key: f[1].into(), value: f[2].into() }
            }
            "note" => {
                want(2)?;
                Record::Note(f[1].into())
            }
            other => return Err(format!("unknown record kind `{other}` in `{line}`")),
        })
    }

    /// Parses every non-empty line of a process's output, naming the source in errors.
    pub fn parse_all(text: &str, source: &str) -> Result<Vec<Record>, String> {
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| Record::parse(l).map_err(|e| format!("{source}:{}: {e}", i + 1)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_record_round_trips() {
        let records = [
            Record::Case(CaseDecl {
                name: "sum_f64_8m".into(),
                group: "streaming".into(),
                unit: "GB/s".into(),
                higher_is_better: true,
                threads: 2,
                target: Some("ref:rust_loop:0.95".into()),
                peers: vec!["numpy".into(), "jax".into()],
                references: vec!["rust_loop".into()],
                limit: Some("stream_read".into()),
            }),
            Record::Case(CaseDecl {
                name: "tiny_add_ns".into(),
                group: "latency".into(),
                unit: "ns".into(),
                higher_is_better: false,
                threads: 1,
                target: None,
                peers: vec![],
                references: vec![],
                limit: None,
            }),
            Record::Value { case: "sum".into(), who: "strata".into(), median: 1.5, best: 2.25e-9 },
            Record::Fail { case: "sum".into(), who: "numpy".into(), message: "a\tb\nc".into() },
            Record::Check { case: "sum".into(), who: "jax".into(), rel_err: 1e-15, tol: 1e-12 },
            Record::Done { case: "sum".into(), seconds: 0.5 },
            Record::Info { key: "cpu_model".into(), value: "AMD EPYC".into() },
            Record::Note("numpy is absent".into()),
        ];
        let text: String = records.iter().map(|r| format!("{r}\n")).collect();
        let back = Record::parse_all(&text, "t").unwrap();
        assert_eq!(back.len(), records.len());
        for (a, b) in records.iter().zip(&back) {
            match (a, b) {
                (Record::Fail { message: m, .. }, Record::Fail { message: n, .. }) => assert_eq!(n, &clean(m)),
                _ => assert_eq!(a, b),
            }
        }
    }

    #[test]
    fn malformed_lines_name_the_line() {
        let e = Record::parse_all("done\tx\t1\nvalue\tx\tstrata\tfast\t1\n", "rust.tsv").unwrap_err();
        assert!(e.starts_with("rust.tsv:2:") && e.contains("`fast` is not a number"), "{e}");
        assert!(Record::parse("value\tx\tstrata\t1").unwrap_err().contains("5 fields"));
        assert!(Record::parse("bogus\tx").unwrap_err().contains("unknown record kind"));
    }
}
