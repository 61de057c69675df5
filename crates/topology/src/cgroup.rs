//! Locating this process's cgroup CPU quota through `/proc/self/cgroup` and
//! `/proc/self/mountinfo`, for cgroup v2 (`cpu.max`) and v1 (`cpu.cfs_quota_us`).
//!
//! Every path is read under a root folder, so fixtures describe containers as folders.
//! Nothing here ever writes.

use std::path::Path;

use crate::error::TopologyError;
use crate::files::read_optional;
use crate::quota::{CpuQuota, parse_cfs, parse_cpu_max};

/// The effective CPU quota of the process whose `/proc/self` is under `root`.
///
/// The quota of every cgroup from the process's own up to the mount root applies, so the
/// tightest one wins; v1 and v2 hierarchies (hybrid setups) are both consulted.
///
/// Documented fallbacks, all meaning "no quota known": no `/proc/self/cgroup` (no cgroup
/// support), a controller that is not mounted, a cgroup path outside its mount (another
/// cgroup namespace), and missing quota files (the v2 root cgroup has no `cpu.max`).
/// Malformed files, unreadable files and impossible values are errors.
pub(crate) fn cgroup_quota(root: &Path) -> Result<Option<CpuQuota>, TopologyError> {
    let cgroup_path = root.join("proc/self/cgroup");
    let Some(cgroup_text) = read_optional(&cgroup_path)? else {
        return Ok(None);
    };
    let memberships = parse_proc_cgroup(&cgroup_text, &cgroup_path)?;
    if memberships.is_empty() {
        return Ok(None);
    }
    let mountinfo_path = root.join("proc/self/mountinfo");
    let mountinfo = crate::files::read_required(&mountinfo_path)?;
    let mounts = parse_mountinfo(&mountinfo, &mountinfo_path)?;

    let mut tightest: Option<CpuQuota> = None;
    for membership in &memberships {
        for mount in mounts.iter().filter(|m| m.serves(membership)) {
            let Some(rel) = relative_cgroup_path(&membership.path, &mount.root) else {
                continue;
            };
            let mount_dir = root.join(mount.mount_point.trim_start_matches('/'));
            let mut dirs = vec![mount_dir.clone()];
            let mut dir = mount_dir;
            for component in rel.split('/').filter(|c| !c.is_empty()) {
                dir = dir.join(component);
                dirs.push(dir.clone());
            }
            for dir in &dirs {
                let found = match membership.version {
                    CgroupVersion::V2 => read_v2_quota(dir)?,
                    CgroupVersion::V1 => read_v1_quota(dir)?,
                };
                if let Some(q) = found {
                    tightest = Some(tightest.map_or(q, |t| t.tighter(q)));
                }
            }
        }
    }
    Ok(tightest)
}

fn read_v2_quota(dir: &Path) -> Result<Option<CpuQuota>, TopologyError> {
    let path = dir.join("cpu.max");
    match read_optional(&path)? {
        Some(text) => parse_cpu_max(&text, &path),
        None => Ok(None),
    }
}

fn read_v1_quota(dir: &Path) -> Result<Option<CpuQuota>, TopologyError> {
    let quota_path = dir.join("cpu.cfs_quota_us");
    let Some(quota) = read_optional(&quota_path)? else {
        return Ok(None);
    };
    // A quota file without its period is a broken hierarchy, not a missing feature.
    let period_path = dir.join("cpu.cfs_period_us");
    let period = crate::files::read_required(&period_path)?;
    parse_cfs(&quota, &quota_path, &period, &period_path)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CgroupVersion {
    V1,
    V2,
}

/// One line of `/proc/self/cgroup` that matters for the CPU controller.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Membership {
    version: CgroupVersion,
    path: String,
}

fn parse_proc_cgroup(text: &str, file: &Path) -> Result<Vec<Membership>, TopologyError> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut parts = line.splitn(3, ':');
        let (Some(hierarchy), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(TopologyError::malformed(
                file,
                format!("expected `hierarchy:controllers:path`, found `{line}`"),
            ));
        };
        if hierarchy.parse::<u32>().is_err() {
            return Err(TopologyError::malformed(
                file,
                format!("hierarchy id `{hierarchy}` is not a number in `{line}`"),
            ));
        }
        let version = if hierarchy == "0" && controllers.is_empty() {
            CgroupVersion::V2
        } else if controllers.split(',').any(|c| c == "cpu") {
            CgroupVersion::V1
        } else {
            continue;
        };
        out.push(Membership { version, path: path.to_string() });
    }
    Ok(out)
}

/// One cgroup mount from `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CgroupMount {
    version: CgroupVersion,
    root: String,
    mount_point: String,
}

impl CgroupMount {
    fn serves(&self, membership: &Membership) -> bool {
        self.version == membership.version
    }
}

fn parse_mountinfo(text: &str, file: &Path) -> Result<Vec<CgroupMount>, TopologyError> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split(' ').collect();
        let separator = fields.iter().position(|&f| f == "-");
        let (Some(sep), true) = (separator, fields.len() >= 7) else {
            return Err(TopologyError::malformed(
                file,
                format!(
                    "expected `id parent dev root mountpoint options ... - fstype source superoptions`, found `{line}`"
                ),
            ));
        };
        if sep < 6 || fields.len() < sep + 3 {
            return Err(TopologyError::malformed(file, format!("misplaced ` - ` separator in `{line}`")));
        }
        let fstype = fields[sep + 1];
        let version = match fstype {
            "cgroup2" => CgroupVersion::V2,
            "cgroup" if fields.get(sep + 3).is_some_and(|o| o.split(',').any(|o| o == "cpu")) => CgroupVersion::V1,
            _ => continue,
        };
        out.push(CgroupMount {
            version,
            root: unescape_mount_field(fields[3]),
            mount_point: unescape_mount_field(fields[4]),
        });
    }
    Ok(out)
}

/// mountinfo escapes space, tab, newline and backslash as three-digit octal (`\040`).
fn unescape_mount_field(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() && bytes[i + 1..i + 4].iter().all(|b| (b'0'..=b'7').contains(b)) {
            let value =
                (bytes[i + 1] - b'0') as u32 * 64 + (bytes[i + 2] - b'0') as u32 * 8 + (bytes[i + 3] - b'0') as u32;
            if let Ok(byte) = u8::try_from(value) {
                out.push(byte);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The cgroup path relative to its mount's root, or `None` when the cgroup lies outside
/// the mounted subtree (then its quota files cannot be reached).
fn relative_cgroup_path(cgroup: &str, mount_root: &str) -> Option<String> {
    let cgroup = cgroup.strip_suffix(" (deleted)").unwrap_or(cgroup);
    if cgroup.split('/').any(|c| c == "..") {
        return None;
    }
    if mount_root == "/" {
        return Some(cgroup.trim_start_matches('/').to_string());
    }
    let rest = cgroup.strip_prefix(mount_root)?;
    if rest.is_empty() || rest.starts_with('/') { Some(rest.trim_start_matches('/').to_string()) } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_cgroup() {
        let text = "12:cpu,cpuacct:/docker/abc\n11:memory:/docker/abc\n0::/user.slice/x\n";
        let m = parse_proc_cgroup(text, Path::new("cgroup")).unwrap();
        assert_eq!(
            m,
            vec![
                Membership { version: CgroupVersion::V1, path: "/docker/abc".into() },
                Membership { version: CgroupVersion::V2, path: "/user.slice/x".into() },
            ]
        );
        // cpuacct alone is not the cpu controller.
        assert!(parse_proc_cgroup("2:cpuacct:/\n", Path::new("c")).unwrap().is_empty());
        for bad in ["garbage", "x:cpu:/", "1:cpu"] {
            assert!(matches!(parse_proc_cgroup(bad, Path::new("c")), Err(TopologyError::Malformed { .. })), "{bad}");
        }
    }

    #[test]
    fn parses_mountinfo() {
        let text = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
41 31 0:38 / /sys/fs/my\\040cgroup rw,relatime - cgroup2 cgroup2 rw
";
        let mounts = parse_mountinfo(text, Path::new("mountinfo")).unwrap();
        assert_eq!(
            mounts,
            vec![
                CgroupMount {
                    version: CgroupVersion::V1,
                    root: "/docker/abc".into(),
                    mount_point: "/sys/fs/cgroup/cpu,cpuacct".into()
                },
                CgroupMount { version: CgroupVersion::V2, root: "/".into(), mount_point: "/sys/fs/my cgroup".into() },
            ]
        );
        for bad in ["garbage", "1 2 3 4 5 6 7", "1 2 0:1 / /x - cgroup2", "1 2 - / /x rw cgroup2 cgroup2 rw"] {
            assert!(matches!(parse_mountinfo(bad, Path::new("m")), Err(TopologyError::Malformed { .. })), "{bad}");
        }
    }

    #[test]
    fn relative_paths() {
        assert_eq!(relative_cgroup_path("/a/b", "/"), Some("a/b".into()));
        assert_eq!(relative_cgroup_path("/", "/"), Some(String::new()));
        assert_eq!(relative_cgroup_path("/a/b", "/a"), Some("b".into()));
        assert_eq!(relative_cgroup_path("/a", "/a"), Some(String::new()));
        assert_eq!(relative_cgroup_path("/ab", "/a"), None);
        assert_eq!(relative_cgroup_path("/x", "/a"), None);
        assert_eq!(relative_cgroup_path("/../..", "/"), None);
        assert_eq!(relative_cgroup_path("/a/b (deleted)", "/"), Some("a/b".into()));
        assert_eq!(unescape_mount_field("a\\040b\\134c\\9"), "a b\\c\\9");
    }
}
