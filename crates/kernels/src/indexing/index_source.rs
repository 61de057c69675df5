//! Reading integer indices (int32 or int64, any strides) from an operand, widened to i64.

use strata_tensor::config::check_index_dtype;
use strata_tensor::{DType, Layout, Result, TensorRead};

/// The index tensor's buffer, in its own integer type.
#[derive(Clone, Copy, Debug)]
pub(crate) enum IndexBuffer<'a> {
    /// int32 indices.
    I32(&'a [i32]),
    /// int64 indices.
    I64(&'a [i64]),
}

/// A strided int32/int64 tensor whose elements are read as `i64` by buffer position.
#[derive(Clone, Debug)]
pub(crate) struct IndexSource<'a> {
    buffer: IndexBuffer<'a>,
    layout: Layout,
}

impl<'a> IndexSource<'a> {
    /// Wraps `indices`, or errors (naming `op` and `what`) when its dtype is not int32/int64.
    pub(crate) fn new(op: &'static str, what: &str, indices: &TensorRead<'a>) -> Result<Self> {
        check_index_dtype(op, what, indices.dtype())?;
        let (buffer, layout) = match indices.dtype() {
            DType::I32 => {
                let v = indices.typed_view::<i32>().map_err(|e| e.in_op(op))?;
                (IndexBuffer::I32(v.buffer()), v.layout().clone())
            }
            _ => {
                let v = indices.typed_view::<i64>().map_err(|e| e.in_op(op))?;
                (IndexBuffer::I64(v.buffer()), v.layout().clone())
            }
        };
        Ok(IndexSource { buffer, layout })
    }

    /// The buffer in its own integer type, for loops that dispatch on it once.
    pub(crate) fn buffer(&self) -> IndexBuffer<'a> {
        self.buffer
    }

    /// The layout (shape, strides, offset) of the index tensor.
    pub(crate) fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The index stored at buffer position `pos` (a position the layout addresses).
    #[inline]
    pub(crate) fn at(&self, pos: isize) -> i64 {
        match self.buffer {
            IndexBuffer::I32(b) => i64::from(b[pos as usize]),
            IndexBuffer::I64(b) => b[pos as usize],
        }
    }

    /// The single value of a rank-0 index tensor.
    pub(crate) fn scalar(&self) -> i64 {
        self.at(self.layout.offset() as isize)
    }
}
