//! Strided layouts: shape, signed element strides and an offset into a buffer.
//!
//! Every metadata-only view operation (permute, slice, reverse, broadcast, unit axes) is a
//! function from one [`Layout`] to another; views wrap a buffer around a layout that was
//! checked against it once, at construction.

use crate::config::SliceConfig;
use crate::error::{Error, Result};
use crate::extents::{AxisList, Extents};
use crate::shape::{check_axis, check_permutation, checked_len};

/// Shape, signed element strides and offset of a strided tensor.
///
/// The element at multi-index `i` lives at `offset + Σ i[k] * strides[k]`.
///
/// ```
/// use strata_tensor::Layout;
/// let l = Layout::row_major(&[2, 3]);
/// assert_eq!(l.strides(), &[3, 1]);
/// let t = l.permute(&[1, 0]).unwrap();
/// assert_eq!(t.shape(), &[3, 2]);
/// assert_eq!(t.offset_of(&[2, 1]), 5);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    shape: Extents,
    strides: AxisList<isize>,
    offset: usize,
}

impl Layout {
    /// The compact row-major layout of `shape` at offset 0.
    #[inline]
    pub fn row_major(shape: &[usize]) -> Layout {
        Layout { shape: Extents::from_slice(shape), strides: row_major_list(shape), offset: 0 }
    }

    /// A layout checked to address only elements inside a buffer of `buffer_len`
    /// elements, without overflow. `op` names the caller in errors.
    pub fn new(
        op: &'static str,
        buffer_len: usize,
        shape: Vec<usize>,
        strides: Vec<isize>,
        offset: usize,
    ) -> Result<Layout> {
        if shape.len() != strides.len() {
            return Err(Error::invalid_argument(
                op,
                format!("shape {shape:?} has {} axes but strides {strides:?} have {}", shape.len(), strides.len()),
            ));
        }
        checked_len(op, &shape)?;
        let layout = Layout { shape: Extents::from_vec(shape), strides: AxisList::from_vec(strides), offset };
        if let Some((lo, hi)) = layout.span()
            && (lo < 0 || hi >= buffer_len as i128)
        {
            return Err(Error::invalid_argument(
                op,
                format!(
                    "shape {:?} with strides {:?} at offset {} addresses elements {lo}..={hi}, outside the buffer of {buffer_len} elements",
                    layout.shape, layout.strides, layout.offset
                ),
            ));
        }
        Ok(layout)
    }

    /// The extents, outermost first.
    #[inline]
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Signed element strides, one per axis.
    #[inline]
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    /// Buffer index of the element at multi-index zero.
    #[inline]
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Number of axes.
    #[inline]
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Number of addressed elements (counting broadcast repeats).
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// True when some extent is zero.
    pub fn is_empty(&self) -> bool {
        self.shape.contains(&0)
    }

    /// Lowest and highest buffer index addressed, or `None` when no element is.
    /// Computed in `i128` so that no stride combination overflows.
    pub fn span(&self) -> Option<(i128, i128)> {
        if self.is_empty() {
            return None;
        }
        let mut lo = self.offset as i128;
        let mut hi = self.offset as i128;
        for (&d, &s) in self.shape.iter().zip(self.strides.iter()) {
            let reach = (d as i128 - 1) * s as i128;
            if reach < 0 {
                lo += reach;
            } else {
                hi += reach;
            }
        }
        Some((lo, hi))
    }

    /// Buffer index of the element at `index` (which must be in range).
    #[inline]
    pub fn offset_of(&self, index: &[usize]) -> usize {
        let mut at = self.offset as isize;
        for (&i, &s) in index.iter().zip(self.strides.iter()) {
            at += i as isize * s;
        }
        at as usize
    }

    /// True when the layout is compact row-major (possibly at a non-zero offset):
    /// the addressed elements are `offset..offset + len` in order.
    #[inline]
    pub fn is_row_major_contiguous(&self) -> bool {
        let mut expected: isize = 1;
        for (&d, &s) in self.shape.iter().zip(self.strides.iter()).rev() {
            if d != 1 && s != expected {
                return false;
            }
            expected = expected.wrapping_mul(d as isize);
        }
        true
    }

    /// Errors unless every multi-index maps to a distinct buffer element.
    ///
    /// The test is sufficient, not necessary: after sorting the axes of extent > 1 by
    /// absolute stride, each stride must exceed the furthest reach of all smaller axes.
    /// Exotic interleavings that never alias but fail this test are refused too.
    pub fn check_no_alias(&self, op: &'static str) -> Result<()> {
        if self.is_empty() {
            return Ok(());
        }
        let mut axes: Vec<(u128, u128)> = self
            .shape
            .iter()
            .zip(self.strides.iter())
            .filter(|(d, _)| **d > 1)
            .map(|(&d, &s)| (s.unsigned_abs() as u128, d as u128))
            .collect();
        axes.sort_unstable();
        let mut reach: u128 = 0;
        for &(stride, extent) in &axes {
            if stride <= reach {
                return Err(Error::invalid_argument(
                    op,
                    format!(
                        "strides {:?} for shape {:?} let two elements share one memory location; a mutable view needs distinct elements",
                        self.strides, self.shape
                    ),
                ));
            }
            reach += stride * (extent - 1);
        }
        Ok(())
    }

    /// Reorders the axes: axis `k` of the result is axis `perm[k]` of `self`.
    pub fn permute(&self, perm: &[usize]) -> Result<Layout> {
        check_permutation("permute", perm, self.rank())?;
        Ok(Layout {
            shape: perm.iter().map(|&p| self.shape[p]).collect(),
            strides: perm.iter().map(|&p| self.strides[p]).collect(),
            offset: self.offset,
        })
    }

    /// Keeps indices `start, start + step, ...` below `limit` along `axis`.
    pub fn slice_axis(&self, axis: usize, start: usize, limit: usize, step: usize) -> Result<Layout> {
        const OP: &str = "slice";
        check_axis(OP, "axis", axis, self.rank())?;
        if step == 0 {
            return Err(Error::invalid_argument(OP, format!("stride of axis {axis} is zero")));
        }
        let dim = self.shape[axis];
        if start > limit || limit > dim {
            return Err(Error::invalid_argument(
                OP,
                format!("axis {axis}: need start <= limit <= extent, got start {start}, limit {limit}, extent {dim}"),
            ));
        }
        let extent = (limit - start).div_ceil(step);
        let mut out = self.clone();
        if extent > 0 {
            out.offset = (self.offset as isize + start as isize * self.strides[axis]) as usize;
        }
        out.shape[axis] = extent;
        out.strides[axis] = self.strides[axis] * step as isize;
        Ok(out)
    }

    /// Applies a whole [`SliceConfig`] (validated against the shape first).
    pub fn slice(&self, config: &SliceConfig) -> Result<Layout> {
        config.validate(&self.shape)?;
        let mut out = self.clone();
        for axis in 0..self.rank() {
            out = out.slice_axis(axis, config.start[axis], config.limit[axis], config.strides[axis])?;
        }
        Ok(out)
    }

    /// Reverses each axis in `axes` (distinct, in range).
    pub fn reverse(&self, axes: &[usize]) -> Result<Layout> {
        crate::shape::check_unique_axes("reverse", "axis", axes, self.rank())?;
        let mut out = self.clone();
        for &axis in axes {
            out = out.reverse_axis(axis)?;
        }
        Ok(out)
    }

    /// The diagonal `offset` of axes `axis1` and `axis2`, as numpy's `diagonal`: both
    /// axes are removed and the diagonal, `a[.., i, .., i + offset, ..]` (or
    /// `a[.., i - offset, .., i, ..]` for a negative offset), is appended as the last
    /// axis. An offset beyond the matrix gives an empty diagonal.
    ///
    /// ```
    /// use strata_tensor::Layout;
    /// let l = Layout::row_major(&[3, 4]).diagonal(1, 0, 1).unwrap();
    /// assert_eq!((l.shape(), l.strides(), l.offset()), (&[3][..], &[5][..], 1));
    /// assert_eq!(Layout::row_major(&[3, 4]).diagonal(-5, 0, 1).unwrap().shape(), &[0]);
    /// ```
    pub fn diagonal(&self, offset: isize, axis1: usize, axis2: usize) -> Result<Layout> {
        const OP: &str = "diagonal";
        check_axis(OP, "axis1", axis1, self.rank())?;
        check_axis(OP, "axis2", axis2, self.rank())?;
        if axis1 == axis2 {
            return Err(Error::invalid_argument(OP, format!("axis1 and axis2 are both {axis1}; they must differ")));
        }
        let (d1, d2) = (self.shape[axis1] as i128, self.shape[axis2] as i128);
        let k = offset as i128;
        let len = (d1 - (-k).max(0)).min(d2 - k.max(0)).max(0) as usize;
        let (s1, s2) = (self.strides[axis1], self.strides[axis2]);
        let mut out_offset = self.offset;
        if len > 0 {
            let start = if offset >= 0 { offset * s2 } else { -offset * s1 };
            out_offset = (self.offset as isize + start) as usize;
        }
        let kept = || (0..self.rank()).filter(|&a| a != axis1 && a != axis2);
        let mut shape: Extents = kept().map(|a| self.shape[a]).collect();
        let mut strides: AxisList<isize> = kept().map(|a| self.strides[a]).collect();
        shape.insert(shape.len(), len);
        strides.insert(strides.len(), s1 + s2);
        Ok(Layout { shape, strides, offset: out_offset })
    }

    /// Reverses the order of indices along `axis`.
    pub fn reverse_axis(&self, axis: usize) -> Result<Layout> {
        check_axis("reverse", "axis", axis, self.rank())?;
        let mut out = self.clone();
        let dim = self.shape[axis];
        if dim > 0 {
            out.offset = (self.offset as isize + (dim as isize - 1) * self.strides[axis]) as usize;
        }
        out.strides[axis] = -self.strides[axis];
        Ok(out)
    }

    /// `broadcast_in_dim`: axis `k` of `self` becomes axis `dims[k]` of a layout of
    /// `out_shape`; each operand extent must equal its target extent or be 1 (stride 0).
    pub fn broadcast_in_dim(&self, out_shape: &[usize], dims: &[usize]) -> Result<Layout> {
        const OP: &str = "broadcast_in_dim";
        if dims.len() != self.rank() {
            return Err(Error::invalid_argument(
                OP,
                format!(
                    "broadcast_dimensions {dims:?} has {} entries, the operand has rank {}",
                    dims.len(),
                    self.rank()
                ),
            ));
        }
        crate::shape::check_unique_axes(OP, "broadcast dimension", dims, out_shape.len())?;
        if dims.windows(2).any(|w| w[0] > w[1]) {
            return Err(Error::invalid_argument(OP, format!("broadcast_dimensions {dims:?} must be increasing")));
        }
        checked_len(OP, out_shape)?;
        let mut strides = AxisList::filled(out_shape.len(), 0isize);
        for (k, &target) in dims.iter().enumerate() {
            let (d, t) = (self.shape[k], out_shape[target]);
            if d == t {
                strides[target] = self.strides[k];
            } else if d != 1 {
                return Err(Error::shape_mismatch(
                    OP,
                    format!(
                        "operand axis {k} has extent {d}, target axis {target} has extent {t}; extents must match or be 1"
                    ),
                ));
            }
        }
        Ok(Layout { shape: Extents::from_slice(out_shape), strides, offset: self.offset })
    }

    /// Inserts an axis of extent 1 at position `axis` (`0..=rank`).
    pub fn insert_axis(&self, axis: usize) -> Result<Layout> {
        check_axis("insert_axis", "axis", axis, self.rank() + 1)?;
        let mut out = self.clone();
        out.shape.insert(axis, 1);
        out.strides.insert(axis, 0);
        Ok(out)
    }

    /// Removes an axis of extent 1.
    pub fn remove_axis(&self, axis: usize) -> Result<Layout> {
        check_axis("remove_axis", "axis", axis, self.rank())?;
        if self.shape[axis] != 1 {
            return Err(Error::invalid_argument(
                "remove_axis",
                format!("axis {axis} has extent {}, only extent-1 axes can be removed", self.shape[axis]),
            ));
        }
        let mut out = self.clone();
        out.shape.remove(axis);
        out.strides.remove(axis);
        Ok(out)
    }

    /// The column-major (Fortran order) layout of `shape` at offset 0.
    pub fn column_major(shape: &[usize]) -> Layout {
        let mut strides = AxisList::filled(shape.len(), 0isize);
        let mut acc: isize = 1;
        for (s, &d) in strides.iter_mut().zip(shape) {
            *s = acc;
            acc = acc.wrapping_mul(d.max(1) as isize);
        }
        Layout { shape: Extents::from_slice(shape), strides, offset: 0 }
    }
}

/// Row-major strides of `shape` (as [`crate::shape::row_major_strides`], without a heap
/// allocation for short shapes).
fn row_major_list(shape: &[usize]) -> AxisList<isize> {
    let mut strides = AxisList::filled(shape.len(), 0isize);
    let mut acc: isize = 1;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.wrapping_mul(d.max(1) as isize);
    }
    strides
}
