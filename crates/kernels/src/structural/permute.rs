//! Copying any strided view into row-major order: the kernel behind transpose,
//! to_contiguous and every "materialise this view" step of other families.
//!
//! When the view's innermost coalesced axis is contiguous the copy is a sequence of
//! slice copies. Otherwise it is a tensor permutation, copied as a stack of 2-D tiles over
//! the output's innermost axis and the source's most contiguous axis. A tile is one cache
//! line wide on both sides, so every line is read or written whole, once; the tile grid
//! starts at the output rows' first line boundary, so no store straddles two lines;
//! software prefetches run a fixed distance ahead because the hardware prefetchers cannot
//! follow rows that are megabytes apart. Tiles go through AVX-512 registers where the CPU
//! has them (`register_tile.rs`), element by element otherwise. Without the tiles and the
//! hints, a [3,2,1,0] permutation of 64 MiB ran at 5-8% of memcpy here; with them, about
//! half (docs/PERFORMANCE.md).

use strata_tensor::{Scalar, TypedView};

#[cfg(target_arch = "x86_64")]
use super::register_tile::{RegisterTileWork, RegisterTiles};
use crate::strided::prefetch::{prefetch_read, prefetch_write};

use crate::par::Parallelism;
use crate::strided::{GRAIN, StridedPlan, par_chunks_mut};

/// Copies `src` into `out` (row-major order of `src`'s shape). The caller checked
/// `out.len() == src.len()`.
pub(crate) fn copy_view_to_slice<T: Scalar>(par: Parallelism<'_>, src: &TypedView<'_, T>, out: &mut [T]) {
    if out.is_empty() {
        return;
    }
    let plan = StridedPlan::new(src.shape(), [src.layout()]);
    let buf = src.buffer();
    let dims = plan.dims();
    let inner = plan.inner_strides()[0];
    if dims.len() == 1 || inner == 1 || inner == 0 {
        par_chunks_mut(par, out, GRAIN, 1, |start, chunk| {
            plan.for_each_run(start, start + chunk.len(), |pos, [off], len| {
                let dst = &mut chunk[pos - start..pos - start + len];
                copy_run(dst, buf, off, inner);
            });
        });
        return;
    }
    // A permutation: split the output along its outermost coalesced axis (contiguous
    // sub-slices) and run the blocked kernel on each piece.
    let strides: Vec<isize> = plan.strides().iter().map(|s| s[0]).collect();
    let row: usize = dims[1..].iter().product();
    let offset = plan.offsets()[0];
    // When the outermost output axis is the source's contiguous one, each worker takes one
    // piece of it, in whole tiles: every piece reads a slice of every contiguous source
    // run, and a run cut into more pieces straddles more cache lines (on the 64 MiB
    // [3,2,1,0] f64 case, two pieces of 16 rows ran at 26 GB/s where four of 8 ran at
    // 20). With fewer rows than a tile the permutation runs on one worker: splitting
    // along other axes would need writes into interleaved, non-slice regions of the
    // output.
    let q = dims.len() - 1;
    let p = (0..q).min_by_key(|&k| strides[k].unsigned_abs()).unwrap_or(0);
    let align = if p == 0 {
        let side = tile_side::<T>();
        row * dims[0].div_ceil(par.budget().max(1)).next_multiple_of(side).min(dims[0])
    } else {
        row
    };
    par_chunks_mut(par, out, GRAIN, align, |start, chunk| {
        let first = start / row;
        let mut piece_dims = dims.to_vec();
        piece_dims[0] = chunk.len() / row;
        blocked_permute(buf, &piece_dims, &strides, offset + first as isize * strides[0], chunk);
    });
}

/// One run of a plain copy: contiguous, broadcast or strided.
#[inline]
fn copy_run<T: Copy>(dst: &mut [T], buf: &[T], off: isize, stride: isize) {
    let len = dst.len();
    match stride {
        1 => dst.copy_from_slice(&buf[off as usize..off as usize + len]),
        0 => dst.fill(buf[off as usize]),
        _ => {
            for (i, d) in dst.iter_mut().enumerate() {
                *d = buf[(off + i as isize * stride) as usize];
            }
        }
    }
}

/// Side of a square tile: one cache line of `f64` per tile row (8), four `c64`, and 16
/// of the narrower types (a tile of at most 1 KiB that lives in registers and L1).
fn tile_side<T>() -> usize {
    match std::mem::size_of::<T>() {
        0..=4 => 16,
        5..=8 => 8,
        _ => 4,
    }
}

/// How far ahead of the tile being copied the prefetches run, in bytes of source. The
/// hardware prefetchers cannot follow reads and writes that jump by large power-of-two
/// strides, and without the hints every line is a demand miss (measured on the 64 MiB
/// [3,2,1,0] case: 4 GB/s without, 10 GB/s with, on one core; 8 and 32 KiB were close).
const LOOKAHEAD_BYTES: usize = 16 * 1024;

/// Pieces smaller than this (output bytes) run without the hints: their data lives in L2,
/// where the extra instructions cost more than the hints save (measured: a 256 KiB piece
/// ran at 22 GB/s without and 16 GB/s with them; a 1 MiB piece at 12 without and 16 with).
const PREFETCH_MIN_BYTES: usize = 512 * 1024;

/// Sequential blocked permutation of the strided source (`dims`, `strides`, `offset`
/// into `buf`) into the row-major `out`. Requires at least two axes.
fn blocked_permute<T: Scalar>(buf: &[T], dims: &[usize], strides: &[isize], offset: isize, out: &mut [T]) {
    let geometry = TileGeometry::new(dims, strides);
    match tile_side::<T>() {
        16 => permute_with_best_tiles::<T, 16>(buf, &geometry, offset, out),
        8 => permute_with_best_tiles::<T, 8>(buf, &geometry, offset, out),
        _ => permute_with_best_tiles::<T, 4>(buf, &geometry, offset, out),
    }
}

/// Copies the tiles through vector registers when the CPU can and the source runs are
/// contiguous, element by element otherwise.
fn permute_with_best_tiles<T: Scalar, const B: usize>(buf: &[T], g: &TileGeometry<'_>, offset: isize, out: &mut [T]) {
    #[cfg(target_arch = "x86_64")]
    if g.strides[g.p] == 1
        && let Some(tiles) = RegisterTiles::detect::<T, B>()
    {
        return tiles.run(TileWalk::<T, B> { buf, geometry: g, offset, out });
    }
    permute_tiles::<T, B, _>(ElementTiles, buf, g, offset, out)
}

/// One permutation's tile walk, handed to [`RegisterTiles::run`].
#[cfg(target_arch = "x86_64")]
struct TileWalk<'a, 'g, T, const B: usize> {
    buf: &'a [T],
    geometry: &'a TileGeometry<'g>,
    offset: isize,
    out: &'a mut [T],
}

#[cfg(target_arch = "x86_64")]
impl<T: Scalar, const B: usize> RegisterTileWork for TileWalk<'_, '_, T, B> {
    #[inline(always)]
    fn run(self, tiles: RegisterTiles) {
        permute_tiles::<T, B, _>(tiles, self.buf, self.geometry, self.offset, self.out)
    }
}

/// How the tiles of a permutation are copied.
trait TileCopy: Copy {
    /// Copies `tile` (source strides `[sp, sq]`, output row stride `osp`): a whole
    /// `B × B` tile, or one cut by an axis end or a line boundary.
    fn copy<T: Scalar, const B: usize>(self, buf: &[T], tile: Tile, strides: [isize; 2], osp: usize, out: &mut [T]);
}

/// The portable tile copy, element by element.
#[derive(Clone, Copy)]
struct ElementTiles;

impl TileCopy for ElementTiles {
    #[inline(always)]
    fn copy<T: Scalar, const B: usize>(self, buf: &[T], tile: Tile, strides: [isize; 2], osp: usize, out: &mut [T]) {
        if tile.rows == B && tile.cols == B {
            copy_full_tile::<T, B>(buf, tile, strides, osp, out)
        } else {
            copy_partial_tile(buf, tile, strides, osp, out)
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl TileCopy for RegisterTiles {
    /// Chosen only when the source runs are contiguous (`sp == 1`).
    #[inline(always)]
    fn copy<T: Scalar, const B: usize>(self, buf: &[T], tile: Tile, [_, sq]: [isize; 2], osp: usize, out: &mut [T]) {
        RegisterTiles::copy::<T, B>(self, buf, tile.src, sq, [tile.rows, tile.cols], out, tile.dst, osp)
    }
}

/// The shape of one permutation seen as a stack of 2-D transposes: the output's innermost
/// axis `q` and the source's most contiguous other axis `p` span the tiles; the remaining
/// axes are walked outside them.
struct TileGeometry<'a> {
    dims: &'a [usize],
    strides: &'a [isize],
    out_strides: Vec<usize>,
    /// The other axes, outermost first: descending source stride, so that consecutive
    /// tile planes continue reading the pages the previous plane read.
    outer: Vec<usize>,
    p: usize,
    q: usize,
}

impl<'a> TileGeometry<'a> {
    fn new(dims: &'a [usize], strides: &'a [isize]) -> Self {
        let r = dims.len();
        let q = r - 1;
        let p = (0..q).min_by_key(|&k| strides[k].unsigned_abs()).unwrap_or(0);
        let mut out_strides = vec![1usize; r];
        for k in (0..q).rev() {
            out_strides[k] = out_strides[k + 1] * dims[k + 1];
        }
        let mut outer: Vec<usize> = (0..q).filter(|&k| k != p).collect();
        outer.sort_by_key(|&k| std::cmp::Reverse(strides[k].unsigned_abs()));
        TileGeometry { dims, strides, out_strides, outer, p, q }
    }
}

/// One tile: the source and output offsets of its (p, q) corner and its extents.
#[derive(Clone, Copy)]
struct Tile {
    src: isize,
    dst: usize,
    rows: usize,
    cols: usize,
}

/// Where the prefetches point, as offsets from the tile being copied: the tile that the
/// walk reaches roughly [`LOOKAHEAD_BYTES`] of source later. Tiles go `p` fastest, then
/// `q`, then the innermost outer axis, so the distance is a whole number of steps of the
/// first loop that reaches far enough. Near the end of a loop the hint points past it (at
/// a tile visited later or not at all): a wasted hint, never a wrong result.
fn prefetch_delta<T>(g: &TileGeometry<'_>, side: usize) -> (isize, isize) {
    let tiles_ahead = (LOOKAHEAD_BYTES / (side * side * std::mem::size_of::<T>()).max(1)).max(1);
    let along_p = g.dims[g.p].div_ceil(side);
    if along_p > tiles_ahead {
        let k = (tiles_ahead * side) as isize;
        return (k * g.strides[g.p], k * g.out_strides[g.p] as isize);
    }
    let along_q = g.dims[g.q].div_ceil(side);
    let rows_ahead = tiles_ahead.div_ceil(along_p);
    match g.outer.last() {
        Some(&k) if rows_ahead >= along_q => {
            let planes = tiles_ahead.div_ceil(along_p * along_q) as isize;
            (planes * g.strides[k], planes * g.out_strides[k] as isize)
        }
        _ => {
            let k = (rows_ahead * side) as isize;
            (k * g.strides[g.q], k)
        }
    }
}

/// Copies every tile of the permutation with `B × B` tiles, prefetching the lines of the
/// tile [`LOOKAHEAD_BYTES`] ahead.
#[inline(always)]
fn permute_tiles<T: Scalar, const B: usize, K: TileCopy>(
    tiles: K,
    buf: &[T],
    g: &TileGeometry<'_>,
    offset: isize,
    out: &mut [T],
) {
    if g.dims.contains(&0) {
        return;
    }
    let (sp, sq, osp) = (g.strides[g.p], g.strides[g.q], g.out_strides[g.p]);
    let (np, nq) = (g.dims[g.p], g.dims[g.q]);
    let (ahead_src, ahead_dst) = prefetch_delta::<T>(g, B);
    let (src_ptr, dst_ptr) = (buf.as_ptr(), out.as_ptr());
    let prefetch = std::mem::size_of_val(out) >= PREFETCH_MIN_BYTES;
    let outer_count: usize = g.outer.iter().map(|&k| g.dims[k]).product();
    let mut idx = vec![0usize; g.outer.len()];
    let (mut dst_base, mut src_base) = (0usize, offset);
    let q_lead = output_line_lead::<T, B>(g, out);
    for _ in 0..outer_count {
        for (j0, cols) in tile_spans(nq, q_lead, B) {
            for (i0, rows) in tile_spans(np, 0, B) {
                let tile = Tile {
                    src: src_base + i0 as isize * sp + j0 as isize * sq,
                    dst: dst_base + i0 * osp + j0,
                    rows,
                    cols,
                };
                if prefetch {
                    for a in 0..cols as isize {
                        prefetch_read(src_ptr.wrapping_offset(tile.src + ahead_src + a * sq));
                    }
                    for b in 0..rows {
                        prefetch_write(dst_ptr.wrapping_offset((tile.dst + b * osp) as isize + ahead_dst));
                    }
                }
                tiles.copy::<T, B>(buf, tile, [sp, sq], osp, out);
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

/// The tiles along one axis of `n` elements, as (start, length): a first tile of `lead`
/// elements when `lead > 0`, so that the following tiles start on cache lines, then tiles
/// of `side` (the last one cut by the axis end).
fn tile_spans(n: usize, lead: usize, side: usize) -> impl Iterator<Item = (usize, usize)> {
    let lead = lead.min(n);
    let first = (lead > 0).then_some((0, lead));
    first.into_iter().chain((lead..n).step_by(side).map(move |start| (start, side.min(n - start))))
}

/// The length of the first tile along `q` that brings the following tiles onto
/// cache-line boundaries of the output rows; 0 when a tile row is not one line, or when
/// the rows do not share one line phase (some other output stride is not a whole number
/// of lines). A store that straddles two lines costs both lines' ownership and a split
/// write: on the 64 MiB [3,2,1,0] f64 case into a `Vec` (which starts 16 bytes into a
/// line) aligning the output rows took the register tiles from 12 to 23 GB/s on two
/// threads (memcpy 48). Aligning the source runs the same way measured slower: along the
/// source's short contiguous axis it cuts one more tile per row than it saves in split
/// loads.
fn output_line_lead<T, const B: usize>(g: &TileGeometry<'_>, out: &[T]) -> usize {
    const LINE: usize = 64;
    let size = std::mem::size_of::<T>();
    let uniform = g.outer.iter().chain([&g.p]).all(|&k| g.out_strides[k].is_multiple_of(B));
    if B * size != LINE || !uniform {
        return 0;
    }
    let phase = (out.as_ptr() as usize % LINE) / size;
    (B - phase % B) % B
}

/// A tile cut by the end of `p` or `q`: element by element.
fn copy_partial_tile<T: Scalar>(buf: &[T], tile: Tile, [sp, sq]: [isize; 2], osp: usize, out: &mut [T]) {
    for i in 0..tile.rows {
        let o = tile.dst + i * osp;
        let x = tile.src + i as isize * sp;
        for (j, d) in out[o..o + tile.cols].iter_mut().enumerate() {
            *d = buf[(x + j as isize * sq) as usize];
        }
    }
}

/// One full tile through a register/L1 block: each source line and each output line is
/// touched once, whole, so cache-set conflicts between the strided rows cannot evict a
/// line before it is used up.
#[inline(always)]
fn copy_full_tile<T: Scalar, const B: usize>(buf: &[T], tile: Tile, [sp, sq]: [isize; 2], osp: usize, out: &mut [T]) {
    if sp == 1 {
        // The B source runs, each checked once; then every output row gathers one column.
        let runs: [&[T]; B] = std::array::from_fn(|a| {
            let x = (tile.src + a as isize * sq) as usize;
            &buf[x..x + B]
        });
        for b in 0..B {
            let o = tile.dst + b * osp;
            for (d, run) in out[o..o + B].iter_mut().zip(&runs) {
                *d = run[b];
            }
        }
    } else {
        for b in 0..B {
            let o = tile.dst + b * osp;
            let x = tile.src + b as isize * sp;
            for (a, d) in out[o..o + B].iter_mut().enumerate() {
                *d = buf[(x + a as isize * sq) as usize];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The portable tile walk on contiguous source runs (which the register tiles take
    /// over on AVX-512 machines, so the public tests may never reach it there): a full
    /// reversal of `[a, b, c]` into outputs at several line phases, against the index
    /// definition.
    fn check_element_tiles<T: Scalar + From<u16>, const B: usize>() {
        for [a, b, c] in [[20usize, 9, 24], [17, 16, 33], [3, 40, 5]] {
            let len = a * b * c;
            let source: Vec<T> = (0..len).map(|i| T::from(i as u16)).collect();
            let dims = [c, b, a];
            let strides = [1, c as isize, (b * c) as isize];
            let geometry = TileGeometry::new(&dims, &strides);
            for phase in 0..3 {
                let mut out = vec![T::from(u16::MAX); len + 3];
                permute_tiles::<T, B, _>(ElementTiles, &source, &geometry, 0, &mut out[phase..phase + len]);
                for (i, j, k) in (0..a).flat_map(|i| (0..b).flat_map(move |j| (0..c).map(move |k| (i, j, k)))) {
                    assert!(
                        out[phase + (k * b + j) * a + i] == source[(i * b + j) * c + k],
                        "{a}x{b}x{c} phase {phase}"
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
}
