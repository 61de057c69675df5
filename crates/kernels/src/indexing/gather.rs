//! `gather` (StableHLO semantics): a compiled plan of per-axis strides, and the loop that
//! fills the output in row-major order, one run along the innermost axis at a time.

use strata_tensor::config::GatherConfig;
use strata_tensor::{DType, Error, Result, Scalar, Tensor, TensorRead, TypedView, dispatch_dtype};

use super::index_source::{IndexBuffer, IndexSource};
use super::parallel::{for_each_piece, parts_for};
use super::plan_cache::{IndexedPlan, IndexedPlanCache, IndexedPlanKey, StridedShape, plan_for};
use crate::alloc::fill_output;
use crate::context::KernelContext;

const OP: &str = "gather";

/// Everything about a gather that depends only on shapes, strides and the config.
///
/// Output element at multi-index `o` reads the operand at
/// `offset + Σ o[d]·op_strides[d] + Σ_k clamp(start_k(o), 0, max_k)·stride_k`, where the
/// start vector is read from the indices at `offset + Σ o[d]·idx_strides[d] + k·component_stride`.
#[derive(Debug)]
pub(crate) struct GatherPlan {
    out_shape: Vec<usize>,
    /// Operand stride per output axis: a window axis' stride, a batching axis' stride for
    /// batch axes paired with an operand batching axis, else 0.
    op_strides: Vec<isize>,
    /// Indices stride per output axis (0 for window axes).
    idx_strides: Vec<isize>,
    /// Whether each output axis is a batch axis (changing it changes the start vector).
    is_batch: Vec<bool>,
    /// Per start-vector component: the operand stride of the axis it indexes and the
    /// largest start that keeps the window inside the operand.
    components: Vec<(isize, i64)>,
    /// Indices stride along `index_vector_dim` (0 when the index vector is implicit).
    component_stride: isize,
    /// `Some(w)` when the batch axes all come first and each window is `w` consecutive
    /// operand elements (the embedding-lookup shape): then one slice copy per window.
    contiguous_window: Option<usize>,
}

impl GatherPlan {
    /// Validates the config against the shapes and compiles the plan.
    pub(crate) fn build(config: &GatherConfig, operand: &StridedShape, indices: &StridedShape) -> Result<Self> {
        let out_shape = config.output_shape(&operand.shape, &indices.shape)?;
        let rank = operand.shape.len();
        let window_axes: Vec<usize> = (0..rank)
            .filter(|d| !config.collapsed_slice_dims.contains(d) && !config.operand_batching_dims.contains(d))
            .collect();
        let batch_axes: Vec<usize> = (0..indices.shape.len()).filter(|&d| d != config.index_vector_dim).collect();
        let (mut windows, mut batches) = (window_axes.iter(), batch_axes.iter());
        let mut plan = GatherPlan {
            out_shape,
            op_strides: Vec::new(),
            idx_strides: Vec::new(),
            is_batch: Vec::new(),
            components: Vec::new(),
            component_stride: indices.strides.get(config.index_vector_dim).copied().unwrap_or(0),
            contiguous_window: None,
        };
        for d in 0..plan.out_shape.len() {
            let (op_stride, idx_stride, is_batch) = if config.offset_dims.contains(&d) {
                let a = *windows.next().ok_or_else(|| Error::internal(OP, "window axes ran out"))?;
                (operand.strides[a], 0, false)
            } else {
                let j = *batches.next().ok_or_else(|| Error::internal(OP, "batch axes ran out"))?;
                let paired = config.start_indices_batching_dims.iter().position(|&b| b == j);
                let op_stride = paired.map_or(0, |p| operand.strides[config.operand_batching_dims[p]]);
                (op_stride, indices.strides[j], true)
            };
            plan.op_strides.push(op_stride);
            plan.idx_strides.push(idx_stride);
            plan.is_batch.push(is_batch);
        }
        plan.components = config
            .start_index_map
            .iter()
            .map(|&a| (operand.strides[a], (operand.shape[a] - config.slice_sizes[a]) as i64))
            .collect();
        plan.contiguous_window = plan.find_contiguous_window();
        Ok(plan)
    }

    /// The window length when every batch axis precedes every window axis and the window
    /// axes address consecutive operand elements in row-major order.
    fn find_contiguous_window(&self) -> Option<usize> {
        let first_window = self.is_batch.iter().position(|&b| !b).unwrap_or(self.out_shape.len());
        if self.is_batch[first_window..].iter().any(|&b| b) {
            return None;
        }
        let mut expected = 1usize;
        for d in (first_window..self.out_shape.len()).rev() {
            if self.out_shape[d] != 1 && self.op_strides[d] != expected as isize {
                return None;
            }
            expected *= self.out_shape[d];
        }
        Some(expected).filter(|&w| w > 0)
    }

    /// Fills whole windows `first / w ..` of `out` when the plan has a contiguous window of
    /// `w` elements (`first` and `out.len()` are multiples of `w`).
    fn fill_windows<T: Scalar>(
        &self,
        w: usize,
        first: usize,
        out: &mut [T],
        operand: &TypedView<'_, T>,
        indices: &IndexSource<'_>,
    ) {
        // One loop per index type, so that reading an index is a plain load.
        let idx_offset = indices.layout().offset() as isize;
        match indices.buffer() {
            IndexBuffer::I32(b) => self.fill_windows_with(w, first, out, operand, b, idx_offset),
            IndexBuffer::I64(b) => self.fill_windows_with(w, first, out, operand, b, idx_offset),
        }
    }

    fn fill_windows_with<T: Scalar, I: Copy + Into<i64>>(
        &self,
        w: usize,
        first: usize,
        out: &mut [T],
        operand: &TypedView<'_, T>,
        idx: &[I],
        idx_offset: isize,
    ) {
        let src = operand.buffer();
        let batch_rank = self.is_batch.iter().take_while(|&&b| b).count();
        let batch_shape = &self.out_shape[..batch_rank];
        let mut digits = vec![0usize; batch_rank];
        let mut rest = first / w;
        for d in (0..batch_rank).rev() {
            digits[d] = rest % batch_shape[d];
            rest /= batch_shape[d];
        }
        // Operand and indices offsets of the current window, advanced incrementally.
        let (mut op_at, mut idx_at) = (operand.offset() as isize, idx_offset);
        for (d, &i) in digits.iter().enumerate() {
            op_at += i as isize * self.op_strides[d];
            idx_at += i as isize * self.idx_strides[d];
        }
        for window in out.chunks_exact_mut(w) {
            let mut start = 0isize;
            for (k, &(stride, max)) in self.components.iter().enumerate() {
                let v: i64 = idx[(idx_at + k as isize * self.component_stride) as usize].into();
                start += v.clamp(0, max) as isize * stride;
            }
            let at = (op_at + start) as usize;
            copy_window(window, &src[at..at + w]);
            for d in (0..batch_rank).rev() {
                digits[d] += 1;
                op_at += self.op_strides[d];
                idx_at += self.idx_strides[d];
                if digits[d] < batch_shape[d] {
                    break;
                }
                op_at -= batch_shape[d] as isize * self.op_strides[d];
                idx_at -= batch_shape[d] as isize * self.idx_strides[d];
                digits[d] = 0;
            }
        }
    }

    /// Bytes held by the plan (for the cache's byte limit).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.out_shape.len() * (2 * size_of::<usize>() + 2 * size_of::<isize>() + 1)
            + self.components.len() * size_of::<(isize, i64)>()
    }

    /// Operand offset contributed by the start vector at indices position `at`.
    #[inline]
    fn start_offset(&self, indices: &IndexSource<'_>, at: isize) -> isize {
        let mut offset = 0;
        for (k, &(stride, max)) in self.components.iter().enumerate() {
            let start = indices.at(at + k as isize * self.component_stride).clamp(0, max);
            offset += start as isize * stride;
        }
        offset
    }

    /// Fills `out`, the output elements `first..first + out.len()` in row-major order.
    fn fill_range<T: Scalar>(
        &self,
        first: usize,
        out: &mut [T],
        operand: &TypedView<'_, T>,
        indices: &IndexSource<'_>,
    ) {
        let src = operand.buffer();
        let src_offset = operand.offset() as isize;
        let idx_offset = indices.layout().offset() as isize;
        let Some(inner) = self.out_shape.len().checked_sub(1) else {
            out[0] = src[(src_offset + self.start_offset(indices, idx_offset)) as usize];
            return;
        };
        let extent = self.out_shape[inner];
        let (inner_op, inner_idx) = (self.op_strides[inner], self.idx_strides[inner]);
        // Row-major digits of `first` over the outer axes, and the position along `inner`.
        let mut digits = vec![0usize; inner];
        let mut rest = first;
        let mut j0 = rest % extent;
        rest /= extent;
        for d in (0..inner).rev() {
            digits[d] = rest % self.out_shape[d];
            rest /= self.out_shape[d];
        }
        let mut pos = 0;
        let mut batch_at = (0isize, 0isize); // (operand offset, indices offset) of the batch axes
        let mut batch_dirty = true;
        while pos < out.len() {
            if batch_dirty {
                let (mut op_at, mut idx_at) = (0isize, idx_offset);
                for d in (0..inner).filter(|&d| self.is_batch[d]) {
                    op_at += digits[d] as isize * self.op_strides[d];
                    idx_at += digits[d] as isize * self.idx_strides[d];
                }
                batch_at = (op_at, idx_at);
                batch_dirty = false;
            }
            let mut window_at = src_offset + batch_at.0;
            for d in (0..inner).filter(|&d| !self.is_batch[d]) {
                window_at += digits[d] as isize * self.op_strides[d];
            }
            let len = (extent - j0).min(out.len() - pos);
            let run = &mut out[pos..pos + len];
            if self.is_batch[inner] {
                // The start vector changes with every element of the run.
                for (t, o) in run.iter_mut().enumerate() {
                    let j = (j0 + t) as isize;
                    let start = self.start_offset(indices, batch_at.1 + j * inner_idx);
                    *o = src[(window_at + j * inner_op + start) as usize];
                }
            } else {
                let at = window_at + self.start_offset(indices, batch_at.1) + j0 as isize * inner_op;
                if inner_op == 1 {
                    run.copy_from_slice(&src[at as usize..at as usize + len]);
                } else {
                    for (t, o) in run.iter_mut().enumerate() {
                        *o = src[(at + t as isize * inner_op) as usize];
                    }
                }
            }
            pos += len;
            j0 = 0;
            for d in (0..inner).rev() {
                batch_dirty |= self.is_batch[d];
                digits[d] += 1;
                if digits[d] < self.out_shape[d] {
                    break;
                }
                digits[d] = 0;
            }
        }
    }

    /// Runs the plan, allocating the output through the kernel context.
    fn run<T: Scalar>(
        &self,
        ctx: &KernelContext<'_>,
        operand: &TensorRead<'_>,
        indices: &IndexSource<'_>,
    ) -> Result<Tensor> {
        let operand = operand.typed_view::<T>().map_err(|e| e.in_op(OP))?;
        let out = fill_output(ctx, OP, &self.out_shape, |out: &mut [T]| {
            if out.is_empty() {
                return;
            }
            if let Some(w) = self.contiguous_window {
                for_each_piece(ctx, out, w, parts_for(ctx, out.len()), &|first, piece| {
                    self.fill_windows(w, first, piece, &operand, indices)
                });
                return;
            }
            let run_len = self.out_shape.last().copied().unwrap_or(1);
            for_each_piece(ctx, out, run_len, parts_for(ctx, out.len()), &|first, piece| {
                self.fill_range(first, piece, &operand, indices)
            });
        })?;
        Ok(out.into())
    }
}

/// Copies one window. Short windows (an embedding row, a few coordinates) are an element
/// loop the compiler unrolls; a `memcpy` call costs more than the copy below 16 elements.
#[inline(always)]
fn copy_window<T: Copy>(dst: &mut [T], src: &[T]) {
    if dst.len() <= 16 {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = s;
        }
    } else {
        dst.copy_from_slice(src);
    }
}

/// Gathers windows of `operand` at the start vectors held in `indices` (int32 or int64),
/// with StableHLO's `gather` semantics: each start index is clamped into
/// `[0, extent - slice_size]` so the window always fits, as XLA does.
///
/// Large outputs are split over the context's workers in contiguous pieces; the result
/// does not depend on the number of workers. With a cache, the compiled plan is looked up
/// by (dtype, operand and indices shapes and strides, config) and stored on a miss.
///
/// ```
/// use strata_kernels::{KernelContext, indexing::gather};
/// use strata_tensor::{Tensor, config::GatherConfig};
/// let table = Tensor::from_vec((0..10).map(|x| x as f32).collect(), &[5, 2]).unwrap();
/// let rows = Tensor::from_vec(vec![4i32, 0, 9], &[3, 1]).unwrap(); // 9 clamps to 4
/// let out = gather(&KernelContext::sequential(), &(&table).into(), &(&rows).into(), &GatherConfig::rows(2, 2), None)
///     .unwrap();
/// assert_eq!(out.as_typed::<f32>().unwrap().data(), &[8.0, 9.0, 0.0, 1.0, 8.0, 9.0]);
/// ```
pub fn gather(
    ctx: &KernelContext<'_>,
    operand: &TensorRead<'_>,
    indices: &TensorRead<'_>,
    config: &GatherConfig,
    cache: Option<&IndexedPlanCache>,
) -> Result<Tensor> {
    let index_source = IndexSource::new(OP, "start_indices", indices)?;
    let operand_shape = StridedShape::of(operand);
    let indices_shape = StridedShape::of(indices);
    let plan = plan_for(
        cache,
        || IndexedPlanKey::Gather {
            dtype: operand.dtype(),
            index_dtype: indices.dtype(),
            operand: operand_shape.clone(),
            indices: indices_shape.clone(),
            config: config.clone(),
        },
        || GatherPlan::build(config, &operand_shape, &indices_shape).map(IndexedPlan::Gather),
    )?;
    let IndexedPlan::Gather(plan) = &*plan else {
        return Err(Error::internal(OP, "the cache returned a plan of another kind"));
    };
    run_typed(operand.dtype(), plan, ctx, operand, &index_source)
}

fn run_typed(
    dtype: DType,
    plan: &GatherPlan,
    ctx: &KernelContext<'_>,
    operand: &TensorRead<'_>,
    indices: &IndexSource<'_>,
) -> Result<Tensor> {
    dispatch_dtype!(dtype, T => plan.run::<T>(ctx, operand, indices))
}
