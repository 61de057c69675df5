//! `dynamic_slice` and `dynamic_update_slice`: a box at run-time start indices, each start
//! clamped into `[0, extent - size]` as XLA does, so the box always fits.

use strata_tensor::shape::row_major_strides;
use strata_tensor::{DType, Error, Result, Scalar, Tensor, TensorRead, dispatch_dtype};

use super::copy::{Strided, copy_strided, copy_to_contiguous};
use super::index_source::IndexSource;
use super::plan_cache::{IndexedPlan, IndexedPlanCache, IndexedPlanKey, plan_for};
use crate::alloc::fill_output;
use crate::context::KernelContext;

const SLICE_OP: &str = "dynamic_slice";
const UPDATE_OP: &str = "dynamic_update_slice";

/// Run-time start indices of a dynamic slice: one per operand axis.
#[derive(Clone, Copy, Debug)]
pub enum StartIndices<'s, 'a> {
    /// Plain values.
    Values(&'s [i64]),
    /// One rank-0 int32 or int64 tensor per axis (as `jax.lax.dynamic_slice` takes them).
    Tensors(&'s [TensorRead<'a>]),
}

impl StartIndices<'_, '_> {
    /// The start values, checked: one per axis, tensors rank 0 and int32/int64.
    fn resolve(&self, op: &'static str, rank: usize) -> Result<Vec<i64>> {
        let count = match self {
            StartIndices::Values(v) => v.len(),
            StartIndices::Tensors(t) => t.len(),
        };
        if count != rank {
            return Err(Error::invalid_argument(
                op,
                format!("{count} start indices were given for an operand of rank {rank}; need one per axis"),
            ));
        }
        match self {
            StartIndices::Values(v) => Ok(v.to_vec()),
            StartIndices::Tensors(ts) => ts
                .iter()
                .enumerate()
                .map(|(axis, t)| {
                    let source = IndexSource::new(op, &format!("start index {axis}"), t)?;
                    if t.rank() != 0 {
                        return Err(Error::invalid_argument(
                            op,
                            format!("start index {axis} has shape {:?}; start indices must be rank 0", t.shape()),
                        ));
                    }
                    Ok(source.scalar())
                })
                .collect(),
        }
    }
}

/// Clamps each start into `[0, max]`.
fn clamp_starts(starts: &[i64], max_start: &[i64]) -> Vec<usize> {
    starts.iter().zip(max_start).map(|(&s, &m)| s.clamp(0, m) as usize).collect()
}

/// The validated geometry of a dynamic slice.
#[derive(Debug)]
pub(crate) struct DynamicSlicePlan {
    sizes: Vec<usize>,
    max_start: Vec<i64>,
}

impl DynamicSlicePlan {
    fn build(operand: &[usize], sizes: &[usize]) -> Result<Self> {
        if sizes.len() != operand.len() {
            return Err(Error::invalid_argument(
                SLICE_OP,
                format!("slice_sizes {sizes:?} has {} entries, the operand has rank {}", sizes.len(), operand.len()),
            ));
        }
        let mut max_start = Vec::with_capacity(sizes.len());
        for (axis, (&size, &dim)) in sizes.iter().zip(operand).enumerate() {
            if size > dim {
                return Err(Error::invalid_argument(
                    SLICE_OP,
                    format!("slice_sizes[{axis}] = {size} exceeds operand extent {dim} of axis {axis}"),
                ));
            }
            // Starts are i64: a larger room (a zero-size operand's huge extent) clamps alike.
            max_start.push(i64::try_from(dim - size).unwrap_or(i64::MAX));
        }
        Ok(DynamicSlicePlan { sizes: sizes.to_vec(), max_start })
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.sizes.len() * (size_of::<usize>() + size_of::<i64>())
    }

    fn run<T: Scalar>(&self, ctx: &KernelContext<'_>, operand: &TensorRead<'_>, starts: &[usize]) -> Result<Tensor> {
        let mut view = operand.typed_view::<T>().map_err(|e| e.in_op(SLICE_OP))?;
        for (axis, (&s, &n)) in starts.iter().zip(&self.sizes).enumerate() {
            view = view.slice_axis(axis, s, s + n, 1).map_err(|e| e.in_op(SLICE_OP))?;
        }
        let out = fill_output(ctx, SLICE_OP, &self.sizes, |out: &mut [T]| copy_to_contiguous(ctx, &view, out))?;
        Ok(out.into())
    }
}

/// The box of extents `sizes` at `starts` (each clamped into `[0, extent - size]`, as XLA
/// does), copied into a new row-major tensor.
///
/// ```
/// use strata_kernels::{KernelContext, indexing::{StartIndices, dynamic_slice}};
/// use strata_tensor::Tensor;
/// let t = Tensor::from_vec((0..12).collect::<Vec<i32>>(), &[3, 4]).unwrap();
/// // Start [2, -1] clamps to [1, 0] for a [2, 2] box.
/// let out = dynamic_slice(&KernelContext::sequential(), &(&t).into(), StartIndices::Values(&[2, -1]), &[2, 2], None)
///     .unwrap();
/// assert_eq!(out.as_typed::<i32>().unwrap().data(), &[4, 5, 8, 9]);
/// ```
pub fn dynamic_slice(
    ctx: &KernelContext<'_>,
    operand: &TensorRead<'_>,
    starts: StartIndices<'_, '_>,
    sizes: &[usize],
    cache: Option<&IndexedPlanCache>,
) -> Result<Tensor> {
    let starts = starts.resolve(SLICE_OP, operand.rank())?;
    let plan = plan_for(
        cache,
        || IndexedPlanKey::DynamicSlice {
            dtype: operand.dtype(),
            operand: operand.shape().to_vec(),
            sizes: sizes.to_vec(),
        },
        || DynamicSlicePlan::build(operand.shape(), sizes).map(IndexedPlan::DynamicSlice),
    )?;
    let IndexedPlan::DynamicSlice(plan) = &*plan else {
        return Err(Error::internal(SLICE_OP, "the cache returned a plan of another kind"));
    };
    let starts = clamp_starts(&starts, &plan.max_start);
    dispatch_dtype!(operand.dtype(), T => plan.run::<T>(ctx, operand, &starts))
}

/// The validated geometry of a dynamic update slice.
#[derive(Debug)]
pub(crate) struct DynamicUpdatePlan {
    operand: Vec<usize>,
    update: Vec<usize>,
    max_start: Vec<i64>,
}

impl DynamicUpdatePlan {
    fn build(operand: &[usize], update: &[usize]) -> Result<Self> {
        if update.len() != operand.len() {
            return Err(Error::shape_mismatch(
                UPDATE_OP,
                format!("update has rank {} (shape {update:?}), the operand has rank {}", update.len(), operand.len()),
            ));
        }
        let mut max_start = Vec::with_capacity(update.len());
        for (axis, (&size, &dim)) in update.iter().zip(operand).enumerate() {
            if size > dim {
                return Err(Error::shape_mismatch(
                    UPDATE_OP,
                    format!("update extent {size} of axis {axis} exceeds operand extent {dim}"),
                ));
            }
            max_start.push(i64::try_from(dim - size).unwrap_or(i64::MAX));
        }
        Ok(DynamicUpdatePlan { operand: operand.to_vec(), update: update.to_vec(), max_start })
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.operand.len() * (2 * size_of::<usize>() + size_of::<i64>())
    }

    fn run<T: Scalar>(
        &self,
        ctx: &KernelContext<'_>,
        operand: &TensorRead<'_>,
        update: &TensorRead<'_>,
        starts: &[usize],
    ) -> Result<Tensor> {
        let operand = operand.typed_view::<T>().map_err(|e| e.in_op(UPDATE_OP))?;
        let update = update.typed_view::<T>().map_err(|e| e.in_op(UPDATE_OP))?;
        let out_strides = row_major_strides(&self.operand);
        let out = fill_output(ctx, UPDATE_OP, &self.operand, |out: &mut [T]| {
            copy_to_contiguous(ctx, &operand, out);
            if !out.is_empty() {
                // A non-empty output's starts and strides address its own elements.
                let at: isize = starts.iter().zip(&out_strides).map(|(&s, &st)| s as isize * st).sum();
                let from = Strided { offset: update.offset() as isize, strides: update.strides() };
                copy_strided(&self.update, update.buffer(), from, out, Strided { offset: at, strides: &out_strides });
            }
        })?;
        Ok(out.into())
    }
}

/// `operand` with the box at `starts` replaced by `update` (same dtype and rank, extents
/// at most the operand's); each start is clamped into `[0, extent - update extent]`, as XLA
/// does, so the whole update is always written.
///
/// ```
/// use strata_kernels::{KernelContext, indexing::{StartIndices, dynamic_update_slice}};
/// use strata_tensor::Tensor;
/// let t = Tensor::from_vec(vec![0.0f64; 5], &[5]).unwrap();
/// let u = Tensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
/// let out = dynamic_update_slice(&KernelContext::sequential(), &(&t).into(), &(&u).into(), StartIndices::Values(&[9]), None)
///     .unwrap();
/// assert_eq!(out.as_typed::<f64>().unwrap().data(), &[0.0, 0.0, 0.0, 1.0, 2.0]);
/// ```
pub fn dynamic_update_slice(
    ctx: &KernelContext<'_>,
    operand: &TensorRead<'_>,
    update: &TensorRead<'_>,
    starts: StartIndices<'_, '_>,
    cache: Option<&IndexedPlanCache>,
) -> Result<Tensor> {
    check_same_dtype(UPDATE_OP, "update", operand.dtype(), update.dtype())?;
    let starts = starts.resolve(UPDATE_OP, operand.rank())?;
    let plan = plan_for(
        cache,
        || IndexedPlanKey::DynamicUpdateSlice {
            dtype: operand.dtype(),
            operand: operand.shape().to_vec(),
            update: update.shape().to_vec(),
        },
        || DynamicUpdatePlan::build(operand.shape(), update.shape()).map(IndexedPlan::DynamicUpdateSlice),
    )?;
    let IndexedPlan::DynamicUpdateSlice(plan) = &*plan else {
        return Err(Error::internal(UPDATE_OP, "the cache returned a plan of another kind"));
    };
    let starts = clamp_starts(&starts, &plan.max_start);
    dispatch_dtype!(operand.dtype(), T => plan.run::<T>(ctx, operand, update, &starts))
}

/// Errors unless the two dtypes agree.
pub(crate) fn check_same_dtype(op: &'static str, what: &str, operand: DType, other: DType) -> Result<()> {
    if operand == other {
        Ok(())
    } else {
        Err(Error::dtype_mismatch(op, format!("operand has dtype {operand}, {what} has dtype {other}")))
    }
}
