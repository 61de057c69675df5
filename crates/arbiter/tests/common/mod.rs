//! Shared helpers for the admission tests.
#![allow(dead_code)]

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use strata_arbiter::AdmissionRequest;
use strata_topology::CpuSet;

/// Upper bound on any wait that is expected to succeed.
pub const PATIENCE: Duration = Duration::from_secs(10);
/// How long we watch for something that must NOT happen.
pub const QUIET: Duration = Duration::from_millis(60);

pub fn cpus(list: &str) -> AdmissionRequest {
    AdmissionRequest::Cpus(list.parse::<CpuSet>().expect("valid cpulist"))
}

/// The next message, which must arrive within `PATIENCE`.
pub fn expect_msg<T>(rx: &Receiver<T>, what: &str) -> T {
    match rx.recv_timeout(PATIENCE) {
        Ok(v) => v,
        Err(e) => panic!("{what}: nothing within {PATIENCE:?} ({e})"),
    }
}

/// Asserts nothing arrives within `QUIET`.
pub fn expect_silence<T: std::fmt::Debug>(rx: &Receiver<T>, what: &str) {
    match rx.recv_timeout(QUIET) {
        Err(RecvTimeoutError::Timeout) => {}
        other => panic!("{what}: expected no message, got {other:?}"),
    }
}
