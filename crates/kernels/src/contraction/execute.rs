//! Runs a [`ContractionPlan`] on typed data: packs what the plan says to pack, stages the
//! destination when asked, and computes every batch item on the route the plan chose,
//! deciding who owns the parallelism (SPEC §7).

use std::sync::Mutex;

use strata_provider::{
    BatchedGemm, GemmMatrix, GemmMatrixMut, GemmProvider, ProviderParallelism, SequentialParallelism,
};
use strata_tensor::{Error, Layout, Result, TypedView, TypedViewMut};

use super::blocked::{BlockedInputs, blocked_route};
use super::disjoint::DisjointOut;
use super::microkernel::{self, TileJob, Units};
use super::plan::{BlockedPack, ContractionPlan, LHS, OUT, RHS, Route};
use super::scalar::ContractScalar;
use super::small::SmallGemm;
use crate::alloc::fill_output;
use crate::context::KernelContext;
use crate::structural;

/// Below this many multiply-adds a whole contraction runs on the calling thread: waking
/// the domain's workers (microseconds) costs more than splitting the work saves.
pub(crate) const PARALLEL_MIN_MACS: usize = 1 << 18;

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
    // The tiles split an item's columns too, so a single item can be forked.
    let count = plan.tiles.as_ref().map_or_else(|| plan.batch_count(), |t| Units::new(t, budget * 4).count());
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

/// Computes `dest = alpha · op(lhs) ⋅ op(rhs) + beta · dest` as planned. `provider` runs
/// the [`Route::Provider`] GEMMs; without one (only for callers whose plans never take
/// that route, like `vdot`) our own loops do.
pub(crate) fn run_plan<T: ContractScalar>(
    ctx: &KernelContext<'_>,
    plan: &ContractionPlan,
    ops: &Operands<'_, T>,
    dest: Destination<'_, T>,
    provider: Option<&dyn GemmProvider>,
) -> Result<()> {
    if plan.route == Route::Empty {
        return Ok(());
    }
    // The blocked operand is gathered block by block by its route, not copied whole.
    // It needs the provider, and alpha = 0 reads no operand at all.
    let blocked =
        plan.blocked.as_ref().filter(|_| plan.route == Route::Provider && provider.is_some() && ops.alpha != T::zero());
    let [raw_lhs, raw_rhs] = super::blocked::unpacked(blocked);
    let packed_lhs;
    let lhs = match &plan.pack_lhs {
        Some(perm) if !raw_lhs => {
            packed_lhs = structural::permute_to_vec(ctx, &ops.lhs, perm)?;
            (packed_lhs.data(), 0)
        }
        _ => (ops.lhs.buffer(), ops.lhs.offset()),
    };
    let packed_rhs;
    let rhs = match &plan.pack_rhs {
        Some(perm) if !raw_rhs => {
            packed_rhs = structural::permute_to_vec(ctx, &ops.rhs, perm)?;
            (packed_rhs.data(), 0)
        }
        _ => (ops.rhs.buffer(), ops.rhs.offset()),
    };
    let inputs = Inputs { lhs, rhs, provider, blocked };
    if plan.stage_out {
        let shape = dest.layout.shape();
        let mut staged = if ops.beta == T::zero() {
            fill_output(ctx, "dot_general", shape, |buf| buf.fill(T::zero()))?
        } else {
            structural::to_contiguous_typed(ctx, &TypedView::with_layout(&*dest.buf, dest.layout.clone())?)?
        };
        compute(ctx, plan, ops, &inputs, staged.data_mut(), 0)?;
        let l = dest.layout;
        let mut dst = TypedViewMut::new(dest.buf, shape, l.strides(), l.offset())?;
        structural::copy_view_to_view_mut(&staged.view(), &mut dst);
        Ok(())
    } else {
        let offset = dest.layout.offset();
        compute(ctx, plan, ops, &inputs, dest.buf, offset)
    }
}

/// The (possibly packed) operand buffers with the offsets of their element zero.
struct Inputs<'a, 'p, T> {
    lhs: (&'a [T], usize),
    rhs: (&'a [T], usize),
    provider: Option<&'p dyn GemmProvider>,
    /// The plan's blocked operand, when its route runs (that operand is then unpacked).
    blocked: Option<&'p BlockedPack>,
}

fn compute<T: ContractScalar>(
    ctx: &KernelContext<'_>,
    plan: &ContractionPlan,
    ops: &Operands<'_, T>,
    inputs: &Inputs<'_, '_, T>,
    out: &mut [T],
    out_off: usize,
) -> Result<()> {
    let base = [inputs.lhs.1 as isize, inputs.rhs.1 as isize, out_off as isize];
    let owner = parallel_owner(plan, ctx.par().budget());
    // alpha = 0 leaves beta · out without reading the operands, as in BLAS.
    let vanishes = ops.alpha == T::zero();
    match (plan.route, inputs.provider) {
        (Route::Provider, Some(provider)) if !vanishes => match inputs.blocked {
            Some(b) => {
                let blocked = BlockedInputs { lhs: inputs.lhs, rhs: inputs.rhs };
                blocked_route(ctx, plan, b, ops, &blocked, provider, out, base)
            }
            None => provider_route(ctx, plan, ops, inputs, provider, owner, out, base),
        },
        _ => own_loops(ctx, plan, ops, inputs, owner, out, base, vanishes),
    }
}

#[allow(clippy::too_many_arguments)]
fn own_loops<T: ContractScalar>(
    ctx: &KernelContext<'_>,
    plan: &ContractionPlan,
    ops: &Operands<'_, T>,
    inputs: &Inputs<'_, '_, T>,
    owner: ParallelOwner,
    out: &mut [T],
    base: [isize; 3],
    vanishes: bool,
) -> Result<()> {
    let out = DisjointOut::new(out);
    // Items split into contiguous ranges, a few per worker (so one slow worker delays
    // little), each computed by one worker in item order.
    let chunks = match owner {
        ParallelOwner::BatchFork => ctx.par().budget() * 4,
        ParallelOwner::Inline | ParallelOwner::Provider(_) => 1,
    };
    if let (Some(layout), false) = (plan.tiles.as_ref(), vanishes) {
        let units = Units::new(layout, chunks);
        let count = units.count();
        let chunks = chunks.min(count);
        let range = |c: usize| c * count / chunks..(c + 1) * count / chunks;
        let job = TileJob {
            lhs: inputs.lhs.0,
            rhs: inputs.rhs.0,
            base,
            layout,
            conj: ops.conj,
            alpha: ops.alpha,
            beta: ops.beta,
        };
        let failure: Mutex<Option<Error>> = Mutex::new(None);
        let chunk = |c: usize| {
            let mut scratch = Vec::new();
            // Distinct items write distinct output elements: the destination is a
            // non-aliasing mutable view or a compact staging buffer, and the batch axes
            // are disjoint from the m and n axes.
            if let Err(e) = microkernel::run_units(&job, &out, units, range(c), &mut scratch) {
                failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
            }
        };
        if chunks > 1 {
            ctx.par().for_each_index(chunks, &chunk)
        } else {
            chunk(0)
        }
        return match failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        };
    }
    let small = SmallGemm {
        lhs: inputs.lhs.0,
        rhs: inputs.rhs.0,
        m: plan.m,
        n: plan.n,
        k: if vanishes { 0 } else { plan.k },
        lhs_mat: plan.lhs_mat,
        rhs_mat: plan.rhs_mat,
        out_mat: plan.out_mat,
        conj: ops.conj,
        alpha: ops.alpha,
        beta: ops.beta,
    };
    let count = plan.batch_count();
    let chunks = chunks.min(count);
    let range = |c: usize| c * count / chunks..(c + 1) * count / chunks;
    let item = |b: usize| {
        // SAFETY: distinct batch items write distinct output elements (as above).
        unsafe { small.run(&out, batch_offsets(plan, base, b)) }
    };
    if chunks > 1 {
        ctx.par().for_each_index(chunks, &|c| range(c).for_each(item));
    } else {
        (0..count).for_each(item);
    }
    Ok(())
}

/// The provider takes the innermost collapsed batch axis as its own batch; the outer
/// ones are walked here.
fn provider_items(plan: &ContractionPlan) -> (usize, [isize; 3], usize) {
    match plan.batch.last() {
        Some(inner) => (inner.extent, inner.strides, plan.batch_count() / inner.extent),
        None => (1, [0; 3], 1),
    }
}

/// Offsets of outer item `o` (batch items `o * inner ..`): the mixed-radix offsets of
/// its first batch item.
fn outer_offsets(plan: &ContractionPlan, base: [isize; 3], o: usize, inner: usize) -> [isize; 3] {
    batch_offsets(plan, base, o * inner)
}

#[allow(clippy::too_many_arguments)]
fn provider_route<T: ContractScalar>(
    ctx: &KernelContext<'_>,
    plan: &ContractionPlan,
    ops: &Operands<'_, T>,
    inputs: &Inputs<'_, '_, T>,
    provider: &dyn GemmProvider,
    owner: ParallelOwner,
    out: &mut [T],
    base: [isize; 3],
) -> Result<()> {
    let (inner, inner_strides, outer) = provider_items(plan);
    let job = |out: &mut [T], at: [isize; 3], batch: usize, par: &dyn ProviderParallelism| -> Result<()> {
        let mut gemm = BatchedGemm {
            batch,
            m: plan.m,
            n: plan.n,
            k: plan.k,
            alpha: ops.alpha,
            a: GemmMatrix::new(inputs.lhs.0, at[LHS] as usize, plan.lhs_mat[0], plan.lhs_mat[1], inner_strides[LHS]),
            conj_a: ops.conj[0],
            b: GemmMatrix::new(inputs.rhs.0, at[RHS] as usize, plan.rhs_mat[0], plan.rhs_mat[1], inner_strides[RHS]),
            conj_b: ops.conj[1],
            beta: ops.beta,
            c: GemmMatrixMut::new(out, at[OUT] as usize, plan.out_mat[0], plan.out_mat[1], inner_strides[OUT]),
        };
        // Earlier items (or panels) may already be written: a provider failure leaves the
        // destination partly written, and says so.
        T::gemm(provider, &mut gemm, par).map_err(|e| Error::from(e).in_op("dot_general").with_clobbered_destination())
    };
    if owner == ParallelOwner::BatchFork
        && let Some(parts) = disjoint_parts(plan, base, out)
    {
        // Each part is a run of whole batch items over its own sub-slice: workers hold
        // disjoint `&mut` slices, the provider runs single-threaded in each.
        let failure: Mutex<Option<Error>> = Mutex::new(None);
        let parts: Vec<Mutex<Option<OutPart<'_, T>>>> = parts.into_iter().map(|p| Mutex::new(Some(p))).collect();
        ctx.par().for_each_index(parts.len(), &|w| {
            let taken = parts[w].lock().unwrap_or_else(|p| p.into_inner()).take();
            let Some(part) = taken else { return };
            for b in part.items.clone() {
                let mut at = batch_offsets(plan, base, b);
                at[OUT] -= part.start as isize;
                if let Err(e) = job(&mut *part.slice, at, 1, &SequentialParallelism) {
                    failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                }
            }
        });
        return match failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        };
    }
    let threads = match owner {
        ParallelOwner::Provider(t) => t,
        // Overlapping item spans (an exotic destination view) cannot be split safely:
        // let the provider own the parallelism instead.
        ParallelOwner::BatchFork => ctx.par().budget(),
        ParallelOwner::Inline => 1,
    };
    // The provider forks, if at all, only on the domain's executor (SPEC §11).
    let par = ctx.par().with_threads(threads);
    for o in 0..outer {
        job(out, outer_offsets(plan, base, o, inner), inner, &par)?;
    }
    Ok(())
}

/// A worker's share of the destination: batch items `items`, whose elements all lie in
/// `slice`, which starts at buffer index `start`.
struct OutPart<'a, T> {
    items: std::ops::Range<usize>,
    start: usize,
    slice: &'a mut [T],
}

/// Splits the destination into one sub-slice per run of batch items, when the runs'
/// element spans are disjoint (always so for fresh and staged outputs, whose batch axes
/// are outermost); `None` otherwise.
fn disjoint_parts<'a, T>(plan: &ContractionPlan, base: [isize; 3], out: &'a mut [T]) -> Option<Vec<OutPart<'a, T>>> {
    let count = plan.batch_count();
    let parts = count.min(64);
    // Reach of one item around its first element.
    let reach = |e: usize, s: isize| (e as isize - 1) * s;
    let (rm, rn) = (reach(plan.m, plan.out_mat[0]), reach(plan.n, plan.out_mat[1]));
    let item_lo = rm.min(0) + rn.min(0);
    let item_hi = rm.max(0) + rn.max(0);
    let mut spans: Vec<(usize, usize, std::ops::Range<usize>)> = Vec::with_capacity(parts);
    for p in 0..parts {
        let items = p * count / parts..(p + 1) * count / parts;
        let (mut lo, mut hi) = (isize::MAX, isize::MIN);
        for b in items.clone() {
            let at = batch_offsets(plan, base, b)[OUT];
            lo = lo.min(at + item_lo);
            hi = hi.max(at + item_hi);
        }
        spans.push((lo as usize, hi as usize, items));
    }
    spans.sort_by_key(|s| s.0);
    if spans.windows(2).any(|w| w[0].1 >= w[1].0) {
        return None;
    }
    let mut rest = out;
    let mut consumed = 0;
    let mut out_parts = Vec::with_capacity(parts);
    for (lo, hi, items) in spans {
        let (_, tail) = std::mem::take(&mut rest).split_at_mut(lo - consumed);
        let (slice, tail) = tail.split_at_mut(hi + 1 - lo);
        rest = tail;
        consumed = hi + 1;
        out_parts.push(OutPart { items, start: lo, slice });
    }
    Some(out_parts)
}
