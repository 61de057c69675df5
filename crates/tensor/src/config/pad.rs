//! Config of `pad` (StableHLO `pad`: `edge_padding_low`, `edge_padding_high`,
//! `interior_padding`). Interior padding is inserted between neighbouring elements first;
//! then low/high padding is added at the edges, where a negative amount crops instead.

use crate::access::TensorRead;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::tensor::{Tensor, TypedTensor};
use crate::value::ScalarValue;

const OP: &str = "pad";

/// The value `pad` fills with: a number (converted to the operand's dtype, see
/// [`ScalarValue::to_dtype`]) or, as StableHLO takes it, a rank-0 tensor of the operand's
/// dtype.
///
/// ```
/// use strata_tensor::{Tensor, config::PadValue};
/// let zero: PadValue<'_> = 0.0.into();
/// let one = Tensor::scalar(1.0f32);
/// let from_tensor: PadValue<'_> = (&one).into();
/// assert!(matches!(zero, PadValue::Scalar(_)) && matches!(from_tensor, PadValue::Tensor(_)));
/// ```
#[derive(Clone, Debug)]
pub enum PadValue<'a> {
    /// A number.
    Scalar(ScalarValue),
    /// A rank-0 tensor.
    Tensor(TensorRead<'a>),
}

impl<T: Scalar> From<T> for PadValue<'_> {
    fn from(value: T) -> Self {
        PadValue::Scalar(value.into_value())
    }
}

impl From<ScalarValue> for PadValue<'_> {
    fn from(value: ScalarValue) -> Self {
        PadValue::Scalar(value)
    }
}

impl<'a> From<TensorRead<'a>> for PadValue<'a> {
    fn from(value: TensorRead<'a>) -> Self {
        PadValue::Tensor(value)
    }
}

impl<'a> From<&'a Tensor> for PadValue<'a> {
    fn from(value: &'a Tensor) -> Self {
        PadValue::Tensor(value.into())
    }
}

impl<'a, T: Scalar> From<&'a TypedTensor<T>> for PadValue<'a> {
    fn from(value: &'a TypedTensor<T>) -> Self {
        PadValue::Tensor(value.into())
    }
}

/// Per-axis low, high and interior padding.
///
/// Built with labels, starting from no padding on a given rank:
///
/// ```
/// use strata_tensor::config::PadConfig;
/// // Two elements before axis 0, one after axis 1, one between neighbours of axis 1.
/// let cfg = PadConfig::none(2).low(0, 2).high(1, 1).interior(1, 1);
/// assert_eq!(cfg, PadConfig::new(vec![2, 0], vec![0, 1], vec![0, 1]));
/// assert_eq!(cfg.output_shape(&[3, 4]).unwrap(), vec![5, 8]);
/// ```
///
/// or from its three lists (StableHLO's `edge_padding_low`, `edge_padding_high`,
/// `interior_padding`):
///
/// ```
/// use strata_tensor::config::PadConfig;
/// // [3] -> interior 1 gives 5 -> low 2, high -1 gives 6.
/// let cfg = PadConfig::new(vec![2], vec![-1], vec![1]);
/// assert_eq!(cfg.output_shape(&[3]).unwrap(), vec![6]);
/// let err = PadConfig::new(vec![0], vec![0], vec![-1]).validate(&[3]).unwrap_err();
/// assert_eq!(err.to_string(), "pad: interior[0] is -1; interior padding must be non-negative");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PadConfig {
    /// Elements added before the first element of each axis (negative crops).
    pub low: Vec<i64>,
    /// Elements added after the last element of each axis (negative crops).
    pub high: Vec<i64>,
    /// Elements inserted between each pair of neighbours along each axis (non-negative).
    pub interior: Vec<i64>,
}

impl PadConfig {
    /// A config from its three per-axis lists.
    pub fn new(low: Vec<i64>, high: Vec<i64>, interior: Vec<i64>) -> Self {
        PadConfig { low, high, interior }
    }

    /// No padding on any of `rank` axes: the start of the labelled form.
    pub fn none(rank: usize) -> Self {
        PadConfig { low: vec![0; rank], high: vec![0; rank], interior: vec![0; rank] }
    }

    /// `amount` elements before the first of `axis` (negative crops).
    pub fn low(mut self, axis: usize, amount: i64) -> Self {
        set_axis(&mut self.low, axis, amount);
        self
    }

    /// `amount` elements after the last of `axis` (negative crops).
    pub fn high(mut self, axis: usize, amount: i64) -> Self {
        set_axis(&mut self.high, axis, amount);
        self
    }

    /// `amount` elements between each pair of neighbours along `axis`.
    pub fn interior(mut self, axis: usize, amount: i64) -> Self {
        set_axis(&mut self.interior, axis, amount);
        self
    }

    /// Checks lengths against the rank, `interior >= 0`, and that every output extent is
    /// non-negative and representable.
    pub fn validate(&self, operand_shape: &[usize]) -> Result<()> {
        self.output_shape(operand_shape).map(|_| ())
    }

    /// Validates, then returns the output shape:
    /// `low + dim + max(dim - 1, 0) * interior + high` per axis.
    pub fn output_shape(&self, operand_shape: &[usize]) -> Result<Vec<usize>> {
        let rank = operand_shape.len();
        for (what, list) in [("low", &self.low), ("high", &self.high), ("interior", &self.interior)] {
            if list.len() != rank {
                return Err(Error::invalid_argument(
                    OP,
                    format!("{what} {list:?} has {} entries, the operand has rank {rank}", list.len()),
                ));
            }
        }
        let mut shape = Vec::with_capacity(rank);
        let per_axis = self.low.iter().zip(&self.high).zip(&self.interior).zip(operand_shape);
        for (axis, (((&low, &high), &interior), &dim)) in per_axis.enumerate() {
            if interior < 0 {
                return Err(Error::invalid_argument(
                    OP,
                    format!("interior[{axis}] is {interior}; interior padding must be non-negative"),
                ));
            }
            let too_big = || Error::invalid_argument(OP, format!("axis {axis}: the padded extent overflows"));
            let dim = i128::from(u64::try_from(dim).map_err(|_| too_big())?);
            let extent = i128::from(low) + i128::from(high) + dim + (dim - 1).max(0) * i128::from(interior);
            if extent < 0 {
                return Err(Error::invalid_argument(
                    OP,
                    format!(
                        "axis {axis}: low {low} and high {high} crop more than the {} elements of the interior-padded extent",
                        dim + (dim - 1).max(0) * i128::from(interior)
                    ),
                ));
            }
            shape.push(usize::try_from(extent).map_err(|_| too_big())?);
        }
        crate::shape::checked_len(OP, &shape)?;
        Ok(shape)
    }
}

/// Sets `list[axis]`, growing the list with zeros when the axis is beyond it, so that an
/// out-of-range axis surfaces as a length mismatch in `validate` instead of a panic.
fn set_axis(list: &mut Vec<i64>, axis: usize, amount: i64) {
    if axis >= list.len() {
        list.resize(axis + 1, 0);
    }
    list[axis] = amount;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn shapes_and_errors() {
        let cfg = PadConfig::new(vec![1, -2, 0], vec![0, 3, -1], vec![2, 0, 0]);
        assert_eq!(cfg.output_shape(&[3, 4, 1]).unwrap(), vec![8, 5, 0]);
        assert_eq!(PadConfig::new(vec![2], vec![1], vec![5]).output_shape(&[0]).unwrap(), vec![3]);
        assert_eq!(PadConfig::default().output_shape(&[]).unwrap(), Vec::<usize>::new());
        let e = PadConfig::new(vec![-3], vec![-1], vec![0]).validate(&[3]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains("crop more than the 3 elements"), "{e}");
        let e = PadConfig::new(vec![0], vec![0, 1], vec![0]).validate(&[3]).unwrap_err();
        assert!(e.to_string().contains("high [0, 1] has 2 entries"), "{e}");
        let e = PadConfig::new(vec![i64::MAX], vec![i64::MAX], vec![0]).validate(&[3]).unwrap_err();
        assert!(e.to_string().contains("overflows"), "{e}");
        // An axis beyond the rank in the labelled form is a validation error, not a panic.
        let e = PadConfig::none(1).high(2, 1).validate(&[3]).unwrap_err();
        assert!(e.to_string().contains("high [0, 0, 1] has 3 entries"), "{e}");
    }
}
