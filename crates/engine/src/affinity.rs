//! How executors pin their workers: behind a trait so that start-up verification (and its
//! failure) can be tested with a double on any machine.

use std::fmt::Debug;

use strata_topology::CpuSet;

/// Sets and reads back the calling thread's CPU affinity.
///
/// The managed executor calls [`ThreadAffinity::pin_current_thread`] then
/// [`ThreadAffinity::current_thread_affinity`] on every worker at start-up and compares.
pub trait ThreadAffinity: Send + Sync + Debug {
    /// Confines the calling thread to `cpus`. `Err` carries the OS's reason.
    fn pin_current_thread(&self, cpus: &CpuSet) -> Result<(), String>;

    /// The calling thread's current affinity. `Err` carries the OS's reason.
    fn current_thread_affinity(&self) -> Result<CpuSet, String>;
}

/// The operating system's thread affinity (through strata-topology).
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemThreadAffinity;

impl ThreadAffinity for SystemThreadAffinity {
    fn pin_current_thread(&self, cpus: &CpuSet) -> Result<(), String> {
        strata_topology::pin_current_thread(cpus).map_err(|e| e.to_string())
    }

    fn current_thread_affinity(&self) -> Result<CpuSet, String> {
        strata_topology::current_thread_affinity().map_err(|e| e.to_string())
    }
}
