//! Admission counters.

use std::time::Duration;

/// A snapshot of an arbiter's counters since it was created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AdmissionStats {
    /// Permits granted (`immediate_grants` plus those granted after waiting).
    pub grants: u64,
    /// Permits granted without waiting (lock-free fast path or an immediate queue pass).
    pub immediate_grants: u64,
    /// Requests that had to wait (granted later or timed out).
    pub waits: u64,
    /// Waiting requests that gave up at their timeout.
    pub timeouts: u64,
    /// Total time spent waiting, over all `waits`.
    pub total_wait: Duration,
    /// Permits held right now.
    pub holders: usize,
    /// Requests waiting right now.
    pub waiting: usize,
}
