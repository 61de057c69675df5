//! The one argument parser of the bench: `cargo xtask bench` and the `strata-bench`
//! runner it starts both read their options through [`BenchOptions::parse`], so an option
//! means the same thing, with the same checks, in both.
//!
//! Both `--name value` and `--name=value` work; `--help` prints [`BENCH_HELP`].

/// What `cargo xtask bench --help` prints.
pub const BENCH_HELP: &str = "\
cargo xtask bench [OPTIONS]

Builds the benchmark runner in release mode and measures strata beside its peers in one
run: faer, OpenBLAS (found through pkg-config), ndarray, plain Rust loops and memcpy, and
numpy and JAX from a Python environment the bench creates on first use under the target
directory (pinned versions from xtask/py/requirements.txt, installed with pip).
Prints a table and writes, under <target>/strata-bench/:
  summary.json   every figure, the peers' versions, the machine and the run
  summary.svg    the plot (and summary.png when rsvg-convert, inkscape or ImageMagick is present)

Options:
  --quick            short measurements (5 repetitions of ~40 ms per party)
  --filter PATTERN   only the cases whose name or group contains PATTERN (repeatable)
  --threads N        threads of the multi-threaded cases (default: strata's budget;
                     at most the CPUs this process may use)
  --no-python        skip numpy and JAX (their columns read `absent`)
  --python PATH      measure numpy and JAX with this interpreter instead of the bench's
                     own environment (it must import numpy, jax and threadpoolctl)
  --help             print this message

Also: `cargo xtask report` prints the table and redraws the plot of the last run from
summary.json without measuring anything.
";

/// Options of one bench run, as given on the command line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BenchOptions {
    /// `--quick`: short measurements.
    pub quick: bool,
    /// `--filter`: substrings of case or group names; empty runs everything.
    pub filters: Vec<String>,
    /// `--threads`: the thread count of the multi-threaded cases.
    pub threads: Option<usize>,
    /// `--no-python`: leave numpy and JAX out.
    pub no_python: bool,
    /// `--python`: the interpreter to measure numpy and JAX with.
    pub python: Option<String>,
    /// `--help` was asked for.
    pub help: bool,
    /// Runner only: the file the runner writes its records to.
    pub out: Option<String>,
    /// Runner only: print the cases that would run, measure nothing.
    pub list: bool,
    /// Runner only: exactly these cases (comma-separated names), in this order.
    pub only: Vec<String>,
    /// Runner only: seconds each case took in an earlier run, for the ETA.
    pub durations: Option<String>,
    /// Runner only: the folder where cases leave results for the peers' checks.
    pub results: Option<String>,
}

/// Options that take a value, with what the value is (for error messages).
const VALUED: [(&str, &str); 7] = [
    ("filter", "a pattern"),
    ("threads", "a number"),
    ("python", "a path"),
    ("out", "a file"),
    ("only", "case names"),
    ("durations", "a file"),
    ("results", "a folder"),
];
const FLAGS: [&str; 4] = ["quick", "no-python", "help", "list"];

impl BenchOptions {
    /// Parses `args` (without the program name and the `bench` task word).
    pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<Self, String> {
        let mut o = BenchOptions::default();
        let mut it = args.iter().map(AsRef::as_ref);
        while let Some(arg) = it.next() {
            if arg == "-h" {
                o.help = true;
                continue;
            }
            let Some(body) = arg.strip_prefix("--") else {
                return Err(format!("unexpected argument `{arg}` (options start with --; see --help)"));
            };
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (body, None),
            };
            if FLAGS.contains(&name) {
                if inline.is_some() {
                    return Err(format!("--{name} takes no value"));
                }
                match name {
                    "quick" => o.quick = true,
                    "no-python" => o.no_python = true,
                    "help" => o.help = true,
                    _ => o.list = true,
                }
                continue;
            }
            let Some(&(_, what)) = VALUED.iter().find(|(n, _)| *n == name) else {
                return Err(format!("unknown option `--{name}` (see --help)"));
            };
            let value = match inline {
                Some(v) => v.to_string(),
                None => it.next().map(str::to_string).ok_or_else(|| format!("--{name} needs {what}"))?,
            };
            if value.is_empty() {
                return Err(format!("--{name} needs {what}, got an empty value"));
            }
            match name {
                "filter" => o.filters.push(value),
                "threads" => o.threads = Some(parse_threads(&value)?),
                "python" => o.python = Some(value),
                "out" => o.out = Some(value),
                "only" => o.only.extend(value.split(',').filter(|s| !s.is_empty()).map(str::to_string)),
                "durations" => o.durations = Some(value),
                _ => o.results = Some(value),
            }
        }
        Ok(o)
    }

    /// Whether a case passes the filters (any of them, on its name or its group).
    pub fn wants(&self, case: &str, group: &str) -> bool {
        self.filters.is_empty() || self.filters.iter().any(|f| case.contains(f.as_str()) || group == f)
    }

    /// The arguments that give the runner (or the Python peers) these options, less the
    /// runner-only ones.
    pub fn to_args(&self) -> Vec<String> {
        let mut a = Vec::new();
        if self.quick {
            a.push("--quick".to_string());
        }
        for f in &self.filters {
            a.push(format!("--filter={f}"));
        }
        if let Some(n) = self.threads {
            a.push(format!("--threads={n}"));
        }
        a
    }

    /// Refuses `--threads` above the CPUs this process may use.
    pub fn check_threads(&self, allowed: usize) -> Result<(), String> {
        match self.threads {
            Some(n) if n > allowed => Err(format!(
                "--threads {n}: this process may use {allowed} CPU{} (its affinity mask); \
                 more threads than CPUs would measure time-slicing, not strata",
                if allowed == 1 { "" } else { "s" }
            )),
            _ => Ok(()),
        }
    }
}

fn parse_threads(v: &str) -> Result<usize, String> {
    let n: usize = v.parse().map_err(|_| format!("--threads: `{v}` is not a whole number"))?;
    if n == 0 {
        return Err("--threads must be at least 1".into());
    }
    Ok(n)
}

/// The CPUs this process may run on: its affinity mask (`Cpus_allowed_list` of
/// `/proc/self/status` on Linux), else what the standard library reports.
pub fn allowed_cpus() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).and_then(|list| cpulist_len(list.trim()))
        })
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1)
}

/// The number of CPUs in a Linux cpulist (`0-3,8,10-11`); `None` if it does not parse.
pub fn cpulist_len(list: &str) -> Option<usize> {
    let mut n = 0;
    for part in list.split(',').filter(|p| !p.is_empty()) {
        n += match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
                b.checked_sub(a)? + 1
            }
            None => {
                part.parse::<usize>().ok()?;
                1
            }
        };
    }
    (n > 0).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_option_forms_parse_the_same() {
        let a = BenchOptions::parse(&["--quick", "--filter", "gemm", "--threads", "2"]).unwrap();
        let b = BenchOptions::parse(&["--quick", "--filter=gemm", "--threads=2"]).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.filters, ["gemm"]);
        assert_eq!(a.threads, Some(2));
        assert_eq!(BenchOptions::parse(&a.to_args()).unwrap(), a);
        let r = BenchOptions::parse(&["--out=x.tsv", "--only", "a,b", "--only=c", "--list", "--no-python"]).unwrap();
        assert_eq!(r.out.as_deref(), Some("x.tsv"));
        assert_eq!(r.only, ["a", "b", "c"]);
        assert!(r.list && r.no_python);
        assert!(BenchOptions::parse(&["--help"]).unwrap().help);
        assert!(BenchOptions::parse(&["-h"]).unwrap().help);
    }

    #[test]
    fn bad_options_are_errors_that_say_what_is_wrong() {
        let err = |args: &[&str]| BenchOptions::parse(args).unwrap_err();
        assert!(err(&["--threads"]).contains("needs a number"));
        assert!(err(&["--threads=0"]).contains("at least 1"));
        assert!(err(&["--threads", "two"]).contains("`two` is not a whole number"));
        assert!(err(&["--filter="]).contains("empty"));
        assert!(err(&["--quick=yes"]).contains("takes no value"));
        assert!(err(&["--fast"]).contains("unknown option `--fast`"));
        assert!(err(&["gemm"]).contains("unexpected argument `gemm`"));
    }

    #[test]
    fn threads_above_the_allowed_cpus_are_refused() {
        let o = BenchOptions::parse(&["--threads", "4"]).unwrap();
        assert!(o.check_threads(2).unwrap_err().contains("may use 2 CPUs"));
        assert!(o.check_threads(4).is_ok());
        assert!(BenchOptions::default().check_threads(1).is_ok());
        assert!(allowed_cpus() >= 1);
    }

    #[test]
    fn filters_match_names_or_whole_groups() {
        let o = BenchOptions::parse(&["--filter", "tn", "--filter", "sum_"]).unwrap();
        assert!(o.wants("sum_f64_1k", "streaming"));
        assert!(o.wants("mps_env_chi64_d2_t1", "tn"));
        assert!(!o.wants("gemm_f64_1024_t1", "gemm"));
        assert!(BenchOptions::default().wants("anything", "any"));
    }

    #[test]
    fn cpulists_count_their_cpus() {
        assert_eq!(cpulist_len("0-3,8,10-11"), Some(7));
        assert_eq!(cpulist_len("0"), Some(1));
        assert_eq!(cpulist_len(""), None);
        assert_eq!(cpulist_len("3-1"), None);
        assert_eq!(cpulist_len("x"), None);
    }
}
