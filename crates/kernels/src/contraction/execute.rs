//! Runs a [`ContractionPlan`] on typed data: packs what the plan says to pack, stages the
//! destination when asked, and computes every batch item on the route the plan chose,
//! deciding who owns the parallelism (SPEC §7).

use strata_tensor::{Layout, Result, TypedView};

use super::disjoint::DisjointOut;
use super::plan::{ContractionPlan, LHS, OUT, RHS, Route};
use super::scalar::ContractScalar;
use super::small::SmallGemm;
use super::strided_copy;
use crate::context::KernelContext;

/// Below this many multiply-adds a whole contraction runs on the calling thread: forking
/// costs more than it saves.
const PARALLEL_MIN_MACS: usize = 1 << 16;

/// What a plan reads and how it combines into the destination.
pub(crate) struct Operands<'a, T> {
    pub lhs: TypedView<'a, T>,
    pub rhs: TypedView<'a, T>,
    pub conj: [bool; 2],
    pub alpha: T,
    pub beta: T,
}

/// A destination: a buffer and the layout (shape, strides, offset) of the result in it.
pub(crate) struct Destination<'a, T> {
    pub buf: &'a mut [T],
    pub layout: &'a Layout,
}

/// Who parallelises one contraction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParallelOwner {
    /// Everything on the calling thread.
    Inline,
    /// The GEMM provider, with this many threads, one batch item after another.
    Provider(usize),
    /// Our fork-join over batch items, the provider told to use one thread.
    BatchFork,
}

/// SPEC §7: one party owns the parallelism of each operation.
pub(crate) fn parallel_owner(plan: &ContractionPlan, budget: usize) -> ParallelOwner {
    let count = plan.batch_count();
    if budget <= 1 || plan.macs() < PARALLEL_MIN_MACS {
        ParallelOwner::Inline
    } else if count >= budget || plan.route != Route::Provider {
        // Enough independent items to keep every worker busy, or items too small for
        // intra-GEMM parallelism: spread the items.
        if count > 1 { ParallelOwner::BatchFork } else { ParallelOwner::Inline }
    } else {
        ParallelOwner::Provider(budget)
    }
}

/// Offsets (lhs, rhs, out) of batch item `b`, the collapsed batch axes read as mixed radix.
fn batch_offsets(plan: &ContractionPlan, base: [isize; 3], mut b: usize) -> [isize; 3] {
    let mut at = base;
    for axis in plan.batch.iter().rev() {
        let i = (b % axis.extent) as isize;
        b /= axis.extent;
        for t in [LHS, RHS, OUT] {
            at[t] += i * axis.strides[t];
        }
    }
    at
}

/// Computes `dest = alpha · op(lhs) ⋅ op(rhs) + beta · dest` as planned.
pub(crate) fn run_plan<T: ContractScalar>(
    ctx: &KernelContext<'_>,
    plan: &ContractionPlan,
    ops: &Operands<'_, T>,
    dest: Destination<'_, T>,
) -> Result<()> {
    if plan.route == Route::Empty {
        return Ok(());
    }
    let packed_lhs;
    let (lhs_buf, lhs_off) = match &plan.pack_lhs {
        Some(perm) => {
            packed_lhs = strided_copy::to_contiguous(&ops.lhs.clone().permute(perm)?);
            (&packed_lhs[..], 0)
        }
        None => (ops.lhs.buffer(), ops.lhs.offset() as isize),
    };
    let packed_rhs;
    let (rhs_buf, rhs_off) = match &plan.pack_rhs {
        Some(perm) => {
            packed_rhs = strided_copy::to_contiguous(&ops.rhs.clone().permute(perm)?);
            (&packed_rhs[..], 0)
        }
        None => (ops.rhs.buffer(), ops.rhs.offset() as isize),
    };
    if plan.stage_out {
        let mut staged = if ops.beta == T::zero() {
            vec![T::zero(); dest.layout.len()]
        } else {
            strided_copy::to_contiguous(&TypedView::with_layout(&*dest.buf, dest.layout.clone())?)
        };
        let out = DisjointOut::new(&mut staged);
        compute(ctx, plan, ops, (lhs_buf, lhs_off), (rhs_buf, rhs_off), &out, 0)?;
        strided_copy::copy_into(&staged, dest.buf, dest.layout);
        Ok(())
    } else {
        let offset = dest.layout.offset() as isize;
        let out = DisjointOut::new(dest.buf);
        compute(ctx, plan, ops, (lhs_buf, lhs_off), (rhs_buf, rhs_off), &out, offset)
    }
}

fn compute<T: ContractScalar>(
    ctx: &KernelContext<'_>,
    plan: &ContractionPlan,
    ops: &Operands<'_, T>,
    lhs: (&[T], isize),
    rhs: (&[T], isize),
    out: &DisjointOut<'_, T>,
    out_off: isize,
) -> Result<()> {
    let base = [lhs.1, rhs.1, out_off];
    let count = plan.batch_count();
    let owner = parallel_owner(plan, ctx.par().budget());
    let small = SmallGemm {
        lhs: lhs.0,
        rhs: rhs.0,
        m: plan.m,
        n: plan.n,
        // alpha = 0 leaves beta · out: the operands are not read, as in BLAS.
        k: if ops.alpha == T::zero() { 0 } else { plan.k },
        lhs_mat: plan.lhs_mat,
        rhs_mat: plan.rhs_mat,
        out_mat: plan.out_mat,
        conj: ops.conj,
        alpha: ops.alpha,
        beta: ops.beta,
    };
    let item = |b: usize| {
        // SAFETY: distinct batch items write distinct output elements: the destination is
        // a non-aliasing mutable view or a compact staging buffer, and the batch axes
        // are disjoint from the m and n axes.
        unsafe { small.run(out, batch_offsets(plan, base, b)) }
    };
    match owner {
        ParallelOwner::BatchFork => {
            let chunks = (ctx.par().budget() * 4).min(count);
            ctx.par().for_each_index(chunks, &|c| {
                for b in (c * count / chunks)..((c + 1) * count / chunks) {
                    item(b)
                }
            });
        }
        ParallelOwner::Inline | ParallelOwner::Provider(_) => (0..count).for_each(item),
    }
    Ok(())
}
