//! Splitting an output buffer into contiguous pieces filled on the domain's workers.

use std::sync::Mutex;

use crate::context::KernelContext;

/// Least work (elements touched) worth handing to one more worker.
pub(crate) const MIN_WORK_PER_PART: usize = 1 << 15;

/// How many pieces to split `work` elements over: one per worker of the budget, but none
/// smaller than [`MIN_WORK_PER_PART`].
pub(crate) fn parts_for(ctx: &KernelContext<'_>, work: usize) -> usize {
    (work / MIN_WORK_PER_PART).clamp(1, ctx.par().budget())
}

/// Runs `body(first, piece)` over `out` cut into at most `parts` contiguous pieces whose
/// lengths are multiples of `granule` (except the last), `first` being the index in `out`
/// of the piece's first element. One piece runs inline.
pub(crate) fn for_each_piece<T: Send>(
    ctx: &KernelContext<'_>,
    out: &mut [T],
    granule: usize,
    parts: usize,
    body: &(dyn Fn(usize, &mut [T]) + Sync),
) {
    let granule = granule.max(1);
    let granules = out.len().div_ceil(granule);
    let parts = parts.min(granules);
    if parts <= 1 {
        body(0, out);
        return;
    }
    let piece_len = granules.div_ceil(parts) * granule;
    // Each piece is locked by exactly one task, so the locks never contend; they only
    // carry the disjoint `&mut` pieces across the executor's `Fn + Sync` boundary.
    let pieces: Vec<Mutex<&mut [T]>> = out.chunks_mut(piece_len).map(Mutex::new).collect();
    ctx.par().for_each_index(pieces.len(), &|i| {
        let mut piece = pieces[i].lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        body(i * piece_len, &mut piece);
    });
}
