//! Contractions so small that planning them costs more than computing them: a direct
//! loop over the result's elements, reading both operands through their strides. No
//! analysis, no cache lookup, no packing; the summation order is fixed by the shapes, so
//! results do not depend on the thread count.
//!
//! The commonest tiny case, a matrix product of two compact rank-2 operands (each may
//! contract either of its axes), skips even the views: [`CompactMatrixProduct`] reads the
//! two slices directly. It sums in the same order as [`contract_tiny`] (contracting index
//! ascending from zero), so both give bit-identical results.

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
    // No result: nothing to sum. (Zero-size operands may have huge, strided contracting
    // axes that a non-empty result rules out.)
    if out.is_empty() {
        return;
    }
    // An empty contraction sums nothing: zeros, without walking operands that address
    // nothing (and whose strides may be anything).
    if config.lhs_contracting.iter().any(|&d| lhs.shape()[d] == 0) {
        out.fill(T::zero());
        return;
    }
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
        // Advance the row-major result index, moving both operand offsets with it. Past
        // the end of an axis the offsets leave the operands for a moment (by a stride
        // that may be huge on an extent-1 axis): wrapping steps, exact whenever they are
        // read.
        for (axis, &(extent, sl, sr)) in axes.iter().enumerate().rev() {
            index[axis] += 1;
            lo = lo.wrapping_add(sl);
            ro = ro.wrapping_add(sr);
            if index[axis] < extent {
                break;
            }
            lo = lo.wrapping_sub(sl.wrapping_mul(extent as isize));
            ro = ro.wrapping_sub(sr.wrapping_mul(extent as isize));
            index[axis] = 0;
        }
    }
}

/// A validated `dot_general` that is a plain matrix product of two rank-2 operands: no
/// batch axes, one contracting pair. Which axis each operand contracts is free, so the
/// four transposition variants are all covered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CompactMatrixProduct {
    m: usize,
    k: usize,
    n: usize,
    /// Element strides of (row i, contraction p) in the compact lhs.
    lhs: (usize, usize),
    /// Element strides of (contraction p, column j) in the compact rhs.
    rhs: (usize, usize),
}

impl CompactMatrixProduct {
    /// Recognises the pattern in a config already validated against these shapes.
    pub(crate) fn of(lhs_shape: &[usize], rhs_shape: &[usize], config: &DotGeneralConfig) -> Option<Self> {
        let ([l0, l1], [r0, r1]) = (<[usize; 2]>::try_from(lhs_shape).ok()?, <[usize; 2]>::try_from(rhs_shape).ok()?);
        if !config.lhs_batch.is_empty() || !config.rhs_batch.is_empty() {
            return None;
        }
        let (&[cl], &[cr]) = (config.lhs_contracting.as_slice(), config.rhs_contracting.as_slice()) else {
            return None;
        };
        // Row-major compact operands: [l0, l1] has strides (l1, 1), [r0, r1] has (r1, 1).
        let (m, k, lhs) = match cl {
            1 => (l0, l1, (l1, 1)),
            0 => (l1, l0, (1, l1)),
            _ => return None,
        };
        let (n, rhs) = match cr {
            0 => (r1, (r1, 1)),
            1 => (r0, (1, r1)),
            _ => return None,
        };
        Some(CompactMatrixProduct { m, k, n, lhs, rhs })
    }

    /// Multiply-adds of the product (saturating: an overflow is not tiny).
    pub(crate) fn multiply_adds(&self) -> usize {
        self.m.saturating_mul(self.n).saturating_mul(self.k)
    }

    /// The result's shape, `[m, n]`.
    pub(crate) fn out_shape(&self) -> [usize; 2] {
        [self.m, self.n]
    }

    /// Writes the `m × n` row-major product of the compact operands `a` and `b` into
    /// `out` (`m · n` elements).
    pub(crate) fn run<T: ContractScalar>(&self, a: &[T], b: &[T], [ca, cb]: [bool; 2], out: &mut [T]) {
        let Self { k, n, lhs: (si, sp), rhs: (tp, tj), .. } = *self;
        if n == 0 {
            return;
        }
        for (i, row) in out.chunks_exact_mut(n).enumerate() {
            for (j, slot) in row.iter_mut().enumerate() {
                let mut acc = T::zero();
                for p in 0..k {
                    acc = acc + maybe_conj(a[i * si + p * sp], ca) * maybe_conj(b[p * tp + j * tj], cb);
                }
                *slot = acc;
            }
        }
    }
}
