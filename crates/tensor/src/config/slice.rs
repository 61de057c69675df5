//! Config of `slice`: a strided box of the operand, per axis `start..limit` by `strides`
//! (StableHLO `slice`: `start_indices`, `limit_indices`, `strides`).

use crate::error::{Error, Result};

const OP: &str = "slice";

/// Per-axis start (inclusive), limit (exclusive) and stride of a static slice.
///
/// Built from one range per axis, with optional steps:
///
/// ```
/// use strata_tensor::config::SliceConfig;
/// // numpy's a[1:4:2, 0:5]
/// let cfg = SliceConfig::ranges([1..4, 0..5]).step(0, 2);
/// assert_eq!(cfg.output_shape(&[4, 5]).unwrap(), vec![2, 5]);
/// ```
///
/// or from its three lists (StableHLO's `start_indices`, `limit_indices`, `strides`):
///
/// ```
/// use strata_tensor::config::SliceConfig;
/// let cfg = SliceConfig::new(vec![1, 0], vec![4, 5], vec![2, 1]);
/// assert_eq!(cfg.output_shape(&[4, 5]).unwrap(), vec![2, 5]);
/// let err = SliceConfig::new(vec![0], vec![3], vec![0]).validate(&[3]).unwrap_err();
/// assert_eq!(err.to_string(), "slice: strides[0] is 0; strides must be at least 1");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SliceConfig {
    /// First index kept along each axis.
    pub start: Vec<usize>,
    /// One past the last index that may be kept along each axis.
    pub limit: Vec<usize>,
    /// Step along each axis (at least 1).
    pub strides: Vec<usize>,
}

impl SliceConfig {
    /// A slice from its three per-axis lists.
    pub fn new(start: Vec<usize>, limit: Vec<usize>, strides: Vec<usize>) -> Self {
        SliceConfig { start, limit, strides }
    }

    /// A unit-stride slice keeping `range` along each axis, one range per axis in order
    /// (`SliceConfig::ranges([0..2, 1..3])` is numpy's `a[0:2, 1:3]`).
    pub fn ranges(ranges: impl IntoIterator<Item = std::ops::Range<usize>>) -> Self {
        let (start, limit): (Vec<usize>, Vec<usize>) = ranges.into_iter().map(|r| (r.start, r.end)).unzip();
        let strides = vec![1; start.len()];
        SliceConfig { start, limit, strides }
    }

    /// The same slice keeping every `step`-th index along `axis` (from its start). An
    /// axis beyond the config's rank is reported by `validate`, like every other
    /// inconsistency.
    pub fn step(mut self, axis: usize, step: usize) -> Self {
        if axis >= self.strides.len() {
            // Grow so that validate() reports the length mismatch against the operand.
            self.strides.resize(axis + 1, 1);
        }
        self.strides[axis] = step;
        self
    }

    /// A unit-stride slice `start..limit` on every axis.
    pub fn contiguous(start: Vec<usize>, limit: Vec<usize>) -> Self {
        let strides = vec![1; start.len()];
        SliceConfig { start, limit, strides }
    }

    /// Checks lengths against the rank, `start <= limit <= extent` and `stride >= 1`.
    pub fn validate(&self, operand_shape: &[usize]) -> Result<()> {
        let rank = operand_shape.len();
        for (what, list) in [("start", &self.start), ("limit", &self.limit), ("strides", &self.strides)] {
            if list.len() != rank {
                return Err(Error::invalid_argument(
                    OP,
                    format!("{what} {list:?} has {} entries, the operand has rank {rank}", list.len()),
                ));
            }
        }
        let per_axis = self.start.iter().zip(&self.limit).zip(&self.strides).zip(operand_shape);
        for (axis, (((&start, &limit), &stride), &dim)) in per_axis.enumerate() {
            if stride == 0 {
                return Err(Error::invalid_argument(OP, format!("strides[{axis}] is 0; strides must be at least 1")));
            }
            if start > limit || limit > dim {
                return Err(Error::invalid_argument(
                    OP,
                    format!(
                        "axis {axis}: need start <= limit <= extent, got start {start}, limit {limit}, extent {dim}"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Validates, then returns the output shape: `ceil((limit - start) / stride)` per axis.
    pub fn output_shape(&self, operand_shape: &[usize]) -> Result<Vec<usize>> {
        self.validate(operand_shape)?;
        Ok((0..operand_shape.len()).map(|a| (self.limit[a] - self.start[a]).div_ceil(self.strides[a])).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn shapes_and_errors() {
        assert_eq!(SliceConfig::new(vec![], vec![], vec![]).output_shape(&[]).unwrap(), Vec::<usize>::new());
        assert_eq!(SliceConfig::new(vec![2, 0], vec![2, 7], vec![1, 3]).output_shape(&[3, 7]).unwrap(), vec![0, 3]);
        let e = SliceConfig::contiguous(vec![0], vec![4]).validate(&[3]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains("limit 4, extent 3"), "{e}");
        let e = SliceConfig::contiguous(vec![2], vec![1]).validate(&[3]).unwrap_err();
        assert!(e.to_string().contains("start 2, limit 1"), "{e}");
        let e = SliceConfig::new(vec![0], vec![1], vec![1, 1]).validate(&[3]).unwrap_err();
        assert!(e.to_string().contains("strides [1, 1] has 2 entries"), "{e}");
        // The labelled form is the same config as the positional one.
        assert_eq!(SliceConfig::ranges([1..4, 0..5]).step(0, 2), SliceConfig::new(vec![1, 0], vec![4, 5], vec![2, 1]));
        let e = SliceConfig::ranges(std::iter::once(0..1)).step(1, 2).validate(&[3]).unwrap_err();
        assert!(e.to_string().contains("strides [1, 2] has 2 entries"), "{e}");
    }
}
