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
