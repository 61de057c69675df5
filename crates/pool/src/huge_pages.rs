//! Transparent-huge-page advice for large fresh buffers.
//!
//! A fresh buffer's pages are mapped on first write, one fault per 4 KiB page. For the
//! large outputs of tensor operations that fault cost dominates: on this project's 2-vCPU
//! guest, allocating, filling and freeing 64 MiB took 31-42 ms with 4 KiB pages and 12 ms
//! when the range was advised for 2 MiB pages. But an advised fault may also *compact
//! memory synchronously* to find a free huge page, depending on the kernel's `defrag`
//! setting, and that stall is far worse than the faults it saves: with `defrag` =
//! `madvise` (a common distribution default) the allocating 64 MiB transpose ran at
//! 9 GB/s in some processes and 1.1 GB/s in others (100+ ms compaction stalls per call),
//! against a steady 4.5-4.8 GB/s without advice. So fresh buffers of at least
//! [`ADVICE_MIN_BYTES`] are advised only where huge pages are enabled (`always` or
//! `madvise`) and `defrag` never compacts in the faulting thread for advised ranges
//! (`defer` or `never`); elsewhere, and where the settings cannot be read, nothing is
//! advised.

use std::sync::OnceLock;

/// Fresh buffers at least this large are advised (two huge pages: smaller buffers rarely
/// contain a whole aligned huge page).
pub const ADVICE_MIN_BYTES: usize = 4 << 20;

/// Asks the kernel to back the whole 2 MiB-aligned huge pages inside the fresh, untouched
/// allocation `[ptr, ptr + bytes)` with transparent huge pages.
pub(crate) fn advise_huge_pages(ptr: *mut u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE_PAGE: usize = 2 << 20;
        if bytes < ADVICE_MIN_BYTES || !advice_pays() {
            return;
        }
        let start = (ptr as usize).next_multiple_of(HUGE_PAGE);
        let end = (ptr as usize).saturating_add(bytes) / HUGE_PAGE * HUGE_PAGE;
        if end > start {
            // SAFETY: `[start, end)` lies inside the live allocation the caller just made
            // and owns. MADV_HUGEPAGE changes only how the kernel backs those pages, never
            // their contents or their validity, so no Rust reference is affected. Failure
            // (EINVAL where huge pages are compiled out) leaves the range as it was and is
            // ignored on purpose: this is advice.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, bytes);
}

/// Whether this system's transparent-huge-page settings make the advice worth giving
/// (read once per process).
fn advice_pays() -> bool {
    static PAYS: OnceLock<bool> = OnceLock::new();
    *PAYS.get_or_init(|| {
        let read = |name: &str| std::fs::read_to_string(format!("/sys/kernel/mm/transparent_hugepage/{name}"));
        match (read("enabled"), read("defrag")) {
            (Ok(enabled), Ok(defrag)) => settings_allow_advice(&enabled, &defrag),
            _ => false,
        }
    })
}

/// The rule on the two settings files' contents (the selected value is bracketed):
/// huge pages enabled, and no synchronous compaction for advised faults.
fn settings_allow_advice(enabled: &str, defrag: &str) -> bool {
    let selected =
        |s: &str| s.split_whitespace().find(|w| w.starts_with('[')).map(|w| w.trim_matches(['[', ']']).to_string());
    matches!(selected(enabled).as_deref(), Some("always" | "madvise"))
        && matches!(selected(defrag).as_deref(), Some("defer" | "never"))
}

#[cfg(test)]
mod rule_tests {
    use super::settings_allow_advice;

    #[test]
    fn advice_needs_huge_pages_on_and_no_synchronous_compaction() {
        let defrag = |selected: &str| {
            ["always", "defer", "defer+madvise", "madvise", "never"]
                .map(|v| if v == selected { format!("[{v}]") } else { v.to_string() })
                .join(" ")
        };
        assert!(settings_allow_advice("always [madvise] never", &defrag("defer")));
        assert!(settings_allow_advice("[always] madvise never", &defrag("never")));
        assert!(!settings_allow_advice("always [madvise] never", &defrag("madvise")));
        assert!(!settings_allow_advice("always [madvise] never", &defrag("defer+madvise")));
        assert!(!settings_allow_advice("always [madvise] never", &defrag("always")));
        assert!(!settings_allow_advice("always madvise [never]", &defrag("defer")));
        assert!(!settings_allow_advice("", ""));
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::{ADVICE_MIN_BYTES, advice_pays};
    use crate::BufferPool;

    /// The `VmFlags` line of the mapping in /proc/self/smaps that contains `addr`.
    fn vm_flags_of(addr: usize) -> Option<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ')
                && let Some((lo, hi)) = range.split_once('-')
                && let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
            {
                inside = (lo..hi).contains(&addr);
            } else if inside && let Some(flags) = line.strip_prefix("VmFlags:") {
                return Some(flags.to_string());
            }
        }
        None
    }

    /// Large fresh buffers read as zero, and carry the advice exactly when this system's
    /// settings call for it.
    #[test]
    fn large_fresh_buffers_are_advised_where_it_pays_and_read_as_zero() {
        let pool = BufferPool::new(64 << 20);
        let len = 3 * ADVICE_MIN_BYTES / 8;
        let loan = pool.acquire_zeroed::<f64>(len).unwrap();
        assert!(loan.iter().all(|&x| x == 0.0));
        // An address in the middle lies inside an aligned huge page of the advised range.
        let middle = loan.as_ptr() as usize + len * 4;
        let flags = vm_flags_of(middle).unwrap_or_default();
        assert_eq!(flags.split_whitespace().any(|f| f == "hg"), advice_pays(), "VmFlags:{flags}");
    }

    #[test]
    fn small_buffers_are_not_advised() {
        let pool = BufferPool::new(64 << 20);
        let loan = pool.acquire_zeroed::<bool>(ADVICE_MIN_BYTES / 2).unwrap();
        let flags = vm_flags_of(loan.as_ptr() as usize + ADVICE_MIN_BYTES / 4).unwrap_or_default();
        assert!(!flags.split_whitespace().any(|f| f == "hg"), "VmFlags:{flags}");
    }
}
