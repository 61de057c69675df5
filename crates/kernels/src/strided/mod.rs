//! The strided iteration core every dense family shares.
//!
//! A `StridedPlan` describes `N` strided operands that are walked together over one
//! shape, in the row-major order of that shape (the order of a fresh output). It drops
//! unit axes and merges adjacent axes that are contiguous for every operand, so that a
//! compact tensor is one long run and a transposed one is as few runs as possible. The
//! plan then hands out *runs*: stretches along the innermost axis where every operand
//! moves by a constant stride, which the families turn into tight slice loops the
//! compiler vectorises.
//!
//! `par_chunks_mut` splits a row-major output slice into disjoint chunks and runs them
//! on the domain's workers, inline below [`GRAIN`] elements.

mod chunks;
pub(crate) mod prefetch;

pub(crate) use chunks::par_chunks_mut;

use strata_tensor::Layout;

/// Work below roughly this many elements per worker runs inline: splitting it would
/// cost more in synchronisation than it saves.
pub const GRAIN: usize = 32 * 1024;

/// `N` strided operands walked together over one shape in row-major order, with unit
/// axes dropped and contiguous neighbours merged.
#[derive(Clone, Debug)]
pub(crate) struct StridedPlan<const N: usize> {
    dims: Vec<usize>,
    strides: Vec<[isize; N]>,
    offsets: [isize; N],
    len: usize,
}

impl<const N: usize> StridedPlan<N> {
    /// The plan for operands that all have `shape` (the caller checked that every
    /// layout has exactly this shape).
    pub(crate) fn new(shape: &[usize], layouts: [&Layout; N]) -> Self {
        let offsets = std::array::from_fn(|j| layouts[j].offset() as isize);
        let len = shape.iter().product();
        let mut dims: Vec<usize> = Vec::with_capacity(shape.len());
        let mut strides: Vec<[isize; N]> = Vec::with_capacity(shape.len());
        for (k, &d) in shape.iter().enumerate() {
            if d == 1 {
                continue;
            }
            let s: [isize; N] = std::array::from_fn(|j| layouts[j].strides()[k]);
            if let (Some(pd), Some(ps)) = (dims.last_mut(), strides.last_mut()) {
                // The outer axis steps exactly over the whole inner axis for every operand:
                // the pair is one axis of extent pd * d.
                if (0..N).all(|j| ps[j] == s[j].wrapping_mul(d as isize)) {
                    *pd *= d;
                    *ps = s;
                    continue;
                }
            }
            dims.push(d);
            strides.push(s);
        }
        if dims.is_empty() {
            dims.push(1);
            strides.push([0; N]);
        }
        StridedPlan { dims, strides, offsets, len }
    }

    /// Number of elements walked.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The coalesced extents (at least one axis).
    pub(crate) fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// The coalesced strides, one array per axis.
    pub(crate) fn strides(&self) -> &[[isize; N]] {
        &self.strides
    }

    /// Buffer offsets of element zero.
    pub(crate) fn offsets(&self) -> [isize; N] {
        self.offsets
    }

    /// The per-operand stride along the innermost axis.
    pub(crate) fn inner_strides(&self) -> [isize; N] {
        // INVARIANT: `new` always leaves at least one axis.
        self.strides[self.strides.len() - 1]
    }

    /// Calls `run(pos, offsets, len)` for each stretch of the flat range `start..end`
    /// that lies along the innermost axis: elements `pos..pos + len` of the walk, where
    /// operand `j`'s element `i` of the run sits at `offsets[j] + i * inner_strides()[j]`.
    pub(crate) fn for_each_run(&self, start: usize, end: usize, mut run: impl FnMut(usize, [isize; N], usize)) {
        let end = end.min(self.len);
        if start >= end {
            return;
        }
        let r = self.dims.len();
        let inner = self.dims[r - 1];
        let mut idx = vec![0usize; r];
        let mut rest = start;
        for k in (0..r).rev() {
            idx[k] = rest % self.dims[k];
            rest /= self.dims[k];
        }
        let mut offs = self.offsets;
        for (&i, st) in idx.iter().zip(&self.strides) {
            for (o, s) in offs.iter_mut().zip(st) {
                *o += i as isize * s;
            }
        }
        let mut pos = start;
        while pos < end {
            let len = (inner - idx[r - 1]).min(end - pos);
            run(pos, offs, len);
            pos += len;
            idx[r - 1] += len;
            for (o, s) in offs.iter_mut().zip(self.strides[r - 1]) {
                *o += len as isize * s;
            }
            if idx[r - 1] < inner {
                continue;
            }
            // Carry into the outer axes, odometer style.
            for (o, s) in offs.iter_mut().zip(self.strides[r - 1]) {
                *o -= inner as isize * s;
            }
            idx[r - 1] = 0;
            for k in (0..r - 1).rev() {
                idx[k] += 1;
                for (o, s) in offs.iter_mut().zip(self.strides[k]) {
                    *o += s;
                }
                if idx[k] < self.dims[k] {
                    break;
                }
                for (o, s) in offs.iter_mut().zip(self.strides[k]) {
                    *o -= self.dims[k] as isize * s;
                }
                idx[k] = 0;
            }
        }
    }
}

/// Longest stretch handed to a block body: long enough to amortise the per-block
/// bookkeeping, short enough that gathered scratch copies stay in L1.
pub(crate) const BLOCK: usize = 1024;

/// Walks `N` strided operands of one shape together with a fresh row-major output,
/// calling `body(out_block, offsets, inner_strides)` for stretches of at most [`BLOCK`]
/// elements along the innermost axis. Operand `j`'s element `i` of the block is at
/// `offsets[j] + i * inner_strides[j]` of its buffer. Large outputs are split over the
/// domain's workers.
pub(crate) fn for_each_block<const N: usize, O: Send>(
    par: crate::par::Parallelism<'_>,
    shape: &[usize],
    layouts: [&Layout; N],
    out: &mut [O],
    body: impl Fn(&mut [O], [isize; N], [isize; N]) + Sync,
) {
    if out.is_empty() {
        return;
    }
    let plan = StridedPlan::new(shape, layouts);
    let inner = plan.inner_strides();
    par_chunks_mut(par, out, GRAIN, 1, |start, chunk| {
        plan.for_each_run(start, start + chunk.len(), |pos, offs, len| {
            let run = &mut chunk[pos - start..pos - start + len];
            for (b, block) in run.chunks_mut(BLOCK).enumerate() {
                let step = (b * BLOCK) as isize;
                body(block, std::array::from_fn(|j| offs[j] + step * inner[j]), inner);
            }
        });
    });
}

/// The `n` elements of `buf` from `offset` with `stride` as a slice: borrowed directly
/// when contiguous, otherwise gathered into `scratch`.
#[inline]
pub(crate) fn gather<'s, T: Copy>(
    buf: &'s [T],
    offset: isize,
    stride: isize,
    n: usize,
    scratch: &'s mut Vec<T>,
) -> &'s [T] {
    let start = offset as usize;
    match stride {
        1 => &buf[start..start + n],
        0 => {
            scratch.clear();
            scratch.resize(n, buf[start]);
            scratch
        }
        _ => {
            scratch.clear();
            scratch.extend((0..n as isize).map(|i| buf[(offset + i * stride) as usize]));
            scratch
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk<const N: usize>(plan: &StridedPlan<N>, start: usize, end: usize) -> Vec<[isize; N]> {
        let mut seen = Vec::new();
        let inner = plan.inner_strides();
        plan.for_each_run(start, end, |pos, offs, len| {
            assert_eq!(pos, start + seen.len());
            for i in 0..len {
                seen.push(std::array::from_fn(|j| offs[j] + i as isize * inner[j]));
            }
        });
        seen
    }

    #[test]
    fn contiguous_shapes_coalesce_into_one_axis() {
        let l = Layout::row_major(&[2, 1, 3, 4]);
        let plan = StridedPlan::new(&[2, 1, 3, 4], [&l]);
        assert_eq!(plan.dims(), &[24]);
        assert_eq!(walk(&plan, 0, 24), (0..24).map(|i| [i]).collect::<Vec<_>>());
    }

    #[test]
    fn transposed_operand_walks_in_output_order_from_any_start() {
        let a = Layout::row_major(&[3, 4]).permute(&[1, 0]).unwrap();
        let b = Layout::row_major(&[4, 3]);
        let plan = StridedPlan::new(&[4, 3], [&a, &b]);
        assert_eq!(plan.dims(), &[4, 3]);
        let expect: Vec<[isize; 2]> = (0..12).map(|i| [(i % 3) * 4 + i / 3, i]).collect();
        assert_eq!(walk(&plan, 0, 12), expect);
        assert_eq!(walk(&plan, 5, 11), expect[5..11].to_vec());
    }

    #[test]
    fn rank_zero_and_empty_plans() {
        let l = Layout::row_major(&[]);
        assert_eq!(walk(&StridedPlan::new(&[], [&l]), 0, 1), vec![[0]]);
        let e = Layout::row_major(&[3, 0]);
        assert!(walk(&StridedPlan::new(&[3, 0], [&e]), 0, 5).is_empty());
    }
}
