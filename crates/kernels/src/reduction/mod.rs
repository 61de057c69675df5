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
//! **Determinism.** The summation tree depends only on the input's shape and layout,
//! never on the thread count: the reduced elements of one output are cut into fixed
//! blocks of [`REDUCE_BLOCK`] elements; inside a block eight lanes accumulate
//! round-robin and are combined pairwise; block results are combined by a balanced
//! pairwise tree in block order. Workers only decide who computes which block.
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

use strata_tensor::config::ReduceOp;
use strata_tensor::{Layout, Result, Scalar, Tensor, TensorRead, TensorView, TensorWrite, TypedView, dispatch_dtype};

use crate::alloc::fill_output;
use crate::context::KernelContext;
use crate::elementwise::ElementwiseScalar;
use crate::strided::{GRAIN, StridedPlan, par_chunks_mut};
use crate::structural::{copy_into, to_contiguous, write_into};

/// Number of reduced elements folded into one partial result: the unit of the fixed
/// summation tree and of parallel work when few outputs reduce many elements.
pub const REDUCE_BLOCK: usize = 4096;

const LANES: usize = 8;

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
                fold(ctx, &v, axes, out, <T as ElementwiseScalar>::RealPart::zero(), T::abs_sq, <T as ElementwiseScalar>::RealPart::add)
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
            write_into::<<T as ElementwiseScalar>::RealPart>(ctx, &mut out, |o| {
                fold(ctx, &v, axes, o, <T as ElementwiseScalar>::RealPart::zero(), T::abs_sq, <T as ElementwiseScalar>::RealPart::add)
            })
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
    let id = |x: T| x;
    match op {
        ReduceOp::Sum | ReduceOp::SumSquares => fold(ctx, v, axes, out, T::zero(), id, T::add),
        ReduceOp::Prod => fold(ctx, v, axes, out, T::one(), id, T::mul),
        ReduceOp::Max => fold(ctx, v, axes, out, T::max_identity(), id, T::max),
        ReduceOp::Min => fold(ctx, v, axes, out, T::min_identity(), id, T::min),
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
    /// Folds reduced elements `start..end` of the output whose first element is at
    /// `base`: eight lanes round-robin within each run, then a fixed pairwise combine.
    #[inline]
    fn fold_block<R: Copy>(
        &self,
        base: isize,
        start: usize,
        end: usize,
        identity: R,
        map: &impl Fn(T) -> R,
        combine: &impl Fn(R, R) -> R,
    ) -> R {
        let mut lanes = [identity; LANES];
        let [stride] = self.plan.inner_strides();
        let delta = base - self.origin;
        let mut run = |off: isize, len: usize| {
            if stride == 1 {
                let s = &self.buf[off as usize..off as usize + len];
                let mut chunks = s.chunks_exact(LANES);
                for c in &mut chunks {
                    for l in 0..LANES {
                        lanes[l] = combine(lanes[l], map(c[l]));
                    }
                }
                for (l, &x) in chunks.remainder().iter().enumerate() {
                    lanes[l] = combine(lanes[l], map(x));
                }
            } else {
                for i in 0..len {
                    let x = self.buf[(off + i as isize * stride) as usize];
                    lanes[i % LANES] = combine(lanes[i % LANES], map(x));
                }
            }
        };
        if self.plan.dims().len() == 1 {
            // One reduced axis: a single run, no odometer.
            run(self.plan.offsets()[0] + delta + start as isize * stride, end - start);
        } else {
            self.plan.for_each_run(start, end, |_, [off], len| run(off + delta, len));
        }
        let l = lanes;
        combine(combine(combine(l[0], l[1]), combine(l[2], l[3])), combine(combine(l[4], l[5]), combine(l[6], l[7])))
    }

    fn block_count(&self) -> usize {
        self.plan.len().div_ceil(REDUCE_BLOCK)
    }

    fn block(&self, b: usize) -> (usize, usize) {
        (b * REDUCE_BLOCK, ((b + 1) * REDUCE_BLOCK).min(self.plan.len()))
    }
}

/// Pairwise combination in index order: the same tree for the same length, always.
fn tree<R: Copy>(v: &[R], combine: &impl Fn(R, R) -> R) -> R {
    if v.len() == 1 {
        v[0]
    } else {
        let (a, b) = v.split_at(v.len() / 2);
        combine(tree(a, combine), tree(b, combine))
    }
}

/// The generic reduction: `out[o] = combine-tree of map(x)` over the reduced elements of
/// output `o`, or `identity` when there are none.
fn fold<T: Scalar, R: Scalar>(
    ctx: &KernelContext<'_>,
    v: &TypedView<'_, T>,
    axes: &[usize],
    out: &mut [R],
    identity: R,
    map: impl Fn(T) -> R + Sync,
    combine: impl Fn(R, R) -> R + Sync,
) {
    if out.is_empty() {
        return;
    }
    let rank = v.rank();
    let kept: Vec<usize> = (0..rank).filter(|k| !axes.contains(k)).collect();
    let part = |which: &[usize]| -> Layout {
        let shape: Vec<usize> = which.iter().map(|&k| v.shape()[k]).collect();
        let strides: Vec<isize> = which.iter().map(|&k| v.strides()[k]).collect();
        // INVARIANT: a sub-layout of a valid view at its own offset stays in its buffer.
        Layout::new("reduce", v.buffer().len(), shape, strides, v.offset()).unwrap_or_else(|_| Layout::row_major(&[]))
    };
    let (kept_layout, red_layout) = (part(&kept), part(axes));
    let reduced = Reduced {
        buf: v.buffer(),
        plan: StridedPlan::new(red_layout.shape(), [&red_layout]),
        origin: v.offset() as isize,
    };
    let kept_plan = StridedPlan::new(kept_layout.shape(), [&kept_layout]);
    let [kept_stride] = kept_plan.inner_strides();
    if reduced.plan.len() == 0 {
        out.fill(identity);
        return;
    }
    let blocks = reduced.block_count();
    let par = ctx.par();
    if blocks == 1 || out.len() >= 2 * par.budget() {
        // Many outputs: workers split the outputs; each output folds its blocks in order.
        let grain = (GRAIN / reduced.plan.len()).max(1);
        par_chunks_mut(par, out, grain, 1, |start, chunk| {
            let mut partials = Vec::new();
            kept_plan.for_each_run(start, start + chunk.len(), |pos, [off], len| {
                for i in 0..len {
                    let base = off + i as isize * kept_stride;
                    partials.clear();
                    partials.extend((0..blocks).map(|b| {
                        let (s, e) = reduced.block(b);
                        reduced.fold_block(base, s, e, identity, &map, &combine)
                    }));
                    chunk[pos - start + i] = tree(&partials, &combine);
                }
            });
        });
    } else {
        // Few outputs of many elements: workers split the blocks of each output.
        let mut partials = vec![identity; blocks];
        let mut o = 0;
        kept_plan.for_each_run(0, out.len(), |_, [off], len| {
            for i in 0..len {
                let base = off + i as isize * kept_stride;
                par_chunks_mut(par, &mut partials, (GRAIN / REDUCE_BLOCK).max(1), 1, |first, chunk| {
                    for (j, p) in chunk.iter_mut().enumerate() {
                        let (s, e) = reduced.block(first + j);
                        *p = reduced.fold_block(base, s, e, identity, &map, &combine);
                    }
                });
                out[o] = tree(&partials, &combine);
                o += 1;
            }
        });
    }
}
