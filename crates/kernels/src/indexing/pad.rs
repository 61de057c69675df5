//! `pad`: the output is filled with the padding value, then the part of the operand that
//! survives cropping is copied onto a strided sub-grid of it (interior padding first, then
//! possibly negative low/high edges, as StableHLO defines).

use strata_tensor::config::PadConfig;
use strata_tensor::shape::row_major_strides;
use strata_tensor::{Error, Result, Scalar, Tensor, TensorRead, dispatch_dtype};

use super::copy::{Strided, copy_strided, fill};
use super::dynamic::check_same_dtype;
use crate::alloc::fill_output;
use crate::context::KernelContext;

const OP: &str = "pad";

/// Which operand indices along one axis land inside the output, and where.
#[derive(Clone, Copy, Debug)]
struct AxisPlacement {
    /// First operand index kept.
    first: usize,
    /// Number of operand indices kept.
    count: usize,
    /// Output index of the first kept element.
    at: usize,
    /// Output distance between kept neighbours (`interior + 1`).
    step: usize,
}

/// Operand index `i` lands at output index `low + i * (interior + 1)`; keep those in
/// `[0, out_extent)`.
fn place(dim: usize, low: i64, interior: i64, out_extent: usize) -> AxisPlacement {
    let (dim, low, step, out) = (dim as i128, i128::from(low), i128::from(interior) + 1, out_extent as i128);
    // Smallest i with low + i*step >= 0, and one past the largest with low + i*step < out.
    let first = if low >= 0 { 0 } else { (-low + step - 1) / step };
    let end = if out - low <= 0 { 0 } else { ((out - low + step - 1) / step).min(dim) };
    let count = (end - first).max(0);
    let first = first.min(dim);
    AxisPlacement {
        first: first as usize,
        count: count as usize,
        at: (low + first * step).max(0) as usize,
        step: step as usize,
    }
}

/// `operand` padded by `padding_value` (a rank-0 tensor of the operand's dtype) according to
/// `config`: `interior[a]` values between neighbours along axis `a`, then `low[a]`/`high[a]`
/// at the edges, where negative amounts crop.
///
/// ```
/// use strata_kernels::{KernelContext, indexing::pad};
/// use strata_tensor::{Tensor, config::PadConfig};
/// let t = Tensor::from_vec(vec![1, 2, 3], &[3]).unwrap();
/// let zero = Tensor::scalar(0);
/// let cfg = PadConfig::new(vec![-1], vec![2], vec![1]); // [1,0,2,0,3] -> crop 1, add 2
/// let out = pad(&KernelContext::sequential(), &(&t).into(), &(&zero).into(), &cfg).unwrap();
/// assert_eq!(out.as_typed::<i32>().unwrap().data(), &[0, 2, 0, 3, 0, 0]);
/// ```
pub fn pad(
    ctx: &KernelContext<'_>,
    operand: &TensorRead<'_>,
    padding_value: &TensorRead<'_>,
    config: &PadConfig,
) -> Result<Tensor> {
    check_same_dtype(OP, "padding_value", operand.dtype(), padding_value.dtype())?;
    if padding_value.rank() != 0 {
        return Err(Error::invalid_argument(
            OP,
            format!("padding_value has shape {:?}; it must be rank 0", padding_value.shape()),
        ));
    }
    let out_shape = config.output_shape(operand.shape())?;
    let placements: Vec<AxisPlacement> = (0..operand.rank())
        .map(|a| place(operand.shape()[a], config.low[a], config.interior[a], out_shape[a]))
        .collect();
    dispatch_dtype!(operand.dtype(), T => run::<T>(ctx, operand, padding_value, &out_shape, &placements))
}

fn run<T: Scalar>(
    ctx: &KernelContext<'_>,
    operand: &TensorRead<'_>,
    padding_value: &TensorRead<'_>,
    out_shape: &[usize],
    placements: &[AxisPlacement],
) -> Result<Tensor> {
    let value_view = padding_value.typed_view::<T>().map_err(|e| e.in_op(OP))?;
    let value = value_view.buffer()[value_view.offset()];
    let view = operand.typed_view::<T>().map_err(|e| e.in_op(OP))?;
    let kept: Vec<usize> = placements.iter().map(|p| p.count).collect();
    let out = fill_output(ctx, OP, out_shape, |out: &mut [T]| {
        fill(ctx, out, value);
        // Offsets only when something is copied, into an output that exists: then every
        // product below addresses an element of the (valid) operand view or of the
        // output, so none overflows. An axis keeping a single element never steps,
        // whatever its (possibly huge) interior.
        if kept.contains(&0) || out.is_empty() {
            return;
        }
        let out_strides = row_major_strides(out_shape);
        let src_at = view.offset() as isize
            + placements.iter().zip(view.strides()).map(|(p, &s)| p.first as isize * s).sum::<isize>();
        let dst_at: isize = placements.iter().zip(&out_strides).map(|(p, &s)| p.at as isize * s).sum();
        let dst_strides: Vec<isize> = placements
            .iter()
            .zip(&out_strides)
            .map(|(p, &s)| if p.count > 1 { p.step as isize * s } else { 0 })
            .collect();
        let from = Strided { offset: src_at, strides: view.strides() };
        copy_strided(&kept, view.buffer(), from, out, Strided { offset: dst_at, strides: &dst_strides });
    })?;
    Ok(out.into())
}
