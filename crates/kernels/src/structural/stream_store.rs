//! Non-temporal ("streaming") stores of whole output lines, for permutations whose output
//! is larger than the caches.
//!
//! A plain store to a line that is not in the cache first reads the line from memory (the
//! read for ownership), only to overwrite all of it: a permutation of `n` bytes then moves
//! `3n` bytes through the memory bus instead of `2n`. A streaming store writes the line
//! straight to memory through a write-combining buffer, without that read, and without
//! evicting the source lines still to be read from the cache. The tiles write every output
//! line whole with one line-aligned row, the case streaming stores are made for. On the
//! 64 MiB [3,2,1,0] f64 permutation at two threads on the AMD Zen 4 guest this took the
//! register tiles from 0.45-0.6× to 0.75-1.0× memcpy in the same runs (docs/PERFORMANCE.md);
//! on the Intel guest of earlier sessions it measured slower, so only non-Intel processors
//! stream ([`streams_output`]).
//!
//! Streamed lines are weakly ordered: a piece that streamed ends with [`fence`] before its
//! worker reports the piece done, so that whoever reads the output afterwards sees them.
//!
//! This module and `register_tile.rs` are the only places the permutation writes with
//! vector intrinsics; other ISAs store the lines plainly.

/// Output bytes from which a permutation streams its output lines. Below it the output
/// may stay in the caches for the op that reads it next, which plain stores allow; above
/// it the result cannot stay there anyway (it exceeds the last-level cache of most
/// machines this runs on, 8-32 MiB per socket), and the saved reads for ownership are a
/// third of the traffic.
const STREAM_MIN_BYTES: usize = 16 << 20;

/// Whether a permutation with `output_bytes` of output streams its rows: from
/// [`STREAM_MIN_BYTES`], on processors where streaming measured faster. On the AMD Zen 4
/// guest it did by far (0.45-0.6× → 0.75-1.0× memcpy on the 64 MiB [3,2,1,0] f64 case);
/// on the Intel Xeon guest of earlier sessions it measured slower (0.51-0.61× against
/// 0.58-0.65× with plain stores and write prefetches, docs/PERFORMANCE.md), so Intel
/// processors keep plain stores. Other x86-64 vendors stream, as AMD does. Decided once
/// per process.
pub(super) fn streams_output(output_bytes: usize) -> bool {
    output_bytes >= STREAM_MIN_BYTES && streaming_pays()
}

#[cfg(target_arch = "x86_64")]
fn streaming_pays() -> bool {
    static PAYS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PAYS.get_or_init(|| {
        // CPUID leaf 0 names the vendor in EBX, EDX, ECX: "Genu" "ineI" "ntel" for Intel.
        let id = std::arch::x86_64::__cpuid(0);
        let vendor: Vec<u8> = [id.ebx, id.edx, id.ecx].iter().flat_map(|r| r.to_le_bytes()).collect();
        vendor != b"GenuineIntel"
    })
}

#[cfg(not(target_arch = "x86_64"))]
fn streaming_pays() -> bool {
    false
}

/// Bytes of one cache line, the unit of a streamed row.
pub(super) const LINE: usize = 64;

/// Whether rows of `B` elements of `T` are exactly one line, the only rows streamed.
#[inline(always)]
pub(super) fn rows_are_lines<T, const B: usize>() -> bool {
    B * std::mem::size_of::<T>() == LINE
}

/// Writes `line` (one whole cache line: `B * size_of::<T>() == 64`) to `dst`, streaming it
/// past the caches when `dst` starts a line, plainly otherwise.
///
/// # Safety
/// `dst` is valid for writing `B` elements, and no reference to them is alive.
#[inline(always)]
pub(super) unsafe fn stream_line<T: Copy, const B: usize>(dst: *mut T, line: &[T; B]) {
    #[cfg(target_arch = "x86_64")]
    if rows_are_lines::<T, B>() && (dst as usize).is_multiple_of(LINE) {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        let src = line.as_ptr().cast::<__m128i>();
        let out = dst.cast::<__m128i>();
        for k in 0..LINE / 16 {
            // SAFETY: SSE2 is part of every x86_64 target. `line` holds 64 bytes, read
            // unaligned in four 16-byte parts; `dst` starts a line, so its four 16-byte
            // parts are aligned as the streaming store needs, and the caller lets us write
            // them. The bytes are whole elements of `T` copied unchanged.
            unsafe { _mm_stream_si128(out.add(k), _mm_loadu_si128(src.add(k))) }
        }
        return;
    }
    // SAFETY: the caller's contract: `dst` is valid for `B` elements.
    unsafe { dst.cast::<[T; B]>().write_unaligned(*line) }
}

/// Orders every streamed store of this thread before its later stores (the release of the
/// piece to the waiting caller among them). A no-op on other ISAs, which never stream.
#[inline(always)]
pub(super) fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of every x86_64 target; the fence has no memory operands.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_lines_land_whole_at_every_phase() {
        // Lines at every 8-byte phase of a 64-byte block: aligned ones stream, the others
        // are stored plainly; both must leave exactly the line, and nothing around it.
        let mut buf = vec![0u64; 64];
        let line: [u64; 8] = std::array::from_fn(|i| 100 + i as u64);
        let base = buf.as_ptr() as usize;
        for start in 8..16 {
            buf.iter_mut().for_each(|x| *x = u64::MAX);
            let at = buf[start..].as_mut_ptr();
            // SAFETY: `start + 8 <= 64`: the line lies inside `buf`, borrowed only here.
            unsafe { stream_line::<u64, 8>(at, &line) };
            fence();
            let aligned = (base + start * 8).is_multiple_of(LINE);
            for (i, &x) in buf.iter().enumerate() {
                let want = if (start..start + 8).contains(&i) { line[i - start] } else { u64::MAX };
                assert_eq!(x, want, "line at element {start} (aligned: {aligned}), element {i}");
            }
        }
    }

    #[test]
    fn only_line_sized_rows_stream() {
        assert!(rows_are_lines::<f64, 8>());
        assert!(rows_are_lines::<f32, 16>());
        assert!(!rows_are_lines::<u8, 16>());
        assert!(!rows_are_lines::<f64, 4>());
    }
}
