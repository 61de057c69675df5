//! The benchmark runner behind `cargo xtask bench`: measures strata beside its Rust peers
//! case by case and appends records (`xtask::record`) to `--out`, flushing after every
//! case. Its options are `cargo xtask bench`'s (one parser, `xtask::options`) plus
//! `--out`, `--list` (declare the selected cases on stdout, measure nothing), `--only`
//! (exactly these cases), `--durations` (an earlier run's times, for the ETA) and
//! `--results` (where results for the Python peers' checks go).

use std::io::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use strata_benches::cases;
use strata_benches::subject::Strata;
use strata_benches::suite::{Case, Suite};
use xtask::options::{BenchOptions, allowed_cpus};
use xtask::progress::{Progress, read_durations};
use xtask::record::Record;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("strata-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// The cases the options select, in run order.
fn select(opts: &BenchOptions, all: Vec<Case>) -> Result<Vec<Case>, String> {
    if opts.only.is_empty() {
        return Ok(all.into_iter().filter(|c| opts.wants(&c.decl.name, &c.decl.group)).collect());
    }
    let mut all: Vec<Option<Case>> = all.into_iter().map(Some).collect();
    opts.only
        .iter()
        .map(|name| {
            all.iter_mut()
                .find(|c| c.as_ref().is_some_and(|c| &c.decl.name == name))
                .and_then(Option::take)
                .ok_or_else(|| format!("--only: no case is named `{name}`"))
        })
        .collect()
}

fn run(args: &[String]) -> Result<(), String> {
    let opts = BenchOptions::parse(args)?;
    if opts.help {
        println!("strata-bench: run through `cargo xtask bench` (see `cargo xtask bench --help`)");
        return Ok(());
    }
    opts.check_threads(allowed_cpus())?;
    let threads = match opts.threads {
        Some(n) => n,
        None => Strata::default_threads()?,
    };
    let (all, notes) = cases::all(threads, opts.quick);
    cases::check_declarations(&all)?;
    let selected = select(&opts, all)?;

    if opts.list {
        let mut out = std::io::stdout().lock();
        let mut lines = vec![Record::Info { key: "threads".into(), value: threads.to_string() }];
        lines.extend(notes.into_iter().map(Record::Note));
        lines.extend(selected.iter().map(|c| Record::Case(c.decl.clone())));
        for r in lines {
            writeln!(out, "{r}").map_err(|e| format!("stdout: {e}"))?;
        }
        return Ok(());
    }

    let out_path = opts.out.as_deref().ok_or("--out FILE is required (or --list)")?;
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out_path)
        .map_err(|e| format!("cannot open {out_path}: {e}"))?;
    let mut write = |records: &[Record]| -> Result<(), String> {
        let text: String = records.iter().map(|r| format!("{r}\n")).collect();
        out.write_all(text.as_bytes()).and_then(|_| out.flush()).map_err(|e| format!("cannot write {out_path}: {e}"))
    };
    let prior = opts
        .durations
        .as_deref()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .map(|t| read_durations(&t))
        .unwrap_or_default();
    let mut progress = Progress::new(selected.iter().map(|c| c.decl.name.clone()).collect(), prior);
    let mut suite = Suite::new(opts.quick, threads, opts.results.as_deref().map(PathBuf::from));
    let mut header = vec![Record::Info { key: "threads".into(), value: threads.to_string() }];
    header.extend(notes.into_iter().map(Record::Note));
    write(&header)?;

    for (k, case) in selected.iter().enumerate() {
        eprintln!("{}", progress.line(k));
        suite.begin(&case.decl);
        let t0 = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| (case.run)(&mut suite)));
        let seconds = t0.elapsed().as_secs_f64();
        progress.finished(seconds);
        let mut records = vec![Record::Case(case.decl.clone())];
        records.extend(suite.take_records());
        let failure = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e),
            Err(p) => Some(format!("panicked: {}", panic_text(p.as_ref()))),
        };
        if let Some(message) = failure {
            eprintln!("  {} failed: {message}", case.decl.name);
            records.push(Record::Fail { case: case.decl.name.clone(), who: "strata".into(), message });
        }
        records.push(Record::Done { case: case.decl.name.clone(), seconds });
        write(&records)?;
    }
    Ok(())
}
