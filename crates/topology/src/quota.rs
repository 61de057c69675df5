//! The cgroup CPU quota and the text forms of its files.

use std::fmt;
use std::path::Path;

use crate::error::TopologyError;

/// A CPU bandwidth limit: `quota_us` of CPU time per `period_us` of wall time.
///
/// 150 000 per 100 000 allows 1.5 CPUs on average.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CpuQuota {
    quota_us: u64,
    period_us: u64,
}

impl CpuQuota {
    /// A quota of `quota_us` per `period_us`; both must be positive.
    ///
    /// ```
    /// use strata_topology::CpuQuota;
    /// let q = CpuQuota::new(150_000, 100_000)?;
    /// assert_eq!(q.cpus(), 1.5);
    /// assert_eq!(q.ceil_cpus(), 2);
    /// assert!(CpuQuota::new(150_000, 0).is_err());
    /// # Ok::<(), strata_topology::TopologyError>(())
    /// ```
    pub fn new(quota_us: u64, period_us: u64) -> Result<Self, TopologyError> {
        if quota_us == 0 || period_us == 0 {
            return Err(TopologyError::InvalidDescription {
                reason: format!("CPU quota needs a positive quota and period, got {quota_us} per {period_us} us"),
            });
        }
        Ok(CpuQuota { quota_us, period_us })
    }

    /// CPU time allowed per period, in microseconds.
    pub fn quota_us(&self) -> u64 {
        self.quota_us
    }

    /// The accounting period, in microseconds.
    pub fn period_us(&self) -> u64 {
        self.period_us
    }

    /// The average number of CPUs the quota allows.
    pub fn cpus(&self) -> f64 {
        self.quota_us as f64 / self.period_us as f64
    }

    /// The quota rounded up to whole CPUs (at least 1): 0.5 gives 1, 1.5 gives 2.
    pub fn ceil_cpus(&self) -> usize {
        usize::try_from(self.quota_us.div_ceil(self.period_us)).unwrap_or(usize::MAX)
    }

    /// The tighter of two limits (the one allowing fewer CPUs).
    pub fn tighter(self, other: CpuQuota) -> CpuQuota {
        // Compare quota/period ratios exactly by cross-multiplying in u128.
        let lhs = u128::from(self.quota_us) * u128::from(other.period_us);
        let rhs = u128::from(other.quota_us) * u128::from(self.period_us);
        if lhs <= rhs { self } else { other }
    }
}

impl fmt::Display for CpuQuota {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} CPUs ({} us per {} us)", self.cpus(), self.quota_us, self.period_us)
    }
}

/// Parses a cgroup v2 `cpu.max` file: `"<quota> <period>"` or `"max <period>"`.
///
/// `Ok(None)` means unlimited (`max`); zero, negative or malformed values are errors.
pub(crate) fn parse_cpu_max(text: &str, path: &Path) -> Result<Option<CpuQuota>, TopologyError> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    let [quota, period] = fields[..] else {
        return Err(invalid(path, format!("expected `<quota|max> <period>`, found `{}`", text.trim())));
    };
    let period = parse_positive(period, "period", path)?;
    if quota == "max" {
        return Ok(None);
    }
    let quota = parse_positive(quota, "quota", path)?;
    Ok(Some(CpuQuota { quota_us: quota, period_us: period }))
}

/// Parses cgroup v1 `cpu.cfs_quota_us` and `cpu.cfs_period_us` contents.
///
/// A quota of `-1` means unlimited; any other negative or zero value is an error, as is a
/// zero or negative period.
pub(crate) fn parse_cfs(
    quota_text: &str,
    quota_path: &Path,
    period_text: &str,
    period_path: &Path,
) -> Result<Option<CpuQuota>, TopologyError> {
    let period = parse_positive(period_text.trim(), "period", period_path)?;
    if quota_text.trim() == "-1" {
        return Ok(None);
    }
    let quota = parse_positive(quota_text.trim(), "quota", quota_path)?;
    Ok(Some(CpuQuota { quota_us: quota, period_us: period }))
}

fn parse_positive(token: &str, what: &str, path: &Path) -> Result<u64, TopologyError> {
    match token.parse::<i64>() {
        Ok(v) if v > 0 => Ok(v.unsigned_abs()),
        Ok(v) => Err(invalid(path, format!("{what} must be positive, found {v}"))),
        Err(_) => Err(invalid(path, format!("{what} must be an integer, found `{token}`"))),
    }
}

fn invalid(path: &Path, reason: String) -> TopologyError {
    TopologyError::InvalidQuota { path: path.to_path_buf(), reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> &'static Path {
        Path::new("cpu.max")
    }

    #[test]
    fn cpu_max_forms() {
        assert_eq!(parse_cpu_max("max 100000\n", p()).unwrap(), None);
        let q = parse_cpu_max("150000 100000\n", p()).unwrap().unwrap();
        assert_eq!((q.quota_us(), q.period_us(), q.ceil_cpus()), (150_000, 100_000, 2));
        let q = parse_cpu_max("50000 100000", p()).unwrap().unwrap();
        assert_eq!((q.cpus(), q.ceil_cpus()), (0.5, 1));
        for bad in [
            "",
            "max",
            "100000",
            "max 0",
            "max -100000",
            "150000 0",
            "150000 -1",
            "0 100000",
            "-5 100000",
            "abc 100000",
            "1.5 100000",
            "150000 100000 7",
            "99999999999999999999 100000",
        ] {
            let err = parse_cpu_max(bad, p()).unwrap_err();
            assert!(matches!(err, TopologyError::InvalidQuota { .. }), "{bad:?}: {err}");
        }
    }

    #[test]
    fn cfs_forms() {
        let (qp, pp) = (Path::new("q"), Path::new("p"));
        assert_eq!(parse_cfs("-1\n", qp, "100000\n", pp).unwrap(), None);
        let q = parse_cfs("250000", qp, "100000", pp).unwrap().unwrap();
        assert_eq!((q.cpus(), q.ceil_cpus()), (2.5, 3));
        for (quota, period) in [
            ("-2", "100000"),
            ("0", "100000"),
            ("x", "100000"),
            ("100000", "0"),
            ("100000", "-100000"),
            ("-1", "0"),
            ("100000", ""),
        ] {
            let err = parse_cfs(quota, qp, period, pp).unwrap_err();
            assert!(matches!(err, TopologyError::InvalidQuota { .. }), "{quota:?}/{period:?}: {err}");
        }
    }

    #[test]
    fn tighter_compares_ratios_exactly() {
        let a = CpuQuota::new(150_000, 100_000).unwrap();
        let b = CpuQuota::new(100_000, 50_000).unwrap();
        assert_eq!(a.tighter(b), a);
        assert_eq!(b.tighter(a), a);
        assert!(CpuQuota::new(0, 1).is_err());
        assert!(CpuQuota::new(1, 0).is_err());
        assert_eq!(CpuQuota::new(1, u64::MAX).unwrap().ceil_cpus(), 1);
    }
}
