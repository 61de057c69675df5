//! The `distributed` group (issue 18): strong scaling of a 4096³ f64 GEMM and one large
//! contraction (an MPS bond, `[χ, 4, χ] x [χ, 4, χ]` over the shared bond, χ = 1024) over
//! MPI, 1 rank × N threads against N ranks × 1 thread (N = the run's thread count, 2 on
//! the development machine), with the communication volume per rank against the SUMMA
//! lower bound. `--quick` runs n = 2048 (χ = 512) instead; the case names carry the size.
//!
//! Each case starts `mpirun --bind-to none -np N` on strata-mpi's `distributed_scaling`
//! example with `--records --case KIND`, which alternates the two variants within each
//! of 3 repetitions (the rule [`crate::measure`] applies to calls far longer than a
//! batch), checks the distributed result against the single-node one, and prints one
//! `strata-mpi-scaling key=value ...` line. The case records strata's figure as the
//! parallel efficiency (single-node median over distributed median; best: the ratio of
//! the best repetitions, unit `x`, target at least 0.9), the check, and a note with both
//! times, the words received per rank, SUMMA's model and the lower bound.
//!
//! `cargo xtask bench` builds the example (`--features mpi`, release) when the plan
//! holds a distributed case and names it in `STRATA_BENCH_MPI_SCALING`; a runner started
//! by hand looks for it beside itself (`<target>/release/examples/`). Without `mpirun` on
//! PATH, or at one thread, the group is skipped with a note saying why. As root, Open MPI
//! refuses to start unless `OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1` are
//! set; the bench leaves that choice to whoever runs it (the failure says so).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::suite::{Case, Suite, Unit};

/// The environment variable naming the scaling example's binary.
pub use xtask::machine::MPI_SCALING_VAR as SCALING_BINARY_VAR;

/// The command that builds the scaling example.
pub const BUILD_COMMAND: &str = "cargo build --release -p strata-mpi --features mpi --example distributed_scaling";

/// The first word of the example's machine-readable lines.
const RECORD_TAG: &str = "strata-mpi-scaling";

/// Repetitions of each variant (see the module docs).
const REPS: usize = 3;

/// Whether `mpirun` can be started.
pub fn mpirun_present() -> bool {
    Command::new("mpirun")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The GEMM size of the run: the 4096, or 2048 in `--quick`.
fn gemm_size(quick: bool) -> usize {
    if quick { 2048 } else { 4096 }
}

/// The distributed cases at `threads` ranks and the notes on how to read them (or why
/// they are skipped).
pub fn cases(threads: usize, quick: bool) -> (Vec<Case>, Vec<String>) {
    if !mpirun_present() {
        let why = "distributed: skipped, no MPI on this machine (`mpirun` not on PATH; Debian: apt install \
                   libopenmpi-dev openmpi-bin libclang-dev)";
        return (Vec::new(), vec![why.into()]);
    }
    declared(threads, quick)
}

/// The cases and notes when `mpirun` is present.
fn declared(threads: usize, quick: bool) -> (Vec<Case>, Vec<String>) {
    if threads < 2 {
        let why = format!(
            "distributed: skipped at {threads} thread: it compares 1 rank x N threads with N ranks x 1 thread \
             and needs N >= 2 (--threads 2 or more)"
        );
        return (Vec::new(), vec![why]);
    }
    let n = gemm_size(quick);
    let ranks = threads;
    let mut notes = vec![format!(
        "distributed: efficiency = (1 rank x {ranks} threads time) / ({ranks} ranks x 1 thread time), medians \
         of {REPS} alternating repetitions; the note of each case gives both times and the f64 words each rank \
         received against SUMMA's model and the lower bound"
    )];
    if quick {
        notes.push(format!(
            "distributed: --quick measures n = {n} (chi = {}); the full run measures the issue's 4096^3 GEMM",
            n / 4
        ));
    }
    let case = |name: String, kind: &'static str| {
        Case::new(name, "distributed", Unit::Times, ranks).target("min:0.9").run(move |s| measure(s, kind, n, ranks))
    };
    let cases =
        vec![case(format!("dist_gemm_f64_{n}"), "gemm"), case(format!("dist_mps_bond_f64_chi{}", n / 4), "bond")];
    (cases, notes)
}

/// The scaling example: [`SCALING_BINARY_VAR`] when set (empty: the bench could not build
/// it), else `release/examples/distributed_scaling` in this runner's target directory.
pub fn scaling_binary() -> Result<PathBuf, String> {
    let explicit = std::env::var_os(SCALING_BINARY_VAR);
    if explicit.as_ref().is_some_and(|v| v.is_empty()) {
        // Set empty by `cargo xtask bench` when the build failed: no stale binary instead.
        return Err("`cargo xtask bench` could not build the MPI scaling example (a note says why)".into());
    }
    let runner = std::env::current_exe().map_err(|e| format!("cannot locate the runner: {e}"))?;
    existing(scaling_binary_path(explicit.map(PathBuf::from), &runner))
}

/// Where the example is: `explicit`, else beside `runner` under `examples/`.
fn scaling_binary_path(explicit: Option<PathBuf>, runner: &Path) -> PathBuf {
    // The runner is `<target>/release/strata-bench`.
    explicit.unwrap_or_else(|| {
        let target = runner.parent().and_then(Path::parent).unwrap_or(Path::new("."));
        xtask::machine::mpi_scaling_path(target)
    })
}

/// `path` when it is a file, else why the cases cannot run.
fn existing(path: PathBuf) -> Result<PathBuf, String> {
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "the MPI scaling example is not at {} (`cargo xtask bench` builds it; by hand: {BUILD_COMMAND})",
            path.display()
        ))
    }
}

/// What the example reports for one case.
#[derive(Clone, Debug, PartialEq)]
pub struct ScalingRecord {
    /// The case name (`dist_gemm_f64_4096`, ...).
    pub case: String,
    /// Ranks of the distributed variant (threads of the single-node one).
    pub ranks: usize,
    /// Repetitions of each variant.
    pub reps: usize,
    /// Median and best seconds of the single-node product (1 rank x N threads).
    pub single_s: (f64, f64),
    /// Median and best seconds of the distributed product (N ranks x 1 thread).
    pub dist_s: (f64, f64),
    /// Parallel efficiency: of the medians, and of the best repetitions.
    pub efficiency: (f64, f64),
    /// Floating-point operations of one product.
    pub flops: f64,
    /// The most f64 elements any rank received in one product.
    pub recv_words: f64,
    /// The most any rank receives by SUMMA's model.
    pub model_words: f64,
    /// The lower bound on the words some rank must receive.
    pub lower_bound_words: f64,
    /// Median seconds rank 0 waited for broadcasts.
    pub wait_s: f64,
    /// The distributed result's largest difference to the single-node one (relative).
    pub rel_err: f64,
    /// The tolerance of that check.
    pub tol: f64,
}

impl ScalingRecord {
    /// Parses one `strata-mpi-scaling key=value ...` line.
    pub fn parse(line: &str) -> Result<Self, String> {
        let mut words = line.split_whitespace();
        if words.next() != Some(RECORD_TAG) {
            return Err(format!("not a `{RECORD_TAG}` line: `{line}`"));
        }
        let mut fields = HashMap::new();
        for w in words {
            let (k, v) = w.split_once('=').ok_or_else(|| format!("`{w}` is not key=value in `{line}`"))?;
            fields.insert(k, v);
        }
        let text = |k: &str| fields.get(k).copied().ok_or_else(|| format!("`{k}` is missing from `{line}`"));
        let num = |k: &str| {
            let v = text(k)?;
            v.parse::<f64>().map_err(|_| format!("`{k}={v}` is not a number in `{line}`"))
        };
        let count = |k: &str| {
            let v = text(k)?;
            v.parse::<usize>().map_err(|_| format!("`{k}={v}` is not a count in `{line}`"))
        };
        Ok(ScalingRecord {
            case: text("case")?.to_string(),
            ranks: count("ranks")?,
            reps: count("reps")?,
            single_s: (num("single_s")?, num("single_best_s")?),
            dist_s: (num("dist_s")?, num("dist_best_s")?),
            efficiency: (num("efficiency")?, num("efficiency_best")?),
            flops: num("flops")?,
            recv_words: num("recv_words")?,
            model_words: num("model_words")?,
            lower_bound_words: num("lower_bound_words")?,
            wait_s: num("wait_s")?,
            rel_err: num("rel_err")?,
            tol: num("tol")?,
        })
    }

    /// The note shown under the table: times, rates and the communication volume.
    pub fn note(&self) -> String {
        let (p, gflops) = (self.ranks, |s: f64| self.flops / s / 1e9);
        let against_bound = if self.lower_bound_words >= 0.01 * self.recv_words {
            format!("{:.2}x the lower bound of {:.0}", self.recv_words / self.lower_bound_words, self.lower_bound_words)
        } else {
            format!("lower bound {:.0} (near zero for this shape)", self.lower_bound_words)
        };
        format!(
            "{}: {p} ranks x 1 thread {:.3} s ({:.1} GFLOP/s) against 1 rank x {p} threads {:.3} s ({:.1} \
             GFLOP/s), medians of {}; each rank received at most {:.0} f64 words (SUMMA's model {:.0}), {}; \
             {:.3} s waiting for broadcasts",
            self.case,
            self.dist_s.0,
            gflops(self.dist_s.0),
            self.single_s.0,
            gflops(self.single_s.0),
            self.reps,
            self.recv_words,
            self.model_words,
            against_bound,
            self.wait_s
        )
    }
}

/// The last lines of a process's error output, for a failure message.
fn tail(text: &[u8], lines: usize) -> String {
    let text = String::from_utf8_lossy(text);
    let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    all[all.len().saturating_sub(lines)..].join(" / ")
}

/// Runs the example on `ranks` ranks for one case and records what it reports.
fn measure(suite: &mut Suite, kind: &str, n: usize, ranks: usize) -> Result<(), String> {
    let binary = scaling_binary()?;
    let out = Command::new("mpirun")
        .args(["--bind-to", "none", "-np", &ranks.to_string()])
        .arg(&binary)
        .args(["--records", "--case", kind])
        .env("STRATA_MPI_N", n.to_string())
        .env("STRATA_MPI_REPS", REPS.to_string())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot start mpirun: {e}"))?;
    if !out.status.success() {
        let err = tail(&out.stderr, 4);
        let hint = if err.contains("root") {
            " (as root, Open MPI needs OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)"
        } else {
            ""
        };
        return Err(format!("mpirun -np {ranks} {} failed ({}){hint}: {err}", binary.display(), out.status));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with(RECORD_TAG))
        .ok_or_else(|| format!("the scaling example printed no `{RECORD_TAG}` line: {}", tail(&out.stdout, 4)))?;
    let r = ScalingRecord::parse(line)?;
    if r.case != suite.case() || r.ranks != ranks {
        return Err(format!(
            "asked for {} on {ranks} ranks, the example measured {} on {}",
            suite.case(),
            r.case,
            r.ranks
        ));
    }
    suite.check("strata", r.rel_err, r.tol);
    suite.record_value("strata", r.efficiency.0, r.efficiency.1);
    suite.note(r.note());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "strata-mpi-scaling case=dist_gemm_f64_4096 ranks=2 reps=3 single_s=11.28 \
                        single_best_s=11.1 dist_s=12.6 dist_best_s=12.2 efficiency=0.8952 efficiency_best=0.91 \
                        flops=137438953472 recv_words=8388608 model_words=8388608 lower_bound_words=6541127.4 \
                        wait_s=0.45 rel_err=3.1e-15 tol=1e-10";

    #[test]
    fn the_examples_line_parses_into_its_figures() {
        let r = ScalingRecord::parse(LINE).unwrap();
        assert_eq!((r.case.as_str(), r.ranks, r.reps), ("dist_gemm_f64_4096", 2, 3));
        assert_eq!(r.single_s, (11.28, 11.1));
        assert_eq!(r.dist_s, (12.6, 12.2));
        assert_eq!(r.efficiency, (0.8952, 0.91));
        assert_eq!((r.recv_words, r.model_words, r.lower_bound_words), (8388608.0, 8388608.0, 6541127.4));
        assert_eq!((r.wait_s, r.rel_err, r.tol), (0.45, 3.1e-15, 1e-10));
        let note = r.note();
        // 8388608 / 6541127.4 = 1.2824...
        assert!(note.contains("1.28x the lower bound of 6541127"), "{note}");
        assert!(note.contains("12.600 s (10.9 GFLOP/s)"), "{note}");
        assert!(note.starts_with("dist_gemm_f64_4096: 2 ranks x 1 thread"), "{note}");
    }

    #[test]
    fn a_near_zero_lower_bound_is_not_divided_by() {
        let line = LINE.replace("lower_bound_words=6541127.4", "lower_bound_words=0");
        let note = ScalingRecord::parse(&line).unwrap().note();
        assert!(note.contains("lower bound 0 (near zero"), "{note}");
        assert!(!note.contains("inf"), "{note}");
    }

    #[test]
    fn malformed_lines_are_refused_with_the_reason() {
        let bad = |l: &str| ScalingRecord::parse(l).unwrap_err();
        assert!(bad("gemm 4096^3 f64 11.28").contains("not a `strata-mpi-scaling` line"));
        assert!(bad(&LINE.replace(" tol=1e-10", "")).contains("`tol` is missing"));
        assert!(bad(&LINE.replace("ranks=2", "ranks=two")).contains("`ranks=two` is not a count"));
        assert!(bad(&LINE.replace("dist_s=12.6", "dist_s=fast")).contains("`dist_s=fast` is not a number"));
        assert!(bad(&LINE.replace("wait_s=0.45", "wait_s")).contains("`wait_s` is not key=value"));
    }

    #[test]
    fn declarations_follow_the_run_size_and_thread_count() {
        let (cases, notes) = declared(2, false);
        let names: Vec<&str> = cases.iter().map(|c| c.decl.name.as_str()).collect();
        assert_eq!(names, ["dist_gemm_f64_4096", "dist_mps_bond_f64_chi1024"]);
        for c in &cases {
            assert_eq!((c.decl.group.as_str(), c.decl.unit.as_str(), c.decl.threads), ("distributed", "x", 2));
            assert_eq!(c.decl.target.as_deref(), Some("min:0.9"));
            assert!(c.decl.higher_is_better);
        }
        assert!(notes.iter().all(|n| n.starts_with("distributed:")) && !notes.is_empty());
        let (quick, notes) = declared(2, true);
        assert_eq!(quick[0].decl.name, "dist_gemm_f64_2048");
        assert_eq!(quick[1].decl.name, "dist_mps_bond_f64_chi512");
        assert!(notes.iter().any(|n| n.contains("--quick measures n = 2048")), "{notes:?}");
        assert_eq!(declared(8, false).0[0].decl.threads, 8);
        let (none, why) = declared(1, true);
        assert!(none.is_empty() && why[0].contains("needs N >= 2"), "{why:?}");
        crate::cases::check_declarations(&cases).unwrap();
    }

    #[test]
    fn the_binary_is_found_beside_the_runner_unless_named() {
        let runner = Path::new("/t/release/strata-bench");
        let beside = scaling_binary_path(None, runner);
        assert_eq!(
            beside,
            Path::new("/t/release/examples").join(format!("distributed_scaling{}", std::env::consts::EXE_SUFFIX))
        );
        let named = PathBuf::from("/elsewhere/scaling");
        assert_eq!(scaling_binary_path(Some(named.clone()), runner), named);
        let err = existing(PathBuf::from("/nonexistent/distributed_scaling")).unwrap_err();
        assert!(err.contains("/nonexistent/distributed_scaling") && err.contains(BUILD_COMMAND), "{err}");
        let this = std::env::current_exe().unwrap();
        assert_eq!(existing(this.clone()), Ok(this));
        // The command in the message is the one `cargo xtask bench` runs.
        assert_eq!(BUILD_COMMAND, format!("cargo {}", xtask::machine::MPI_SCALING_BUILD.join(" ")));
    }
}
