//! Copying any strided view into row-major order: the kernel behind transpose,
//! to_contiguous and every "materialise this view" step of other families.
//!
//! When the view's innermost coalesced axis is contiguous the copy is a sequence of
//! slice copies. Otherwise it is a tensor permutation and is blocked: tiles over the
//! output's innermost axis and the input's most contiguous axis keep both the reads and
//! the writes of one tile inside L1, which is what lifts a transpose from a few percent
//! of memcpy to a large fraction of it.

use strata_tensor::{Scalar, TypedView};

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
    // When the outermost output axis is the source's contiguous one, a piece must keep a
    // whole tile of it, or every read shrinks to a few elements. (With fewer rows than a
    // tile the permutation then runs on one worker: splitting along other axes would need
    // writes into interleaved, non-slice regions of the output.)
    let q = dims.len() - 1;
    let p = (0..q).min_by_key(|&k| strides[k].unsigned_abs()).unwrap_or(0);
    let align = if p == 0 { row * tile_side::<T>().min(dims[0]) } else { row };
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

/// Side of a square tile: source and destination tiles of 8 KiB each, which stay in L1
/// (measured on this machine: 16 and 8 were slower for the 64 MiB [3,2,1,0] case).
fn tile_side<T>() -> usize {
    if std::mem::size_of::<T>() > 8 { 16 } else { 32 }
}

/// Sequential blocked permutation of the strided source (`dims`, `strides`, `offset`
/// into `buf`) into the row-major `out`. Requires at least two axes.
fn blocked_permute<T: Copy>(buf: &[T], dims: &[usize], strides: &[isize], offset: isize, out: &mut [T]) {
    let r = dims.len();
    let q = r - 1;
    // The source's most contiguous axis other than the output's innermost one.
    let p = (0..q).min_by_key(|&k| strides[k].unsigned_abs()).unwrap_or(0);
    let mut out_strides = vec![1usize; r];
    for k in (0..q).rev() {
        out_strides[k] = out_strides[k + 1] * dims[k + 1];
    }
    // The remaining axes, walked with the smallest source stride innermost: consecutive
    // tiles then continue reading the pages the previous tile read (the writes are
    // already grouped by the tile's output rows).
    let mut outer: Vec<usize> = (0..q).filter(|&k| k != p).collect();
    outer.sort_by_key(|&k| std::cmp::Reverse(strides[k].unsigned_abs()));
    let outer_count: usize = outer.iter().map(|&k| dims[k]).product();
    let tile = tile_side::<T>();
    let (np, nq) = (dims[p], dims[q]);
    let (sp, sq, osp) = (strides[p], strides[q], out_strides[p]);
    let mut idx = vec![0usize; outer.len()];
    let (mut ob, mut ib) = (0usize, offset);
    for _ in 0..outer_count {
        for i0 in (0..np).step_by(tile) {
            let i1 = (i0 + tile).min(np);
            for j0 in (0..nq).step_by(tile) {
                let j1 = (j0 + tile).min(nq);
                for i in i0..i1 {
                    let o = ob + i * osp;
                    let x = ib + i as isize * sp;
                    let row = &mut out[o + j0..o + j1];
                    for (j, d) in (j0..j1).zip(row.iter_mut()) {
                        *d = buf[(x + j as isize * sq) as usize];
                    }
                }
            }
        }
        // Advance the outer odometer.
        for (slot, &k) in idx.iter_mut().zip(&outer).rev() {
            *slot += 1;
            ob += out_strides[k];
            ib += strides[k];
            if *slot < dims[k] {
                break;
            }
            ob -= dims[k] * out_strides[k];
            ib -= dims[k] as isize * strides[k];
            *slot = 0;
        }
    }
}
