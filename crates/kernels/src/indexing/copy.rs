//! Strided element copies shared by every indexing kernel: one coalescing loop whose inner
//! run is a plain slice copy when both sides are contiguous.

use strata_tensor::{Scalar, TypedView};

use super::parallel::{for_each_piece, parts_for};
use crate::context::KernelContext;

/// One side of a strided copy: buffer position of element zero and per-axis strides.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Strided<'s> {
    pub(crate) offset: isize,
    pub(crate) strides: &'s [isize],
}

/// Merges axes that are contiguous with their inner neighbour on both sides and drops
/// extent-1 axes, so the inner run is as long as possible. Returns (extent, src stride,
/// dst stride) per remaining axis, outermost first.
fn coalesce(shape: &[usize], src: &[isize], dst: &[isize]) -> Vec<(usize, isize, isize)> {
    let mut axes: Vec<(usize, isize, isize)> = Vec::with_capacity(shape.len());
    for ((&n, &s), &d) in shape.iter().zip(src).zip(dst) {
        if n == 1 {
            continue;
        }
        if let Some(last) = axes.last_mut()
            && last.1 == s * n as isize
            && last.2 == d * n as isize
        {
            *last = (last.0 * n, s, d);
            continue;
        }
        axes.push((n, s, d));
    }
    axes
}

/// Copies the `shape` block from `src` (through `from`) into `dst` (through `to`). Every
/// addressed position must lie inside its buffer (established by the caller's layouts).
pub(crate) fn copy_strided<T: Copy>(shape: &[usize], src: &[T], from: Strided<'_>, dst: &mut [T], to: Strided<'_>) {
    if shape.contains(&0) {
        return;
    }
    let axes = coalesce(shape, from.strides, to.strides);
    let Some((&(run, ss, ds), outer)) = axes.split_last() else {
        dst[to.offset as usize] = src[from.offset as usize];
        return;
    };
    let mut digits = vec![0usize; outer.len()];
    let (mut s_at, mut d_at) = (from.offset, to.offset);
    loop {
        if ss == 1 && ds == 1 {
            let (s0, d0) = (s_at as usize, d_at as usize);
            dst[d0..d0 + run].copy_from_slice(&src[s0..s0 + run]);
        } else {
            for j in 0..run as isize {
                dst[(d_at + j * ds) as usize] = src[(s_at + j * ss) as usize];
            }
        }
        // Advance the outer odometer, keeping both positions in step.
        let mut axis = outer.len();
        loop {
            if axis == 0 {
                return;
            }
            axis -= 1;
            let (n, s, d) = outer[axis];
            digits[axis] += 1;
            s_at += s;
            d_at += d;
            if digits[axis] < n {
                break;
            }
            s_at -= s * n as isize;
            d_at -= d * n as isize;
            digits[axis] = 0;
        }
    }
}

/// Copies a strided view into a compact row-major buffer of its shape, split over the
/// context's workers along the outermost axis when large.
pub(crate) fn copy_to_contiguous<T: Scalar>(ctx: &KernelContext<'_>, view: &TypedView<'_, T>, out: &mut [T]) {
    let shape = view.shape();
    if out.is_empty() {
        return;
    }
    let Some((&rows, inner_shape)) = shape.split_first() else {
        out[0] = view.buffer()[view.offset()];
        return;
    };
    let row_len: usize = inner_shape.iter().product();
    let src_strides = view.strides();
    let dst_strides = strata_tensor::shape::row_major_strides(shape);
    let buffer = view.buffer();
    for_each_piece(ctx, out, row_len, parts_for(ctx, out.len()).min(rows), &|first, piece| {
        let first_row = first / row_len;
        let mut piece_shape = shape.to_vec();
        piece_shape[0] = piece.len() / row_len;
        let from =
            Strided { offset: view.offset() as isize + first_row as isize * src_strides[0], strides: src_strides };
        copy_strided(&piece_shape, buffer, from, piece, Strided { offset: 0, strides: &dst_strides });
    });
}

/// Writes `value` into every element of `out`, split over the context's workers when large.
pub(crate) fn fill<T: Scalar>(ctx: &KernelContext<'_>, out: &mut [T], value: T) {
    for_each_piece(ctx, out, 1, parts_for(ctx, out.len()), &|_, piece| piece.fill(value));
}
