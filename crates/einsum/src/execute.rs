//! Running a [`Program`] through the op traits of any backend.

use strata_tensor::config::{BinaryOp, DotGeneralConfig, ReduceOp};
use strata_tensor::{
    BufferOps, ContractionOps, DType, ElementwiseOps, Error, IndexingOps, ReductionOps, Result, StructuralOps, Tensor,
    TensorRead, TensorView, TypedView, dispatch_dtype,
};

use crate::error::OP;
use crate::layout::Source;
use crate::plan::{Operand, Program, StepOp};

/// The op families an einsum runs on: every backend implementing them (the CPU facade,
/// its sessions, a test double) runs every expression.
///
/// ```
/// use strata_einsum::EinsumOps;
/// fn takes_any_backend(_ops: &dyn EinsumOps) {}
/// ```
pub trait EinsumOps: ContractionOps + StructuralOps + ReductionOps + ElementwiseOps + IndexingOps + BufferOps {}

impl<B> EinsumOps for B where
    B: ContractionOps + StructuralOps + ReductionOps + ElementwiseOps + IndexingOps + BufferOps + ?Sized
{
}

/// Runs `program` on `inputs` (already checked against the prepared shapes and dtype).
pub(crate) fn run(program: &Program, ops: &dyn EinsumOps, inputs: &[TensorRead<'_>]) -> Result<Tensor> {
    let mut temps: Vec<Option<Tensor>> = (0..program.temps).map(|_| None).collect();
    for (i, step) in program.steps.iter().enumerate() {
        let out = {
            let view = |o: &Operand| -> Result<TensorView<'_>> {
                let source = match o.source {
                    Source::Input(k) => inputs[k].view(),
                    Source::Temp(t) => match &temps[t] {
                        Some(t) => t.view(),
                        None => return Err(Error::internal(OP, format!("step {i} reads a temporary not yet written"))),
                    },
                };
                arrange(source, o)
            };
            match &step.op {
                StepOp::Reduce { input, axes } => ops.reduce(ReduceOp::Sum, view(input)?.into(), axes),
                StepOp::Contract { lhs, rhs, config } => contract(ops, view(lhs)?, view(rhs)?, config),
                StepOp::Multiply { lhs, rhs } => ops.binary(BinaryOp::Mul, view(lhs)?.into(), view(rhs)?.into()),
                StepOp::Copy { input } => ops.to_contiguous(view(input)?.into()),
            }
        }
        .map_err(|e| Error::new(e.kind(), OP, format!("step {i}: {e}")).with_source(e))?;
        temps[step.out] = Some(out);
        for &t in &step.frees {
            if let Some(done) = temps[t].take() {
                ops.recycle(done);
            }
        }
    }
    let result = temps
        .get_mut(program.result)
        .and_then(Option::take)
        .ok_or_else(|| Error::internal(OP, "the program wrote no result"))?;
    if result.shape() == program.output_shape.as_slice() {
        Ok(result)
    } else {
        // Only extent-1 axes sit elsewhere: the elements are already in output order.
        result.reshape(&program.output_shape)
    }
}

/// `source` presented as `o` says: each presented axis walks the listed source axes at
/// once (stride = their sum: a diagonal), none of them (stride 0: a broadcast), or one.
/// Metadata only; the buffer is shared.
fn arrange<'a>(source: TensorView<'a>, o: &Operand) -> Result<TensorView<'a>> {
    let layout = source.layout();
    let (shape, strides) = (layout.shape(), layout.strides());
    let mut presented = Vec::with_capacity(o.axes.len());
    for (axes, &extent) in o.axes.iter().zip(&o.shape) {
        let mut stride = 0isize;
        for &a in axes {
            match shape.get(a) {
                Some(&e) if e == extent => stride += strides[a],
                _ => {
                    return Err(Error::internal(
                        OP,
                        format!("presenting axis {a} of a tensor of shape {shape:?} with extent {extent}"),
                    ));
                }
            }
        }
        presented.push(stride);
    }
    let offset = layout.offset();
    dispatch_dtype!(source.dtype(), T => {
        let typed = source.into_typed::<T>()?;
        TypedView::new(typed.buffer(), &o.shape, &presented, offset).map(TensorView::from)
    })
}

/// One pairwise contraction: `dot_general` for the dtypes it serves, products and sums
/// for the integer dtypes.
fn contract(
    ops: &dyn EinsumOps,
    lhs: TensorView<'_>,
    rhs: TensorView<'_>,
    config: &DotGeneralConfig,
) -> Result<Tensor> {
    match lhs.dtype() {
        DType::I32 | DType::I64 => integer_contraction(ops, lhs, rhs, config),
        _ => ops.dot_general(lhs.into(), rhs.into(), config, false, false),
    }
}

/// Elements of the product tensor one integer block may materialise (512 KiB of i64).
const INTEGER_BLOCK: usize = 1 << 16;

/// An integer `dot_general`: both operands broadcast to the full label space (result
/// axes, then contracted axes; stride-0 views), multiplied elementwise and summed over
/// the contracted axes, in blocks of at most [`INTEGER_BLOCK`] products. Integer
/// arithmetic wraps, as in numpy, so the blocking cannot change the result.
fn integer_contraction(
    ops: &dyn EinsumOps,
    lhs: TensorView<'_>,
    rhs: TensorView<'_>,
    config: &DotGeneralConfig,
) -> Result<Tensor> {
    let out_shape = config.output_shape(lhs.shape(), rhs.shape())?;
    let (nb, nout) = (config.lhs_batch.len(), out_shape.len());
    let lhs_free = config.lhs_free(lhs.rank());
    let rhs_free = config.rhs_free(rhs.rank());
    let mut full = out_shape.clone();
    full.extend(config.lhs_contracting.iter().map(|&a| lhs.shape()[a]));
    // Where each operand axis lands in the full space.
    let place = |batch: &[usize], free: &[usize], free_base: usize, contracting: &[usize], rank: usize| {
        (0..rank)
            .map(|a| {
                let at = |list: &[usize]| list.iter().position(|&x| x == a);
                at(batch).or_else(|| at(free).map(|j| free_base + j)).or_else(|| at(contracting).map(|c| nout + c))
            })
            .collect::<Vec<_>>()
    };
    let lhs_at = place(&config.lhs_batch, &lhs_free, nb, &config.lhs_contracting, lhs.rank());
    let rhs_at = place(&config.rhs_batch, &rhs_free, nb + lhs_free.len(), &config.rhs_contracting, rhs.rank());
    let lhs_full = spread(lhs, &lhs_at, &full)?;
    let rhs_full = spread(rhs, &rhs_at, &full)?;
    products_summed(ops, lhs_full, rhs_full, nout)
}

/// `v` as a view of `full`: operand axis `a` becomes full axis `at[a]`, every other full
/// axis has stride 0.
fn spread<'a>(v: TensorView<'a>, at: &[Option<usize>], full: &[usize]) -> Result<TensorView<'a>> {
    let mut axes = vec![Vec::new(); full.len()];
    for (a, &target) in at.iter().enumerate() {
        let target = target.ok_or_else(|| Error::internal(OP, "an operand axis has no place in the contraction"))?;
        axes[target].push(a);
    }
    arrange(v, &Operand { source: Source::Input(0), axes, shape: full.to_vec() })
}

/// `sum over the trailing axes from nout of lhs * rhs` (both of one shape), halving the
/// largest axis until a block is small: halves of a result axis are joined, halves of a
/// summed axis added.
fn products_summed(ops: &dyn EinsumOps, lhs: TensorView<'_>, rhs: TensorView<'_>, nout: usize) -> Result<Tensor> {
    let full = lhs.shape().to_vec();
    let len = full.iter().try_fold(1usize, |a, &d| a.checked_mul(d)).unwrap_or(usize::MAX);
    let widest = (0..full.len()).max_by_key(|&a| full[a]).filter(|&a| full[a] > 1);
    let axis = match widest {
        Some(axis) if len > INTEGER_BLOCK => axis,
        _ => {
            let products = ops.binary(BinaryOp::Mul, lhs.into(), rhs.into())?;
            let summed: Vec<usize> = (nout..full.len()).collect();
            let out = ops.reduce(ReduceOp::Sum, (&products).into(), &summed)?;
            ops.recycle(products);
            return Ok(out);
        }
    };
    let half = full[axis] / 2;
    let first = products_summed(
        ops,
        lhs.clone().slice_axis(axis, 0, half, 1)?,
        rhs.clone().slice_axis(axis, 0, half, 1)?,
        nout,
    )?;
    let second = products_summed(
        ops,
        lhs.slice_axis(axis, half, full[axis], 1)?,
        rhs.slice_axis(axis, half, full[axis], 1)?,
        nout,
    )?;
    let joined = if axis < nout {
        ops.concatenate(&[(&first).into(), (&second).into()], axis)?
    } else {
        ops.add((&first).into(), (&second).into())?
    };
    ops.recycle(first);
    ops.recycle(second);
    Ok(joined)
}
