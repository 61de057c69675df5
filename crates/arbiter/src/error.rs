//! The typed errors of admission.

use std::fmt;
use std::time::Duration;

use strata_topology::CpuId;

/// Who asked for a permit, as reported in [`AdmissionError::ReEntrant`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnerKind {
    /// The calling thread (it already holds a permit of this arbiter).
    CurrentThread,
    /// An [`crate::OwnerToken`] (it already holds, or is already asking for, a permit).
    Token,
}

/// Why a permit was not granted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdmissionError {
    /// The owner already holds (or is already asking for) a permit of this arbiter.
    ///
    /// Granting or waiting would risk a self-deadlock, so the request is refused at once.
    /// Ask once for the union of the CPUs you need instead.
    ReEntrant {
        /// The entry point that refused.
        op: &'static str,
        /// The owner that asked twice.
        owner: OwnerKind,
    },
    /// `try_acquire`: the request conflicts with a held permit or an older waiter.
    WouldBlock {
        /// The entry point that refused.
        op: &'static str,
    },
    /// The timeout passed before the request could be admitted.
    TimedOut {
        /// The entry point that gave up.
        op: &'static str,
        /// The timeout that was given.
        timeout: Duration,
    },
    /// A CPU id above [`CpuId::MAX`] was requested.
    CpuIdTooLarge {
        /// The entry point that refused.
        op: &'static str,
        /// The offending id.
        cpu: CpuId,
    },
}

impl fmt::Display for AdmissionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdmissionError::ReEntrant { op, owner } => {
                let who = match owner {
                    OwnerKind::CurrentThread => "the calling thread already holds",
                    OwnerKind::Token => "this owner token already holds or is waiting for",
                };
                write!(
                    f,
                    "{op}: {who} a permit of this arbiter; a second request would risk a \
                     self-deadlock (request the union of the CPUs once instead)"
                )
            }
            AdmissionError::WouldBlock { op } => {
                write!(f, "{op}: the request conflicts with a held permit or an older waiting request")
            }
            AdmissionError::TimedOut { op, timeout } => {
                write!(f, "{op}: not admitted within the timeout of {timeout:?}")
            }
            AdmissionError::CpuIdTooLarge { op, cpu } => {
                write!(f, "{op}: CPU id {cpu} exceeds the supported maximum {}", CpuId::MAX)
            }
        }
    }
}

impl std::error::Error for AdmissionError {}
