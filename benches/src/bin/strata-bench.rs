//! The benchmark runner behind `cargo xtask bench`: measures strata beside its peers,
//! case by case, and writes one TSV line per party (`case unit higher_is_better who
//! median best`).
//!
//! Usage: `strata-bench --out FILE [--quick] [--filter PATTERN] [--threads N]`.

use std::process::ExitCode;

use strata_benches::subject::Strata;
use strata_benches::suite::Suite;

struct Options {
    out: String,
    quick: bool,
    filter: Option<String>,
    threads: Option<usize>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options { out: String::new(), quick: false, filter: None, threads: None };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--out" => o.out = it.next().ok_or("--out needs a file")?.clone(),
            "--quick" => o.quick = true,
            "--filter" => o.filter = Some(it.next().ok_or("--filter needs a pattern")?.clone()),
            "--threads" => {
                let v = it.next().ok_or("--threads needs a number")?;
                let n: usize = v.parse().map_err(|_| format!("--threads: `{v}` is not a whole number"))?;
                if n == 0 {
                    return Err("--threads must be at least 1".into());
                }
                o.threads = Some(n);
            }
            other => return Err(format!("unknown option `{other}`")),
        }
    }
    if o.out.is_empty() {
        return Err("--out FILE is required".into());
    }
    Ok(o)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = match parse(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("strata-bench: {e}\nusage: strata-bench --out FILE [--quick] [--filter PATTERN] [--threads N]");
            return ExitCode::FAILURE;
        }
    };
    let threads = match opts.threads.map_or_else(Strata::default_threads, Ok) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("strata-bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!("strata-bench: tmax = {threads} threads{}", if opts.quick { ", quick" } else { "" });
    let mut suite = Suite::new(opts.quick, opts.filter, threads);
    strata_benches::cases::run_all(&mut suite);
    let mut text = suite.lines().join("\n");
    text.push('\n');
    if let Err(e) = std::fs::write(&opts.out, text) {
        eprintln!("strata-bench: cannot write {}: {e}", opts.out);
        return ExitCode::FAILURE;
    }
    if suite.failures().is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!("strata-bench: {} case(s) failed:", suite.failures().len());
        for f in suite.failures() {
            eprintln!("  {f}");
        }
        ExitCode::FAILURE
    }
}
