//! Fake machines for tests: copies of the fixture folders in a temporary directory that
//! a test may edit (never the live system), removed on drop. Copies share unchanged files
//! with the fixtures through hard links; edits replace files instead of writing into them.

#![allow(dead_code)] // Each test binary uses a different part.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use strata_topology::{CpuTopology, SysfsSource, TopologyError, TopologySource};

/// The committed fixture folder `name`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// Loads the committed fixture folder `name`.
pub fn load_fixture(name: &str) -> Result<CpuTopology, TopologyError> {
    SysfsSource::fixture(fixture(name)).load()
}

/// A private, editable copy of a fixture machine.
pub struct TempMachine {
    root: PathBuf,
}

impl TempMachine {
    /// Copies fixture `name` into a fresh temporary folder.
    pub fn copy_of(name: &str) -> TempMachine {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        // Under the target folder: same filesystem as the fixtures, so files can be hard
        // links (cheap), and never near the live system's files.
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "strata-topology-{}-{}-{name}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        copy_dir(&fixture(name), &root);
        TempMachine { root }
    }

    /// The folder holding the machine.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Writes `text` to the file `rel`, creating folders as needed.
    pub fn write(&self, rel: &str, text: &str) -> &Self {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        // The file may be a hard link to the committed fixture: replace, never truncate.
        if path.is_file() {
            std::fs::remove_file(&path).unwrap();
        }
        std::fs::write(path, text).unwrap();
        self
    }

    /// Removes the file or folder `rel`.
    pub fn remove(&self, rel: &str) -> &Self {
        let path = self.root.join(rel);
        if path.is_dir() {
            std::fs::remove_dir_all(path).unwrap();
        } else {
            std::fs::remove_file(path).unwrap();
        }
        self
    }

    /// Replaces the file `rel` by a folder, so reading it fails with an I/O error that is
    /// not "not found" (reliable even when tests run as root, unlike permissions).
    pub fn make_unreadable(&self, rel: &str) -> &Self {
        self.remove(rel);
        std::fs::create_dir_all(self.root.join(rel)).unwrap();
        self
    }

    /// Loads the machine.
    pub fn load(&self) -> Result<CpuTopology, TopologyError> {
        SysfsSource::fixture(&self.root).load()
    }
}

impl Drop for TempMachine {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else if std::fs::hard_link(entry.path(), &target).is_err() {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A cpulist as a set, for terse expectations.
pub fn cpus(list: &str) -> strata_topology::CpuSet {
    list.parse().unwrap()
}
