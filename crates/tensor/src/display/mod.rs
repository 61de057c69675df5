//! `Display` for tensors and views in numpy's `str()` style: nested brackets, columns
//! aligned per dtype, and, past 1000 elements, the first and last three entries of each
//! long axis with `...` between them (numpy's `threshold` and `edgeitems` defaults).
//!
//! ```
//! use strata_tensor::Tensor;
//! let t = Tensor::from_vec(vec![0.5f64, 1.0, -2.25, 3.0, 4.0, 5.0], &[2, 3])?;
//! assert_eq!(t.to_string(), "[[ 0.5   1.   -2.25]\n [ 3.    4.    5.  ]]");
//! # Ok::<(), strata_tensor::Error>(())
//! ```

mod number;

use std::fmt;

use crate::access::TensorRead;
use crate::scalar::Scalar;
use crate::tensor::{Tensor, TypedTensor};
use crate::value::ScalarValue;
use crate::view::{TensorView, TensorViewMut, TypedView, TypedViewMut};

/// Above this many elements the printout is summarised (numpy's `threshold`).
const THRESHOLD: usize = 1000;
/// Entries kept at each end of a summarised axis (numpy's `edgeitems`).
const EDGE_ITEMS: usize = 3;
/// Target line width (numpy's `linewidth`).
const LINE_WIDTH: usize = 75;

/// Writes `view` the way numpy's `str(array)` prints it.
fn write_view<T: Scalar>(f: &mut fmt::Formatter<'_>, view: &TypedView<'_, T>) -> fmt::Result {
    if view.is_empty() {
        return f.write_str("[]");
    }
    if view.rank() == 0 {
        return match view.get(&[]) {
            Some(v) => f.write_str(&number::scalar_repr(v.into_value())),
            None => f.write_str("[]"),
        };
    }
    let summarise = view.len() > THRESHOLD;
    // The entries that are shown, in row-major order of the shown indices; widths are
    // computed over these alone (as numpy does).
    let mut shown = Vec::new();
    let mut index = vec![0usize; view.rank()];
    collect_shown(view, summarise, 0, &mut index, &mut shown);
    let words = number::render(&shown);
    let mut words = words.into_iter();
    let mut out = String::new();
    let shape = view.shape().to_vec();
    format_axis(&shape, summarise, 0, " ", LINE_WIDTH, &mut words, &mut out);
    f.write_str(&out)
}

/// Indices along an axis of extent `len` that are printed: all, or the edges.
fn shown_indices(len: usize, summarise: bool) -> (std::ops::Range<usize>, Option<std::ops::Range<usize>>) {
    if summarise && len > 2 * EDGE_ITEMS { (0..EDGE_ITEMS, Some(len - EDGE_ITEMS..len)) } else { (0..len, None) }
}

fn collect_shown<T: Scalar>(
    view: &TypedView<'_, T>,
    summarise: bool,
    axis: usize,
    index: &mut Vec<usize>,
    out: &mut Vec<ScalarValue>,
) {
    let (lead, trail) = shown_indices(view.shape()[axis], summarise);
    for i in lead.chain(trail.into_iter().flatten()) {
        index[axis] = i;
        if axis + 1 == view.rank() {
            // INVARIANT: every index is below its extent, so the element exists.
            if let Some(v) = view.get(index) {
                out.push(v.into_value());
            }
        } else {
            collect_shown(view, summarise, axis + 1, index, out);
        }
    }
}

/// numpy's `_formatArray` recursion: the entries of one axis at `indent`, in at most
/// `width` columns, each nested axis one bracket deeper.
fn format_axis(
    shape: &[usize],
    summarise: bool,
    axis: usize,
    indent: &str,
    width: usize,
    words: &mut impl Iterator<Item = String>,
    out: &mut String,
) {
    let (lead, trail) = shown_indices(shape[axis], summarise);
    let (lead, trail) = (lead.len(), trail.map_or(0, |t| t.len()));
    let count = lead + trail;
    let next_indent = format!("{indent} ");
    let next_width = width.saturating_sub(1);
    let mut s = String::new();
    let axes_left = shape.len() - axis;
    if axes_left == 1 {
        // Room up to the closing bracket's column.
        let elem_width = width.saturating_sub(1);
        let mut line = indent.to_string();
        for k in 0..count {
            if k == lead && trail > 0 {
                extend_line(&mut s, &mut line, "...", elem_width, indent);
                line.push(' ');
            }
            let word = words.next().unwrap_or_default();
            extend_line(&mut s, &mut line, &word, elem_width, indent);
            if k + 1 < count {
                line.push(' ');
            }
        }
        s.push_str(&line);
    } else {
        let separator = "\n".repeat(axes_left - 1);
        for k in 0..count {
            if k == lead && trail > 0 {
                s.push_str(indent);
                s.push_str("...");
                s.push_str(&separator);
            }
            let mut nested = String::new();
            format_axis(shape, summarise, axis + 1, &next_indent, next_width, words, &mut nested);
            s.push_str(indent);
            s.push_str(&nested);
            if k + 1 < count {
                s.push_str(&separator);
            }
        }
    }
    out.push('[');
    out.push_str(&s[indent.len().min(s.len())..]);
    out.push(']');
}

/// numpy's `_extendLine`: starts a new line when `word` would pass `width`, unless the
/// line holds nothing but its indent.
fn extend_line(s: &mut String, line: &mut String, word: &str, width: usize, indent: &str) {
    if line.len() + word.len() > width && line.len() > indent.len() {
        s.push_str(line.trim_end());
        s.push('\n');
        *line = indent.to_string();
    }
    line.push_str(word);
}

impl<T: Scalar> fmt::Display for TypedView<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_view(f, self)
    }
}

impl<T: Scalar> fmt::Display for TypedViewMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_view(f, &self.as_view())
    }
}

impl<T: Scalar> fmt::Display for TypedTensor<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_view(f, &self.view())
    }
}

impl fmt::Display for TensorView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::dispatch_dtype!(self.dtype(), T => match T::view_ref(self) {
            Some(v) => write_view(f, v),
            None => Err(fmt::Error),
        })
    }
}

impl fmt::Display for TensorViewMut<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.as_view(), f)
    }
}

impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.view(), f)
    }
}

impl fmt::Display for TensorRead<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.view(), f)
    }
}
