//! What a caller asks the arbiter for.

use std::time::Duration;

use strata_topology::{CpuId, CpuSet};

use crate::error::AdmissionError;

/// A request for admission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdmissionRequest {
    /// The listed CPUs. Conflicts with every request whose set overlaps, and with
    /// [`AdmissionRequest::Exclusive`]. A [`CpuSet`] is never empty, so there is no empty
    /// request.
    Cpus(CpuSet),
    /// The whole machine: conflicts with every other request. For work whose threads we
    /// cannot bound (a BLAS library with its own thread team).
    Exclusive,
}

impl AdmissionRequest {
    /// A request for the single CPU `cpu` (a budget-1 domain).
    pub fn cpu(cpu: CpuId) -> AdmissionRequest {
        AdmissionRequest::Cpus(CpuSet::single(cpu))
    }

    /// Whether the two requests may be held at the same time.
    ///
    /// ```
    /// use strata_arbiter::AdmissionRequest;
    /// use strata_topology::CpuId;
    ///
    /// let a = AdmissionRequest::cpu(CpuId(0));
    /// let b = AdmissionRequest::cpu(CpuId(1));
    /// assert!(!a.conflicts_with(&b));
    /// assert!(a.conflicts_with(&AdmissionRequest::Exclusive));
    /// ```
    pub fn conflicts_with(&self, other: &AdmissionRequest) -> bool {
        match (self, other) {
            (AdmissionRequest::Cpus(a), AdmissionRequest::Cpus(b)) => a.overlaps(b),
            _ => true,
        }
    }

    /// The CPUs requested, or `None` for [`AdmissionRequest::Exclusive`].
    pub fn cpus(&self) -> Option<&CpuSet> {
        match self {
            AdmissionRequest::Cpus(set) => Some(set),
            AdmissionRequest::Exclusive => None,
        }
    }

    /// Checks the request before any state is touched.
    pub(crate) fn validate(&self, op: &'static str) -> Result<(), AdmissionError> {
        if let AdmissionRequest::Cpus(set) = self {
            // A CpuSet is sorted, so its last id is its largest.
            let last = set.last();
            if last > CpuId::MAX {
                return Err(AdmissionError::CpuIdTooLarge { op, cpu: last });
            }
        }
        Ok(())
    }
}

impl From<CpuSet> for AdmissionRequest {
    fn from(set: CpuSet) -> Self {
        AdmissionRequest::Cpus(set)
    }
}

/// How long a request may wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitPolicy {
    /// Wait until admitted (bounded only by the holders' release).
    Indefinitely,
    /// Do not wait: admitted now or refused with [`AdmissionError::WouldBlock`].
    NoWait,
    /// Wait at most this long, then give up with [`AdmissionError::TimedOut`].
    ///
    /// `Duration::ZERO` never waits: it admits exactly when [`WaitPolicy::NoWait`] would,
    /// but refuses with `TimedOut` (so callers matching on timeouts see one error kind).
    /// A timeout too large to represent as an `Instant` waits indefinitely.
    Timeout(Duration),
}
