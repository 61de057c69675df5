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
        read_growing_mask(|mask| {
            let bytes = std::mem::size_of_val(mask);
            // SAFETY: `mask` is a live, writable buffer of exactly `bytes` bytes, aligned
            // for c_ulong like cpu_set_t; the kernel writes at most `bytes` bytes into it.
            let rc = unsafe { libc::sched_getaffinity(pid, bytes, mask.as_mut_ptr().cast::<libc::cpu_set_t>()) };
            if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
        })
    }

    /// Calls `read` with ever larger masks while it fails with EINVAL, which is how the
    /// kernel says the buffer is smaller than its CPU count.
    pub(super) fn read_growing_mask(
        mut read: impl FnMut(&mut [c_ulong]) -> io::Result<()>,
    ) -> Result<CpuSet, TopologyError> {
        let mut bits = INITIAL_BITS;
        loop {
            let mut mask: Vec<c_ulong> = vec![0; bits / WORD_BITS];
            match read(&mut mask) {
                Ok(()) => return mask_to_set(&mask),
                Err(err) if err.raw_os_error() == Some(libc::EINVAL) && bits < MAX_BITS => {
                    bits *= 2;
                }
                Err(source) => {
                    return Err(TopologyError::Affinity { op: "sched_getaffinity", source });
                }
            }
        }
    }

    pub(super) fn set_thread_affinity(cpus: &CpuSet) -> Result<(), TopologyError> {
        let last = cpus.last();
        if last > CpuId::MAX {
            return Err(TopologyError::CpuIdTooLarge { context: "pin_current_thread", id: last.0 });
        }
        let words = (last.index() / WORD_BITS + 1).max(INITIAL_BITS / WORD_BITS);
        let mut mask: Vec<c_ulong> = vec![0; words];
        for cpu in cpus {
            mask[cpu.index() / WORD_BITS] |= 1 << (cpu.index() % WORD_BITS);
        }
        let bytes = mask.len() * size_of::<c_ulong>();
        // SAFETY: `mask` is a live buffer of exactly `bytes` bytes that the kernel only reads;
        // pid 0 is the calling thread.
        let rc = unsafe { libc::sched_setaffinity(0, bytes, mask.as_ptr().cast::<libc::cpu_set_t>()) };
        if rc == 0 {
            Ok(())
        } else {
            Err(TopologyError::Affinity { op: "sched_setaffinity", source: io::Error::last_os_error() })
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
        Err(TopologyError::Unsupported { what: "reading thread affinity on this platform" })
    }

    pub(super) fn process_affinity() -> Result<CpuSet, TopologyError> {
        Err(TopologyError::Unsupported { what: "reading process affinity on this platform" })
    }

    pub(super) fn set_thread_affinity(_cpus: &CpuSet) -> Result<(), TopologyError> {
        Err(TopologyError::Unsupported { what: "pinning threads on this platform" })
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::io;

    use super::platform::read_growing_mask;
    use crate::{CpuId, TopologyError};

    #[test]
    fn mask_grows_until_the_kernel_accepts_it() {
        // A fake kernel with 5000 CPUs, of which 3, 64 and 4999 are allowed.
        let mut sizes = Vec::new();
        let set = read_growing_mask(|mask| {
            let bits = mask.len() * libc::c_ulong::BITS as usize;
            sizes.push(bits);
            if bits < 5000 {
                return Err(io::Error::from_raw_os_error(libc::EINVAL));
            }
            for cpu in [3usize, 64, 4999] {
                let w = libc::c_ulong::BITS as usize;
                mask[cpu / w] |= 1 << (cpu % w);
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(sizes, vec![1024, 2048, 4096, 8192]);
        assert_eq!(set.as_slice(), &[CpuId(3), CpuId(64), CpuId(4999)]);
    }

    #[test]
    fn growth_stops_at_the_id_limit_and_other_errors_pass_through() {
        let mut calls = 0;
        let err = read_growing_mask(|_| {
            calls += 1;
            Err(io::Error::from_raw_os_error(libc::EINVAL))
        })
        .unwrap_err();
        assert!(matches!(err, TopologyError::Affinity { .. }));
        assert_eq!(calls, 7, "1024 .. 65536 bits");
        let err = read_growing_mask(|_| Err(io::Error::from_raw_os_error(libc::EPERM)));
        assert!(matches!(err, Err(TopologyError::Affinity { .. })));
        // An empty mask is not a CPU set.
        let err = read_growing_mask(|_| Ok(()));
        assert!(matches!(err, Err(TopologyError::EmptyCpuSet { .. })));
    }
}
