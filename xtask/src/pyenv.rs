//! The Python environment of the numpy and JAX peers: a virtual environment under the
//! target directory with the pinned versions of `xtask/py/requirements.txt`, created on
//! first use (`python3 -m venv`, then pip), reused while the pins and the interpreter are
//! unchanged. Without Python, the venv module or network, it says what is missing and
//! how to add it; the bench then runs without those peers.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The modules the peer script needs.
const IMPORT_CHECK: &str = "import numpy, jax, jaxlib, threadpoolctl, opt_einsum";
/// Oldest Python the pinned numpy supports.
const MIN_PYTHON: (u32, u32) = (3, 11);

/// How the Python peers can be run.
#[derive(Clone, Debug, PartialEq)]
pub enum PythonPeers {
    /// This interpreter imports them; `how` says where it came from.
    Ready {
        /// The interpreter.
        python: PathBuf,
        /// "reused", "created" or "given with --python".
        how: String,
    },
    /// They cannot run: what is missing and how to add it.
    Absent(String),
}

fn last_lines(bytes: &[u8], n: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

fn imports(python: &Path) -> Result<(), String> {
    match Command::new(python).args(["-c", IMPORT_CHECK]).stdin(Stdio::null()).output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(last_lines(&o.stderr, 1)),
        Err(e) => Err(format!("cannot run {}: {e}", python.display())),
    }
}

/// Parses `Python 3.11.7` into (3, 11).
pub fn parse_version(text: &str) -> Option<(u32, u32)> {
    let v = text.trim().strip_prefix("Python ")?;
    let mut it = v.split('.');
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// The marker that says which pins and which base interpreter built the environment.
fn marker_text(requirements: &str, base_version: &str) -> String {
    format!("{}\n{requirements}", base_version.trim())
}

/// Finds or builds the peers' interpreter.
///
/// `explicit`: `--python PATH`. `venv`: where the environment lives. `requirements`:
/// the pin file. `log` receives progress lines.
pub fn ensure(explicit: Option<&str>, venv: &Path, requirements: &Path, log: &dyn Fn(&str)) -> PythonPeers {
    if let Some(p) = explicit {
        let python = PathBuf::from(p);
        return match imports(&python) {
            Ok(()) => PythonPeers::Ready { python, how: "given with --python".into() },
            Err(e) => PythonPeers::Absent(format!(
                "the interpreter given with --python ({p}) cannot import the peers ({e}); install them with \
                 `{p} -m pip install -r {}`",
                requirements.display()
            )),
        };
    }
    let pins = match std::fs::read_to_string(requirements) {
        Ok(t) => t,
        Err(e) => return PythonPeers::Absent(format!("cannot read {}: {e}", requirements.display())),
    };
    let base = match Command::new("python3").arg("--version").output() {
        Ok(o) if o.status.success() => {
            // Python 3 prints its version on stdout (older ones on stderr).
            let mut v = String::from_utf8_lossy(&o.stdout).to_string();
            v.push_str(&String::from_utf8_lossy(&o.stderr));
            v.trim().to_string()
        }
        _ => {
            return PythonPeers::Absent(format!(
                "python3 is not on PATH: install Python {}.{} or newer (Debian: apt install python3 python3-venv), \
                 or give an interpreter that has the peers with --python, or run with --no-python",
                MIN_PYTHON.0, MIN_PYTHON.1
            ));
        }
    };
    match parse_version(&base) {
        Some(v) if v >= MIN_PYTHON => {}
        _ => {
            return PythonPeers::Absent(format!(
                "python3 is `{base}`; the pinned numpy needs Python {}.{} or newer (Debian 12: apt install \
                 python3 python3-venv), or give one with --python",
                MIN_PYTHON.0, MIN_PYTHON.1
            ));
        }
    }
    let python = venv.join("bin").join("python");
    let marker = venv.join("strata-bench-pins.txt");
    let want_marker = marker_text(&pins, &base);
    if std::fs::read_to_string(&marker).is_ok_and(|m| m == want_marker) && imports(&python).is_ok() {
        return PythonPeers::Ready { python, how: format!("reused {}", venv.display()) };
    }
    log(&format!(
        "creating the Python environment of the numpy/JAX peers in {} (once; pip downloads about 150 MB)",
        venv.display()
    ));
    let _ = std::fs::remove_dir_all(venv);
    match Command::new("python3").arg("-m").arg("venv").arg(venv).stdin(Stdio::null()).output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            return PythonPeers::Absent(format!(
                "`python3 -m venv` failed ({}); on Debian install python3-venv, or give an interpreter with --python",
                last_lines(&o.stderr, 1)
            ));
        }
        Err(e) => return PythonPeers::Absent(format!("cannot run python3: {e}")),
    }
    let pip = Command::new(&python)
        .args(["-m", "pip", "install", "--disable-pip-version-check", "--quiet", "--timeout", "30", "--retries", "2"])
        .arg("-r")
        .arg(requirements)
        .stdin(Stdio::null())
        .output();
    match pip {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            return PythonPeers::Absent(format!(
                "pip could not install the pinned peers ({}). Without network to the package index, install \
                 them by hand: `{} -m pip install -r {}` (or into any Python {}.{}+ and pass it with --python), \
                 or run with --no-python",
                last_lines(&o.stderr, 2),
                python.display(),
                requirements.display(),
                MIN_PYTHON.0,
                MIN_PYTHON.1
            ));
        }
        Err(e) => return PythonPeers::Absent(format!("cannot run pip in {}: {e}", venv.display())),
    }
    if let Err(e) = imports(&python) {
        return PythonPeers::Absent(format!("the new environment cannot import the peers: {e}"));
    }
    if let Err(e) = std::fs::write(&marker, want_marker) {
        log(&format!("note: cannot write {} ({e}); the environment will be rebuilt next time", marker.display()));
    }
    PythonPeers::Ready { python, how: format!("created {}", venv.display()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_versions_parse() {
        assert_eq!(parse_version("Python 3.11.7\n"), Some((3, 11)));
        assert_eq!(parse_version("Python 3.9"), Some((3, 9)));
        assert_eq!(parse_version("pyenv: python3: command not found"), None);
        assert!(parse_version("Python 3.10.1").unwrap() < MIN_PYTHON);
    }

    #[test]
    fn a_given_interpreter_that_cannot_import_is_reported() {
        let r = ensure(Some("/nonexistent/python"), Path::new("/nonexistent/venv"), Path::new("r.txt"), &|_| {});
        match r {
            PythonPeers::Absent(why) => assert!(why.contains("--python (/nonexistent/python)"), "{why}"),
            other => panic!("{other:?}"),
        }
        let r = ensure(None, Path::new("/nonexistent/venv"), Path::new("/nonexistent/requirements.txt"), &|_| {});
        assert!(matches!(r, PythonPeers::Absent(why) if why.contains("cannot read")));
    }
}
