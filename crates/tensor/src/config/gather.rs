//! Config of `gather`, with StableHLO's dimension numbers and semantics.
//!
//! Every entry of the output is one element of one *window*: each batch position of
//! `start_indices` (every axis except `index_vector_dim`) names a start vector; the start
//! vector, scattered into operand axes by `start_index_map` and clamped so that the window
//! fits (as XLA does), selects a window of extents `slice_sizes`. The output holds the batch
//! axes in the positions not listed in `offset_dims`, and the window axes that are not
//! collapsed (nor batching axes) at `offset_dims`.

use crate::dtype::DType;
use crate::error::{Error, Result};

const OP: &str = "gather";

/// StableHLO `gather` dimension numbers plus the slice sizes (the names of `jax.lax`).
///
/// `operand_batching_dims`/`start_indices_batching_dims` (StableHLO's batched gather) are
/// supported: each operand batching axis is indexed by the batch position along the paired
/// indices axis and, like a collapsed axis, has slice size 1 and no output axis.
///
/// ```
/// use strata_tensor::config::GatherConfig;
/// // Take whole rows of a [5, 3] matrix at 4 row indices held as a [4, 1] tensor.
/// let cfg = GatherConfig::rows(2, 3);
/// assert_eq!(cfg.output_shape(&[5, 3], &[4, 1]).unwrap(), vec![4, 3]);
/// let err = cfg.output_shape(&[5, 2], &[4, 1]).unwrap_err();
/// assert_eq!(err.to_string(), "gather: slice_sizes[1] = 3 exceeds operand extent 2 of axis 1");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct GatherConfig {
    /// Output axes that hold the (non-collapsed) window axes, ascending.
    pub offset_dims: Vec<usize>,
    /// Operand axes of slice size 1 dropped from the output, ascending.
    pub collapsed_slice_dims: Vec<usize>,
    /// Operand axes indexed by the batch position of the paired indices axis, ascending.
    pub operand_batching_dims: Vec<usize>,
    /// Indices axes paired with `operand_batching_dims`.
    pub start_indices_batching_dims: Vec<usize>,
    /// `start_index_map[k]` is the operand axis that component `k` of a start vector indexes.
    pub start_index_map: Vec<usize>,
    /// The indices axis holding the start vectors; equal to the indices' rank for an
    /// implicit trailing axis of extent 1.
    pub index_vector_dim: usize,
    /// Window extent along every operand axis.
    pub slice_sizes: Vec<usize>,
}

impl GatherConfig {
    /// numpy's `take(operand, indices, axis)` (`jnp.take`): every entry of an integer
    /// tensor of shape `indices_shape` picks one index along `axis` of an operand of shape
    /// `operand_shape`; the output has shape `operand_shape[..axis] ++ indices_shape ++
    /// operand_shape[axis + 1..]`. Out-of-range indices are clamped, as gather does.
    ///
    /// ```
    /// use strata_tensor::config::GatherConfig;
    /// // Rows 2, 0, 2 of a [4, 3] matrix, indices of shape [3]: output [3, 3].
    /// let rows = GatherConfig::take(&[4, 3], &[3], 0);
    /// assert_eq!(rows.output_shape(&[4, 3], &[3]).unwrap(), vec![3, 3]);
    /// // Columns picked by a [2, 2] index tensor: output [4, 2, 2].
    /// let cols = GatherConfig::take(&[4, 3], &[2, 2], 1);
    /// assert_eq!(cols.output_shape(&[4, 3], &[2, 2]).unwrap(), vec![4, 2, 2]);
    /// ```
    ///
    /// An `axis` beyond the operand's rank gives a config that `validate` rejects.
    pub fn take(operand_shape: &[usize], indices_shape: &[usize], axis: usize) -> Self {
        let rank = operand_shape.len();
        let batch = indices_shape.len();
        let mut slice_sizes = operand_shape.to_vec();
        if let Some(size) = slice_sizes.get_mut(axis) {
            *size = 1;
        }
        // Output axes: operand axes before `axis`, then the index axes, then the rest.
        let offset_dims = (0..rank.saturating_sub(1)).map(|d| if d < axis { d } else { d + batch }).collect();
        GatherConfig {
            offset_dims,
            collapsed_slice_dims: vec![axis],
            start_index_map: vec![axis],
            index_vector_dim: batch,
            slice_sizes,
            ..GatherConfig::default()
        }
    }

    /// The common "take rows" gather: `indices` of shape `[..., 1]` select rows (axis 0) of
    /// an operand of rank 2 whose rows have `row_len` elements; output `[..., row_len]`.
    /// `index_vector_dim` is the indices' last axis (`indices_rank - 1`). Prefer
    /// [`GatherConfig::take`], whose arguments say what they are.
    pub fn rows(indices_rank: usize, row_len: usize) -> Self {
        GatherConfig {
            offset_dims: vec![indices_rank.saturating_sub(1)],
            collapsed_slice_dims: vec![0],
            start_index_map: vec![0],
            index_vector_dim: indices_rank.saturating_sub(1),
            slice_sizes: vec![1, row_len],
            ..GatherConfig::default()
        }
    }

    /// Checks the config against the operand and indices shapes (StableHLO's constraints).
    pub fn validate(&self, operand_shape: &[usize], indices_shape: &[usize]) -> Result<()> {
        self.output_shape(operand_shape, indices_shape).map(|_| ())
    }

    /// Validates, then returns the output shape.
    pub fn output_shape(&self, operand_shape: &[usize], indices_shape: &[usize]) -> Result<Vec<usize>> {
        let rank = operand_shape.len();
        let index_len = index_vector_len(OP, self.index_vector_dim, indices_shape)?;
        if self.slice_sizes.len() != rank {
            return Err(Error::invalid_argument(
                OP,
                format!(
                    "slice_sizes {:?} has {} entries, the operand has rank {rank}",
                    self.slice_sizes,
                    self.slice_sizes.len()
                ),
            ));
        }
        for (axis, (&size, &dim)) in self.slice_sizes.iter().zip(operand_shape).enumerate() {
            if size > dim {
                return Err(Error::invalid_argument(
                    OP,
                    format!("slice_sizes[{axis}] = {size} exceeds operand extent {dim} of axis {axis}"),
                ));
            }
        }
        check_sorted_dims(OP, "collapsed_slice_dims", &self.collapsed_slice_dims, rank)?;
        check_sorted_dims(OP, "operand_batching_dims", &self.operand_batching_dims, rank)?;
        for &d in &self.collapsed_slice_dims {
            if self.operand_batching_dims.contains(&d) {
                return Err(Error::invalid_argument(
                    OP,
                    format!("operand axis {d} is both in collapsed_slice_dims and operand_batching_dims"),
                ));
            }
        }
        for (what, dims) in [
            ("collapsed_slice_dims", &self.collapsed_slice_dims),
            ("operand_batching_dims", &self.operand_batching_dims),
        ] {
            for &d in dims {
                if self.slice_sizes[d] != 1 {
                    return Err(Error::invalid_argument(
                        OP,
                        format!("{what} contains axis {d}, whose slice size is {} (must be 1)", self.slice_sizes[d]),
                    ));
                }
            }
        }
        check_batching_pairs(
            OP,
            ("operand_batching_dims", &self.operand_batching_dims, operand_shape),
            ("start_indices_batching_dims", &self.start_indices_batching_dims, indices_shape),
            self.index_vector_dim,
        )?;
        check_index_map(OP, "start_index_map", &self.start_index_map, index_len, rank, &self.operand_batching_dims)?;

        let window_axes: Vec<usize> = (0..rank)
            .filter(|d| !self.collapsed_slice_dims.contains(d) && !self.operand_batching_dims.contains(d))
            .collect();
        if self.offset_dims.len() != window_axes.len() {
            return Err(Error::invalid_argument(
                OP,
                format!(
                    "offset_dims {:?} has {} entries, but the operand has {} axes that are neither collapsed nor batching",
                    self.offset_dims,
                    self.offset_dims.len(),
                    window_axes.len()
                ),
            ));
        }
        let batch_shape = batch_shape(indices_shape, self.index_vector_dim);
        let out_rank = batch_shape.len() + self.offset_dims.len();
        check_sorted_dims(OP, "offset_dims", &self.offset_dims, out_rank)?;
        let mut batch = batch_shape.iter();
        let mut window = window_axes.iter();
        let shape = (0..out_rank)
            .map(|d| {
                // INVARIANT: offset_dims is sorted, unique and in range, and its length plus the
                // batch rank is out_rank, so each iterator yields exactly as often as needed.
                if self.offset_dims.contains(&d) {
                    window.next().map(|&a| self.slice_sizes[a])
                } else {
                    batch.next().copied()
                }
            })
            .collect::<Option<Vec<usize>>>()
            .ok_or_else(|| Error::internal(OP, "output axis bookkeeping went out of step"))?;
        Ok(shape)
    }
}

/// Errors unless `dtype` can hold indices (`int32` or `int64`), naming `op` and `what`.
///
/// ```
/// use strata_tensor::{DType, config::check_index_dtype};
/// assert!(check_index_dtype("gather", "start_indices", DType::I64).is_ok());
/// let err = check_index_dtype("gather", "start_indices", DType::F32).unwrap_err();
/// assert_eq!(err.to_string(), "gather: start_indices has dtype float32; indices must be int32 or int64");
/// ```
pub fn check_index_dtype(op: &'static str, what: &str, dtype: DType) -> Result<()> {
    match dtype {
        DType::I32 | DType::I64 => Ok(()),
        other => Err(Error::dtype_mismatch(op, format!("{what} has dtype {other}; indices must be int32 or int64"))),
    }
}

/// Number of components of one index vector: the extent of `index_vector_dim`, or 1 when it
/// equals the indices' rank (implicit trailing axis). Errors when it is beyond the rank.
pub(crate) fn index_vector_len(op: &'static str, index_vector_dim: usize, indices_shape: &[usize]) -> Result<usize> {
    let rank = indices_shape.len();
    match index_vector_dim.cmp(&rank) {
        std::cmp::Ordering::Less => Ok(indices_shape[index_vector_dim]),
        std::cmp::Ordering::Equal => Ok(1),
        std::cmp::Ordering::Greater => Err(Error::invalid_argument(
            op,
            format!("index_vector_dim {index_vector_dim} is out of range for indices of rank {rank} (at most {rank})"),
        )),
    }
}

/// The indices' shape without `index_vector_dim`: the batch (scatter) axes.
pub(crate) fn batch_shape(indices_shape: &[usize], index_vector_dim: usize) -> Vec<usize> {
    indices_shape.iter().enumerate().filter(|&(d, _)| d != index_vector_dim).map(|(_, &e)| e).collect()
}

/// Errors unless `dims` is strictly ascending (hence unique) with every entry below `bound`.
pub(crate) fn check_sorted_dims(op: &'static str, what: &str, dims: &[usize], bound: usize) -> Result<()> {
    for &d in dims {
        if d >= bound {
            return Err(Error::invalid_argument(
                op,
                format!("{what} {dims:?} contains {d}, out of range for rank {bound}"),
            ));
        }
    }
    if let Some(w) = dims.windows(2).find(|w| w[0] >= w[1]) {
        return Err(Error::invalid_argument(
            op,
            format!("{what} {dims:?} must be strictly ascending ({} then {})", w[0], w[1]),
        ));
    }
    Ok(())
}

/// Checks an index map (`start_index_map` / `scatter_dims_to_operand_dims`): one entry per
/// index-vector component, unique, in range, and naming no operand batching axis.
pub(crate) fn check_index_map(
    op: &'static str,
    what: &str,
    map: &[usize],
    index_len: usize,
    operand_rank: usize,
    batching: &[usize],
) -> Result<()> {
    if map.len() != index_len {
        return Err(Error::invalid_argument(
            op,
            format!("{what} {map:?} has {} entries, but index vectors have {index_len} components", map.len()),
        ));
    }
    let mut seen = vec![false; operand_rank];
    for &d in map {
        if d >= operand_rank {
            return Err(Error::invalid_argument(
                op,
                format!("{what} {map:?} contains {d}, out of range for operand rank {operand_rank}"),
            ));
        }
        if std::mem::replace(&mut seen[d], true) {
            return Err(Error::invalid_argument(op, format!("{what} {map:?} lists operand axis {d} twice")));
        }
        if batching.contains(&d) {
            return Err(Error::invalid_argument(op, format!("{what} {map:?} contains batching axis {d}")));
        }
    }
    Ok(())
}

/// Checks paired batching axes: equal counts, operand side sorted and in range, indices
/// side unique, in range and not the index vector axis, paired extents equal.
pub(crate) fn check_batching_pairs(
    op: &'static str,
    (operand_what, operand_dims, operand_shape): (&str, &[usize], &[usize]),
    (indices_what, indices_dims, indices_shape): (&str, &[usize], &[usize]),
    index_vector_dim: usize,
) -> Result<()> {
    if operand_dims.len() != indices_dims.len() {
        return Err(Error::invalid_argument(
            op,
            format!("{operand_what} {operand_dims:?} and {indices_what} {indices_dims:?} must have the same length"),
        ));
    }
    let mut seen = vec![false; indices_shape.len()];
    for (&o, &i) in operand_dims.iter().zip(indices_dims) {
        if i >= indices_shape.len() {
            return Err(Error::invalid_argument(
                op,
                format!(
                    "{indices_what} {indices_dims:?} contains {i}, out of range for indices rank {}",
                    indices_shape.len()
                ),
            ));
        }
        if i == index_vector_dim {
            return Err(Error::invalid_argument(
                op,
                format!("{indices_what} {indices_dims:?} contains index_vector_dim {index_vector_dim}"),
            ));
        }
        if std::mem::replace(&mut seen[i], true) {
            return Err(Error::invalid_argument(op, format!("{indices_what} {indices_dims:?} lists axis {i} twice")));
        }
        if operand_shape[o] != indices_shape[i] {
            return Err(Error::shape_mismatch(
                op,
                format!(
                    "operand batching axis {o} has extent {}, indices batching axis {i} has extent {}",
                    operand_shape[o], indices_shape[i]
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn take_columns() -> GatherConfig {
        // operand [3, 5], indices [2] (implicit index vector): columns 2 and 4 of every row.
        GatherConfig {
            offset_dims: vec![0],
            collapsed_slice_dims: vec![1],
            start_index_map: vec![1],
            index_vector_dim: 1,
            slice_sizes: vec![3, 1],
            ..GatherConfig::default()
        }
    }

    #[test]
    fn output_shape_places_batch_and_offset_axes() {
        assert_eq!(take_columns().output_shape(&[3, 5], &[2]).unwrap(), vec![3, 2]);
        // Windows of 2x2 at [4, 2] start vectors with the index vector in axis 0.
        let cfg = GatherConfig {
            offset_dims: vec![1, 3],
            start_index_map: vec![0, 1],
            index_vector_dim: 0,
            slice_sizes: vec![2, 2],
            ..GatherConfig::default()
        };
        assert_eq!(cfg.output_shape(&[6, 7], &[2, 4, 3]).unwrap(), vec![4, 2, 3, 2]);
        // Batched gather: operand axis 0 is paired with indices axis 0.
        let cfg = GatherConfig {
            offset_dims: vec![2],
            collapsed_slice_dims: vec![1],
            operand_batching_dims: vec![0],
            start_indices_batching_dims: vec![0],
            start_index_map: vec![1],
            index_vector_dim: 2,
            slice_sizes: vec![1, 1, 4],
        };
        assert_eq!(cfg.output_shape(&[3, 9, 4], &[3, 5]).unwrap(), vec![3, 5, 4]);
    }

    #[test]
    fn bad_configs_name_the_offending_value() {
        let c = take_columns();
        let e = GatherConfig { index_vector_dim: 2, ..c.clone() }.validate(&[3, 5], &[2]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains("index_vector_dim 2"), "{e}");
        let e = GatherConfig { slice_sizes: vec![4, 1], ..c.clone() }.validate(&[3, 5], &[2]).unwrap_err();
        assert!(e.to_string().contains("slice_sizes[0] = 4"), "{e}");
        let e = GatherConfig { slice_sizes: vec![3], ..c.clone() }.validate(&[3, 5], &[2]).unwrap_err();
        assert!(e.to_string().contains("slice_sizes [3]"), "{e}");
        let e = GatherConfig { slice_sizes: vec![3, 2], ..c.clone() }.validate(&[3, 5], &[2]).unwrap_err();
        assert!(e.to_string().contains("slice size is 2"), "{e}");
        let e = GatherConfig { start_index_map: vec![1, 0], ..c.clone() }.validate(&[3, 5], &[2]).unwrap_err();
        assert!(e.to_string().contains("start_index_map [1, 0] has 2 entries"), "{e}");
        let e = GatherConfig { start_index_map: vec![2], ..c.clone() }.validate(&[3, 5], &[2]).unwrap_err();
        assert!(e.to_string().contains("contains 2"), "{e}");
        let e = GatherConfig { offset_dims: vec![], ..c.clone() }.validate(&[3, 5], &[2]).unwrap_err();
        assert!(e.to_string().contains("offset_dims [] has 0 entries"), "{e}");
        let e = GatherConfig { offset_dims: vec![2], ..c.clone() }.validate(&[3, 5], &[2]).unwrap_err();
        assert!(e.to_string().contains("out of range for rank 2"), "{e}");
        let e = GatherConfig { collapsed_slice_dims: vec![1, 1], ..c.clone() }.validate(&[3, 5], &[2]).unwrap_err();
        assert!(e.to_string().contains("strictly ascending"), "{e}");
        let e = GatherConfig { operand_batching_dims: vec![0], ..c.clone() }.validate(&[3, 5], &[2]).unwrap_err();
        assert!(e.to_string().contains("operand_batching_dims contains axis 0, whose slice size is 3"), "{e}");
    }

    #[test]
    fn batching_pairs_must_match() {
        let cfg = GatherConfig {
            offset_dims: vec![],
            collapsed_slice_dims: vec![1],
            operand_batching_dims: vec![0],
            start_indices_batching_dims: vec![0],
            start_index_map: vec![1],
            index_vector_dim: 1,
            slice_sizes: vec![1, 1],
        };
        assert_eq!(cfg.output_shape(&[3, 4], &[3]).unwrap(), vec![3]);
        let e = cfg.validate(&[2, 4], &[3]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
        let e = GatherConfig { start_index_map: vec![0], ..cfg.clone() }.validate(&[3, 4], &[3]).unwrap_err();
        assert!(e.to_string().contains("batching axis 0"), "{e}");
        let e =
            GatherConfig { start_indices_batching_dims: vec![], ..cfg.clone() }.validate(&[3, 4], &[3]).unwrap_err();
        assert!(e.to_string().contains("same length"), "{e}");
        let e = GatherConfig { start_indices_batching_dims: vec![1], ..cfg }.validate(&[3, 4], &[3, 1]).unwrap_err();
        assert!(e.to_string().contains("index_vector_dim"), "{e}");
    }

    #[test]
    fn take_matches_numpy_shapes() {
        // numpy: np.take(np.zeros((2, 3, 4)), np.zeros((5, 6), int), axis).shape
        for (axis, want) in [(0, vec![5, 6, 3, 4]), (1, vec![2, 5, 6, 4]), (2, vec![2, 3, 5, 6])] {
            let cfg = GatherConfig::take(&[2, 3, 4], &[5, 6], axis);
            assert_eq!(cfg.output_shape(&[2, 3, 4], &[5, 6]).unwrap(), want, "axis {axis}");
        }
        // Scalar indices drop the axis, as numpy does.
        assert_eq!(GatherConfig::take(&[2, 3], &[], 1).output_shape(&[2, 3], &[]).unwrap(), vec![2]);
        // The legacy rows form is the same gather as take along axis 0 with a [.., 1] index.
        assert_eq!(GatherConfig::rows(2, 3).output_shape(&[5, 3], &[4, 1]).unwrap(), vec![4, 3]);
        let e = GatherConfig::take(&[2, 3], &[4], 2).validate(&[2, 3], &[4]).unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
    }

    #[test]
    fn index_dtypes() {
        for d in DType::ALL {
            assert_eq!(check_index_dtype(OP, "indices", d).is_ok(), d.is_integer(), "{d}");
        }
    }
}
