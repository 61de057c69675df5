//! Splitting a row-major output into disjoint chunks for the domain's workers, safely:
//! the slice is cut with `chunks_mut`, and each worker takes its own chunk out of a slot.

use std::sync::Mutex;

use crate::par::Parallelism;

/// One chunk waiting for its worker: its start and its slice.
type ChunkSlot<'a, O> = Mutex<Option<(usize, &'a mut [O])>>;

/// How many chunks `len` elements are split into for `budget` workers: one when the work
/// is small, otherwise enough chunks of at least `grain` elements to balance load.
fn chunk_count(budget: usize, len: usize, grain: usize) -> usize {
    if budget <= 1 || len < 2 * grain.max(1) { 1 } else { (len / grain.max(1)).min(budget * 4).max(1) }
}

/// Calls `body(start, chunk)` for disjoint chunks covering `out`, where `chunk` is
/// `out[start..start + chunk.len()]` and every chunk boundary is a multiple of `align`.
/// Chunks run on the domain's workers when the work exceeds `grain` per worker.
pub(crate) fn par_chunks_mut<O: Send>(
    par: Parallelism<'_>,
    out: &mut [O],
    grain: usize,
    align: usize,
    body: impl Fn(usize, &mut [O]) + Sync,
) {
    let len = out.len();
    let align = align.max(1);
    let n = chunk_count(par.budget(), len, grain);
    let units = len.div_ceil(align);
    if n <= 1 || units <= 1 {
        body(0, out);
        return;
    }
    let chunk = units.div_ceil(n.min(units)) * align;
    let slots: Vec<ChunkSlot<'_, O>> =
        out.chunks_mut(chunk).enumerate().map(|(i, c)| Mutex::new(Some((i * chunk, c)))).collect();
    par.for_each_index(slots.len(), &|i| {
        // Each index takes its own slot exactly once; a poisoned lock only means another
        // chunk panicked, and this chunk is still ours to fill.
        let taken = slots[i].lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some((start, c)) = taken {
            body(start, c);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_output_once_with_aligned_boundaries() {
        let exec = rayon_executor();
        for budget in [1, 2, 7] {
            let par = Parallelism::new(&exec, budget, &AUDIT);
            let mut out = vec![0usize; 100_003];
            par_chunks_mut(par, &mut out, 1000, 7, |start, chunk| {
                assert_eq!(start % 7, 0);
                for (i, o) in chunk.iter_mut().enumerate() {
                    *o += start + i + 1;
                }
            });
            assert!(out.iter().enumerate().all(|(i, &v)| v == i + 1));
        }
    }

    #[test]
    fn small_work_is_one_chunk() {
        assert_eq!(chunk_count(8, 100, 1000), 1);
        assert_eq!(chunk_count(1, 1 << 30, 1000), 1);
        assert_eq!(chunk_count(2, 10_000, 1000), 8);
    }

    /// Records fork-join violations of the executors used here (none are expected).
    static AUDIT: crate::par::ScheduleAudit = crate::par::ScheduleAudit::new();

    /// A real multi-threaded executor for tests.
    fn rayon_executor() -> strata_engine::RayonCpuDomainExecutor {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().expect("test pool");
        strata_engine::RayonCpuDomainExecutor::new(std::sync::Arc::new(pool))
    }
}
