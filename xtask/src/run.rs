//! Running a measuring process over a plan of cases so that one bad case costs only
//! itself: the process reports each finished case (a `done` record); if it dies (a
//! crash, an abort, a signal), the case it was in is recorded as failed with the
//! process's exit status, and a fresh process takes the cases after it.

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

use crate::record::Record;

/// How one process run ended.
#[derive(Clone, Debug, PartialEq)]
pub struct Ended {
    /// The records it wrote.
    pub records: Vec<Record>,
    /// `None` when it exited normally (whatever it measured), else how it died.
    pub died: Option<String>,
}

/// Runs `plan` through `run_once` (which starts one process on the given cases) until
/// every case is done or failed. Returns every record and the cases the processes
/// never reported (when one exited normally without finishing its plan).
pub fn run_resuming(plan: &[String], mut run_once: impl FnMut(&[String]) -> Ended) -> (Vec<Record>, Vec<String>) {
    let mut remaining: Vec<String> = plan.to_vec();
    let mut all = Vec::new();
    while !remaining.is_empty() {
        let ended = run_once(&remaining);
        let done: HashSet<String> = ended
            .records
            .iter()
            .filter_map(|r| match r {
                Record::Done { case, .. } => Some(case.clone()),
                _ => None,
            })
            .collect();
        all.extend(ended.records);
        remaining.retain(|c| !done.contains(c));
        match ended.died {
            None => break,
            Some(how) if !remaining.is_empty() => {
                let case = remaining.remove(0);
                all.push(Record::Fail {
                    case: case.clone(),
                    who: "strata".into(),
                    message: format!(
                        "the measuring process died during this case ({how}); the cases after it ran in a new process"
                    ),
                });
                all.push(Record::Done { case, seconds: 0.0 });
            }
            Some(_) => break,
        }
    }
    (all, remaining)
}

/// Records in `text`, keeping every line that parses: a process killed mid-line
/// leaves a torn last line, which becomes a note instead of losing the file.
pub fn read_records_lenient(text: &str, source: &str) -> Vec<Record> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        match Record::parse(line) {
            Ok(r) => out.push(r),
            Err(e) => out.push(Record::Note(format!("{source}:{}: unreadable record ignored ({e})", i + 1))),
        }
    }
    out
}

/// Runs `cmd` once with `--out FILE --only CASES`, stderr and stdout passed through.
pub fn run_process(mut cmd: Command, out: &Path, cases: &[String]) -> Ended {
    let _ = std::fs::remove_file(out);
    cmd.arg(format!("--out={}", out.display())).arg(format!("--only={}", cases.join(",")));
    let status = cmd.status();
    let text = std::fs::read_to_string(out).unwrap_or_default();
    let records = read_records_lenient(&text, &out.display().to_string());
    let died = match status {
        Err(e) => Some(format!("could not start: {e}")),
        Ok(s) if s.success() => None,
        Ok(s) => Some(describe_exit(s)),
    };
    Ended { records, died }
}

fn describe_exit(s: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = s.signal() {
            let name = match sig {
                6 => " (SIGABRT: an abort, e.g. allocation failure)",
                9 => " (SIGKILL: killed, e.g. by the out-of-memory killer)",
                11 => " (SIGSEGV)",
                _ => "",
            };
            return format!("killed by signal {sig}{name}");
        }
    }
    match s.code() {
        Some(c) => format!("exit code {c}"),
        None => "no exit code".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done(c: &str) -> Record {
        Record::Done { case: c.into(), seconds: 1.0 }
    }

    #[test]
    fn a_process_that_dies_costs_only_its_case() {
        let plan: Vec<String> = ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
        let mut calls: Vec<Vec<String>> = Vec::new();
        let (records, left) = run_resuming(&plan, |cases| {
            calls.push(cases.to_vec());
            match cases[0].as_str() {
                // Finishes a, dies in b.
                "a" => Ended { records: vec![done("a")], died: Some("killed by signal 6".into()) },
                // Starts again at c, finishes c and d.
                _ => Ended { records: vec![done("c"), done("d")], died: None },
            }
        });
        assert_eq!(calls, vec![plan.clone(), vec!["c".to_string(), "d".to_string()]]);
        assert!(left.is_empty());
        let fail = records.iter().find_map(|r| match r {
            Record::Fail { case, message, .. } => Some((case.clone(), message.clone())),
            _ => None,
        });
        let (case, message) = fail.unwrap();
        assert_eq!(case, "b");
        assert!(message.contains("signal 6"), "{message}");
    }

    #[test]
    fn a_normal_exit_leaves_unreported_cases_to_the_caller() {
        let plan: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
        let (_, left) = run_resuming(&plan, |_| Ended { records: vec![done("a")], died: None });
        assert_eq!(left, ["b"]);
        // A process that dies at once on every case still ends.
        let mut n = 0;
        let (records, left) = run_resuming(&plan, |_| {
            n += 1;
            Ended { records: vec![], died: Some("exit code 101".into()) }
        });
        assert_eq!(n, 2);
        assert!(left.is_empty());
        assert_eq!(records.iter().filter(|r| matches!(r, Record::Fail { .. })).count(), 2);
    }

    #[test]
    fn a_torn_last_line_becomes_a_note() {
        let r = read_records_lenient("done\ta\t1\nvalue\tb\tstrata\t1.", "x.tsv");
        assert_eq!(r.len(), 2);
        assert!(matches!(&r[1], Record::Note(n) if n.contains("x.tsv:2")));
    }
}
