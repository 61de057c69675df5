//! Copies between strided views and compact buffers, for packing operands and staging
//! destinations.

use strata_tensor::{Layout, Scalar, TypedView};

/// The view's elements in row-major order.
pub(crate) fn to_contiguous<T: Scalar>(v: &TypedView<'_, T>) -> Vec<T> {
    v.to_tensor().into_vec()
}

/// Writes the row-major `src` into the elements `layout` addresses in `dst`.
pub(crate) fn copy_into<T: Scalar>(src: &[T], dst: &mut [T], layout: &Layout) {
    let shape = layout.shape();
    let mut index = vec![0usize; shape.len()];
    for &v in src {
        dst[layout.offset_of(&index)] = v;
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
}

/// Calls `f(offset_a, offset_b)` for every multi-index of `shape` in row-major order,
/// with the element offsets of two layouts of that shape.
pub(crate) fn for_each_offset_pair(a: &Layout, b: &Layout, mut f: impl FnMut(usize, usize)) {
    let shape = a.shape();
    if shape.contains(&0) {
        return;
    }
    let rank = shape.len();
    let (sa, sb) = (a.strides(), b.strides());
    let mut index = vec![0usize; rank];
    let (mut oa, mut ob) = (a.offset() as isize, b.offset() as isize);
    loop {
        f(oa as usize, ob as usize);
        let mut d = rank;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            oa += sa[d];
            ob += sb[d];
            if index[d] < shape[d] {
                break;
            }
            oa -= sa[d] * shape[d] as isize;
            ob -= sb[d] * shape[d] as isize;
            index[d] = 0;
        }
    }
}
