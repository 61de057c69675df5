//! Copying any strided view into row-major order: the kernel behind transpose,
//! to_contiguous and every "materialise this view" step of other families.
//!
//! When the view's innermost coalesced axis is contiguous the copy is a sequence of
//! slice copies. Otherwise it is a tensor permutation, copied as a stack of 2-D tiles over
//! the output's innermost axis and the source's contiguous run (`tile_walk.rs`). A tile is
//! one cache line wide on both sides, so every line is read or written whole, once; the
//! tile grid starts at the output rows' first line boundary, so no store straddles two
//! lines; software prefetches run a fixed distance ahead because the hardware prefetchers
//! cannot follow rows that are megabytes apart. Tiles go through AVX-512 registers where
//! the CPU has them (`register_tile.rs`), element by element otherwise. This file splits
//! the work over the domain's workers (`output_rows.rs` when pieces interleave). Without
//! the tiles and the hints, a [3,2,1,0] permutation of 64 MiB ran at 5-8% of memcpy here;
//! with them, about half (docs/PERFORMANCE.md).

use strata_tensor::{Scalar, TypedView};

use super::output_rows::{RowSink, SharedRows};
#[cfg(target_arch = "x86_64")]
use super::register_tile::{RegisterTileWork, RegisterTiles};
use super::stream_store::{fence, streams_output};
use super::tile_walk::{ElementTiles, TileGeometry, permute_tiles, tile_side, tiled_axes};
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
    let strides: Vec<isize> = plan.strides().iter().map(|s| s[0]).collect();
    let mut out_strides = vec![1usize; dims.len()];
    for k in (0..dims.len() - 1).rev() {
        out_strides[k] = out_strides[k + 1] * dims[k + 1];
    }
    let permutation =
        Permutation { buf, dims, strides: &strides, out_strides: &out_strides, offset: plan.offsets()[0] };
    permutation.run(par, out);
}

/// A permutation of a strided source (`dims`, `strides`, `offset` into `buf`) into a
/// row-major output with strides `out_strides`.
struct Permutation<'a, T> {
    buf: &'a [T],
    dims: &'a [usize],
    strides: &'a [isize],
    out_strides: &'a [usize],
    offset: isize,
}

impl<T: Scalar> Permutation<'_, T> {
    /// Splits the permutation over the domain's workers and copies every piece.
    ///
    /// When axis 0 lies outside the p-run, pieces are contiguous output slices along it.
    /// When it is part of the source's contiguous runs, cutting it would give every worker
    /// a slice of every run: a run of four line-wide tiles split between two workers
    /// leaves each with two lines whose neighbours the other worker reads (the adjacent-line
    /// prefetch fetches them twice, and a misaligned run puts one line in both pieces). So
    /// the split goes along the outermost axis the tiles do not span, one range per worker
    /// (each worker then reads whole runs and writes whole blocks of output rows), and
    /// writes through [`SharedRows`] since those ranges interleave in the output. On the
    /// 64 MiB [3,2,1,0] f64 case at two workers this measured 0.72× memcpy against 0.63×
    /// for halves of axis 0 in the same runs (`cargo xtask bench`, 20 alternating runs);
    /// more pieces per worker measured slower. Only when no such axis has a range per
    /// worker does axis 0 get cut (into whole tiles when it holds a tile per worker), or
    /// else the p-run's outermost axis.
    fn run(&self, par: Parallelism<'_>, out: &mut [T]) {
        let len = out.len();
        let budget = par.budget().max(1);
        let side = tile_side::<T>();
        let stream = streams_output(std::mem::size_of_val(out));
        if budget == 1 || len < 2 * GRAIN {
            return self.copy_piece(0, 0..self.dims[0], out, 0, stream);
        }
        let row = self.out_strides[0];
        let (run, outermost_untiled) = tiled_axes(self.dims, self.strides, side);
        let leading_in_run = run.contains(&0);
        let across = outermost_untiled.filter(|&k| self.dims[k] >= budget);
        if !leading_in_run || (across.is_none() && self.dims[0] >= budget * side) {
            // Contiguous pieces along axis 0: whole tiles of it when the tiles span it.
            let align = if leading_in_run {
                row * self.dims[0].div_ceil(budget).next_multiple_of(side).min(self.dims[0])
            } else {
                row
            };
            return par_chunks_mut(par, out, GRAIN, align, |start, chunk| {
                let first = start / row;
                self.copy_piece(0, first..first + chunk.len() / row, chunk, 0, stream);
            });
        }
        // Axis 0 is part of the source's contiguous runs: split an axis the tiles do not
        // span, one range per worker, or else the p-run's outermost axis, into
        // interleaved pieces.
        let (axis, pieces) = match across {
            Some(k) => (k, budget),
            None => {
                let k = outermost_untiled.unwrap_or(run[run.len() - 1]);
                (k, self.dims[k].min(budget * 4))
            }
        };
        let extent = self.dims[axis];
        let shared = SharedRows::new(out);
        par.for_each_index(pieces, &|i| {
            let range = i * extent / pieces..(i + 1) * extent / pieces;
            let dst = range.start * self.out_strides[axis];
            // SAFETY: every piece writes only output elements whose index along `axis`
            // lies in its own `range`, and the ranges of different pieces are disjoint:
            // no two writers ever reach the same element.
            let mut rows = unsafe { shared.piece() };
            self.copy_piece(axis, range, &mut rows, dst, stream);
        });
    }

    /// Copies the piece whose index along `axis` lies in `range` into `out`, at output
    /// offset `dst` (output offsets of the whole permutation, less the piece's start when
    /// `out` is the piece's own slice); with `stream`, whole tiles stream their rows.
    fn copy_piece<S: RowSink<T> + ?Sized>(
        &self,
        axis: usize,
        range: std::ops::Range<usize>,
        out: &mut S,
        dst: usize,
        stream: bool,
    ) {
        let mut dims = self.dims.to_vec();
        dims[axis] = range.len();
        let offset = self.offset + range.start as isize * self.strides[axis];
        let geometry = TileGeometry::new(&dims, self.strides, self.out_strides, tile_side::<T>());
        match tile_side::<T>() {
            16 => permute_with_best_tiles::<T, 16, S>(self.buf, &geometry, offset, dst, out, stream),
            8 => permute_with_best_tiles::<T, 8, S>(self.buf, &geometry, offset, dst, out, stream),
            _ => permute_with_best_tiles::<T, 4, S>(self.buf, &geometry, offset, dst, out, stream),
        }
        if stream {
            // The streamed rows are weakly ordered: order them before the piece's end
            // becomes visible to whoever waits for it.
            fence();
        }
    }
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

/// Copies the tiles through vector registers when the CPU can and the source runs are
/// contiguous, element by element otherwise; with `stream`, whole tiles stream their
/// output rows (the caller fences).
fn permute_with_best_tiles<T: Scalar, const B: usize, S: RowSink<T> + ?Sized>(
    buf: &[T],
    g: &TileGeometry,
    offset: isize,
    dst: usize,
    out: &mut S,
    stream: bool,
) {
    #[cfg(target_arch = "x86_64")]
    if g.contiguous_runs()
        && let Some(tiles) = RegisterTiles::detect::<T, B>(stream)
    {
        return tiles.run(TileWalk::<T, B, S> { buf, geometry: g, offset, dst, out });
    }
    permute_tiles::<T, B, _, S>(ElementTiles { stream }, buf, g, offset, dst, out)
}

/// One permutation piece's tile walk, handed to [`RegisterTiles::run`].
#[cfg(target_arch = "x86_64")]
struct TileWalk<'a, T, const B: usize, S: ?Sized> {
    buf: &'a [T],
    geometry: &'a TileGeometry,
    offset: isize,
    dst: usize,
    out: &'a mut S,
}

#[cfg(target_arch = "x86_64")]
impl<T: Scalar, const B: usize, S: RowSink<T> + ?Sized> RegisterTileWork for TileWalk<'_, T, B, S> {
    #[inline(always)]
    fn run(self, tiles: RegisterTiles) {
        permute_tiles::<T, B, _, S>(tiles, self.buf, self.geometry, self.offset, self.dst, self.out)
    }
}
