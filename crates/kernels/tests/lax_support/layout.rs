//! The layouts every case runs in: the same logical values stored contiguously, reversed,
//! column-major, with gaps (non-contiguous, one axis reversed), or broadcast along a new
//! stride-0 axis; and destinations written through a reversed mutable view.

use strata_kernels::structural::{CastScalar, WideValue};
use strata_tensor::shape::row_major_strides;
use strata_tensor::{Scalar, Tensor, TensorRead, TensorView, TensorWrite, TypedView, dispatch_dtype};

/// How a case's operands (and, for `IntoReversed`, its destination) are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Owned row-major tensors.
    Contiguous,
    /// Every axis reversed over storage holding the elements in reverse order (negative
    /// strides, non-zero offset).
    Reversed,
    /// Column-major storage viewed through permuted strides.
    ColumnMajor,
    /// Storage with a gap after every element of the last axis (stride 2, offset 1) and
    /// axis 0 reversed: neither contiguous nor of one sign.
    Strided,
    /// Operands of the output's shape get a new leading axis of extent 2 and stride 0;
    /// elementwise ops only (the expected output is stacked twice).
    Broadcast,
    /// Contiguous operands, the result written by the `_into` form into a destination
    /// viewed with every axis reversed.
    IntoReversed,
}

/// One operand's storage and the view of it that holds the case's values.
pub struct Operand {
    storage: Tensor,
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset: usize,
}

/// Storage, strides and offset laying out row-major `data` of `shape` as `layout`.
fn relayout<T: Scalar>(data: &[T], shape: &[usize], layout: Layout) -> (Vec<T>, Vec<usize>, Vec<isize>, usize) {
    let r = shape.len();
    let n = data.len();
    let rm = row_major_strides(shape);
    // Position of row-major element `i` under `strides` from `offset`.
    let place = |strides: &[isize], offset: isize, len: usize, fill: &dyn Fn(usize) -> T| -> Vec<T> {
        let mut buf: Vec<T> = (0..len).map(fill).collect();
        for (i, &v) in data.iter().enumerate() {
            let mut rest = i;
            let mut at = offset;
            for k in (0..r).rev() {
                let d = shape[k].max(1);
                at += (rest % d) as isize * strides[k];
                rest /= d;
            }
            buf[at as usize] = v;
        }
        buf
    };
    // Junk for the gaps: other values of the tensor, so a read of a gap shows.
    let junk = |i: usize| data[(i * 7 + 3) % n];
    match layout {
        Layout::Contiguous | Layout::IntoReversed | Layout::Broadcast => (data.to_vec(), shape.to_vec(), rm, 0),
        Layout::Reversed => {
            let strides: Vec<isize> = rm.iter().map(|s| -s).collect();
            let offset: isize = shape.iter().zip(&rm).map(|(&d, &s)| (d as isize - 1).max(0) * s).sum();
            let buf = if n == 0 { Vec::new() } else { place(&strides, offset, n, &junk) };
            (buf, shape.to_vec(), strides, offset as usize)
        }
        Layout::ColumnMajor => {
            let mut strides = vec![0isize; r];
            let mut acc = 1isize;
            for k in 0..r {
                strides[k] = acc;
                acc *= shape[k].max(1) as isize;
            }
            let buf = if n == 0 { Vec::new() } else { place(&strides, 0, n, &junk) };
            (buf, shape.to_vec(), strides, 0)
        }
        Layout::Strided => {
            if r == 0 || n == 0 {
                return (data.to_vec(), shape.to_vec(), rm, 0);
            }
            // Storage rows of 2·d + 1 elements along the last axis, values at odd positions.
            let mut padded = shape.to_vec();
            padded[r - 1] = 2 * shape[r - 1] + 1;
            let prm = row_major_strides(&padded);
            let mut strides = prm.clone();
            strides[r - 1] *= 2;
            let offset = 1 + (shape[0] as isize - 1) * strides[0];
            strides[0] = -strides[0];
            let len: usize = padded.iter().product();
            let buf = place(&strides, offset, len, &junk);
            (buf, shape.to_vec(), strides, offset as usize)
        }
    }
}

impl Operand {
    /// `t` laid out as `layout`; under `Broadcast`, only when its shape is `out_shape`.
    pub fn new(t: &Tensor, layout: Layout, out_shape: &[usize]) -> Operand {
        dispatch_dtype!(t.dtype(), T => {
            let data = t.as_typed::<T>().expect("dtype").data();
            let (buf, mut shape, mut strides, offset) = relayout(data, t.shape(), layout);
            let len = buf.len();
            if layout == Layout::Broadcast && t.shape() == out_shape {
                shape.insert(0, 2);
                strides.insert(0, 0);
            }
            Operand { storage: Tensor::from_vec(buf, &[len]).expect("storage"), shape, strides, offset }
        })
    }

    pub fn view(&self) -> TensorView<'_> {
        dispatch_dtype!(self.storage.dtype(), T => {
            let buf = self.storage.as_typed::<T>().expect("dtype").data();
            TensorView::from(TypedView::new(buf, &self.shape, &self.strides, self.offset).expect("valid test layout"))
        })
    }

    pub fn read(&self) -> TensorRead<'_> {
        self.view().into()
    }
}

/// `t` twice along a new leading axis: what an elementwise op gives on `Broadcast` operands.
pub fn stacked(t: &Tensor) -> Tensor {
    let mut shape = vec![2];
    shape.extend_from_slice(t.shape());
    dispatch_dtype!(t.dtype(), T => {
        let d = t.as_typed::<T>().expect("dtype").data();
        Tensor::from_vec([d, d].concat(), &shape).expect("shape")
    })
}

/// Runs `write` into a destination of `dtype` and `shape` seen with every axis reversed,
/// and returns the logical values it wrote. The destination starts filled with 77 (true
/// for bool), so an element left unwritten shows as a mismatch.
pub fn into_reversed(
    dtype: strata_tensor::DType,
    shape: &[usize],
    write: impl FnOnce(TensorWrite<'_>) -> strata_tensor::Result<()>,
) -> strata_tensor::Result<Tensor> {
    let n: usize = shape.iter().product();
    let mut storage = dispatch_dtype!(dtype, T => {
        Tensor::from_vec(vec![<T as CastScalar>::from_wide(WideValue::Int(77)); n], shape)?
    });
    let mut view = storage.view_mut();
    for axis in 0..shape.len() {
        view = view.reverse_axis(axis)?;
    }
    write(view.into())?;
    // The storage holds the logical values in reverse order.
    Ok(dispatch_dtype!(dtype, T => {
        let mut v = storage.as_typed::<T>().expect("dtype").data().to_vec();
        v.reverse();
        Tensor::from_vec(v, shape).expect("shape")
    }))
}
