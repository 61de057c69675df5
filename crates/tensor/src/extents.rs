//! The shape of an owned tensor, stored inline up to [`INLINE_RANK`] axes.
//!
//! Almost every tensor has few axes, and for a tiny op one heap allocation (and its free)
//! for the shape costs about as much as the arithmetic: keeping short shapes inline makes
//! a fresh small tensor cost exactly one allocation, its data. Longer shapes live on the
//! heap as before. Only [`crate::TypedTensor`] uses it; every API still speaks `&[usize]`.

use std::fmt;
use std::ops::Deref;

/// Most axes kept without a heap allocation.
pub(crate) const INLINE_RANK: usize = 4;

/// A shape: inline for rank ≤ [`INLINE_RANK`], else a vector.
#[derive(Clone)]
pub(crate) enum Extents {
    /// The first `len` entries of `dims` are the extents.
    Inline { len: u8, dims: [usize; INLINE_RANK] },
    /// More axes than fit inline.
    Heap(Vec<usize>),
}

impl Extents {
    /// A copy of `shape`.
    #[inline]
    pub(crate) fn from_slice(shape: &[usize]) -> Self {
        if shape.len() <= INLINE_RANK {
            let mut dims = [0; INLINE_RANK];
            // Element by element: a `copy_from_slice` of unknown length is a `memcpy` call,
            // which costs more than these at most four stores.
            for (d, &s) in dims.iter_mut().zip(shape) {
                *d = s;
            }
            // `shape.len() <= INLINE_RANK`, which fits in a `u8`.
            Extents::Inline { len: shape.len() as u8, dims }
        } else {
            Extents::Heap(shape.to_vec())
        }
    }

    /// The extents as a vector.
    pub(crate) fn into_vec(self) -> Vec<usize> {
        match self {
            Extents::Heap(v) => v,
            inline => inline.to_vec(),
        }
    }
}

impl Deref for Extents {
    type Target = [usize];

    #[inline]
    fn deref(&self) -> &[usize] {
        match self {
            Extents::Inline { len, dims } => &dims[..usize::from(*len)],
            Extents::Heap(v) => v,
        }
    }
}

impl PartialEq for Extents {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl fmt::Debug for Extents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_rank_inline_or_not() {
        for rank in 0..=INLINE_RANK + 3 {
            let shape: Vec<usize> = (0..rank).map(|i| 3 * i + 1).collect();
            let e = Extents::from_slice(&shape);
            assert_eq!(&*e, &shape[..]);
            assert_eq!(matches!(e, Extents::Inline { .. }), rank <= INLINE_RANK);
            assert_eq!(format!("{e:?}"), format!("{shape:?}"));
            assert_eq!(e.clone(), e);
            assert_eq!(e.into_vec(), shape);
        }
        assert_ne!(Extents::from_slice(&[1, 2]), Extents::from_slice(&[1, 2, 1]));
        // Equality is by extents, whatever the storage.
        assert_eq!(Extents::from_slice(&[2; 5]), Extents::Heap(vec![2; 5]));
        assert_eq!(Extents::from_slice(&[2, 3]), Extents::Heap(vec![2, 3]));
    }
}
