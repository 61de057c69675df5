//! Reductions over any set of axes: sum, sum of squares (`|x|²`, real for complex), prod,
//! max and min, with jax.lax semantics (integer sums wrap; max/min propagate NaN).
//!
//! **Identities.** Reducing no elements gives the op's initial value, as jax.lax's
//! reductions do: sum 0, prod 1, max -inf (integer MIN, `false` for bool, `-inf + 0i` for
//! complex) and min +inf (integer MAX, `true`, `+inf + 0i`). The initial value takes part
//! in every reduction of two or more elements (so a complex max over elements whose real
//! part is -inf and imaginary part negative gives `-inf + 0i`, and a sum of `-0.0`s gives
//! `+0.0`); reducing exactly one element gives that element unchanged (XLA does not fold
//! the initial value in then: the sum of `[-0.0]` is `-0.0`).
//!
//! **Accuracy and determinism.** The reduced elements of one output are cut into fixed
//! blocks of [`REDUCE_BLOCK`] in their logical order; each block is folded by one fixed
//! tree (`tree.rs`: 32 lanes, each summing at most 16 elements in sequence, then leaves
//! and lanes combined pairwise), and the blocks' results are combined pairwise in block
//! order. So a float sum rounds at most [`rounding_depth`]`(n)` times on any element's
//! path — about `log2 n + 10`, against `n` for a running sum — and
//! `|error| <= rounding_depth(n) · eps · Σ|x|`. The tree depends only on the number of
//! reduced elements: never on the thread count, the strides or the CPU's SIMD level, so
//! results are bit-identical across all of them. Workers only decide who folds which
//! block.
//!
//! ```
//! use strata_kernels::{KernelContext, reduction};
//! use strata_tensor::{Tensor, config::ReduceOp};
//! let ctx = KernelContext::sequential();
//! let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
//! let s = reduction::reduce(&ctx, ReduceOp::Sum, (&x).into(), &[1]).unwrap();
//! assert_eq!(s.as_typed::<f64>().unwrap().data(), &[6.0, 15.0]);
//! let empty = Tensor::from_vec(Vec::<f32>::new(), &[0]).unwrap();
//! let m = reduction::reduce(&ctx, ReduceOp::Max, (&empty).into(), &[0]).unwrap();
//! assert_eq!(m.as_typed::<f32>().unwrap().data(), &[f32::NEG_INFINITY]);
//! ```

mod tree;

use strata_tensor::config::ReduceOp;
use strata_tensor::{Layout, Result, Scalar, Tensor, TensorRead, TensorView, TensorWrite, TypedView, dispatch_dtype};

use crate::alloc::fill_output;
use crate::context::KernelContext;
use crate::elementwise::ElementwiseScalar;
use crate::strided::{GRAIN, StridedPlan, par_chunks_mut};
use crate::structural::{copy_into, to_contiguous, write_into};
use tree::{Fold, MaxOf, MinOf, ProdOf, SumOf, SumSquaresOf, combine_blocks, fold_block};

pub use tree::rounding_depth;

/// Number of reduced elements folded into one partial result: the unit of the fixed
/// reduction tree and of parallel work when few outputs reduce many elements.
pub const REDUCE_BLOCK: usize = 4096;

/// Reduces `x` over `axes` (distinct, in range; any order) with `op`. The result has
/// `x`'s shape without the reduced axes; its dtype is `op.result_dtype(x.dtype())`.
pub fn reduce(ctx: &KernelContext<'_>, op: ReduceOp, x: TensorRead<'_>, axes: &[usize]) -> Result<Tensor> {
    let out_shape = op.validate(x.dtype(), x.shape(), axes)?;
    if let Some(single) = single_element(op, &x, axes)? {
        return to_contiguous(ctx, single.into()).map_err(|e| e.in_op(op.name()));
    }
    dispatch_dtype!(x.dtype(), T => {
        let v = x.typed_view::<T>()?;
        if op == ReduceOp::SumSquares {
            fill_output::<<T as ElementwiseScalar>::RealPart>(ctx, op.name(), &out_shape, |out| {
                fold::<SumSquaresOf<T>>(ctx, &v, axes, out)
            })
            .map(Tensor::from)
        } else {
            fill_output::<T>(ctx, op.name(), &out_shape, |out| reduce_same(ctx, op, &v, axes, out)).map(Tensor::from)
        }
    })
}

/// [`reduce`] into a destination of the result's dtype and shape.
pub fn reduce_into(
    ctx: &KernelContext<'_>,
    op: ReduceOp,
    x: TensorRead<'_>,
    axes: &[usize],
    mut out: TensorWrite<'_>,
) -> Result<()> {
    let out_shape = op.validate(x.dtype(), x.shape(), axes)?;
    out.expect(op.name(), op.result_dtype(x.dtype()), &out_shape)?;
    if let Some(single) = single_element(op, &x, axes)? {
        return copy_into(ctx, single.into(), out).map_err(|e| e.in_op(op.name()));
    }
    dispatch_dtype!(x.dtype(), T => {
        let v = x.typed_view::<T>()?;
        if op == ReduceOp::SumSquares {
            write_into::<<T as ElementwiseScalar>::RealPart>(ctx, &mut out, |o| fold::<SumSquaresOf<T>>(ctx, &v, axes, o))
        } else {
            write_into::<T>(ctx, &mut out, |o| reduce_same(ctx, op, &v, axes, o))
        }
    })
}

/// When `op` reduces exactly one element per output (every reduced extent is 1, or no
/// axis is reduced), the input viewed without the reduced axes: XLA returns that element
/// as it is, without combining it with the initial value (`sum([-0.0]) = -0.0`). The sum
/// of squares maps its element first, so it keeps the general path.
fn single_element<'a>(op: ReduceOp, x: &TensorRead<'a>, axes: &[usize]) -> Result<Option<TensorView<'a>>> {
    if op == ReduceOp::SumSquares || axes.iter().any(|&a| x.shape()[a] != 1) {
        return Ok(None);
    }
    let mut sorted = axes.to_vec();
    sorted.sort_unstable();
    let mut v = x.view();
    for &a in sorted.iter().rev() {
        v = v.remove_axis(a)?;
    }
    Ok(Some(v))
}

/// The reductions whose result has the input's dtype.
fn reduce_same<T: ElementwiseScalar>(
    ctx: &KernelContext<'_>,
    op: ReduceOp,
    v: &TypedView<'_, T>,
    axes: &[usize],
    out: &mut [T],
) {
    match op {
        ReduceOp::Sum | ReduceOp::SumSquares => fold::<SumOf<T>>(ctx, v, axes, out),
        ReduceOp::Prod => fold::<ProdOf<T>>(ctx, v, axes, out),
        ReduceOp::Max => fold::<MaxOf<T>>(ctx, v, axes, out),
        ReduceOp::Min => fold::<MinOf<T>>(ctx, v, axes, out),
    }
}

/// The reduced part of the input: a plan over the reduced axes, and the buffer.
struct Reduced<'a, T> {
    buf: &'a [T],
    plan: StridedPlan<1>,
    /// The view's offset, which the plan's offsets include and each output's base replaces.
    origin: isize,
}

impl<T: Copy> Reduced<'_, T> {
    /// Reduced elements `start..end` of the output whose first element is at `base`, in
    /// logical order: borrowed when they are one contiguous run, else gathered into
    /// `scratch`.
    #[inline(always)]
    fn elements<'s>(&'s self, base: isize, start: usize, end: usize, scratch: &'s mut Vec<T>) -> &'s [T] {
        let [stride] = self.plan.inner_strides();
        let delta = base - self.origin;
        let len = end - start;
        if self.plan.dims().len() == 1 {
            // One reduced axis: a single run, no odometer.
            let first = self.plan.offsets()[0] + delta + start as isize * stride;
            return run_elements(self.buf, first, stride, len, scratch);
        }
        let mut whole = None;
        scratch.clear();
        self.plan.for_each_run(start, end, |_, [off], run| {
            let off = off + delta;
            if stride == 1 && run == len {
                whole = Some(off as usize);
            } else if stride == 1 {
                scratch.extend_from_slice(&self.buf[off as usize..off as usize + run]);
            } else {
                scratch.extend((0..run as isize).map(|i| self.buf[(off + i * stride) as usize]));
            }
        });
        match whole {
            Some(first) => &self.buf[first..first + len],
            None => scratch,
        }
    }
}

/// `len` elements from `first` with `stride`: borrowed when contiguous, else gathered.
#[inline(always)]
fn run_elements<'s, T: Copy>(
    buf: &'s [T],
    first: isize,
    stride: isize,
    len: usize,
    scratch: &'s mut Vec<T>,
) -> &'s [T] {
    if stride == 1 {
        &buf[first as usize..first as usize + len]
    } else {
        scratch.clear();
        scratch.extend((0..len as isize).map(|i| buf[(first + i * stride) as usize]));
        scratch
    }
}

/// Where each output's reduced elements are.
enum Source<'a, T> {
    /// Output `o` reduces `data[o * len..(o + 1) * len]`: a compact input reduced over
    /// its trailing axes, in order (full reductions and row reductions). No plans, so the
    /// fixed cost of a small reduction stays small.
    Rows { data: &'a [T], len: usize },
    /// Any layout: output `o`'s first element is at `kept`'s offset of `o`, and its
    /// reduced elements follow `reduced`'s plan.
    Strided { reduced: Reduced<'a, T>, kept: StridedPlan<1> },
}

impl<'a, T: Scalar> Source<'a, T> {
    fn new(v: &TypedView<'a, T>, axes: &[usize]) -> Self {
        let rank = v.rank();
        let trailing = axes.iter().enumerate().all(|(j, &a)| a == rank - axes.len() + j);
        if trailing && let Some(data) = v.as_contiguous() {
            let len = v.shape()[rank - axes.len()..].iter().product();
            return Source::Rows { data, len };
        }
        let kept: Vec<usize> = (0..rank).filter(|k| !axes.contains(k)).collect();
        let part = |which: &[usize]| -> Layout {
            let shape: Vec<usize> = which.iter().map(|&k| v.shape()[k]).collect();
            let strides: Vec<isize> = which.iter().map(|&k| v.strides()[k]).collect();
            // INVARIANT: a sub-layout of a valid view at its own offset stays in its buffer.
            Layout::new("reduce", v.buffer().len(), shape, strides, v.offset())
                .unwrap_or_else(|_| Layout::row_major(&[]))
        };
        let (kept_layout, red_layout) = (part(&kept), part(axes));
        let reduced = Reduced {
            buf: v.buffer(),
            plan: StridedPlan::new(red_layout.shape(), [&red_layout]),
            origin: v.offset() as isize,
        };
        Source::Strided { reduced, kept: StridedPlan::new(kept_layout.shape(), [&kept_layout]) }
    }

    /// Number of reduced elements per output.
    fn len(&self) -> usize {
        match self {
            Source::Rows { len, .. } => *len,
            Source::Strided { reduced, .. } => reduced.plan.len(),
        }
    }

    /// Calls `each(o, base)` for outputs `start..end` in order, `base` locating output
    /// `o`'s elements for [`Self::fold_block`].
    #[inline]
    fn for_each_output(&self, start: usize, end: usize, mut each: impl FnMut(usize, isize)) {
        match self {
            Source::Rows { len, .. } => (start..end).for_each(|o| each(o, (o * len) as isize)),
            Source::Strided { kept, .. } => {
                let [stride] = kept.inner_strides();
                kept.for_each_run(start, end, |pos, [off], run| {
                    (0..run).for_each(|i| each(pos + i, off + i as isize * stride))
                })
            }
        }
    }

    /// Block `b` of the output at `base`, folded.
    #[inline]
    fn fold_block<F: Fold<In = T>>(&self, base: isize, b: usize, scratch: &mut Vec<T>) -> F::Acc {
        let n = self.len();
        let (s, e) = (b * REDUCE_BLOCK, ((b + 1) * REDUCE_BLOCK).min(n));
        match self {
            Source::Rows { data, .. } => fold_block::<F>(&data[base as usize + s..base as usize + e]),
            Source::Strided { reduced, .. } => fold_block::<F>(reduced.elements(base, s, e, scratch)),
        }
    }

    /// The whole output at `base`: its blocks in order, combined pairwise.
    #[inline]
    fn fold_output<F: Fold<In = T>>(&self, base: isize, scratch: &mut Vec<T>, partials: &mut Vec<F::Acc>) -> F::Acc {
        let blocks = self.len().div_ceil(REDUCE_BLOCK);
        if blocks == 1 {
            return self.fold_block::<F>(base, 0, scratch);
        }
        partials.clear();
        partials.extend((0..blocks).map(|b| self.fold_block::<F>(base, b, scratch)));
        combine_blocks(partials, &F::combine)
    }
}

/// Blocks of one output given to a worker at once when few outputs reduce many
/// elements: splitting finer costs more in fork-join than it saves.
const SPLIT_BLOCKS: usize = GRAIN / REDUCE_BLOCK;

/// The generic reduction: `out[o]` = the fixed tree of `F` over the reduced elements of
/// output `o`, or `F::identity()` when there are none.
fn fold<F: Fold>(ctx: &KernelContext<'_>, v: &TypedView<'_, F::In>, axes: &[usize], out: &mut [F::Acc]) {
    if out.is_empty() {
        return;
    }
    let source = Source::new(v, axes);
    let n = source.len();
    if n == 0 {
        out.fill(F::identity());
        return;
    }
    let blocks = n.div_ceil(REDUCE_BLOCK);
    let par = ctx.par();
    if blocks == 1 || out.len() >= 2 * par.budget() {
        // Many outputs: workers split the outputs; each output folds its blocks in order.
        let grain = (GRAIN / n).max(1);
        par_chunks_mut(par, out, grain, 1, |start, chunk| {
            let (mut scratch, mut partials) = (Vec::new(), Vec::new());
            source.for_each_output(start, start + chunk.len(), |o, base| {
                chunk[o - start] = source.fold_output::<F>(base, &mut scratch, &mut partials);
            });
        });
    } else {
        // Few outputs of many elements: workers split the blocks of each output.
        let mut partials = vec![F::identity(); blocks];
        source.for_each_output(0, out.len(), |o, base| {
            par_chunks_mut(par, &mut partials, SPLIT_BLOCKS, 1, |first, chunk| {
                let mut scratch = Vec::new();
                for (j, p) in chunk.iter_mut().enumerate() {
                    *p = source.fold_block::<F>(base, first + j, &mut scratch);
                }
            });
            out[o] = combine_blocks(&partials, &F::combine);
        });
    }
}
