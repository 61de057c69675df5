//! `scatter` (StableHLO semantics): the output starts as a copy of the operand; each update
//! window whose start vector keeps it entirely inside the operand is combined into it,
//! others are skipped whole, as XLA does.
//!
//! Order: windows are applied in row-major order of their scatter positions, and within a
//! window in row-major order of its elements. With [`ScatterCombiner::Replace`] and several
//! windows writing one element, the last window in that order wins; with the other
//! combiners that order fixes the rounding of floating-point results. The order is the same
//! for every worker count: large scatters with large windows (at least 128 elements each)
//! split the operand's outermost axis into ranges, and each worker applies, in that same
//! order, exactly the parts of windows that fall in its range. Scatters of many small
//! windows run on one worker, since every worker would have to read every start vector.

use strata_tensor::config::{ScatterCombiner, ScatterConfig};
use strata_tensor::shape::row_major_strides;
use strata_tensor::{Error, Result, Tensor, TensorRead, TypedView, dispatch_dtype};

use super::copy::copy_to_contiguous;
use super::index_source::IndexSource;
use super::parallel::{for_each_piece, parts_for};
use super::plan_cache::{IndexedPlan, IndexedPlanCache, IndexedPlanKey, StridedShape, plan_for};
use crate::alloc::fill_output;
use crate::context::KernelContext;
use crate::elementwise::ElementwiseScalar;

const OP: &str = "scatter";

/// Least elements per window for which a scatter is split between workers.
const MIN_WINDOW_TO_SPLIT: usize = 128;

/// One scatter (batch) axis of the updates.
#[derive(Clone, Copy, Debug)]
struct ScatterAxis {
    extent: usize,
    upd_stride: isize,
    idx_stride: isize,
    /// Output stride of the operand batching axis paired with this axis (else 0).
    out_stride: isize,
    /// Whether the paired operand batching axis is operand axis 0.
    batches_axis0: bool,
}

/// One start-vector component.
#[derive(Clone, Copy, Debug)]
struct Component {
    out_stride: isize,
    /// Largest start keeping the window inside the operand.
    max_start: i64,
    indexes_axis0: bool,
}

/// Everything about a scatter that depends only on shapes, strides and the config.
#[derive(Debug)]
pub(crate) struct ScatterPlan {
    operand_shape: Vec<usize>,
    scatter_axes: Vec<ScatterAxis>,
    /// Window extents (updates extents of `update_window_dims`), in operand axis order.
    window_shape: Vec<usize>,
    window_upd_strides: Vec<isize>,
    window_out_strides: Vec<isize>,
    /// Whether window axis 0 is operand axis 0.
    window_spans_axis0: bool,
    components: Vec<Component>,
    component_stride: isize,
}

impl ScatterPlan {
    /// Validates the config against the shapes and compiles the plan.
    pub(crate) fn build(
        config: &ScatterConfig,
        operand: &StridedShape,
        indices: &StridedShape,
        updates: &StridedShape,
    ) -> Result<Self> {
        config.validate(&operand.shape, &indices.shape, &updates.shape)?;
        let rank = operand.shape.len();
        let out_strides = row_major_strides(&operand.shape);
        let window_axes = config.window_axes(rank);
        let batch_axes: Vec<usize> = (0..indices.shape.len()).filter(|&d| d != config.index_vector_dim).collect();
        let mut window_extent = vec![1usize; rank];
        let mut batches = batch_axes.iter();
        let mut plan = ScatterPlan {
            operand_shape: operand.shape.clone(),
            scatter_axes: Vec::new(),
            window_shape: Vec::new(),
            window_upd_strides: Vec::new(),
            window_out_strides: Vec::new(),
            window_spans_axis0: window_axes.first() == Some(&0),
            components: Vec::new(),
            component_stride: indices.strides.get(config.index_vector_dim).copied().unwrap_or(0),
        };
        for (k, &d) in config.update_window_dims.iter().enumerate() {
            let a = window_axes[k];
            window_extent[a] = updates.shape[d];
            plan.window_shape.push(updates.shape[d]);
            plan.window_upd_strides.push(updates.strides[d]);
            plan.window_out_strides.push(out_strides[a]);
        }
        // As XLA: a window can never be larger than the operand (jax.lax refuses it too).
        if let Some(a) = (0..rank).find(|&a| window_extent[a] > operand.shape[a]) {
            return Err(Error::invalid_argument(
                OP,
                format!(
                    "the update window has extent {} along operand axis {a}, which has only {}",
                    window_extent[a], operand.shape[a]
                ),
            ));
        }
        for d in (0..updates.shape.len()).filter(|d| !config.update_window_dims.contains(d)) {
            let j = *batches.next().ok_or_else(|| Error::internal(OP, "scatter axes ran out"))?;
            let paired = config.scatter_indices_batching_dims.iter().position(|&b| b == j);
            let operand_axis = paired.map(|p| config.input_batching_dims[p]);
            plan.scatter_axes.push(ScatterAxis {
                extent: updates.shape[d],
                upd_stride: updates.strides[d],
                idx_stride: indices.strides[j],
                out_stride: operand_axis.map_or(0, |a| out_strides[a]),
                batches_axis0: operand_axis == Some(0),
            });
        }
        plan.components = config
            .scatter_dims_to_operand_dims
            .iter()
            .map(|&a| Component {
                out_stride: out_strides[a],
                // Starts are i64: more room than that (a zero-size operand) clamps alike.
                max_start: i64::try_from(operand.shape[a] - window_extent[a]).unwrap_or(i64::MAX),
                indexes_axis0: a == 0,
            })
            .collect();
        Ok(plan)
    }

    /// Bytes held by the plan (for the cache's byte limit).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.operand_shape.len() * size_of::<usize>()
            + self.scatter_axes.len() * size_of::<ScatterAxis>()
            + self.window_shape.len() * (size_of::<usize>() + 2 * size_of::<isize>())
            + self.components.len() * size_of::<Component>()
    }

    /// Applies every window part that lands in operand rows `rows` (axis 0) to `out`, which
    /// holds exactly those rows of the output. `rows` is `None` for a rank-0 operand.
    fn apply_rows<T: ElementwiseScalar>(
        &self,
        rows: Option<(usize, usize)>,
        out: &mut [T],
        updates: &TypedView<'_, T>,
        indices: &IndexSource<'_>,
        combine: impl Fn(T, T) -> T,
    ) {
        let upd = updates.buffer();
        let row_len: isize = self.operand_shape.iter().skip(1).product::<usize>() as isize;
        let out_origin = rows.map_or(0, |(r0, _)| r0 as isize * row_len);
        let mut digits = vec![0usize; self.scatter_axes.len()];
        let window_count: usize = self.scatter_axes.iter().map(|a| a.extent).product();
        let mut window_digits = vec![0usize; self.window_shape.len()];
        for _ in 0..window_count {
            // Locate this window: updates/indices positions, output offset, row of axis 0.
            let (mut upd_at, mut idx_at) = (updates.offset() as isize, indices.layout().offset() as isize);
            let (mut out_at, mut row0) = (0isize, 0i64);
            for (axis, &i) in self.scatter_axes.iter().zip(&digits) {
                upd_at += i as isize * axis.upd_stride;
                idx_at += i as isize * axis.idx_stride;
                out_at += i as isize * axis.out_stride;
                if axis.batches_axis0 {
                    row0 += i as i64;
                }
            }
            let mut inside = true;
            for (k, c) in self.components.iter().enumerate() {
                let start = indices.at(idx_at + k as isize * self.component_stride);
                if !(0..=c.max_start).contains(&start) {
                    inside = false;
                    break;
                }
                out_at += start as isize * c.out_stride;
                if c.indexes_axis0 {
                    row0 += start;
                }
            }
            if inside {
                self.apply_window(
                    rows,
                    row0 as usize,
                    out,
                    out_at - out_origin,
                    upd,
                    upd_at,
                    &mut window_digits,
                    &combine,
                );
            }
            for (d, axis) in self.scatter_axes.iter().enumerate().rev() {
                digits[d] += 1;
                if digits[d] < axis.extent {
                    break;
                }
                digits[d] = 0;
            }
        }
    }

    /// Combines one window (starting at operand row `row0`) into `out`, restricted to
    /// `rows` when the operand's axis 0 is split between workers.
    #[allow(clippy::too_many_arguments)]
    fn apply_window<T: Copy>(
        &self,
        rows: Option<(usize, usize)>,
        row0: usize,
        out: &mut [T],
        out_at: isize,
        upd: &[T],
        upd_at: isize,
        digits: &mut [usize],
        combine: &impl Fn(T, T) -> T,
    ) {
        // The window's extent along operand axis 0, and which of its rows this part owns.
        let height = if self.window_spans_axis0 { self.window_shape[0] } else { 1 };
        let (lo, hi) = match rows {
            Some((r0, r1)) => (r0.saturating_sub(row0).min(height), r1.saturating_sub(row0).min(height)),
            None => (0, 1),
        };
        if lo >= hi {
            return;
        }
        let Some((&run, outer)) = self.window_shape.split_last() else {
            let o = &mut out[out_at as usize];
            *o = combine(*o, upd[upd_at as usize]);
            return;
        };
        if self.window_shape.contains(&0) {
            return;
        }
        let (run_out, run_upd) = (self.window_out_strides[outer.len()], self.window_upd_strides[outer.len()]);
        digits.fill(0);
        let restrict_first = self.window_spans_axis0;
        if restrict_first {
            digits[0] = lo;
        }
        // When the window is one axis deep and spans axis 0, the run itself is restricted.
        let (j_lo, j_hi) = if restrict_first && outer.is_empty() { (lo, hi) } else { (0, run) };
        loop {
            let (mut o_at, mut u_at) = (out_at, upd_at);
            for (d, &i) in digits[..outer.len()].iter().enumerate() {
                o_at += i as isize * self.window_out_strides[d];
                u_at += i as isize * self.window_upd_strides[d];
            }
            if run_out == 1 && run_upd == 1 {
                // Both runs contiguous: a slice loop the compiler can vectorise.
                let (o0, u0, n) = ((o_at as usize) + j_lo, (u_at as usize) + j_lo, j_hi - j_lo);
                for (o, &u) in out[o0..o0 + n].iter_mut().zip(&upd[u0..u0 + n]) {
                    *o = combine(*o, u);
                }
            } else {
                for j in j_lo as isize..j_hi as isize {
                    let o = &mut out[(o_at + j * run_out) as usize];
                    *o = combine(*o, upd[(u_at + j * run_upd) as usize]);
                }
            }
            let mut d = outer.len();
            loop {
                if d == 0 {
                    return;
                }
                d -= 1;
                digits[d] += 1;
                let limit = if d == 0 && restrict_first { hi } else { outer[d] };
                if digits[d] < limit {
                    break;
                }
                digits[d] = if d == 0 && restrict_first { lo } else { 0 };
                if d == 0 {
                    return;
                }
            }
        }
    }

    /// Runs the plan for element type `T` with combiner `combine`.
    fn run<T: ElementwiseScalar>(
        &self,
        ctx: &KernelContext<'_>,
        operand: &TensorRead<'_>,
        updates: &TensorRead<'_>,
        indices: &IndexSource<'_>,
        combine: impl Fn(T, T) -> T + Sync,
    ) -> Result<Tensor> {
        let operand = operand.typed_view::<T>().map_err(|e| e.in_op(OP))?;
        let updates = updates.typed_view::<T>().map_err(|e| e.in_op(OP))?;
        let out = fill_output(ctx, OP, &self.operand_shape, |out: &mut [T]| {
            copy_to_contiguous(ctx, &operand, out);
            if out.is_empty() || updates.is_empty() {
                return;
            }
            let Some(&axis0) = self.operand_shape.first() else {
                self.apply_rows(None, out, &updates, indices, &combine);
                return;
            };
            let row_len = out.len() / axis0;
            // Every worker scans every window's start vector, so splitting pays only when
            // windows are large next to that scan; small windows run on one worker.
            let windows: usize = self.scatter_axes.iter().map(|a| a.extent).product();
            let parts = if updates.len() / windows.max(1) < MIN_WINDOW_TO_SPLIT {
                1
            } else {
                parts_for(ctx, updates.len()).min(axis0)
            };
            for_each_piece(ctx, out, row_len, parts, &|first, piece| {
                let r0 = first / row_len;
                self.apply_rows(Some((r0, r0 + piece.len() / row_len)), piece, &updates, indices, &combine);
            });
        })?;
        Ok(out.into())
    }
}

/// Returns `operand` with `updates` combined in at the windows `indices` (int32 or int64)
/// select, with StableHLO's `scatter` semantics; windows that would not lie entirely inside
/// the operand are skipped whole, as XLA does. See the module docs for the order in which
/// overlapping windows are applied (deterministic, independent of the worker count).
///
/// ```
/// use strata_kernels::{KernelContext, indexing::scatter};
/// use strata_tensor::{Tensor, config::{ScatterCombiner, ScatterConfig}};
/// let zeros = Tensor::from_vec(vec![0i64; 6], &[3, 2]).unwrap();
/// let rows = Tensor::from_vec(vec![2i32, 0, 2, 7], &[4, 1]).unwrap(); // row 7 is skipped
/// let ones = Tensor::from_vec(vec![1i64; 8], &[4, 2]).unwrap();
/// let cfg = ScatterConfig::rows(2, ScatterCombiner::Add);
/// let out = scatter(&KernelContext::sequential(), &(&zeros).into(), &(&rows).into(), &(&ones).into(), &cfg, None)
///     .unwrap();
/// assert_eq!(out.as_typed::<i64>().unwrap().data(), &[1, 1, 0, 0, 2, 2]);
/// ```
pub fn scatter(
    ctx: &KernelContext<'_>,
    operand: &TensorRead<'_>,
    indices: &TensorRead<'_>,
    updates: &TensorRead<'_>,
    config: &ScatterConfig,
    cache: Option<&IndexedPlanCache>,
) -> Result<Tensor> {
    let index_source = IndexSource::new(OP, "scatter_indices", indices)?;
    if updates.dtype() != operand.dtype() {
        return Err(Error::dtype_mismatch(
            OP,
            format!("operand has dtype {}, updates have dtype {}", operand.dtype(), updates.dtype()),
        ));
    }
    config.combiner.validate(operand.dtype())?;
    let (operand_shape, indices_shape, updates_shape) =
        (StridedShape::of(operand), StridedShape::of(indices), StridedShape::of(updates));
    let plan = plan_for(
        cache,
        || IndexedPlanKey::Scatter {
            dtype: operand.dtype(),
            index_dtype: indices.dtype(),
            operand: operand_shape.clone(),
            indices: indices_shape.clone(),
            updates: updates_shape.clone(),
            config: config.clone(),
        },
        || ScatterPlan::build(config, &operand_shape, &indices_shape, &updates_shape).map(IndexedPlan::Scatter),
    )?;
    let IndexedPlan::Scatter(plan) = &*plan else {
        return Err(Error::internal(OP, "the cache returned a plan of another kind"));
    };
    dispatch_dtype!(operand.dtype(), T => match config.combiner {
        ScatterCombiner::Replace => plan.run::<T>(ctx, operand, updates, &index_source, |_, u| u),
        // The combiners are the elementwise ops of the same name, with their lax rules
        // (float max/min propagate NaN; complex max/min are XLA's lexicographic select),
        // applied as `combine(operand element, update)` as XLA's scatter computation is.
        ScatterCombiner::Add => plan.run::<T>(ctx, operand, updates, &index_source, <T as ElementwiseScalar>::add),
        ScatterCombiner::Multiply => plan.run::<T>(ctx, operand, updates, &index_source, <T as ElementwiseScalar>::mul),
        ScatterCombiner::Max => plan.run::<T>(ctx, operand, updates, &index_source, <T as ElementwiseScalar>::max),
        ScatterCombiner::Min => plan.run::<T>(ctx, operand, updates, &index_source, <T as ElementwiseScalar>::min),
    })
}
