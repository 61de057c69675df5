//! Config of `scatter`, with StableHLO's dimension numbers and semantics, plus the combiner
//! that merges an update into the operand element it lands on.
//!
//! Each scatter position of `updates` (its axes not listed in `update_window_dims`) pairs
//! with one start vector of `scatter_indices`; the start vector, scattered into operand
//! axes by `scatter_dims_to_operand_dims`, places that position's update window in the
//! operand. As in XLA, a window that would not lie entirely inside the operand is skipped
//! as a whole (start indices are not clamped).

use std::fmt;

use super::gather::{batch_shape, check_batching_pairs, check_index_map, check_sorted_dims, index_vector_len};
use crate::dtype::DType;
use crate::error::{Error, Result};

const OP: &str = "scatter";

/// How an update combines with the operand element it lands on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ScatterCombiner {
    /// The update replaces the element.
    #[default]
    Replace,
    /// Element plus update (wrapping for integers); not defined for bool.
    Add,
    /// Element times update (wrapping for integers); not defined for bool.
    Multiply,
    /// The larger of the two, with `lax.max`'s rules (float NaN propagates; complex is
    /// XLA's lexicographic select; bool is or).
    Max,
    /// The smaller of the two, with `lax.min`'s rules (bool is and).
    Min,
}

impl ScatterCombiner {
    /// True when the combiner is defined on `dtype`: replace, max and min on every dtype;
    /// add and multiply on numeric dtypes only (jax.lax.scatter_add and scatter_mul reject
    /// bool, as lax.add and lax.mul do).
    ///
    /// ```
    /// use strata_tensor::{DType, config::ScatterCombiner};
    /// assert!(ScatterCombiner::Max.supports(DType::Bool));
    /// assert!(!ScatterCombiner::Add.supports(DType::Bool));
    /// assert!(ScatterCombiner::Multiply.supports(DType::C64));
    /// ```
    pub const fn supports(self, dtype: DType) -> bool {
        match self {
            ScatterCombiner::Add | ScatterCombiner::Multiply => !dtype.is_bool(),
            ScatterCombiner::Replace | ScatterCombiner::Max | ScatterCombiner::Min => true,
        }
    }

    /// Errors with `Unsupported` unless the combiner is defined on `dtype`.
    pub fn validate(self, dtype: DType) -> Result<()> {
        if self.supports(dtype) {
            Ok(())
        } else {
            Err(Error::unsupported(OP, format!("combiner {self} is not defined for dtype {dtype}")))
        }
    }
}

impl fmt::Display for ScatterCombiner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ScatterCombiner::Replace => "replace",
            ScatterCombiner::Add => "add",
            ScatterCombiner::Multiply => "multiply",
            ScatterCombiner::Max => "max",
            ScatterCombiner::Min => "min",
        })
    }
}

/// StableHLO `scatter` dimension numbers plus the combiner (the names of `jax.lax`).
///
/// `input_batching_dims`/`scatter_indices_batching_dims` (StableHLO's batched scatter) are
/// supported: each operand batching axis is indexed by the scatter position along the
/// paired indices axis and, like an inserted axis, has window extent 1.
///
/// ```
/// use strata_tensor::config::{ScatterCombiner, ScatterConfig};
/// // Add rows of updates [4, 3] into rows of a [5, 3] operand at 4 row indices ([4, 1]).
/// let cfg = ScatterConfig::rows(2, ScatterCombiner::Add);
/// assert!(cfg.validate(&[5, 3], &[4, 1], &[4, 3]).is_ok());
/// // A window may be narrower than the operand, but every update position needs its index.
/// assert!(cfg.validate(&[5, 3], &[4, 1], &[4, 2]).is_ok());
/// let err = cfg.validate(&[5, 3], &[4, 1], &[3, 3]).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "scatter: updates have shape [3, 3], expected [4, 3] for operand [5, 3] and indices [4, 1]"
/// );
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ScatterConfig {
    /// Updates axes that span the window, ascending.
    pub update_window_dims: Vec<usize>,
    /// Operand axes of window extent 1 with no updates axis, ascending.
    pub inserted_window_dims: Vec<usize>,
    /// Operand axes indexed by the scatter position of the paired indices axis, ascending.
    pub input_batching_dims: Vec<usize>,
    /// Indices axes paired with `input_batching_dims`.
    pub scatter_indices_batching_dims: Vec<usize>,
    /// `scatter_dims_to_operand_dims[k]` is the operand axis that component `k` of a start
    /// vector indexes.
    pub scatter_dims_to_operand_dims: Vec<usize>,
    /// The indices axis holding the start vectors; equal to the indices' rank for an
    /// implicit trailing axis of extent 1.
    pub index_vector_dim: usize,
    /// How updates merge into the operand.
    pub combiner: ScatterCombiner,
}

impl ScatterConfig {
    /// The common "update rows" scatter: indices `[..., 1]` select rows (axis 0) of a rank-2
    /// operand; updates are `[..., row_len]`. `index_vector_dim` is the indices' last axis.
    pub fn rows(indices_rank: usize, combiner: ScatterCombiner) -> Self {
        ScatterConfig {
            update_window_dims: vec![indices_rank.saturating_sub(1)],
            inserted_window_dims: vec![0],
            scatter_dims_to_operand_dims: vec![0],
            index_vector_dim: indices_rank.saturating_sub(1),
            combiner,
            ..ScatterConfig::default()
        }
    }

    /// The operand axes that carry a window axis of the updates (neither inserted nor
    /// batching), ascending; `update_window_dims[k]` spans operand axis `window_axes[k]`.
    pub fn window_axes(&self, operand_rank: usize) -> Vec<usize> {
        (0..operand_rank)
            .filter(|d| !self.inserted_window_dims.contains(d) && !self.input_batching_dims.contains(d))
            .collect()
    }

    /// The shape `updates` must have for these operand and indices shapes (validating
    /// everything else first).
    pub fn updates_shape(&self, operand_shape: &[usize], indices_shape: &[usize]) -> Result<Vec<usize>> {
        let rank = operand_shape.len();
        let index_len = index_vector_len(OP, self.index_vector_dim, indices_shape)?;
        check_sorted_dims(OP, "inserted_window_dims", &self.inserted_window_dims, rank)?;
        check_sorted_dims(OP, "input_batching_dims", &self.input_batching_dims, rank)?;
        for &d in &self.inserted_window_dims {
            if self.input_batching_dims.contains(&d) {
                return Err(Error::invalid_argument(
                    OP,
                    format!("operand axis {d} is both in inserted_window_dims and input_batching_dims"),
                ));
            }
        }
        check_batching_pairs(
            OP,
            ("input_batching_dims", &self.input_batching_dims, operand_shape),
            ("scatter_indices_batching_dims", &self.scatter_indices_batching_dims, indices_shape),
            self.index_vector_dim,
        )?;
        check_index_map(
            OP,
            "scatter_dims_to_operand_dims",
            &self.scatter_dims_to_operand_dims,
            index_len,
            rank,
            &self.input_batching_dims,
        )?;
        let window_axes = self.window_axes(rank);
        if self.update_window_dims.len() != window_axes.len() {
            return Err(Error::invalid_argument(
                OP,
                format!(
                    "update_window_dims {:?} has {} entries, but the operand has {} axes that are neither inserted nor batching",
                    self.update_window_dims,
                    self.update_window_dims.len(),
                    window_axes.len()
                ),
            ));
        }
        let scatter_shape = batch_shape(indices_shape, self.index_vector_dim);
        let updates_rank = scatter_shape.len() + window_axes.len();
        check_sorted_dims(OP, "update_window_dims", &self.update_window_dims, updates_rank)?;
        let mut scatter = scatter_shape.iter();
        let mut window = window_axes.iter();
        (0..updates_rank)
            .map(|d| {
                // INVARIANT: update_window_dims is sorted, unique, in range and as long as
                // window_axes, so each iterator yields exactly as often as needed.
                if self.update_window_dims.contains(&d) {
                    window.next().map(|&a| operand_shape[a])
                } else {
                    scatter.next().copied()
                }
            })
            .collect::<Option<Vec<usize>>>()
            .ok_or_else(|| Error::internal(OP, "updates axis bookkeeping went out of step"))
    }

    /// Checks the config against the three shapes. The updates' window extents may be
    /// smaller than the operand's (a window is a sub-block); every other extent must equal
    /// the one [`updates_shape`](Self::updates_shape) gives.
    pub fn validate(&self, operand_shape: &[usize], indices_shape: &[usize], updates_shape: &[usize]) -> Result<()> {
        let full = self.updates_shape(operand_shape, indices_shape)?;
        let mismatch = || {
            let mut expected = full.clone();
            for &d in &self.update_window_dims {
                if let (Some(e), Some(&u)) = (expected.get_mut(d), updates_shape.get(d)) {
                    // Show the window extents the caller chose when they fit.
                    if u <= *e {
                        *e = u;
                    }
                }
            }
            Error::shape_mismatch(
                OP,
                format!(
                    "updates have shape {updates_shape:?}, expected {expected:?} for operand {operand_shape:?} and indices {indices_shape:?}"
                ),
            )
        };
        if updates_shape.len() != full.len() {
            return Err(mismatch());
        }
        for (d, (&u, &f)) in updates_shape.iter().zip(&full).enumerate() {
            let ok = if self.update_window_dims.contains(&d) { u <= f } else { u == f };
            if !ok {
                return Err(mismatch());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn updates_shape_interleaves_scatter_and_window_axes() {
        // operand [4, 6, 5]; windows over axes 1 and 2 (axis 0 inserted); indices [3, 1].
        let cfg = ScatterConfig {
            update_window_dims: vec![0, 2],
            inserted_window_dims: vec![0],
            scatter_dims_to_operand_dims: vec![0],
            index_vector_dim: 1,
            ..ScatterConfig::default()
        };
        assert_eq!(cfg.updates_shape(&[4, 6, 5], &[3, 1]).unwrap(), vec![6, 3, 5]);
        assert!(cfg.validate(&[4, 6, 5], &[3, 1], &[2, 3, 5]).is_ok());
        let e = cfg.validate(&[4, 6, 5], &[3, 1], &[7, 3, 5]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
        let e = cfg.validate(&[4, 6, 5], &[3, 1], &[6, 2, 5]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
        assert!(e.to_string().contains("expected [6, 3, 5]"), "{e}");
        let e = cfg.validate(&[4, 6, 5], &[3, 1], &[6, 3]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    }

    #[test]
    fn bad_configs_name_the_offending_value() {
        let cfg = ScatterConfig::rows(2, ScatterCombiner::Add);
        let e = ScatterConfig { index_vector_dim: 3, ..cfg.clone() }.validate(&[5, 3], &[4, 1], &[4, 3]).unwrap_err();
        assert!(e.to_string().contains("index_vector_dim 3"), "{e}");
        let e = ScatterConfig { scatter_dims_to_operand_dims: vec![2], ..cfg.clone() }
            .validate(&[5, 3], &[4, 1], &[4, 3])
            .unwrap_err();
        assert!(e.to_string().contains("contains 2"), "{e}");
        // lax: the index-vector length must equal len(scatter_dims_to_operand_dims).
        let e = ScatterConfig { scatter_dims_to_operand_dims: vec![0, 1], ..cfg.clone() }
            .validate(&[5, 3], &[4, 1], &[4, 3])
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
        assert!(e.to_string().contains("has 2 entries, but index vectors have 1 components"), "{e}");
        let e = ScatterConfig { inserted_window_dims: vec![], ..cfg.clone() }
            .validate(&[5, 3], &[4, 1], &[4, 3])
            .unwrap_err();
        assert!(e.to_string().contains("update_window_dims [1] has 1 entries"), "{e}");
        let e = ScatterConfig { update_window_dims: vec![2], ..cfg.clone() }
            .validate(&[5, 3], &[4, 1], &[4, 3])
            .unwrap_err();
        assert!(e.to_string().contains("out of range for rank 2"), "{e}");
        let e = ScatterConfig { input_batching_dims: vec![1], scatter_indices_batching_dims: vec![0], ..cfg }
            .validate(&[5, 3], &[4, 1], &[4, 3])
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
        assert!(e.to_string().contains("operand batching axis 1 has extent 3"), "{e}");
    }

    #[test]
    fn bool_supports_only_replace_max_min() {
        for d in DType::ALL {
            assert_eq!(ScatterCombiner::Add.supports(d), !d.is_bool(), "{d}");
            assert_eq!(ScatterCombiner::Multiply.supports(d), !d.is_bool(), "{d}");
            assert!(ScatterCombiner::Replace.supports(d) && ScatterCombiner::Max.supports(d));
        }
        let e = ScatterCombiner::Add.validate(DType::Bool).unwrap_err();
        assert_eq!((e.kind(), e.op()), (ErrorKind::Unsupported, "scatter"));
        assert!(e.to_string().contains("combiner add is not defined for dtype bool"), "{e}");
    }

    #[test]
    fn combiner_names() {
        let names: Vec<String> = [
            ScatterCombiner::Replace,
            ScatterCombiner::Add,
            ScatterCombiner::Multiply,
            ScatterCombiner::Max,
            ScatterCombiner::Min,
        ]
        .iter()
        .map(|c| c.to_string())
        .collect();
        assert_eq!(names, ["replace", "add", "multiply", "max", "min"]);
    }
}
