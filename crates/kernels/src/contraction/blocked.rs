//! The blocked route: an operand whose axes do not collapse into a GEMM matrix is gathered
//! a block of free rows at a time into a small compact buffer, and each block is
//! multiplied as soon as it is gathered.
//!
//! **Why.** Tensor-network steps meet a many-leg intermediate with a small tensor (a gate,
//! an MPO, a PEPS site): the intermediate's free and contracted axes interleave, with
//! extents of 2-8, so it must be rearranged, and the GEMM after it is thin (k and n of
//! 10-64), i.e. bound by memory. Copying the whole operand first writes and re-reads it
//! through memory, and the general permutation, which works run by run, spends a call per
//! source run when those runs are two or four elements long. Here each block (about
//! [`BLOCK_BYTES`](super::plan::BLOCK_BYTES)) is gathered through a table of the
//! contraction terms' offsets, one load and one store per element whatever the axes'
//! extents, and is still in the core's cache when the GEMM reads it.
//!
//! **Parallelism and numbers.** Blocks are a property of the cached analysis, not of the
//! thread count; each block's GEMM runs on one thread, so every output element comes from
//! the same GEMM call at any budget (SPEC §7: results independent of the thread count).
//! Workers take contiguous runs of blocks, each with its own scratch block; all scratch
//! is allocated before anything is written.

use std::sync::Mutex;

use strata_provider::{BatchedGemm, GemmMatrix, GemmMatrixMut, GemmProvider, SequentialParallelism};
use strata_tensor::{Error, Result};

use super::execute::{Operands, PARALLEL_MIN_MACS};
use super::plan::{BlockedPack, ContractionPlan, LHS, OUT, RHS};
use super::scalar::ContractScalar;
use crate::context::KernelContext;

/// The operand buffers for the blocked route: the blocked operand as it lies, the other
/// as planned (packed or not), each with the offset of its element zero.
pub(crate) struct BlockedInputs<'a, T> {
    pub lhs: (&'a [T], usize),
    pub rhs: (&'a [T], usize),
}

/// Gathers free rows `rows` of the blocked operand into `block` (row-major
/// `[rows, terms]`).
fn gather<T: Copy>(src: &[T], base: isize, b: &BlockedPack, rows: std::ops::Range<usize>, block: &mut [T]) {
    let k = b.terms.len();
    // The mixed-radix index of the first row, innermost axis last.
    let mut index: Vec<usize> = vec![0; b.rows.len()];
    let mut rest = rows.start;
    let mut offset = base;
    for (slot, &(extent, stride)) in b.rows.iter().enumerate().rev() {
        index[slot] = rest % extent;
        rest /= extent;
        offset += index[slot] as isize * stride;
    }
    for dst in block.chunks_exact_mut(k).take(rows.len()) {
        for (d, &t) in dst.iter_mut().zip(&b.terms) {
            // INVARIANT: every row and term offset addresses an element of the operand's
            // view, whose whole extent lies in `src` (checked when the view was made).
            *d = src[(offset + t) as usize];
        }
        // Next row: increment the mixed-radix index.
        for (slot, &(extent, stride)) in b.rows.iter().enumerate().rev() {
            index[slot] += 1;
            offset += stride;
            if index[slot] < extent {
                break;
            }
            offset -= extent as isize * stride;
            index[slot] = 0;
        }
    }
}

/// One worker's share: blocks `blocks`, whose output elements all lie in `slice`, which
/// starts at buffer index `start`.
struct Part<'a, T> {
    blocks: std::ops::Range<usize>,
    start: usize,
    slice: &'a mut [T],
}

/// Output reach of one block's rows `rows`: the lowest and highest buffer index written.
fn block_span(plan: &ContractionPlan, b: &BlockedPack, base: isize, rows: std::ops::Range<usize>) -> (isize, isize) {
    let reach = |e: usize, s: isize| (e as isize - 1) * s;
    let (row_stride, other, other_stride) = if b.operand == LHS {
        (plan.out_mat[0], plan.n, plan.out_mat[1])
    } else {
        (plan.out_mat[1], plan.m, plan.out_mat[0])
    };
    let first = base + rows.start as isize * row_stride;
    let (r, o) = (reach(rows.len(), row_stride), reach(other, other_stride));
    (first + r.min(0) + o.min(0), first + r.max(0) + o.max(0))
}

/// Computes `out = alpha · op(lhs) ⋅ op(rhs) + beta · out` block by block (see the module
/// documentation). `base` holds the offsets of element zero in lhs, rhs and out.
#[allow(clippy::too_many_arguments)]
pub(crate) fn blocked_route<T: ContractScalar>(
    ctx: &KernelContext<'_>,
    plan: &ContractionPlan,
    b: &BlockedPack,
    ops: &Operands<'_, T>,
    inputs: &BlockedInputs<'_, T>,
    provider: &dyn GemmProvider,
    out: &mut [T],
    base: [isize; 3],
) -> Result<()> {
    const OP: &str = "dot_general";
    let (k, blocks, rows) = (b.terms.len(), b.blocks(), b.block_rows);
    let free = b.free();
    let block_rows = |blk: usize| blk * rows..((blk + 1) * rows).min(free);
    let budget = ctx.par().budget();
    let mut parts = if budget > 1 && plan.macs() >= PARALLEL_MIN_MACS { budget.min(blocks) } else { 1 };
    let ranges = |parts: usize| (0..parts).map(move |p| p * blocks / parts..(p + 1) * blocks / parts);
    // Each part's reach in the destination; parts run in parallel only when disjoint.
    let mut spans: Vec<(isize, isize, std::ops::Range<usize>)> = Vec::new();
    if parts > 1 {
        spans = ranges(parts)
            .map(|r| {
                let (lo, hi) = block_span(plan, b, base[OUT], r.start * rows..(r.end * rows).min(free));
                (lo, hi, r)
            })
            .collect();
        spans.sort_by_key(|s| s.0);
        if spans.windows(2).any(|w| w[0].1 >= w[1].0) {
            parts = 1;
        }
    }
    // Scratch for every part before anything is written: allocation failure is an error
    // with the destination untouched.
    let mut scratch: Vec<Mutex<Vec<T>>> = Vec::with_capacity(parts);
    for _ in 0..parts {
        let mut v: Vec<T> = Vec::new();
        v.try_reserve_exact(rows * k).map_err(|_| {
            Error::backend_failure(
                OP,
                format!("the allocator could not provide a {} byte gather block", rows * k * size_of::<T>()),
            )
        })?;
        v.resize(rows * k, T::zero());
        scratch.push(Mutex::new(v));
    }
    let run = |part: Part<'_, T>, block: &mut Vec<T>| -> Result<()> {
        for blk in part.blocks.clone() {
            let r = block_rows(blk);
            let (m, n, a, bm, at) = if b.operand == LHS {
                gather(inputs.lhs.0, inputs.lhs.1 as isize, b, r.clone(), block);
                let a = GemmMatrix::new(&block[..], 0, k as isize, 1, 0);
                let bm = GemmMatrix::new(inputs.rhs.0, inputs.rhs.1, plan.rhs_mat[0], plan.rhs_mat[1], 0);
                (r.len(), plan.n, a, bm, base[OUT] + r.start as isize * plan.out_mat[0])
            } else {
                gather(inputs.rhs.0, inputs.rhs.1 as isize, b, r.clone(), block);
                let a = GemmMatrix::new(inputs.lhs.0, inputs.lhs.1, plan.lhs_mat[0], plan.lhs_mat[1], 0);
                let bm = GemmMatrix::new(&block[..], 0, 1, k as isize, 0);
                (plan.m, r.len(), a, bm, base[OUT] + r.start as isize * plan.out_mat[1])
            };
            let mut gemm = BatchedGemm {
                batch: 1,
                m,
                n,
                k,
                alpha: ops.alpha,
                a,
                conj_a: ops.conj[0],
                b: bm,
                conj_b: ops.conj[1],
                beta: ops.beta,
                c: GemmMatrixMut::new(
                    &mut *part.slice,
                    (at - part.start as isize) as usize,
                    plan.out_mat[0],
                    plan.out_mat[1],
                    0,
                ),
            };
            // Earlier blocks may already be written.
            T::gemm(provider, &mut gemm, &SequentialParallelism)
                .map_err(|e| Error::from(e).in_op(OP).with_clobbered_destination())?;
        }
        Ok(())
    };
    if parts == 1 {
        let block = scratch[0].get_mut().unwrap_or_else(|p| p.into_inner());
        return run(Part { blocks: 0..blocks, start: 0, slice: out }, block);
    }
    // Disjoint sub-slices, one per part, in buffer order.
    let mut rest = out;
    let mut consumed = 0usize;
    let mut split: Vec<Mutex<Option<Part<'_, T>>>> = Vec::with_capacity(parts);
    for (lo, hi, blocks) in spans {
        let (lo, hi) = (lo as usize, hi as usize);
        let (_, tail) = std::mem::take(&mut rest).split_at_mut(lo - consumed);
        let (slice, tail) = tail.split_at_mut(hi + 1 - lo);
        rest = tail;
        consumed = hi + 1;
        split.push(Mutex::new(Some(Part { blocks, start: lo, slice })));
    }
    let failure: Mutex<Option<Error>> = Mutex::new(None);
    ctx.par().for_each_index(parts, &|p| {
        let taken = split[p].lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(part) = taken else { return };
        let mut block = scratch[p].lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = run(part, &mut block) {
            failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
        }
    });
    match failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Which of the operands the route reads as they lie.
pub(crate) fn unpacked(b: Option<&BlockedPack>) -> [bool; 2] {
    match b {
        Some(b) => [b.operand == LHS, b.operand == RHS],
        None => [false, false],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gather_walks_rows_in_mixed_radix_and_terms_by_table() {
        // Source [2, 3, 4] row-major; rows = axes 0 and 2 (extents 2, 4), terms = axis 1.
        let src: Vec<i64> = (0..24).collect();
        let b = BlockedPack { operand: RHS, rows: vec![(2, 12), (4, 1)], terms: vec![0, 4, 8], block_rows: 3 };
        let mut block = vec![0i64; 9];
        gather(&src, 0, &b, 2..5, &mut block);
        // Rows 2, 3, 4 are (0, 2), (0, 3), (1, 0).
        assert_eq!(block, vec![2, 6, 10, 3, 7, 11, 12, 16, 20]);
        // A negative stride and a base offset.
        let b = BlockedPack { operand: LHS, rows: vec![(3, -4)], terms: vec![0, 1], block_rows: 2 };
        let mut block = vec![0i64; 4];
        gather(&src, 8, &b, 1..3, &mut block);
        assert_eq!(block, vec![4, 5, 0, 1]);
        assert_eq!((b.free(), b.blocks()), (3, 2));
    }
}
