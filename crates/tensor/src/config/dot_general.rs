//! Config of `dot_general`: which axes of the two operands are batch axes and which are
//! contracted. Every other axis is free; the output's axes are the batch axes (in the
//! order listed), then the lhs free axes, then the rhs free axes (each in ascending order),
//! as in StableHLO.

use crate::error::{Error, Result};
use crate::value::ScalarValue;

const OP: &str = "dot_general";

/// Everything a `dot_general` call is told besides its operands, with named parts: the
/// contracting and batch axes (lax's `dimension_numbers`), conjugation of either operand,
/// and for the accumulating form `dot_general_into`, `out = alpha * lhs·rhs + beta * out`
/// with `alpha`/`beta` in the operands' dtype.
///
/// ```
/// use strata_tensor::config::DotGeneral;
/// // A matrix product, conjugating the lhs: [m, k] x [k, n] -> [m, n].
/// let spec = DotGeneral::new().contract([1], [0]).conj_lhs();
/// assert_eq!(spec, DotGeneral::matmul().conj_lhs());
/// // A batched product accumulating into its output: out = 2 * a·b + out.
/// let acc = DotGeneral::new().batch([0], [0]).contract([2], [1]).alpha(2.0).beta(1.0);
/// assert_eq!(acc.dims.output_shape(&[4, 2, 3], &[4, 3, 5]).unwrap(), vec![4, 2, 5]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DotGeneral {
    /// Batch and contracting axes of both operands.
    pub dims: DotGeneralConfig,
    /// Conjugate a complex lhs on the fly (no effect on real dtypes).
    pub conj_lhs: bool,
    /// Conjugate a complex rhs on the fly.
    pub conj_rhs: bool,
    /// Scale of the product in `dot_general_into` (default 1).
    pub alpha: ScalarValue,
    /// Scale of the destination's previous contents in `dot_general_into` (default 0:
    /// the destination is overwritten without being read).
    pub beta: ScalarValue,
}

impl Default for DotGeneral {
    fn default() -> Self {
        DotGeneral {
            dims: DotGeneralConfig::default(),
            conj_lhs: false,
            conj_rhs: false,
            alpha: ScalarValue::F64(1.0),
            beta: ScalarValue::F64(0.0),
        }
    }
}

impl DotGeneral {
    /// No batch and no contracting axes (an outer product until told otherwise), no
    /// conjugation, `alpha = 1`, `beta = 0`.
    pub fn new() -> Self {
        Self::default()
    }

    /// The plain matrix product of two rank-2 operands, `[m, k] x [k, n] -> [m, n]`.
    pub fn matmul() -> Self {
        DotGeneral::from(DotGeneralConfig::matmul())
    }

    /// Contracts lhs axis `lhs[i]` with rhs axis `rhs[i]` (lax's `lhs_contracting_dimensions`
    /// and `rhs_contracting_dimensions`).
    pub fn contract(mut self, lhs: impl AsRef<[usize]>, rhs: impl AsRef<[usize]>) -> Self {
        self.dims.lhs_contracting = lhs.as_ref().to_vec();
        self.dims.rhs_contracting = rhs.as_ref().to_vec();
        self
    }

    /// Pairs lhs axis `lhs[i]` with rhs axis `rhs[i]` as batch axes (they lead the output).
    pub fn batch(mut self, lhs: impl AsRef<[usize]>, rhs: impl AsRef<[usize]>) -> Self {
        self.dims.lhs_batch = lhs.as_ref().to_vec();
        self.dims.rhs_batch = rhs.as_ref().to_vec();
        self
    }

    /// Conjugates the lhs (complex dtypes).
    pub fn conj_lhs(mut self) -> Self {
        self.conj_lhs = true;
        self
    }

    /// Conjugates the rhs (complex dtypes).
    pub fn conj_rhs(mut self) -> Self {
        self.conj_rhs = true;
        self
    }

    /// Sets `alpha` (`dot_general_into` only): a real value for real operands, real or
    /// complex for complex ones.
    pub fn alpha(mut self, alpha: impl Into<ScalarValue>) -> Self {
        self.alpha = alpha.into();
        self
    }

    /// Sets `beta` (`dot_general_into` only); `beta = 0` never reads the destination.
    pub fn beta(mut self, beta: impl Into<ScalarValue>) -> Self {
        self.beta = beta.into();
        self
    }
}

impl From<DotGeneralConfig> for DotGeneral {
    fn from(dims: DotGeneralConfig) -> Self {
        DotGeneral { dims, ..DotGeneral::default() }
    }
}

impl From<&DotGeneralConfig> for DotGeneral {
    fn from(dims: &DotGeneralConfig) -> Self {
        DotGeneral::from(dims.clone())
    }
}

/// Batch and contracting dimensions of a `dot_general` (the dimension numbers; see
/// [`DotGeneral`] for the whole call with named parts).
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
    /// A config from its four axis lists, batch axes first (lax lists the contracting
    /// ones first: prefer the labelled [`DotGeneral::new`]`().contract(..).batch(..)`).
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
        // One allocation: the free axes are enumerated in place, not collected first.
        let free = |rank: usize, listed: usize| rank.saturating_sub(listed);
        let mut shape = Vec::with_capacity(
            self.lhs_batch.len()
                + free(lhs_shape.len(), self.lhs_batch.len() + self.lhs_contracting.len())
                + free(rhs_shape.len(), self.rhs_batch.len() + self.rhs_contracting.len()),
        );
        shape.extend(self.lhs_batch.iter().map(|&d| lhs_shape[d]));
        shape.extend(free_axes(lhs_shape.len(), &self.lhs_batch, &self.lhs_contracting).map(|d| lhs_shape[d]));
        shape.extend(free_axes(rhs_shape.len(), &self.rhs_batch, &self.rhs_contracting).map(|d| rhs_shape[d]));
        Ok(shape)
    }
}

/// Every listed axis in range and listed once across both roles. Allocates nothing: each
/// axis is compared with the ones listed before it (configs list a handful of axes).
fn check_roles(side: &str, rank: usize, batch: &[usize], contracting: &[usize]) -> Result<()> {
    let listed =
        |i: usize| if i < batch.len() { ("batch", batch[i]) } else { ("contracting", contracting[i - batch.len()]) };
    for i in 0..batch.len() + contracting.len() {
        let (what, d) = listed(i);
        if d >= rank {
            return Err(Error::invalid_argument(
                OP,
                format!("{what} dim {d} of {side} is out of range for rank {rank}"),
            ));
        }
        if let Some((first, _)) = (0..i).map(listed).find(|&(_, e)| e == d) {
            let how = if first == what { format!("twice as {what}") } else { format!("as {first} and as {what}") };
            return Err(Error::invalid_argument(OP, format!("dim {d} of {side} is listed {how}")));
        }
    }
    Ok(())
}

/// The axes of a rank-`rank` operand that are neither batch nor contracting, ascending.
fn free_axes<'a>(rank: usize, batch: &'a [usize], contracting: &'a [usize]) -> impl Iterator<Item = usize> + 'a {
    (0..rank).filter(move |d| !batch.contains(d) && !contracting.contains(d))
}

fn free_dims(rank: usize, batch: &[usize], contracting: &[usize]) -> Vec<usize> {
    free_axes(rank, batch, contracting).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    fn cfg(lb: &[usize], rb: &[usize], lc: &[usize], rc: &[usize]) -> DotGeneralConfig {
        DotGeneralConfig::new(lb.to_vec(), rb.to_vec(), lc.to_vec(), rc.to_vec())
    }

    /// The role check written the obvious way (a table of roles per axis), as the
    /// reference for the allocation-free one.
    fn reference_roles(side: &str, rank: usize, batch: &[usize], contracting: &[usize]) -> Result<()> {
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
                    let how =
                        if first == what { format!("twice as {what}") } else { format!("as {first} and as {what}") };
                    return Err(Error::invalid_argument(OP, format!("dim {d} of {side} is listed {how}")));
                }
                role[d] = Some(what);
            }
        }
        Ok(())
    }

    proptest::proptest! {
        #[test]
        fn role_check_and_output_shape_match_the_reference(
            rank in 0usize..6,
            batch in proptest::collection::vec(0usize..7, 0..4),
            contracting in proptest::collection::vec(0usize..7, 0..4),
            extents in proptest::collection::vec(0usize..5, 6),
        ) {
            let got = check_roles("lhs", rank, &batch, &contracting).map_err(|e| e.to_string());
            let want = reference_roles("lhs", rank, &batch, &contracting).map_err(|e| e.to_string());
            proptest::prop_assert_eq!(&got, &want);
            // A valid role assignment: the output shape is batch extents then the free ones.
            if want.is_ok() {
                let shape = &extents[..rank];
                let c = cfg(&batch, &batch, &contracting, &contracting);
                let free: Vec<usize> = (0..rank).filter(|d| !batch.contains(d) && !contracting.contains(d)).collect();
                let expect: Vec<usize> = batch
                    .iter()
                    .map(|&d| shape[d])
                    .chain(free.iter().map(|&d| shape[d]))
                    .chain(free.iter().map(|&d| shape[d]))
                    .collect();
                proptest::prop_assert_eq!(c.output_shape(shape, shape).unwrap(), expect);
                proptest::prop_assert_eq!(c.lhs_free(rank), free);
            }
        }
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
