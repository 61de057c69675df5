//! What the bench finds out about its surroundings: the target directory, the commit,
//! the date, the CPU, the peers' versions, pkg-config's OpenBLAS, a PNG converter.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::json::Json;

/// The workspace's target directory as cargo sees it (`CARGO_TARGET_DIR`, config files,
/// `cargo metadata`'s `target_directory`), falling back to `<root>/target`.
pub fn target_dir(cargo: &str, root: &Path) -> Result<PathBuf, String> {
    let out = Command::new(cargo)
        .current_dir(root)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .output()
        .map_err(|e| format!("cannot run `{cargo} metadata`: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`cargo metadata` failed: {}",
            String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("no output")
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let v = Json::parse(&text)?;
    v.get("target_directory")
        .and_then(Json::as_str)
        .map(PathBuf::from)
        .ok_or_else(|| "`cargo metadata` named no target_directory".to_string())
}

/// The commit checked out, short, with `+dirty` when the tree has changes.
pub fn commit(root: &Path) -> Option<String> {
    let git = |args: &[&str]| {
        Command::new("git")
            .current_dir(root)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let hash = git(&["rev-parse", "--short=10", "HEAD"])?;
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    Some(if dirty { format!("{hash}+dirty") } else { hash })
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// `YYYY-MM-DD HH:MM UTC` for seconds since the epoch.
pub fn utc_text(secs: u64) -> String {
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let t = secs % 86_400;
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02} UTC", t / 3600, t / 60 % 60)
}

/// Now, as [`utc_text`].
pub fn now_utc() -> String {
    utc_text(SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()))
}

/// The CPU model from `/proc/cpuinfo` (Linux), without repeated spaces.
pub fn cpu_model() -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, v)| v))
        .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The version of `package` that `Cargo.lock` resolved (the first, when several).
pub fn locked_version(lock: &str, package: &str) -> Option<String> {
    let mut lines = lock.lines();
    while let Some(l) = lines.next() {
        if l.trim() == format!("name = \"{package}\"") {
            let v = lines.next()?.trim().strip_prefix("version = \"")?.strip_suffix('"')?;
            return Some(v.to_string());
        }
    }
    None
}

/// OpenBLAS as pkg-config finds it: `Ok(version)`, or what is missing and how to add it.
pub fn openblas_by_pkg_config() -> Result<String, String> {
    let out = Command::new("pkg-config").args(["--modversion", "openblas"]).output();
    match out {
        Err(_) => Err("pkg-config is not installed (Debian: apt install pkg-config libopenblas-dev)".into()),
        Ok(o) if !o.status.success() => {
            Err("pkg-config finds no openblas.pc (Debian: apt install libopenblas-dev)".into())
        }
        Ok(o) => Ok(String::from_utf8_lossy(&o.stdout).trim().to_string()),
    }
}

/// The environment variable through which `cargo xtask bench` names strata-mpi's
/// `distributed_scaling` example to the runner (the `distributed` group's cases).
pub const MPI_SCALING_VAR: &str = "STRATA_BENCH_MPI_SCALING";

/// The cargo arguments that build that example (release, with the `mpi` feature).
pub const MPI_SCALING_BUILD: [&str; 8] =
    ["build", "--release", "-p", "strata-mpi", "--features", "mpi", "--example", "distributed_scaling"];

/// Where cargo puts that example under `target`.
pub fn mpi_scaling_path(target: &Path) -> PathBuf {
    target.join("release").join("examples").join(format!("distributed_scaling{}", std::env::consts::EXE_SUFFIX))
}

/// Renders `svg` to `png` with the first converter present; `Ok(tool)` or why not.
pub fn svg_to_png(svg: &Path, png: &Path) -> Result<&'static str, String> {
    let s = svg.to_string_lossy().to_string();
    let p = png.to_string_lossy().to_string();
    let tries: [(&'static str, Vec<String>); 4] = [
        ("rsvg-convert", vec!["-b".into(), "white".into(), "-o".into(), p.clone(), s.clone()]),
        ("inkscape", vec![s.clone(), "--export-type=png".into(), format!("--export-filename={p}")]),
        ("magick", vec![s.clone(), p.clone()]),
        ("convert", vec![s.clone(), p.clone()]),
    ];
    let mut tried = Vec::new();
    for (tool, args) in tries {
        let _ = std::fs::remove_file(png);
        match Command::new(tool).args(&args).output() {
            Ok(o) if o.status.success() && std::fs::metadata(png).is_ok_and(|m| m.len() > 0) => return Ok(tool),
            Ok(_) => tried.push(format!("{tool} failed")),
            Err(_) => tried.push(format!("{tool} not found")),
        }
    }
    Err(format!(
        "no PNG ({}); the SVG opens in any browser (Debian: apt install librsvg2-bin for the PNG)",
        tried.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil() {
        assert_eq!(utc_text(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_text(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(utc_text(1_798_761_599), "2026-12-31 23:59 UTC");
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn locked_versions_are_read_from_the_lock_file() {
        let lock = "[[package]]\nname = \"faer\"\nversion = \"0.24.0\"\n\n[[package]]\nname = \"faer-traits\"\nversion = \"0.24.1\"\n";
        assert_eq!(locked_version(lock, "faer").as_deref(), Some("0.24.0"));
        assert_eq!(locked_version(lock, "faer-traits").as_deref(), Some("0.24.1"));
        assert_eq!(locked_version(lock, "ndarray"), None);
    }
}
