//! The tile walk of one permutation piece: the piece seen as a stack of 2-D transposes,
//! cut into square tiles one cache line wide on both sides.
//!
//! A tile's columns run along the output's innermost axis `q` (contiguous in the output);
//! its rows run along the *p-run*: the source's contiguous axis, extended by every
//! further axis that continues it in memory (a `[64, 64, 32]` source block whose last two
//! axes are 64 × 32 contiguous elements is one run of 2048). Runs longer than a few
//! tiles let the tile grid start at a source line boundary at the cost of one cut tile
//! per run, and let short axes (a bond dimension of 2-32) fill whole tiles. Each p index
//! has its output row offset in a small table when the run spans several axes.

use strata_tensor::Scalar;

use super::output_rows::RowSink;
use super::stream_store::{rows_are_lines, stream_line};
use crate::strided::prefetch::{prefetch_read, prefetch_write};

/// Longest p-run spanning several axes (its output offsets are tabulated: 128 KiB).
const MAX_P_RUN: usize = 1 << 14;

/// Tiles along the p-run copied before the walk moves along `q`: a block of four
/// line-wide tiles reads four consecutive lines of every source run it touches.
const P_TILES_PER_BLOCK: usize = 4;

/// How far ahead of the tile being copied the prefetches run, in bytes of source. The
/// hardware prefetchers cannot follow reads and writes that jump by large power-of-two
/// strides, and without the hints every line is a demand miss (measured on the 64 MiB
/// [3,2,1,0] case: 4 GB/s without, 10 GB/s with, on one core; 8 and 32 KiB were close).
const LOOKAHEAD_BYTES: usize = 16 * 1024;

/// Pieces smaller than this (output bytes) run without the hints: their data lives in L2,
/// where the extra instructions cost more than the hints save (measured: a 256 KiB piece
/// ran at 22 GB/s without and 16 GB/s with them; a 1 MiB piece at 12 without and 16 with).
const PREFETCH_MIN_BYTES: usize = 512 * 1024;

/// Side of a square tile: one cache line of `f64` per tile row (8), four `c64`, and 16
/// of the narrower types (a tile of at most 1 KiB that lives in registers and L1).
pub(super) fn tile_side<T>() -> usize {
    match std::mem::size_of::<T>() {
        0..=4 => 16,
        5..=8 => 8,
        _ => 4,
    }
}

/// The output row offsets of the p indices.
enum PRows {
    /// One axis: index `t` is at `t * stride`.
    Strided(usize),
    /// Several axes: offsets by index.
    Table(Vec<usize>),
}

#[cfg(test)]
impl PRows {
    fn at(&self, t: usize) -> usize {
        match self {
            PRows::Strided(s) => t * s,
            PRows::Table(offsets) => offsets[t],
        }
    }
}

/// One permutation piece as a stack of 2-D transposes.
pub(super) struct TileGeometry {
    dims: Vec<usize>,
    strides: Vec<isize>,
    out_strides: Vec<usize>,
    /// The output's innermost axis.
    q: usize,
    /// Extent and source step of the p-run.
    np: usize,
    sp: isize,
    p_rows: PRows,
    /// Whether every p row offset is a multiple of `m` (tested for the tile side).
    p_row_multiples: Vec<usize>,
    /// The axes outside the tiles, outermost first: descending source stride, so that
    /// consecutive tile planes continue reading the pages the previous plane read.
    outer: Vec<usize>,
}

impl TileGeometry {
    /// The geometry of a piece with extents `dims`, source strides `strides` and output
    /// strides `out_strides` (the last output axis has stride 1), for tiles of `side`.
    /// At least two axes.
    pub(super) fn new(dims: &[usize], strides: &[isize], out_strides: &[usize], side: usize) -> Self {
        let q = dims.len() - 1;
        let (run, np) = p_run(dims, strides, side);
        let p = run[0];
        let p_rows = if run.len() == 1 {
            PRows::Strided(out_strides[p])
        } else {
            PRows::Table(
                (0..np)
                    .map(|t| {
                        let mut rest = t;
                        run.iter().fold(0, |acc, &k| {
                            let digit = rest % dims[k];
                            rest /= dims[k];
                            acc + digit * out_strides[k]
                        })
                    })
                    .collect(),
            )
        };
        let p_row_multiples = run.iter().map(|&k| out_strides[k]).collect();
        let outer = outer_axes(dims, strides, &run);
        TileGeometry {
            dims: dims.to_vec(),
            strides: strides.to_vec(),
            out_strides: out_strides.to_vec(),
            q,
            np,
            sp: strides[p],
            p_rows,
            p_row_multiples,
            outer,
        }
    }

    /// Whether the tiles' source runs are contiguous (the register tiles need that).
    pub(super) fn contiguous_runs(&self) -> bool {
        self.sp == 1
    }

    /// The length of the first tile along `q` that puts the following tiles on cache-line
    /// boundaries of the output rows; 0 when a tile row is not one line, or when the rows
    /// do not share one line phase (some other output stride is not a whole number of
    /// lines). A store that straddles two lines costs both lines' ownership: aligning the
    /// output rows of the 64 MiB [3,2,1,0] f64 case into a `Vec` (which starts 16 bytes
    /// into a line) took it from 12 to 23 GB/s on two threads. Aligning the source runs
    /// the same way measured slower on every shape tried (the cut tile it adds per run
    /// costs more than the split loads it saves).
    fn output_line_lead<T, const B: usize>(&self, out_base: *const T) -> usize {
        const LINE: usize = 64;
        let size = std::mem::size_of::<T>();
        let mut row_strides =
            self.outer.iter().map(|&k| self.out_strides[k]).chain(self.p_row_multiples.iter().copied());
        if B * size != LINE || !row_strides.all(|s| s.is_multiple_of(B)) {
            return 0;
        }
        (B - (out_base as usize % LINE) / size % B) % B
    }
}

/// The axes of the p-run, innermost first, and its extent: the source's most contiguous
/// axis other than the output's innermost, followed (when it has unit stride) by the axes
/// whose strides continue it in memory, while the run is shorter than one block of
/// [`P_TILES_PER_BLOCK`] tiles of `side` (and at most [`MAX_P_RUN`] elements). A run of a
/// block fills whole tiles; extending it further measured slower (5-10 % on the 64 MiB
/// [3,2,1,0] f64 case, whose contiguous axis is exactly one block).
fn p_run(dims: &[usize], strides: &[isize], side: usize) -> (Vec<usize>, usize) {
    let q = dims.len() - 1;
    let p = (0..q).min_by_key(|&k| strides[k].unsigned_abs()).unwrap_or(0);
    let mut run = vec![p];
    let mut np = dims[p];
    if strides[p] == 1 {
        while np < P_TILES_PER_BLOCK * side
            && let Some(k) = (0..q)
                .find(|&k| !run.contains(&k) && strides[k] == np as isize && dims[k] > 1 && np * dims[k] <= MAX_P_RUN)
        {
            run.push(k);
            np *= dims[k];
        }
    }
    (run, np)
}

/// The axes walked outside the tiles, outermost first: descending source stride, so that
/// consecutive tile planes continue reading the pages the previous plane read.
fn outer_axes(dims: &[usize], strides: &[isize], run: &[usize]) -> Vec<usize> {
    let mut outer: Vec<usize> = (0..dims.len() - 1).filter(|k| !run.contains(k)).collect();
    outer.sort_by_key(|&k| std::cmp::Reverse(strides[k].unsigned_abs()));
    outer
}

/// The p-run axes (innermost first) of a permutation with these extents and source
/// strides (at least two axes), and the outermost output axis the tiles do not span
/// (`None` when the p-run and the output's innermost axis cover them all).
pub(super) fn tiled_axes(dims: &[usize], strides: &[isize], side: usize) -> (Vec<usize>, Option<usize>) {
    let (run, _) = p_run(dims, strides, side);
    let untiled = outer_axes(dims, strides, &run).into_iter().min();
    (run, untiled)
}

/// The tiles along one axis of `n` elements, as (start, length): a first tile of `lead`
/// elements when `lead > 0`, so that the following tiles start on cache lines, then tiles
/// of `side` (the last one cut by the axis end).
fn tile_spans(n: usize, lead: usize, side: usize) -> Vec<(usize, usize)> {
    let lead = lead.min(n);
    let first = (lead > 0).then_some((0, lead));
    first.into_iter().chain((lead..n).step_by(side).map(move |start| (start, side.min(n - start)))).collect()
}

/// How one tile is copied.
pub(super) trait TileCopy: Copy {
    /// Whether whole tiles stream their output rows past the caches (`stream_store.rs`):
    /// the walk then issues no write prefetches, which would fetch the very lines the
    /// streaming stores avoid reading.
    fn streams(self) -> bool;

    /// Copies the tile whose run `a < cols` starts at `buf[src + a * sq]` (elements
    /// `sp` apart) into output rows `b < rows`, which start at `row_at(b)` in `out`.
    #[allow(clippy::too_many_arguments)] // One tile's geometry, passed in registers.
    fn copy<T: Scalar, const B: usize, S: RowSink<T> + ?Sized>(
        self,
        buf: &[T],
        src: isize,
        steps: [isize; 2],
        extents: [usize; 2],
        row_at: impl Fn(usize) -> usize,
        out: &mut S,
    );

    /// Copies a whole `B × B` tile: run `a < B` is the `B` elements `src + a * sq + b * sp`
    /// (`b < B`), and output row `b` is the `B` elements from `row_at(b)`, holding element
    /// `b` of every run in run order. The walk's fast path for the tiles inside a piece
    /// whose bounds were checked once: no bounds checks and no cut tests per run or row.
    /// Those were most of a tile's instructions, and the kernel is issue-bound enough to
    /// feel them: on the 64 MiB [3,2,1,0] f64 case at two workers the fast path took the
    /// kernel from 17-19 to 25-29 GB/s (back-to-back copies) and from 0.53× to 0.58×
    /// memcpy in `cargo xtask bench`.
    ///
    /// # Safety
    /// Every source element named is readable, every output row lies in memory the caller
    /// may write, and no reference to those output elements is alive.
    unsafe fn copy_whole<T: Scalar, const B: usize>(
        self,
        src: *const T,
        steps: [isize; 2],
        row_at: impl Fn(usize) -> *mut T,
    );
}

/// The portable tile copy, element by element; with `stream`, whole tiles gather each
/// output row into a line and stream it (`stream_store.rs`) when a row is one line.
#[derive(Clone, Copy)]
pub(super) struct ElementTiles {
    /// Whether whole tiles stream their output rows.
    pub(super) stream: bool,
}

impl TileCopy for ElementTiles {
    #[inline(always)]
    fn streams(self) -> bool {
        self.stream
    }

    #[inline(always)]
    fn copy<T: Scalar, const B: usize, S: RowSink<T> + ?Sized>(
        self,
        buf: &[T],
        src: isize,
        [sp, sq]: [isize; 2],
        [rows, cols]: [usize; 2],
        row_at: impl Fn(usize) -> usize,
        out: &mut S,
    ) {
        if sp == 1 && rows == B && cols == B {
            // The B source runs, each checked once; then every output row gathers one
            // element of each.
            let runs: [&[T]; B] = std::array::from_fn(|a| {
                let x = (src + a as isize * sq) as usize;
                &buf[x..x + B]
            });
            for b in 0..B {
                for (d, run) in out.row(row_at(b), B).iter_mut().zip(&runs) {
                    *d = run[b];
                }
            }
        } else {
            for b in 0..rows {
                let x = src + b as isize * sp;
                for (a, d) in out.row(row_at(b), cols).iter_mut().enumerate() {
                    *d = buf[(x + a as isize * sq) as usize];
                }
            }
        }
    }

    #[inline(always)]
    unsafe fn copy_whole<T: Scalar, const B: usize>(
        self,
        src: *const T,
        [sp, sq]: [isize; 2],
        row_at: impl Fn(usize) -> *mut T,
    ) {
        if self.stream && rows_are_lines::<T, B>() {
            for b in 0..B {
                let line: [T; B] = std::array::from_fn(|a| {
                    // SAFETY: the caller's contract: element `b` of every run is readable.
                    unsafe { src.offset(a as isize * sq + b as isize * sp).read() }
                });
                // SAFETY: the caller's contract: output row `b` holds `B` writable elements.
                unsafe { stream_line::<T, B>(row_at(b), &line) }
            }
            return;
        }
        for b in 0..B {
            let row = row_at(b);
            for a in 0..B {
                // SAFETY: the caller's contract: element `b` of run `a` is readable and
                // output row `b` holds `B` writable elements.
                unsafe { row.add(a).write(src.offset(a as isize * sq + b as isize * sp).read()) }
            }
        }
    }
}

/// Whether every element of the piece (extents `g.dims`, source strides from `offset`,
/// output strides from `dst_offset`) lies inside a source of `src_len` and an output of
/// `dst_len` elements: checked once per piece, so that whole tiles can skip the checks.
fn piece_in_bounds(g: &TileGeometry, offset: isize, src_len: usize, dst_offset: usize, dst_len: usize) -> bool {
    let mut low = Some(offset);
    let mut high = Some(offset);
    let mut last_out = Some(dst_offset);
    for ((&d, &s), &o) in g.dims.iter().zip(&g.strides).zip(&g.out_strides) {
        let last = d.saturating_sub(1);
        let span = isize::try_from(last).ok().and_then(|n| n.checked_mul(s));
        if s < 0 {
            low = low.zip(span).and_then(|(l, x)| l.checked_add(x));
        } else {
            high = high.zip(span).and_then(|(h, x)| h.checked_add(x));
        }
        last_out = last_out.and_then(|l| l.checked_add(last.checked_mul(o)?));
    }
    let source_ok = low.is_some_and(|l| l >= 0) && high.is_some_and(|h| usize::try_from(h).is_ok_and(|h| h < src_len));
    source_ok && last_out.is_some_and(|l| l < dst_len)
}

/// Where the prefetches point, relative to the tile being copied.
#[derive(Clone, Copy)]
enum Ahead {
    /// `k` elements further along `q` (the same rows, later columns).
    AlongQ(usize),
    /// `k` elements further along the p-run (the same columns, later rows).
    AlongP(usize),
    /// Further along the outer axes: source and output offsets added to the tile's.
    Outer(isize, usize),
}

/// The prefetch target: roughly [`LOOKAHEAD_BYTES`] of source later in the walk, which
/// copies a block of [`P_TILES_PER_BLOCK`] p-tiles for every q-tile before the next block,
/// and all blocks before the next outer index. Along `q` when one block's sweep of `q` is
/// long enough, else blocks ahead along `p` while the p-run lasts, else outer planes
/// ahead. Near the end of an axis a hint may point past it (a wasted hint, never a wrong
/// result).
fn prefetch_ahead<T>(g: &TileGeometry, side: usize) -> Ahead {
    let (np, nq) = (g.np, g.dims[g.q]);
    let tiles_ahead = (LOOKAHEAD_BYTES / (side * side * std::mem::size_of::<T>()).max(1)).max(1);
    let q_steps = tiles_ahead.div_ceil(P_TILES_PER_BLOCK);
    let q_tiles = nq.div_ceil(side);
    if q_tiles >= 2 * q_steps {
        return Ahead::AlongQ(q_steps * side);
    }
    let blocks = tiles_ahead.div_ceil(P_TILES_PER_BLOCK * q_tiles.max(1));
    let along_p = blocks * P_TILES_PER_BLOCK * side;
    match g.outer.last() {
        Some(&k) if along_p >= np => {
            let planes = tiles_ahead.div_ceil(np.div_ceil(side) * q_tiles.max(1));
            Ahead::Outer(planes as isize * g.strides[k], planes * g.out_strides[k])
        }
        _ => Ahead::AlongP(along_p.min(np)),
    }
}

/// The prefetch hints of one tile: its source at `src` (steps `[sp, sq]`), its output
/// rows at `row_base + p_row(i0 + b)`, and where the hints point ([`Ahead`]).
struct TileHints<T> {
    ahead: Ahead,
    src_ptr: *const T,
    dst_ptr: *const T,
    src: isize,
    row_base: usize,
    i0: usize,
    np: usize,
    steps: [isize; 2],
    /// Whether the output rows get write hints (not when they are streamed).
    write: bool,
}

impl<T> TileHints<T> {
    /// Issues one read hint per source run and one write hint per output row of a tile of
    /// `rows × cols` (constants on the whole-tile path, so the hints unroll).
    #[inline(always)]
    fn issue(&self, rows: usize, cols: usize, p_row: &impl Fn(usize) -> usize) {
        let TileHints { ahead, src_ptr, dst_ptr, src, row_base, i0, np, steps: [sp, sq], write } = *self;
        // Streamed rows get no write hints: those would read the lines streaming avoids.
        let write_rows = if write { rows } else { 0 };
        match ahead {
            Ahead::AlongQ(k) => {
                for a in 0..cols as isize {
                    prefetch_read(src_ptr.wrapping_offset(src + (k as isize + a) * sq));
                }
                for b in 0..write_rows {
                    prefetch_write(dst_ptr.wrapping_add(row_base + p_row(i0 + b) + k));
                }
            }
            Ahead::Outer(src_delta, dst_delta) => {
                for a in 0..cols as isize {
                    prefetch_read(src_ptr.wrapping_offset(src + src_delta + a * sq));
                }
                for b in 0..write_rows {
                    prefetch_write(dst_ptr.wrapping_add(row_base + p_row(i0 + b) + dst_delta));
                }
            }
            Ahead::AlongP(k) => {
                for a in 0..cols as isize {
                    prefetch_read(src_ptr.wrapping_offset(src + k as isize * sp + a * sq));
                }
                for b in 0..write_rows.min(np.saturating_sub(i0 + k)) {
                    prefetch_write(dst_ptr.wrapping_add(row_base + p_row(i0 + k + b)));
                }
            }
        }
    }
}

impl<T> Clone for TileHints<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for TileHints<T> {}

/// Copies every tile of the piece: source `buf` from `offset`, output rows into `out`
/// from `dst_offset`.
#[inline(always)]
pub(super) fn permute_tiles<T: Scalar, const B: usize, K: TileCopy, S: RowSink<T> + ?Sized>(
    tiles: K,
    buf: &[T],
    g: &TileGeometry,
    offset: isize,
    dst_offset: usize,
    out: &mut S,
) {
    if g.dims.contains(&0) {
        return;
    }
    // The row offsets are resolved once per piece, so the single-axis walk computes them
    // with a multiply and the multi-axis walk with a table read.
    match &g.p_rows {
        &PRows::Strided(stride) => {
            walk_tiles::<T, B, K, S, _>(tiles, buf, g, offset, dst_offset, out, move |t| t * stride)
        }
        PRows::Table(offsets) => walk_tiles::<T, B, K, S, _>(tiles, buf, g, offset, dst_offset, out, |t| offsets[t]),
    }
}

/// [`permute_tiles`] with the output offset of p index `t` given by `p_row(t)`.
#[inline(always)]
fn walk_tiles<T: Scalar, const B: usize, K: TileCopy, S: RowSink<T> + ?Sized, R: Fn(usize) -> usize>(
    tiles: K,
    buf: &[T],
    g: &TileGeometry,
    offset: isize,
    dst_offset: usize,
    out: &mut S,
    p_row: R,
) {
    let (sp, sq) = (g.sp, g.strides[g.q]);
    let (np, nq) = (g.np, g.dims[g.q]);
    let q_lead = g.output_line_lead::<T, B>(out.base());
    let p_spans = tile_spans(np, 0, B);
    let q_spans = tile_spans(nq, q_lead, B);
    let piece_len: usize = g.dims.iter().product();
    let prefetch = piece_len * std::mem::size_of::<T>() >= PREFETCH_MIN_BYTES;
    let ahead = prefetch_ahead::<T>(g, B);
    let (src_ptr, dst_ptr) = (buf.as_ptr(), out.base());
    let whole_tiles_unchecked = piece_in_bounds(g, offset, buf.len(), dst_offset, out.len());
    let streams = tiles.streams();
    let outer_count: usize = g.outer.iter().map(|&k| g.dims[k]).product();
    let mut idx = vec![0usize; g.outer.len()];
    let (mut dst_base, mut src_base) = (dst_offset, offset);
    for _ in 0..outer_count {
        for block in p_spans.chunks(P_TILES_PER_BLOCK) {
            for &(j0, cols) in &q_spans {
                for &(i0, rows) in block {
                    let src = src_base + i0 as isize * sp + j0 as isize * sq;
                    let row_base = dst_base + j0;
                    let hints =
                        TileHints { ahead, src_ptr, dst_ptr, src, row_base, i0, np, steps: [sp, sq], write: !streams };
                    if whole_tiles_unchecked && rows == B && cols == B {
                        if prefetch {
                            hints.issue(B, B, &p_row);
                        }
                        let dst = out.write_ptr();
                        // SAFETY: the tile's elements are elements of the piece, which
                        // `piece_in_bounds` found inside `buf` and `out`; `out` is borrowed
                        // exclusively here (a shared output's piece writes only its own
                        // rows, which are the piece's), and `dst` is used before `out` is
                        // touched again.
                        unsafe {
                            tiles.copy_whole::<T, B>(src_ptr.offset(src), [sp, sq], |b| {
                                dst.add(row_base + p_row(i0 + b))
                            })
                        }
                    } else {
                        if prefetch {
                            hints.issue(rows, cols, &p_row);
                        }
                        tiles.copy::<T, B, S>(buf, src, [sp, sq], [rows, cols], |b| row_base + p_row(i0 + b), out);
                    }
                }
            }
        }
        // Advance the outer odometer.
        for (slot, &k) in idx.iter_mut().zip(&g.outer).rev() {
            *slot += 1;
            dst_base += g.out_strides[k];
            src_base += g.strides[k];
            if *slot < g.dims[k] {
                break;
            }
            dst_base -= g.dims[k] * g.out_strides[k];
            src_base -= g.dims[k] as isize * g.strides[k];
            *slot = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The portable tile walk on contiguous source runs (which the register tiles take
    /// over on AVX-512 machines, so the public tests may never reach it there): a full
    /// reversal of `[a, b, c]` into outputs at several line phases, against the index
    /// definition. The runs span one axis or, where `c` is short, two.
    fn check_element_tiles<T: Scalar + From<u16>, const B: usize>() {
        for [a, b, c] in [[20usize, 9, 24], [17, 16, 33], [3, 40, 5], [70, 6, 2]] {
            let len = a * b * c;
            let source: Vec<T> = (0..len).map(|i| T::from(i as u16)).collect();
            let dims = [c, b, a];
            let strides = [1, c as isize, (b * c) as isize];
            let out_strides = [a * b, a, 1];
            let geometry = TileGeometry::new(&dims, &strides, &out_strides, B);
            for (phase, stream) in (0..3).flat_map(|p| [(p, false), (p, true)]) {
                let mut out = vec![T::from(u16::MAX); len + 3];
                permute_tiles::<T, B, _, [T]>(ElementTiles { stream }, &source, &geometry, 0, phase, &mut out[..]);
                for (i, j, k) in (0..a).flat_map(|i| (0..b).flat_map(move |j| (0..c).map(move |k| (i, j, k)))) {
                    assert!(
                        out[phase + (k * b + j) * a + i] == source[(i * b + j) * c + k],
                        "{a}x{b}x{c} phase {phase} stream {stream}"
                    );
                }
                assert!(out[..phase].iter().chain(&out[phase + len..]).all(|&o| o == T::from(u16::MAX)));
            }
        }
    }

    #[test]
    fn element_tiles_match_the_definition_on_contiguous_runs() {
        check_element_tiles::<f64, 8>();
        check_element_tiles::<f32, 16>();
        check_element_tiles::<i64, 8>();
    }

    #[test]
    fn p_runs_continue_across_axes_that_follow_in_memory() {
        // Output [c, b, a] of a row-major [a, b, c] source: c then b are one run.
        let g = TileGeometry::new(&[4, 6, 10], &[1, 4, 24], &[60, 10, 1], 8);
        assert_eq!(g.np, 24);
        assert!(g.outer.is_empty());
        assert_eq!(g.p_rows.at(5), 60 + 10);
        // A gap in memory (stride 8 after an axis of 4) ends the run.
        let g = TileGeometry::new(&[4, 6, 10], &[1, 8, 48], &[60, 10, 1], 8);
        assert_eq!(g.np, 4);
        assert_eq!(g.outer, vec![1]);
        // A run already one block of tiles long (4 tiles of 8) is not extended.
        let g = TileGeometry::new(&[32, 64, 64, 8], &[1, 32, 2048, 131072], &[32768, 512, 8, 1], 8);
        assert_eq!(g.np, 32);
        assert_eq!(g.outer, vec![2, 1]);
    }

    #[test]
    fn piece_bounds_cover_every_element_of_the_piece() {
        // A row-major [4, 6, 10] source reversed into [10, 6, 4]: elements 0..240.
        let g = TileGeometry::new(&[10, 6, 4], &[1, 10, 60], &[24, 4, 1], 8);
        assert!(piece_in_bounds(&g, 0, 240, 0, 240));
        assert!(!piece_in_bounds(&g, 0, 239, 0, 240), "last source element outside");
        assert!(!piece_in_bounds(&g, 1, 240, 0, 240), "offset pushes the piece past the end");
        assert!(!piece_in_bounds(&g, 0, 240, 1, 240), "output offset pushes the rows past the end");
        assert!(piece_in_bounds(&g, 0, 240, 1, 241));
        // Negative strides reach below the offset: the offset must leave room for them.
        let g = TileGeometry::new(&[10, 6, 4], &[-1, 10, -60], &[24, 4, 1], 8);
        assert!(piece_in_bounds(&g, 189, 240, 0, 240));
        assert!(!piece_in_bounds(&g, 188, 240, 0, 240));
        assert!(!piece_in_bounds(&g, 190, 240, 0, 240));
        // Strides whose span overflows are never in bounds.
        let g = TileGeometry::new(&[3, 4], &[isize::MAX / 2, 1], &[4, 1], 8);
        assert!(!piece_in_bounds(&g, 0, usize::MAX, 0, 12));
    }

    #[test]
    fn tile_spans_start_with_the_lead_and_cover_the_axis() {
        assert_eq!(tile_spans(20, 0, 8), vec![(0, 8), (8, 8), (16, 4)]);
        assert_eq!(tile_spans(20, 6, 8), vec![(0, 6), (6, 8), (14, 6)]);
        assert_eq!(tile_spans(4, 6, 8), vec![(0, 4)]);
    }
}
