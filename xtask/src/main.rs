//! `cargo xtask`: project tasks for strata. See the library's docs for how a bench run
//! goes and how to add a case or a group.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use xtask::groups::{GROUPS, PYTHON_PEERS};
use xtask::json::Json;
use xtask::machine;
use xtask::options::{BENCH_HELP, BenchOptions, allowed_cpus};
use xtask::progress::read_durations;
use xtask::pyenv::{self, PythonPeers};
use xtask::record::{CaseDecl, Record};
use xtask::run::{self, run_resuming};
use xtask::summary::{PeerInfo, Summary};
use xtask::{plot, table};

const HELP: &str = "\
cargo xtask <task>

Tasks:
  bench [OPTIONS]   measure strata beside its peers; `cargo xtask bench --help` for the options
  report            print the table and redraw the plot of the last bench run (no measuring)
  help              print this message
";

/// OpenBLAS's setting of how long its idle threads spin (log2 of cycles, 4 to 30).
const OPENBLAS_THREAD_TIMEOUT: &str = "OPENBLAS_THREAD_TIMEOUT";

/// OpenBLAS's idle threads spin (`sched_yield`) for 2^28 cycles after each call by
/// default, on the CPUs the next party measures on, so the OpenBLAS peer's (and numpy's)
/// leftovers would be charged to whoever runs next. 2^4 cycles makes them sleep at once.
/// A value the user set is kept.
fn quiet_openblas_threads(cmd: &mut Command) {
    if std::env::var_os(OPENBLAS_THREAD_TIMEOUT).is_none() {
        cmd.env(OPENBLAS_THREAD_TIMEOUT, "4");
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("bench") => bench(&args[1..]),
        Some("report") => report(&args[1..]),
        Some("help") | Some("--help") | Some("-h") | None => {
            print!("{HELP}");
            Ok(ExitCode::SUCCESS)
        }
        Some(other) => Err(format!("unknown task `{other}`\n\n{HELP}")),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn workspace_root() -> PathBuf {
    // xtask lives one level below the workspace root.
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn say(msg: &str) {
    eprintln!("xtask bench: {msg}");
}

/// Writes `text` to `path` through a temporary file, so a reader never sees half a file.
fn write_atomic(path: &Path, text: &[u8]) -> Result<(), String> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("cannot move {} into place: {e}", path.display()))
}

fn bench(args: &[String]) -> Result<ExitCode, String> {
    let opts = BenchOptions::parse(args)?;
    if opts.help {
        print!("{BENCH_HELP}");
        return Ok(ExitCode::SUCCESS);
    }
    if opts.out.is_some() || opts.list || !opts.only.is_empty() || opts.durations.is_some() || opts.results.is_some() {
        return Err("--out, --list, --only, --durations and --results are options of the runner, not of \
                    `cargo xtask bench` (see --help)"
            .into());
    }
    let allowed = allowed_cpus();
    opts.check_threads(allowed)?;

    let root = workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = machine::target_dir(&cargo, &root)?;
    let out_dir = target.join("strata-bench");
    let scratch = out_dir.join("run");
    std::fs::create_dir_all(&scratch).map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;

    // The Python peers are set up while cargo builds the runner.
    let requirements = root.join("xtask").join("py").join("requirements.txt");
    let venv = out_dir.join("venv");
    let explicit = opts.python.clone();
    let python_setup = (!opts.no_python)
        .then(|| std::thread::spawn(move || pyenv::ensure(explicit.as_deref(), &venv, &requirements, &|m| say(m))));

    let openblas = machine::openblas_by_pkg_config();
    let mut build = Command::new(&cargo);
    build.current_dir(&root).args(["build", "--release", "-p", "strata-benches", "--bin", "strata-bench"]);
    if openblas.is_ok() {
        build.args(["--features", "openblas"]);
    }
    say("building the runner in release mode (the first build takes several minutes) ...");
    let built = build.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    let python = python_setup.map(|h| h.join().unwrap_or_else(|_| PythonPeers::Absent("the setup panicked".into())));
    if !built.success() {
        return Err("building strata-bench failed (cargo's messages are above)".into());
    }
    let runner = target.join("release").join("strata-bench");
    if !runner.exists() {
        return Err(format!("the build succeeded but {} does not exist", runner.display()));
    }

    // The plan: what the options select, declared by the runner.
    let listed = list_cases(&runner, &opts)?;
    let decls: Vec<CaseDecl> = listed
        .iter()
        .filter_map(|r| match r {
            Record::Case(d) => Some(d.clone()),
            _ => None,
        })
        .collect();
    if decls.is_empty() {
        return Err(no_match_message(&runner, &opts));
    }
    let tmax = listed
        .iter()
        .find_map(|r| match r {
            Record::Info { key, value } if key == "threads" => value.parse::<usize>().ok(),
            _ => None,
        })
        .unwrap_or(1);
    let plan: Vec<String> = decls.iter().map(|d| d.name.clone()).collect();
    let kind = if opts.quick { "quick" } else { "full" };
    // The runner declares distributed cases only when mpirun is present; they run
    // strata-mpi's scaling example, built here with the `mpi` feature.
    let mpi_scaling = decls.iter().any(|d| d.group == "distributed").then(|| build_mpi_scaling(&cargo, &root, &target));

    let mut summary = Summary::default();
    fill_meta(&mut summary, &root, &opts, allowed, tmax);
    fill_rust_peers(&mut summary, &root, &openblas);
    summary.absorb(listed);
    if let Some(Err(why)) = &mpi_scaling {
        summary.notes.push(why.clone());
    }

    // strata and the Rust peers.
    let results = scratch.join("results");
    let _ = std::fs::remove_dir_all(&results);
    std::fs::create_dir_all(&results).map_err(|e| format!("cannot create {}: {e}", results.display()))?;
    let rust_durations = out_dir.join(format!("durations-rust-{kind}.tsv"));
    say(&format!("measuring strata and the Rust peers: {} cases, multi-threaded ones at {tmax} threads", plan.len()));
    let (records, unreported) = run_resuming(&plan, |cases| {
        let mut cmd = Command::new(&runner);
        quiet_openblas_threads(&mut cmd);
        cmd.args(opts.to_args())
            .arg(format!("--durations={}", rust_durations.display()))
            .arg(format!("--results={}", results.display()));
        match &mpi_scaling {
            Some(Ok(path)) => drop(cmd.env(machine::MPI_SCALING_VAR, path)),
            // Empty: the cases say the build failed rather than run an older binary.
            Some(Err(_)) => drop(cmd.env(machine::MPI_SCALING_VAR, "")),
            None => {}
        }
        run::run_process(cmd, &scratch.join("rust.tsv"), cases)
    });
    write_durations(&rust_durations, &records);
    summary.absorb(records);
    for case in unreported {
        summary.absorb(vec![Record::Fail {
            case,
            who: "strata".into(),
            message: "the runner ended without measuring this case".into(),
        }]);
    }

    // numpy and JAX.
    match python {
        None => absent_python(&mut summary, "--no-python"),
        Some(PythonPeers::Absent(why)) => {
            say(&format!("numpy/JAX peers absent: {why}"));
            summary.notes.push(format!("numpy/JAX absent: {why}"));
            absent_python(&mut summary, "setup failed, see the notes");
        }
        Some(PythonPeers::Ready { python, how }) => {
            say(&format!("numpy/JAX peers: {} ({how})", python.display()));
            run_python(&mut summary, &root, &python, &opts, &decls, &results, &scratch, &out_dir, kind, tmax)?;
        }
    }

    // Outputs.
    let json_path = out_dir.join("summary.json");
    write_atomic(&json_path, summary.to_json().pretty().as_bytes())?;
    let text = table::table(&summary);
    print!("\n{text}");
    let svg_path = out_dir.join("summary.svg");
    write_atomic(&svg_path, plot::svg(&summary).as_bytes())?;
    let png_path = out_dir.join("summary.png");
    match machine::svg_to_png(&svg_path, &png_path) {
        Ok(tool) => {
            println!("\nwrote {}, {} and {} ({tool})", json_path.display(), svg_path.display(), png_path.display())
        }
        Err(why) => println!("\nwrote {} and {}; {why}", json_path.display(), svg_path.display()),
    }
    let failed = summary.failed().len();
    if failed > 0 {
        eprintln!("xtask bench: {failed} case(s) failed or did not run; their rows say why");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// Builds strata-mpi's `distributed_scaling` example in release mode with the `mpi`
/// feature: its path, or why there is none (the distributed cases then fail saying so).
fn build_mpi_scaling(cargo: &str, root: &Path, target: &Path) -> Result<PathBuf, String> {
    say("building strata-mpi's scaling example for the distributed cases (release, --features mpi) ...");
    let built = Command::new(cargo)
        .current_dir(root)
        .args(machine::MPI_SCALING_BUILD)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    let path = machine::mpi_scaling_path(target);
    if !built.success() {
        let why = "distributed: building strata-mpi's scaling example with --features mpi failed (cargo's \
                   messages are above; it needs libclang and the MPI headers, Debian: libopenmpi-dev libclang-dev)";
        say(why);
        return Err(why.into());
    }
    if !path.is_file() {
        return Err(format!("distributed: the build succeeded but {} does not exist", path.display()));
    }
    Ok(path)
}

/// `strata-bench --list` with the options: the declared cases, or the runner's error.
fn list_cases(runner: &Path, opts: &BenchOptions) -> Result<Vec<Record>, String> {
    let out = Command::new(runner)
        .args(opts.to_args())
        .arg("--list")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", runner.display()))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    Record::parse_all(&String::from_utf8_lossy(&out.stdout), "strata-bench --list")
}

fn no_match_message(runner: &Path, opts: &BenchOptions) -> String {
    let all = list_cases(runner, &BenchOptions { filters: Vec::new(), ..opts.clone() }).unwrap_or_default();
    let names: Vec<String> = all
        .iter()
        .filter_map(|r| match r {
            Record::Case(d) => Some(d.name.clone()),
            _ => None,
        })
        .collect();
    let ids: Vec<&str> = GROUPS.iter().map(|g| g.id).collect();
    format!(
        "--filter {} matches no case; nothing was measured and the previous results are untouched.\n\
         A filter matches a group id ({}) or part of a case name:\n  {}",
        opts.filters.join(" / "),
        ids.join(", "),
        table::wrap(&names.join(" "), 98, 0).join("\n  ")
    )
}

fn fill_meta(s: &mut Summary, root: &Path, opts: &BenchOptions, allowed: usize, tmax: usize) {
    let mut m = BTreeMap::new();
    if let Some(c) = machine::commit(root) {
        m.insert("commit".to_string(), c);
    }
    m.insert("date".into(), machine::now_utc());
    if let Some(cpu) = machine::cpu_model() {
        m.insert("cpu_model".into(), cpu);
    }
    m.insert("allowed_cpus".into(), allowed.to_string());
    m.insert("threads".into(), tmax.to_string());
    m.insert("quick".into(), opts.quick.to_string());
    let mut cmd = vec!["cargo xtask bench".to_string()];
    cmd.extend(opts.to_args());
    if opts.no_python {
        cmd.push("--no-python".into());
    }
    m.insert("command".into(), cmd.join(" "));
    s.meta = m;
}

fn fill_rust_peers(s: &mut Summary, root: &Path, openblas: &Result<String, String>) {
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap_or_default();
    for p in ["faer", "ndarray"] {
        s.peers.insert(p.into(), PeerInfo { present: true, version: machine::locked_version(&lock, p), note: None });
    }
    s.peers.insert(
        "openblas".into(),
        match openblas {
            Ok(v) => PeerInfo { present: true, version: Some(v.clone()), note: Some("found by pkg-config".into()) },
            Err(why) => PeerInfo { present: false, version: None, note: Some(why.clone()) },
        },
    );
    s.peers.insert(
        "tenferro".into(),
        PeerInfo {
            present: false,
            version: None,
            note: Some("tenferro-cpu 0.4 requires Rust 1.96; this workspace builds with 1.95 (MSRV 1.89)".into()),
        },
    );
}

fn absent_python(s: &mut Summary, why: &str) {
    for p in PYTHON_PEERS {
        s.peers.insert(p.into(), PeerInfo { present: false, version: None, note: Some(why.into()) });
    }
}

fn write_durations(path: &Path, records: &[Record]) {
    let mut prior = std::fs::read_to_string(path).map(|t| read_durations(&t)).unwrap_or_default();
    for r in records {
        if let Record::Done { case, seconds } = r {
            prior.insert(case.clone(), *seconds);
        }
    }
    let mut lines: Vec<String> = prior.iter().map(|(c, s)| format!("{c}\t{s:.3}")).collect();
    lines.sort();
    let _ = std::fs::write(path, lines.join("\n") + "\n");
}

#[allow(clippy::too_many_arguments)]
fn run_python(
    summary: &mut Summary,
    root: &Path,
    python: &Path,
    opts: &BenchOptions,
    decls: &[CaseDecl],
    results: &Path,
    scratch: &Path,
    out_dir: &Path,
    kind: &str,
    tmax: usize,
) -> Result<(), String> {
    let script = root.join("xtask").join("py").join("peers.py");
    let workloads = root.join("benches").join("tn").join("workloads.tn");
    let base = |threads: usize| {
        let mut cmd = Command::new(python);
        quiet_openblas_threads(&mut cmd);
        cmd.arg(&script)
            .arg(format!("--threads={threads}"))
            .arg(format!("--workloads={}", workloads.display()))
            .arg(format!("--results={}", results.display()));
        if opts.quick {
            cmd.arg("--quick");
        }
        cmd
    };
    // Which of the planned cases the script measures.
    let names: Vec<&str> = decls.iter().map(|d| d.name.as_str()).collect();
    let listed = base(tmax)
        .arg("--list")
        .arg(format!("--only={}", names.join(",")))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !listed.status.success() {
        let why = format!("peers.py --list failed: {}", String::from_utf8_lossy(&listed.stderr).trim());
        summary.notes.push(why);
        absent_python(summary, "peers.py failed");
        return Ok(());
    }
    let known: Vec<String> = String::from_utf8_lossy(&listed.stdout).lines().map(str::to_string).collect();
    let threads_of: HashMap<&str, usize> = decls.iter().map(|d| (d.name.as_str(), d.threads)).collect();
    let durations_path = out_dir.join(format!("durations-python-{kind}.tsv"));
    for (label, pinned) in [("at 1 thread, pinned to one CPU", true), ("at the run's threads", false)] {
        let plan: Vec<String> =
            known.iter().filter(|c| threads_of.get(c.as_str()).is_some_and(|&t| (t == 1) == pinned)).cloned().collect();
        if plan.is_empty() {
            continue;
        }
        say(&format!("measuring numpy and JAX {label}: {} cases", plan.len()));
        let threads = if pinned { 1 } else { tmax };
        let (records, _) = run_resuming(&plan, |cases| {
            let mut cmd = base(threads);
            cmd.arg(format!("--durations={}", durations_path.display()));
            run::run_process(cmd, &scratch.join("python.tsv"), cases)
        });
        write_durations(&durations_path, &records);
        // A Python crash marks the case failed for the peers only, not for strata.
        let records = records
            .into_iter()
            .filter_map(|r| match r {
                Record::Fail { case, who, message } if who == "strata" => {
                    Some(Record::Fail { case, who: "numpy".into(), message })
                }
                Record::Done { .. } => None,
                other => Some(other),
            })
            .collect();
        summary.absorb(records);
    }
    for p in PYTHON_PEERS {
        summary.peers.entry(p.to_string()).or_insert(PeerInfo {
            present: false,
            version: None,
            note: Some("not importable in the peers' environment".into()),
        });
    }
    Ok(())
}

fn report(args: &[String]) -> Result<ExitCode, String> {
    if !args.is_empty() {
        return Err(format!("`cargo xtask report` takes no arguments (got `{}`)", args.join(" ")));
    }
    let root = workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out_dir = machine::target_dir(&cargo, &root)?.join("strata-bench");
    let json_path = out_dir.join("summary.json");
    let text = std::fs::read_to_string(&json_path)
        .map_err(|e| format!("cannot read {} ({e}); run `cargo xtask bench` first", json_path.display()))?;
    let summary = Summary::from_json(&Json::parse(&text)?)?;
    print!("{}", table::table(&summary));
    let svg_path = out_dir.join("summary.svg");
    write_atomic(&svg_path, plot::svg(&summary).as_bytes())?;
    match machine::svg_to_png(&svg_path, &out_dir.join("summary.png")) {
        Ok(tool) => println!("\nredrew {} and summary.png ({tool})", svg_path.display()),
        Err(why) => println!("\nredrew {}; {why}", svg_path.display()),
    }
    Ok(ExitCode::SUCCESS)
}
