//! `cargo xtask`: project tasks for strata.
//!
//! `cargo xtask bench` builds the benchmark runner in release mode, measures strata and
//! its peers side by side in one run, adds numpy/JAX figures when Python has them, prints
//! the table and writes `target/strata-bench/summary.json` and `summary.svg`.

mod report;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const HELP: &str = "\
cargo xtask <task>

Tasks:
  bench [--quick] [--filter PATTERN] [--threads N]
        Build in release mode and run the benchmark suite: strata beside faer, OpenBLAS,
        ndarray, plain Rust loops and memcpy (and numpy/JAX when python3 imports them).
        Prints a table and writes target/strata-bench/summary.json and summary.svg.
        --quick        short measurements (whole suite in about 3 minutes on 2 cores)
        --filter P     only cases whose name contains P
        --threads N    thread count for the multi-threaded cases (default: strata's budget)
  help  Print this message.
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("bench") => match bench(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("xtask bench: {e}");
                ExitCode::FAILURE
            }
        },
        Some("help") | Some("--help") | Some("-h") | None => {
            print!("{HELP}");
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("xtask: unknown task `{other}`\n\n{HELP}");
            ExitCode::FAILURE
        }
    }
}

/// Options of `cargo xtask bench`, validated before anything is built.
struct BenchOptions {
    quick: bool,
    filter: Option<String>,
    threads: Option<usize>,
}

fn parse_bench_args(args: &[String]) -> Result<BenchOptions, String> {
    let mut opts = BenchOptions { quick: false, filter: None, threads: None };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => opts.quick = true,
            "--filter" => opts.filter = Some(it.next().ok_or("--filter needs a pattern")?.clone()),
            "--threads" => {
                let v = it.next().ok_or("--threads needs a number")?;
                let n: usize = v.parse().map_err(|_| format!("--threads: `{v}` is not a whole number"))?;
                if n == 0 {
                    return Err("--threads must be at least 1".into());
                }
                opts.threads = Some(n);
            }
            other => return Err(format!("unknown option `{other}` (see `cargo xtask help`)")),
        }
    }
    Ok(opts)
}

fn workspace_root() -> PathBuf {
    // xtask lives one level below the workspace root.
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."))
}

/// True when the system OpenBLAS (Debian's libopenblas-dev) can be linked.
fn system_openblas_present() -> bool {
    let candidates = [
        "/usr/lib/x86_64-linux-gnu/libopenblas.so",
        "/usr/lib/aarch64-linux-gnu/libopenblas.so",
        "/usr/lib/libopenblas.so",
        "/usr/lib64/libopenblas.so",
    ];
    candidates.iter().any(|p| Path::new(p).exists())
}

fn bench(args: &[String]) -> Result<(), String> {
    let opts = parse_bench_args(args)?;
    let root = workspace_root();
    let out_dir = root.join("target").join("strata-bench");
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;

    let openblas = system_openblas_present();
    let mut notes = Vec::new();
    if !openblas {
        notes.push("OpenBLAS: system library not found (apt install libopenblas-dev); its column is empty".to_string());
    }

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = Command::new(&cargo);
    build.current_dir(&root).args(["build", "--release", "-p", "strata-benches", "--bin", "strata-bench"]);
    if openblas {
        build.args(["--features", "openblas"]);
    }
    eprintln!("xtask bench: building the runner in release mode ...");
    let status = build.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("building strata-bench failed".into());
    }

    let rust_json = out_dir.join("rust-cases.tsv");
    let runner = root.join("target").join("release").join("strata-bench");
    let mut run = Command::new(&runner);
    run.arg("--out").arg(&rust_json);
    if opts.quick {
        run.arg("--quick");
    }
    if let Some(f) = &opts.filter {
        run.args(["--filter", f]);
    }
    if let Some(n) = opts.threads {
        run.args(["--threads", &n.to_string()]);
    }
    eprintln!("xtask bench: measuring strata and the Rust peers ...");
    let status = run.status().map_err(|e| format!("cannot run {}: {e}", runner.display()))?;
    if !status.success() {
        return Err("the benchmark runner failed".into());
    }
    let mut cases = report::read_cases(&rust_json)?;

    // Python peers: measured by a small script shipped here, only when they import.
    let py_json = out_dir.join("python-cases.tsv");
    let script = root.join("xtask").join("py").join("peers.py");
    let mut py = Command::new("python3");
    py.arg(&script).arg("--out").arg(&py_json);
    if opts.quick {
        py.arg("--quick");
    }
    if let Some(f) = &opts.filter {
        py.args(["--filter", f]);
    }
    if let Some(n) = opts.threads {
        py.args(["--threads", &n.to_string()]);
    }
    match py.output() {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stderr);
            notes.extend(text.lines().filter(|l| l.starts_with("note:")).map(|l| l[5..].trim().to_string()));
            let py_cases = report::read_cases(&py_json)?;
            report::merge_peers(&mut cases, py_cases);
        }
        Ok(out) => notes.push(format!(
            "numpy/JAX: python3 peer script failed ({}); columns empty",
            String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("no output")
        )),
        Err(e) => notes.push(format!("numpy/JAX: python3 not runnable ({e}); columns empty")),
    }

    for c in &mut cases {
        c.ratio = report::ratio(c);
    }
    print!("{}", report::table(&cases));
    for n in &notes {
        println!("note: {n}");
    }
    let summary = out_dir.join("summary.json");
    std::fs::write(&summary, report::to_json(&cases))
        .map_err(|e| format!("cannot write {}: {e}", summary.display()))?;
    let svg = out_dir.join("summary.svg");
    std::fs::write(&svg, report::to_svg(&cases)).map_err(|e| format!("cannot write {}: {e}", svg.display()))?;
    println!("wrote {} and {}", summary.display(), svg.display());
    Ok(())
}
