//! Reading and setting CPU affinity masks through the scheduler.
//!
//! The only `unsafe` of the crate lives here: the `sched_{get,set}affinity` calls.

use crate::cpuset::CpuSet;
use crate::error::TopologyError;

/// Pins the calling thread to `cpus`: from now on the scheduler runs it only there.
///
/// Errors if a CPU id exceeds [`crate::CpuId::MAX`], if the kernel refuses the mask (for
/// example none of the CPUs is online or allowed by the cgroup), and on platforms
/// without thread affinity ([`TopologyError::Unsupported`]).
///
/// ```
/// # #[cfg(target_os = "linux")] {
/// use strata_topology::{current_thread_affinity, pin_current_thread, CpuSet};
///
/// let before = current_thread_affinity()?;
/// std::thread::spawn(move || {
///     let one = CpuSet::single(before.first());
///     pin_current_thread(&one)?;
///     assert_eq!(current_thread_affinity()?, one);
///     Ok::<(), strata_topology::TopologyError>(())
/// })
/// .join()
/// .unwrap()?;
/// # }
/// # Ok::<(), strata_topology::TopologyError>(())
/// ```
pub fn pin_current_thread(cpus: &CpuSet) -> Result<(), TopologyError> {
    platform::set_thread_affinity(cpus)
}

/// The calling thread's affinity mask.
pub fn current_thread_affinity() -> Result<CpuSet, TopologyError> {
    platform::thread_affinity()
}

/// The process's affinity mask: that of its main thread, so a worker that pinned itself
/// still sees what the process as a whole may use.
pub fn process_affinity() -> Result<CpuSet, TopologyError> {
    platform::process_affinity()
}

#[cfg(target_os = "linux")]
mod platform {
    use std::io;

    use libc::c_ulong;

    use crate::cpuset::{CpuId, CpuSet};
    use crate::error::TopologyError;

    const WORD_BITS: usize = c_ulong::BITS as usize;
    // glibc's fixed cpu_set_t size; masks start here and grow when the kernel has more CPUs.
    const INITIAL_BITS: usize = 1024;
    const MAX_BITS: usize = CpuId::MAX.0 as usize + 1;

    pub(super) fn thread_affinity() -> Result<CpuSet, TopologyError> {
        // pid 0 is the calling thread.
        get_affinity(0)
    }

    pub(super) fn process_affinity() -> Result<CpuSet, TopologyError> {
        // SAFETY: getpid has no preconditions and cannot fail.
        let pid = unsafe { libc::getpid() };
        // The process id is the main thread's id.
        get_affinity(pid)
    }

    fn get_affinity(pid: libc::pid_t) -> Result<CpuSet, TopologyError> {
        let mut bits = INITIAL_BITS;
        loop {
            let mut mask: Vec<c_ulong> = vec![0; bits / WORD_BITS];
            let bytes = mask.len() * size_of::<c_ulong>();
            // SAFETY: `mask` is a live, writable buffer of exactly `bytes` bytes, aligned for
            // c_ulong like cpu_set_t; the kernel writes at most `bytes` bytes into it.
            let rc = unsafe {
                libc::sched_getaffinity(pid, bytes, mask.as_mut_ptr().cast::<libc::cpu_set_t>())
            };
            if rc == 0 {
                return mask_to_set(&mask);
            }
            let err = io::Error::last_os_error();
            // EINVAL means the buffer is smaller than the kernel's CPU count: grow it.
            if err.raw_os_error() == Some(libc::EINVAL) && bits < MAX_BITS {
                bits *= 2;
                continue;
            }
            return Err(TopologyError::Affinity {
                op: "sched_getaffinity",
                source: err,
            });
        }
    }

    pub(super) fn set_thread_affinity(cpus: &CpuSet) -> Result<(), TopologyError> {
        let last = cpus.last();
        if last > CpuId::MAX {
            return Err(TopologyError::CpuIdTooLarge {
                context: "pin_current_thread",
                id: last.0,
            });
        }
        let words = (last.index() / WORD_BITS + 1).max(INITIAL_BITS / WORD_BITS);
        let mut mask: Vec<c_ulong> = vec![0; words];
        for cpu in cpus {
            mask[cpu.index() / WORD_BITS] |= 1 << (cpu.index() % WORD_BITS);
        }
        let bytes = mask.len() * size_of::<c_ulong>();
        // SAFETY: `mask` is a live buffer of exactly `bytes` bytes that the kernel only reads;
        // pid 0 is the calling thread.
        let rc =
            unsafe { libc::sched_setaffinity(0, bytes, mask.as_ptr().cast::<libc::cpu_set_t>()) };
        if rc == 0 {
            Ok(())
        } else {
            Err(TopologyError::Affinity {
                op: "sched_setaffinity",
                source: io::Error::last_os_error(),
            })
        }
    }

    fn mask_to_set(mask: &[c_ulong]) -> Result<CpuSet, TopologyError> {
        let mut ids = Vec::new();
        for (w, &word) in mask.iter().enumerate() {
            let mut rest = word;
            while rest != 0 {
                let bit = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                // The mask holds at most MAX_BITS bits, so the id fits in u32.
                ids.push(CpuId((w * WORD_BITS + bit) as u32));
            }
        }
        CpuSet::from_sorted_vec(ids, "sched_getaffinity")
    }
}

#[cfg(not(target_os = "linux"))]
mod platform {
    use crate::cpuset::CpuSet;
    use crate::error::TopologyError;

    pub(super) fn thread_affinity() -> Result<CpuSet, TopologyError> {
        Err(TopologyError::Unsupported {
            what: "reading thread affinity on this platform",
        })
    }

    pub(super) fn process_affinity() -> Result<CpuSet, TopologyError> {
        Err(TopologyError::Unsupported {
            what: "reading process affinity on this platform",
        })
    }

    pub(super) fn set_thread_affinity(_cpus: &CpuSet) -> Result<(), TopologyError> {
        Err(TopologyError::Unsupported {
            what: "pinning threads on this platform",
        })
    }
}
