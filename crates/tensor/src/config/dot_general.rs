//! Config of `dot_general`: which axes of the two operands are batch axes and which are
//! contracted. Every other axis is free; the output's axes are the batch axes (in the
//! order listed), then the lhs free axes, then the rhs free axes (each in ascending order),
//! as in StableHLO.

use crate::error::{Error, Result};

const OP: &str = "dot_general";

/// Batch and contracting dimensions of a `dot_general`.
///
/// `lhs_batch[i]` pairs with `rhs_batch[i]` and `lhs_contracting[i]` with
/// `rhs_contracting[i]`; paired axes must have equal extents.
///
/// ```
/// use strata_tensor::config::DotGeneralConfig;
/// // Batched matrix product: [b, m, k] x [b, k, n] -> [b, m, n].
/// let cfg = DotGeneralConfig::new(vec![0], vec![0], vec![2], vec![1]);
/// assert_eq!(cfg.output_shape(&[4, 2, 3], &[4, 3, 5]).unwrap(), vec![4, 2, 5]);
/// let err = cfg.validate(&[4, 2, 3], &[4, 4, 5]).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "dot_general: contracting dim 2 of lhs has extent 3, rhs dim 1 has extent 4"
/// );
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct DotGeneralConfig {
    /// Batch axes of the lhs.
    pub lhs_batch: Vec<usize>,
    /// Batch axes of the rhs, paired with `lhs_batch`.
    pub rhs_batch: Vec<usize>,
    /// Contracted axes of the lhs.
    pub lhs_contracting: Vec<usize>,
    /// Contracted axes of the rhs, paired with `lhs_contracting`.
    pub rhs_contracting: Vec<usize>,
}

impl DotGeneralConfig {
    /// A config from its four axis lists.
    pub fn new(
        lhs_batch: Vec<usize>,
        rhs_batch: Vec<usize>,
        lhs_contracting: Vec<usize>,
        rhs_contracting: Vec<usize>,
    ) -> Self {
        DotGeneralConfig { lhs_batch, rhs_batch, lhs_contracting, rhs_contracting }
    }

    /// The plain matrix product of two rank-2 operands: `[m, k] x [k, n] -> [m, n]`.
    ///
    /// ```
    /// use strata_tensor::config::DotGeneralConfig;
    /// assert_eq!(DotGeneralConfig::matmul().output_shape(&[2, 3], &[3, 4]).unwrap(), vec![2, 4]);
    /// ```
    pub fn matmul() -> Self {
        DotGeneralConfig::new(vec![], vec![], vec![1], vec![0])
    }

    /// Checks the config against the operand shapes: paired lists of equal length, every
    /// axis in range, no axis listed twice (in one role or in two), paired extents equal.
    pub fn validate(&self, lhs_shape: &[usize], rhs_shape: &[usize]) -> Result<()> {
        if self.lhs_batch.len() != self.rhs_batch.len() {
            return Err(Error::invalid_argument(
                OP,
                format!(
                    "lhs has {} batch dims {:?}, rhs has {} {:?}; they must pair up",
                    self.lhs_batch.len(),
                    self.lhs_batch,
                    self.rhs_batch.len(),
                    self.rhs_batch
                ),
            ));
        }
        if self.lhs_contracting.len() != self.rhs_contracting.len() {
            return Err(Error::invalid_argument(
                OP,
                format!(
                    "lhs has {} contracting dims {:?}, rhs has {} {:?}; they must pair up",
                    self.lhs_contracting.len(),
                    self.lhs_contracting,
                    self.rhs_contracting.len(),
                    self.rhs_contracting
                ),
            ));
        }
        check_roles("lhs", lhs_shape.len(), &self.lhs_batch, &self.lhs_contracting)?;
        check_roles("rhs", rhs_shape.len(), &self.rhs_batch, &self.rhs_contracting)?;
        for (&l, &r) in self.lhs_batch.iter().zip(&self.rhs_batch) {
            if lhs_shape[l] != rhs_shape[r] {
                return Err(Error::shape_mismatch(
                    OP,
                    format!(
                        "batch dim {l} of lhs has extent {}, rhs dim {r} has extent {}",
                        lhs_shape[l], rhs_shape[r]
                    ),
                ));
            }
        }
        for (&l, &r) in self.lhs_contracting.iter().zip(&self.rhs_contracting) {
            if lhs_shape[l] != rhs_shape[r] {
                return Err(Error::shape_mismatch(
                    OP,
                    format!(
                        "contracting dim {l} of lhs has extent {}, rhs dim {r} has extent {}",
                        lhs_shape[l], rhs_shape[r]
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The lhs axes that are neither batch nor contracting, ascending.
    /// Meaningful once [`validate`](Self::validate) passed for an lhs of rank `rank`.
    pub fn lhs_free(&self, rank: usize) -> Vec<usize> {
        free_dims(rank, &self.lhs_batch, &self.lhs_contracting)
    }

    /// The rhs axes that are neither batch nor contracting, ascending.
    pub fn rhs_free(&self, rank: usize) -> Vec<usize> {
        free_dims(rank, &self.rhs_batch, &self.rhs_contracting)
    }

    /// Validates, then gives the output shape: batch extents, lhs free, rhs free.
    pub fn output_shape(&self, lhs_shape: &[usize], rhs_shape: &[usize]) -> Result<Vec<usize>> {
        self.validate(lhs_shape, rhs_shape)?;
        let batch = self.lhs_batch.iter().map(|&d| lhs_shape[d]);
        let lhs_free = self.lhs_free(lhs_shape.len()).into_iter().map(|d| lhs_shape[d]);
        let rhs_free = self.rhs_free(rhs_shape.len()).into_iter().map(|d| rhs_shape[d]);
        Ok(batch.chain(lhs_free).chain(rhs_free).collect())
    }
}

/// Every listed axis in range and listed once across both roles.
fn check_roles(side: &str, rank: usize, batch: &[usize], contracting: &[usize]) -> Result<()> {
    let mut role: Vec<Option<&str>> = vec![None; rank];
    for (what, dims) in [("batch", batch), ("contracting", contracting)] {
        for &d in dims {
            if d >= rank {
                return Err(Error::invalid_argument(
                    OP,
                    format!("{what} dim {d} of {side} is out of range for rank {rank}"),
                ));
            }
            if let Some(first) = role[d] {
                let how = if first == what { format!("twice as {what}") } else { format!("as {first} and as {what}") };
                return Err(Error::invalid_argument(OP, format!("dim {d} of {side} is listed {how}")));
            }
            role[d] = Some(what);
        }
    }
    Ok(())
}

fn free_dims(rank: usize, batch: &[usize], contracting: &[usize]) -> Vec<usize> {
    (0..rank).filter(|d| !batch.contains(d) && !contracting.contains(d)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    fn cfg(lb: &[usize], rb: &[usize], lc: &[usize], rc: &[usize]) -> DotGeneralConfig {
        DotGeneralConfig::new(lb.to_vec(), rb.to_vec(), lc.to_vec(), rc.to_vec())
    }

    #[test]
    fn output_is_batch_then_lhs_free_then_rhs_free() {
        // lhs [a=2, k=3, b=4, m=5], rhs [n=6, b=4, k=3]
        let c = cfg(&[2], &[1], &[1], &[2]);
        assert_eq!(c.output_shape(&[2, 3, 4, 5], &[6, 4, 3]).unwrap(), vec![4, 2, 5, 6]);
        assert_eq!(c.lhs_free(4), vec![0, 3]);
        assert_eq!(c.rhs_free(3), vec![0]);
    }

    #[test]
    fn rank_zero_and_outer_products() {
        assert_eq!(cfg(&[], &[], &[], &[]).output_shape(&[], &[]).unwrap(), Vec::<usize>::new());
        assert_eq!(cfg(&[], &[], &[], &[]).output_shape(&[2], &[3]).unwrap(), vec![2, 3]);
        assert_eq!(cfg(&[], &[], &[0], &[0]).output_shape(&[0], &[0]).unwrap(), Vec::<usize>::new());
    }

    #[test]
    fn each_violation_is_named() {
        let check = |c: DotGeneralConfig, l: &[usize], r: &[usize], kind: ErrorKind, msg: &str| {
            let e = c.validate(l, r).unwrap_err();
            assert_eq!(e.kind(), kind, "{e}");
            assert_eq!(e.op(), "dot_general");
            assert_eq!(e.message(), msg);
        };
        check(
            cfg(&[], &[], &[1], &[0]),
            &[2, 3],
            &[4, 5],
            ErrorKind::ShapeMismatch,
            "contracting dim 1 of lhs has extent 3, rhs dim 0 has extent 4",
        );
        check(
            cfg(&[0], &[0], &[1], &[1]),
            &[2, 3],
            &[5, 3],
            ErrorKind::ShapeMismatch,
            "batch dim 0 of lhs has extent 2, rhs dim 0 has extent 5",
        );
        check(
            cfg(&[], &[], &[2], &[0]),
            &[2, 3],
            &[3],
            ErrorKind::InvalidArgument,
            "contracting dim 2 of lhs is out of range for rank 2",
        );
        check(
            cfg(&[1], &[0], &[], &[]),
            &[2, 3],
            &[],
            ErrorKind::InvalidArgument,
            "batch dim 0 of rhs is out of range for rank 0",
        );
        check(
            cfg(&[0], &[0], &[0], &[1]),
            &[2, 3],
            &[2, 2],
            ErrorKind::InvalidArgument,
            "dim 0 of lhs is listed as batch and as contracting",
        );
        check(
            cfg(&[], &[], &[1, 1], &[0, 1]),
            &[2, 3],
            &[3, 3],
            ErrorKind::InvalidArgument,
            "dim 1 of lhs is listed twice as contracting",
        );
        check(
            cfg(&[0], &[], &[], &[]),
            &[2],
            &[2],
            ErrorKind::InvalidArgument,
            "lhs has 1 batch dims [0], rhs has 0 []; they must pair up",
        );
        check(
            cfg(&[], &[], &[0], &[]),
            &[2],
            &[2],
            ErrorKind::InvalidArgument,
            "lhs has 1 contracting dims [0], rhs has 0 []; they must pair up",
        );
    }
}
