//! Contractions so small that planning them costs more than computing them: a direct
//! loop over the result's elements, reading both operands through their strides. No
//! analysis, no cache lookup, no packing; the summation order is fixed by the shapes, so
//! results do not depend on the thread count.

use strata_tensor::TypedView;
use strata_tensor::config::DotGeneralConfig;

use super::scalar::{ContractScalar, maybe_conj};

/// Largest number of multiply-adds (batch · m · n · k) routed here.
pub(crate) const TINY_CONTRACTION: usize = 512;

/// Multiply-adds of a validated contraction, saturating (an overflow is not tiny).
pub(crate) fn multiply_adds(lhs_shape: &[usize], config: &DotGeneralConfig, out_len: usize) -> usize {
    config.lhs_contracting.iter().fold(out_len, |acc, &d| acc.saturating_mul(lhs_shape[d]))
}

/// Writes `dot_general(op(lhs), op(rhs))` into the row-major `out` of the result's shape.
/// The config has been validated against the operands' shapes.
pub(crate) fn contract_tiny<T: ContractScalar>(
    lhs: &TypedView<'_, T>,
    rhs: &TypedView<'_, T>,
    config: &DotGeneralConfig,
    conj: [bool; 2],
    out: &mut [T],
) {
    let (ls, rs) = (lhs.strides(), rhs.strides());
    // Per result axis (batch, lhs free, rhs free): its extent and its stride in each operand.
    let mut axes: Vec<(usize, isize, isize)> = Vec::with_capacity(lhs.rank() + rhs.rank());
    axes.extend(config.lhs_batch.iter().zip(&config.rhs_batch).map(|(&l, &r)| (lhs.shape()[l], ls[l], rs[r])));
    axes.extend(config.lhs_free(lhs.rank()).into_iter().map(|d| (lhs.shape()[d], ls[d], 0)));
    axes.extend(config.rhs_free(rhs.rank()).into_iter().map(|d| (rhs.shape()[d], 0, rs[d])));
    // Offsets of every contracting index pair, in row-major order of the contracting axes.
    let mut pairs: Vec<(isize, isize)> = vec![(0, 0)];
    for (&l, &r) in config.lhs_contracting.iter().zip(&config.rhs_contracting) {
        let extent = lhs.shape()[l];
        pairs = pairs
            .iter()
            .flat_map(|&(a, b)| (0..extent as isize).map(move |i| (a + i * ls[l], b + i * rs[r])))
            .collect();
    }
    let (lb, rb) = (lhs.buffer(), rhs.buffer());
    let mut index = vec![0usize; axes.len()];
    let (mut lo, mut ro) = (lhs.offset() as isize, rhs.offset() as isize);
    for slot in out.iter_mut() {
        let mut acc = T::zero();
        for &(a, b) in &pairs {
            acc = acc + maybe_conj(lb[(lo + a) as usize], conj[0]) * maybe_conj(rb[(ro + b) as usize], conj[1]);
        }
        *slot = acc;
        // Advance the row-major result index, moving both operand offsets with it.
        for (axis, &(extent, sl, sr)) in axes.iter().enumerate().rev() {
            index[axis] += 1;
            lo += sl;
            ro += sr;
            if index[axis] < extent {
                break;
            }
            lo -= sl * extent as isize;
            ro -= sr * extent as isize;
            index[axis] = 0;
        }
    }
}
