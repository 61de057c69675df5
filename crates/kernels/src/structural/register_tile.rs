//! Permutation tiles transposed in AVX-512 registers: a tile's source runs (up to one
//! cache line each: 16 × 4-byte, 8 × 8-byte or 4 × 16-byte elements) are loaded as
//! 512-bit rows, transposed by log2(side) levels of two-source dword permutes and stored
//! as output rows. Cut tiles (at the edges of an axis, or before the first line
//! boundary) use masked loads and stores; whole tiles use plain ones, which measured
//! faster here (two-thread [3,2,1,0] f64 permutation of 64 MiB: 25 GB/s against 17.5
//! with masks on every tile). The element-by-element copy of a tile costs 2 × side²
//! scalar moves; here it is 2 × side vector moves and side × log2(side) permutes
//! (measured on the same case with the data in L2: 1.7× the element copy's throughput).
//!
//! Whole tiles of a large output stream their rows past the caches (`stream_store.rs`):
//! each row is one aligned line, written by one streaming store.
//!
//! This and `stream_store.rs` are the only places the permutation kernel touches vector
//! intrinsics; the tile walk in `permute.rs` is shared with the portable copy.

use strata_tensor::Scalar;

use super::output_rows::RowSink;
use super::stream_store::LINE;
use super::tile_walk::TileCopy;
use std::arch::x86_64::{
    __m512i, _mm512_loadu_si512, _mm512_mask_storeu_epi32, _mm512_maskz_loadu_epi32, _mm512_permutex2var_epi32,
    _mm512_setzero_si512, _mm512_storeu_si512, _mm512_stream_si512,
};

/// Proof that the running CPU has AVX-512F: the only way to copy tiles through
/// [`RegisterTiles::copy`] is to obtain one from [`RegisterTiles::detect`]. With `stream`,
/// whole tiles stream their line-aligned output rows.
#[derive(Clone, Copy)]
pub(super) struct RegisterTiles {
    stream: bool,
}

/// Work that copies tiles with [`RegisterTiles`]; [`RegisterTiles::run`] runs it in code
/// compiled for AVX-512F, so the tile copies inline into its loops.
pub(super) trait RegisterTileWork {
    /// Does the work.
    fn run(self, tiles: RegisterTiles);
}

impl RegisterTiles {
    /// The register tile copier, when the CPU has AVX-512F and `T`'s tile rows
    /// (`B` elements) are exactly one 512-bit register of 4-byte multiples; `stream`
    /// chooses streaming stores for whole tiles.
    pub(super) fn detect<T, const B: usize>(stream: bool) -> Option<Self> {
        let size = std::mem::size_of::<T>();
        let fits = B * size == 64 && size.is_multiple_of(4);
        (fits && std::arch::is_x86_feature_detected!("avx512f")).then_some(RegisterTiles { stream })
    }

    /// Runs `work` in a function compiled with AVX-512F enabled.
    #[inline]
    pub(super) fn run(self, work: impl RegisterTileWork) {
        // SAFETY: `self` exists only when the CPU reports AVX-512F, the one feature
        // `run_with_avx512` enables.
        unsafe { run_with_avx512(self, work) }
    }
}

impl TileCopy for RegisterTiles {
    #[inline(always)]
    fn streams(self) -> bool {
        self.stream
    }

    /// Copies one tile of at most `B × B` elements: run `a < cols` is
    /// `buf[src + a * sq..][..rows]`, and output row `b < rows` is
    /// `out.row(row_at(b), cols)`, holding element `b` of every run in run order. Only
    /// chosen for contiguous runs (`sp == 1`).
    ///
    /// Panics (a slicing bound check, before anything is written) if a run lies outside
    /// `buf`; an output row outside `out` panics when it is reached.
    #[inline(always)]
    fn copy<T: Scalar, const B: usize, S: RowSink<T> + ?Sized>(
        self,
        buf: &[T],
        src: isize,
        [_, sq]: [isize; 2],
        [rows, cols]: [usize; 2],
        row_at: impl Fn(usize) -> usize,
        out: &mut S,
    ) {
        // INVARIANT: `detect` checked `B * size_of::<T>() == 64` and a multiple-of-4
        // element size before a `RegisterTiles` could exist; tiles are at most `B` wide.
        debug_assert!(B * std::mem::size_of::<T>() == 64 && rows <= B && cols <= B);
        let mut runs: [&[T]; B] = [&[]; B];
        for (a, run) in runs.iter_mut().enumerate().take(cols) {
            let x = (src + a as isize * sq) as usize;
            *run = &buf[x..x + rows];
        }
        // SAFETY: `self` exists only when the CPU reports AVX-512F, the one feature
        // `transpose_tile` and `store_row` enable; every run holds `rows` elements.
        let regs = unsafe { transpose_tile::<T, B>(&runs, rows, cols) };
        for (b, reg) in regs.iter().enumerate().take(rows) {
            // SAFETY: as above; the row slice holds `cols` elements.
            unsafe { store_row(*reg, out.row(row_at(b), cols)) }
        }
    }

    #[inline(always)]
    unsafe fn copy_whole<T: Scalar, const B: usize>(
        self,
        src: *const T,
        [sp, sq]: [isize; 2],
        row_at: impl Fn(usize) -> *mut T,
    ) {
        // INVARIANT: register tiles are chosen only for contiguous source runs.
        debug_assert!(sp == 1);
        // SAFETY: `self` exists only when the CPU reports AVX-512F; the caller's contract
        // makes each run `src + a * sq` 64 readable bytes (B contiguous elements of 64
        // bytes in all, as `detect` checked) and each output row 64 writable ones. A row
        // is streamed only when it starts a line, the alignment the streaming store needs.
        unsafe {
            let regs: [__m512i; B] = std::array::from_fn(|a| _mm512_loadu_si512(src.offset(a as isize * sq).cast()));
            for (b, reg) in transpose_registers::<T, B>(regs).into_iter().enumerate() {
                let row = row_at(b);
                if self.stream && (row as usize).is_multiple_of(LINE) {
                    _mm512_stream_si512(row.cast(), reg);
                } else {
                    _mm512_storeu_si512(row.cast(), reg);
                }
            }
        }
    }
}

#[target_feature(enable = "avx512f")]
fn run_with_avx512(tiles: RegisterTiles, work: impl RegisterTileWork) {
    work.run(tiles)
}

/// The dword permutation indices of one transpose level that swaps index bit `h` of the
/// row with index bit `h` of the column, for elements of `words` dwords: the low row of a
/// pair keeps its columns without bit `h` and takes the high row's columns with it, the
/// high row the reverse. Index values 16.. pick from the second operand.
#[inline(always)]
fn level_indices(words: usize, h: usize) -> ([i32; 16], [i32; 16]) {
    let mut low = [0i32; 16];
    let mut high = [0i32; 16];
    let shift = (h * words) as i32;
    for lane in 0..16 {
        let lane_i = lane as i32;
        if (lane / words) & h == 0 {
            low[lane] = lane_i;
            high[lane] = lane_i + shift;
        } else {
            low[lane] = 16 + lane_i - shift;
            high[lane] = 16 + lane_i;
        }
    }
    (low, high)
}

/// The dword mask of the first `elements` elements of `words` dwords each.
#[inline(always)]
fn lane_mask(elements: usize, words: usize) -> u16 {
    ((1u32 << (elements * words)) - 1) as u16
}

/// Loads the runs (`rows` elements each, missing runs as zeros) and transposes them in
/// registers: register `b` holds element `b` of every run. Every run must hold at least
/// `rows` elements.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn transpose_tile<T: Copy, const B: usize>(runs: &[&[T]; B], rows: usize, cols: usize) -> [__m512i; B] {
    let words = std::mem::size_of::<T>() / 4;
    let whole = rows == B && cols == B;
    let load_mask = lane_mask(rows, words);
    let regs: [__m512i; B] = std::array::from_fn(|a| {
        if whole {
            // SAFETY: a whole tile's runs hold `B` elements, 64 bytes, read without
            // alignment needs.
            unsafe { _mm512_loadu_si512(runs[a].as_ptr().cast()) }
        } else if a < cols {
            // SAFETY: the masked load reads only the first `rows` elements, which the
            // run holds (the caller's contract); masked-off lanes are never accessed.
            unsafe { _mm512_maskz_loadu_epi32(load_mask, runs[a].as_ptr().cast()) }
        } else {
            _mm512_setzero_si512()
        }
    });
    transpose_registers::<T, B>(regs)
}

/// Transposes `B` registers of `B` elements of `T` each: register `b` of the result holds
/// element `b` of every input register, in register order.
#[target_feature(enable = "avx512f")]
#[inline]
fn transpose_registers<T, const B: usize>(mut regs: [__m512i; B]) -> [__m512i; B] {
    let words = std::mem::size_of::<T>() / 4;
    let mut h = B / 2;
    while h >= 1 {
        let (low, high) = level_indices(words, h);
        // SAFETY: both arrays are 16 dwords, read whole, without alignment needs.
        let (low, high) =
            unsafe { (_mm512_loadu_si512(low.as_ptr().cast()), _mm512_loadu_si512(high.as_ptr().cast())) };
        for i in 0..B {
            if i & h == 0 {
                let (a, b) = (regs[i], regs[i + h]);
                regs[i] = _mm512_permutex2var_epi32(a, low, b);
                regs[i + h] = _mm512_permutex2var_epi32(a, high, b);
            }
        }
        h /= 2;
    }
    regs
}

/// Stores the first `line.len()` elements of `reg` into `line` (at most one register):
/// a plain store for a whole line (masked stores on every tile measured 30 % slower), a
/// masked one for a cut row.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn store_row<T: Copy>(reg: __m512i, line: &mut [T]) {
    let size = std::mem::size_of::<T>();
    if std::mem::size_of_val(line) == 64 {
        // SAFETY: `line` holds 64 bytes, written without alignment needs; the bytes are
        // whole source elements in new places, so every written `T` is a valid value.
        unsafe { _mm512_storeu_si512(line.as_mut_ptr().cast(), reg) }
    } else {
        // SAFETY: the masked store writes only the first `line.len()` elements (fewer
        // than 64 bytes), inside `line`; the values are whole source elements.
        unsafe { _mm512_mask_storeu_epi32(line.as_mut_ptr().cast(), lane_mask(line.len(), size / 4), reg) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Register tiles of every cut against the definition, for every width: the output
    /// holds the transpose where the tile lies and is untouched elsewhere.
    fn check<T: Scalar, const B: usize>(make: impl Fn(usize) -> T) {
        let Some(tiles) = RegisterTiles::detect::<T, B>(false) else { return };
        let untouched = make(usize::MAX / 2);
        for rows in 1..=B {
            for cols in 1..=B {
                // Runs of `rows` elements, two apart, ending exactly at the end of `source`.
                let source: Vec<T> = (0..(cols - 1) * (rows + 2) + rows).map(&make).collect();
                let osp = cols + 3;
                let mut out = vec![untouched; 1 + (rows - 1) * osp + cols];
                let steps = [1, (rows + 2) as isize];
                TileCopy::copy::<T, B, [T]>(tiles, &source, 0, steps, [rows, cols], |b| 1 + b * osp, &mut out[..]);
                for (i, &o) in out.iter().enumerate() {
                    let (b, a) = ((i.max(1) - 1) / osp, (i.max(1) - 1) % osp);
                    let want = if i > 0 && a < cols { source[a * (rows + 2) + b] } else { untouched };
                    assert_eq!(o, want, "tile {rows}x{cols}, output element {i}");
                }
            }
        }
    }

    #[test]
    fn register_tiles_transpose_every_width_and_cut() {
        check::<f32, 16>(|i| i as f32);
        check::<i64, 8>(|i| i as i64);
        check::<strata_tensor::c64, 4>(|i| strata_tensor::c64::new(i as f64, -(i as f64)));
    }

    #[test]
    fn register_tiles_refuse_rows_that_are_not_one_register() {
        assert!(RegisterTiles::detect::<u8, 64>(false).is_none());
        assert!(RegisterTiles::detect::<f64, 4>(false).is_none());
        assert!(RegisterTiles::detect::<[u8; 3], 16>(false).is_none());
    }
}
