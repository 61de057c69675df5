//! Config of `grouped_gemm`: many independent matrix products in one call, each of its
//! own size, scheduled together so that the call is never slower than running them in turn.

use crate::error::{Error, Result};

const OP: &str = "grouped_gemm";

/// The size of one GEMM job: `batch` products of `[m, k] x [k, n]`.
///
/// ```
/// use strata_tensor::config::GemmShape;
/// let s = GemmShape { batch: 2, m: 3, k: 4, n: 5 };
/// assert_eq!(s.flops(), 2 * 2 * 3 * 4 * 5);
/// assert_eq!(s.output_shape(true), vec![2, 3, 5]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct GemmShape {
    /// Number of independent products (1 for a rank-2 job).
    pub batch: usize,
    /// Rows of the lhs and the output.
    pub m: usize,
    /// Columns of the lhs, rows of the rhs.
    pub k: usize,
    /// Columns of the rhs and the output.
    pub n: usize,
}

impl GemmShape {
    /// Floating-point operations (a multiply and an add per term), saturating.
    pub fn flops(&self) -> u64 {
        [self.batch, self.m, self.k, self.n].iter().fold(2u64, |acc, &d| acc.saturating_mul(d as u64))
    }

    /// The output shape: `[batch, m, n]` for a batched job, `[m, n]` otherwise.
    pub fn output_shape(&self, batched: bool) -> Vec<usize> {
        if batched { vec![self.batch, self.m, self.n] } else { vec![self.m, self.n] }
    }
}

/// Options of a grouped GEMM: job `i` multiplies `lhs[i]` (`[m, k]` or `[b, m, k]`) by
/// `rhs[i]` (`[k, n]` or `[b, k, n]`, the same rank as `lhs[i]`). Sizes may differ
/// freely between jobs; transposed or otherwise strided operands are given as views.
///
/// ```
/// use strata_tensor::config::{GemmShape, GroupedGemmConfig};
/// let cfg = GroupedGemmConfig::default();
/// let shapes = cfg.validate(&[&[2, 3], &[4, 1, 2]], &[&[3, 5], &[4, 2, 6]]).unwrap();
/// assert_eq!(shapes[1], GemmShape { batch: 4, m: 1, k: 2, n: 6 });
/// let err = cfg.validate(&[&[2, 3]], &[&[4, 5]]).unwrap_err();
/// assert_eq!(err.to_string(), "grouped_gemm: job 0: lhs [2, 3] has 3 columns, rhs [4, 5] has 4 rows");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct GroupedGemmConfig {
    /// Use the complex conjugate of every lhs.
    pub conj_lhs: bool,
    /// Use the complex conjugate of every rhs.
    pub conj_rhs: bool,
}

impl GroupedGemmConfig {
    /// Checks the job list and gives each job's size.
    pub fn validate(&self, lhs_shapes: &[&[usize]], rhs_shapes: &[&[usize]]) -> Result<Vec<GemmShape>> {
        if lhs_shapes.len() != rhs_shapes.len() {
            return Err(Error::invalid_argument(
                OP,
                format!(
                    "{} lhs operands but {} rhs operands; each job needs one of each",
                    lhs_shapes.len(),
                    rhs_shapes.len()
                ),
            ));
        }
        lhs_shapes.iter().zip(rhs_shapes).enumerate().map(|(i, (l, r))| job_shape(i, l, r)).collect()
    }
}

fn job_shape(job: usize, lhs: &[usize], rhs: &[usize]) -> Result<GemmShape> {
    if !(2..=3).contains(&lhs.len()) || lhs.len() != rhs.len() {
        return Err(Error::invalid_argument(
            OP,
            format!("job {job}: lhs {lhs:?} and rhs {rhs:?} must both be rank 2, or both rank 3 (batched)"),
        ));
    }
    let batched = lhs.len() == 3;
    let (lb, rb) = if batched { (lhs[0], rhs[0]) } else { (1, 1) };
    if lb != rb {
        return Err(Error::shape_mismatch(
            OP,
            format!("job {job}: lhs {lhs:?} has batch {lb}, rhs {rhs:?} has batch {rb}"),
        ));
    }
    let (m, k) = (lhs[lhs.len() - 2], lhs[lhs.len() - 1]);
    let (rk, n) = (rhs[rhs.len() - 2], rhs[rhs.len() - 1]);
    if k != rk {
        return Err(Error::shape_mismatch(
            OP,
            format!("job {job}: lhs {lhs:?} has {k} columns, rhs {rhs:?} has {rk} rows"),
        ));
    }
    Ok(GemmShape { batch: lb, m, k, n })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn sizes_of_mixed_jobs() {
        let shapes = GroupedGemmConfig::default()
            .validate(&[&[0, 3], &[2, 2, 0], &[7, 1]], &[&[3, 4], &[2, 0, 5], &[1, 9]])
            .unwrap();
        assert_eq!(
            shapes,
            vec![
                GemmShape { batch: 1, m: 0, k: 3, n: 4 },
                GemmShape { batch: 2, m: 2, k: 0, n: 5 },
                GemmShape { batch: 1, m: 7, k: 1, n: 9 },
            ]
        );
        assert_eq!(shapes[0].flops(), 0);
        assert_eq!(shapes[2].flops(), 2 * 7 * 9);
        assert_eq!(GemmShape { batch: usize::MAX, m: 4, k: 4, n: 4 }.flops(), u64::MAX);
    }

    #[test]
    fn each_violation_is_named() {
        let c = GroupedGemmConfig::default();
        let e = c.validate(&[&[2, 3]], &[]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert_eq!(e.message(), "1 lhs operands but 0 rhs operands; each job needs one of each");
        let e = c.validate(&[&[2, 3], &[2, 3]], &[&[3, 2], &[2, 3, 2]]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert_eq!(e.message(), "job 1: lhs [2, 3] and rhs [2, 3, 2] must both be rank 2, or both rank 3 (batched)");
        let e = c.validate(&[&[3]], &[&[3]]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        let e = c.validate(&[&[2, 2, 3]], &[&[4, 3, 2]]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
        assert_eq!(e.message(), "job 0: lhs [2, 2, 3] has batch 2, rhs [4, 3, 2] has batch 4");
        let e = c.validate(&[&[2, 3]], &[&[2, 3]]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
        assert_eq!(e.op(), "grouped_gemm");
    }
}
